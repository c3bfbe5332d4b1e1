//! Contacts with triangle-mesh colliders (see `weft_core::mesh_collider`), particle by particle,
//! as team phases.
//!
//! Each step, after the prediction, every free particle gets its candidate triangles of every
//! mesh (those of the BVH query of [`MeshCollider::candidates`], taken from the triangles the
//! particle keeps between steps while the mesh's reach proves them the same, see
//! `weft_core::mesh_collider`, "Reach") and its **side**: with `q` the point of
//! the candidates closest to `x_prev` on the mesh at the start of the step and `n` the
//! pseudo-normal there (see `weft_core::mesh_collider`), `side = −1` if `(x_prev − q)·n < 0`,
//! else `+1`. A particle without
//! candidates has no contact with that mesh this step.
//!
//! In every iteration, with `q` now the closest point of the candidates to `x` on the mesh at the
//! end of the step, `u = x − q` and `n` the pseudo-normal there:
//!
//! ```text
//! same side  (side·(u·n) ≥ 0):  d = |u|,   normal m =  u/|u|
//! crossed    (side·(u·n) < 0):  d = −|u|,  normal m = −u/|u|     back to the side it came from
//! (|u| ≤ MIN_DIRECTION:                     m = side·n)
//! C = d − thickness ≥ 0,  compliance 0:  x += −C·m where C < 0,  depth += −C
//! ```
//!
//! Friction (after the iterations) is the analytic colliders' Coulomb rule (see
//! [`crate::collider`]) with the body's motion taken at the contact point: `r = (x − x_prev) −
//! (q − q₀)`, where `q₀` is the point with `q`'s barycentric coordinates on the triangle at the
//! start of the step. Then contacts are projected once more without adding to `depth`.
//!
//! Closest points: the candidate with the smallest distance, the first on ties; a triangle whose
//! normal has no length (collapsed) is skipped. Each particle has its own number of candidates,
//! so particles would diverge as lanes; a particle's candidates are lanes instead ([`nearest`]:
//! eight triangles' closest points side by side, each lane the bits of the scalar
//! [`closest_point`], which stays the documented form and the property tests' twin). The
//! reference twin is `weft-reference`'s `mesh_collider`, which tests every triangle.

use std::sync::Arc;

use weft_core::mesh_collider::{MeshCollider, MeshPose, Normals, query_box};
use weft_geometry::Aabb;

use wide::f32x8;

use crate::lane::{Real, SIMD_WIDTH as LANES, V3, add3, dot3, scale3, sub3};
use crate::records::Record;
use crate::schedule::add_record;
use crate::shared::SharedSlice;
use crate::stepper::refill;
use crate::team::Team;

/// Particles per work item of a mesh phase: smaller than the other phases' chunks, because
/// contacts gather where the body is and a chunk's cost is its particles' candidates.
pub const MESH_CHUNK: usize = 128;

/// Work items (particle chunks) of a mesh phase over `len` particles.
pub(crate) fn chunks(len: usize) -> usize {
    len.div_ceil(MESH_CHUNK)
}

/// Below this length (m) a direction is undefined and the triangle's normal is used instead.
pub const MIN_DIRECTION: f32 = 1e-12;

/// The squared length (m⁴) under which a triangle's cross product counts as zero: collapsed.
const MIN_AREA2: f32 = 1e-30;

