//! # weft — an XPBD cloth solver and offline cloth baker
//!
//! weft reads a scene (cloths, materials, pins; TOML), steps it with extended position-based
//! dynamics on the CPU (SIMD constraint kernels, colour-batched in parallel, bit-identical for any
//! thread count), and writes animation caches that DCC tools read: PC2, USD (`.usda`), OBJ
//! sequences. Units are SI throughout: metres, kilograms, seconds.
//!
//! This crate is the `weft` command line and a thin facade over the crates that do the work,
//! each of which has one job:
//!
//! * [`geometry`] (`weft-geometry`): the spatial grid, the BVH, closest points, the exact
//!   triangle intersection test and the measures built on them;
//! * [`core`] (`weft-core`): the structure-of-arrays model, validation of every bad-input rule,
//!   colouring and SIMD batch packing;
//! * [`kernels`] (`weft-kernels`): the SIMD kernels and the XPBD time step;
//! * [`io`] (`weft-io`): scene files, PC2 / USD / OBJ caches, checkpoints;
//! * [`bake`] (`weft-bake`): scene in, caches and per-frame statistics out ([`bake::bake`],
//!   [`bake::bake_model`]), checkpoints and resuming, and what a bake reports (as data);
//! * [`bench`](mod@bench) (`weft-bench`): the side-by-side performance table of `weft bench`;
//! * [`report`](mod@report) (`weft-report`): the plots and preview images of `weft report`.
//!
//! Its own modules are what the command line shows a person:
//!
//! * [`validate`]: what a scene turns into (particles, constraints, colours, batches, memory);
//! * [`demo`]: the built-in demo scene, a flag held by two corners.
//!
//! The plain scalar solver the fast path is tested against (`weft-reference`) and the test and
//! fuzzing helpers (`weft-testkit`) are not part of the product: tests and benches use them
//! directly.
//!
//! ```
//! use std::path::Path;
//! use weft::bake::{BakeOptions, bake};
//! use weft::core::limits::Limits;
//!
//! // The worked example of docs/physics.md: one end pinned, 1 kg at 2 m, rest length 1 m, α = 0.01 m/N.
//! let text = r#"
//! [simulation]
//! fps = 10.0
//! frames = 1
//! substeps = 1
//! iterations = 1
//! gravity = [0.0, 0.0, 0.0]
//!
//! [[cloth]]
//! name = "seed"
//! positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
//! edges = [[0, 1]]
//! rest_lengths = [1.0]
//! stretch_compliance = 0.01
//! pins = [0]
//! "#;
//! let scene = weft::io::parse_scene(text, Path::new("seed.toml"), &Limits::default()).unwrap();
//! let dir = tempfile::tempdir().unwrap();
//! let report = bake(&scene, &BakeOptions::new(dir.path())).unwrap();
//! assert_eq!(report.steps, 1);
//! let cache = weft::io::read_pc2(&dir.path().join("seed.pc2")).unwrap();
//! assert_eq!(cache.sample(1)[1], [1.5, 0.0, 0.0]);
//! ```

pub use weft_bake as bake;
pub use weft_bench as bench;
pub use weft_core as core;
pub use weft_geometry as geometry;
pub use weft_io as io;
pub use weft_kernels as kernels;
pub use weft_report as report;

pub mod demo;
pub mod validate;
