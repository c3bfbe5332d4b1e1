//! Contacts with colliders (see `weft_core::collider`): one body for any [`Real`], a SIMD and a
//! scalar instantiation, run per particle as team phases.
//!
//! For a particle at `x` (inverse mass `w`) and a collider placed for the step (pose at the end of
//! the step, see [`Placed`]), with signed distance `d` to its surface (m, negative inside) and
//! outward unit normal `n` at `x`:
//!
//! ```text
//! C  = d − thickness ≥ 0                       unilateral, compliance 0
//! Δλ = −C / w,   x += w·n·Δλ = −C·n            where C < 0 and w > 0, else nothing
//! depth += −C                                   the normal correction over the step (m)
//! ```
//!
//! Contacts are projected in every iteration, after the constraint kinds, particle by particle
//! and collider by collider in scene order. A particle touches no other particle here, so no
//! colouring is needed and the result is the same for any thread count.
//!
//! **Friction** (after the iterations). For each collider that corrected the particle during the
//! step (`depth > 0`), the particle's displacement relative to the body over the step is
//! `r = b − x_prev`, where `b = M·(x − c₁) + c₀` is where the body point now at `x` was at the
//! start of the step (`r = x − x_prev` for a static collider). Its tangential part
//! `r_t = r − (r·n)·n` is Coulomb's: if `|r_t| ≤ μs·depth` the contact sticks and `x −= r_t`;
//! otherwise it slides and `x −= r_t·min(μk·depth/|r_t|, 1)`. With gravity alone on a floor,
//! `depth = g·h²` per step, so kinetic friction removes `μk·g·h` of tangential velocity per step:
//! a deceleration of `μk·g`. A body that moves carries a sticking particle with it.
//!
//! After friction the contacts are projected once more (friction moves a particle along the
//! tangent, which on a curved surface goes slightly inside), without adding to `depth`.
//!
//! **Swept check** (once per step, after the prediction and before the iterations; see
//! [`sweep`]). A particle fast enough to cross a thin body or pass its middle within one step
//! would be missed or pushed out of the far side by the projection above. For each free particle
//! and each collider, in scene order, with `d` the signed distance at the end pose:
//!
//! ```text
//! p = Mᵀ·(x_prev − c₀) + c₁   (p = x_prev for a static collider): the start, relative to the body
//! s(t) = p + t·(x − p),  t ∈ [0, 1]
//! moved when  d(p) > 0                                       it started outside
//!        and  min_t d(s(t)) < 0                              the segment reaches inside
//!        and  (d(x) ≥ 0  or  (x − p)·n(x) > 0)               passed through, or past the middle
//! then        x = s(t_e),  t_e the first t with d(s(t)) = 0  the entry point
//! ```
//!
//! "Past the middle" is the rule `d(x) < thickness` and `(x − p)·n(x) > 0`: inside the contact
//! layer but moving outward along the normal at `x`. Where that holds but the segment never gets
//! inside (`d ≥ 0` all along, a particle sliding in the layer over a curved surface) there is no
//! entry point and nothing moves, nor does a particle that lands (ends inside, moving inward) or
//! slides (`(x − p)·n(x) ≤ 0`): friction and resting contact are as without the check. The
//! contact projection of the iterations then pushes a moved particle out to the thickness, on the
//! side it came from.
//!
//! `d` is convex along a segment (the signed distance of a convex shape), so its minimum is found
//! by a golden-section search over `[0, 1]` of [`SWEEP_MINIMUM_STEPS`] = 34 steps (2 + 34
//! evaluations; the bracket shrinks to `0.618^34 ≈ 7.8e-8` of the segment, 0.8 µm on a 10 m one),
//! taking `t = 1` if `d(x)` is lower still; and the entry by a bisection between 0 and that
//! minimum of [`SWEEP_ENTRY_STEPS`] = 24 steps (`2^-24 ≈ 6e-8` of the segment, 0.6 µm on 10 m),
//! keeping the outside end. Every lane takes every step (selects, no branches), so SIMD and scalar
//! agree bit for bit. A lane needs the search only if it is free, outside at the start, not
//! landing, and `d(p) + d(x) < |x − p|` (`d` is 1-Lipschitz, so nowhere on the segment is it
//! below `(d(p) + d(x) − |x − p|)/2`); a group of 8 (or 1) particles where no lane needs it skips
//! it. A resting or slowly moving cloth pays two signed distances per particle and collider.
//!
//! Signed distances, in the collider's local frame `l = Rᵀ(x − c)`:
//!
//! * plane: `d = n·(x − c)`, normal `n`;
//! * sphere: `d = |x − c| − r`, normal `(x − c)/|x − c|` (world up `+y` at the centre);
//! * capsule: `d = |l − (0, clamp(l_y, −h, h), 0)| − r` (local `+x` on the axis);
//! * box: outside, `|l − clamp(l, −e, e)|` with the normal from the closest point; inside,
//!   `max_i(|l_i| − e_i)` (negative) with the normal along that axis, away from the centre.
//!
//! A particle is counted as *deep* after a step when its signed distance to some collider is below
//! half that collider's thickness (it has sunk more than halfway into the contact layer; with
//! thickness 0, when it is inside at all), less [`DEEP_TOLERANCE`] for rounding. Only free
//! particles are counted.

