//! The bake proper: the model built, every cache opened (or reopened from a checkpoint), every
//! frame stepped and written, then every file published.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use weft_core::Rule;
use weft_core::limits::RAISE_HINT;
use weft_core::model::ClothInfo;
use weft_core::{Model, SimSettings};
use weft_io::checkpoint::{CHECKPOINT_FILE, Checkpoint, read_checkpoint, write_checkpoint};
use weft_io::{CacheFormat, CacheSpec, Scene, StagedFile, create_cache, resume_cache};
use weft_kernels::StepStats;

use crate::checkpointing::{self, CheckpointPolicy, Schedule};
use crate::frame::FrameStepper;
use crate::output::{Frame, FrameWriter, OpenCache, Output};
use crate::progress::Progress;
use crate::stats::{self, Cadence, STATS_FILE, STATS_HEADER};
use crate::{BakeError, BakeOptions, BakeReport, FrameStats};

/// Bakes `scene` (see the [crate docs](crate)).
///
/// The model is built under [`BakeOptions::limits`]; if the scene was read under other limits, it
/// is parsed again from its text with these. Nothing is created on disk before the model is built.
pub fn bake(scene: &Scene, options: &BakeOptions) -> Result<BakeReport, BakeError> {
    bake_with_progress(scene, options, &mut ())
}

/// [`bake`], telling `progress` of every frame done.
pub fn bake_with_progress(
    scene: &Scene,
    options: &BakeOptions,
    progress: &mut dyn Progress,
) -> Result<BakeReport, BakeError> {
    let started = Instant::now();
    let reparsed;
    let scene = if *scene.limits() == options.limits {
        scene
    } else {
        reparsed = scene.with_limits(&options.limits)?;
        &reparsed
    };
    // The model is built on the threads the bake asked for (the build's independent passes run
    // side by side); the bake keeps them unless the model fits fewer.
    let pool = thread_pool(options.threads.unwrap_or(0))?;
    let mut model = pool.install(|| scene.build_model())?;
    run(&mut model, options, progress, started, Some(pool)).map_err(|e| match e {
        BakeError::TooLarge { rule, .. } => {
            BakeError::TooLarge { place: format!("{}: simulation", scene.path().display()), rule }
        }
        e => e,
    })
}

/// Bakes a model built in code; the caches are named after its cloths. On return `model` holds
/// the state after the last frame.
///
/// The model's particle count, constraint count and `frames × substeps` (`frames ×
/// max_substeps` with a strain tolerance) are checked against [`BakeOptions::limits`] first.
pub fn bake_model(model: &mut Model, options: &BakeOptions) -> Result<BakeReport, BakeError> {
    bake_model_with_progress(model, options, &mut ())
}

/// [`bake_model`], telling `progress` of every frame done.
pub fn bake_model_with_progress(
    model: &mut Model,
    options: &BakeOptions,
    progress: &mut dyn Progress,
) -> Result<BakeReport, BakeError> {
    run(model, options, progress, Instant::now(), None)
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
    check(
        "constraints in the scene",
        model.sets().distance.len() as u64,
        limits.max_constraints,
        RAISE_HINT,
    )?;
    // With a strain tolerance, a frame may take up to `max_substeps` time steps.
    let (what, most) = match s.tolerance {
        Some(t) => ("frames × max_substeps time steps", t.max_substeps),
        None => ("frames × substeps time steps", s.substeps),
    };
    check(what, s.frames as u64 * most as u64, limits.max_steps, RAISE_HINT)?;
    // A cache holds `frames + 1` samples; PC2 counts them in an `i32`, the others in a `u32`.
    let (most, hint) = if options.effective_formats().contains(&CacheFormat::Pc2) {
        (i32::MAX as u64 - 1, "a PC2 cache counts its frames + 1 samples in 32 bits")
    } else {
        (u32::MAX as u64 - 1, "a cache counts its frames + 1 samples in 32 bits")
    };
    check("frames", s.frames as u64, most, hint)
}

/// A pool of `threads` threads (`0`: rayon's default) named `weft-N`.
fn thread_pool(threads: usize) -> Result<rayon::ThreadPool, BakeError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("weft-{i}"))
        .build()
        .map_err(|source| BakeError::ThreadPool { threads, source })
}

