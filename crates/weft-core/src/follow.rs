//! Pins that follow animation: a cape's collar held by a moving character's shoulders, a curtain
//! hung from a moving rail.
//!
//! A cloth's pins may follow
//!
//! * **a keyframed path**: rigid keys ([`RigidKey`], positions linear, rotations slerp, held
//!   outside the keys). Each pin keeps its place in the path's frame at time 0:
//!   `x(t) = R(t)·R(0)ᵀ·(x_rest − c(0)) + c(t)`;
//! * **an analytic collider**: the same, with the collider's own keys;
//! * **a mesh collider**: each pin is attached to the triangle nearest to it at time 0 (ties: the
//!   lowest index), by its coordinates in the triangle's frame (`e₁` along the first edge, `n` the
//!   unit normal, `e₂ = n × e₁`, from the first corner), so it follows the triangle as the mesh
//!   deforms: `x(t) = a(t) + l₁·e₁(t) + l₂·e₂(t) + l₃·n(t)`. A pin on the surface stays on it;
//!   a pin off the surface keeps its offset. If the triangle collapses in some frame, its frame is
//!   undefined and the pin takes the world axes for that step (no NaN).
//!
//! Targets are computed in `f64` from the time alone and rounded to `f32` once ([`Followers::targets`]);
//! both solvers move the pins there after the prediction of every step, so a pin's velocity
//! (from positions) is its path's.

use crate::collider::{Pose, RigidKey, pose_at};
use crate::digest::{Digest, digest_debug};
use crate::mesh_collider::MeshCollider;

/// What a cloth's pins follow, as a scene says it.
#[derive(Debug, Clone, PartialEq)]
pub enum FollowDesc {
    /// The collider (analytic or mesh) of this name.
    Collider(String),
    /// A keyframed rigid path (strictly increasing times, see [`crate::collider::validate_keys`]).
    Keys(Vec<RigidKey>),
}

/// A pin carried rigidly by a path.
#[derive(Debug, Clone, PartialEq)]
struct RigidAnchor {
    particle: u32,
    path: u32,
    /// The pin in the path's frame, m.
    local: [f64; 3],
}

/// A pin attached to a mesh collider's triangle.
#[derive(Debug, Clone, PartialEq)]
struct SurfaceAnchor {
    particle: u32,
    mesh: u32,
    triangle: u32,
    /// The pin in the triangle's frame (`e₁`, `e₂`, `n`), m.
    local: [f64; 3],
}

/// Every following pin of a model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Followers {
    /// Paths (normalised rotations), one per following cloth or collider used.
    paths: Vec<Vec<RigidKey>>,
    rigid: Vec<RigidAnchor>,
    surface: Vec<SurfaceAnchor>,
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    std::array::from_fn(|i| a[i] - b[i])
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// `v/|v|`, or `None` below `1e-300`-ish lengths (no direction).
fn unit(v: [f64; 3]) -> Option<[f64; 3]> {
    let len = dot(v, v).sqrt();
    (len > 1e-150).then(|| v.map(|c| c / len))
}

