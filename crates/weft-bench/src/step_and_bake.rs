//! The step-and-bake rows of `weft bench`: on [`comparison_grid`] cloths, milliseconds per frame
//! of the time steps alone (what a solver comparison measures) and of a whole bake of the same
//! frames (what a user waits for: the steps, the per-frame statistics and quality measure at the
//! default `--stats light`, the cache and `stats.csv` writes), and the bake's time over the steps'
//! (median of the per-round ratios).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use weft_bake::{BakeOptions, CheckpointPolicy};
use weft_core::limits::Limits;
use weft_io::CacheFormat;
use weft_kernels::{KernelPath, StepOptions, Stepper};

use crate::scenes::{COMPARISON_SUBSTEPS, comparison_grid};
use crate::table::{median, pool};

/// Writes one row per grid size and thread count (1, and `threads` if more): `frames` frames
/// stepped, then baked, in each of `rounds` interleaved rounds after a warm-up round. The bakes
/// write PC2 caches into a scratch folder under the system's temporary folder, removed after.
pub(crate) fn step_and_bake_rows(
    sizes: &[u32],
    frames: u32,
    rounds: usize,
    threads: usize,
    out: &mut String,
) -> anyhow::Result<()> {
    let scratch = std::env::temp_dir().join(format!("weft-bench-{}", std::process::id()));
    let result = rows(sizes, frames, rounds, threads, &scratch, out);
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn rows(
    sizes: &[u32],
    frames: u32,
    rounds: usize,
    threads: usize,
    scratch: &Path,
    out: &mut String,
) -> anyhow::Result<()> {
    let thread_counts = if threads > 1 { vec![1, threads] } else { vec![1] };
    for &n in sizes {
        let model = comparison_grid(n, frames)?;
        let r = model.report();
        writeln!(
            out,
            "  {n}×{n} grid, 1 kg particles, {} distance + {} bending constraints (rigid), 60 fps, \
             {COMPARISON_SUBSTEPS} substeps × 1 iteration, {frames} frames:",
            r.stretch + r.shear,
            r.sets.bending.constraints
        )?;
        for &t in &thread_counts {
            let pool = pool(t)?;
            let (mut step_seconds, mut bake_seconds) = (Vec::new(), Vec::new());
            let mut measured = 0;
            for round in 0..=rounds {
                let mut stepped = model.clone();
                let mut stepper = Stepper::new(StepOptions::default());
                let start = Instant::now();
                pool.install(|| {
                    for _ in 0..frames * COMPARISON_SUBSTEPS {
                        stepper.step(&mut stepped);
                    }
                });
                let step = start.elapsed().as_secs_f64() / frames as f64;

                let mut baked = model.clone();
                let options = BakeOptions {
                    out_dir: scratch.join(format!("{n}-{t}")),
                    formats: vec![CacheFormat::Pc2],
                    threads: Some(t),
                    kernel: KernelPath::Simd,
                    limits: Limits::default(),
                    checkpoints: CheckpointPolicy::Never,
                    stats: weft_bake::stats::StatsLevel::default(),
                    resume: false,
                    crash_after_checkpoint: None,
                };
                let start = Instant::now();
                let report = weft_bake::bake_model(&mut baked, &options)?;
                let bake = start.elapsed().as_secs_f64() / frames as f64;
                measured = report.per_frame.iter().filter(|f| f.intersections.is_some()).count();
                if round > 0 {
                    step_seconds.push(step);
                    bake_seconds.push(bake);
                }
            }
            let ratio = median(step_seconds.iter().zip(&bake_seconds).map(|(s, b)| b / s).collect());
            writeln!(
                out,
                "    {t} thread{}: step only {:.2} ms/frame, whole bake {:.2} ms/frame ({measured} of \
                 {frames} frames measured fully); the bake costs {ratio:.2}× the steps",
                if t == 1 { "" } else { "s" },
                median(step_seconds) * 1e3,
                median(bake_seconds) * 1e3,
            )?;
        }
    }
    Ok(())
}
