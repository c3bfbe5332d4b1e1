//! Plots of `stats.csv` columns as PNG images (plotters, bitmap backend, embedded font): one
//! line per bake folder, over time.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::ReportError;
use crate::image::Image;
use crate::text::{self, FONT};

/// Width of a plot image, in pixels.
pub const PLOT_WIDTH: u32 = 960;
/// Height of one panel of a plot image, in pixels.
pub const PANEL_HEIGHT: u32 = 400;

/// Line colours, one per bake folder, in order (then again).
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Page background: white.
const PAGE: RGBColor = RGBColor(255, 255, 255);

/// One line of a plot: a bake folder's values.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Its name in the legend.
    pub label: String,
    /// `(x, y)` points, in x order; frames not measured are absent, not 0.
    pub points: Vec<(f64, f64)>,
}

/// One panel: a title, the y axis's name with its unit, its lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Title above the panel.
    pub title: String,
    /// Name of the y axis, with its unit.
    pub y_label: String,
    /// The lines, one per bake folder (some may be empty).
    pub lines: Vec<Line>,
}

/// Text to draw once plotters is done: `(text, left, top, size, colour)`, in pixels.
type Texts = Vec<(String, f32, f32, f32, [u8; 3])>;

/// Grey of the secondary text (units, axis names).
const MUTED: [u8; 3] = [90, 92, 104];
/// Width of the legend column at the right of a plot with several lines, in pixels.
const LEGEND_WIDTH: u32 = 210;

/// `panels` stacked in one image, with x axis `x_label`; a legend at the right when there are
/// several lines. `name` (the file's) is for errors.
pub fn plot(name: &str, x_label: &str, panels: &[Panel]) -> Result<Image, ReportError> {
    text::register();
    let height = PANEL_HEIGHT * panels.len().max(1) as u32;
    let mut image = Image::filled(PLOT_WIDTH, height, [255, 255, 255]);
    let draw_err =
        |e: &dyn std::fmt::Display| ReportError::Draw { name: name.to_string(), message: e.to_string() };
    let mut texts = Texts::new();
    {
        let root = BitMapBackend::with_buffer(&mut image.pixels, (PLOT_WIDTH, height)).into_drawing_area();
        root.fill(&PAGE).map_err(|e| draw_err(&e))?;
        let areas = root.split_evenly((panels.len().max(1), 1));
        for (i, (panel, area)) in panels.iter().zip(&areas).enumerate() {
            let top = (i as u32 * PANEL_HEIGHT) as f32;
            draw_panel(panel, area, top, x_label, &mut texts).map_err(|e| draw_err(&e))?;
        }
        root.present().map_err(|e| draw_err(&e))?;
    }
    for (t, left, top, size, colour) in texts {
        text::draw(&mut image, &t, left, top, size, colour);
    }
    Ok(image)
}

/// The title of a panel, centred at its top (`top`: the panel's first row).
fn title(texts: &mut Texts, title: &str, top: f32) {
    let size = 21.0;
    let left = 0.5 * (PLOT_WIDTH as f32 - text::width(title, size));
    texts.push((title.to_string(), left, top + 10.0, size, text::INK));
}

