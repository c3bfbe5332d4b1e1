//! Material numbers with their units: [`Compliance`], [`Stiffness`] and [`Elasticity`].
//!
//! XPBD describes the softness of a constraint with value `C` by its compliance `α`, the inverse of
//! stiffness, in units of `[C]² / J`: metres per newton (m/N) for a distance constraint, rad²/(N·m)
//! for an angle. `α = 0` is infinitely stiff. A stiffness `k = 1/α` is in N/m (or N·m/rad²).
//!
//! The two are distinct types so that a stiffness can never be stored where a compliance is
//! expected: a "stiffness slider" typed into a compliance field would invert soft and hard.
//!
//! ```
//! use weft_core::units::{Compliance, Stiffness};
//! let k = Stiffness::new(100.0).unwrap();       // 100 N/m
//! assert_eq!(Compliance::from(k).get(), 0.01);  // 0.01 m/N
//! assert!(Compliance::new(-1.0).is_err());      // never a silent flip of sign
//! assert!(Stiffness::new(0.0).is_err());        // a stiffness of 0 has no compliance
//! ```

use std::fmt;

/// Why a material number was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// NaN or ±∞.
    #[error("must be a finite number")]
    NotFinite,
    /// Below zero.
    #[error("must not be negative")]
    Negative,
    /// Zero where only a positive value has a meaning.
    #[error("must be greater than zero")]
    Zero,
    /// A stiffness so small that its compliance `1/k` overflows `f32`.
    #[error("is too small: its compliance 1/k is not a finite f32")]
    ReciprocalOverflows,
}

/// Compliance `α ≥ 0`: inverse stiffness, in `[C]²/J` (m/N for distances, rad²/(N·m) for angles).
///
/// `0` means infinitely stiff. The solver divides it by the squared time step (`α̃ = α/h²`), which
/// is what makes the material independent of the step size and the iteration count.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct Compliance(f32);

impl Compliance {
    /// An infinitely stiff constraint (`α = 0`).
    pub const RIGID: Compliance = Compliance(0.0);

    /// A compliance from its value in `[C]²/J`: finite and `≥ 0`.
    pub fn new(value: f32) -> Result<Self, UnitError> {
        if !value.is_finite() {
            Err(UnitError::NotFinite)
        } else if value < 0.0 {
            Err(UnitError::Negative)
        } else {
            // `+ 0.0` turns a negative zero into a positive one.
            Ok(Compliance(value + 0.0))
        }
    }

    /// The value in `[C]²/J`.
    pub fn get(self) -> f32 {
        self.0
    }
}

impl fmt::Display for Compliance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "compliance {}", self.0)
    }
}

/// Stiffness `k > 0`, in `J/[C]²` (N/m for distances, N·m/rad² for angles); `k = 1/α`.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Stiffness(f32);

impl Stiffness {
    /// A stiffness from its value in `J/[C]²`: finite, `> 0`, and with a finite reciprocal.
    pub fn new(value: f32) -> Result<Self, UnitError> {
        if !value.is_finite() {
            Err(UnitError::NotFinite)
        } else if value < 0.0 {
            Err(UnitError::Negative)
        } else if value == 0.0 {
            Err(UnitError::Zero)
        } else if !(1.0 / value).is_finite() {
            Err(UnitError::ReciprocalOverflows)
        } else {
            Ok(Stiffness(value))
        }
    }

    /// The value in `J/[C]²`.
    pub fn get(self) -> f32 {
        self.0
    }
}

impl From<Stiffness> for Compliance {
    fn from(k: Stiffness) -> Compliance {
        Compliance(1.0 / k.0)
    }
}

impl fmt::Display for Stiffness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stiffness {}", self.0)
    }
}

/// How a scene states the softness of a set of constraints: as a compliance or as a stiffness,
/// never both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Elasticity {
    /// Compliance `α` in `[C]²/J`.
    Compliance(Compliance),
    /// Stiffness `k = 1/α` in `J/[C]²`.
    Stiffness(Stiffness),
}

impl Elasticity {
    /// Infinitely stiff (`α = 0`).
    pub const RIGID: Elasticity = Elasticity::Compliance(Compliance::RIGID);

    /// The compliance this elasticity stands for.
    pub fn compliance(self) -> Compliance {
        match self {
            Elasticity::Compliance(c) => c,
            Elasticity::Stiffness(k) => k.into(),
        }
    }
}

impl Default for Elasticity {
    fn default() -> Self {
        Elasticity::RIGID
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compliance_rules() {
        assert_eq!(Compliance::new(f32::NAN), Err(UnitError::NotFinite));
        assert_eq!(Compliance::new(f32::INFINITY), Err(UnitError::NotFinite));
        assert_eq!(Compliance::new(-1e-9), Err(UnitError::Negative));
        assert_eq!(Compliance::new(0.0).unwrap().get(), 0.0);
        assert!(Compliance::new(-0.0).unwrap().get().is_sign_positive());
        assert_eq!(Compliance::new(1e30).unwrap().get(), 1e30);
    }

    #[test]
    fn stiffness_rules() {
        assert_eq!(Stiffness::new(0.0), Err(UnitError::Zero));
        assert_eq!(Stiffness::new(-5.0), Err(UnitError::Negative));
        assert_eq!(Stiffness::new(f32::NAN), Err(UnitError::NotFinite));
        assert_eq!(Stiffness::new(1e-45), Err(UnitError::ReciprocalOverflows));
        let c: Compliance = Stiffness::new(4.0).unwrap().into();
        assert_eq!(c.get(), 0.25);
    }

    #[test]
    fn elasticity_converts() {
        assert_eq!(Elasticity::RIGID.compliance(), Compliance::RIGID);
        let e = Elasticity::Stiffness(Stiffness::new(2.0).unwrap());
        assert_eq!(e.compliance().get(), 0.5);
    }
}
