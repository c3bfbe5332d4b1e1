//! The numbers the proximity maths is written over ([`Reals`]: `f64`, or four of them in
//! `f64x4` lanes) and 3-vectors of them: one source for the scalar forms and for the lanes of
//! [`separations`](super::separations).

use std::ops::{Add, Div, Mul, Sub};

use wide::f64x4;

/// `f64`, or four of them in lanes.
pub(super) trait Reals:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    /// A per-lane boolean.
    type Mask: Copy;
    /// Every lane `v`.
    fn splat(v: f64) -> Self;
    /// Square root (correctly rounded).
    fn sqrt(self) -> Self;
    /// The smaller, a `NaN` passed over (`f64::min`).
    fn min(self, other: Self) -> Self;
    /// The larger, a `NaN` passed over (`f64::max`).
    fn max(self, other: Self) -> Self;
    /// `self > 0` and finite, for a `self` that is never below 0 (`NaN`: false).
    fn positive_finite(self) -> Self::Mask;
    /// `self > 0` (`NaN`: false).
    fn positive(self) -> Self::Mask;
    /// `if mask { a } else { b }`, lane by lane.
    fn select(mask: Self::Mask, a: Self, b: Self) -> Self;
}

impl Reals for f64 {
    type Mask = bool;
    #[inline(always)]
    fn splat(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        f64::min(self, other)
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        f64::max(self, other)
    }
    #[inline(always)]
    fn positive_finite(self) -> bool {
        self > 0.0 && self.is_finite()
    }
    #[inline(always)]
    fn positive(self) -> bool {
        self > 0.0
    }
    #[inline(always)]
    fn select(mask: bool, a: Self, b: Self) -> Self {
        if mask { a } else { b }
    }
}

impl Reals for f64x4 {
    type Mask = f64x4;
    #[inline(always)]
    fn splat(v: f64) -> Self {
        f64x4::splat(v)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f64x4::sqrt(self)
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        f64x4::min(self, other)
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        f64x4::max(self, other)
    }
    #[inline(always)]
    fn positive_finite(self) -> f64x4 {
        self.simd_gt(f64x4::splat(0.0)) & self.simd_lt(f64x4::splat(f64::INFINITY))
    }
    #[inline(always)]
    fn positive(self) -> f64x4 {
        self.simd_gt(f64x4::splat(0.0))
    }
    #[inline(always)]
    fn select(mask: f64x4, a: Self, b: Self) -> Self {
        mask.select(a, b)
    }
}

/// A point of any [`Reals`].
pub(super) type V<R> = [R; 3];

pub(super) fn sub<R: Reals>(a: V<R>, b: V<R>) -> V<R> {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub(super) fn dot<R: Reals>(a: V<R>, b: V<R>) -> R {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(super) fn cross<R: Reals>(a: V<R>, b: V<R>) -> V<R> {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// `Σ w_k p_k`, summed from 0 in order.
pub(super) fn combine<R: Reals, const N: usize>(w: [f64; N], p: [V<R>; N]) -> V<R> {
    let mut out = [R::splat(0.0); 3];
    for k in 0..N {
        for (o, c) in out.iter_mut().zip(p[k]) {
            *o = *o + R::splat(w[k]) * c;
        }
    }
    out
}