use weft_core::collider::{ColliderShape, Placed};
use wide::f32x8;

use crate::KernelPath;
use crate::integrate::{PARTICLE_CHUNK, particle_chunk, particle_chunks};
use crate::lane::{Real, V3, add3, dot3, scale3, sub3};
use crate::records::{Record, gather8, scatter8, transpose4x4_halves};
use crate::schedule::add_record;
use crate::shared::SharedSlice;
use crate::team::Team;

/// Distances below this (m) give no direction: a particle at a sphere's centre or on a capsule's
/// axis is pushed out along a fixed direction instead.
pub const MIN_DIRECTION: f32 = 1e-12;

/// A signed distance and the outward normal at a point.
#[derive(Clone, Copy, Debug)]
pub struct SignedDistance<R: Real> {
    /// Signed distance to the surface in m (negative inside).
    pub distance: R,
    /// Outward unit normal.
    pub normal: V3<R>,
}

#[inline(always)]
fn splat3<R: Real>(v: [f32; 3]) -> V3<R> {
    v.map(R::splat)
}

/// `R·v` for a row-major `R` of scalars.
#[inline(always)]
fn rotate<R: Real>(m: &[[f32; 3]; 3], v: V3<R>) -> V3<R> {
    std::array::from_fn(|i| dot3(splat3(m[i]), v))
}

/// `Rᵀ·v`.
#[inline(always)]
fn rotate_back<R: Real>(m: &[[f32; 3]; 3], v: V3<R>) -> V3<R> {
    std::array::from_fn(|i| dot3([R::splat(m[0][i]), R::splat(m[1][i]), R::splat(m[2][i])], v))
}

#[inline(always)]
fn min<R: Real>(a: R, b: R) -> R {
    R::select(a.gt(b), b, a)
}

/// `v/|v|` where `|v| > MIN_DIRECTION`, else `fallback`; and `|v|`.
#[inline(always)]
fn direction<R: Real>(v: V3<R>, fallback: [f32; 3]) -> (V3<R>, R) {
    let len = dot3(v, v).sqrt();
    let ok = len.gt(R::splat(MIN_DIRECTION));
    let inv = R::splat(1.0) / len;
    let n = std::array::from_fn(|i| R::select(ok, v[i] * inv, R::splat(fallback[i])));
    (n, len)
}

/// The signed distance from `x` to the collider's surface and the outward normal there (module
/// docs).
///
/// ```
/// use weft_core::collider::{Collider, ColliderDesc, ColliderShape};
/// use weft_kernels::collider::signed_distance;
/// let sphere = ColliderDesc { shape: ColliderShape::Sphere { radius: 1.0 }, ..Default::default() };
/// let placed = Collider::new(&sphere).unwrap().placed(0.0, 0.1);
/// let s = signed_distance::<f32>(&placed, [0.0, 3.0, 0.0]);
/// assert_eq!((s.distance, s.normal), (2.0, [0.0, 1.0, 0.0]));
/// ```
#[inline(always)]
pub fn signed_distance<R: Real>(c: &Placed, x: V3<R>) -> SignedDistance<R> {
    let rel = sub3(x, splat3(c.position));
    match c.shape {
        ColliderShape::Plane { normal } => {
            let n = rotate(&c.rotation, splat3::<R>(normal));
            SignedDistance { distance: dot3(n, rel), normal: n }
        }
        ColliderShape::Sphere { radius } => {
            let (n, len) = direction(rel, [0.0, 1.0, 0.0]);
            SignedDistance { distance: len - R::splat(radius), normal: n }
        }
        ColliderShape::Capsule { radius, half_length } => {
            let l = rotate_back(&c.rotation, rel);
            let h = R::splat(half_length);
            let cy = min(l[1], h).max(-h);
            let (nl, len) = direction([l[0], l[1] - cy, l[2]], [1.0, 0.0, 0.0]);
            SignedDistance { distance: len - R::splat(radius), normal: rotate(&c.rotation, nl) }
        }
        ColliderShape::Box { half_extents } => {
            let l = rotate_back(&c.rotation, rel);
            let e: V3<R> = splat3(half_extents);
            let q: V3<R> = std::array::from_fn(|i| l[i].abs() - e[i]);
            let max_q = q[0].max(q[1]).max(q[2]);
            let zero = R::splat(0.0);
            let outside = max_q.gt(zero);
            // Outside: from the closest point of the box.
            let closest: V3<R> = std::array::from_fn(|i| min(l[i], e[i]).max(-e[i]));
            let (n_out, len) = direction(sub3(l, closest), [0.0, 1.0, 0.0]);
            // Inside: along the axis of least penetration, away from the centre (x, then y, then z
            // on ties; + for a coordinate of 0).
            let sign = |v: R| R::select(zero.gt(v), R::splat(-1.0), R::splat(1.0));
            let take_x = R::and(q[1].le(q[0]), q[2].le(q[0]));
            let take_y = q[2].le(q[1]);
            let n_in: V3<R> = [
                R::select(take_x, sign(l[0]), zero),
                R::select(take_x, zero, R::select(take_y, sign(l[1]), zero)),
                R::select(take_x, zero, R::select(take_y, zero, sign(l[2]))),
            ];
            let nl: V3<R> = std::array::from_fn(|i| R::select(outside, n_out[i], n_in[i]));
            SignedDistance { distance: R::select(outside, len, max_q), normal: rotate(&c.rotation, nl) }
        }
    }
}

