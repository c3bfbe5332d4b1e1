//! # Baking: a scene in, caches out
//!
//! [`bake`] builds a scene's model, steps it frame by frame with [`weft_kernels::step()`] and
//! writes, for every cloth and every requested [`CacheFormat`], a cache of `frames + 1` samples
//! (sample 0 is the initial state, sample `k` the state after frame `k`, at time `k/fps` s), plus a
//! table of per-frame statistics. [`bake_model`] does the same for a model built in code.
//!
//! One frame is `substeps` XPBD time steps of `h = 1/(fps·substeps)` s. The residual `|C|` of the
//! distance constraints is evaluated after the last time step of each frame only (one read-only
//! pass), so the statistics cost nothing on the other steps.
//!
//! # Files written in the output directory
//!
//! | file | content |
//! |------|---------|
//! | `NAME.pc2` | PC2 point cache of cloth `NAME` ([`weft_io::pc2`]) |
//! | `NAME.usda` | ASCII USD mesh with time-sampled points ([`weft_io::usd`]) |
//! | `NAME.0000.obj`, ... | one OBJ per sample ([`weft_io::obj_sequence`]) |
//! | `stats.csv` | one row per frame: `frame`, `time_s` (s), `degenerate` (projections skipped as degenerate in that frame), `max_abs_c_m` and `mean_abs_c_m` (largest and mean `\|C\|` of the distance constraints after the frame, m) |
//!
//! # Guarantees
//!
//! * **Deterministic.** Every byte written is a function of the scene and the weft version only:
//!   the same for any thread count and for either [`KernelPath`] (the kernels are bit-identical),
//!   run after run. No file holds a wall-clock time; timings are only in the returned
//!   [`BakeReport`].
//! * **All or nothing.** Every file is written under a temporary name (`NAME.pc2.partial`,
//!   `stats.csv.partial`) and renamed into place only after the last frame. A bake that fails
//!   removes its temporary files and any file of its own it had already renamed; a bake that is
//!   killed leaves only `*.partial` files, which no reader takes for a cache. A cache already in
//!   the directory is replaced only by a complete one, by an atomic rename.
//! * **Never NaN, never a panic on bad input.** A scene that breaks a rule is a [`BakeError`]
//!   naming the file, line and rule, returned before the output directory is created. The kernels
//!   keep finite input finite; the cache writers refuse a non-finite sample, which would come back
//!   as [`BakeError::Cache`].

use std::fmt::Write as _;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use weft_core::Rule;
use weft_core::limits::{Limits, RAISE_HINT};
use weft_core::model::ClothInfo;
use weft_core::{Model, SimSettings};
use weft_io::checkpoint::{CHECKPOINT_FILE, Checkpoint, read_checkpoint, write_checkpoint};
use weft_io::{
    CacheFormat, CacheSpec, CacheWriter, Scene, SceneError, create_cache, parse_scene, resume_cache,
};
use weft_kernels::{KernelPath, Residual, StepOptions, StepStats, step};

use crate::checkpointing::{self, CheckpointPolicy, Schedule};
use crate::progress::Progress;

/// Name of the per-frame statistics file in the output directory.
pub const STATS_FILE: &str = "stats.csv";

/// Header line of [`STATS_FILE`].
///
/// Per frame: the degenerate projections of all its time steps, then, after its last time step,
/// for the distance constraints the largest and mean `|C|` (m) and the largest strain `|C|/L`;
/// for bending the largest and mean `|C|` (rad); for tethers the largest excess beyond a bound
/// (m); for volume the largest `|V − p·V₀| / (p·V₀)`. A kind the scene does not have reads 0.
/// Then the quality of the cloth after the frame ([`weft_core::quality`]): the intersecting
/// non-adjacent triangle pairs (within each cloth and between cloths), and the largest stretch of
/// a stretch edge, `|x_a − x_b|/L − 1` (0.01 = 1 % longer than at rest; 0 if none is longer).
/// Last, the free particles deeper in a collider than half its thickness after the frame
/// ([`weft_kernels::collider`]; 0 without colliders).
pub const STATS_HEADER: &str = "frame,time_s,degenerate,distance_max_abs_c_m,distance_mean_abs_c_m,\
distance_max_strain,bending_max_abs_c_rad,bending_mean_abs_c_rad,tether_max_excess_m,volume_max_rel_error,\
intersecting_triangle_pairs,max_stretch,collider_deep_particles";

