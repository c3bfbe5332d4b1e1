//! Contacts with colliders, one particle and one collider at a time.
//!
//! Each collider is placed for the step at its pose at the end of the step (`weft-core` samples
//! the keys, so both solvers see the same pose). For a particle at `x` with signed distance `d` to
//! the surface and outward normal `n`:
//!
//! ```text
//! C = d − thickness            (m), a contact only when C < 0 (and the particle is free)
//! x += −C·n                    compliance 0: Δλ = −C/w, x += w·n·Δλ
//! depth += −C                  how far this collider pushed the particle during the step
//! ```
//!
//! After the iterations, friction (Coulomb, from the tangential displacement relative to the body):
//!
//! ```text
//! r   = (where the body point now at x was at the start) − x_prev
//! r_t = r − (r·n)·n
//! |r_t| ≤ μs·depth:  x −= r_t                               (sticks)
//! otherwise:         x −= r_t · min(μk·depth/|r_t|, 1)      (slides)
//! ```
//!
//! then one more contact pass (without adding to the depth).
//!
//! Before the iterations (once per step, after the prediction), a swept check: for each free
//! particle and collider in order, with `p` its start relative to the body's end pose
//! (`Mᵀ·(x_prev − c₀) + c₁`, `M` the carry) and the segment `s(t) = p + t·(x − p)`:
//!
//! ```text
//! d(p) > 0, min_t d(s(t)) < 0, and (d(x) ≥ 0 or (x − p)·n(x) > 0)   → x = s(first t with d = 0)
//! ```
//!
//! (passed through the body within the step, or past its middle). `d` is convex along the
//! segment: the minimum by 34 golden-section steps over `[0, 1]` (`t = 1` if `d(x)` is lower),
//! the entry by 24 bisection steps between 0 and it, keeping the outside end. Only tried where
//! `d(p) + d(x) < |x − p|` (elsewhere the segment cannot reach inside, `d` being 1-Lipschitz).

use glam::{Mat3, Vec3};
use weft_core::Model;
use weft_core::collider::{ColliderShape, Placed};

use crate::particle::Particle;

/// Below this distance (m) a direction is undefined; a fixed one is used.
const MIN_DIRECTION: f32 = 1e-12;

/// The model's colliders.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Colliders {
    colliders: Vec<weft_core::collider::Collider>,
    /// Pushes of the current step, `depth[particle][collider]` flattened.
    depth: Vec<f32>,
    /// The colliders placed for the current step.
    placed: Vec<Placed>,
}

/// A rotation matrix (row-major in `weft-core`) as a `glam::Mat3`.
fn mat(m: &[[f32; 3]; 3]) -> Mat3 {
    Mat3::from_cols_array_2d(m).transpose()
}

/// `n` if its length is above [`MIN_DIRECTION`], with the length; else `fallback`.
fn direction(v: Vec3, fallback: Vec3) -> (Vec3, f32) {
    let len = v.dot(v).sqrt();
    if len > MIN_DIRECTION { (v * (1.0 / len), len) } else { (fallback, len) }
}

/// Signed distance (m) from `x` to the surface of `c`, and the outward normal.
pub(crate) fn signed_distance(c: &Placed, x: Vec3) -> (f32, Vec3) {
    let rotation = mat(&c.rotation);
    let rel = x - Vec3::from_array(c.position);
    match c.shape {
        ColliderShape::Plane { normal } => {
            let n = rotation * Vec3::from_array(normal);
            (n.dot(rel), n)
        }
        ColliderShape::Sphere { radius } => {
            let (n, len) = direction(rel, Vec3::Y);
            (len - radius, n)
        }
        ColliderShape::Capsule { radius, half_length } => {
            let local = rotation.transpose() * rel;
            let on_axis = Vec3::new(0.0, local.y.clamp(-half_length, half_length), 0.0);
            let (n, len) = direction(local - on_axis, Vec3::X);
            (len - radius, rotation * n)
        }
        ColliderShape::Box { half_extents } => {
            let local = rotation.transpose() * rel;
            let e = Vec3::from_array(half_extents);
            let q = local.abs() - e;
            let max_q = q.x.max(q.y).max(q.z);
            if max_q > 0.0 {
                let closest = local.clamp(-e, e);
                let (n, len) = direction(local - closest, Vec3::Y);
                (len, rotation * n)
            } else {
                let sign = |v: f32| if v < 0.0 { -1.0 } else { 1.0 };
                let n = if q.x >= q.y && q.x >= q.z {
                    Vec3::new(sign(local.x), 0.0, 0.0)
                } else if q.y >= q.z {
                    Vec3::new(0.0, sign(local.y), 0.0)
                } else {
                    Vec3::new(0.0, 0.0, sign(local.z))
                };
                (max_q, rotation * n)
            }
        }
    }
}

/// Golden-section steps of the swept check (module docs).
const SWEEP_MINIMUM_STEPS: u32 = 34;
/// Bisection steps of the swept check.
const SWEEP_ENTRY_STEPS: u32 = 24;
/// `1/φ`.
const INV_GOLDEN: f32 = 0.618_034;

/// `v > 0` (false for NaN).
fn positive(v: f32) -> bool {
    v > 0.0
}