/// One contact projection of the particle at `x` (inverse mass `w`) against collider `c`: the new
/// position, the push `−C` along the normal (m, 0 where there is no contact or `w = 0`) and the
/// correction that moved it (m; the new position is `x + correction` where it moved).
#[inline(always)]
pub fn project<R: Real>(c: &Placed, x: V3<R>, w: R) -> (V3<R>, R, V3<R>) {
    let s = signed_distance(c, x);
    let zero = R::splat(0.0);
    let value = s.distance - R::splat(c.thickness);
    let active = R::and(zero.gt(value), w.gt(zero));
    let push = R::select(active, -value, zero);
    let delta = scale3(s.normal, push);
    let moved = add3(x, delta);
    (
        std::array::from_fn(|i| R::select(active, moved[i], x[i])),
        push,
        std::array::from_fn(|i| R::select(active, delta[i], zero)),
    )
}

/// Coulomb friction of the particle at `x` (at `prev` at the start of the step, inverse mass `w`)
/// against collider `c`, which pushed it by `depth` (m) during the step (module docs). Returns the
/// new position and the correction that moved it (m; the new position is `x + correction`);
/// unchanged (correction 0) where `depth ≤ 0` or `w = 0`.
#[inline(always)]
pub fn friction<R: Real>(c: &Placed, x: V3<R>, prev: V3<R>, w: R, depth: R) -> (V3<R>, V3<R>) {
    let n = signed_distance(c, x).normal;
    let r = if c.moving {
        sub3(add3(rotate(&c.carry, sub3(x, splat3(c.position))), splat3(c.prev_position)), prev)
    } else {
        sub3(x, prev)
    };
    let rt = sub3(r, scale3(n, dot3(r, n)));
    let lt = dot3(rt, rt).sqrt();
    let (zero, one) = (R::splat(0.0), R::splat(1.0));
    let slides = lt.gt(R::splat(c.friction.static_coefficient) * depth);
    let k = R::select(slides, min(R::splat(c.friction.kinetic_coefficient) * depth / lt, one), one);
    let active = R::and(depth.gt(zero), w.gt(zero));
    let slide = scale3(rt, k);
    let moved = sub3(x, slide);
    (
        std::array::from_fn(|i| R::select(active, moved[i], x[i])),
        std::array::from_fn(|i| R::select(active, -slide[i], zero)),
    )
}

/// How far below half its thickness a particle must be to count as deep, in m: the rounding of
/// a particle just pushed onto a surface (of a collider of thickness 0, say) is not a penetration.
pub const DEEP_TOLERANCE: f32 = 1e-6;

/// The signed distance (m) below which a particle is deep in `c`: `thickness/2 − DEEP_TOLERANCE`.
pub fn deep_limit(c: &Placed) -> f32 {
    c.thickness * 0.5 - DEEP_TOLERANCE
}

/// Whether the particle at `x` (inverse mass `w`) is deep in collider `c`: free and at a signed
/// distance below [`deep_limit`].
#[inline(always)]
pub fn is_deep<R: Real>(c: &Placed, x: V3<R>, w: R) -> R::Mask {
    let s = signed_distance(c, x);
    let limit = R::splat(deep_limit(c));
    R::and(limit.gt(s.distance), w.gt(R::splat(0.0)))
}

/// Counting and testing the lanes of a mask (for the deep count and the sweep's skip).
pub trait MaskLanes: Real {
    /// How many lanes are set.
    fn lanes_set(mask: Self::Mask) -> u64;
    /// Whether any lane is set.
    fn any(mask: Self::Mask) -> bool;
}

impl MaskLanes for f32 {
    #[inline(always)]
    fn lanes_set(mask: bool) -> u64 {
        u64::from(mask)
    }
    #[inline(always)]
    fn any(mask: bool) -> bool {
        mask
    }
}

impl MaskLanes for f32x8 {
    #[inline(always)]
    fn lanes_set(mask: f32x8) -> u64 {
        mask.to_bitmask().count_ones() as u64
    }
    #[inline(always)]
    fn any(mask: f32x8) -> bool {
        mask.to_bitmask() != 0
    }
}

/// Steps of the golden-section search for the minimum of the signed distance along a swept
/// segment (module docs): the bracket shrinks to `0.618^34 ≈ 7.8e-8` of the segment, 0.8 µm
/// on a 10 m one.
pub const SWEEP_MINIMUM_STEPS: u32 = 34;

/// Steps of the bisection for the entry point (module docs): `2^-24 ≈ 6e-8` of the segment,
/// 0.6 µm on a 10 m one (and the resolution of an `f32` parameter in `[0, 1]`).
pub const SWEEP_ENTRY_STEPS: u32 = 24;

/// `1/φ = (√5 − 1)/2`, the golden-section ratio.
pub const INV_GOLDEN: f32 = 0.618_034;

