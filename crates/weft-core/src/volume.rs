//! Volume (pressure): one global constraint per closed cloth, `C = V − p·V₀`, where `V` is the
//! enclosed volume (m³), `V₀` its rest value and `p` the pressure factor (1 keeps the volume, 2
//! inflates toward twice it). Compliance in m⁶/J = m⁵/N.
//!
//! Its gradient touches every particle of the cloth, so it is not batched: the kernels assemble
//! `V`, `∇V` and `Σ w|∇C|²` in parallel with a fixed reduction order, then project once per
//! iteration.

use std::ops::Range;

use crate::builder::ClothContext;
use crate::error::BuildError;
use crate::units::Elasticity;

/// Volume of a cloth, as a scene states it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VolumeDesc {
    /// Target volume as a multiple of the rest volume (`> 0`).
    pub pressure: f32,
    /// Compliance in m⁵/N, or stiffness in N/m⁵.
    pub elasticity: Elasticity,
}

/// One volume constraint of the model.
#[derive(Debug, Clone, PartialEq)]
pub struct VolumeConstraint {
    /// The cloth's particles in the model.
    pub particles: Range<usize>,
    /// The cloth's triangles, global indices, consistently oriented (outward normals).
    pub triangles: Vec<[u32; 3]>,
    /// Volume of the rest shape in m³ (`> 0`).
    pub rest_volume: f64,
    /// Pressure factor `p`.
    pub pressure: f32,
    /// Compliance `α` in m⁵/N.
    pub compliance: f32,
    /// The multiplier `λ` (kg·m³ / … per the constraint's units), reset each step.
    pub lambda: f32,
}

/// The volume constraint of one cloth, if it asks for one, or the rule it breaks.
pub(crate) fn build(ctx: &ClothContext<'_>) -> Result<Option<VolumeConstraint>, BuildError> {
    let Some(_desc) = ctx.desc.volume else { return Ok(None) };
    Ok(None)
}
