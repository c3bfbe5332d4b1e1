//! What a bake did: counts, per-frame statistics, timings and the files written (data only; the
//! command line renders it as text).

use std::path::PathBuf;
use std::time::Duration;

use weft_core::kinds::KindId;
use weft_kernels::{KernelPath, Residual, StepStats};

/// What one frame did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FrameStats {
    /// The frame, from 1.
    pub frame: u32,
    /// Its time in s: `frame / fps`.
    pub time: f64,
    /// Time steps the frame kept: the scene's `substeps`, or, baking to a strain tolerance, the
    /// count chosen for it (tries stepped again at a higher count not included).
    pub substeps: u32,
    /// Per kind: projections skipped as degenerate, summed over the frame's time steps, and
    /// `|C|` after its last time step (`None` when the frame was not measured fully).
    pub step: StepStats,
    /// Intersecting pairs of non-adjacent triangles after the frame, over every cloth
    /// ([`weft_geometry::intersections::intersecting_pairs`]); `None` when the frame was not measured fully
    /// ([`StatsLevel`](crate::stats::StatsLevel)).
    pub intersections: Option<u64>,
    /// The largest stretch of a stretch edge after the frame: `|x_a − x_b|/L − 1`, dimensionless.
    pub max_stretch: f32,
}

/// What a bake did: counts, per-frame statistics, timings and the files written.
#[derive(Debug, Clone, PartialEq)]
pub struct BakeReport {
    /// Frames baked.
    pub frames: u32,
    /// Time steps per frame; baking to a strain tolerance, the count the first frame started
    /// with (each frame's count is in [`FrameStats::substeps`]).
    pub substeps: u32,
    /// The strain tolerance the substep counts were chosen to, if any.
    pub tolerance: Option<weft_core::StrainTolerance>,
    /// Solver iterations per time step.
    pub iterations: u32,
    /// Time steps this run took, tries stepped again included: `frames × substeps` for a fixed
    /// count (of the frames this run stepped, see [`BakeReport::frames_run`]).
    pub steps: u64,
    /// Of [`BakeReport::steps`], those of tries thrown away because the frame ended over the
    /// strain tolerance (0 with a fixed count).
    pub redone_steps: u64,
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
    /// Intersecting pairs of non-adjacent triangles in the scene's initial state (frame 0), or
    /// `None` for a bake resumed from a checkpoint. Self-collision does not undo crossings it
    /// starts with (surface self-collision keeps them from growing).
    pub start_intersections: Option<u64>,
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

    /// Constraint projections (constraints × iterations × time steps, tries stepped again
    /// included) per second of frame time.
    pub fn projections_per_second(&self) -> f64 {
        let projections = self.constraints as f64 * self.iterations as f64 * self.steps as f64;
        projections / self.frame_time.as_secs_f64().max(1e-9)
    }

    /// The fewest and the most time steps a frame of this run kept (`None` without frames).
    pub fn substep_range(&self) -> Option<(u32, u32)> {
        let counts = self.per_frame.iter().map(|f| f.substeps);
        Some((counts.clone().min()?, counts.max()?))
    }

    /// Baking to a strain tolerance: the frames of this run that ended over it (at
    /// `max_substeps`, so kept as they were), with the worst of them. `None` without a tolerance
    /// or when every frame ended within it.
    pub fn over_tolerance(&self) -> Option<OverTolerance> {
        let t = self.tolerance?;
        let over = self.per_frame.iter().filter(|f| f.max_stretch > t.max_strain);
        let worst = over
            .clone()
            .max_by(|a, b| a.max_stretch.total_cmp(&b.max_stretch).then(b.frame.cmp(&a.frame)))?;
        Some(OverTolerance {
            frames: over.count() as u32,
            worst_strain: worst.max_stretch,
            worst_frame: worst.frame,
        })
    }

    /// `|C|` of the distance constraints after the last frame.
    pub fn final_residual(&self) -> Residual {
        self.per_frame.last().and_then(|f| f.step.kinds[KindId::Distance].residual).unwrap_or_default()
    }
}

/// The frames of a bake that ended over its strain tolerance ([`BakeReport::over_tolerance`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OverTolerance {
    /// How many frames.
    pub frames: u32,
    /// The largest stretch after one of them, dimensionless (`|x_a − x_b|/L − 1`).
    pub worst_strain: f32,
    /// The first frame with that stretch.
    pub worst_frame: u32,
}
