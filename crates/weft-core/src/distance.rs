//! Distance constraints (stretch and shear) and their lane-packed form.
//!
//! A distance constraint keeps two particles at a rest length `L`:
//! `C(x₀, x₁) = |x₁ − x₀| − L` (m), gradient `∇C₁ = −∇C₀ = n = (x₁ − x₀)/|x₁ − x₀|`,
//! compliance `α` in m/N, damping `β` in N·s/m, multiplier `λ` in kg·m (`λ/h²` is the force in N).

use crate::batches::{BatchLanes, Batches, Packed};
use crate::units::Compliance;

/// Shortest particle distance (m) from which a constraint direction is computed. Closer pairs are
/// degenerate: refused in a rest shape, skipped and counted at run time.
pub const MIN_LENGTH: f32 = 1e-6;

/// Longest particle distance (m) a kernel projects. Farther pairs (or a non-finite distance) are
/// degenerate and skipped and counted, which bounds every correction and keeps positions finite.
pub const MAX_LENGTH: f32 = 1e9;

/// Parameter column: rest length `L` in m (`> 0`).
pub const REST: usize = 0;
/// Parameter column: compliance `α` in m/N.
pub const COMPLIANCE: usize = 1;
/// Parameter column: XPBD damping `β` in N·s/m (stored empty when no constraint is damped).
pub const DAMPING: usize = 2;

/// Distance constraints packed in SIMD batches by colour: particles `a` (slot 0) and `b`
/// (slot 1), parameters [`REST`], [`COMPLIANCE`], [`DAMPING`], tag [`DistanceKind`].
pub type DistanceBatches = Batches<2, 3>;

/// Read-only lanes of [`DistanceBatches`], for kernels.
pub type DistanceLanes<'a> = BatchLanes<'a, 2, 3>;

/// What a distance constraint stands for in the cloth; they share one kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DistanceKind {
    /// Along the cloth's threads (structural edges).
    Stretch = 0,
    /// Across the threads (diagonals).
    Shear = 1,
}

/// One distance constraint, as a builder states it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DistanceConstraint {
    /// The two particles (global indices).
    pub particles: [u32; 2],
    /// Rest length in m (`> 0`).
    pub rest_length: f32,
    /// Compliance `α` in m/N.
    pub compliance: Compliance,
    /// XPBD constraint damping `β` in N·s/m (`≥ 0`; `0` = none).
    pub damping: f32,
    /// Stretch or shear.
    pub kind: DistanceKind,
}

impl DistanceConstraint {
    /// The constraint as batch lanes store it.
    pub fn packed(&self) -> Packed<2, 3> {
        let mut params = [0.0; 3];
        params[REST] = self.rest_length;
        params[COMPLIANCE] = self.compliance.get();
        params[DAMPING] = self.damping;
        Packed { particles: self.particles, params, tag: self.kind as u8 }
    }

    /// The constraint a batch lane holds (as [`DistanceBatches::solve_order`] yields them).
    ///
    /// # Panics
    /// If the compliance is not a valid [`Compliance`] (lanes built from constraints never are).
    pub fn from_packed(p: &Packed<2, 3>) -> Self {
        DistanceConstraint {
            particles: p.particles,
            rest_length: p.params[REST],
            compliance: Compliance::new(p.params[COMPLIANCE]).expect("lanes hold validated compliances"),
            damping: p.params[DAMPING],
            kind: if p.tag == DistanceKind::Shear as u8 {
                DistanceKind::Shear
            } else {
                DistanceKind::Stretch
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_and_unpacks() {
        let c = DistanceConstraint {
            particles: [3, 7],
            rest_length: 0.5,
            compliance: Compliance::new(1e-3).unwrap(),
            damping: 0.25,
            kind: DistanceKind::Shear,
        };
        assert_eq!(DistanceConstraint::from_packed(&c.packed()), c);
        let d = DistanceBatches::new(&[c.packed()], &[true; 8]);
        let (p, lambda) = d.solve_order().next().unwrap();
        assert_eq!((DistanceConstraint::from_packed(&p), lambda), (c, 0.0));
    }
}
