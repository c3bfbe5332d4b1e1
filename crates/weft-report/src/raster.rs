//! A small software rasteriser: triangles with a z-buffer and colours interpolated across them
//! (Gouraud), on a floating-point canvas.
//!
//! Coordinates are pixels: `x` to the right, `y` down, a pixel's centre at `(x + 0.5, y + 0.5)`;
//! a pixel is covered when its centre is inside the triangle or on its edge. Depth is any number
//! growing away from the viewer: the nearer of two surfaces on a pixel is the one kept.

use crate::image::Image;

/// A corner of a triangle on the canvas.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vertex {
    /// Column, in pixels.
    pub x: f32,
    /// Row, in pixels (down).
    pub y: f32,
    /// Depth (larger is farther), in any unit.
    pub z: f32,
    /// Linear RGB colour, each channel 0–1.
    pub colour: [f32; 3],
}

/// Colour and depth buffers.
#[derive(Debug, Clone)]
pub struct Canvas {
    width: u32,
    height: u32,
    colour: Vec<[f32; 3]>,
    depth: Vec<f32>,
}

impl Canvas {
    /// A canvas of `width × height` pixels filled with `background` (each channel 0–1), depth
    /// infinitely far.
    pub fn new(width: u32, height: u32, background: [f32; 3]) -> Self {
        let n = width as usize * height as usize;
        Canvas { width, height, colour: vec![background; n], depth: vec![f32::INFINITY; n] }
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Draws a triangle, keeping on each pixel the nearest surface drawn so far; returns the
    /// pixels it wrote (covered and nearer).
    pub fn triangle(&mut self, v: [Vertex; 3]) -> usize {
        let edge = |a: &Vertex, b: &Vertex, x: f32, y: f32| (b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x);
        let area = edge(&v[0], &v[1], v[2].x, v[2].y);
        if area == 0.0 || !area.is_finite() {
            return 0;
        }
        let min_x = v.iter().map(|p| p.x).fold(f32::INFINITY, f32::min).floor().max(0.0);
        let max_x = v.iter().map(|p| p.x).fold(f32::NEG_INFINITY, f32::max).ceil().min(self.width as f32);
        let min_y = v.iter().map(|p| p.y).fold(f32::INFINITY, f32::min).floor().max(0.0);
        let max_y = v.iter().map(|p| p.y).fold(f32::NEG_INFINITY, f32::max).ceil().min(self.height as f32);
        if min_x >= max_x || min_y >= max_y {
            return 0;
        }
        let mut written = 0;
        for y in min_y as u32..max_y as u32 {
            let py = y as f32 + 0.5;
            for x in min_x as u32..max_x as u32 {
                let px = x as f32 + 0.5;
                // Barycentric weights, positive inside whichever way the triangle winds.
                let w0 = edge(&v[1], &v[2], px, py) / area;
                let w1 = edge(&v[2], &v[0], px, py) / area;
                let w2 = edge(&v[0], &v[1], px, py) / area;
                if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                    continue;
                }
                let z = w0 * v[0].z + w1 * v[1].z + w2 * v[2].z;
                let i = y as usize * self.width as usize + x as usize;
                if z < self.depth[i] {
                    self.depth[i] = z;
                    self.colour[i] = std::array::from_fn(|c| {
                        w0 * v[0].colour[c] + w1 * v[1].colour[c] + w2 * v[2].colour[c]
                    });
                    written += 1;
                }
            }
        }
        written
    }

    /// Draws a line one pixel wide from `a` to `b` (their colours ignored: `colour`), where it is
    /// not behind what is drawn by more than `bias` (in depth units): a surface's own edges
    /// show, edges behind it do not.
    pub fn line(&mut self, a: Vertex, b: Vertex, colour: [f32; 3], bias: f32) {
        let steps = (b.x - a.x).abs().max((b.y - a.y).abs()).ceil().max(1.0) as u32;
        for s in 0..=steps {
            let t = s as f32 / steps as f32;
            let (x, y) = (a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t);
            if x < 0.0 || y < 0.0 || x >= self.width as f32 || y >= self.height as f32 {
                continue;
            }
            let z = a.z + (b.z - a.z) * t;
            let i = y as usize * self.width as usize + x as usize;
            if z <= self.depth[i] + bias {
                self.colour[i] = colour;
            }
        }
    }