/// Draws one panel on `area` (whose first row is `top` in the image).
fn draw_panel<'a>(
    panel: &Panel,
    area: &DrawingArea<BitMapBackend<'a>, Shift>,
    top: f32,
    x_label: &str,
    texts: &mut Texts,
) -> Result<(), DrawingAreaErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>> {
    let all = || panel.lines.iter().flat_map(|l| l.points.iter());
    let x_max = all().map(|p| p.0).fold(0.0f64, f64::max);
    let (y_lo, y_hi) = all().fold((0.0f64, 0.0f64), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
    let x_range = 0.0..if x_max > 0.0 { x_max } else { 1.0 };
    let span = y_hi - y_lo;
    let y_range = if span > 0.0 { y_lo..y_hi + 0.08 * span } else { y_lo..y_lo + 1.0 };
    let legend = panel.lines.len() > 1;
    let mut chart = ChartBuilder::on(area)
        .margin_top(50)
        .margin_bottom(8)
        .margin_left(14)
        .margin_right(if legend { LEGEND_WIDTH } else { 30 })
        .x_label_area_size(58)
        .y_label_area_size(64)
        .build_cartesian_2d(x_range, y_range)?;
    chart
        .configure_mesh()
        .label_style((FONT, 14).into_font().color(&RGBColor(60, 62, 72)))
        .axis_style(RGBColor(120, 122, 132))
        .light_line_style(RGBColor(242, 242, 246))
        .bold_line_style(RGBColor(218, 218, 226))
        .x_labels(10)
        .y_labels(8)
        .y_label_formatter(&|v| short_number(*v))
        .x_label_formatter(&|v| short_number(*v))
        .draw()?;
    for (i, line) in panel.lines.iter().enumerate() {
        if line.points.is_empty() {
            continue;
        }
        let colour = PALETTE[i % PALETTE.len()];
        chart.draw_series(LineSeries::new(line.points.iter().copied(), colour.stroke_width(2)))?;
        // Sparse points (frames measured now and then) get markers, so a lone one shows.
        if line.points.len() <= 60 {
            chart.draw_series(line.points.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
        }
    }
    title(texts, &panel.title, top);
    texts.push((panel.y_label.clone(), 16.0, top + 24.0, 15.0, MUTED));
    let x_size = 15.0;
    let plot_left = 14.0 + 64.0;
    let plot_right = PLOT_WIDTH as f32 - if legend { LEGEND_WIDTH as f32 } else { 30.0 };
    let x_left = 0.5 * (plot_left + plot_right - text::width(x_label, x_size));
    texts.push((x_label.to_string(), x_left, top + PANEL_HEIGHT as f32 - 30.0, x_size, MUTED));
    if legend {
        let x0 = PLOT_WIDTH as f32 - LEGEND_WIDTH as f32 + 24.0;
        for (i, line) in panel.lines.iter().enumerate() {
            let y = top + 60.0 + 24.0 * i as f32;
            let colour = PALETTE[i % PALETTE.len()];
            let (lx, ly) = (x0 as i32, y as i32 + 9);
            area.draw(&PathElement::new(
                vec![(lx, ly - top as i32), (lx + 24, ly - top as i32)],
                colour.stroke_width(3),
            ))?;
            let room = LEGEND_WIDTH as f32 - 60.0;
            let mut label = line.label.clone();
            if text::width(&label, 14.0) > room {
                while text::width(&format!("{label}…"), 14.0) > room && label.chars().count() > 1 {
                    label.pop();
                }
                label.push('…');
            }
            if line.points.is_empty() {
                label.push_str(" (none)");
            }
            texts.push((label, x0 + 32.0, y, 14.0, text::INK));
        }
    }
    Ok(())
}

/// A bar per bake folder: `(label, value)`; `name` (the file's) is for errors.
pub fn bars(name: &str, heading: &str, y_label: &str, bars: &[(String, f64)]) -> Result<Image, ReportError> {
    text::register();
    let mut image = Image::filled(PLOT_WIDTH, PANEL_HEIGHT, [255, 255, 255]);
    let draw_err =
        |e: &dyn std::fmt::Display| ReportError::Draw { name: name.to_string(), message: e.to_string() };
    let mut texts = Texts::new();
    {
        let root =
            BitMapBackend::with_buffer(&mut image.pixels, (PLOT_WIDTH, PANEL_HEIGHT)).into_drawing_area();
        root.fill(&PAGE).map_err(|e| draw_err(&e))?;
        let top = bars.iter().map(|b| b.1).fold(0.0f64, f64::max);
        let y_max = if top > 0.0 { top * 1.1 } else { 1.0 };
        // `a..b` segmented has a segment per value from a to b, both included.
        let n = bars.len().max(1);
        let mut chart = ChartBuilder::on(&root)
            .margin_top(50)
            .margin_bottom(8)
            .margin_left(14)
            .margin_right(30)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d((0..n - 1).into_segmented(), 0.0..y_max)
            .map_err(|e| draw_err(&e))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .label_style((FONT, 14).into_font().color(&RGBColor(60, 62, 72)))
            .axis_style(RGBColor(120, 122, 132))
            .light_line_style(RGBColor(242, 242, 246))
            .bold_line_style(RGBColor(218, 218, 226))
            .x_labels(n)
            .x_label_formatter(&|_| String::new())
            .y_label_formatter(&|v| short_number(*v))
            .draw()
            .map_err(|e| draw_err(&e))?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let colour = PALETTE[i % PALETTE.len()];
                let mut bar = Rectangle::new(
                    [(SegmentValue::Exact(i), 0.0), (SegmentValue::Exact(i + 1), b.1)],
                    colour.filled(),
                );
                bar.set_margin(0, 0, 14, 14);
                bar
            }))
            .map_err(|e| draw_err(&e))?;
        for (i, (label, value)) in bars.iter().enumerate() {
            let (cx, base) = chart.backend_coord(&(SegmentValue::CenterOf(i), 0.0));
            let (_, bar_top) = chart.backend_coord(&(SegmentValue::CenterOf(i), *value));
            let v = format!("{value:.1}");
            texts.push((
                v.clone(),
                cx as f32 - 0.5 * text::width(&v, 14.0),
                bar_top as f32 - 20.0,
                14.0,
                text::INK,
            ));
            let room = (PLOT_WIDTH as f32 - 110.0) / n as f32 - 8.0;
            let size = if text::width(label, 14.0) > room { 11.0 } else { 14.0 };
            let left = cx as f32 - 0.5 * text::width(label, size).min(room);
            texts.push((label.clone(), left, base as f32 + 10.0, size, text::INK));
        }
        root.present().map_err(|e| draw_err(&e))?;
    }
    title(&mut texts, heading, 0.0);
    texts.push((y_label.to_string(), 16.0, 24.0, 15.0, MUTED));
    for (t, left, top, size, colour) in texts {
        text::draw(&mut image, &t, left, top, size, colour);
    }
    Ok(image)
}