/// The orthonormal frame `(e₁, e₂, n)` of a triangle, or `None` if it has no area.
fn triangle_frame([a, b, c]: [[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let e1 = unit(sub(b, a))?;
    let n = unit(cross(sub(b, a), sub(c, a)))?;
    Some([e1, cross(n, e1), n])
}

/// The point of triangle `[a, b, c]` closest to `p` (Ericson, *Real-Time Collision Detection*,
/// 5.1.5), in `f64`.
pub fn closest_point_on_triangle(p: [f64; 3], [a, b, c]: [[f64; 3]; 3]) -> [f64; 3] {
    let (ab, ac, ap) = (sub(b, a), sub(c, a), sub(p, a));
    let at = |s: f64, t: f64| -> [f64; 3] { std::array::from_fn(|i| a[i] + s * ab[i] + t * ac[i]) };
    let (d1, d2) = (dot(ab, ap), dot(ac, ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = sub(p, b);
    let (d3, d4) = (dot(ab, bp), dot(ac, bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    // Each division below has its exact-arithmetic denominator taken from the edges (`d1 − d3
    // = |ab|²`, ...), which does not cancel to 0 far from the triangle, and is clamped (NaN to
    // 0), so the point stays on the triangle.
    #[allow(clippy::manual_clamp)] // `clamp` keeps a NaN, which must become 0 here
    let unit = |v: f64| v.max(0.0).min(1.0);
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return at(unit(d1 / dot(ab, ab)), 0.0);
    }
    let cp = sub(p, c);
    let (d5, d6) = (dot(ab, cp), dot(ac, cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return at(0.0, unit(d2 / dot(ac, ac)));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let bc = sub(c, b);
        let w = unit((d4 - d3) / dot(bc, bc));
        return std::array::from_fn(|i| b[i] + w * bc[i]);
    }
    let n = cross(ab, ac);
    let area2 = dot(n, n);
    if area2.is_nan() || area2 < f64::MIN_POSITIVE {
        return a;
    }
    let v = unit(vb / area2);
    at(v, (vc / area2).max(0.0).min(1.0 - v))
}

/// What a cloth's following pins resolved to, for [`Followers::add`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Leader<'a> {
    /// Rigid keys (normalised rotations).
    Keys(&'a [RigidKey]),
    /// Mesh collider number `index`.
    Mesh(usize, &'a MeshCollider),
}

impl Digest for Followers {
    fn digest<H: std::hash::Hasher>(&self, h: &mut H) {
        let Followers { paths, rigid, surface } = self;
        digest_debug(paths, h);
        rigid.len().digest(h);
        for RigidAnchor { particle, path, local } in rigid {
            particle.digest(h);
            path.digest(h);
            local.digest(h);
        }
        surface.len().digest(h);
        for SurfaceAnchor { particle, mesh, triangle, local } in surface {
            particle.digest(h);
            mesh.digest(h);
            triangle.digest(h);
            local.digest(h);
        }
    }
}

impl Followers {
    /// Whether no pin follows anything.
    pub fn is_empty(&self) -> bool {
        self.rigid.is_empty() && self.surface.is_empty()
    }

    /// Number of following pins.
    pub fn len(&self) -> usize {
        self.rigid.len() + self.surface.len()
    }

    /// Makes `pins` (particle index, rest position in m) follow `leader`. Returns `false` (and adds
    /// nothing) if `leader` is a mesh with no triangle of non-zero area at time 0.
    pub(crate) fn add(&mut self, pins: &[(u32, [f32; 3])], leader: Leader<'_>) -> bool {
        match leader {
            Leader::Keys(keys) => {
                let path = self.paths.len() as u32;
                self.paths.push(keys.to_vec());
                let pose = pose_at(keys, 0.0);
                self.rigid.extend(pins.iter().map(|&(particle, x)| RigidAnchor {
                    particle,
                    path,
                    local: pose.apply_inverse(x.map(f64::from)),
                }));
                true
            }
            Leader::Mesh(index, mesh) => {
                type Placed = (usize, [[f64; 3]; 3], [[f64; 3]; 3]);
                let triangles: Vec<Placed> = (0..mesh.triangles.len())
                    .filter_map(|t| {
                        let corners = mesh.triangle_at(t, 0.0);
                        triangle_frame(corners).map(|frame| (t, corners, frame))
                    })
                    .collect();
                if triangles.is_empty() {
                    return false;
                }
                for &(particle, x) in pins {
                    let x = x.map(f64::from);
                    let mut best = (f64::INFINITY, 0);
                    for (k, (_, corners, _)) in triangles.iter().enumerate() {
                        let d = sub(x, closest_point_on_triangle(x, *corners));
                        if dot(d, d) < best.0 {
                            best = (dot(d, d), k);
                        }
                    }
                    let (t, corners, frame) = &triangles[best.1];
                    let r = sub(x, corners[0]);
                    self.surface.push(SurfaceAnchor {
                        particle,
                        mesh: index as u32,
                        triangle: *t as u32,
                        local: frame.map(|e| dot(r, e)),
                    });
                }
                true
            }
        }
    }

    /// Where every following pin is at time `t` (s): `(particle, position in m)`, paths' pins
    /// first, then the meshes', each in the order they were added.
    pub fn targets(&self, meshes: &[MeshCollider], t: f64) -> Vec<(u32, [f32; 3])> {
        let mut out = Vec::with_capacity(self.len());
        self.targets_into(meshes, t, &mut out);
        out
    }

    /// [`Followers::targets`] into `out` (cleared first), which keeps its capacity from step to
    /// step.
    pub fn targets_into(&self, meshes: &[MeshCollider], t: f64, out: &mut Vec<(u32, [f32; 3])>) {
        out.clear();
        // The anchors of one path are contiguous: each path's pose is taken once.
        let mut pose: Option<(u32, Pose)> = None;
        for a in &self.rigid {
            let p = match pose {
                Some((path, p)) if path == a.path => p,
                _ => {
                    let p = pose_at(&self.paths[a.path as usize], t);
                    pose = Some((a.path, p));
                    p
                }
            };
            out.push((a.particle, p.apply(a.local).map(|c| c as f32)));
        }
        for a in &self.surface {
            let corners = meshes[a.mesh as usize].triangle_at(a.triangle as usize, t);
            let frame =
                triangle_frame(corners).unwrap_or([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
            let x: [f64; 3] = std::array::from_fn(|i| {
                corners[0][i] + (0..3).map(|k| a.local[k] * frame[k][i]).sum::<f64>()
            });
            out.push((a.particle, x.map(|c| c as f32)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh_collider::MeshColliderDesc;

    #[test]
    fn closest_points_in_each_region() {
        let tri = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        let cases = [
            ([0.2, 0.2, 1.0], [0.2, 0.2, 0.0]),
            ([-1.0, -1.0, 0.0], [0.0, 0.0, 0.0]),
            ([2.0, -0.5, 0.0], [1.0, 0.0, 0.0]),
            ([0.5, -1.0, 3.0], [0.5, 0.0, 0.0]),
            ([1.0, 1.0, 0.0], [0.5, 0.5, 0.0]),
            ([-1.0, 0.5, 0.0], [0.0, 0.5, 0.0]),
        ];
        for (p, q) in cases {
            let got = closest_point_on_triangle(p, tri);
            assert!((0..3).all(|i| (got[i] - q[i]).abs() < 1e-12), "{p:?}: {got:?}");
        }
    }

    #[test]
    fn pins_ride_a_path_and_a_deforming_mesh() {
        let half = std::f32::consts::FRAC_1_SQRT_2;
        let keys = vec![
            RigidKey::at([1.0, 0.0, 0.0]),
            RigidKey { time: 1.0, position: [1.0, 2.0, 0.0], rotation: [0.0, 0.0, half, half] },
        ];
        let mut f = Followers::default();
        assert!(f.add(&[(3, [2.0, 0.0, 0.0])], Leader::Keys(&keys)));
        // Quarter turn about z around the moving origin: local (1, 0, 0) → world (1, 2, 0) + (0, 1, 0).
        let x = f.targets(&[], 1.0)[0].1;
        assert!((x[0] - 1.0).abs() < 1e-6 && (x[1] - 3.0).abs() < 1e-6, "{x:?}");
        assert_eq!(f.targets(&[], 0.0)[0], (3, [2.0, 0.0, 0.0]));

        // A triangle that slides up by 1 m and doubles its size: a pin 0.1 m above its middle
        // keeps its offset along the normal and its place in the frame.
        let desc = MeshColliderDesc {
            triangles: vec![[0, 1, 2]],
            frames: vec![
                vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]],
                vec![[0.0, 1.0, 0.0], [2.0, 1.0, 0.0], [0.0, 1.0, -2.0]],
            ],
            frame_interval: 1.0,
            ..MeshColliderDesc::default()
        };
        let mesh = MeshCollider::new(&desc).unwrap();
        let mut f = Followers::default();
        assert!(f.add(&[(0, [0.25, 0.1, -0.25])], Leader::Mesh(0, &mesh)));
        let x = f.targets(std::slice::from_ref(&mesh), 1.0)[0].1;
        assert!((0..3).all(|i| (x[i] - [0.25, 1.1, -0.25][i]).abs() < 1e-6), "{x:?}");
    }
}