/// How to bake.
#[derive(Debug, Clone, PartialEq)]
pub struct BakeOptions {
    /// Directory the caches and `stats.csv` are written to; created (with its parents) if missing.
    pub out_dir: PathBuf,
    /// Cache formats to write, each once (repeats are ignored); empty means `[Pc2]`.
    pub formats: Vec<CacheFormat>,
    /// Threads of the rayon pool the bake runs in; `None` (or `Some(0)`) takes rayon's default
    /// (`RAYON_NUM_THREADS`, else one per logical CPU). The output does not depend on it.
    pub threads: Option<usize>,
    /// SIMD lanes or the scalar instantiation of the kernels (same bits either way).
    pub kernel: KernelPath,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// Resource limits the model is built under.
    pub limits: Limits,
    /// When to write checkpoints (`DIR/weft.checkpoint`; see [`crate::checkpointing`]).
    pub checkpoints: CheckpointPolicy,
    /// Go on from the checkpoint in the output directory if it belongs to this bake; otherwise
    /// (none, or another bake's) start from frame 0 and say why in [`BakeReport::resume_note`].
    pub resume: bool,
    /// For tests of resuming: abort the process, as a crash would (no destructor runs, the
    /// temporary files stay), right after the checkpoint of this frame.
    pub crash_after_checkpoint: Option<u32>,
}

impl BakeOptions {
    /// PC2 into `out_dir`, rayon's default thread count, the SIMD kernels, no progress bar,
    /// default limits.
    pub fn new(out_dir: impl Into<PathBuf>) -> Self {
        BakeOptions {
            out_dir: out_dir.into(),
            formats: vec![CacheFormat::Pc2],
            threads: None,
            kernel: KernelPath::Simd,
            progress: false,
            limits: Limits::default(),
            checkpoints: CheckpointPolicy::default(),
            resume: false,
            crash_after_checkpoint: None,
        }
    }

    /// The formats to write: [`BakeOptions::formats`] without repeats, in the order given, or
    /// `[Pc2]` if none is given.
    pub fn effective_formats(&self) -> Vec<CacheFormat> {
        let mut formats: Vec<CacheFormat> = Vec::new();
        for &f in &self.formats {
            if !formats.contains(&f) {
                formats.push(f);
            }
        }
        if formats.is_empty() {
            formats.push(CacheFormat::Pc2);
        }
        formats
    }
}

/// What one frame did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FrameStats {
    /// The frame, from 1.
    pub frame: u32,
    /// Its time in s: `frame / fps`.
    pub time: f64,
    /// Per kind: projections skipped as degenerate, summed over the frame's time steps, and
    /// `|C|` after its last time step.
    pub step: StepStats,
    /// Intersecting pairs of non-adjacent triangles after the frame, over every cloth
    /// ([`weft_core::quality::intersecting_pairs`]).
    pub intersections: u64,
    /// The largest stretch of a stretch edge after the frame: `|x_a − x_b|/L − 1`, dimensionless.
    pub max_stretch: f32,
}

/// What a bake did: counts, per-frame statistics, timings and the files written.
#[derive(Debug, Clone, PartialEq)]
pub struct BakeReport {
    /// Frames baked.
    pub frames: u32,
    /// Time steps per frame.
    pub substeps: u32,
    /// Solver iterations per time step.
    pub iterations: u32,
    /// Time steps in all: `frames × substeps`.
    pub steps: u64,
    /// Particles in the model.
    pub particles: usize,
    /// Pinned particles.
    pub pinned: usize,
    /// Colliders in the scene.
    pub colliders: usize,
    /// Distance constraints solved (stretch and shear).
    pub constraints: usize,
    /// Distance constraints left out at build because both their particles are pinned.
    pub dropped_at_build: usize,
    /// The step statistics of the whole bake: degenerate projections summed over every step,
    /// the constraints dropped at build, and the residual after the last frame.
    pub totals: StepStats,
    /// One entry per frame, frame 1 first.
    pub per_frame: Vec<FrameStats>,
    /// Threads of the pool the bake ran in.
    pub threads: usize,
    /// The kernel path used.
    pub kernel: KernelPath,
    /// Every file written, in the order they were published (`stats.csv` last).
    pub files: Vec<PathBuf>,
    /// The frame this bake went on from, when it resumed from a checkpoint (its statistics and
    /// timings cover the frames after it only).
    pub resumed_from: Option<u32>,
    /// Why a `--resume` bake started from frame 0 instead (no checkpoint, or another bake's).
    pub resume_note: Option<String>,
    /// Time spent stepping the frames and writing their samples.
    pub frame_time: Duration,
    /// Time of the whole bake: building the model, stepping, writing and publishing the files.
    pub wall_time: Duration,
}