    /// The canvas as an 8-bit image (channels clamped to 0–1, with the sRGB curve applied).
    pub fn to_image(&self) -> Image {
        let pixels = self.colour.iter().flat_map(|c| c.map(to_srgb8)).collect();
        Image { width: self.width, height: self.height, pixels }
    }
}

/// A linear channel (0–1) as an 8-bit sRGB value.
fn to_srgb8(c: f32) -> u8 {
    let c = c.clamp(0.0, 1.0);
    let s = if c <= 0.003_130_8 { 12.92 * c } else { 1.055 * c.powf(1.0 / 2.4) - 0.055 };
    (s * 255.0 + 0.5) as u8
}

/// An 8-bit sRGB value as a linear channel (0–1).
pub fn from_srgb8(v: u8) -> f32 {
    let s = v as f32 / 255.0;
    if s <= 0.040_45 { s / 12.92 } else { ((s + 0.055) / 1.055).powf(2.4) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f32, y: f32, z: f32, colour: [f32; 3]) -> Vertex {
        Vertex { x, y, z, colour }
    }

    const RED: [f32; 3] = [1.0, 0.0, 0.0];
    const BLUE: [f32; 3] = [0.0, 0.0, 1.0];

    #[test]
    fn a_triangle_covers_its_area() {
        // A right triangle with legs of 60 px: 1800 px², whichever way it winds.
        for corners in
            [[(10.0, 10.0), (70.0, 10.0), (10.0, 70.0)], [(10.0, 10.0), (10.0, 70.0), (70.0, 10.0)]]
        {
            let mut canvas = Canvas::new(100, 100, [1.0; 3]);
            let [a, b, c] = corners.map(|(x, y)| v(x, y, 1.0, RED));
            let n = canvas.triangle([a, b, c]);
            assert!((1800..=1800 + 61).contains(&n), "{n} pixels");
            let image = canvas.to_image();
            let red = (0..100)
                .flat_map(|y| (0..100).map(move |x| (x, y)))
                .filter(|&(x, y)| image.pixel(x, y) == [255, 0, 0]);
            assert_eq!(red.count(), n);
            assert_eq!(image.pixel(20, 20), [255, 0, 0]);
            assert_eq!(image.pixel(60, 60), [255, 255, 255]);
        }
        // Degenerate and off-canvas triangles draw nothing.
        let mut canvas = Canvas::new(10, 10, [1.0; 3]);
        assert_eq!(canvas.triangle([v(1.0, 1.0, 0.0, RED), v(5.0, 5.0, 0.0, RED), v(9.0, 9.0, 0.0, RED)]), 0);
        assert_eq!(
            canvas.triangle([v(-9.0, 1.0, 0.0, RED), v(-5.0, 5.0, 0.0, RED), v(-1.0, 9.0, 0.0, RED)]),
            0
        );
    }

    #[test]
    fn the_z_buffer_keeps_the_nearer_triangle() {
        let square = |z: f32, colour| {
            [
                [v(0.0, 0.0, z, colour), v(40.0, 0.0, z, colour), v(0.0, 40.0, z, colour)],
                [v(40.0, 0.0, z, colour), v(40.0, 40.0, z, colour), v(0.0, 40.0, z, colour)],
            ]
        };
        for (first, second) in [((1.0, RED), (2.0, BLUE)), ((2.0, BLUE), (1.0, RED))] {
            let mut canvas = Canvas::new(40, 40, [1.0; 3]);
            for t in square(first.0, first.1).into_iter().chain(square(second.0, second.1)) {
                canvas.triangle(t);
            }
            let image = canvas.to_image();
            assert!(
                (0..40).all(|y| (0..40).all(|x| image.pixel(x, y) == [255, 0, 0])),
                "the red one is nearer"
            );
        }
    }

    #[test]
    fn colours_are_interpolated() {
        let mut canvas = Canvas::new(101, 3, [1.0; 3]);
        canvas.triangle([v(0.0, -10.0, 0.0, RED), v(0.0, 20.0, 0.0, RED), v(101.0, 1.5, 0.0, BLUE)]);
        let image = canvas.to_image();
        let (left, middle) = (image.pixel(1, 1), image.pixel(50, 1));
        assert!(left[0] > 250 && left[2] < 40, "{left:?}");
        assert!(middle[0] > 150 && middle[2] > 150, "{middle:?}");
        assert_eq!(from_srgb8(255), 1.0);
    }
}