/// The swept check of the particle at `x` (at `prev` at the start of the step, inverse mass `w`)
/// against collider `c` (module docs): the new position, and where it was moved.
///
/// The search runs only when some lane needs it (`R::any`); every lane of a group takes the same
/// fixed number of steps, so the SIMD and scalar paths give the same bits.
#[inline(always)]
pub fn sweep<R: MaskLanes>(c: &Placed, x: V3<R>, prev: V3<R>, w: R) -> (V3<R>, R::Mask) {
    let (zero, one) = (R::splat(0.0), R::splat(1.0));
    // The start of the step, at the collider's end pose: Mᵀ·(x_prev − c₀) + c₁.
    let p = if c.moving {
        add3(rotate_back(&c.carry, sub3(prev, splat3(c.prev_position))), splat3(c.position))
    } else {
        prev
    };
    let seg = sub3(x, p);
    let d0 = signed_distance(c, p).distance;
    let end = signed_distance(c, x);
    let d1 = end.distance;
    let length = dot3(seg, seg).sqrt();
    // Outside at the start; the segment may reach inside (1-Lipschitz: nowhere on it is the
    // distance below (d0 + d1 − |seg|)/2); and not landing (inside at the end, moving inward).
    let not_landing = R::select(zero.gt(d1), dot3(seg, end.normal), one).gt(zero);
    let need = R::and(R::and(d0.gt(zero), w.gt(zero)), R::and(length.gt(d0 + d1), not_landing));
    if !R::any(need) {
        return (x, need);
    }
    let at = |t: R| signed_distance(c, add3(p, scale3(seg, t))).distance;
    // Golden-section search for the minimum over [0, 1] (d is convex along the segment).
    let g = R::splat(INV_GOLDEN);
    let (mut a, mut b) = (zero, one);
    let (mut t1, mut t2) = (b - (b - a) * g, a + (b - a) * g);
    let (mut f1, mut f2) = (at(t1), at(t2));
    for _ in 0..SWEEP_MINIMUM_STEPS {
        let left = f2.gt(f1);
        a = R::select(left, a, t1);
        b = R::select(left, t2, b);
        let t = R::select(left, b - (b - a) * g, a + (b - a) * g);
        let f = at(t);
        (t1, f1, t2, f2) =
            (R::select(left, t, t2), R::select(left, f, f2), R::select(left, t1, t), R::select(left, f1, f));
    }
    let (mut tm, mut fm) = (R::select(f1.gt(f2), t2, t1), min(f1, f2));
    (tm, fm) = (R::select(fm.gt(d1), one, tm), min(fm, d1));
    let moved = R::and(need, zero.gt(fm));
    // Bisection for the entry: d(lo) > 0 (or lo = 0), d(hi) ≤ 0.
    let (mut lo, mut hi) = (zero, tm);
    for _ in 0..SWEEP_ENTRY_STEPS {
        let mid = (lo + hi) * R::splat(0.5);
        let outside = at(mid).gt(zero);
        lo = R::select(outside, mid, lo);
        hi = R::select(outside, hi, mid);
    }
    let entry = add3(p, scale3(seg, lo));
    (std::array::from_fn(|i| R::select(moved, entry[i], x[i])), moved)
}

/// The eight particles `i..i + 8` as lanes.
#[inline(always)]
fn ids8(i: usize) -> [u32; 8] {
    std::array::from_fn(|k| (i + k) as u32)
}

fn xyz(r: Record) -> V3<f32> {
    [r[0], r[1], r[2]]
}

/// Where the SIMD groups of a slice of `len` particles end: the rest runs one particle at a time.
fn simd_end(len: usize, path: KernelPath) -> usize {
    match path {
        KernelPath::Simd => len - len % 8,
        KernelPath::Scalar => 0,
    }
}

/// Adds the corrections `delta` (m) of the eight particles `i..i + 8` to their displacements.
#[inline(always)]
fn add_moves8(displacement: &mut [Record], i: usize, delta: V3<f32x8>) {
    let zero = f32x8::ZERO;
    let rows =
        transpose4x4_halves([delta[0], delta[1], delta[2], zero]).map(bytemuck::cast::<f32x8, [Record; 2]>);
    for k in 0..4 {
        displacement[i + k] = add_record(displacement[i + k], rows[k][0]);
        displacement[i + k + 4] = add_record(displacement[i + k + 4], rows[k][1]);
    }
}

/// `[dx, dy, dz]` as a `[dx, dy, dz, 0]` record.
fn record(d: V3<f32>) -> Record {
    [d[0], d[1], d[2], 0.0]
}