/// The bake proper; `started` is when the caller started (for the wall time), `built_on` the
/// pool the model was built on, if any, kept when it has the threads the bake runs on.
fn run(
    model: &mut Model,
    options: &BakeOptions,
    progress: &mut dyn Progress,
    started: Instant,
    built_on: Option<rayon::ThreadPool>,
) -> Result<BakeReport, BakeError> {
    check_limits(model, options)?;
    // What building the model freed goes back to the system before the bake allocates.
    crate::memory::release_freed_heap();
    let requested = options.threads.unwrap_or_else(|| crate::fitted_threads(model));
    let pool = match built_on {
        // The build's pool was made with the threads asked for, or the default.
        Some(pool) if requested == 0 || Some(requested) == options.threads => pool,
        _ => thread_pool(requested)?,
    };
    fs::create_dir_all(&options.out_dir)
        .map_err(|source| BakeError::OutDir { path: options.out_dir.clone(), source })?;
    let mut report = pool.install(|| frames(model, options, progress))?;
    report.wall_time = started.elapsed();
    Ok(report)
}

/// Opens every cache, steps every frame and writes it and sample 0, then publishes the files.
/// Runs inside the bake's pool.
///
/// The stages, each a method of [`Bake`] or [`FrameWriter`]: **open** the files (or resume from a
/// checkpoint) and hand sample 0 to the writer; then, frame by frame, **step** the frame (again,
/// from its start, while it ends over the strain tolerance), **close** it (its positions copied
/// into a buffer of the writer's, progress), **emit** it (to the writer's thread, or written in
/// line) and write a **checkpoint** when one is due (or the bake is asked to stop:
/// [`Progress::should_stop`]), the writer settled first; then **publish** the files.
fn frames(
    model: &mut Model,
    options: &BakeOptions,
    progress: &mut dyn Progress,
) -> Result<BakeReport, BakeError> {
    let (mut bake, output) = Bake::open(model, options)?;
    let cloths: Vec<ClothInfo> = bake.model.cloths().iter().map(written_part).collect();
    let frame_started = Instant::now();
    progress.start(bake.settings.frames, bake.model.settings().substeps);
    // Each frame is written on a thread of its own while the next ones step (see
    // `crate::output`); it is settled before a checkpoint and after the last frame.
    let threads = rayon::current_num_threads();
    let (output, per_frame, start_intersections) = std::thread::scope(|scope| {
        let particles = bake.model.particles().len();
        let mut writer = FrameWriter::new(scope, &cloths, output, particles, threads)?;
        if bake.first_frame == 1 {
            let mut positions = writer.buffer()?;
            stats::copy_positions(bake.model, &mut positions);
            writer.emit(Frame::start(positions))?;
        }
        for frame in bake.first_frame..=bake.settings.frames {
            let stepped = bake.step_frame(frame);
            let positions = writer.buffer()?;
            let frame_out = bake.close_frame(frame, stepped, positions, progress);
            writer.emit(frame_out)?;
            let stop = frame < bake.settings.frames && progress.should_stop();
            if bake.schedule.due(frame, bake.settings.frames) || (stop && bake.checkpointing) {
                bake.checkpoint(frame, writer.settle()?)?;
            }
            if stop {
                return Err(bake.stop(frame, writer));
            }
        }
        writer.finish()
    })?;
    progress.finish();
    let frame_time = frame_started.elapsed();
    let files = publish(output, &options.out_dir.join(CHECKPOINT_FILE))?;
    Ok(bake.report(per_frame, start_intersections, files, frame_time))
}

/// What the output reads of `cloth` while the model steps (a copy, since the model is borrowed
/// for stepping): its name, particles and render mesh, and its triangles and faces only when it
/// has a render mesh (placed on them); the caches were created from the model's own.
fn written_part(cloth: &ClothInfo) -> ClothInfo {
    let faces = cloth.render.is_some();
    ClothInfo {
        name: cloth.name.clone(),
        particles: cloth.particles.clone(),
        triangles: if faces { cloth.triangles.clone() } else { Vec::new() },
        polygons: if faces { cloth.polygons.clone() } else { Default::default() },
        render: cloth.render.clone(),
    }
}

/// One bake under way: the model and the stepper, and what the frames add up to.
struct Bake<'a> {
    model: &'a mut Model,
    options: &'a BakeOptions,
    /// The scene's settings, as built (a resumed bake's model starts at its checkpoint's count).
    settings: SimSettings,
    /// Whether checkpoints are written or read (not [`CheckpointPolicy::Never`], or resuming).
    checkpointing: bool,
    /// Ties a checkpoint to this bake (0 when neither checkpoints nor resuming are asked for).
    fingerprint: u64,
    /// The first frame this run steps: 1, or the one after the checkpoint it resumed from.
    first_frame: u32,
    resume_note: Option<String>,
    /// Steps the frames, with one stepper for the whole bake (its buffers kept from step to
    /// step); measures the largest stretch, for the tolerance and the row (the output counts the
    /// intersections).
    frames: FrameStepper,
    cadence: Cadence,
    schedule: Schedule,
    /// Time steps taken, and of them those thrown away over the tolerance.
    steps: u64,
    redone_steps: u64,
    totals: StepStats,
}

