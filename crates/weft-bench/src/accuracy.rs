//! The time-to-accuracy rows of `weft bench`: what it costs to keep a hanging cloth's largest
//! stretch within 2 % from t = 1 s on, baked three ways: the fixed 8 substeps × 4 iterations that
//! solvers commonly ship with, plain "more substeps" (a fixed count, doubled until the cloth stays
//! within 2 %), and a bake to a strain tolerance (the default mode of a scene that names neither
//! `substeps` nor `iterations`, which tethers a pinned cloth), also with its tethers turned off.
//!
//! The cloths are the flag of `weft demo` (48 × 32 particles on 1.6 m × 1.0 m) and a 128 × 128
//! cloth of the same material on 1 m × 1 m, each held by its two top corners, starting level and
//! swinging down for 2 s at 30 fps. The figures of a bake are its milliseconds per frame (the
//! whole bake: steps, tries stepped again, statistics and a PC2 cache), the largest stretch of a
//! stretch edge over the frames from t = 1 s on and after the last frame, and the substeps its
//! frames kept.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use weft_bake::{BakeOptions, BakeReport, CheckpointPolicy};
use weft_core::limits::Limits;
use weft_io::CacheFormat;
use weft_kernels::KernelPath;

/// The accuracy the rows ask for: largest stretch of a stretch edge, from t = 1 s on.
pub const TARGET_STRAIN: f32 = 0.02;
/// When the accuracy starts to count, s.
const SETTLE: f64 = 1.0;
/// The most substeps "more substeps" tries before it gives up.
const MOST_SUBSTEPS: u32 = 256;

/// A hanging cloth scene: `resolution` particles on `size` m in the xz plane at 2 m, two top
/// corners pinned, density 0.2 kg/m², stretch compliance 1e-4 m/N, shear 1e-3 m/N, 30 fps for
/// `frames` frames, velocity damping 0.5 1/s; `simulation` is spliced into `[simulation]` and
/// `cloth` into `[[cloth]]`.
pub(crate) fn scene_text(
    resolution: [u32; 2],
    size: [f32; 2],
    frames: u32,
    simulation: &str,
    cloth: &str,
) -> String {
    format!(
        "[simulation]\nfps = 30.0\nframes = {frames}\nvelocity_damping = 0.5\n{simulation}\n\
         [[cloth]]\nname = \"cloth\"\n\
         grid = {{ resolution = [{}, {}], size = [{:?}, {:?}], origin = [{:?}, 2.0, {:?}], plane = \"xz\" }}\n\
         density = 0.2\nstretch_compliance = 1e-4\nshear_compliance = 1e-3\n\
         pin_corners = [\"top-left\", \"top-right\"]\n{cloth}\n",
        resolution[0],
        resolution[1],
        size[0],
        size[1],
        -size[0] / 2.0,
        -size[1] / 2.0,
    )
}

/// A hanging cloth of the rows: particles along U and V, and its size in m.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HangingCloth {
    pub(crate) resolution: [u32; 2],
    pub(crate) size: [f32; 2],
}

/// The flag of `weft demo`.
pub(crate) const DEMO_FLAG: HangingCloth = HangingCloth { resolution: [48, 32], size: [1.6, 1.0] };
/// A fine cloth of the same material.
pub(crate) const FINE_CLOTH: HangingCloth = HangingCloth { resolution: [128, 128], size: [1.0, 1.0] };
/// The cloth of `weft bench --quick`.
pub(crate) const QUICK_CLOTH: HangingCloth = HangingCloth { resolution: [12, 8], size: [1.6, 1.0] };

/// What one bake gave.
struct Outcome {
    ms_per_frame: f64,
    /// Largest stretch over the frames from [`SETTLE`] on.
    settled: f32,
    last: f32,
    substeps: (u32, u32),
}

impl Outcome {
    fn within(&self) -> bool {
        self.settled <= TARGET_STRAIN
    }
}