/// One contact projection of every particle of `positions` against every collider, in order
/// (module docs); each correction is also added to `displacement` (`[dx, dy, dz, 0]` per
/// particle, m). With `depth` (one `f32` per particle and collider, particle-major), each push
/// (m) is added to it.
///
/// # Panics
/// If `displacement` does not hold one record per particle, or `depth` is given and does not
/// hold `positions.len() × colliders.len()` values.
pub fn project_contacts(
    colliders: &[Placed],
    positions: &mut [Record],
    displacement: &mut [Record],
    mut depth: Option<&mut [f32]>,
    path: KernelPath,
) {
    let (len, nc) = (positions.len(), colliders.len());
    assert_eq!(displacement.len(), len, "one displacement per particle");
    if let Some(d) = &depth {
        assert_eq!(d.len(), len * nc, "one depth per particle and collider");
    }
    let end = simd_end(len, path);
    for i in (0..end).step_by(8) {
        let ids = ids8(i);
        let [x, y, z, w] = gather8(|j| positions[j as usize], &ids);
        let mut p = [x, y, z];
        for (j, c) in colliders.iter().enumerate() {
            let (moved, push, delta) = project(c, p, w);
            p = moved;
            add_moves8(displacement, i, delta);
            if let Some(d) = depth.as_deref_mut() {
                let sum = (f32x8::new(std::array::from_fn(|k| d[(i + k) * nc + j])) + push).to_array();
                for (k, s) in sum.into_iter().enumerate() {
                    d[(i + k) * nc + j] = s;
                }
            }
        }
        let zero = [f32x8::ZERO; 3];
        scatter8(|j, r, _| positions[j as usize] = r, &ids, u8::MAX, [p[0], p[1], p[2], w], zero);
    }
    for i in end..len {
        let r = positions[i];
        let mut p = xyz(r);
        for (j, c) in colliders.iter().enumerate() {
            let (moved, push, delta) = project(c, p, r[3]);
            p = moved;
            displacement[i] = add_record(displacement[i], record(delta));
            if let Some(d) = depth.as_deref_mut() {
                d[i * nc + j] += push;
            }
        }
        positions[i] = [p[0], p[1], p[2], r[3]];
    }
}

/// Coulomb friction for every particle of `positions` (at `prev` at the start of the step) and
/// every collider, in order, from the pushes `depth` of the step (module docs); each correction
/// is also added to `displacement` (`[dx, dy, dz, 0]` per particle, m).
///
/// # Panics
/// If `prev`, `displacement` or `depth` does not match `positions` and `colliders`.
pub fn apply_friction(
    colliders: &[Placed],
    positions: &mut [Record],
    displacement: &mut [Record],
    prev: &[Record],
    depth: &[f32],
    path: KernelPath,
) {
    let (len, nc) = (positions.len(), colliders.len());
    assert_eq!(prev.len(), len, "one previous position per particle");
    assert_eq!(displacement.len(), len, "one displacement per particle");
    assert_eq!(depth.len(), len * nc, "one depth per particle and collider");
    let end = simd_end(len, path);
    for i in (0..end).step_by(8) {
        let ids = ids8(i);
        let [x, y, z, w] = gather8(|j| positions[j as usize], &ids);
        let [px, py, pz, _] = gather8(|j| prev[j as usize], &ids);
        let mut p = [x, y, z];
        for (j, c) in colliders.iter().enumerate() {
            let d = f32x8::new(std::array::from_fn(|k| depth[(i + k) * nc + j]));
            let delta;
            (p, delta) = friction(c, p, [px, py, pz], w, d);
            add_moves8(displacement, i, delta);
        }
        let zero = [f32x8::ZERO; 3];
        scatter8(|j, r, _| positions[j as usize] = r, &ids, u8::MAX, [p[0], p[1], p[2], w], zero);
    }
    for i in end..len {
        let r = positions[i];
        let mut p = xyz(r);
        for (j, c) in colliders.iter().enumerate() {
            let delta;
            (p, delta) = friction(c, p, xyz(prev[i]), r[3], depth[i * nc + j]);
            displacement[i] = add_record(displacement[i], record(delta));
        }
        positions[i] = [p[0], p[1], p[2], r[3]];
    }
}

/// Free particles of `positions` deep in at least one collider (module docs).
pub fn count_deep(colliders: &[Placed], positions: &[Record], path: KernelPath) -> u64 {
    fn any_deep<R: MaskLanes>(colliders: &[Placed], p: V3<R>, w: R) -> u64 {
        let (zero, one) = (R::splat(0.0), R::splat(1.0));
        let mut hit = zero;
        for c in colliders {
            hit = R::select(is_deep(c, p, w), one, hit);
        }
        R::lanes_set(hit.gt(zero))
    }
    let end = simd_end(positions.len(), path);
    let mut count = 0;
    for i in (0..end).step_by(8) {
        let [x, y, z, w] = gather8(|j| positions[j as usize], &ids8(i));
        count += any_deep(colliders, [x, y, z], w);
    }
    for r in &positions[end..] {
        count += any_deep(colliders, xyz(*r), r[3]);
    }
    count
}

