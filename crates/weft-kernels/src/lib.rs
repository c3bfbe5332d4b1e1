//! # weft-kernels — the fast path
//!
//! XPBD constraint kernels on [`wide::f32x8`] lanes, run colour by colour with the batches of a
//! colour split across threads, and the time step that drives them.
//!
//! * [`stepper`]: the time step as a [`Stepper`], which keeps its buffers between steps and runs
//!   the step as a numbered list of stages on one [`team`] of the pool's threads.
//! * [`schedule`]: the one driver for every kind solved in colour batches (the batched kinds of
//!   `weft_core::kinds`, each a projection written once for SIMD lanes and for one constraint at
//!   a time): the generic gather, project and scatter, blocks and strands in parallel, boundary
//!   colours in fixed chunks, the serial list; the split depends on the scene, so results are bit-identical
//!   for any thread count.
//! * [`volume`] (pressure), [`aero`] (drag and lift), [`self_collision`], [`collider`] (analytic
//!   colliders and their friction) and [`mesh_collider`] (triangle-mesh colliders): the other
//!   kinds, each with its own team phases.
//! * [`integrate`]: prediction and velocity rebuild.
//! * [`lane`]: the [`Real`](lane::Real) trait that every kernel body is written against, so the
//!   SIMD path and its scalar twin are one source ([`SIMD_WIDTH`] lanes or one); [`records`]:
//!   particle records in and out of lanes (gather + transpose, transpose + scatter).
//! * [`team`]: the pool's threads running a step phase by phase, woken once per step; it checks
//!   that every thread runs the same phases.
//! * `shared`: `SharedSlice`, a slice the threads of a team reach at disjoint places, through
//!   borrows that end with the work item of one phase; with `team`, the crate's only `unsafe`
//!   definitions. Every phase is a `Team::for_each_chunk` over parts: arrays its items read
//!   whole or write their own chunk of, which is safe code. Only writes scattered across an
//!   array by index go through the unsafe accessors `write`, `load` and `store`: in `schedule`
//!   (a colour's lanes writing their particles and the multipliers of their batch ranges, by
//!   the plan invariant checked in `weft-core`) and in `self_collision` (a chunk of slots
//!   moving its slots' particles), each call with the rule of its phase that makes it sound.
//!
//! No kernel uses fused multiply-add, so the SIMD path, the scalar path and builds for different
//! SIMD levels all give the same bits.

pub mod aero;
pub mod collider;
pub mod integrate;
pub mod lane;
pub mod mesh_collider;
pub mod records;
pub mod schedule;
pub mod self_collision;
mod shared;
pub mod stats;
pub mod stepper;
pub mod surface_collision;
pub mod team;
pub mod volume;

pub use lane::SIMD_WIDTH;
pub use stats::{ColliderStats, KindStats, Residual, StepStats};
pub use stepper::{StepOptions, Stepper, step};

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
