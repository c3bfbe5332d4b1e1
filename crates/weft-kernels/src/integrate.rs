//! The particle passes of a time step: prediction before the constraints, velocity rebuild and
//! damping after them.
//!
//! # The displacement of the step
//!
//! Besides `x` and `x_prev`, a step carries each particle's displacement `d` (m): the
//! prediction sets `d = h·v` (0 for a pinned particle) as it moves `x` by it, every kernel that
//! moves a particle adds the same correction to `d` as to `x`, and a kernel that sets a position
//! outright (a pin moved to its target, the swept check) sets `d = x − x_prev`. The velocity is
//! then `v = d/h`, not `(x − x_prev)/h`: where `x` is large and the step small, `h·v` and the
//! corrections are a few ulps of `x`, and rounding them into `x` and taking the difference back
//! loses most of their digits; `d` keeps them (it is rounded at its own, much smaller, scale).
//! See docs/physics.md (integration) for the error this removes.

use std::ops::Range;

use weft_core::settings::TimeStep;

use crate::records::Record;
use crate::shared::SharedSlice;
use crate::team::Team;

/// Particles per work item of the particle passes (fixed, so independent of the pool): a quarter
/// of a block, so that the collider passes of a 64² sheet, run once per iteration, are four items
/// rather than one.
pub const PARTICLE_CHUNK: usize = 1024;

/// The particle arrays of a step, shared by its team.
#[derive(Clone, Copy)]
pub(crate) struct ParticleArrays<'a> {
    /// `[x, y, z, w]` records.
    pub(crate) positions: SharedSlice<'a, Record>,
    /// `[x, y, z, 0]` at the start of the step.
    pub(crate) prev: SharedSlice<'a, Record>,
    /// `[dx, dy, dz, 0]`: the displacement of the step so far, in m (module docs).
    pub(crate) displacement: SharedSlice<'a, Record>,
    /// `[x, y, z, 0]` in m/s.
    pub(crate) velocities: SharedSlice<'a, Record>,
    /// Number of particles (the length of each array).
    pub(crate) len: usize,
}

/// The particles of work item `c` of a particle phase.
pub(crate) fn particle_chunk(c: usize, len: usize) -> Range<usize> {
    c * PARTICLE_CHUNK..((c + 1) * PARTICLE_CHUNK).min(len)
}

/// Work items (particle chunks) of a particle phase over `len` particles.
pub(crate) fn particle_chunks(len: usize) -> usize {
    len.div_ceil(PARTICLE_CHUNK)
}

/// Prediction: for every free particle (`w > 0`), `v += h·(g + w·F)`, `x_prev = x`, `d = h·v`,
/// `x += d`; a pinned particle only sets `x_prev = x` and `d = 0`. `g` in m/s², `F` (the external
/// force on each particle, or none) in N, positions and displacements `d` (`[dx, dy, dz, 0]`,
/// module docs) in m, velocities in m/s.
///
/// A prediction that would make a velocity or position overflow `f32` (a wind of 1e17 m/s, a
/// force summed over many triangles) is not made: that particle keeps its position and velocity
/// for this step (and `d = 0`), so finite input never becomes infinite (and later NaN). Returns
/// how many particles were held so.
pub fn predict(
    positions: &mut [Record],
    prev: &mut [Record],
    displacement: &mut [Record],
    velocities: &mut [Record],
    gravity: [f32; 3],
    forces: Option<&[Record]>,
    step: &TimeStep,
) -> u64 {
    let mut held = 0;
    let particles = positions.iter_mut().zip(prev).zip(displacement).zip(velocities);
    for (k, (((x, xp), d), v)) in particles.enumerate() {
        *xp = [x[0], x[1], x[2], 0.0];
        *d = [0.0; 4];
        if x[3] > 0.0 {
            let a = match forces {
                Some(f) => [0, 1, 2].map(|i| gravity[i] + x[3] * f[k][i]),
                None => gravity,
            };
            let nv: [f32; 3] = std::array::from_fn(|i| v[i] + step.h * a[i]);
            let nd: [f32; 3] = std::array::from_fn(|i| step.h * nv[i]);
            let nx: [f32; 3] = std::array::from_fn(|i| x[i] + nd[i]);
            if nv.iter().chain(&nx).all(|c| c.is_finite()) {
                v[..3].copy_from_slice(&nv);
                d[..3].copy_from_slice(&nd);
                x[..3].copy_from_slice(&nx);
            } else {
                held += 1;
            }
        }
    }
    held
}