/// A frame stepped: its row (the intersections not yet counted, the stretch not yet measured
/// unless baking to a tolerance), whether it is measured fully and whether its stretch is, and the
/// time steps it took, tries stepped again included.
struct Stepped {
    row: FrameStats,
    measured: bool,
    stretch_measured: bool,
    steps: u64,
}

impl<'a> Bake<'a> {
    /// Stage **open**: goes on from a checkpoint of this bake, if asked and there is one, else
    /// creates every file afresh (sample 0 is the first frame the output writes); returns the
    /// bake and its output.
    fn open(model: &'a mut Model, options: &'a BakeOptions) -> Result<(Self, Output), BakeError> {
        let settings = model.settings().clone();
        let formats = options.effective_formats();
        let checkpointing = options.resume || options.checkpoints != CheckpointPolicy::Never;
        let fingerprint = match checkpointing {
            true => checkpointing::fingerprint(model, &formats, options.kernel, options.stats),
            false => 0,
        };
        let opened = open_or_resume(model, options, &formats, fingerprint)?;
        let first_frame = opened.first_frame;
        let output = Output::new(model, opened.caches, opened.stats);
        let frames = FrameStepper::new(model, options.kernel);
        let bake = Bake {
            options,
            settings,
            checkpointing,
            fingerprint,
            first_frame,
            resume_note: opened.resume_note,
            frames,
            cadence: Cadence::new(options.stats, opened.stats_since),
            schedule: Schedule::new(options.checkpoints),
            steps: 0,
            redone_steps: 0,
            totals: StepStats::default(),
            model,
        };
        Ok((bake, output))
    }

    /// Stage **step**: steps `frame` ([`FrameStepper::step_frame`]: baking to a strain
    /// tolerance, a try that ends over it with steps to spare is stepped again from the frame's
    /// start, at twice the count, and the model is left with the next frame's count).
    fn step_frame(&mut self, frame: u32) -> Stepped {
        let iterations = self.settings.iterations as u64;
        let (cadence, frames) = (&self.cadence, self.settings.frames);
        let measure = |substeps: u32| cadence.due(frame, frames, substeps as u64 * iterations);
        let f = self.frames.step_frame(self.model, &measure);
        self.cadence.record(f.measured, f.substeps as u64 * iterations);
        self.steps += f.steps;
        self.redone_steps += f.steps - f.substeps as u64;
        self.totals.accumulate(&f.stats);
        let time = frame as f64 / self.settings.fps;
        let (substeps, max_stretch) = (f.substeps, f.max_stretch.unwrap_or_default());
        let row = FrameStats { frame, time, substeps, step: f.stats, intersections: None, max_stretch };
        Stepped { row, measured: f.measured, stretch_measured: f.max_stretch.is_some(), steps: f.steps }
    }

    /// Stage **close**: after `frame` was stepped, its positions copied into `positions` (a buffer
    /// of the writer's), and the progress calls; returns what the output writes of it.
    fn close_frame(
        &mut self,
        frame: u32,
        stepped: Stepped,
        mut positions: Vec<[f32; 3]>,
        progress: &mut dyn Progress,
    ) -> Frame {
        stats::copy_positions(self.model, &mut positions);
        progress.frame_steps(frame, stepped.steps, stepped.row.substeps);
        progress.frame_done(frame);
        Frame::after(positions, stepped.row, stepped.measured, stepped.stretch_measured)
    }

    /// Stops the bake after `frame`, asked to by its progress: with a checkpoint written after
    /// `frame` (when the bake checkpoints), every temporary file is left as it stands for a
    /// resumed bake; else they are removed, as for any failure.
    fn stop(&self, frame: u32, writer: FrameWriter<'_, '_>) -> BakeError {
        let checkpoint = self.checkpointing.then(|| self.options.out_dir.join(CHECKPOINT_FILE));
        match writer.finish() {
            Ok((output, ..)) if checkpoint.is_some() => output.suspend(),
            Ok(_) => {}
            Err(e) => return e,
        }
        BakeError::Stopped { frame, checkpoint }
    }

