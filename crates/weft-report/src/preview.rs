//! Preview images of a bake's frames: every cloth and collider at one frame, shaded, from the
//! fixed camera that frames the whole bake.

use weft_core::Model;

use crate::bake_folder::ClothFrames;
use crate::camera::{Bounds, Camera};
use crate::colliders::collider_meshes;
use crate::error::ReportError;
use crate::image::Image;
use crate::raster::Canvas;
use crate::shading::{self, BACKGROUND, Mesh};

/// Size of a preview image, in pixels.
pub const PREVIEW_SIZE: (u32, u32) = (800, 600);

/// Each pixel of a preview is the mean of `SUPERSAMPLE × SUPERSAMPLE` rasterised ones (smooth
/// edges).
const SUPERSAMPLE: u32 = 2;

/// What the previews of one bake draw: its model (colliders, gravity) and its cloths' caches.
#[derive(Debug, Clone, Copy)]
pub struct Stage<'a> {
    /// The bake's model.
    pub model: &'a Model,
    /// The caches of its cloths.
    pub cloths: &'a [ClothFrames],
    /// Frames per second, in 1/s (sample `k` is at time `k / fps`).
    pub fps: f64,
}

impl Stage<'_> {
    /// The box holding every cloth in every sample, in m.
    pub fn bounds(&self) -> Result<Bounds, ReportError> {
        let mut bounds = Bounds::EMPTY;
        for cloth in self.cloths {
            for k in 0..cloth.samples() {
                cloth.mesh(k)?.positions.iter().for_each(|&p| bounds.add(p));
            }
        }
        Ok(bounds)
    }

    /// Samples every cloth has (the shortest cache's count).
    pub fn samples(&self) -> usize {
        self.cloths.iter().map(ClothFrames::samples).min().unwrap_or(0)
    }

    /// Up in the images: against gravity (+y without gravity).
    pub fn up(&self) -> [f32; 3] {
        self.model.settings().gravity.map(|g| -g)
    }

    /// Every cloth and collider at sample `k`; planes are drawn around `bounds`.
    pub fn meshes(&self, k: usize, bounds: &Bounds) -> Result<Vec<Mesh>, ReportError> {
        let mut meshes = collider_meshes(self.model, k as f64 / self.fps, bounds);
        for cloth in self.cloths {
            meshes.push(cloth.mesh(k)?);
        }
        Ok(meshes)
    }
}

/// `meshes` as `camera` sees them, on the preview background, without text.
pub fn render(meshes: &[Mesh], camera: &Camera) -> Image {
    let big = camera.enlarged(SUPERSAMPLE);
    let mut canvas = Canvas::new(big.width, big.height, BACKGROUND);
    shading::draw(&mut canvas, &big, meshes, true);
    canvas.to_image().shrink(SUPERSAMPLE)
}
