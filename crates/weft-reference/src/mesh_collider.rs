//! Contacts with triangle-mesh colliders, one particle, one mesh and one triangle at a time.
//!
//! Every step, `weft-core` gives each mesh's vertices at the start and at the end of the step and
//! each triangle's swept box. A free particle's candidates are *all* the triangles whose box meets
//! its query box (`weft_core::mesh_collider::query_box`), tested one by one (no BVH), and its
//! side is that of `x_prev` to the candidate closest to it on the start mesh, against the
//! pseudo-normal `n₀` of the corner, edge or face that closest point lies on:
//!
//! ```text
//! side = −1 if (x_prev − q₀)·n₀ < 0, else +1          (no candidate: no contact this step)
//! ```
//!
//! Each iteration, with `q` the closest candidate point to `x` on the end mesh and `n` the
//! pseudo-normal there:
//!
//! ```text
//! u = x − q;  same side (side·u·n ≥ 0): d = |u|, m = u/|u|;  else d = −|u|, m = −u/|u|
//! C = d − thickness;  C < 0:  x += −C·m,  depth += −C
//! ```
//!
//! Friction afterwards: `r = (x − x_prev) − (q − q₀)` with `q₀` the point of the same barycentric
//! coordinates on the start mesh, and the Coulomb rule of the analytic colliders.

use glam::Vec3;
use weft_core::Model;
use weft_core::mesh_collider::{MeshCollider, MeshPose, Normals, query_box};

use crate::particle::Particle;

/// `v` in `[0, 1]`, NaN to 0 (far from a triangle rounding can leave the range or give 0/0).
#[allow(clippy::manual_clamp)] // `clamp` keeps a NaN
fn unit(v: f32) -> f32 {
    v.max(0.0).min(1.0)
}

/// The closest point of a triangle to `p` and its barycentric coordinates: the seven Voronoi
/// regions of Ericson's *Real-Time Collision Detection* (5.1.5).
fn closest_point(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> (Vec3, [f32; 3], u8) {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, [1.0, 0.0, 0.0], 0);
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (b, [0.0, 1.0, 0.0], 1);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        // d1 − d3 = |ab|², taken from the edge (no cancellation far away); clamped, NaN to 0.
        let v = unit(d1 / ab.dot(ab));
        return (a + ab * v, [1.0 - v, v, 0.0], 3);
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (c, [0.0, 0.0, 1.0], 2);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = unit(d2 / ac.dot(ac));
        return (a + ac * w, [1.0 - w, 0.0, w], 5);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let bc = c - b;
        let w = unit((d4 - d3) / bc.dot(bc));
        return (b + bc * w, [0.0, 1.0 - w, w], 4);
    }
    // va + vb + vc = |ab × ac|².
    let area2 = ab.cross(ac).dot(ab.cross(ac));
    if area2.is_nan() || area2 < f32::MIN_POSITIVE {
        return (a, [1.0, 0.0, 0.0], 0);
    }
    let v = unit(vb / area2);
    let w = (vc / area2).max(0.0).min(1.0 - v);
    (a + (ab * v + ac * w), [1.0 - v - w, v, w], 6)
}

/// A closest point: where, its barycentric coordinates, its triangle, the pseudo-normal there.
type Hit = (Vec3, [f32; 3], usize, Vec3);

/// The closest candidate point to `x` on `vertices`: point, barycentric coordinates, triangle,
/// and the pseudo-normal of the feature (corner, edge, face) it lies on, from `normals`.
/// Collapsed triangles (cross product of squared length `≤ 1e-30`) are skipped.
fn nearest(
    mesh: &MeshCollider,
    vertices: &[[f32; 3]],
    normals: &Normals,
    candidates: &[u32],
    x: Vec3,
) -> Option<Hit> {
    let mut best: Option<(f32, Hit)> = None;
    for &t in candidates {
        let [a, b, c] = mesh.triangles[t as usize].map(|v| Vec3::from_array(vertices[v as usize]));
        let cross = (b - a).cross(c - a);
        let len2 = cross.dot(cross);
        if len2 <= 1e-30 {
            continue;
        }
        let (q, bary, feature) = closest_point(x, a, b, c);
        let d2 = (x - q).dot(x - q);
        if best.is_none_or(|(b2, _)| d2 < b2) {
            let n = normals.of(mesh.triangle_edges(), &mesh.triangles, t as usize, feature);
            best = Some((d2, (q, bary, t as usize, Vec3::from_array(n))));
        }
    }
    best.map(|(_, n)| n)
}

/// One mesh and, per particle, its candidates and side for the current step.
#[derive(Debug, Clone, PartialEq)]
struct Mesh {
    mesh: MeshCollider,
    pose: Option<MeshPose>,
    candidates: Vec<Vec<u32>>,
    side: Vec<f32>,
}

/// The model's mesh colliders and the pushes of the current step.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct MeshColliders {
    meshes: Vec<Mesh>,
    /// `depth[particle][mesh]`, flattened.
    depth: Vec<f32>,
}