/// A tick label: few digits, no trailing zeros, exponents for the very large and very small.
fn short_number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".to_string()
    } else if !(1e-3..1e5).contains(&a) {
        format!("{v:.1e}")
    } else {
        let s = format!("{v:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(short_number(0.0), "0");
        assert_eq!(short_number(0.25), "0.25");
        assert_eq!(short_number(12.0), "12");
        assert_eq!(short_number(2.5e-5), "2.5e-5");
    }

    #[test]
    fn a_plot_draws_its_lines() {
        let line = |label: &str, points: Vec<(f64, f64)>| Line { label: label.to_string(), points };
        let panel = Panel {
            title: "t".into(),
            y_label: "y (m)".into(),
            lines: vec![line("a", vec![(0.0, 0.0), (1.0, 1.0)]), line("b", vec![(0.0, 1.0), (1.0, 0.0)])],
        };
        let image = plot("p.png", "time (s)", &[panel]).unwrap();
        assert_eq!((image.width, image.height), (PLOT_WIDTH, PANEL_HEIGHT));
        let count = |c: RGBColor| {
            (0..image.height)
                .flat_map(|y| (0..image.width).map(move |x| (x, y)))
                .filter(|&(x, y)| image.pixel(x, y) == [c.0, c.1, c.2])
                .count()
        };
        assert!(
            count(PALETTE[0]) > 300 && count(PALETTE[1]) > 300,
            "{} {}",
            count(PALETTE[0]),
            count(PALETTE[1])
        );
    }
}
