//! The kernel of the global volume constraint (see `weft_core::volume` for the maths and units):
//! `V`, `∇V` and `Σ w|∇V|²` assembled in parallel with a fixed reduction order, then one
//! projection per iteration.
//!
//! Per constraint and iteration, two phases of the step's team:
//!
//! 1. **assemble** — work items are the chunks of [`CHUNK`] triangles, then the chunks of
//!    [`CHUNK`] particles. A triangle chunk sums `6·V` of its triangles (in `f64`, positions taken
//!    relative to the cloth's first particle so that a cloth far from the origin keeps its
//!    digits). A particle chunk computes `∇ᵢV` of each free particle from its incident triangles
//!    in triangle order (`f64`), stores it, and sums `wᵢ|∇ᵢV|²` and takes `max wᵢ|∇ᵢV|`. Each
//!    item writes only its own slots of the constraint's [`VolumeWork`](weft_core::volume::VolumeWork).
//! 2. **project** — after the barrier every thread adds the partial sums in chunk order (so all
//!    threads get the same bits) and computes `C = V − p·V₀`, `α̃ = α/h²` and
//!    `Δλ = (−C − α̃λ)/(Σw|∇V|² + α̃)`; then the particle chunks move their particles,
//!    `xᵢ += wᵢ·∇ᵢV·Δλ` (in `f64`, rounded once; the correction, rounded to `f32`, is added
//!    to the particle's displacement of the step), and chunk 0 stores `λ + Δλ`.
//!
//! The split depends only on the cloth's size, never on the thread count, and every sum is taken
//! in a fixed order: the result is bit-identical for any pool. The projection is degenerate (no
//! particle moves, `λ` is unchanged, and it is counted) when the denominator is not positive
//! and finite (a surface collapsed to a point, with `α = 0`), `Δλ` is not finite, or the largest
//! correction `max wᵢ|∇ᵢV|·|Δλ|` would exceed [`MAX_LENGTH`] (a surface collapsed so far that
//! one step could throw a particle off to infinity).

use weft_core::kinds::distance::MAX_LENGTH;
use weft_core::settings::TimeStep;
use weft_core::volume::{CHUNK, VolumeConstraint};

use crate::records::Record;
use crate::shared::SharedSlice;
use crate::stats::Residual;
use crate::team::Team;

/// One iteration over every volume constraint, as phases of a team that every thread calls;
/// returns this thread's degenerate projections. `first` says whether this is the first
/// iteration of the step (`λ` starts again from 0).
///
/// `records` and `displacement` (the displacements of the step, `[dx, dy, dz, 0]` in m, which
/// every correction is added to) hold the model's particles; the phases panic if a cloth's
/// particles lie outside them. The constraints change their `λ` and work space through the
/// atomics of [`VolumeWork`](weft_core::volume::VolumeWork), never through a `&mut`.
pub(crate) fn solve_phases(
    team: &Team<'_>,
    volumes: &[VolumeConstraint],
    records: SharedSlice<'_, Record>,
    displacement: SharedSlice<'_, Record>,
    step: &TimeStep,
    first: bool,
) -> u64 {
    volumes.iter().map(|v| project(team, v, records, displacement, step, first)).sum()
}