    /// Stage **checkpoint**, after `frame` was written to `out` (the writer settled): every file
    /// flushed and synced, then the state and where each file stands recorded (see [`checkpointing`]).
    fn checkpoint(&self, frame: u32, out: &mut Output) -> Result<(), BakeError> {
        let mut marks = Vec::with_capacity(out.caches.len());
        for cache in &mut out.caches {
            marks.push(cache.writer.mark().map_err(|e| cache_err(&cache.name, cache.format, e))?);
        }
        let stats_bytes =
            out.stats.sync().map_err(|source| BakeError::File { path: out.stats.target().into(), source })?;
        let checkpoint = checkpointing::capture(
            self.model,
            self.fingerprint,
            frame,
            self.cadence.since(),
            &marks,
            stats_bytes,
        );
        let path = self.options.out_dir.join(CHECKPOINT_FILE);
        write_checkpoint(&path, &checkpoint).map_err(|source| BakeError::File { path, source })?;
        if self.options.crash_after_checkpoint == Some(frame) {
            // A crash, for tests: no destructor runs, every temporary file stays.
            std::process::abort();
        }
        Ok(())
    }

    /// What the bake did, once its files are published.
    fn report(
        self,
        per_frame: Vec<FrameStats>,
        start_intersections: Option<u64>,
        files: Vec<PathBuf>,
        frame_time: Duration,
    ) -> BakeReport {
        let (model, settings) = (&*self.model, &self.settings);
        let report = model.report();
        BakeReport {
            frames: settings.frames,
            substeps: settings.substeps,
            tolerance: settings.tolerance,
            iterations: settings.iterations,
            steps: self.steps,
            redone_steps: self.redone_steps,
            particles: report.particles,
            pinned: report.pinned,
            colliders: report.colliders + report.mesh_colliders,
            constraints: model.sets().distance.len(),
            dropped_at_build: report.dropped_pinned,
            totals: StepStats { dropped_at_build: report.dropped_pinned, ..self.totals },
            per_frame,
            start_intersections,
            threads: rayon::current_num_threads(),
            kernel: self.options.kernel,
            files,
            resumed_from: (self.first_frame > 1).then_some(self.first_frame - 1),
            resume_note: self.resume_note,
            frame_time,
            wall_time: Duration::ZERO,
        }
    }
}

/// The files of a bake, open, and where it starts.
struct Opened {
    caches: Vec<OpenCache>,
    stats: StagedFile,
    /// 1, or the frame after the checkpoint resumed from.
    first_frame: u32,
    /// Constraint sweeps since the statistics were last measured fully.
    stats_since: u64,
    /// Why a `--resume` bake starts afresh.
    resume_note: Option<String>,
}

/// Goes on from a checkpoint of this bake if `options.resume` asks and there is one (its state put
/// back into `model`); else removes any checkpoint and creates every file afresh.
fn open_or_resume(
    model: &mut Model,
    options: &BakeOptions,
    formats: &[CacheFormat],
    fingerprint: u64,
) -> Result<Opened, BakeError> {
    let mut resume_note = None;
    if options.resume {
        match resume(model, options, model.cloths(), formats, fingerprint) {
            Ok((caches, stats, checkpoint)) => {
                checkpointing::restore(model, &checkpoint);
                let (first_frame, stats_since) = (checkpoint.frame + 1, checkpoint.stats_since);
                return Ok(Opened { caches, stats, first_frame, stats_since, resume_note });
            }
            Err(note) => resume_note = Some(note),
        }
    }
    // A checkpoint left by another bake would not match the files this one writes.
    let _ = fs::remove_file(options.out_dir.join(CHECKPOINT_FILE));
    let (caches, stats) = create_files(model.settings(), options, model.cloths(), formats)?;
    Ok(Opened { caches, stats, first_frame: 1, stats_since: 0, resume_note })
}

/// Creates every cache, and `stats.csv` with its header, under their temporary names.
fn create_files(
    settings: &SimSettings,
    options: &BakeOptions,
    cloths: &[ClothInfo],
    formats: &[CacheFormat],
) -> Result<(Vec<OpenCache>, StagedFile), BakeError> {
    let mut caches = Vec::with_capacity(cloths.len() * formats.len());
    for (c, cloth) in cloths.iter().enumerate() {
        for (name, render) in cache_names(cloth) {
            for &format in formats {
                let spec = cache_spec(&options.out_dir, cloth, &name, render, settings);
                let writer = create_cache(format, &spec).map_err(|e| cache_err(&name, format, e))?;
                caches.push(OpenCache { cloth: c, render, name: name.clone(), format, writer });
            }
        }
    }
    let stats_path = options.out_dir.join(STATS_FILE);
    let stats_err = |source| BakeError::File { path: stats_path.clone(), source };
    let mut stats = StagedFile::create(&stats_path).map_err(stats_err)?;
    stats.write(STATS_HEADER.as_bytes()).map_err(stats_err)?;
    stats.write(b"\n").map_err(stats_err)?;
    Ok((caches, stats))
}