fn bake(text: &str, out_dir: &Path) -> anyhow::Result<Outcome> {
    let limits = Limits::default();
    let scene = weft_io::scene::parse_scene(text, Path::new("accuracy.toml"), &limits)?;
    let options = BakeOptions {
        out_dir: out_dir.to_path_buf(),
        formats: vec![CacheFormat::Pc2],
        threads: Some(1),
        kernel: KernelPath::Simd,
        limits,
        checkpoints: CheckpointPolicy::Never,
        stats: weft_bake::stats::StatsLevel::default(),
        resume: false,
        crash_after_checkpoint: None,
    };
    let report: BakeReport = weft_bake::bake(&scene, &options)?;
    let settled = report
        .per_frame
        .iter()
        .filter(|f| f.time >= SETTLE - 1e-9)
        .map(|f| f.max_stretch)
        .fold(0.0f32, f32::max);
    Ok(Outcome {
        ms_per_frame: report.ms_per_frame(),
        settled,
        last: report.per_frame.last().map_or(0.0, |f| f.max_stretch),
        substeps: report.substep_range().unwrap_or((0, 0)),
    })
}

/// Writes the rows: for each cloth, the three ways side by side, on one thread. `frames` frames
/// of 1/30 s each (at least 31, so that some count after t = 1 s).
pub(crate) fn time_to_accuracy_rows(
    cloths: &[HangingCloth],
    frames: u32,
    out: &mut String,
) -> anyhow::Result<()> {
    let scratch: PathBuf = std::env::temp_dir().join(format!("weft-bench-accuracy-{}", std::process::id()));
    let result = rows(cloths, frames.max(31), &scratch, out);
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn rows(cloths: &[HangingCloth], frames: u32, scratch: &Path, out: &mut String) -> anyhow::Result<()> {
    let line = |out: &mut String, name: &str, o: &Outcome, base: f64| -> anyhow::Result<()> {
        let (lo, hi) = o.substeps;
        let steps = if lo == hi { format!("{lo}") } else { format!("{lo}–{hi}") };
        writeln!(
            out,
            "    {name:<34} {:>8.2} ms/frame ({:>4.1}×)   from 1 s {:>6.2} %   last {:>6.2} %   substeps {steps:<7} {}",
            o.ms_per_frame,
            o.ms_per_frame / base,
            100.0 * o.settled,
            100.0 * o.last,
            if o.within() { "within 2 %" } else { "over 2 %" },
        )?;
        Ok(())
    };
    for (k, &HangingCloth { resolution, size }) in cloths.iter().enumerate() {
        writeln!(
            out,
            "  {}×{} cloth on {} m × {} m, two corners pinned, stretch 1e-4 m/N, 30 fps, {frames} frames, 1 thread:",
            resolution[0], resolution[1], size[0], size[1]
        )?;
        let dir = |name: &str| scratch.join(format!("{k}-{name}"));
        let fixed =
            bake(&scene_text(resolution, size, frames, "substeps = 8\niterations = 4", ""), &dir("fixed"))?;
        let base = fixed.ms_per_frame;
        line(out, "fixed 8 substeps × 4 iterations", &fixed, base)?;
        // Plain more substeps: one iteration, the count doubled until the cloth stays within.
        let mut n = 16;
        loop {
            let more = bake(
                &scene_text(resolution, size, frames, &format!("substeps = {n}\niterations = 1"), ""),
                &dir("more"),
            )?;
            if more.within() || n >= MOST_SUBSTEPS {
                line(out, &format!("more substeps: {n} × 1 iteration"), &more, base)?;
                break;
            }
            n *= 2;
        }
        let untethered =
            bake(&scene_text(resolution, size, frames, "", "tethers = false"), &dir("untethered"))?;
        line(out, "to a tolerance, tethers = false", &untethered, base)?;
        let tolerance = bake(&scene_text(resolution, size, frames, "", ""), &dir("tolerance"))?;
        line(out, "to a tolerance (the default mode)", &tolerance, base)?;
    }
    Ok(())
}
