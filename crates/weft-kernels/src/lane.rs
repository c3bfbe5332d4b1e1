//! The number trait of the kernel bodies, now in [`weft_core::lanes`]; these names stay until the
//! other kernel modules import it from there.

pub use weft_core::lanes::{Real, V3, X2, add3, dot3, scale3, sub3};

/// Lanes per SIMD batch: [`weft_core::lanes::LANES`].
pub const SIMD_WIDTH: usize = weft_core::lanes::LANES;
