//! # weft-kernels — the fast path
//!
//! XPBD constraint kernels on [`wide::f32x8`] lanes, run colour by colour with the batches of a
//! colour split across threads by [`rayon`], and the time step that drives them.
//!
//! * [`lane`]: the [`Real`](lane::Real) trait that every kernel body is written against, so the
//!   SIMD path and its scalar twin are one source ([`SIMD_WIDTH`] lanes or one).
//! * [`records`]: particle records in and out of lanes (gather + transpose, transpose + scatter).
//! * [`distance`]: the distance constraint (stretch, shear).
//! * [`integrate`]: prediction and velocity rebuild.
//! * [`step`]: the time step of DESIGN §2.
//! * `shared`: the crate's only `unsafe`: particle records written by several threads at disjoint
//!   indices, sound because of the colouring invariant checked in `weft-core`.
//!
//! Work is split in fixed-size chunks of batches ([`distance::CHUNK_BATCHES`]), so results are
//! bit-identical for any thread count. No kernel uses fused multiply-add, so the SIMD path, the
//! scalar path and builds for different SIMD levels all give the same bits.

pub mod distance;
pub mod integrate;
pub mod lane;
pub mod records;
mod shared;
pub mod stats;
pub mod step;

pub use lane::SIMD_WIDTH;
pub use stats::{Residual, StepStats};
pub use step::{StepOptions, step};

/// Which instantiation of the kernels a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KernelPath {
    /// Eight constraints per instruction on `f32x8` lanes.
    #[default]
    Simd,
    /// The same kernel bodies on `f32`, one constraint at a time.
    Scalar,
}

/// The SIMD level this build's `f32x8` lanes run on, decided at compile time.
pub const fn simd_level() -> &'static str {
    if cfg!(target_feature = "avx512f") {
        "AVX-512 machine; f32x8 lanes on 256-bit AVX registers"
    } else if cfg!(all(target_feature = "avx2", target_feature = "fma")) {
        "AVX2 (f32x8 lanes on 256-bit AVX registers)"
    } else if cfg!(target_feature = "avx") {
        "AVX (f32x8 lanes on 256-bit registers)"
    } else if cfg!(target_feature = "sse2") {
        "SSE2 (f32x8 lanes as two 128-bit registers)"
    } else {
        "portable scalar (f32x8 lanes emulated)"
    }
}
