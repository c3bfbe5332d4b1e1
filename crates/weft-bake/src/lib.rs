//! # weft-bake — a scene in, caches out
//!
//! This crate's one job is baking: [`bake`] builds a scene's model, steps it frame by frame with
//! one [`weft_kernels::Stepper`] (kept for the whole bake) and writes, for every cloth and every
//! requested [`CacheFormat`](weft_io::CacheFormat), a cache of `frames + 1` samples (sample 0 is
//! the initial state, sample `k` the state after frame `k`, at time `k/fps` s), plus a table of
//! per-frame statistics. [`bake_model`] does the same for a model built in code. What a bake did
//! comes back as data, a [`BakeReport`]; rendering it as text is the caller's business.
//!
//! * [`BakeOptions`]: where to, which formats, threads, kernel, limits, checkpoints, statistics,
//!   resuming;
//! * [`checkpointing`]: checkpoints of a bake and resuming from one;
//! * [`stats`]: the per-frame statistics file, `stats.csv`, the quality measure behind it, and
//!   how often it is measured fully;
//! * [`BakeReport`] and [`FrameStats`]: what a bake did;
//! * [`BakeError`]: why a bake failed;
//! * [`Progress`]: being told of every frame done (a progress bar), and asked whether to stop
//!   (with a checkpoint kept, to resume);
//! * [`FrameStepper`]: one frame's time steps as a bake takes them, for a program that steps a
//!   model frame by frame itself;
//! * [`summary`]: `summary.toml`, what a finished bake was and did, written by the caller
//!   ([`write_summary`]) once the bake returned.
//!
//! One frame is `substeps` XPBD time steps of `h = 1/(fps·substeps)` s. With a strain tolerance
//! ([`weft_core::StrainTolerance`], the default mode of a scene that names neither `substeps` nor
//! `iterations`) the count is chosen frame by frame: a frame starts at the count the previous
//! one kept (the first at `min_substeps`); if its largest stretch of a stretch edge ends over
//! `max_strain` and the count is below `max_substeps`, it is stepped again from its start with
//! twice the count (at most `max_substeps`); after a frame that ends below a quarter of
//! `max_strain`, the next starts at half the count, and after one below half of it at three
//! quarters (either at least `min_substeps`). The choice is a
//! function of the state and the settings, so a bake stays deterministic, and a checkpoint
//! records the count the next frame starts with.
//!
//! After each frame the largest stretch of a stretch edge is measured (one pass over the
//! edges). The *full measure* (the residual `|C|` of every constraint, a read-only pass after the
//! frame's last time step; the particles deep in a collider; the intersecting triangle pairs)
//! costs as much as several time steps, so [`BakeOptions::stats`] says which frames get it
//! ([`stats::StatsLevel`]: by default the first, the last, and about every
//! [`stats::LIGHT_SWEEPS`] constraint sweeps).
//!
//! # Files written in the output directory
//!
//! | file | content |
//! |------|---------|
//! | `NAME.pc2` | PC2 point cache of cloth `NAME` ([`weft_io::pc2`]) |
//! | `NAME.usda` | ASCII USD mesh with time-sampled points ([`weft_io::usd`]) |
//! | `NAME.0000.obj`, ... | one OBJ per sample ([`weft_io::obj_sequence`]) |
//! | `stats.csv` | one row per frame, the columns of [`STATS_HEADER`]: `frame`, `time_s` (s), `substeps` (the time steps the frame kept), the degenerate projections of the frame, then the residuals and quality measures after it |
//! | `weft.checkpoint` | while a bake runs, its last checkpoint ([`checkpointing`]) |
//! | `summary.toml` | written by [`write_summary`], not by [`bake`]: the scene, the wedge variant, the files, the timings and strains ([`summary`]) |
//!
//! # Guarantees
//!
//! * **Deterministic.** Every byte written is a function of the scene and the weft version only:
//!   the same for any thread count and for either [`KernelPath`](weft_kernels::KernelPath) (the
//!   kernels are bit-identical), run after run. No file [`bake`] writes holds a wall-clock time;
//!   timings are only in the returned [`BakeReport`] (and in `summary.toml`, which the caller
//!   writes from it).
//! * **All or nothing.** Every file is written under a temporary name (`NAME.pc2.partial`,
//!   `stats.csv.partial`) and renamed into place only after the last frame. A bake that fails
//!   removes its temporary files and any file of its own it had already renamed; a bake that is
//!   killed leaves only `*.partial` files, which no reader takes for a cache. A cache already in
//!   the directory is replaced only by a complete one, by an atomic rename.
//! * **Never NaN, never a panic on bad input.** A scene that breaks a rule is a [`BakeError`]
//!   naming the file, line and rule, returned before the output directory is created. The kernels
//!   keep finite input finite; the cache writers refuse a non-finite sample, which would come back
//!   as [`BakeError::Cache`].
//!
//! ```
//! use std::path::Path;
//! use weft_bake::{BakeOptions, bake};
//! use weft_core::limits::Limits;
//!
//! // One end pinned, 1 kg at 2 m, rest length 1 m, α = 0.01 m/N, one step of 0.1 s.
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
//! let scene = weft_io::parse_scene(text, Path::new("seed.toml"), &Limits::default()).unwrap();
//! let dir = tempfile::tempdir().unwrap();
//! let report = bake(&scene, &BakeOptions::new(dir.path())).unwrap();
//! assert_eq!(report.steps, 1);
//! assert_eq!(report.files.last().unwrap(), &dir.path().join(weft_bake::STATS_FILE));
//! let cache = weft_io::read_pc2(&dir.path().join("seed.pc2")).unwrap();
//! assert_eq!(cache.sample(1)[1], [1.5, 0.0, 0.0]);
//! ```

mod bake;
pub mod checkpointing;
mod error;
mod frame;
pub mod memory;
mod options;
mod output;
mod progress;
mod report;
pub mod stats;
pub mod summary;
mod threads;

pub use bake::{bake, bake_model, bake_model_with_progress, bake_with_progress};
pub use checkpointing::CheckpointPolicy;
pub use error::BakeError;
pub use frame::{FrameStepper, SteppedFrame};
pub use options::BakeOptions;
pub use progress::Progress;
pub use report::{BakeReport, FrameStats, OverTolerance};
pub use stats::{STATS_FILE, STATS_HEADER, stats_csv, stats_row};
pub use summary::{SUMMARY_FILE, write_summary};
pub use threads::{SHARED_SELF_COLLISION, fitted_threads};