/// A cache's error, naming the cache.
fn cache_err(name: &str, format: CacheFormat, source: io::Error) -> BakeError {
    BakeError::Cache { cloth: name.to_string(), format, source }
}

/// The cache of `cloth` in `dir`: `frames + 1` samples at the scene's frame rate.
fn cache_spec<'a>(
    dir: &'a Path,
    cloth: &'a ClothInfo,
    name: &'a str,
    render: bool,
    settings: &SimSettings,
) -> CacheSpec<'a> {
    let (polygons, point_count) = match cloth.render.as_ref().filter(|_| render) {
        Some(r) => (&r.polygons, r.binding.len()),
        None => (&cloth.polygons, cloth.particles.len()),
    };
    CacheSpec {
        dir,
        name,
        polygons,
        point_count,
        fps: settings.fps,
        samples: settings.frames.saturating_add(1), // below u32::MAX: see check_limits
    }
}

/// The caches a cloth writes in each format, by name, and whether each holds its render mesh: the
/// cloth's name (its render mesh if it has one, else its particles), and `NAME_proxy` (its
/// particles) when it has a render mesh with `cache_proxy`.
pub(crate) fn cache_names(cloth: &ClothInfo) -> Vec<(String, bool)> {
    match &cloth.render {
        None => vec![(cloth.name.clone(), false)],
        Some(r) if r.cache_proxy => {
            vec![(cloth.name.clone(), true), (cloth.name.clone() + weft_core::binding::PROXY_SUFFIX, false)]
        }
        Some(_) => vec![(cloth.name.clone(), true)],
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
    let count = cloths.iter().map(|c| cache_names(c).len()).sum::<usize>() * formats.len();
    if let Some(why) = checkpointing::unusable(&checkpoint, model, fingerprint, count) {
        return Err(format!("{}: {why}", path.display()));
    }
    let mut caches = Vec::with_capacity(count);
    let mut marks = checkpoint.caches.iter();
    for (c, cloth) in cloths.iter().enumerate() {
        for (name, render) in cache_names(cloth) {
            for &format in formats {
                let mark = marks.next().ok_or("the checkpoint records too few caches")?;
                let spec = cache_spec(&options.out_dir, cloth, &name, render, model.settings());
                let writer =
                    resume_cache(format, &spec, mark).map_err(|e| format!("{format} cache '{name}': {e}"))?;
                if mark.samples != checkpoint.frame + 1 {
                    return Err(format!(
                        "{format} cache '{name}' holds {} samples, frame {} needs {}",
                        mark.samples,
                        checkpoint.frame,
                        checkpoint.frame + 1
                    ));
                }
                caches.push(OpenCache { cloth: c, render, name: name.clone(), format, writer });
            }
        }
    }
    let stats = StagedFile::reopen(&options.out_dir.join(STATS_FILE), checkpoint.stats_bytes)
        .map_err(|e| format!("{STATS_FILE}: {e}"))?;
    Ok((caches, stats, checkpoint))
}

/// Stage **publish**: renames every cache and then the statistics into place, and returns the
/// files in that order. On any failure, removes what this bake already published: no set of
/// files that looks complete is left. Then removes the checkpoint at `checkpoint`.
fn publish(output: Output, checkpoint: &Path) -> Result<Vec<PathBuf>, BakeError> {
    let mut files = Vec::new();
    if let Err(e) = rename_all(output.caches, output.stats, &mut files) {
        for f in &files {
            // Best effort: the error being returned is the one that matters.
            let _ = fs::remove_file(f);
        }
        return Err(e);
    }
    // Published: the checkpoint has nothing left to resume (best effort; a stale one is
    // recognised by its fingerprint and by its missing temporary files).
    let _ = fs::remove_file(checkpoint);
    Ok(files)
}

/// Renames every cache and then the statistics into place, appending each published file to
/// `files`.
fn rename_all(caches: Vec<OpenCache>, stats: StagedFile, files: &mut Vec<PathBuf>) -> Result<(), BakeError> {
    for cache in caches {
        let written = cache.writer.finish().map_err(|e| cache_err(&cache.name, cache.format, e))?;
        files.extend(written);
    }
    let path = stats.target().to_path_buf();
    files.push(stats.commit().map_err(|source| BakeError::File { path, source })?);
    Ok(())
}
