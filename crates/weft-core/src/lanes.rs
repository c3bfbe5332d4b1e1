//! Lane-packed storage and the number type kernel bodies are written against.
//!
//! * [`Lanes`]: eight values that a SIMD kernel loads as one vector. Constraint data is stored
//!   batch by batch: lane `k` of every array of a batch belongs to the same constraint. [`LANES`]
//!   is the SIMD width the packing is built for (`wide::f32x8`); the scalar path reads the same
//!   arrays one lane at a time.
//! * [`Real`]: the small number trait every projection is written against. A constraint kind's
//!   maths is written once, generic over `R: Real`, and instantiated for `f32` (the scalar path,
//!   one constraint at a time), for [`f32x8`] (the SIMD path, [`LANES`] constraints in lanes) and
//!   for [`X2`] (two batches in flight). Every instantiation runs the same operations in the same
//!   order, and every operation is an IEEE-754 correctly rounded one (`+ − × ÷ √`, no fused
//!   multiply-add), so all paths give bit-identical results on every build. Lane-only operations
//!   (masks, selects) are part of the trait so that a degenerate lane is skipped without a branch.
//! * [`V3`] and its helpers ([`add3`], [`sub3`], [`dot3`], [`scale3`]): 3-vectors of any `Real`.

use std::ops::{Add, Div, Mul, Neg, Sub};

use wide::f32x8;

/// Lanes per SIMD batch (the width of `wide::f32x8`).
pub const LANES: usize = 8;

/// `LANES` values of one batch, aligned to 32 bytes so a kernel loads them as one AVX vector.
///
/// ```
/// use weft_core::lanes::{Lanes, LANES};
/// let l = Lanes([1.0f32; LANES]);
/// assert_eq!(std::mem::align_of_val(&l), 32);
/// assert_eq!(l.0.iter().sum::<f32>(), 8.0);
/// ```
#[repr(C, align(32))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lanes<T>(pub [T; LANES]);

impl<T: Copy> Lanes<T> {
    /// Every lane set to `value`.
    pub fn splat(value: T) -> Self {
        Lanes([value; LANES])
    }
}

/// A real number or a vector of them, with lane masks.
pub trait Real:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> + Neg<Output = Self>
{
    /// A per-lane boolean.
    type Mask: Copy;
    /// Every lane equal to `v`.
    fn splat(v: f32) -> Self;
    /// Square root (correctly rounded).
    fn sqrt(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// Per-lane maximum.
    fn max(self, other: Self) -> Self;
    /// `self > other` (false where either is NaN).
    fn gt(self, other: Self) -> Self::Mask;
    /// `self <= other` (false where either is NaN).
    fn le(self, other: Self) -> Self::Mask;
    /// Lane-wise and.
    fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    /// `if mask { a } else { b }` lane by lane, without a branch.
    fn select(mask: Self::Mask, a: Self, b: Self) -> Self;
}

impl Real for f32 {
    type Mask = bool;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        v
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f32::abs(self)
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        f32::max(self, other)
    }
    #[inline(always)]
    fn gt(self, other: Self) -> bool {
        self > other
    }
    #[inline(always)]
    fn le(self, other: Self) -> bool {
        self <= other
    }
    #[inline(always)]
    fn and(a: bool, b: bool) -> bool {
        a & b
    }
    #[inline(always)]
    fn select(mask: bool, a: Self, b: Self) -> Self {
        if mask { a } else { b }
    }
}

impl Real for f32x8 {
    type Mask = f32x8;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        f32x8::splat(v)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f32x8::sqrt(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f32x8::abs(self)
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        f32x8::max(self, other)
    }
    #[inline(always)]
    fn gt(self, other: Self) -> f32x8 {
        self.simd_gt(other)
    }
    #[inline(always)]
    fn le(self, other: Self) -> f32x8 {
        self.simd_le(other)
    }
    #[inline(always)]
    fn and(a: f32x8, b: f32x8) -> f32x8 {
        a & b
    }
    #[inline(always)]
    fn select(mask: f32x8, a: Self, b: Self) -> Self {
        mask.select(a, b)
    }
}

/// Two `f32x8` batches computed together, operation by operation.
///
/// A distance projection is a chain of long-latency steps (`√`, `÷`); one batch alone leaves the
/// core waiting on it. Interleaving two independent batches gives it a second chain to work on.
/// Lane `k` of the pair is lane `k` of batch 0 for `k < 8`, of batch 1 otherwise.
#[derive(Clone, Copy, Debug)]
pub struct X2(pub f32x8, pub f32x8);

macro_rules! x2_binary {
    ($trait:ident, $f:ident) => {
        impl $trait for X2 {
            type Output = X2;
            #[inline(always)]
            fn $f(self, rhs: X2) -> X2 {
                X2(self.0.$f(rhs.0), self.1.$f(rhs.1))
            }
        }
    };
}
x2_binary!(Add, add);
x2_binary!(Sub, sub);
x2_binary!(Mul, mul);
x2_binary!(Div, div);

impl Neg for X2 {
    type Output = X2;
    #[inline(always)]
    fn neg(self) -> X2 {
        X2(-self.0, -self.1)
    }
}

impl Real for X2 {
    type Mask = X2;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        X2(f32x8::splat(v), f32x8::splat(v))
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        X2(self.0.sqrt(), self.1.sqrt())
    }
    #[inline(always)]
    fn abs(self) -> Self {
        X2(self.0.abs(), self.1.abs())
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        X2(self.0.max(other.0), self.1.max(other.1))
    }
    #[inline(always)]
    fn gt(self, other: Self) -> X2 {
        X2(self.0.simd_gt(other.0), self.1.simd_gt(other.1))
    }
    #[inline(always)]
    fn le(self, other: Self) -> X2 {
        X2(self.0.simd_le(other.0), self.1.simd_le(other.1))
    }
    #[inline(always)]
    fn and(a: X2, b: X2) -> X2 {
        X2(a.0 & b.0, a.1 & b.1)
    }
    #[inline(always)]
    fn select(mask: X2, a: Self, b: Self) -> Self {
        X2(mask.0.select(a.0, b.0), mask.1.select(a.1, b.1))
    }
}

/// A 3-vector of `R` (x, y, z), for kernel bodies.
pub type V3<R> = [R; 3];

/// `a − b`.
#[inline(always)]
pub fn sub3<R: Real>(a: V3<R>, b: V3<R>) -> V3<R> {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `a · b`, summed as `(x + y) + z`.
#[inline(always)]
pub fn dot3<R: Real>(a: V3<R>, b: V3<R>) -> R {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `a · s`.
#[inline(always)]
pub fn scale3<R: Real>(a: V3<R>, s: R) -> V3<R> {
    [a[0] * s, a[1] * s, a[2] * s]
}

/// `a + b`.
#[inline(always)]
pub fn add3<R: Real>(a: V3<R>, b: V3<R>) -> V3<R> {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn select_masks_lanes() {
        let a = f32x8::new([1.0, -1.0, 2.0, f32::NAN, 0.0, 5.0, -3.0, 4.0]);
        let m = a.gt(f32x8::splat(0.0));
        let s = <f32x8 as Real>::select(m, a, f32x8::splat(9.0));
        assert_eq!(s.to_array(), [1.0, 9.0, 2.0, 9.0, 9.0, 5.0, 9.0, 4.0]);
        assert!(!f32::NAN.gt(0.0) && !f32::NAN.le(0.0));
    }
}