impl BakeReport {
    /// Frames stepped by this run (all of them, or those after the checkpoint it resumed from).
    pub fn frames_run(&self) -> u32 {
        self.frames - self.resumed_from.unwrap_or(0)
    }

    /// Milliseconds per frame (stepping and writing its samples) of the frames this run stepped.
    pub fn ms_per_frame(&self) -> f64 {
        self.frame_time.as_secs_f64() * 1e3 / self.frames_run().max(1) as f64
    }

    /// Constraint projections (constraints × iterations × time steps) per second of frame time.
    pub fn projections_per_second(&self) -> f64 {
        let steps = self.frames_run() as f64 * self.substeps as f64;
        let projections = self.constraints as f64 * self.iterations as f64 * steps;
        projections / self.frame_time.as_secs_f64().max(1e-9)
    }

    /// `|C|` of the distance constraints after the last frame.
    pub fn final_residual(&self) -> Residual {
        self.per_frame.last().and_then(|f| f.step.distance.residual).unwrap_or_default()
    }

    /// A few lines for a person: frames, steps, time, threads, SIMD level, degenerate projections,
    /// constraints dropped at build, the final `|C|` and the files written.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let r = self.final_residual();
        if let Some(note) = &self.resume_note {
            let _ = writeln!(s, "not resumed: {note}; baked from frame 0");
        }
        let _ = writeln!(
            s,
            "baked {} ({}) in {:.3} s: {:.2} ms/frame, {:.3e} projections/s",
            count(self.frames as u64, "frame"),
            count(self.steps, "time step"),
            self.wall_time.as_secs_f64(),
            self.ms_per_frame(),
            self.projections_per_second()
        );
        if let Some(frame) = self.resumed_from {
            let _ = writeln!(
                s,
                "  resumed from the checkpoint after frame {frame}: these figures cover the rest"
            );
        }
        let _ = writeln!(
            s,
            "  threads {}, kernel {}, SIMD {}",
            self.threads,
            kernel_name(self.kernel),
            weft_kernels::simd_level()
        );
        let _ = writeln!(
            s,
            "  model: {} ({} pinned), {}, {} dropped at build (both ends pinned)",
            count(self.particles as u64, "particle"),
            self.pinned,
            count(self.constraints as u64, "distance constraint"),
            self.dropped_at_build
        );
        let _ = writeln!(s, "  degenerate projections: {}", self.totals.degenerate());
        if self.colliders > 0 {
            let deep = |f: &FrameStats| f.step.colliders.deep.unwrap_or(0);
            let worst = self.per_frame.iter().max_by_key(|f| (deep(f), std::cmp::Reverse(f.frame)));
            let (most, at) = worst.map_or((0, 0), |f| (deep(f), f.frame));
            let _ = writeln!(
                s,
                "  colliders: {}; particles deeper than half the thickness: {} after the last frame, \
                 at most {} (frame {}); particles caught by the swept check: {}",
                self.colliders,
                self.per_frame.last().map_or(0, deep),
                most,
                at,
                self.totals.colliders.swept
            );
        }
        if let Some(last) = self.per_frame.last() {
            let worst = self.per_frame.iter().max_by_key(|f| (f.intersections, std::cmp::Reverse(f.frame)));
            let (most, at) = worst.map_or((0, 0), |f| (f.intersections, f.frame));
            let stretch = self.per_frame.iter().map(|f| f.max_stretch).fold(0.0f32, f32::max);
            let _ = writeln!(
                s,
                "  intersecting triangle pairs: {} after the last frame, at most {} (frame {}); \
                 largest stretch {:.3} % after the last frame, {:.3} % at most",
                last.intersections,
                most,
                at,
                last.max_stretch * 100.0,
                stretch * 100.0
            );
        }
        let _ = writeln!(
            s,
            "  final distance |C|: max {:.3e} m, mean {:.3e} m, largest strain {:.3} %",
            r.max_abs,
            r.mean_abs(),
            r.max_rel * 100.0
        );
        if let Some(last) = self.per_frame.last() {
            let kinds =
                [("bending", &last.step.bending, "rad"), ("tethers", &last.step.tethers, "m beyond bound")];
            for (name, kind, unit) in kinds {
                if let Some(r) = kind.residual.filter(|r| r.count > 0) {
                    let _ = writeln!(
                        s,
                        "  final {name} |C|: max {:.3e} {unit}, mean {:.3e} {unit} ({} degenerate projections)",
                        r.max_abs,
                        r.mean_abs(),
                        kind.degenerate
                    );
                }
            }
            if let Some(r) = last.step.volume.residual.filter(|r| r.count > 0) {
                let _ = writeln!(s, "  final volume error: {:.3} % of the target", r.max_rel * 100.0);
            }
        }
        let _ = writeln!(s, "  wrote {}", file_list(&self.files));
        s
    }
}