/// The swept check of every particle of `positions` (at `prev` at the start of the step) against
/// every collider, in order (module docs). A particle it moves is set to where it entered, so its
/// displacement becomes `x − x_prev` (`displacement`: `[dx, dy, dz, 0]` per particle, m).
/// Returns how many particles it moved.
///
/// # Panics
/// If `prev` or `displacement` does not match `positions`.
pub fn sweep_contacts(
    colliders: &[Placed],
    positions: &mut [Record],
    displacement: &mut [Record],
    prev: &[Record],
    path: KernelPath,
) -> u64 {
    /// The new positions, how many lanes moved and the lanes that moved (1, else 0).
    fn one<R: MaskLanes>(colliders: &[Placed], x: V3<R>, prev: V3<R>, w: R) -> (V3<R>, u64, R) {
        let (zero, one) = (R::splat(0.0), R::splat(1.0));
        let (mut p, mut hit) = (x, zero);
        for c in colliders {
            let (q, moved) = sweep(c, p, prev, w);
            p = q;
            hit = R::select(moved, one, hit);
        }
        (p, R::lanes_set(hit.gt(zero)), hit)
    }
    let len = positions.len();
    assert_eq!(prev.len(), len, "one previous position per particle");
    assert_eq!(displacement.len(), len, "one displacement per particle");
    let mut place = |i: usize, p: V3<f32>| {
        let q = prev[i];
        displacement[i] = [p[0] - q[0], p[1] - q[1], p[2] - q[2], 0.0];
    };
    let end = simd_end(len, path);
    let mut count = 0;
    for i in (0..end).step_by(8) {
        let ids = ids8(i);
        let [x, y, z, w] = gather8(|j| positions[j as usize], &ids);
        let [px, py, pz, _] = gather8(|j| prev[j as usize], &ids);
        let (p, n, hit) = one(colliders, [x, y, z], [px, py, pz], w);
        count += n;
        if n > 0 {
            let zero = [f32x8::ZERO; 3];
            scatter8(|j, r, _| positions[j as usize] = r, &ids, u8::MAX, [p[0], p[1], p[2], w], zero);
            // Rare: only the lanes that moved take `x − x_prev`.
            let (hit, p) = (hit.to_array(), p.map(f32x8::to_array));
            for k in (0..8).filter(|&k| hit[k] > 0.0) {
                place(i + k, [p[0][k], p[1][k], p[2][k]]);
            }
        }
    }
    for i in end..len {
        let r = positions[i];
        let (p, n, _) = one(colliders, xyz(r), xyz(prev[i]), r[3]);
        count += n;
        positions[i] = [p[0], p[1], p[2], r[3]];
        if n > 0 {
            place(i, p);
        }
    }
    count
}

/// The particle arrays a contact phase works on.
#[derive(Clone, Copy)]
pub(crate) struct ContactArrays<'a> {
    /// The colliders placed for this step.
    pub(crate) colliders: &'a [Placed],
    /// `[x, y, z, w]` records.
    pub(crate) records: SharedSlice<'a, Record>,
    /// `[dx, dy, dz, 0]` displacements of the step (m), moved with the records.
    pub(crate) displacement: SharedSlice<'a, Record>,
    /// `[x, y, z, 0]` at the start of the step; no contact phase writes them.
    pub(crate) prev: SharedSlice<'a, Record>,
    /// Pushes of the step, one per particle and collider (particle-major).
    pub(crate) depth: SharedSlice<'a, f32>,
    /// Free particles deep in a collider, one count per particle chunk.
    pub(crate) deep: SharedSlice<'a, u64>,
    /// SIMD or scalar.
    pub(crate) path: KernelPath,
}