impl Mesh {
    /// Signed distance from the particle's side, push direction, and nearest point (point,
    /// barycentric coordinates, triangle).
    fn signed(&self, i: usize, x: Vec3) -> Option<(f32, Vec3, Vec3, [f32; 3], usize)> {
        let side = self.side[i];
        if side == 0.0 {
            return None;
        }
        let pose = self.pose.as_ref().expect("a step has begun");
        let (q, bary, t, n) = nearest(&self.mesh, &pose.end, &pose.end_normals, &self.candidates[i], x)?;
        let u = x - q;
        let len = u.dot(u).sqrt();
        let same = side * u.dot(n) >= 0.0;
        let d = if same { len } else { -len };
        let m = if len > 1e-12 { u * if same { 1.0 / len } else { -1.0 / len } } else { n * side };
        Some((d, m, q, bary, t))
    }
}

impl MeshColliders {
    /// The model's mesh colliders.
    pub(crate) fn from_model(model: &Model) -> Self {
        let meshes = model
            .mesh_colliders()
            .iter()
            .map(|m| Mesh { mesh: m.clone(), pose: None, candidates: Vec::new(), side: Vec::new() })
            .collect();
        MeshColliders { meshes, depth: Vec::new() }
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.meshes.is_empty()
    }

    /// Samples the meshes for the step from `t0` to `t1` (s), finds every particle's candidates
    /// (by testing every triangle) and side, and clears the pushes.
    pub(crate) fn begin_step(&mut self, particles: &[Particle], t0: f64, t1: f64) {
        for m in &mut self.meshes {
            let pose = m.mesh.sample(t0, t1);
            m.candidates = particles
                .iter()
                .map(|p| {
                    // No candidates for a pinned particle, or one that moved more than
                    // `MAX_STEP_MOTION` (no query box).
                    let query =
                        query_box(p.prev_position.to_array(), p.position.to_array(), m.mesh.thickness);
                    match query.filter(|_| p.is_free()) {
                        Some(q) => (0..pose.boxes.len() as u32)
                            .filter(|&t| pose.boxes[t as usize].overlaps(&q))
                            .collect(),
                        None => Vec::new(),
                    }
                })
                .collect();
            m.side = particles
                .iter()
                .zip(&m.candidates)
                .map(|(p, c)| match nearest(&m.mesh, &pose.start, &pose.start_normals, c, p.prev_position) {
                    None => 0.0,
                    Some((q, _, _, n)) if (p.prev_position - q).dot(n) < 0.0 => -1.0,
                    Some(_) => 1.0,
                })
                .collect();
            m.pose = Some(pose);
        }
        self.depth.clear();
        self.depth.resize(particles.len() * self.meshes.len(), 0.0);
    }

    /// One contact pass over every particle and mesh; adds the pushes to the depths if
    /// `accumulate`.
    pub(crate) fn project_all(&mut self, particles: &mut [Particle], accumulate: bool) {
        let nm = self.meshes.len();
        for (i, p) in particles.iter_mut().enumerate() {
            for (j, m) in self.meshes.iter().enumerate() {
                if let Some((d, n, ..)) = m.signed(i, p.position) {
                    let value = d - m.mesh.thickness;
                    if value < 0.0 {
                        p.shift(n * -value);
                        if accumulate {
                            self.depth[i * nm + j] += -value;
                        }
                    }
                }
            }
        }
    }

    /// Coulomb friction for every particle and mesh that pushed it this step.
    pub(crate) fn friction_all(&self, particles: &mut [Particle]) {
        let nm = self.meshes.len();
        for (i, p) in particles.iter_mut().enumerate() {
            for (j, m) in self.meshes.iter().enumerate() {
                let depth = self.depth[i * nm + j];
                if depth <= 0.0 {
                    continue;
                }
                let Some((_, n, q, bary, t)) = m.signed(i, p.position) else { continue };
                let pose = m.pose.as_ref().expect("a step has begun");
                let mut r = p.position - p.prev_position;
                if pose.moving {
                    let [a, b, c] = m.mesh.triangles[t].map(|v| Vec3::from_array(pose.start[v as usize]));
                    r -= q - (a * bary[0] + b * bary[1] + c * bary[2]);
                }
                let tangential = r - n * r.dot(n);
                let length = tangential.dot(tangential).sqrt();
                let friction = m.mesh.friction;
                let share = if length > friction.static_coefficient * depth {
                    (friction.kinetic_coefficient * depth / length).min(1.0)
                } else {
                    1.0
                };
                p.shift(-(tangential * share));
            }
        }
    }

    /// Whether particle `i` at `x` is closer to some mesh than half its thickness (less 1 µm).
    pub(crate) fn is_deep(&self, i: usize, x: Vec3) -> bool {
        self.meshes.iter().any(|m| m.signed(i, x).is_some_and(|(d, ..)| d < 0.5 * m.mesh.thickness - 1e-6))
    }
}