/// The point of triangle `[a, b, c]` closest to `p`, its barycentric coordinates, and the
/// feature it lies on: 0–2 a corner, 3–5 the edge from corner `k − 3` to the next, 6 the face
/// (Ericson, *Real-Time Collision Detection*, 5.1.5; see `weft_core::mesh_collider::Normals`).
///
/// ```
/// use weft_kernels::mesh_collider::closest_point;
/// let (q, bary, feature) = closest_point([0.25, 1.0, 0.25], [[0.0; 3], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]);
/// assert_eq!((q, bary, feature), ([0.25, 0.0, 0.25], [0.5, 0.25, 0.25], 6));
/// ```
pub fn closest_point(p: V3<f32>, [a, b, c]: [V3<f32>; 3]) -> (V3<f32>, [f32; 3], u8) {
    let (ab, ac, ap) = (sub3(b, a), sub3(c, a), sub3(p, a));
    let (d1, d2) = (dot3(ab, ap), dot3(ac, ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, [1.0, 0.0, 0.0], 0);
    }
    let bp = sub3(p, b);
    let (d3, d4) = (dot3(ab, bp), dot3(ac, bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (b, [0.0, 1.0, 0.0], 1);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        // `d1 − d3` is `|ab|²` in exact arithmetic; taken from the edge, it does not cancel to 0
        // when `p` is far away.
        let v = unit_interval(d1 / dot3(ab, ab));
        return (add3(a, scale3(ab, v)), [1.0 - v, v, 0.0], 3);
    }
    let cp = sub3(p, c);
    let (d5, d6) = (dot3(ab, cp), dot3(ac, cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (c, [0.0, 0.0, 1.0], 2);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = unit_interval(d2 / dot3(ac, ac)); // `d2 − d6 = |ac|²`
        return (add3(a, scale3(ac, w)), [1.0 - w, 0.0, w], 5);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let bc = sub3(c, b);
        let w = unit_interval((d4 - d3) / dot3(bc, bc)); // `(d4 − d3) + (d5 − d6) = |bc|²`
        return (add3(b, scale3(bc, w)), [0.0, 1.0 - w, w], 4);
    }
    // `va + vb + vc = |ab × ac|²`.
    let n = [ab[1] * ac[2] - ab[2] * ac[1], ab[2] * ac[0] - ab[0] * ac[2], ab[0] * ac[1] - ab[1] * ac[0]];
    let area2 = dot3(n, n);
    if area2.is_nan() || area2 < f32::MIN_POSITIVE {
        return (a, [1.0, 0.0, 0.0], 0);
    }
    let v = unit_interval(vb / area2);
    let w = at_most(at_least_zero(vc / area2), 1.0 - v);
    (add3(a, add3(scale3(ab, v), scale3(ac, w))), [1.0 - v - w, v, w], 6)
}

/// [`closest_point`] of `p` to [`LANES`] triangles at once, one per lane, without a branch:
/// every Voronoi region's point is made, and each lane takes the one [`closest_point`]'s tests
/// choose, in their order, with the same operations, so each lane's point, coordinates and
/// feature (as a float) are [`closest_point`]'s bits (a property test holds them to it).
fn closest_points(p: V3<f32x8>, [a, b, c]: [V3<f32x8>; 3]) -> (V3<f32x8>, [f32x8; 3], f32x8) {
    let (zero, one) = (f32x8::splat(0.0), f32x8::splat(1.0));
    let ge = |x: f32x8, y: f32x8| y.le(x);
    let and = <f32x8 as Real>::and;
    let (ab, ac, ap) = (sub3(b, a), sub3(c, a), sub3(p, a));
    let (d1, d2) = (dot3(ab, ap), dot3(ac, ap));
    let bp = sub3(p, b);
    let (d3, d4) = (dot3(ab, bp), dot3(ac, bp));
    let vc = d1 * d4 - d3 * d2;
    let cp = sub3(p, c);
    let (d5, d6) = (dot3(ab, cp), dot3(ac, cp));
    let vb = d5 * d2 - d1 * d6;
    let va = d3 * d6 - d5 * d4;
    let n = [ab[1] * ac[2] - ab[2] * ac[1], ab[2] * ac[0] - ab[0] * ac[2], ab[0] * ac[1] - ab[1] * ac[0]];
    let area2 = dot3(n, n);
    // The face, then each earlier test's region over it, the first test last.
    let v = unit_interval(vb / area2);
    let w = at_most(at_least_zero(vc / area2), one - v);
    let mut out = (add3(a, add3(scale3(ab, v), scale3(ac, w))), [one - v - w, v, w], f32x8::splat(6.0));
    let pick =
        |mask: f32x8, region: (V3<f32x8>, [f32x8; 3], f32), out: &mut (V3<f32x8>, [f32x8; 3], f32x8)| {
            out.0 = std::array::from_fn(|k| mask.select(region.0[k], out.0[k]));
            out.1 = std::array::from_fn(|k| mask.select(region.1[k], out.1[k]));
            out.2 = mask.select(f32x8::splat(region.2), out.2);
        };
    let corner_a = (a, [one, zero, zero], 0.0);
    let degenerate = !ge(area2, f32x8::splat(f32::MIN_POSITIVE)); // a NaN too
    pick(degenerate, corner_a, &mut out);
    let bc = sub3(c, b);
    let w = unit_interval((d4 - d3) / dot3(bc, bc));
    pick(
        and(and(va.le(zero), ge(d4 - d3, zero)), ge(d5 - d6, zero)),
        (add3(b, scale3(bc, w)), [zero, one - w, w], 4.0),
        &mut out,
    );
    let w = unit_interval(d2 / dot3(ac, ac));
    pick(
        and(and(vb.le(zero), ge(d2, zero)), d6.le(zero)),
        (add3(a, scale3(ac, w)), [one - w, zero, w], 5.0),
        &mut out,
    );
    pick(and(ge(d6, zero), d5.le(d6)), (c, [zero, zero, one], 2.0), &mut out);
    let v = unit_interval(d1 / dot3(ab, ab));
    pick(
        and(and(vc.le(zero), ge(d1, zero)), d3.le(zero)),
        (add3(a, scale3(ab, v)), [one - v, v, zero], 3.0),
        &mut out,
    );
    pick(and(ge(d3, zero), d4.le(d3)), (b, [zero, one, zero], 1.0), &mut out);
    pick(and(d1.le(zero), d2.le(zero)), corner_a, &mut out);
    out
}

/// `v` clamped to `[0, 1]`, NaN to 0: far from a triangle, rounding may put a closest point's
/// coordinates outside their range, or make them 0/0; the point stays on the triangle.
fn unit_interval<R: Real>(v: R) -> R {
    at_most(at_least_zero(v), R::splat(1.0))
}

/// `v` where it is above 0, else `+0` (a NaN too): by comparison, so that every lane and the
/// scalar form agree on `−0` (`f32::max` leaves the sign of a zero to the platform).
#[inline(always)]
fn at_least_zero<R: Real>(v: R) -> R {
    R::select(v.gt(R::splat(0.0)), v, R::splat(0.0))
}

/// `v` where it is at most `limit`, else `limit` (a NaN `v` too).
#[inline(always)]
fn at_most<R: Real>(v: R, limit: R) -> R {
    R::select(v.le(limit), v, limit)
}

/// The closest point of a mesh's candidate triangles to a particle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Nearest {
    /// The closest point, m.
    pub point: V3<f32>,
    /// Its barycentric coordinates in `triangle`.
    pub bary: [f32; 3],
    /// The triangle.
    pub triangle: u32,
    /// The pseudo-normal of the feature the point lies on.
    pub normal: V3<f32>,
}

fn corners(vertices: &[[f32; 3]], t: [u32; 3]) -> [V3<f32>; 3] {
    t.map(|v| vertices[v as usize])
}

/// The candidate (of `candidates`, triangles of `mesh` over `vertices` with pseudo-normals
/// `normals`) closest to `x`; `None` if every candidate is collapsed or there is none.
///
/// The candidates are taken [`LANES`] at a time, their closest points made side by side
/// (`closest_points`); then each group's lanes are read in candidate order, as one candidate
/// after another: a collapsed triangle is passed over, and a candidate replaces the best so far
/// only if it is strictly nearer, so that ties keep the first.
pub fn nearest(
    mesh: &MeshCollider,
    vertices: &[[f32; 3]],
    normals: &Normals,
    candidates: &[u32],
    x: V3<f32>,
) -> Option<Nearest> {
    let p = x.map(f32x8::splat);
    let mut best: Option<(f32, Nearest, u8)> = None;
    for group in candidates.chunks(LANES) {
        // Corner `i`'s coordinate `k` of lane `l`'s triangle in `lanes[i][k][l]`; the lanes past
        // the group's end repeat its last triangle and are not read.
        let mut lanes = [[[0.0f32; LANES]; 3]; 3];
        for l in 0..LANES {
            let t = group[l.min(group.len() - 1)];
            for (i, corner) in corners(vertices, mesh.triangles[t as usize]).iter().enumerate() {
                for k in 0..3 {
                    lanes[i][k][l] = corner[k];
                }
            }
        }
        let [a, b, c] = lanes.map(|corner| corner.map(f32x8::new));
        let (e1, e2) = (sub3(b, a), sub3(c, a));
        let cross =
            [e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]];
        let collapsed = dot3(cross, cross).le(f32x8::splat(MIN_AREA2)).to_bitmask();
        let (q, bary, feature) = closest_points(p, [a, b, c]);
        let u = sub3(p, q);
        let d2 = dot3(u, u).to_array();
        let (q, bary, feature) = (q.map(f32x8::to_array), bary.map(f32x8::to_array), feature.to_array());
        for (l, &t) in group.iter().enumerate() {
            let nearer = best.as_ref().is_none_or(|(b2, ..)| d2[l] < *b2);
            if collapsed & (1 << l) != 0 || !nearer {
                continue;
            }
            let point = [q[0][l], q[1][l], q[2][l]];
            let nearest =
                Nearest { point, bary: [bary[0][l], bary[1][l], bary[2][l]], triangle: t, normal: [0.0; 3] };
            best = Some((d2[l], nearest, feature[l] as u8));
        }
    }
    best.map(|(_, mut n, feature)| {
        n.normal = normals.of(mesh.triangle_edges(), &mesh.triangles, n.triangle as usize, feature);
        n
    })
}

