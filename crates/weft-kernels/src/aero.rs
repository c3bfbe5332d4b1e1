//! Aerodynamic forces (see `weft_core::aero` for the model and its units): per-triangle drag and
//! lift from the cloth's velocity relative to the wind, accumulated per particle in a fixed order,
//! as one phase of the step's team before the prediction.
//!
//! Two phases: each triangle's force, once, into a buffer of one force per triangle (chunks of
//! [`AERO_TRIANGLE_CHUNK`] triangles); then each free particle, in chunks of [`AERO_CHUNK`],
//! sums a third of the force of each of its triangles, in triangle order. (Each corner computing
//! its triangles' forces itself, three times over, kept it one phase without a buffer but cost
//! the garment example a tenth of its step.) It runs once per step, not per iteration. Pinned
//! particles get no force (the prediction ignores it). The split depends only on the model, so
//! the forces are bit-identical for any thread count.

use std::ops::Deref;

use weft_core::aero::{AeroModel, wind_at};

use crate::records::Record;
use crate::shared::{Part, SharedSlice};
use crate::team::{self, Team};

/// Particles per work item of the force phase: smaller than the particle passes' chunks, since
/// each particle computes the forces of its six or so triangles (a garment of 1,388 particles is
/// six items, not two of 1,024 and 364).
pub const AERO_CHUNK: usize = 256;

/// Triangles per work item of the triangles' phase.
pub const AERO_TRIANGLE_CHUNK: usize = 512;

/// Drag plus lift on triangle `t` (N), from positions `x` and velocities `v` at the start of the
/// step and the wind `wind` (m/s); zero for a triangle with no area, no velocity through the
/// air, or a force that would not be finite.
///
/// ```
/// use weft_core::aero::AeroModel;
/// use weft_core::settings::{SimSettings, WindKey};
/// use weft_kernels::aero::triangle_force;
/// // A right triangle of 0.5 m² in the xy plane at rest, in a 10 m/s wind along +z:
/// // drag ½·ρ·C_d·A·|v|² = ½·1.2·1·0.5·100 = 30 N along the wind.
/// let settings = SimSettings { air_density: 1.2, ..SimSettings::default() };
/// let aero = AeroModel::new(&[([0, 1, 2], [1.0, 0.0])], &settings, 3);
/// let x = [[0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0]];
/// let f = triangle_force(&aero, &x, &[[0.0; 4]; 3], [0.0, 0.0, 10.0], 0);
/// assert!((f[2] - 30.0).abs() < 1e-4 && f[0] == 0.0 && f[1] == 0.0, "{f:?}");
/// ```
#[inline]
pub fn triangle_force(aero: &AeroModel, x: &[Record], v: &[Record], wind: [f32; 3], t: usize) -> [f32; 3] {
    let [ia, ib, ic] = aero.triangles[t].map(|p| p as usize);
    let [drag, lift] = aero.coefficients[t];
    let (a, b, c) = (x[ia], x[ib], x[ic]);
    let rel: [f32; 3] = std::array::from_fn(|k| (v[ia][k] + v[ib][k] + v[ic][k]) / 3.0 - wind[k]);
    let (u, w) = ([b[0] - a[0], b[1] - a[1], b[2] - a[2]], [c[0] - a[0], c[1] - a[1], c[2] - a[2]]);
    let cross = [u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]];
    let dot = |p: [f32; 3], q: [f32; 3]| p[0] * q[0] + p[1] * q[1] + p[2] * q[2];
    let (cross2, speed2) = (dot(cross, cross), dot(rel, rel));
    if !(cross2 > 0.0 && cross2.is_finite() && speed2 > 0.0 && speed2.is_finite()) {
        return [0.0; 3];
    }
    let twice_area = cross2.sqrt();
    let n = cross.map(|k| k / twice_area);
    let vn = dot(rel, n);
    // q·(v·n̂) with q = ½ρA|v| and A = |cross|/2.
    let q = 0.5 * aero.air_density * (0.5 * twice_area) * speed2.sqrt();
    let k = -(q * vn);
    let (normal, along) = (drag + lift, lift * (vn / speed2));
    let f: [f32; 3] = std::array::from_fn(|i| k * (normal * n[i] - along * rel[i]));
    if f.iter().all(|c| c.is_finite()) { f } else { [0.0; 3] }
}

/// Writes the aerodynamic force on every particle (N, `[x, y, z, 0]`) into `forces`, at time
/// `time` (s), from the positions and velocities at the start of the step (a `SharedSlice` or a
/// plain slice each, read whole by every work item), as two phases of `team`: every triangle's
/// force into `triangle_forces` (N), then every particle's sum (module docs).
///
/// # Panics
/// If `forces` does not hold one record per particle, or `triangle_forces` one force per
/// triangle of `aero`.
pub(crate) fn force_phases<X>(
    team: &Team<'_>,
    aero: &AeroModel,
    (positions, velocities): (X, X),
    triangle_forces: SharedSlice<'_, [f32; 3]>,
    forces: SharedSlice<'_, Record>,
    time: f64,
) where
    X: Part + Copy,
    for<'p> X::Out<'p>: Deref<Target = [Record]>,
{
    let wind = wind_at(&aero.wind, time);
    let (len, triangles) = (forces.len(), triangle_forces.len());
    assert_eq!(triangles, aero.triangles.len(), "one force per aerodynamic triangle");
    let parts = (triangle_forces.chunks_mut(AERO_TRIANGLE_CHUNK), positions, velocities);
    team.for_each_chunk(triangles.div_ceil(AERO_TRIANGLE_CHUNK), parts, |_, c, (out, x, v)| {
        let (x, v) = (&*x, &*v);
        assert!(x.len() == len && v.len() == len, "one position and velocity per force");
        for (f, t) in out.iter_mut().zip(c * AERO_TRIANGLE_CHUNK..) {
            *f = triangle_force(aero, x, v, wind, t);
        }
    });
    let parts = (forces.chunks_mut(AERO_CHUNK), triangle_forces, positions);
    team.for_each_chunk(len.div_ceil(AERO_CHUNK), parts, |_, c, (out, per_triangle, x)| {
        for (f, i) in out.iter_mut().zip(c * AERO_CHUNK..) {
            let mut sum = [0.0f32; 3];
            if x[i][3] > 0.0 {
                for &t in aero.incident(i) {
                    let ft = per_triangle[t as usize];
                    sum = std::array::from_fn(|k| sum[k] + ft[k] / 3.0);
                }
            }
            *f = [sum[0], sum[1], sum[2], 0.0];
        }
    });
}

/// The aerodynamic force on every particle (N, `[x, y, z, 0]`; zero for pinned particles) at time
/// `time` (s), computed by one team of the current rayon pool as a step computes it.
///
/// # Panics
/// If `positions` and `velocities` differ in length, or `aero` was built for another particle
/// count.
pub fn forces(aero: &AeroModel, positions: &[Record], velocities: &[Record], time: f64) -> Vec<Record> {
    assert_eq!(positions.len(), velocities.len(), "one velocity per particle");
    let mut out = vec![[0.0; 4]; positions.len()];
    if aero.is_empty() {
        return out;
    }
    assert_eq!(aero.incidence_start.len(), positions.len() + 1, "the aerodynamics belong to another model");
    let mut per_triangle = vec![[0.0; 3]; aero.triangles.len()];
    let (shared, triangles) = (SharedSlice::new(&mut out), SharedSlice::new(&mut per_triangle));
    let state = (positions, velocities);
    team::run(|team| force_phases(team, aero, state, triangles, shared, time), |(), ()| ());
    out
}