/// The two phases of one constraint (module docs); returns this thread's degenerate count.
fn project(
    team: &Team<'_>,
    v: &VolumeConstraint,
    records: SharedSlice<'_, Record>,
    displacement: SharedSlice<'_, Record>,
    step: &TimeStep,
    first: bool,
) -> u64 {
    let work = &v.work;
    let triangle_items = v.triangles.len().div_ceil(CHUNK);
    let particle_items = v.particles.len().div_ceil(CHUNK);
    // Read before the first phase: chunk 0 of the second phase overwrites it.
    let lambda = if first { 0.0 } else { work.lambda.get() };
    team.for_each_chunk(triangle_items + particle_items, (records,), |_, item, (x,)| {
        if item < triangle_items {
            work.volume_parts[item].set(six_volume(v, x, item));
        } else {
            let chunk = item - triangle_items;
            let (sum, reach) = gradients(v, x, chunk);
            work.mass_parts[chunk][0].set(sum);
            work.mass_parts[chunk][1].set(reach);
        }
    });
    let volume = work.volume_parts.iter().map(|s| s.get()).sum::<f64>() / 6.0;
    let mass = work.mass_parts.iter().map(|s| s[0].get()).sum::<f64>();
    let reach = work.mass_parts.iter().map(|s| s[1].get()).fold(0.0, f64::max);
    let c = volume - v.target();
    let alpha_tilde = (v.compliance * step.inv_h2) as f64;
    let den = mass + alpha_tilde;
    let dlambda = (-c - alpha_tilde * lambda) / den;
    let valid =
        den > 0.0 && den.is_finite() && dlambda.is_finite() && reach * dlambda.abs() <= MAX_LENGTH as f64;
    let mut degenerate = 0;
    let cloth = v.particles.clone();
    let parts = (records.slice(cloth.clone()).chunks_mut(CHUNK), displacement.slice(cloth).chunks_mut(CHUNK));
    team.for_each_chunk(particle_items, parts, |_, chunk, (x, d)| {
        if chunk == 0 {
            work.lambda.set(if valid { lambda + dlambda } else { lambda });
            degenerate += u64::from(!valid);
        }
        if !valid {
            return;
        }
        for (k, (r, d)) in x.iter_mut().zip(d).enumerate() {
            let w = r[3];
            if w > 0.0 {
                let g = &work.gradient[chunk * CHUNK + k];
                let s = w as f64 * dlambda;
                for i in 0..3 {
                    let dx = g[i].get() * s;
                    r[i] = (r[i] as f64 + dx) as f32;
                    d[i] += dx as f32;
                }
            }
        }
    });
    degenerate
}

/// `[x, y, z]` of a record in `f64`, relative to `o`.
#[inline(always)]
fn rel(r: &Record, o: &Record) -> [f64; 3] {
    [0, 1, 2].map(|k| r[k] as f64 - o[k] as f64)
}

#[inline(always)]
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

#[inline(always)]
fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `6·V` of triangle chunk `chunk`, relative to the cloth's first particle.
fn six_volume(v: &VolumeConstraint, x: &[Record], chunk: usize) -> f64 {
    let o = &x[v.particles.start];
    let triangles = &v.triangles[chunk * CHUNK..((chunk + 1) * CHUNK).min(v.triangles.len())];
    let mut sum = 0.0;
    for t in triangles {
        let [a, b, c] = t.map(|p| rel(&x[p as usize], o));
        sum += dot(a, cross(b, c));
    }
    sum
}

/// Stores `∇ᵢV` of every particle of particle chunk `chunk` (0 for pinned ones) and returns
/// `Σ wᵢ|∇ᵢV|²` and `max wᵢ|∇ᵢV|` over the chunk.
fn gradients(v: &VolumeConstraint, x: &[Record], chunk: usize) -> (f64, f64) {
    let (mut sum, mut reach) = (0.0f64, 0.0f64);
    let local = chunk * CHUNK..((chunk + 1) * CHUNK).min(v.particles.len());
    for i in local {
        let xi = &x[v.particles.start + i];
        let w = xi[3] as f64;
        let mut g = [0.0f64; 3];
        if w > 0.0 {
            let incident = &v.incident[v.incident_start[i] as usize..v.incident_start[i + 1] as usize];
            for &[j, k] in incident {
                let a = cross(rel(&x[j as usize], xi), rel(&x[k as usize], xi));
                g = [g[0] + a[0], g[1] + a[1], g[2] + a[2]];
            }
            g = g.map(|c| c / 6.0);
            let g2 = dot(g, g);
            sum += w * g2;
            reach = reach.max(w * g2.sqrt());
        }
        for (slot, value) in v.work.gradient[i].iter().zip(g) {
            slot.set(value);
        }
    }
    (sum, reach)
}

/// `|C| = |V − p·V₀|` (m³), and relative to `p·V₀`, over all volume constraints, now.
pub fn residual(volumes: &[VolumeConstraint], positions: &[Record]) -> Residual {
    let mut r = Residual::default();
    for v in volumes {
        let c = (v.volume_of(positions) - v.target()).abs();
        r.add(c as f32, (c / v.target()) as f32);
    }
    r
}