/// The side (`±1`) of the particle at `prev` relative to the candidates on the mesh at the start
/// of the step, or 0 without a candidate (module docs).
pub fn side(mesh: &MeshCollider, pose: &MeshPose, candidates: &[u32], prev: V3<f32>) -> f32 {
    match nearest(mesh, &pose.start, &pose.start_normals, candidates, prev) {
        None => 0.0,
        Some(n) if dot3(sub3(prev, n.point), n.normal) < 0.0 => -1.0,
        Some(_) => 1.0,
    }
}

/// The signed distance (m) of `x` to the mesh at the end of the step, from the particle's side,
/// and the normal to push along (module docs), with the nearest point; `None` without a
/// candidate.
pub fn signed_distance(
    mesh: &MeshCollider,
    pose: &MeshPose,
    candidates: &[u32],
    side: f32,
    x: V3<f32>,
) -> Option<(f32, V3<f32>, Nearest)> {
    if side == 0.0 {
        return None;
    }
    let n = nearest(mesh, &pose.end, &pose.end_normals, candidates, x)?;
    let u = sub3(x, n.point);
    let len = dot3(u, u).sqrt();
    let same = side * dot3(u, n.normal) >= 0.0;
    let d = if same { len } else { -len };
    let m = if len > MIN_DIRECTION {
        scale3(u, if same { 1.0 / len } else { -1.0 / len })
    } else {
        scale3(n.normal, side)
    };
    Some((d, m, n))
}

