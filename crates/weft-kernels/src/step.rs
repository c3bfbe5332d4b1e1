//! The XPBD time step, as DESIGN §2 states it:
//!
//! 1. predict: `v += h·g`, `x_prev = x`, `x += h·v` for free particles;
//! 2. `λ := 0` for every constraint;
//! 3. `iterations` times: distance constraints (stretch and shear), colour by colour;
//! 4. `v = (x − x_prev)/h`, then global velocity damping.

use weft_core::Model;

use crate::KernelPath;
use crate::distance;
use crate::integrate::{ParticleArrays, predict_phase, velocity_phase};
use crate::shared::SharedSlice;
use crate::stats::StepStats;
use crate::team;

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
/// The whole step is one team of the pool's threads (see [`crate::team`]): prediction, the
/// `λ` reset, every phase of every iteration and the velocity update, separated by barriers. The
/// result is the same, bit for bit, for any number of threads.
pub fn step(model: &mut Model, options: &StepOptions) -> StepStats {
    let dropped_at_build = model.report().dropped_pinned;
    let parts = model.parts_mut();
    let settings = parts.settings;
    let time_step = settings.time_step();
    let p = parts.particles;
    let len = p.positions.len();
    let (lanes, lambda) = parts.distance.lanes_and_lambda_mut();
    assert_eq!(len, lanes.particle_count(), "the constraint set belongs to the model's particles");
    let arrays = ParticleArrays {
        positions: SharedSlice::new(p.positions),
        prev: SharedSlice::new(p.prev_positions),
        velocities: SharedSlice::new(p.velocities),
        len,
    };
    let lambdas = SharedSlice::new(lambda);
    let lambda_len = lanes.batch_count();
    let degenerate: u64 = team::run(|team| {
        predict_phase(team, &arrays, settings.gravity, &time_step);
        team.for_each(lambda_len.div_ceil(LAMBDA_CHUNK), |c| {
            let range = c * LAMBDA_CHUNK..((c + 1) * LAMBDA_CHUNK).min(lambda_len);
            // SAFETY: each chunk index is claimed by one thread in this phase and chunks are
            // disjoint; no other code touches the multipliers meanwhile.
            unsafe { lambdas.range_mut(range) }.fill(weft_core::lanes::Lanes::splat(0.0));
        });
        // SAFETY: the previous positions are written only by the prediction phase, which every
        // thread has finished (barrier); nothing writes them again before the team ends.
        let prev = unsafe { arrays.prev.as_slice() };
        let mut degenerate = 0;
        for _ in 0..settings.iterations {
            degenerate += distance::solve_phases(
                team,
                &lanes,
                lambdas,
                arrays.positions,
                prev,
                &time_step,
                options.path,
            );
        }
        velocity_phase(team, &arrays, &time_step);
        degenerate
    })
    .iter()
    .sum();
    let distance_residual = options.residual.then(|| distance::residual(&lanes, p.positions));
    StepStats { degenerate, dropped_at_build, distance_residual }
}

/// Batches per work item of the `λ` reset.
const LAMBDA_CHUNK: usize = 1024;
