//! An 8-bit RGB image, its PNG encoding, and writing it atomically.

use std::path::{Path, PathBuf};

use crate::error::ReportError;

/// An 8-bit RGB image, row after row from the top, 3 bytes a pixel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height × 3` bytes.
    pub pixels: Vec<u8>,
}

impl Image {
    /// An image filled with `colour`.
    pub fn filled(width: u32, height: u32, colour: [u8; 3]) -> Self {
        let pixels = colour.iter().copied().cycle().take(width as usize * height as usize * 3).collect();
        Image { width, height, pixels }
    }

    /// The pixel at column `x`, row `y`.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let i = (y as usize * self.width as usize + x as usize) * 3;
        [self.pixels[i], self.pixels[i + 1], self.pixels[i + 2]]
    }

    /// Copies `other` into this image with its top left corner at `(x, y)` (clipped).
    pub fn blit(&mut self, other: &Image, x: u32, y: u32) {
        for row in 0..other.height.min(self.height.saturating_sub(y)) {
            let w = other.width.min(self.width.saturating_sub(x)) as usize * 3;
            let from = row as usize * other.width as usize * 3;
            let to = ((y + row) as usize * self.width as usize + x as usize) * 3;
            self.pixels[to..to + w].copy_from_slice(&other.pixels[from..from + w]);
        }
    }

    /// The image shrunk by `factor` in each direction, each pixel the mean of a `factor × factor`
    /// block (the extra columns and rows of a size not a multiple are dropped).
    pub fn shrink(&self, factor: u32) -> Image {
        let (w, h) = (self.width / factor, self.height / factor);
        let mut pixels = Vec::with_capacity(w as usize * h as usize * 3);
        let n = factor * factor;
        for y in 0..h {
            for x in 0..w {
                let mut sum = [0u32; 3];
                for dy in 0..factor {
                    for dx in 0..factor {
                        let p = self.pixel(x * factor + dx, y * factor + dy);
                        (0..3).for_each(|c| sum[c] += u32::from(p[c]));
                    }
                }
                pixels.extend(sum.map(|s| ((s + n / 2) / n) as u8));
            }
        }
        Image { width: w, height: h, pixels }
    }

    /// The PNG encoding of the image.
    pub fn to_png(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, self.width, self.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        // Writing to memory cannot fail, and the size matches the pixels by construction.
        let mut writer = encoder.write_header().expect("PNG header to memory");
        writer.write_image_data(&self.pixels).expect("PNG data to memory");
        writer.finish().expect("PNG end to memory");
        bytes
    }

    /// Writes the image as PNG to `dir/name`, under a temporary name first and renamed into
    /// place once complete; returns the path written.
    pub fn save(&self, dir: &Path, name: &str) -> Result<PathBuf, ReportError> {
        let path = dir.join(name);
        let write = |path: &Path| -> std::io::Result<PathBuf> {
            let mut file = weft_io::StagedFile::create(path)?;
            file.write(&self.to_png())?;
            file.commit()
        };
        write(&path).map_err(|source| ReportError::Write { path, source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shrink_averages_blocks_and_png_round_trips() {
        let mut image = Image::filled(4, 2, [0, 0, 0]);
        image.blit(&Image::filled(1, 2, [200, 100, 40]), 1, 0);
        let small = image.shrink(2);
        assert_eq!((small.width, small.height), (2, 1));
        assert_eq!(small.pixel(0, 0), [100, 50, 20]);
        assert_eq!(small.pixel(1, 0), [0, 0, 0]);
        let dir = tempfile::tempdir().unwrap();
        let path = image.save(dir.path(), "a.png").unwrap();
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (4, 2));
        assert_eq!(&buf[..info.buffer_size()], &image.pixels[..]);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
    }
}