/// One contact projection of the particle at `x` (free) against `mesh` (its thickness in m):
/// the new position, the push `−C` (m, 0 without contact) and the correction that moved it (m;
/// the new position is `x + correction`).
pub fn project(
    mesh: &MeshCollider,
    pose: &MeshPose,
    candidates: &[u32],
    side: f32,
    x: V3<f32>,
) -> (V3<f32>, f32, V3<f32>) {
    match signed_distance(mesh, pose, candidates, side, x) {
        Some((d, m, _)) if d - mesh.thickness < 0.0 => {
            let push = mesh.thickness - d;
            let delta = scale3(m, push);
            (add3(x, delta), push, delta)
        }
        _ => (x, 0.0, [0.0; 3]),
    }
}

/// Coulomb friction of the particle at `x` (at `prev` at the start of the step) against a mesh
/// that pushed it by `depth` (m) during the step (module docs): the new position and the
/// correction that moved it (m; the new position is `x + correction`); unchanged (correction 0)
/// where `depth ≤ 0`.
#[allow(clippy::too_many_arguments)]
pub fn friction(
    mesh: &MeshCollider,
    pose: &MeshPose,
    candidates: &[u32],
    side: f32,
    x: V3<f32>,
    prev: V3<f32>,
    depth: f32,
) -> (V3<f32>, V3<f32>) {
    if depth <= 0.0 {
        return (x, [0.0; 3]);
    }
    let Some((_, m, n)) = signed_distance(mesh, pose, candidates, side, x) else {
        return (x, [0.0; 3]);
    };
    let mut r = sub3(x, prev);
    if pose.moving {
        let [a, b, c] = corners(&pose.start, mesh.triangles[n.triangle as usize]);
        let q0 = add3(add3(scale3(a, n.bary[0]), scale3(b, n.bary[1])), scale3(c, n.bary[2]));
        r = sub3(r, sub3(n.point, q0));
    }
    let rt = sub3(r, scale3(m, dot3(r, m)));
    let lt = dot3(rt, rt).sqrt();
    let k = if lt > mesh.friction.static_coefficient * depth {
        (mesh.friction.kinetic_coefficient * depth / lt).min(1.0)
    } else {
        1.0
    };
    let slide = scale3(rt, k);
    (sub3(x, slide), slide.map(|c| -c))
}

/// Whether a particle at signed distance `d` (m) is deep in a mesh of thickness `thickness`:
/// below half of it, less the analytic colliders' `DEEP_TOLERANCE`.
pub fn is_deep(d: f32, thickness: f32) -> bool {
    d < thickness * 0.5 - crate::collider::DEEP_TOLERANCE
}

/// The candidates and sides of one chunk of particles, for every mesh.
#[derive(Debug, Default, Clone)]
pub(crate) struct ChunkContacts {
    /// Where each (particle, mesh)'s candidates start in `triangles` (particle-major, one more
    /// than there are pairs).
    start: Vec<u32>,
    /// Candidate triangles.
    triangles: Vec<u32>,
    /// Side per (particle, mesh): ±1, or 0 for no contact.
    side: Vec<f32>,
    /// The triangles each (particle, mesh) keeps between steps.
    kept: Kept,
}

/// The triangles each (particle, mesh) of a chunk keeps from one step to the next (see
/// `weft_core::mesh_collider`, "Reach"): those whose swept boxes met `reach`, the query box of
/// the step they were found in grown by the mesh's margin, under the anchor `epoch`, at `drift`.
#[derive(Debug, Default, Clone)]
struct Kept {
    reach: Vec<Aabb>,
    drift: Vec<f64>,
    /// `0`: nothing kept.
    epoch: Vec<u64>,
    /// `triangles[start[k]..start[k + 1]]`: pair `k`'s triangles, ascending.
    start: Vec<u32>,
    triangles: Vec<u32>,
    /// The lists being made for the next step.
    next_start: Vec<u32>,
    next_triangles: Vec<u32>,
}

impl Kept {
    /// Starts a step of `pairs` pairs (everything forgotten if the chunk had another count).
    fn begin(&mut self, pairs: usize) {
        if self.epoch.len() != pairs {
            self.reach.resize(pairs, Aabb::new([0.0; 3], [0.0; 3]));
            self.drift.resize(pairs, 0.0);
            refill(&mut self.epoch, pairs, 0);
            refill(&mut self.start, pairs + 1, 0);
            self.triangles.clear();
        }
        self.next_start.clear();
        self.next_start.push(0);
        self.next_triangles.clear();
    }

