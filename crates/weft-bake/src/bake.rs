//! The bake proper: the model built, every cache opened (or reopened from a checkpoint), every
//! frame stepped and written, then every file published.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::thread::ScopedJoinHandle;
use std::time::{Duration, Instant};

use weft_core::Rule;
use weft_core::limits::RAISE_HINT;
use weft_core::model::ClothInfo;
use weft_core::{Model, SimSettings, StrainTolerance};
use weft_io::checkpoint::{CHECKPOINT_FILE, Checkpoint, read_checkpoint, write_checkpoint};
use weft_io::{CacheFormat, CacheSpec, Scene, StagedFile, create_cache, resume_cache};
use weft_kernels::{StepOptions, StepStats, Stepper};

use crate::checkpointing::{self, CheckpointPolicy, Schedule, Snapshot};
use crate::output::{OpenCache, Output};
use crate::progress::Progress;
use crate::stats::{Cadence, Quality, STATS_FILE, STATS_HEADER};
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
    let mut model = scene.build_model()?;
    run(&mut model, options, progress, started).map_err(|e| match e {
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
    run(model, options, progress, Instant::now())
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

/// The bake proper; `started` is when the caller started (for the wall time).
fn run(
    model: &mut Model,
    options: &BakeOptions,
    progress: &mut dyn Progress,
    started: Instant,
) -> Result<BakeReport, BakeError> {
    check_limits(model, options)?;
    let requested = options.threads.unwrap_or_else(|| crate::fitted_threads(model));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(requested)
        .thread_name(|i| format!("weft-{i}"))
        .build()
        .map_err(|source| BakeError::ThreadPool { threads: requested, source })?;
    fs::create_dir_all(&options.out_dir)
        .map_err(|source| BakeError::OutDir { path: options.out_dir.clone(), source })?;
    let mut report = pool.install(|| frames(model, options, progress))?;
    report.wall_time = started.elapsed();
    Ok(report)
}

/// Opens every cache, writes sample 0, steps and writes every frame, then publishes the files.
/// Runs inside the bake's pool.
fn frames(
    model: &mut Model,
    options: &BakeOptions,
    progress: &mut dyn Progress,
) -> Result<BakeReport, BakeError> {
    let settings = model.settings().clone();
    let cloths: Vec<ClothInfo> = model.cloths().to_vec();
    let formats = options.effective_formats();
    let cache_err = |name: &str, format, source| BakeError::Cache { cloth: name.to_string(), format, source };

    let stats_path = options.out_dir.join(STATS_FILE);
    let stats_err = |source| BakeError::File { path: stats_path.clone(), source };
    let checkpoint_path = options.out_dir.join(CHECKPOINT_FILE);
    let checkpointing = options.resume || options.checkpoints != CheckpointPolicy::Never;
    let fingerprint = if checkpointing {
        checkpointing::fingerprint(model, &formats, options.kernel, options.stats)
    } else {
        0
    };

    // Go on from a checkpoint of this bake, if asked and there is one; else start afresh.
    let mut resume_note = None;
    let mut resumed = None;
    if options.resume {
        match resume(model, options, &cloths, &formats, fingerprint) {
            Ok(r) => resumed = Some(r),
            Err(note) => resume_note = Some(note),
        }
    }
    let (caches, stats, first_frame, mut cadence) = match resumed {
        Some((caches, stats, checkpoint)) => {
            checkpointing::restore(model, &checkpoint);
            (caches, stats, checkpoint.frame + 1, Cadence::new(options.stats, checkpoint.stats_since))
        }
        None => {
            // A checkpoint left by another bake would not match the files this one writes.
            let _ = fs::remove_file(&checkpoint_path);
            let mut caches = Vec::with_capacity(cloths.len() * formats.len());
            for (c, cloth) in cloths.iter().enumerate() {
                for (name, render) in cache_names(cloth) {
                    for &format in &formats {
                        let writer = create_cache(
                            format,
                            &cache_spec(&options.out_dir, cloth, &name, render, &settings),
                        )
                        .map_err(|e| cache_err(&name, format, e))?;
                        caches.push(OpenCache { cloth: c, render, name: name.clone(), format, writer });
                    }
                }
            }
            let mut stats = StagedFile::create(&stats_path).map_err(stats_err)?;
            stats.write(STATS_HEADER.as_bytes()).map_err(stats_err)?;
            stats.write(b"\n").map_err(stats_err)?;
            (caches, stats, 1, Cadence::new(options.stats, 0))
        }
    };

    // Frames are written beside the solver when it leaves a core free (see `crate::output`).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut output = Output::new(model, caches, stats, rayon::current_num_threads() < cores)?;
    if first_frame == 1 {
        output.capture(model);
        output.write_samples(&cloths)?;
    }
    let mut schedule = Schedule::new(options.checkpoints);
    // The largest stretch, for the tolerance and the row; the output counts the intersections.
    let mut quality = Quality::new(model);
    let start_intersections = (first_frame == 1).then(|| quality.measure(model).0);

    let frame_started = Instant::now();
    progress.start(settings.frames, model.settings().substeps);
    // One stepper for the whole bake: its buffers are kept from step to step. The residual is
    // measured on the last time step of a frame measured fully only.
    let quiet = StepOptions { path: options.kernel, residual: false };
    let last = StepOptions { residual: true, ..quiet };
    let mut stepper = Stepper::new(quiet);
    let iterations = settings.iterations as u64;
    let mut totals = StepStats::default();
    // Baking to a strain tolerance: the count of each frame is chosen (see `next_substeps`);
    // a frame over the tolerance is stepped again from this snapshot of its start.
    let tolerance = settings.tolerance;
    let mut snapshot = Snapshot::default();
    let (mut steps, mut redone_steps) = (0u64, 0u64);
    // Grown as frames are baked, never reserved up front from a count in the scene.
    let mut per_frame = Vec::new();
    // Each frame's rows and samples are written on a thread of their own while the next frame
    // steps (see `crate::output`); the output comes back before the next frame is handed over.
    let output = std::thread::scope(|scope| -> Result<Output, BakeError> {
        let mut writing: Option<ScopedJoinHandle<'_, Written>> = None;
        let mut parked = Some(output);
        for frame in first_frame..=settings.frames {
            let mut frame_steps = 0u64;
            // The frame's statistics, its largest stretch (for the tolerance and the row) and
            // whether it is measured fully (decided for each try: a try at more substeps may be).
            let (frame_stats, max_stretch, measured) = loop {
                let substeps = model.settings().substeps;
                let measured = cadence.due(frame, settings.frames, substeps as u64 * iterations);
                let may_redo = tolerance.is_some_and(|t| substeps < t.max_substeps);
                if may_redo {
                    snapshot.take(model);
                }
                let mut frame_stats = StepStats::default();
                for s in 1..=substeps {
                    stepper.set_options(if s == substeps && measured { last } else { quiet });
                    frame_stats.accumulate(&stepper.step(model));
                }
                frame_steps += substeps as u64;
                let max_stretch = quality.max_stretch(model);
                if let Some(t) = tolerance.filter(|_| may_redo)
                    && max_stretch > t.max_strain
                {
                    // Over the tolerance with steps to spare: again from the start, twice the count.
                    snapshot.put_back(model);
                    redone_steps += substeps as u64;
                    set_substeps(model, substeps.saturating_mul(2).min(t.max_substeps));
                    continue;
                }
                break (frame_stats, max_stretch, measured);
            };
            let substeps = model.settings().substeps;
            cadence.record(measured, substeps as u64 * iterations);
            steps += frame_steps;
            totals.accumulate(&frame_stats);
            let row = FrameStats {
                frame,
                time: frame as f64 / settings.fps,
                substeps,
                step: frame_stats,
                intersections: None,
                max_stretch,
            };
            let mut out = take_back(&mut writing, &mut parked, &mut per_frame)?;
            out.capture(model);
            if let Some(t) = tolerance {
                // What the next frame starts with (and a checkpoint after this frame records).
                set_substeps(model, next_substeps(&t, substeps, max_stretch));
            }
            progress.frame_steps(frame, frame_steps, substeps);
            progress.frame_done(frame);
            let due = schedule.due(frame, settings.frames);
            if out.beside() && !due {
                let cloths = &cloths;
                writing = Some(scope.spawn(move || {
                    let row = out.write_frame(row, measured, cloths);
                    (out, row)
                }));
                continue;
            }
            // In line: written here, and a checkpoint (if due) records what the files hold.
            per_frame.push(out.write_frame(row, measured, &cloths)?);
            if !due {
                parked = Some(out);
                continue;
            }
            let mut checkpoint = checkpointing::capture(model, fingerprint, frame, cadence.since());
            for cache in &mut out.caches {
                let mark = cache.writer.mark().map_err(|e| cache_err(&cache.name, cache.format, e))?;
                checkpoint.caches.push(mark);
            }
            checkpoint.stats_bytes = out.stats.sync().map_err(stats_err)?;
            write_checkpoint(&checkpoint_path, &checkpoint)
                .map_err(|source| BakeError::File { path: checkpoint_path.clone(), source })?;
            if options.crash_after_checkpoint == Some(frame) {
                // A crash, for tests: no destructor runs, every temporary file stays.
                std::process::abort();
            }
            parked = Some(out);
        }
        take_back(&mut writing, &mut parked, &mut per_frame)
    })?;
    progress.finish();
    let frame_time = frame_started.elapsed();

    // Publish the caches, then the statistics. On any failure, remove what this bake already
    // published: no set of files that looks complete is left.
    let mut files: Vec<PathBuf> = Vec::new();
    let published = publish(output.caches, output.stats, &mut files);
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
        tolerance,
        iterations: settings.iterations,
        steps,
        redone_steps,
        particles: report.particles,
        pinned: report.pinned,
        colliders: report.colliders + report.mesh_colliders,
        constraints: model.sets().distance.len(),
        dropped_at_build: report.dropped_pinned,
        totals: StepStats { dropped_at_build: report.dropped_pinned, ..totals },
        per_frame,
        start_intersections,
        threads: rayon::current_num_threads(),
        kernel: options.kernel,
        files,
        resumed_from: (first_frame > 1).then_some(first_frame - 1),
        resume_note,
        frame_time,
        wall_time: Duration::ZERO,
    })
}

