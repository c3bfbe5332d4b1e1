//! `weft bake` of several scenes, or of every variant of a scene's `[wedge]`: the bakes of a batch
//! share the thread budget (`-j N`, else the logical CPUs).
//!
//! Each bake asks for the threads its model has work for ([`weft::bake::fitted_threads`]: one for
//! a small cloth, else the whole budget), and bakes start in order while the threads of the bakes
//! running, with theirs, stay within the budget. A bake's bytes do not depend on its thread count,
//! so the sharing changes no output. A bake that fails does not stop the others.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use weft::bake::{BakeOptions, BakeReport, bake, fitted_threads, write_summary};
use weft::core::limits::Limits;
use weft::core::self_collision::ThinParticleContacts;
use weft::io::{Scene, load_scene, load_scene_variant, wedge_variants};

/// What `weft bake` was asked to do.
pub(crate) enum Plan {
    /// One scene (or one variant), baked as always into its folder.
    Single { scene: Box<Scene>, out: PathBuf },
    /// Several bakes: the scenes, or the variants of a wedge.
    Batch(Vec<Job>),
}

/// One bake of a batch: what to call it, its scene (or why it cannot be read) and its folder.
pub(crate) struct Job {
    /// The scene file.
    path: PathBuf,
    label: String,
    scene: Result<Scene, String>,
    out: PathBuf,
}

/// The plan for `scenes` baked into `out`: one scene as it is, one variant of it
/// (`wedge_index`), every variant of its wedge, or several scenes each into `out/<file stem>/`
/// (a wedge scene's variants under that). Fails on a problem that leaves nothing to bake.
pub(crate) fn plan(
    scenes: &[PathBuf],
    wedge_index: Option<usize>,
    out: &Path,
    limits: &Limits,
) -> Result<Plan, String> {
    if let [scene] = scenes {
        if let Some(index) = wedge_index {
            let scene = load_scene_variant(scene, limits, index).map_err(|e| e.to_string())?;
            let name = scene.variant().map(|v| v.name.clone()).unwrap_or_default();
            return Ok(Plan::Single { scene: Box::new(scene), out: out.join(name) });
        }
        let variants = wedge_variants(scene, limits).map_err(|e| e.to_string())?;
        if variants.is_empty() {
            let scene = load_scene(scene, limits).map_err(|e| e.to_string())?;
            return Ok(Plan::Single { scene: Box::new(scene), out: out.to_path_buf() });
        }
        return Ok(Plan::Batch(variant_jobs(
            scene,
            out,
            limits,
            variants.into_iter().map(|v| (v.index, v.name)),
        )));
    }
    if wedge_index.is_some() {
        return Err(format!("--wedge-index bakes one variant of one scene, not of {} scenes", scenes.len()));
    }
    let mut stems: BTreeMap<String, &PathBuf> = BTreeMap::new();
    for scene in scenes {
        let stem = scene.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if let Some(first) = stems.insert(stem.clone(), scene) {
            return Err(format!(
                "{} and {} would both bake into {}: give the scenes different file names",
                first.display(),
                scene.display(),
                out.join(&stem).display()
            ));
        }
    }
    let mut jobs = Vec::new();
    for scene in scenes {
        let stem = scene.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let dir = out.join(stem);
        match wedge_variants(scene, limits) {
            Ok(variants) if variants.is_empty() => jobs.push(Job {
                path: scene.clone(),
                label: scene.display().to_string(),
                scene: load_scene(scene, limits).map_err(|e| e.to_string()),
                out: dir,
            }),
            Ok(variants) => jobs.extend(variant_jobs(
                scene,
                &dir,
                limits,
                variants.into_iter().map(|v| (v.index, v.name)),
            )),
            Err(e) => {
                let label = scene.display().to_string();
                jobs.push(Job { path: scene.clone(), label, scene: Err(e.to_string()), out: dir })
            }
        }
    }
    Ok(Plan::Batch(jobs))
}

/// A job per variant of `scene`, each into `out/<variant name>/`.
fn variant_jobs(
    scene: &Path,
    out: &Path,
    limits: &Limits,
    variants: impl Iterator<Item = (usize, String)>,
) -> Vec<Job> {
    variants
        .map(|(index, name)| Job {
            path: scene.to_path_buf(),
            label: format!("{} variant {name}", scene.display()),
            scene: load_scene_variant(scene, limits, index).map_err(|e| e.to_string()),
            out: out.join(name),
        })
        .collect()
}