/// `1 frame`, `2 frames`.
fn count(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// The name of a kernel path as the command line spells it.
pub fn kernel_name(path: KernelPath) -> &'static str {
    match path {
        KernelPath::Simd => "simd",
        KernelPath::Scalar => "scalar",
    }
}

/// `N files in DIR: a, b, ...` for people, eliding the middle of a long list (OBJ sequences).
pub fn file_list(files: &[PathBuf]) -> String {
    let dir = files.first().and_then(|f| f.parent()).map(|d| d.display().to_string()).unwrap_or_default();
    let name = |f: &PathBuf| f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let names: Vec<String> = if files.len() <= 8 {
        files.iter().map(name).collect()
    } else {
        let mut v: Vec<String> = files[..3].iter().map(name).collect();
        v.push("…".to_string());
        v.extend(files[files.len() - 3..].iter().map(name));
        v
    };
    let plural = if files.len() == 1 { "" } else { "s" };
    format!("{} file{plural} in {dir}: {}", files.len(), names.join(", "))
}

/// Why a bake failed. Its `Display` is one line that names the file and the rule or the reason.
#[derive(Debug, thiserror::Error)]
pub enum BakeError {
    /// The scene breaks a rule (its message names the file, line and rule).
    #[error(transparent)]
    Scene(#[from] SceneError),
    /// The model is larger than [`BakeOptions::limits`] allow (a model built in code), or has
    /// more frames than a cache can count.
    #[error("{place}: {rule}")]
    TooLarge {
        /// What is too large: `the model`, or the scene file and the setting.
        place: String,
        /// The limit broken (a [`Rule::TooLarge`]).
        rule: Rule,
    },
    /// The thread pool could not be started.
    #[error("cannot start a pool of {threads} threads: {source}")]
    ThreadPool {
        /// Threads asked for (`0`: rayon's default).
        threads: usize,
        /// rayon's reason.
        source: rayon::ThreadPoolBuildError,
    },
    /// The output directory could not be created.
    #[error("{}: cannot create the output directory: {source}", path.display())]
    OutDir {
        /// The directory.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// A cache could not be created, written or published (this includes a non-finite sample).
    #[error("{format} cache of cloth '{cloth}': {source}")]
    Cache {
        /// The cloth.
        cloth: String,
        /// The format.
        format: CacheFormat,
        /// The reason (it names the file).
        source: io::Error,
    },
    /// Another file (`stats.csv`, the demo's scene) could not be written or published.
    #[error("{}: cannot write the file: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
}

/// Bakes `scene` (see the [module docs](self)).
///
/// The model is built under [`BakeOptions::limits`]; if the scene was read under other limits, it
/// is parsed again from its text with these. Nothing is created on disk before the model is built.
pub fn bake(scene: &Scene, options: &BakeOptions) -> Result<BakeReport, BakeError> {
    let started = Instant::now();
    let reparsed;
    let scene = if *scene.limits() == options.limits {
        scene
    } else {
        reparsed = parse_scene(scene.text(), scene.path(), &options.limits)?;
        &reparsed
    };
    let mut model = scene.build_model()?;
    run(&mut model, options, started).map_err(|e| match e {
        BakeError::TooLarge { rule, .. } => {
            BakeError::TooLarge { place: format!("{}: simulation", scene.path().display()), rule }
        }
        e => e,
    })
}

/// Bakes a model built in code; the caches are named after its cloths. On return `model` holds
/// the state after the last frame.
///
/// The model's particle count, constraint count and `frames × substeps` are checked against
/// [`BakeOptions::limits`] first.
pub fn bake_model(model: &mut Model, options: &BakeOptions) -> Result<BakeReport, BakeError> {
    run(model, options, Instant::now())
}

/// Refuses a model larger than `limits`.
fn check_limits(model: &Model, options: &BakeOptions) -> Result<(), BakeError> {
    let s = model.settings();
    let limits = &options.limits;
    let check = |what, requested: u64, limit: u64, hint| {
        if requested > limit {
            Err(BakeError::TooLarge {
                place: "the model".to_string(),
                rule: Rule::TooLarge { what, requested, limit, hint },
            })
        } else {
            Ok(())
        }
    };
    check("particles in the scene", model.particles().len() as u64, limits.max_particles, RAISE_HINT)?;
    check("constraints in the scene", model.distance().len() as u64, limits.max_constraints, RAISE_HINT)?;
    check("frames × substeps time steps", s.frames as u64 * s.substeps as u64, limits.max_steps, RAISE_HINT)?;
    // A cache holds `frames + 1` samples; PC2 counts them in an `i32`, the others in a `u32`.
    let (most, hint) = if options.effective_formats().contains(&CacheFormat::Pc2) {
        (i32::MAX as u64 - 1, "a PC2 cache counts its frames + 1 samples in 32 bits")
    } else {
        (u32::MAX as u64 - 1, "a cache counts its frames + 1 samples in 32 bits")
    };
    check("frames", s.frames as u64, most, hint)
}

/// The bake proper; `started` is when the caller started (for the wall time).
fn run(model: &mut Model, options: &BakeOptions, started: Instant) -> Result<BakeReport, BakeError> {
    check_limits(model, options)?;
    let requested = options.threads.unwrap_or(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(requested)
        .thread_name(|i| format!("weft-{i}"))
        .build()
        .map_err(|source| BakeError::ThreadPool { threads: requested, source })?;
    fs::create_dir_all(&options.out_dir)
        .map_err(|source| BakeError::OutDir { path: options.out_dir.clone(), source })?;
    let mut report = pool.install(|| frames(model, options))?;
    report.wall_time = started.elapsed();
    Ok(report)
}

/// One open cache: the cloth it belongs to (index into the model's cloths) and its writer.
struct OpenCache {
    cloth: usize,
    format: CacheFormat,
    writer: Box<dyn CacheWriter>,
}

/// Opens every cache, writes sample 0, steps and writes every frame, then publishes the files.
/// Runs inside the bake's pool.
fn frames(model: &mut Model, options: &BakeOptions) -> Result<BakeReport, BakeError> {
    let settings = model.settings().clone();
    let cloths: Vec<ClothInfo> = model.cloths().to_vec();
    let formats = options.effective_formats();
    let cache_err =
        |cloth: &ClothInfo, format, source| BakeError::Cache { cloth: cloth.name.clone(), format, source };

    let spec = |cloth| cache_spec(&options.out_dir, cloth, &settings);
    let stats_path = options.out_dir.join(STATS_FILE);
    let stats_err = |source| BakeError::File { path: stats_path.clone(), source };
    let checkpoint_path = options.out_dir.join(CHECKPOINT_FILE);
    let checkpointing = options.resume || options.checkpoints != CheckpointPolicy::Never;
    let fingerprint =
        if checkpointing { checkpointing::fingerprint(model, &formats, options.kernel) } else { 0 };

    // Go on from a checkpoint of this bake, if asked and there is one; else start afresh.
    let mut resume_note = None;
    let mut resumed = None;
    if options.resume {
        match resume(model, options, &cloths, &formats, fingerprint) {
            Ok(r) => resumed = Some(r),
            Err(note) => resume_note = Some(note),
        }
    }
    let (mut caches, mut stats, first_frame) = match resumed {
        Some((caches, stats, checkpoint)) => {
            checkpointing::restore(model, &checkpoint);
            (caches, stats, checkpoint.frame + 1)
        }
        None => {
            // A checkpoint left by another bake would not match the files this one writes.
            let _ = fs::remove_file(&checkpoint_path);
            let mut caches = Vec::with_capacity(cloths.len() * formats.len());
            for (c, cloth) in cloths.iter().enumerate() {
                for &format in &formats {
                    let writer =
                        create_cache(format, &spec(cloth)).map_err(|e| cache_err(cloth, format, e))?;
                    caches.push(OpenCache { cloth: c, format, writer });
                }
            }
            let mut stats = StagedFile::create(&stats_path).map_err(stats_err)?;
            stats.write(STATS_HEADER.as_bytes()).map_err(stats_err)?;
            stats.write(b"\n").map_err(stats_err)?;
            (caches, stats, 1)
        }
    };

    let mut sample = Vec::new();
    if first_frame == 1 {
        write_samples(model, &cloths, &mut caches, &mut sample)?;
    }
    let mut schedule = Schedule::new(options.checkpoints);
    let mut quality = Quality::new(model);

    let frame_started = Instant::now();
    let progress = Progress::new(options.progress, settings.frames, settings.substeps);
    let quiet = StepOptions { path: options.kernel, residual: false };
    let last = StepOptions { residual: true, ..quiet };
    let mut totals = StepStats::default();
    // Grown as frames are baked, never reserved up front from a count in the scene.
    let mut per_frame = Vec::new();
    for frame in first_frame..=settings.frames {
        let mut frame_stats = StepStats::default();
        for s in 1..=settings.substeps {
            let stats = step(model, if s == settings.substeps { &last } else { &quiet });
            frame_stats.accumulate(&stats);
            totals.accumulate(&stats);
        }
        let (intersections, max_stretch) = quality.measure(model);
        let row = FrameStats {
            frame,
            time: frame as f64 / settings.fps,
            step: frame_stats,
            intersections,
            max_stretch,
        };
        stats.write(stats_row(&row).as_bytes()).map_err(stats_err)?;
        per_frame.push(row);
        write_samples(model, &cloths, &mut caches, &mut sample)?;
        progress.frame_done(frame);
        if schedule.due(frame, settings.frames) {
            let mut checkpoint = checkpointing::capture(model, fingerprint, frame);
            for cache in &mut caches {
                let mark =
                    cache.writer.mark().map_err(|e| cache_err(&cloths[cache.cloth], cache.format, e))?;
                checkpoint.caches.push(mark);
            }
            checkpoint.stats_bytes = stats.sync().map_err(stats_err)?;
            write_checkpoint(&checkpoint_path, &checkpoint)
                .map_err(|source| BakeError::File { path: checkpoint_path.clone(), source })?;
            if options.crash_after_checkpoint == Some(frame) {
                // A crash, for tests: no destructor runs, every temporary file stays.
                std::process::abort();
            }
        }
    }
    progress.finish();
    let frame_time = frame_started.elapsed();

    // Publish the caches, then the statistics. On any failure, remove what this bake already
    // published: no set of files that looks complete is left.
    let mut files: Vec<PathBuf> = Vec::new();
    let published = publish(caches, stats, &cloths, &mut files);
    if let Err(e) = published {
        for f in &files {
            // Best effort: the error being returned is the one that matters.
            let _ = fs::remove_file(f);
        }
        return Err(e);
    }
    // Published: the checkpoint has nothing left to resume (best effort; a stale one is
    // recognised by its fingerprint and by its missing temporary files).
    let _ = fs::remove_file(&checkpoint_path);

    let report = model.report();
    Ok(BakeReport {
        frames: settings.frames,
        substeps: settings.substeps,
        iterations: settings.iterations,
        steps: settings.frames as u64 * settings.substeps as u64,
        particles: report.particles,
        pinned: report.pinned,
        colliders: report.colliders + report.mesh_colliders,
        constraints: model.distance().len(),
        dropped_at_build: report.dropped_pinned,
        totals: StepStats { dropped_at_build: report.dropped_pinned, ..totals },
        per_frame,
        threads: rayon::current_num_threads(),
        kernel: options.kernel,
        files,
        resumed_from: (first_frame > 1).then_some(first_frame - 1),
        resume_note,
        frame_time,
        wall_time: Duration::ZERO,
    })
}

/// The cache of `cloth` in `dir`: `frames + 1` samples at the scene's frame rate.
fn cache_spec<'a>(dir: &'a Path, cloth: &'a ClothInfo, settings: &SimSettings) -> CacheSpec<'a> {
    CacheSpec {
        dir,
        name: &cloth.name,
        triangles: &cloth.triangles,
        uvs: &cloth.uvs,
        point_count: cloth.particles.len(),
        fps: settings.fps,
        samples: settings.frames.saturating_add(1), // below u32::MAX: see check_limits
    }
}

/// What a resumed bake goes on with: its reopened caches and statistics, and the checkpoint.
type Resumed = (Vec<OpenCache>, StagedFile, Checkpoint);

/// Reads the checkpoint in the output directory and, if it belongs to this bake, reopens every
/// cache and the statistics at its marks. Otherwise says why not (nothing is changed on disk
/// then, but for temporary files cut back to a mark the checkpoint recorded).
fn resume(
    model: &Model,
    options: &BakeOptions,
    cloths: &[ClothInfo],
    formats: &[CacheFormat],
    fingerprint: u64,
) -> Result<Resumed, String> {
    let path = options.out_dir.join(CHECKPOINT_FILE);
    let checkpoint = match read_checkpoint(&path) {
        Ok(c) => c,
        Err(weft_io::checkpoint::CheckpointError::Read { source, .. })
            if source.kind() == io::ErrorKind::NotFound =>
        {
            return Err(format!("no checkpoint in {}", options.out_dir.display()));
        }
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let count = cloths.len() * formats.len();
    if let Some(why) = checkpointing::unusable(&checkpoint, model, fingerprint, count) {
        return Err(format!("{}: {why}", path.display()));
    }
    let mut caches = Vec::with_capacity(count);
    let mut marks = checkpoint.caches.iter();
    for (c, cloth) in cloths.iter().enumerate() {
        for &format in formats {
            let mark = marks.next().ok_or("the checkpoint records too few caches")?;
            let spec = cache_spec(&options.out_dir, cloth, model.settings());
            let writer = resume_cache(format, &spec, mark)
                .map_err(|e| format!("{format} cache of cloth '{}': {e}", cloth.name))?;
            if mark.samples != checkpoint.frame + 1 {
                return Err(format!(
                    "{format} cache of cloth '{}' holds {} samples, frame {} needs {}",
                    cloth.name,
                    mark.samples,
                    checkpoint.frame,
                    checkpoint.frame + 1
                ));
            }
            caches.push(OpenCache { cloth: c, format, writer });
        }
    }
    let stats = StagedFile::reopen(&options.out_dir.join(STATS_FILE), checkpoint.stats_bytes)
        .map_err(|e| format!("{STATS_FILE}: {e}"))?;
    Ok((caches, stats, checkpoint))
}

/// Renames every cache and then the statistics into place, appending each published file to
/// `files`.
fn publish(
    caches: Vec<OpenCache>,
    stats: StagedFile,
    cloths: &[ClothInfo],
    files: &mut Vec<PathBuf>,
) -> Result<(), BakeError> {
    for cache in caches {
        let written = cache.writer.finish().map_err(|source| BakeError::Cache {
            cloth: cloths[cache.cloth].name.clone(),
            format: cache.format,
            source,
        })?;
        files.extend(written);
    }
    let path = stats.target.clone();
    files.push(stats.commit().map_err(|source| BakeError::File { path, source })?);
    Ok(())
}

/// Writes the current positions of every cloth to each of its caches.
fn write_samples(
    model: &Model,
    cloths: &[ClothInfo],
    caches: &mut [OpenCache],
    sample: &mut Vec<[f32; 3]>,
) -> Result<(), BakeError> {
    let positions = model.particles().positions();
    let mut filled = usize::MAX;
    for cache in caches.iter_mut() {
        let cloth = &cloths[cache.cloth];
        if filled != cache.cloth {
            sample.clear();
            sample.extend(positions[cloth.particles.clone()].iter().map(|p| [p[0], p[1], p[2]]));
            filled = cache.cloth;
        }
        cache.writer.write_sample(sample).map_err(|source| BakeError::Cache {
            cloth: cloth.name.clone(),
            format: cache.format,
            source,
        })?;
    }
    Ok(())
}

/// What the quality columns of [`STATS_FILE`] measure: every cloth's triangles (model indices) and
/// stretch edges with their rest lengths, gathered once per bake, and the buffers of the
/// measure, kept from frame to frame.
pub(crate) struct Quality {
    pub(crate) triangles: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    rest: Vec<f32>,
    positions: Vec<[f32; 3]>,
    intersections: weft_core::quality::IntersectionCounter,
}

impl Quality {
    pub(crate) fn new(model: &Model) -> Self {
        let mut triangles = Vec::new();
        for c in model.cloths() {
            let offset = c.particles.start as u32;
            triangles.extend(c.triangles.iter().map(|t| t.map(|i| i + offset)));
        }
        let (mut edges, mut rest) = (Vec::new(), Vec::new());
        for (packed, _) in model.distance().solve_order() {
            let c = weft_core::distance::DistanceConstraint::from_packed(&packed);
            if c.kind == weft_core::distance::DistanceKind::Stretch {
                edges.push(c.particles);
                rest.push(c.rest_length);
            }
        }
        Quality { triangles, edges, rest, positions: Vec::new(), intersections: Default::default() }
    }

    /// `(intersecting triangle pairs, largest stretch)` of the model now.
    pub(crate) fn measure(&mut self, model: &Model) -> (u64, f32) {
        self.positions.clear();
        self.positions.extend(model.particles().positions().iter().map(|p| [p[0], p[1], p[2]]));
        (
            self.intersections.count(&self.positions, &self.triangles),
            weft_core::quality::max_stretch(&self.positions, &self.edges, &self.rest),
        )
    }
}

/// One row of [`STATS_FILE`], with its line break. Numbers are written in Rust's shortest
/// round-trip form, so the file is a function of the simulation only.
pub fn stats_row(f: &FrameStats) -> String {
    let r = |k: &weft_kernels::KindStats| k.residual.unwrap_or_default();
    let (d, b, t, v) = (r(&f.step.distance), r(&f.step.bending), r(&f.step.tethers), r(&f.step.volume));
    format!(
        "{},{:?},{},{:?},{:?},{:?},{:?},{:?},{:?},{:?},{},{:?},{}\n",
        f.frame,
        f.time,
        f.step.degenerate(),
        d.max_abs,
        d.mean_abs(),
        d.max_rel,
        b.max_abs,
        b.mean_abs(),
        t.max_abs,
        v.max_rel,
        f.intersections,
        f.max_stretch,
        f.step.colliders.deep.unwrap_or(0)
    )
}

/// The whole text of [`STATS_FILE`] for these frames: [`STATS_HEADER`], then one
/// [`stats_row`] per frame.
pub fn stats_csv(per_frame: &[FrameStats]) -> String {
    let mut s = format!("{STATS_HEADER}\n");
    for f in per_frame {
        s.push_str(&stats_row(f));
    }
    s
}

/// A file written under `TARGET.partial` and renamed to `TARGET` by [`StagedFile::commit`];
/// removed if dropped uncommitted (an error, a panic).
#[derive(Debug)]
struct StagedFile {
    /// `None` once closed.
    out: Option<io::BufWriter<fs::File>>,
    temp: PathBuf,
    target: PathBuf,
}

impl StagedFile {
    /// Creates (or truncates) `TARGET.partial`.
    fn create(target: &Path) -> io::Result<Self> {
        let mut temp = target.as_os_str().to_owned();
        temp.push(".partial");
        let temp = PathBuf::from(temp);
        let file = fs::File::create(&temp)?;
        Ok(StagedFile { out: Some(io::BufWriter::new(file)), temp, target: target.to_path_buf() })
    }

    /// Reopens `TARGET.partial` left by an earlier run, cut back to its first `len` bytes.
    fn reopen(target: &Path, len: u64) -> io::Result<Self> {
        let mut temp = target.as_os_str().to_owned();
        temp.push(".partial");
        let temp = PathBuf::from(temp);
        let file = weft_io::checkpoint::reopen_partial(&temp, len)?;
        Ok(StagedFile { out: Some(io::BufWriter::new(file)), temp, target: target.to_path_buf() })
    }

    /// Flushes and syncs what is written so far; returns the file's length in bytes.
    fn sync(&mut self) -> io::Result<u64> {
        match &mut self.out {
            Some(out) => {
                out.flush()?;
                out.get_ref().sync_data()?;
                Ok(out.get_ref().metadata()?.len())
            }
            None => Err(io::Error::other("the file is already closed")),
        }
    }

    /// Appends `bytes`.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.out {
            Some(out) => out.write_all(bytes),
            None => Err(io::Error::other("the file is already closed")),
        }
    }

    /// Flushes and syncs the file, renames it into place and returns its final path.
    fn commit(mut self) -> io::Result<PathBuf> {
        if let Some(out) = self.out.take() {
            let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
            file.sync_all()?;
        }
        fs::rename(&self.temp, &self.target)?;
        // Committed: nothing to remove on drop.
        self.temp = PathBuf::new();
        Ok(self.target.clone())
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        // Close before removing (removing an open file fails on some systems).
        drop(self.out.take());
        if !self.temp.as_os_str().is_empty() {
            // Best effort: a drop cannot report, and the file may be gone already.
            let _ = fs::remove_file(&self.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_default_and_deduplicate() {
        let mut o = BakeOptions::new("x");
        o.formats.clear();
        assert_eq!(o.effective_formats(), vec![CacheFormat::Pc2]);
        o.formats = vec![CacheFormat::Usd, CacheFormat::Pc2, CacheFormat::Usd];
        assert_eq!(o.effective_formats(), vec![CacheFormat::Usd, CacheFormat::Pc2]);
    }

    #[test]
    fn stats_rows_are_exact() {
        let residual = Residual { max_abs: 0.5, sum_abs: 0.75, max_rel: 0.25, sum_rel: 0.5, count: 3 };
        let mut step = StepStats {
            distance: weft_kernels::KindStats { degenerate: 2, residual: Some(residual) },
            ..StepStats::default()
        };
        step.bending.degenerate = 1;
        let rows = [FrameStats { frame: 1, time: 0.1, step, intersections: 4, max_stretch: 0.125 }];
        assert_eq!(
            stats_csv(&rows),
            format!("{STATS_HEADER}\n1,0.1,3,0.5,0.25,0.25,0.0,0.0,0.0,0.0,4,0.125,0\n")
        );
    }

    #[test]
    fn long_file_lists_are_elided() {
        let files: Vec<PathBuf> = (0..20).map(|i| PathBuf::from(format!("out/f.{i:04}.obj"))).collect();
        let s = file_list(&files);
        assert!(s.starts_with("20 files in out: f.0000.obj, "), "{s}");
        assert!(s.contains("…") && s.ends_with("f.0019.obj"), "{s}");
    }
}