/// The entry point of the particle's path during the step into `c`, where the swept check moves
/// it (module docs); `None` where it does not.
pub(crate) fn sweep(c: &Placed, x: Vec3, prev: Vec3) -> Option<Vec3> {
    let start = if c.moving {
        mat(&c.carry).transpose() * (prev - Vec3::from_array(c.prev_position)) + Vec3::from_array(c.position)
    } else {
        prev
    };
    let (d_start, _) = signed_distance(c, start);
    if !positive(d_start) {
        return None;
    }
    let (d_end, n_end) = signed_distance(c, x);
    let segment = x - start;
    if d_end < 0.0 && !positive(segment.dot(n_end)) {
        return None; // lands
    }
    if !positive(segment.length() - (d_start + d_end)) {
        return None; // cannot reach inside
    }
    let d = |t: f32| signed_distance(c, start + segment * t).0;
    // Minimum over [0, 1].
    let (mut lo, mut hi) = (0.0f32, 1.0f32);
    let mut inner = (hi - (hi - lo) * INV_GOLDEN, lo + (hi - lo) * INV_GOLDEN);
    let mut values = (d(inner.0), d(inner.1));
    for _ in 0..SWEEP_MINIMUM_STEPS {
        if values.0 < values.1 {
            hi = inner.1;
            let t = hi - (hi - lo) * INV_GOLDEN;
            inner = (t, inner.0);
            values = (d(t), values.0);
        } else {
            lo = inner.0;
            let t = lo + (hi - lo) * INV_GOLDEN;
            inner = (inner.1, t);
            values = (values.1, d(t));
        }
    }
    let (mut t_min, mut d_min) = if values.0 > values.1 { (inner.1, values.1) } else { (inner.0, values.0) };
    if d_min > d_end {
        (t_min, d_min) = (1.0, d_end);
    }
    if !positive(-d_min) {
        return None;
    }
    // Entry: d(outside) > 0 (or t = 0), d(inside) ≤ 0.
    let (mut outside, mut inside) = (0.0f32, t_min);
    for _ in 0..SWEEP_ENTRY_STEPS {
        let mid = (outside + inside) * 0.5;
        if d(mid) > 0.0 {
            outside = mid;
        } else {
            inside = mid;
        }
    }
    Some(start + segment * outside)
}

impl Colliders {
    /// The model's colliders.
    pub(crate) fn from_model(model: &Model) -> Self {
        Colliders { colliders: model.colliders().to_vec(), depth: Vec::new(), placed: Vec::new() }
    }

    /// True when the scene has none.
    pub(crate) fn is_empty(&self) -> bool {
        self.colliders.is_empty()
    }

    /// Places the colliders for the step from `t0` to `t1` (s) and clears the pushes.
    pub(crate) fn begin_step(&mut self, particles: usize, t0: f64, t1: f64) {
        self.placed = self.colliders.iter().map(|c| c.placed(t0, t1)).collect();
        self.depth.clear();
        self.depth.resize(particles * self.placed.len(), 0.0);
    }

    /// One contact pass over every particle and collider; adds the pushes to the depths if
    /// `accumulate`.
    pub(crate) fn project_all(&mut self, particles: &mut [Particle], accumulate: bool) {
        let nc = self.placed.len();
        for (i, p) in particles.iter_mut().enumerate() {
            if !p.is_free() {
                continue;
            }
            for (j, c) in self.placed.iter().enumerate() {
                let (d, n) = signed_distance(c, p.position);
                let value = d - c.thickness;
                if value < 0.0 {
                    p.shift(n * -value);
                    if accumulate {
                        self.depth[i * nc + j] += -value;
                    }
                }
            }
        }
    }

    /// The swept check of every free particle against every collider, in order (module docs).
    /// Returns how many particles it moved.
    pub(crate) fn sweep_all(&self, particles: &mut [Particle]) -> u64 {
        let mut count = 0;
        for p in particles.iter_mut().filter(|p| p.is_free()) {
            let mut moved = false;
            for c in &self.placed {
                if let Some(entry) = sweep(c, p.position, p.prev_position) {
                    p.place(entry);
                    moved = true;
                }
            }
            count += u64::from(moved);
        }
        count
    }

    /// Coulomb friction for every particle and collider that pushed it this step.
    pub(crate) fn friction_all(&self, particles: &mut [Particle]) {
        let nc = self.placed.len();
        for (i, p) in particles.iter_mut().enumerate() {
            if !p.is_free() {
                continue;
            }
            for (j, c) in self.placed.iter().enumerate() {
                let depth = self.depth[i * nc + j];
                if depth <= 0.0 {
                    continue;
                }
                let (_, n) = signed_distance(c, p.position);
                let x = p.position;
                let body_was = if c.moving {
                    mat(&c.carry) * (x - Vec3::from_array(c.position)) + Vec3::from_array(c.prev_position)
                } else {
                    x
                };
                let r = body_was - p.prev_position;
                let tangential = r - n * r.dot(n);
                let length = tangential.dot(tangential).sqrt();
                let share = if length > c.friction.static_coefficient * depth {
                    (c.friction.kinetic_coefficient * depth / length).min(1.0)
                } else {
                    1.0
                };
                p.shift(-(tangential * share));
            }
        }
    }

    /// Whether a particle at `x` is closer to some collider's surface than half its thickness,
    /// less 1 µm for rounding (inside, for a thickness of 0).
    pub(crate) fn is_deep(&self, x: Vec3) -> bool {
        self.placed.iter().any(|c| {
            let (d, _) = signed_distance(c, x);
            d < 0.5 * c.thickness - 1e-6
        })
    }
}