/// Bakes `jobs` with `options` (each into its own folder), within `budget` threads; tells of
/// each start and end on stderr unless `quiet`. Returns the error line of each bake that failed,
/// in the jobs' order: the message, after `LABEL: ` unless it names the scene file already (a
/// scene's errors do, with the variant).
pub(crate) fn run(jobs: Vec<Job>, options: &BakeOptions, budget: usize, quiet: bool) -> Vec<String> {
    let total = jobs.len();
    let budget = budget.max(1);
    let mut failures: Vec<Option<String>> = vec![None; total];
    let names: Vec<(String, PathBuf)> = jobs.iter().map(|j| (j.label.clone(), j.path.clone())).collect();
    let failure = |i: usize, message: String| {
        let (label, path) = &names[i];
        if message.contains(&*path.display().to_string()) { message } else { format!("{label}: {message}") }
    };
    // The threads each job asks for (its model built once to see), or why it cannot bake; and
    // the warnings of `weft bake` on particle contacts too thin, each told once (variants that
    // sweep other keys share them), naming the first bake that has it.
    let mut ready = Vec::new();
    let mut warned = std::collections::BTreeSet::new();
    for (i, job) in jobs.into_iter().enumerate() {
        match job.scene.and_then(|scene| {
            let model = scene.build_model().map_err(|e| e.to_string())?;
            for (cloth, thin) in ThinParticleContacts::of_model(&model) {
                if warned.insert(format!("cloth \"{cloth}\": {thin}")) {
                    let _ = writeln!(io::stderr(), "warning: {}: cloth \"{cloth}\": {thin}", names[i].0);
                }
            }
            let need = match fitted_threads(&model) {
                0 => budget,
                n => n.min(budget),
            };
            Ok((scene, need))
        }) {
            Ok((scene, need)) => ready.push((i, scene, need, job.out)),
            Err(e) => failures[i] = Some(failure(i, e)),
        }
    }
    let say = |line: String| {
        if !quiet {
            let _ = writeln!(io::stderr(), "{line}");
        }
    };
    for (i, failed) in failures.iter().enumerate() {
        if failed.is_some() {
            say(format!("[{}/{total}] {}: failed", i + 1, names[i].0));
        }
    }
    std::thread::scope(|scope| {
        let (done, finished) = mpsc::channel::<(usize, usize, Result<BakeReport, String>)>();
        let mut free = budget;
        let mut running = 0;
        let mut queue = ready.into_iter();
        let mut next = queue.next();
        while next.is_some() || running > 0 {
            // Start jobs in order while their threads fit what is free.
            while let Some((i, scene, need, out)) = next.take() {
                if need > free && running > 0 {
                    next = Some((i, scene, need, out));
                    break;
                }
                free = free.saturating_sub(need);
                running += 1;
                say(format!(
                    "[{}/{total}] {}: baking on {need} thread{}",
                    i + 1,
                    names[i].0,
                    if need == 1 { "" } else { "s" }
                ));
                let options = BakeOptions { out_dir: out, threads: Some(need), ..options.clone() };
                let done = done.clone();
                scope.spawn(move || {
                    let result = bake(&scene, &options)
                        .and_then(|report| write_summary(&scene, &options, &report).map(|_| report))
                        .map_err(|e| e.to_string());
                    let _ = done.send((i, need, result));
                });
                next = queue.next();
            }
            let Ok((i, need, result)) = finished.recv() else { break };
            free += need;
            running -= 1;
            match result {
                Ok(report) => say(format!("[{}/{total}] {}: done, {}", i + 1, names[i].0, figures(&report))),
                Err(e) => {
                    say(format!("[{}/{total}] {}: failed", i + 1, names[i].0));
                    failures[i] = Some(failure(i, e));
                }
            }
        }
    });
    failures.into_iter().flatten().collect()
}

/// A bake's figures on one line: frames (and the checkpoint it resumed from), ms per frame of the
/// frames it stepped, the largest strain of those and the last frame's.
fn figures(report: &BakeReport) -> String {
    let peak = report.per_frame.iter().map(|f| f.max_stretch).fold(0.0f32, f32::max);
    let last = report.per_frame.last().map_or(0.0, |f| f.max_stretch);
    let resumed = report.resumed_from.map(|f| format!(", resumed after frame {f}")).unwrap_or_default();
    format!(
        "{} frames{resumed}, {:.2} ms/frame, strain peak {:.2} % / last frame {:.2} %",
        report.frames,
        report.ms_per_frame(),
        peak * 100.0,
        last * 100.0
    )
}