    /// Appends to `out` the triangles of `mesh` in `pose` whose swept boxes meet `query`,
    /// ascending: those of `mesh.candidates`, taken from the kept ones of `pair` while they
    /// cover the query, else found anew with the mesh's margin and kept.
    fn candidates(
        &mut self,
        pair: usize,
        query: &Aabb,
        (mesh, pose): (&MeshCollider, &MeshPose),
        out: &mut Vec<u32>,
    ) {
        let reach = mesh.reach();
        let from = self.next_triangles.len();
        if self.epoch[pair] == reach.epoch && covers(&self.reach[pair], query, self.drift[pair] + reach.drift)
        {
            let kept = self.start[pair] as usize..self.start[pair + 1] as usize;
            self.next_triangles.extend_from_slice(&self.triangles[kept]);
        } else {
            let grown = query.grown(reach.margin);
            mesh.candidates(pose, &grown, &mut self.next_triangles);
            (self.reach[pair], self.drift[pair], self.epoch[pair]) = (grown, reach.drift, reach.epoch);
        }
        self.next_start.push(self.next_triangles.len() as u32);
        let boxes = &pose.boxes;
        out.extend(self.next_triangles[from..].iter().filter(|&&t| boxes[t as usize].overlaps(query)));
    }

    /// Forgets what `pair` kept (a particle that looks for no contact this step).
    fn forget(&mut self, pair: usize) {
        self.epoch[pair] = 0;
        self.next_start.push(self.next_triangles.len() as u32);
    }

    /// Ends the step: the lists made become the kept ones.
    fn finish(&mut self) {
        std::mem::swap(&mut self.start, &mut self.next_start);
        std::mem::swap(&mut self.triangles, &mut self.next_triangles);
    }
}

/// Whether `query` grown by `drift` (m) lies in `reach`, with room for the rounding of the
/// sums (`false` where a number is not finite).
fn covers(reach: &Aabb, query: &Aabb, drift: f64) -> bool {
    (0..3).all(|k| {
        let (lo, hi) = (f64::from(query.min[k]), f64::from(query.max[k]));
        let (rlo, rhi) = (f64::from(reach.min[k]), f64::from(reach.max[k]));
        let d = drift + 1e-12 * (drift + lo.abs().max(hi.abs()).max(rlo.abs()).max(rhi.abs()));
        lo - d >= rlo && hi + d <= rhi
    })
}

impl ChunkContacts {
    fn pair(&self, k: usize) -> (&[u32], f32) {
        (&self.triangles[self.start[k] as usize..self.start[k + 1] as usize], self.side[k])
    }
}

/// The meshes of a step and the arrays a mesh contact phase works on.
#[derive(Clone, Copy)]
pub(crate) struct MeshArrays<'a> {
    /// The meshes (BVHs refit to `poses`).
    pub(crate) meshes: &'a [MeshCollider],
    /// Their vertices for this step.
    pub(crate) poses: &'a [Arc<MeshPose>],
    /// `[x, y, z, w]` records.
    pub(crate) records: SharedSlice<'a, Record>,
    /// `[dx, dy, dz, 0]` displacements of the step (m), moved with the records.
    pub(crate) displacement: SharedSlice<'a, Record>,
    /// `[x, y, z, 0]` at the start of the step; no mesh phase writes them.
    pub(crate) prev: SharedSlice<'a, Record>,
    /// Pushes of the step, one per particle and mesh (particle-major).
    pub(crate) depth: SharedSlice<'a, f32>,
    /// One entry per particle chunk.
    pub(crate) contacts: SharedSlice<'a, ChunkContacts>,
}

fn xyz(r: Record) -> V3<f32> {
    [r[0], r[1], r[2]]
}

