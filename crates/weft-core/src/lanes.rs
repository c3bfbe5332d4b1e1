//! Lane-packed storage: [`Lanes`], eight values that a SIMD kernel loads as one vector.
//!
//! Constraint data is stored batch by batch: lane `k` of every array of a batch belongs to the
//! same constraint. `LANES` is the SIMD width the packing is built for (`wide::f32x8`); the scalar
//! path reads the same arrays one lane at a time.

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