impl ContactArrays<'_> {
    /// One team phase over the particles in chunks of
    /// [`PARTICLE_CHUNK`]: `f(positions, displacements, previous positions, depths, deep
    /// count)` for each chunk.
    fn for_each_chunk(
        &self,
        team: &Team<'_>,
        mut f: impl FnMut(&mut [Record], &mut [Record], &[Record], &mut [f32], &mut u64),
    ) {
        let (len, nc, n) = (self.records.len(), self.colliders.len(), PARTICLE_CHUNK);
        let parts = (
            self.records.chunks_mut(n),
            self.displacement.chunks_mut(n),
            self.prev,
            self.depth.chunks_mut(n * nc),
            self.deep.each_mut(),
        );
        team.for_each_chunk(particle_chunks(len), parts, |_, c, (x, moves, prev, d, deep)| {
            f(x, moves, &prev[particle_chunk(c, len)], d, deep);
        });
    }

    /// [`project_contacts`] as a team phase, adding the pushes to the depths if `accumulate`.
    pub(crate) fn contact_phase(&self, team: &Team<'_>, accumulate: bool) {
        self.for_each_chunk(team, |x, moves, _, d, _| {
            project_contacts(self.colliders, x, moves, accumulate.then_some(d), self.path)
        });
    }

    /// [`sweep_contacts`] as a team phase; the particles this thread moved.
    pub(crate) fn sweep_phase(&self, team: &Team<'_>) -> u64 {
        let mut swept = 0;
        self.for_each_chunk(team, |x, moves, prev, _, _| {
            swept += sweep_contacts(self.colliders, x, moves, prev, self.path);
        });
        swept
    }

    /// [`apply_friction`] as a team phase.
    pub(crate) fn friction_phase(&self, team: &Team<'_>) {
        self.for_each_chunk(team, |x, moves, prev, d, _| {
            apply_friction(self.colliders, x, moves, prev, d, self.path)
        });
    }

    /// [`count_deep`] as a team phase, into the deep count of each particle chunk.
    pub(crate) fn deep_phase(&self, team: &Team<'_>) {
        self.for_each_chunk(team, |x, _, _, _, deep| *deep = count_deep(self.colliders, x, self.path));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::collider::{Collider, ColliderDesc, Friction, RigidKey};

    fn placed(shape: ColliderShape, thickness: f32) -> Placed {
        let desc = ColliderDesc { shape, thickness, ..ColliderDesc::default() };
        Collider::new(&desc).unwrap().placed(0.0, 0.1)
    }

    #[test]
    fn shapes_have_the_distances_of_their_definitions() {
        let cases: [(ColliderShape, [f32; 3], f32, [f32; 3]); 8] = [
            (ColliderShape::Plane { normal: [0.0, 2.0, 0.0] }, [5.0, -0.5, 1.0], -0.5, [0.0, 1.0, 0.0]),
            (ColliderShape::Sphere { radius: 1.0 }, [0.0, 0.0, 0.25], -0.75, [0.0, 0.0, 1.0]),
            (ColliderShape::Sphere { radius: 1.0 }, [0.0; 3], -1.0, [0.0, 1.0, 0.0]),
            (ColliderShape::Capsule { radius: 0.5, half_length: 1.0 }, [0.0, 3.0, 0.0], 1.5, [0.0, 1.0, 0.0]),
            (
                ColliderShape::Capsule { radius: 0.5, half_length: 1.0 },
                [0.0, 0.5, -1.0],
                0.5,
                [0.0, 0.0, -1.0],
            ),
            (ColliderShape::Box { half_extents: [1.0, 2.0, 3.0] }, [2.0, 0.0, 0.0], 1.0, [1.0, 0.0, 0.0]),
            (ColliderShape::Box { half_extents: [1.0, 2.0, 3.0] }, [0.0, -1.5, 0.0], -0.5, [0.0, -1.0, 0.0]),
            (ColliderShape::Box { half_extents: [1.0, 1.0, 1.0] }, [4.0, 5.0, 1.0], 5.0, [0.6, 0.8, 0.0]),
        ];
        for (shape, x, d, n) in cases {
            let s = signed_distance::<f32>(&placed(shape, 0.0), x);
            assert!((s.distance - d).abs() < 1e-6, "{shape:?} at {x:?}: {}", s.distance);
            assert!((0..3).all(|i| (s.normal[i] - n[i]).abs() < 1e-6), "{shape:?}: {:?}", s.normal);
        }
    }

    #[test]
    fn a_contact_pushes_out_to_the_thickness_and_pins_stay() {
        let c = placed(ColliderShape::Sphere { radius: 1.0 }, 0.1);
        let (x, push, delta) = project::<f32>(&c, [0.0, 0.5, 0.0], 1.0);
        assert!((x[1] - 1.1).abs() < 1e-6 && (push - 0.6).abs() < 1e-6, "{x:?} {push}");
        assert_eq!(x, [0.0, 0.5 + delta[1], 0.0], "x moved by the correction");
        let (x, push, delta) = project::<f32>(&c, [0.0, 0.5, 0.0], 0.0);
        assert_eq!((x, push, delta), ([0.0, 0.5, 0.0], 0.0, [0.0; 3]));
        let (x, push, delta) = project::<f32>(&c, [0.0, 2.0, 0.0], 1.0);
        assert_eq!((x, push, delta), ([0.0, 2.0, 0.0], 0.0, [0.0; 3]));
    }

    #[test]
    fn friction_sticks_below_the_cone_and_slides_above_it() {
        let desc = ColliderDesc {
            friction: Friction { static_coefficient: 0.5, kinetic_coefficient: 0.25 },
            ..ColliderDesc::default()
        };
        let c = Collider::new(&desc).unwrap().placed(0.0, 0.1);
        // Moved 0.1 m along the floor, pushed up by 0.4 m: 0.1 ≤ 0.5·0.4, so it sticks.
        let (x, delta) = friction::<f32>(&c, [0.1, 0.0, 0.0], [0.0; 3], 1.0, 0.4);
        assert_eq!((x, delta), ([0.0, 0.0, 0.0], [-0.1, 0.0, 0.0]));
        // Pushed by 0.1 m only: 0.1 > 0.05, slides, losing 0.25·0.1 = 0.025 m.
        let (x, _) = friction::<f32>(&c, [0.1, 0.0, 0.0], [0.0; 3], 1.0, 0.1);
        assert!((x[0] - 0.075).abs() < 1e-7, "{x:?}");
        // A floor sliding at +x carries a sticking particle with it.
        let keys = vec![RigidKey::at([0.0; 3]), RigidKey { time: 1.0, ..RigidKey::at([1.0, 0.0, 0.0]) }];
        let moving = Collider::new(&ColliderDesc { keys, ..desc }).unwrap().placed(0.0, 0.1);
        let (x, _) = friction::<f32>(&moving, [0.0, 0.0, 0.0], [0.0; 3], 1.0, 0.4);
        assert!((x[0] - 0.1).abs() < 1e-6, "{x:?}");
    }

    #[test]
    fn the_sweep_stops_a_particle_at_the_entry_and_leaves_the_others() {
        // A slab 2 cm thick (y from −0.01 to 0.01).
        let slab = placed(ColliderShape::Box { half_extents: [1.0, 0.01, 1.0] }, 0.005);
        // Straight through it, from 0.5 m above to 0.5 m below: stops on its top face.
        let (x, moved) = sweep::<f32>(&slab, [0.1, -0.5, 0.0], [0.1, 0.5, 0.0], 1.0);
        assert!(moved && (x[1] - 0.01).abs() < 1e-6 && (x[0] - 0.1).abs() < 1e-6, "{x:?}");
        assert!(signed_distance::<f32>(&slab, x).distance >= 0.0);
        // Past its middle (ends inside, below it, moving down): back to the top face.
        let (x, moved) = sweep::<f32>(&slab, [0.0, -0.004, 0.0], [0.0, 0.3, 0.0], 1.0);
        assert!(moved && (x[1] - 0.01).abs() < 1e-6, "{x:?}");
        // Landing (ends inside the upper half, moving down), sliding, resting, pinned and
        // starting inside: untouched.
        for (x, prev, w) in [
            ([0.0, 0.004, 0.0], [0.0, 0.3, 0.0], 1.0),
            ([0.3, 0.014, 0.0], [0.0, 0.015, 0.0], 1.0),
            ([0.0, 0.0149, 0.0], [0.0, 0.015, 0.0], 1.0),
            ([0.1, -0.5, 0.0], [0.1, 0.5, 0.0], 0.0),
            ([0.1, -0.5, 0.0], [0.1, 0.0, 0.0], 1.0),
        ] {
            assert_eq!(sweep::<f32>(&slab, x, prev, w), (x, false), "{x:?} from {prev:?}");
        }
        // Sliding in the contact layer over a ball: outward at the end, never inside.
        let ball = placed(ColliderShape::Sphere { radius: 1.0 }, 0.01);
        let (x, prev) = ([0.1, 1.003, 0.0], [0.0, 1.005, 0.0]);
        assert_eq!(sweep::<f32>(&ball, x, prev, 1.0), (x, false));
        // A body that moved over a resting particle: the start relative to its end pose is 1 m
        // ahead, so it entered through the face at +z.
        let keys = vec![RigidKey::at([0.0, 0.0, -1.0]), RigidKey { time: 1.0, ..RigidKey::at([0.0; 3]) }];
        let desc =
            ColliderDesc { shape: ColliderShape::Sphere { radius: 0.2 }, keys, ..ColliderDesc::default() };
        let moving = Collider::new(&desc).unwrap().placed(0.0, 1.0);
        let (x, moved) = sweep::<f32>(&moving, [0.0, -0.05, 0.0], [0.0; 3], 1.0);
        assert!(moved && x[2] > 0.19 && (signed_distance::<f32>(&moving, x).distance).abs() < 1e-6, "{x:?}");
    }

    #[test]
    fn simd_and_scalar_paths_give_the_same_bits() {
        let colliders = [
            placed(ColliderShape::Box { half_extents: [0.5, 0.3, 0.4] }, 0.02),
            placed(ColliderShape::Sphere { radius: 0.7 }, 0.01),
            placed(ColliderShape::Capsule { radius: 0.2, half_length: 0.5 }, 0.0),
        ];
        let records: Vec<Record> = (0..37)
            .map(|i| {
                let t = i as f32 * 0.37;
                [
                    t.sin() * 0.8,
                    (t * 1.3).cos() * 0.6,
                    (t * 0.7).sin() * 0.5,
                    if i % 5 == 0 { 0.0 } else { 1.0 },
                ]
            })
            .collect();
        // Starts of the step from 0 to 1.5 m away, some across the bodies.
        let prev: Vec<Record> = records
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let t = i as f32 * 0.91;
                let k = 1.5 * (i % 4) as f32 / 3.0;
                [r[0] + k * t.cos(), r[1] + k * (t * 1.7).sin(), r[2] - k * t.sin(), r[3]]
            })
            .collect();
        let mut moving = colliders.to_vec();
        let keys = vec![
            RigidKey::at([0.0; 3]),
            RigidKey { time: 1.0, rotation: [0.0, 0.6, 0.0, 0.8], ..RigidKey::at([0.0, 0.0, 3.0]) },
        ];
        let desc = ColliderDesc {
            shape: ColliderShape::Box { half_extents: [0.3, 0.2, 0.1] },
            keys,
            thickness: 0.01,
            ..ColliderDesc::default()
        };
        moving.push(Collider::new(&desc).unwrap().placed(0.0, 0.1));
        let run = |path| {
            let mut x = records.clone();
            let mut moves: Vec<Record> = (0..x.len()).map(|i| [i as f32 * 1e-3, 0.0, -1e-3, 0.0]).collect();
            let swept = sweep_contacts(&moving, &mut x, &mut moves, &prev, path);
            let mut d = vec![0.0; x.len() * colliders.len()];
            project_contacts(&colliders, &mut x, &mut moves, Some(&mut d), path);
            apply_friction(&colliders, &mut x, &mut moves, &records, &d, path);
            (x, d, count_deep(&colliders, &records, path), swept, moves)
        };
        let (a, b) = (run(KernelPath::Simd), run(KernelPath::Scalar));
        let bits = |x: &[Record]| x.iter().flatten().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(a.3, b.3);
        assert!(a.3 > 0, "the sample has swept particles");
        assert_eq!(bits(&a.0), bits(&b.0));
        assert_eq!(bits(&a.4), bits(&b.4), "the displacements too");
        assert_eq!(
            a.1.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            b.1.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!(a.2, b.2);
        assert!(a.2 > 0, "the sample has deep particles");
    }
}