impl MeshArrays<'_> {
    /// One team phase over the particle chunks: `f(positions, displacements, previous
    /// positions, depth, contacts)`.
    fn for_each_chunk(
        &self,
        team: &Team<'_>,
        mut f: impl FnMut(&mut [Record], &mut [Record], &[Record], &mut [f32], &mut ChunkContacts),
    ) {
        let (len, nm) = (self.records.len(), self.meshes.len());
        let parts = (
            self.records.chunks_mut(MESH_CHUNK),
            self.displacement.chunks_mut(MESH_CHUNK),
            self.prev,
            self.depth.chunks_mut(MESH_CHUNK * nm),
            self.contacts.each_mut(),
        );
        team.for_each_chunk(chunks(len), parts, |_, c, (x, moves, prev, d, k)| {
            f(x, moves, &prev[c * MESH_CHUNK..((c + 1) * MESH_CHUNK).min(len)], d, k);
        });
    }

    /// Finds every free particle's candidates and side for every mesh (module docs).
    pub(crate) fn search_phase(&self, team: &Team<'_>) {
        self.for_each_chunk(team, |x, _, prev, _, k| {
            k.start.clear();
            k.triangles.clear();
            k.side.clear();
            k.start.push(0);
            k.kept.begin(x.len() * self.meshes.len());
            for (r, p) in x.iter().zip(prev) {
                let p = xyz(*p);
                for (mesh, pose) in self.meshes.iter().zip(self.poses) {
                    let (from, pair) = (k.triangles.len(), k.side.len());
                    match query_box(p, xyz(*r), mesh.thickness).filter(|_| r[3] > 0.0) {
                        Some(query) => k.kept.candidates(pair, &query, (mesh, pose), &mut k.triangles),
                        None => k.kept.forget(pair),
                    }
                    k.side.push(side(mesh, pose, &k.triangles[from..], p));
                    k.start.push(k.triangles.len() as u32);
                }
            }
            k.kept.finish();
        });
    }

    /// One contact projection of every particle against every mesh, adding the pushes to the
    /// depths if `accumulate`.
    pub(crate) fn contact_phase(&self, team: &Team<'_>, accumulate: bool) {
        let nm = self.meshes.len();
        self.for_each_chunk(team, |x, moves, _, d, k| {
            for (i, (r, dx)) in x.iter_mut().zip(moves).enumerate() {
                let mut p = xyz(*r);
                for (j, (mesh, pose)) in self.meshes.iter().zip(self.poses).enumerate() {
                    let (candidates, side) = k.pair(i * nm + j);
                    let (moved, push, delta) = project(mesh, pose, candidates, side, p);
                    p = moved;
                    *dx = add_record(*dx, [delta[0], delta[1], delta[2], 0.0]);
                    if accumulate {
                        d[i * nm + j] += push;
                    }
                }
                *r = [p[0], p[1], p[2], r[3]];
            }
        });
    }

    /// Friction of every particle against every mesh, from the pushes of the step.
    pub(crate) fn friction_phase(&self, team: &Team<'_>) {
        let nm = self.meshes.len();
        self.for_each_chunk(team, |x, moves, prev, d, k| {
            for (i, (r, dx)) in x.iter_mut().zip(moves).enumerate() {
                let mut p = xyz(*r);
                for (j, (mesh, pose)) in self.meshes.iter().zip(self.poses).enumerate() {
                    let (candidates, side) = k.pair(i * nm + j);
                    let delta;
                    (p, delta) = friction(mesh, pose, candidates, side, p, xyz(prev[i]), d[i * nm + j]);
                    *dx = add_record(*dx, [delta[0], delta[1], delta[2], 0.0]);
                }
                *r = [p[0], p[1], p[2], r[3]];
            }
        });
    }

    /// The free particles of the chunks this thread takes that are deep in some mesh and for
    /// which `deep_elsewhere` is false (a sum over threads: the same for any thread count).
    pub(crate) fn deep_phase(
        &self,
        team: &Team<'_>,
        deep_elsewhere: &(dyn Fn(V3<f32>) -> bool + Sync),
    ) -> u64 {
        let nm = self.meshes.len();
        let mut count = 0;
        self.for_each_chunk(team, |x, _, _, _, k| {
            for (i, r) in x.iter().enumerate() {
                let p = xyz(*r);
                let deep = self.meshes.iter().zip(self.poses).enumerate().any(|(j, (mesh, pose))| {
                    let (candidates, side) = k.pair(i * nm + j);
                    signed_distance(mesh, pose, candidates, side, p)
                        .is_some_and(|(d, _, _)| is_deep(d, mesh.thickness))
                });
                if deep && r[3] > 0.0 && !deep_elsewhere(p) {
                    count += 1;
                }
            }
        });
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::mesh_collider::MeshColliderDesc;

    /// A 2 m square in the plane y = 0 (normal +y), two triangles, moved `dy` per second.
    fn floor(dy: f32, thickness: f32) -> MeshCollider {
        let frame = vec![[-1.0, 0.0, -1.0], [1.0, 0.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 0.0, 1.0]];
        let up = frame.iter().map(|v| [v[0], v[1] + dy, v[2]]).collect();
        MeshCollider::new(&MeshColliderDesc {
            triangles: vec![[0, 2, 1], [0, 3, 2]],
            frames: vec![frame, up],
            frame_interval: 1.0,
            thickness,
            ..MeshColliderDesc::default()
        })
        .unwrap()
    }

    #[test]
    fn a_particle_that_crossed_goes_back_to_its_side() {
        let mesh = floor(0.0, 0.01);
        let pose = mesh.sample(0.0, 0.1);
        let all = [0, 1];
        // Came from above, predicted 0.2 m below: pushed back above, to the thickness.
        let s = side(&mesh, &pose, &all, [0.1, 0.05, 0.1]);
        assert_eq!(s, 1.0);
        let (x, push, _) = project(&mesh, &pose, &all, s, [0.1, -0.2, 0.1]);
        assert!((x[1] - 0.01).abs() < 1e-6 && (push - 0.21).abs() < 1e-6, "{x:?} {push}");
        // Came from below: kept below.
        let s = side(&mesh, &pose, &all, [0.1, -0.05, 0.1]);
        assert_eq!(s, -1.0);
        let (x, ..) = project(&mesh, &pose, &all, s, [0.1, 0.2, 0.1]);
        assert!((x[1] + 0.01).abs() < 1e-6, "{x:?}");
        // Far enough: untouched.
        let (x, push, _) = project(&mesh, &pose, &all, 1.0, [0.1, 0.5, 0.1]);
        assert_eq!((x, push), ([0.1, 0.5, 0.1], 0.0));
    }

    #[test]
    fn closest_points_far_away_stay_on_the_triangle() {
        // 9e8 m away (found by the `arbitrary_scene` fuzz target, a mesh of thickness 1e9 m):
        // Ericson's `d1 / (d1 − d3)` cancelled to 0/0 there.
        let tri = [[3.5, -1.625, 0.51], [-1e-38, -0.56, -2.375], [-0.05, 2.0, 3.43]];
        for p in [[-886348300.0, 363437920.0, 286879040.0], [1e10, -1e10, 3e9], [0.3, 0.2, 1e9]] {
            let (q, bary, _) = closest_point(p, tri);
            assert!(q.iter().chain(&bary).all(|c| c.is_finite()), "{p:?}: {q:?} {bary:?}");
            assert!(bary.iter().all(|&b| (-1e-6..=1.0 + 1e-6).contains(&b)), "{bary:?}");
        }
    }

    #[test]
    fn a_rising_floor_carries_a_sticking_particle() {
        let mut mesh = floor(1.0, 1e-3);
        mesh.friction.static_coefficient = 1.0;
        let pose = mesh.sample(0.0, 0.1);
        // The particle slid 0.01 m along x while the floor rose 0.1 m: friction takes the slide
        // back (|r_t| = 0.01 ≤ μs·depth).
        let (x, _) = friction(&mesh, &pose, &[0, 1], 1.0, [0.11, 0.101, 0.0], [0.1, 0.001, 0.0], 0.1);
        assert!((x[0] - 0.1).abs() < 1e-6 && (x[1] - 0.101).abs() < 1e-6, "{x:?}");
    }

    #[test]
    fn kept_triangles_give_the_bvh_candidates() {
        // A 12 × 12 wavy sheet of triangles that ripples, slides and comes back over 1 s (steps
        // of 2 ms), and particles wandering over it at speeds from still to several thicknesses a
        // step: the candidates taken from the kept triangles are the tree's, step after step,
        // while more steps keep them than not.
        let n = 12;
        let frame = |phase: f32, slide: f32| -> Vec<[f32; 3]> {
            (0..n * n)
                .map(|i| {
                    let (x, z) = ((i % n) as f32 * 0.1, (i / n) as f32 * 0.1);
                    [x + slide, 0.05 * (7.0 * x + phase).sin() * (5.0 * z).cos(), z]
                })
                .collect()
        };
        let triangles = (0..(n - 1) * (n - 1))
            .flat_map(|c| {
                let (i, j) = ((c % (n - 1)) as u32, (c / (n - 1)) as u32);
                let v = |a: u32, b: u32| (j + b) * n as u32 + i + a;
                [[v(0, 0), v(1, 0), v(1, 1)], [v(0, 0), v(1, 1), v(0, 1)]]
            })
            .collect();
        let mut mesh = MeshCollider::new(&MeshColliderDesc {
            triangles,
            frames: vec![frame(0.0, 0.0), frame(2.0, 0.3), frame(0.5, 0.0)],
            frame_interval: 0.5,
            thickness: 0.01,
            ..MeshColliderDesc::default()
        })
        .unwrap();
        let mut seed = 7u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        let mut x: Vec<[f32; 3]> = (0..64).map(|_| [0.6 + rnd(), 0.1 * rnd(), 0.6 + rnd()]).collect();
        let mut kept = Kept::default();
        let (h, mut fresh, mut taken) = (0.002, 0, 0);
        for step in 0..600 {
            let pose = mesh.prepare(step as f64 * h, (step + 1) as f64 * h);
            let anchors = |kept: &Kept| (kept.epoch.clone(), kept.reach.clone());
            let before = anchors(&kept);
            kept.begin(x.len());
            for (i, p) in x.iter_mut().enumerate() {
                let speed = [0.0, 0.001, 0.01, 0.05][i % 4];
                let prev = *p;
                *p = std::array::from_fn(|k| p[k] + speed * rnd());
                let query = query_box(prev, *p, mesh.thickness).unwrap();
                let (mut ours, mut tree) = (vec![9], vec![9]);
                kept.candidates(i, &query, (&mesh, &pose), &mut ours);
                mesh.candidates(&pose, &query, &mut tree);
                assert_eq!(ours, tree, "step {step}, particle {i}");
            }
            kept.finish();
            let after = anchors(&kept);
            let found = (0..x.len())
                .filter(|&i| before.0.get(i) != Some(&after.0[i]) || before.1.get(i) != Some(&after.1[i]))
                .count();
            (fresh, taken) = (fresh + found, taken + x.len() - found);
        }
        assert!(taken > fresh, "kept {taken} times, found anew {fresh} times");
    }

    /// A coordinate: on a coarse lattice (corners that coincide, edges that line up, exact
    /// ties, signed zeros), anywhere in a few metres, tiny, or far away.
    fn coordinate() -> impl proptest::strategy::Strategy<Value = f32> {
        use proptest::prelude::*;
        prop_oneof![
            (-3i32..=3).prop_map(|v| v as f32 * 0.5),
            Just(-0.0f32),
            -2.0f32..2.0,
            -1e-30f32..1e-30,
            -1e9f32..1e9,
        ]
    }

    fn point() -> impl proptest::strategy::Strategy<Value = V3<f32>> {
        [coordinate(), coordinate(), coordinate()]
    }

    /// The scalar `nearest` as it was before the lanes: one candidate after another.
    fn nearest_one_by_one(
        mesh: &MeshCollider,
        vertices: &[[f32; 3]],
        normals: &Normals,
        candidates: &[u32],
        x: V3<f32>,
    ) -> Option<Nearest> {
        let mut best: Option<(f32, Nearest)> = None;
        for &t in candidates {
            let [a, b, c] = corners(vertices, mesh.triangles[t as usize]);
            let (e1, e2) = (sub3(b, a), sub3(c, a));
            let cross =
                [e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]];
            if dot3(cross, cross) <= MIN_AREA2 {
                continue;
            }
            let (q, bary, feature) = closest_point(x, [a, b, c]);
            let u = sub3(x, q);
            let d2 = dot3(u, u);
            if best.is_none_or(|(b2, _)| d2 < b2) {
                let normal = normals.of(mesh.triangle_edges(), &mesh.triangles, t as usize, feature);
                best = Some((d2, Nearest { point: q, bary, triangle: t, normal }));
            }
        }
        best.map(|(_, n)| n)
    }

    /// Bits, with every NaN as one.
    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() }).collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Each lane of `closest_points` is `closest_point` of its triangle, bit for bit.
        #[test]
        fn closest_points_in_lanes_are_the_scalar_ones(
            p in point(),
            triangles in proptest::collection::vec([point(), point(), point()], LANES),
        ) {
            let lanes = |i: usize| -> V3<f32x8> {
                std::array::from_fn(|k| f32x8::new(std::array::from_fn(|l| triangles[l][i][k])))
            };
            let (q, bary, feature) = closest_points(p.map(f32x8::splat), [lanes(0), lanes(1), lanes(2)]);
            let (q, bary, feature) = (q.map(f32x8::to_array), bary.map(f32x8::to_array), feature.to_array());
            for (l, t) in triangles.iter().enumerate() {
                let (sq, sbary, sfeature) = closest_point(p, *t);
                let lane = [q[0][l], q[1][l], q[2][l], bary[0][l], bary[1][l], bary[2][l]];
                let scalar = [sq[0], sq[1], sq[2], sbary[0], sbary[1], sbary[2]];
                proptest::prop_assert_eq!(bits(&lane), bits(&scalar), "lane {}: {:?}", l, t);
                proptest::prop_assert_eq!(feature[l], f32::from(sfeature));
            }
        }

        /// `nearest` over lanes picks what the candidates one by one pick, with the same bits:
        /// meshes of 1 to 20 triangles over a few vertices (collapsed ones among them), every
        /// triangle a candidate, some twice.
        #[test]
        fn nearest_in_lanes_is_nearest_one_by_one(
            x in point(),
            vertices in proptest::collection::vec(point(), 3..9),
            picks in proptest::collection::vec(([0usize..9, 0usize..9, 0usize..9], 0usize..20), 1..21),
        ) {
            let n = vertices.len();
            // Three distinct corners (coinciding positions still collapse a triangle).
            let distinct = |[i, j, k]: [usize; 3]| {
                let a = i % n;
                let b = (a + 1 + j % (n - 1)) % n;
                let c = (0..n).filter(|&v| v != a && v != b).nth(k % (n - 2)).unwrap();
                [a, b, c].map(|v| v as u32)
            };
            let triangles: Vec<[u32; 3]> = picks.iter().map(|&(t, _)| distinct(t)).collect();
            let Ok(mesh) = MeshCollider::new(&MeshColliderDesc {
                triangles: triangles.clone(),
                frames: vec![vertices.clone()],
                frame_interval: 1.0,
                ..MeshColliderDesc::default()
            }) else {
                return Ok(()); // coordinates too large for a mesh collider
            };
            let pose = mesh.sample(0.0, 0.0);
            let candidates: Vec<u32> = picks.iter().map(|&(_, c)| (c % triangles.len()) as u32).collect();
            let lanes = nearest(&mesh, &pose.end, &pose.end_normals, &candidates, x);
            let one = nearest_one_by_one(&mesh, &pose.end, &pose.end_normals, &candidates, x);
            let flat = |n: Option<Nearest>| n.map(|n| {
                (bits(&[n.point[0], n.point[1], n.point[2], n.bary[0], n.bary[1], n.bary[2]]), n.triangle, bits(&n.normal))
            });
            proptest::prop_assert_eq!(flat(lanes), flat(one));
        }
    }
}
