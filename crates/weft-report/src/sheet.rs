//! Contact sheets: several images, shrunk, side by side in a grid, each with its caption.

use crate::image::Image;
use crate::text;

/// Space between and around the tiles, in pixels.
const GAP: u32 = 8;
/// Height of a caption's text, in pixels.
const CAPTION: u32 = 14;

/// `tiles` (images of one size, each with its caption lines) shrunk by `shrink`, in rows of
/// `columns`, on a white page.
pub fn contact_sheet(tiles: &[(Image, Vec<String>)], columns: usize, shrink: u32) -> Image {
    let columns = columns.clamp(1, tiles.len().max(1));
    let rows = tiles.len().div_ceil(columns).max(1);
    let (w, h) = tiles.first().map_or((1, 1), |(i, _)| (i.width / shrink, i.height / shrink));
    let mut page =
        Image::filled(GAP + columns as u32 * (w + GAP), GAP + rows as u32 * (h + GAP), [255, 255, 255]);
    for (n, (image, caption)) in tiles.iter().enumerate() {
        let mut tile = image.shrink(shrink);
        text::label(&mut tile, caption, CAPTION);
        let (col, row) = ((n % columns) as u32, (n / columns) as u32);
        page.blit(&tile, GAP + col * (w + GAP), GAP + row * (h + GAP));
    }
    page
}

/// Columns for a sheet of `n` images: all in one row up to 4, else two rows (at most 5 columns).
pub fn columns_for(n: usize) -> usize {
    if n <= 4 { n.max(1) } else { n.div_ceil(2).min(5) }
}