/// Velocity rebuild and global damping: `v = (d/h)·exp(−rate·h)` for every particle, `d` the
/// displacement of the step (m, module docs), which equals `x − x_prev` but without the rounding
/// of `x`.
///
/// A velocity that `f32` cannot hold (a pin carried across half the range of `f32` in one short
/// step: `d/h` overflows, and infinity times a damping factor of 0 is NaN) is not taken: that
/// particle keeps the velocity it had, so finite input never becomes infinite or NaN. Returns
/// how many particles were held so.
pub fn update_velocities(displacement: &[Record], velocities: &mut [Record], step: &TimeStep) -> u64 {
    let (h, scale) = (step.h, step.velocity_scale);
    let mut held = 0;
    for (v, d) in velocities.iter_mut().zip(displacement) {
        let nv = [d[0] / h * scale, d[1] / h * scale, d[2] / h * scale, 0.0];
        if nv.iter().all(|c| c.is_finite()) {
            *v = nv;
        } else {
            held += 1;
        }
    }
    held
}

/// [`predict`] as a team phase; `forces` holds one record per particle (N), or is empty.
/// Returns the particles this thread held.
pub(crate) fn predict_phase(
    team: &Team<'_>,
    arrays: &ParticleArrays<'_>,
    gravity: [f32; 3],
    forces: SharedSlice<'_, Record>,
    step: &TimeStep,
) -> u64 {
    let mut held = 0;
    let (p, n) = (arrays, PARTICLE_CHUNK);
    let parts = (
        p.positions.chunks_mut(n),
        p.prev.chunks_mut(n),
        p.displacement.chunks_mut(n),
        p.velocities.chunks_mut(n),
        forces,
    );
    team.for_each_chunk(particle_chunks(p.len), parts, |_, c, (x, xp, d, v, f)| {
        let f = (!f.is_empty()).then(|| &f[particle_chunk(c, p.len)]);
        held += predict(x, xp, d, v, gravity, f, step);
    });
    held
}

/// [`update_velocities`] as a team phase; returns the particles this thread held.
pub(crate) fn velocity_phase(team: &Team<'_>, arrays: &ParticleArrays<'_>, step: &TimeStep) -> u64 {
    let mut held = 0;
    let parts = (arrays.displacement, arrays.velocities.chunks_mut(PARTICLE_CHUNK));
    team.for_each_chunk(particle_chunks(arrays.len), parts, |_, c, (d, v)| {
        held += update_velocities(&d[particle_chunk(c, arrays.len)], v, step);
    });
    held
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_particles_fall_pinned_stay() {
        let step = TimeStep::new(0.5, 0.0);
        let mut x = vec![[0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0]];
        let mut xp = vec![[0.0; 4]; 2];
        let mut d = vec![[9.0; 4]; 2];
        let mut v = vec![[0.0; 4]; 2];
        assert_eq!(predict(&mut x, &mut xp, &mut d, &mut v, [0.0, -2.0, 0.0], None, &step), 0);
        assert_eq!(x[0], [0.0, -0.5, 0.0, 1.0]);
        assert_eq!(x[1], [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(d, vec![[0.0, -0.5, 0.0, 0.0], [0.0; 4]]);
        assert_eq!(update_velocities(&d, &mut v, &step), 0);
        assert_eq!(v[0], [0.0, -1.0, 0.0, 0.0]);
        assert_eq!(v[1], [0.0; 4]);
    }

    #[test]
    fn a_velocity_f32_cannot_hold_is_not_taken() {
        // A pin carried from 0 to 1e34 m in a microsecond, with a damping factor of 0: the
        // velocity would be ∞·0 = NaN. It keeps the velocity it had, and is counted.
        let step = TimeStep::new(1e-6, 1e30);
        assert_eq!(step.velocity_scale, 0.0);
        let d = vec![[1e34, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]];
        let mut v = vec![[2.0, 0.0, 0.0, 0.0], [5.0, 0.0, 0.0, 0.0]];
        assert_eq!(update_velocities(&d, &mut v, &step), 1);
        assert_eq!(v[0], [2.0, 0.0, 0.0, 0.0]);
        assert_eq!(v[1], [0.0; 4], "the other is rebuilt (and damped to 0)");
    }
}
