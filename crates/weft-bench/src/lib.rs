//! # weft-bench — weft's performance figures
//!
//! This crate's one job is measuring weft: [`run`] measures and returns the table `weft bench`
//! prints (variants on copies of one model, in interleaved rounds, medians of rates and of
//! per-round ratios; see `docs/performance.md`). Its scenes also serve the criterion benches of
//! the `weft-benches` package (`benches/kernels.rs`, `cargo bench -p weft-benches`), which measure the
//! kernels one by one, against the reference solver too, with a flamegraph per bench on request.
//!
//! * [`table`]: the side-by-side table of `weft bench` ([`run`], [`BenchOptions`]);
//! * [`scenes`]: the hanging grid cloths the figures are measured on ([`hanging_grid`]) and the
//!   comparison grid ([`comparison_grid`]);
//! * [`step_and_bake`]: the time steps against the whole bake of the same frames;
//! * [`memory`]: the heap a bake takes, counted by a global allocator ([`memory::Counting`]),
//!   against the estimate `weft validate` prints;
//! * [`accuracy`]: the time to accuracy of a hanging cloth, fixed substeps against a bake to a
//!   tolerance;
//! * [`machine`]: how much work the machine's threads do together while the table is
//!   measured, the yardstick for its thread ratios;
//! * [`pile`]: the folded cloth pile of `examples/pile.toml`, built in code (the self-collision
//!   row; also the OBJ of the example and the tests' pile).

pub mod accuracy;
pub mod machine;
pub mod memory;
pub mod pile;
pub mod scenes;
pub mod step_and_bake;
pub mod table;

pub use scenes::{comparison_grid, hanging_grid};
pub use table::{BenchOptions, Section, run};