/// The count the frame after one that kept `substeps` and ended with the largest stretch
/// `max_stretch` starts with: half as many (at least `min_substeps`) when it ended below
/// `max_strain ×` [`StrainTolerance::RELAX_BELOW`], else the same.
fn next_substeps(t: &StrainTolerance, substeps: u32, max_stretch: f32) -> u32 {
    if max_stretch < t.max_strain * StrainTolerance::RELAX_BELOW {
        (substeps / 2).max(t.min_substeps)
    } else {
        substeps
    }
}

/// Sets the model's substep count to one between its tolerance's bounds.
fn set_substeps(model: &mut Model, substeps: u32) {
    model.set_substeps(substeps).expect("a count between min_substeps and max_substeps, checked at build");
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

/// Renames every cache and then the statistics into place, appending each published file to
/// `files`.
fn publish(caches: Vec<OpenCache>, stats: StagedFile, files: &mut Vec<PathBuf>) -> Result<(), BakeError> {
    for cache in caches {
        let written = cache.writer.finish().map_err(|source| BakeError::Cache {
            cloth: cache.name.clone(),
            format: cache.format,
            source,
        })?;
        files.extend(written);
    }
    let path = stats.target().to_path_buf();
    files.push(stats.commit().map_err(|source| BakeError::File { path, source })?);
    Ok(())
}

/// An [`Output`] back from writing a frame, with the frame's row or the error that stopped it.
type Written = (Output, Result<FrameStats, BakeError>);

/// The output, back from the thread writing the last frame (its row pushed to `per_frame`), or
/// from where it was parked when no frame is being written.
fn take_back(
    writing: &mut Option<ScopedJoinHandle<'_, Written>>,
    parked: &mut Option<Output>,
    per_frame: &mut Vec<FrameStats>,
) -> Result<Output, BakeError> {
    match writing.take() {
        Some(handle) => {
            let (output, row) = handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            per_frame.push(row?);
            Ok(output)
        }
        None => Ok(parked.take().expect("the output is parked when no frame is being written")),
    }
}
