//! Text on images: DejaVu Sans, embedded in the crate (no system fonts needed). Captions,
//! labels and legends are laid out here with `ab_glyph` (advances, kerning and each glyph's own
//! bounds); plotters, given the same font, draws only the tick numbers of the plots.

use std::sync::{Once, OnceLock};

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use plotters::style::{FontStyle, register_font};

use crate::image::Image;

/// The family name plots ask plotters for.
pub const FONT: &str = "sans-serif";

/// DejaVu Sans (licence: `fonts/LICENSE-DejaVu.txt`).
static DEJAVU_SANS: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// The embedded font.
fn font() -> &'static FontRef<'static> {
    static FONT_REF: OnceLock<FontRef<'static>> = OnceLock::new();
    // The font is embedded at build time and known to parse (every test draws text).
    FONT_REF.get_or_init(|| FontRef::try_from_slice(DEJAVU_SANS).expect("the embedded DejaVu Sans parses"))
}

/// Registers the embedded font with plotters, once per process.
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if register_font(FONT, FontStyle::Normal, DEJAVU_SANS).is_err() {
            unreachable!("the embedded DejaVu Sans does not parse");
        }
    });
}

/// Width of `text` at `size` pixels (the font's height), in pixels.
pub fn width(text: &str, size: f32) -> f32 {
    let font = font().as_scaled(PxScale::from(size));
    let mut x = 0.0;
    let mut prev = None;
    for c in text.chars() {
        let id = font.glyph_id(c);
        if let Some(p) = prev {
            x += font.kern(p, id);
        }
        x += font.h_advance(id);
        prev = Some(id);
    }
    x
}

/// Draws `text` on `image` with its top at row `top` and its left at column `left`, `size`
/// pixels high, in `colour` (blended by coverage).
pub fn draw(image: &mut Image, text: &str, left: f32, top: f32, size: f32, colour: [u8; 3]) {
    let font = font().as_scaled(PxScale::from(size));
    let baseline = top + font.ascent();
    let mut x = left;
    let mut prev = None;
    for c in text.chars() {
        let id = font.glyph_id(c);
        if let Some(p) = prev {
            x += font.kern(p, id);
        }
        let glyph = id.with_scale_and_position(size, point(x, baseline));
        x += font.h_advance(id);
        prev = Some(id);
        let Some(outline) = font.outline_glyph(glyph) else { continue };
        let bounds = outline.px_bounds();
        outline.draw(|gx, gy, coverage| {
            let (px, py) = (bounds.min.x as i64 + i64::from(gx), bounds.min.y as i64 + i64::from(gy));
            if px < 0 || py < 0 || px >= i64::from(image.width) || py >= i64::from(image.height) {
                return;
            }
            let i = (py as usize * image.width as usize + px as usize) * 3;
            let a = coverage.clamp(0.0, 1.0);
            for (under, &ink) in image.pixels[i..i + 3].iter_mut().zip(&colour) {
                let u = f32::from(*under);
                *under = (u + (f32::from(ink) - u) * a).round() as u8;
            }
        });
    }
}

/// Text colour: a dark blue-grey.
pub const INK: [u8; 3] = [34, 36, 48];

/// Draws `lines` of text at the top left of `image`, `size` pixels high, on a pale band, so that
/// it reads on any picture.
pub fn label(image: &mut Image, lines: &[String], size: u32) {
    let size = size as f32;
    let pad = (size * 0.45).round();
    let line_height = (size * 1.3).round();
    let widest = lines.iter().map(|l| width(l, size)).fold(0.0, f32::max);
    let (w, h) = ((widest + 2.0 * pad).ceil() as u32, (line_height * lines.len() as f32 + pad).ceil() as u32);
    // The band: white at 75 % over the picture.
    for y in 0..h.min(image.height) {
        for x in 0..w.min(image.width) {
            let i = (y as usize * image.width as usize + x as usize) * 3;
            for k in 0..3 {
                image.pixels[i + k] = ((u32::from(image.pixels[i + k]) + 3 * 255) / 4) as u8;
            }
        }
    }
    for (i, line) in lines.iter().enumerate() {
        draw(image, line, pad, pad * 0.6 + i as f32 * line_height, size, INK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_drawn_where_asked() {
        let mut image = Image::filled(200, 40, [255, 255, 255]);
        draw(&mut image, "frame 12", 10.0, 8.0, 20.0, [0, 0, 0]);
        let dark: Vec<(u32, u32)> = (0..40)
            .flat_map(|y| (0..200).map(move |x| (x, y)))
            .filter(|&(x, y)| image.pixel(x, y)[0] < 128)
            .collect();
        assert!(dark.len() > 60, "{} dark pixels", dark.len());
        let right = dark.iter().map(|p| p.0).max().unwrap();
        assert!(dark.iter().all(|&(x, y)| x >= 10 && (8..30).contains(&y)), "{dark:?}");
        assert!((right as f32 - (10.0 + width("frame 12", 20.0))).abs() < 4.0, "{right}");
    }
}
