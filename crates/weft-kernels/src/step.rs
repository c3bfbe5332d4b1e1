//! The XPBD time step, as DESIGN §2 states it:
//!
//! 1. predict: `v += h·g`, `x_prev = x`, `x += h·v` for free particles;
//! 2. `λ := 0` for every constraint;
//! 3. `iterations` times: distance constraints (stretch and shear), colour by colour;
//! 4. `v = (x − x_prev)/h`, then global velocity damping.

use weft_core::Model;

use crate::KernelPath;
use crate::distance;
use crate::integrate::{predict, update_velocities};
use crate::stats::StepStats;

/// How to run a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StepOptions {
    /// SIMD lanes or the scalar instantiation of the same kernels.
    pub path: KernelPath,
    /// Evaluate `|C|` of every constraint after the last iteration (one read-only pass).
    pub residual: bool,
}

/// Advances `model` by one XPBD time step `h = 1/(fps·substeps)`, on the current rayon pool.
///
/// The result is the same, bit for bit, for any number of threads.
pub fn step(model: &mut Model, options: &StepOptions) -> StepStats {
    let dropped_at_build = model.report().dropped_pinned;
    let parts = model.parts_mut();
    let settings = parts.settings;
    let time_step = settings.time_step();
    let p = parts.particles;
    predict(p.positions, p.prev_positions, p.velocities, settings.gravity, &time_step);
    parts.distance.reset_lambda();
    let (lanes, lambda) = parts.distance.lanes_and_lambda_mut();
    let mut degenerate = 0;
    for _ in 0..settings.iterations {
        degenerate +=
            distance::solve(&lanes, lambda, p.positions, p.prev_positions, &time_step, options.path);
    }
    update_velocities(p.positions, p.prev_positions, p.velocities, &time_step);
    let distance_residual = options.residual.then(|| distance::residual(&lanes, p.positions));
    StepStats { degenerate, dropped_at_build, distance_residual }
}
