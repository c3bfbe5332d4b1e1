//! What a bake did: counts, per-frame statistics, timings and the files written (data only; the
//! command line renders it as text).

use std::path::PathBuf;
use std::time::Duration;

use weft_kernels::{KernelPath, Residual, StepStats};

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
}
