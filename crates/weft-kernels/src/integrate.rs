//! The particle passes of a time step: prediction before the constraints, velocity rebuild and
//! damping after them.

use rayon::prelude::*;
use weft_core::settings::TimeStep;

use crate::records::Record;

/// Particles per parallel task in the particle passes (fixed, so independent of the pool).
pub const PARTICLE_CHUNK: usize = 4096;

/// Prediction: for every free particle (`w > 0`), `v += h·g`, `x_prev = x`, `x += h·v`; a pinned
/// particle only sets `x_prev = x`. `g` in m/s², positions in m, velocities in m/s.
pub fn predict(
    positions: &mut [Record],
    prev: &mut [Record],
    velocities: &mut [Record],
    gravity: [f32; 3],
    step: &TimeStep,
) {
    let h = step.h;
    positions
        .par_chunks_mut(PARTICLE_CHUNK)
        .zip(prev.par_chunks_mut(PARTICLE_CHUNK))
        .zip(velocities.par_chunks_mut(PARTICLE_CHUNK))
        .for_each(|((x, xp), v)| {
            for ((x, xp), v) in x.iter_mut().zip(xp).zip(v) {
                *xp = [x[0], x[1], x[2], 0.0];
                if x[3] > 0.0 {
                    for i in 0..3 {
                        v[i] += h * gravity[i];
                        x[i] += h * v[i];
                    }
                }
            }
        });
}

/// Velocity rebuild and global damping: `v = ((x − x_prev)/h)·exp(−rate·h)` for every particle.
pub fn update_velocities(positions: &[Record], prev: &[Record], velocities: &mut [Record], step: &TimeStep) {
    let (h, scale) = (step.h, step.velocity_scale);
    velocities
        .par_chunks_mut(PARTICLE_CHUNK)
        .zip(positions.par_chunks(PARTICLE_CHUNK))
        .zip(prev.par_chunks(PARTICLE_CHUNK))
        .for_each(|((v, x), xp)| {
            for ((v, x), xp) in v.iter_mut().zip(x).zip(xp) {
                *v =
                    [(x[0] - xp[0]) / h * scale, (x[1] - xp[1]) / h * scale, (x[2] - xp[2]) / h * scale, 0.0];
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_particles_fall_pinned_stay() {
        let step = TimeStep::new(0.5, 0.0);
        let mut x = vec![[0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0]];
        let mut xp = vec![[0.0; 4]; 2];
        let mut v = vec![[0.0; 4]; 2];
        predict(&mut x, &mut xp, &mut v, [0.0, -2.0, 0.0], &step);
        assert_eq!(x[0], [0.0, -0.5, 0.0, 1.0]);
        assert_eq!(x[1], [1.0, 0.0, 0.0, 0.0]);
        update_velocities(&x, &xp, &mut v, &step);
        assert_eq!(v[0], [0.0, -1.0, 0.0, 0.0]);
        assert_eq!(v[1], [0.0; 4]);
    }
}
