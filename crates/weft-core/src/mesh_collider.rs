//! Triangle-mesh colliders: a body's surface (a character, a table) handed over from an animation
//! package, static or animated.
//!
//! A mesh collider is a list of triangles over vertices whose positions are given per *frame*:
//! one frame (static), or several at times `frame_start + k·frame_interval` (s) read from a PC2
//! cache or an OBJ sequence with the same topology. Between two frames each vertex moves linearly;
//! before the first frame and after the last the mesh holds. On top of that, the whole mesh may be
//! carried by keyframed rigid transforms ([`RigidKey`], as for the analytic colliders):
//! `x_world = R(t)·x_frame(t) + c(t)`. Everything is computed in `f64` and rounded to `f32` once
//! ([`MeshCollider::sample`]), so the fast solver and the reference see the same vertices.
//!
//! The mesh is *thin*: it has no inside. A particle is kept at `thickness` (m, `> 0`: on the
//! surface itself a particle's side would be a matter of rounding) from the surface on
//! the side it was on at the start of the time step (its previous position decides), so a particle
//! that a fast motion carried through a triangle is pushed back to where it came from, not out of
//! the far side. A closed body works the same way: cloth that starts outside stays outside. The
//! side is one per particle and mesh (against the surface nearest at the start of the step):
//! separate sheets close together are best given as separate colliders (a particle between two
//! sheets that comes nearer to the other one within a step is taken to have crossed it).
//!
//! **Sides and pseudo-normals.** Which side of the surface a point is on is the sign of
//! `(x − q)·N`, with `q` its closest point on the mesh and `N` the *pseudo-normal* of the feature
//! `q` lies on (Bærentzen and Aanæs, 2005): the face's normal inside a triangle, the normalised sum
//! of its triangles' normals on an edge, and the angle-weighted sum of its triangles' normals at
//! a vertex ([`Normals`]). Two triangles that share the closest point agree on it, so the side
//! does not flip with which of them rounding makes nearest, and on a closed mesh the sign is the
//! true inside/outside.
//!
//! **Candidates.** Each step, every triangle gets its *swept box*: the box around its corners at
//! the start and at the end of the step. A particle at `x_prev` (start of the step) and `x`
//! (predicted) looks for contacts among the triangles whose swept box meets its *query box*: the
//! box around `x_prev` and `x`, grown by `2·thickness + |x − x_prev|` on every side
//! ([`query_box`]), which leaves room for the motion of the iterations (a particle that moved
//! more than [`MAX_STEP_MOTION`], 1000 km, in one step meets no mesh). The triangles are found
//! with a BVH (`weft_geometry::bvh`), built at the first step and refit (not rebuilt) at every
//! later one; the list is filtered by the exact box test and sorted, so it is exactly the
//! brute-force list whatever the tree looks like (the reference solver tests every triangle).
//!
//! **Reach.** The solver need not ask the BVH every step: a particle may keep the triangles of a
//! larger box, its query box grown by the mesh's [`Reach::margin`], and take its candidates from
//! those while the step's query box, grown by how far the mesh has moved since, still lies in the
//! larger one. How far the mesh has moved is measured from an *anchor*, the vertices at the end
//! of some earlier step: [`Reach::drift`] is the farthest any vertex of the step's pose (at its
//! start or its end) is from its place at the anchor, along any axis. A triangle's swept box now
//! lies within its swept box of any earlier step, grown by the sum of the two steps' drifts, so a
//! triangle whose box meets the query box now met the larger box then, and the candidates
//! taken from the kept ones are the BVH's, exactly. The anchor moves to the step's end when the
//! drift passes half the margin; each anchor has an [`Reach::epoch`] no other anchor of the
//! process had, and kept triangles count only under the anchor they were found under.

use std::sync::Arc;

use rayon::prelude::*;

use weft_geometry::Aabb;
use weft_geometry::bvh::BoxTree;

use crate::collider::{
    ColliderError, DEFAULT_THICKNESS, Friction, MAX_EXTENT, Pose, RigidKey, normalised_keys, pose_at,
    validate_contact,
};
use crate::digest::{Digest, digest_debug};
use crate::error::Rule;

/// A mesh collider as a scene describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshColliderDesc {
    /// Name, for messages.
    pub name: String,
    /// Triangles, as three vertex indices each (the same for every frame).
    pub triangles: Vec<[u32; 3]>,
    /// Vertex positions in m, one list per frame; every frame has the same vertex count.
    pub frames: Vec<Vec<[f32; 3]>>,
    /// Time of frame 0 in s (`≥ 0`).
    pub frame_start: f32,
    /// Time between frames in s (`> 0` when there is more than one frame).
    pub frame_interval: f32,
    /// Rigid keys carrying the whole mesh (one key: static); see [`crate::collider`].
    pub keys: Vec<RigidKey>,
    /// Contact thickness in m (`> 0`: a particle kept at 0 from a thin surface would have no
    /// side).
    pub thickness: f32,
    /// Friction coefficients.
    pub friction: Friction,
}

impl Default for MeshColliderDesc {
    /// No triangles, no frames, not moved, the default thickness, no friction.
    fn default() -> Self {
        MeshColliderDesc {
            name: String::new(),
            triangles: Vec::new(),
            frames: Vec::new(),
            frame_start: 0.0,
            frame_interval: 0.0,
            keys: vec![RigidKey::at([0.0; 3])],
            thickness: DEFAULT_THICKNESS,
            friction: Friction::default(),
        }
    }
}

impl MeshColliderDesc {
    /// Checks every rule: at least one triangle and one frame; every frame as long as frame 0
    /// (`frames[k]`); coordinates finite and within [`MAX_EXTENT`]; triangle corners in range and
    /// different (`triangles[i]`); frame times finite, the start `≥ 0` and the interval `> 0` when
    /// animated; a thickness `> 0`; and the rules of every collider (thickness, friction, keys).
    pub fn validate(&self) -> Result<(), ColliderError> {
        let fail = |field, index, rule| Err(ColliderError { field, index, rule });
        if self.thickness == 0.0 {
            // The side of a particle pushed onto the surface itself would be a matter of rounding.
            return fail("thickness", None, Rule::NotPositive { value: 0.0 });
        }
        if self.triangles.is_empty() {
            return fail("triangles", None, Rule::Zero);
        }
        let Some(first) = self.frames.first() else {
            return fail("frames", None, Rule::Zero);
        };
        let n = first.len();
        for (k, frame) in self.frames.iter().enumerate() {
            if frame.len() != n {
                return fail(
                    "frames",
                    Some(k),
                    Rule::LengthMismatch { len: frame.len(), expected: n, partner: "frame 0" },
                );
            }
            for v in frame {
                if let Some(c) = v.iter().find(|c| !c.is_finite()) {
                    return fail("frames", Some(k), Rule::NotFinite { value: c.to_string() });
                }
                if let Some(c) = v.iter().find(|c| c.abs() > MAX_EXTENT) {
                    return fail("frames", Some(k), too_large(*c));
                }
            }
        }
        for (i, t) in self.triangles.iter().enumerate() {
            if let Some(&v) = t.iter().find(|&&v| v as usize >= n) {
                return fail("triangles", Some(i), Rule::IndexOutOfRange { index: v as u64, len: n });
            }
            if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
                return fail("triangles", Some(i), Rule::DegenerateTriangle { a: t[0], b: t[1], c: t[2] });
            }
        }
        for (field, v) in [("frame_start", self.frame_start), ("frame_interval", self.frame_interval)] {
            if !v.is_finite() {
                return fail(field, None, Rule::NotFinite { value: v.to_string() });
            }
        }
        if self.frame_start < 0.0 {
            return fail("frame_start", None, Rule::Negative { value: self.frame_start as f64 });
        }
        if self.frames.len() > 1 && self.frame_interval <= 0.0 {
            return fail("frame_interval", None, Rule::NotPositive { value: self.frame_interval as f64 });
        }
        validate_contact(&self.keys, self.thickness, self.friction)
    }
}

fn too_large(v: f32) -> Rule {
    Rule::TooLarge {
        what: "collider coordinate (m)",
        requested: v.abs().min(u64::MAX as f32) as u64,
        limit: MAX_EXTENT as u64,
        hint: "colliders are limited to 1e9 m",
    }
}

/// The BVH of a mesh's swept triangle boxes, kept between steps so that it can be refit, and the
/// poses of the last steps. It is a cache: cloning a model, comparing two or printing one
/// ignores it.
#[derive(Default)]
struct Broadphase {
    tree: BoxTree,
    /// The last pose of a step in which the mesh stood still, with the rigid pose and frames
    /// (two frames and a weight) it was sampled at.
    still: Option<(Pose, FramesAt, Arc<MeshPose>)>,
    /// The time (s), vertices and pseudo-normals at the end of the last moving step.
    last_end: Option<(f64, Vec<[f32; 3]>, Normals)>,
    /// The vertices at the anchor (module docs, "Reach"), and the reach of the last step.
    anchor: Vec<[f32; 3]>,
    reach: Reach,
    /// Whether the last step's pose was the still one kept in `still`.
    last_still: bool,
}

/// How far a mesh has moved since its anchor (module docs, "Reach"), for the solver to keep a
/// particle's candidate triangles over several steps.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Reach {
    /// Names the anchor: no other anchor of this process has it (`0`: none yet).
    pub epoch: u64,
    /// The farthest any vertex of the step's pose, at its start or its end, is from its place at
    /// the anchor, along any axis, in m.
    pub drift: f64,
    /// How far beyond a particle's query box its kept triangles are found, in m.
    pub margin: f32,
}

/// The margin of a mesh's [`Reach`] in thicknesses: the larger, the more triangles a particle
/// keeps and the longer it keeps them.
pub const REACH_MARGIN: f32 = 1.0;

/// The farthest (m, along any axis) a point of `b` is from the point of `a` with its index.
fn farthest(a: &[[f32; 3]], b: &[[f32; 3]]) -> f64 {
    a.iter()
        .zip(b)
        .flat_map(|(p, q)| (0..3).map(move |k| (f64::from(p[k]) - f64::from(q[k])).abs()))
        .fold(0.0, f64::max)
}

impl Clone for Broadphase {
    fn clone(&self) -> Self {
        Broadphase::default()
    }
}

impl PartialEq for Broadphase {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Broadphase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Broadphase")
    }
}

/// A validated mesh collider of a model. Its `Debug` form shows the triangles and frames as
/// counts and a 64-bit FNV-1a hash of their bits (a body's animation can hold millions of
/// numbers), so it still tells two meshes apart (a bake's checkpoint fingerprint hashes it).
#[derive(Clone, PartialEq)]
pub struct MeshCollider {
    /// Name, for messages.
    pub name: String,
    /// Triangles (vertex indices).
    pub triangles: Vec<[u32; 3]>,
    /// Vertex positions per frame, in m.
    pub frames: Vec<Vec<[f32; 3]>>,
    /// Time of frame 0 in s.
    pub frame_start: f32,
    /// Time between frames in s.
    pub frame_interval: f32,
    /// Rigid keys with normalised rotations.
    pub keys: Vec<RigidKey>,
    /// Contact thickness in m.
    pub thickness: f32,
    /// Friction coefficients.
    pub friction: Friction,
    /// Per triangle, the number of its edge from corner `k` to corner `k + 1` (mod 3): shared
    /// edges have one number.
    edges: Vec<[u32; 3]>,
    edge_count: usize,
    broadphase: Broadphase,
}

impl std::fmt::Debug for MeshCollider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        let words = self.triangles.iter().flatten().copied();
        let words = words.chain(self.frames.iter().flatten().flatten().map(|c| c.to_bits()));
        for word in words {
            for byte in word.to_le_bytes() {
                hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        f.debug_struct("MeshCollider")
            .field("name", &self.name)
            .field("triangles", &self.triangles.len())
            .field("vertices", &self.vertex_count())
            .field("frames", &self.frames.len())
            .field("geometry_fnv1a", &format_args!("{hash:016x}"))
            .field("frame_start", &self.frame_start)
            .field("frame_interval", &self.frame_interval)
            .field("keys", &self.keys)
            .field("thickness", &self.thickness)
            .field("friction", &self.friction)
            .finish()
    }
}

/// Two frames of a mesh's animation and the weight of the second (`0` to `1`).
type FramesAt = (usize, usize, f64);

/// A mesh collider's vertices for one time step, in m, and its triangles' swept boxes.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshPose {
    /// Vertex positions at the start of the step.
    pub start: Vec<[f32; 3]>,
    /// Vertex positions at the end of the step.
    pub end: Vec<[f32; 3]>,
    /// Per triangle, the box around its corners at the start and the end.
    pub boxes: Vec<Aabb>,
    /// Whether any vertex moves during the step.
    pub moving: bool,
    /// Pseudo-normals at the start of the step.
    pub start_normals: Normals,
    /// Pseudo-normals at the end of the step.
    pub end_normals: Normals,
}

/// The unit pseudo-normals of a mesh's features at one moment (module docs); a feature whose
/// sum has no length (a collapsed triangle, an edge between opposite faces) gets `[0, 0, 0]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Normals {
    /// Per triangle: `(b − a) × (c − a)`, normalised.
    pub face: Vec<[f32; 3]>,
    /// Per edge (see [`MeshCollider::triangle_edges`]): the sum of its triangles' normals.
    pub edge: Vec<[f32; 3]>,
    /// Per vertex: the sum of its triangles' normals, each weighted by the triangle's angle there.
    pub vertex: Vec<[f32; 3]>,
}

impl Normals {
    /// The pseudo-normal of a feature of triangle `t`: `feature` 0–2 is its corner `k`, 3–5 its
    /// edge from corner `k − 3` to the next, 6 its face.
    pub fn of(&self, edges: &[[u32; 3]], triangles: &[[u32; 3]], t: usize, feature: u8) -> [f32; 3] {
        match feature {
            0..=2 => self.vertex[triangles[t][feature as usize] as usize],
            3..=5 => self.edge[edges[t][feature as usize - 3] as usize],
            _ => self.face[t],
        }
    }
}

fn unit64(v: [f64; 3]) -> [f32; 3] {
    let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if len > 1e-300 { v.map(|c| (c / len) as f32) } else { [0.0; 3] }
}

/// The pseudo-normals of `triangles` over `vertices` (`edge_count` edges numbered by `edges`):
/// each triangle's unit normal and corner angles in parallel on the current rayon pool (see
/// [`POSE_TASK`]), then summed into its vertices and edges in triangle order, one after the other
/// (the same sums for any pool).
fn normals(vertices: &[[f32; 3]], triangles: &[[u32; 3]], edges: &[[u32; 3]], edge_count: usize) -> Normals {
    let mut faces: Vec<([f32; 3], [f64; 3])> = Vec::with_capacity(triangles.len());
    triangles
        .par_iter()
        .with_min_len(POSE_TASK)
        .map(|t| face_and_angles(vertices, t))
        .collect_into_vec(&mut faces);
    let mut edge = vec![[0.0f64; 3]; edge_count];
    let mut vertex = vec![[0.0f64; 3]; vertices.len()];
    for ((t, e), (n, angles)) in triangles.iter().zip(edges).zip(&faces) {
        let n64 = n.map(f64::from);
        for k in 0..3 {
            for i in 0..3 {
                vertex[t[k] as usize][i] += angles[k] * n64[i];
                edge[e[k] as usize][i] += n64[i];
            }
        }
    }
    Normals {
        face: faces.into_iter().map(|(n, _)| n).collect(),
        edge: edge.into_iter().map(unit64).collect(),
        vertex: vertex.into_iter().map(unit64).collect(),
    }
}

/// Triangle `t`'s unit normal `(b − a) × (c − a)` over `vertices` and its angle at each corner
/// (rad, `0` where an edge has no length), in `f64`.
fn face_and_angles(vertices: &[[f32; 3]], t: &[u32; 3]) -> ([f32; 3], [f64; 3]) {
    let p = t.map(|v| vertices[v as usize].map(f64::from));
    let d = |i: usize, j: usize| -> [f64; 3] { std::array::from_fn(|k| p[j][k] - p[i][k]) };
    let (u, w) = (d(0, 1), d(0, 2));
    let n = unit64([u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]]);
    // Each side's length once: side `k` runs from corner `k` to the next; a corner's other side
    // is the previous one backwards, whose squares are the same numbers.
    let sides: [f64; 3] = std::array::from_fn(|k| {
        let a = d(k, (k + 1) % 3);
        (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
    });
    let angles = std::array::from_fn(|k| {
        let (a, b) = (d(k, (k + 1) % 3), d(k, (k + 2) % 3));
        let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        let (la, lb) = (sides[k], sides[(k + 2) % 3]);
        if la * lb > 0.0 { (dot / (la * lb)).clamp(-1.0, 1.0).acos() } else { 0.0 }
    });
    (n, angles)
}

/// Vertices or triangles per parallel task of a pose's sampling: a body of a few thousand
/// triangles, sampled every time step while the cloth's threads wait, is cut into a few tasks
/// per thread.
const POSE_TASK: usize = 256;

impl Digest for MeshCollider {
    /// Its geometry, animation and contact settings; its edge numbers and its broad phase are
    /// made from the triangles and frames (and the broad phase is refitted as the bake steps).
    fn digest<H: std::hash::Hasher>(&self, h: &mut H) {
        let MeshCollider {
            name,
            triangles,
            frames,
            frame_start,
            frame_interval,
            keys,
            thickness,
            friction,
            edges: _,
            edge_count: _,
            broadphase: _,
        } = self;
        name.digest(h);
        triangles.digest(h);
        frames.digest(h);
        frame_start.digest(h);
        frame_interval.digest(h);
        digest_debug(keys, h);
        thickness.digest(h);
        digest_debug(friction, h);
    }
}

impl MeshCollider {
    /// A validated mesh collider from its description (rotations normalised).
    pub fn new(desc: &MeshColliderDesc) -> Result<Self, ColliderError> {
        desc.validate()?;
        let mut numbers = std::collections::HashMap::new();
        let edges = desc
            .triangles
            .iter()
            .map(|t| {
                std::array::from_fn(|k| {
                    let (a, b) = (t[k], t[(k + 1) % 3]);
                    let next = numbers.len() as u32;
                    *numbers.entry((a.min(b), a.max(b))).or_insert(next)
                })
            })
            .collect();
        Ok(MeshCollider {
            edges,
            edge_count: numbers.len(),
            name: desc.name.clone(),
            triangles: desc.triangles.clone(),
            frames: desc.frames.clone(),
            frame_start: desc.frame_start,
            frame_interval: desc.frame_interval,
            keys: normalised_keys(&desc.keys),
            thickness: desc.thickness,
            friction: desc.friction,
            broadphase: Broadphase::default(),
        })
    }

    /// Per triangle, the numbers of its three edges (corner `k` to corner `k + 1`), for
    /// [`Normals::of`].
    pub fn triangle_edges(&self) -> &[[u32; 3]] {
        &self.edges
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.frames[0].len()
    }

    /// Whether the mesh moves at all (more than one frame or more than one key).
    pub fn is_animated(&self) -> bool {
        self.frames.len() > 1 || self.keys.len() > 1
    }

    /// The two frames around time `t` (s) and the weight of the second.
    fn frames_at(&self, t: f64) -> FramesAt {
        let last = self.frames.len() - 1;
        if last == 0 {
            return (0, 0, 0.0);
        }
        let s = (t - self.frame_start as f64) / self.frame_interval as f64;
        if s <= 0.0 {
            (0, 0, 0.0)
        } else if s >= last as f64 {
            (last, last, 0.0)
        } else {
            let k = (s.floor() as usize).min(last - 1);
            (k, k + 1, s - k as f64)
        }
    }

    /// The position of vertex `v` at time `t` (s), in m, in `f64`, given the rigid pose at `t`.
    fn vertex(&self, pose: &Pose, (a, b, s): (usize, usize, f64), v: usize) -> [f64; 3] {
        let (p, q) = (self.frames[a][v], self.frames[b][v]);
        pose.apply(std::array::from_fn(|i| p[i] as f64 + (q[i] as f64 - p[i] as f64) * s))
    }

    /// Every vertex at time `t` (s), in m.
    ///
    /// In parallel on the current rayon pool (each vertex on its own: the same for any pool).
    pub fn vertices_at(&self, t: f64) -> Vec<[f32; 3]> {
        let (pose, frames) = (pose_at(&self.keys, t), self.frames_at(t));
        let vertex = |v| self.vertex(&pose, frames, v).map(|c| c as f32);
        (0..self.vertex_count()).into_par_iter().with_min_len(POSE_TASK).map(vertex).collect()
    }

    /// The three corners of triangle `tri` at time `t` (s), in m, in `f64`.
    pub fn triangle_at(&self, tri: usize, t: f64) -> [[f64; 3]; 3] {
        let (pose, frames) = (pose_at(&self.keys, t), self.frames_at(t));
        self.triangles[tri].map(|v| self.vertex(&pose, frames, v as usize))
    }

    /// Whether the mesh is in the same place at `t0` and `t1` (s): the same rigid pose and the
    /// same frames, held or between the same two at the same weight.
    fn still(&self, t0: f64, t1: f64) -> bool {
        !self.is_animated()
            || (pose_at(&self.keys, t0) == pose_at(&self.keys, t1) && {
                let ((a0, b0, s0), (a1, b1, s1)) = (self.frames_at(t0), self.frames_at(t1));
                a0 == b0 && a1 == b1 && a0 == a1 || (a0, b0, s0) == (a1, b1, s1)
            })
    }

    /// The mesh for the time step from `t0` to `t1` (s).
    pub fn sample(&self, t0: f64, t1: f64) -> MeshPose {
        self.sample_from(t0, t1, None)
    }

    /// [`MeshCollider::sample`], given the vertices and pseudo-normals at `t0` if they are known
    /// (the end of the previous step).
    fn sample_from(&self, t0: f64, t1: f64, known_start: Option<(Vec<[f32; 3]>, Normals)>) -> MeshPose {
        let end = self.vertices_at(t1);
        let (start, known_normals) = if self.still(t0, t1) {
            (end.clone(), None)
        } else {
            match known_start {
                Some((vertices, normals)) => (vertices, Some(normals)),
                None => (self.vertices_at(t0), None),
            }
        };
        let boxes = self
            .triangles
            .par_iter()
            .with_min_len(POSE_TASK)
            .map(|&[a, b, c]| {
                let [a, b, c] = [a, b, c].map(|v| v as usize);
                Aabb::around([start[a], end[a], start[b], end[b], start[c], end[c]])
            })
            .collect();
        let moving = start != end;
        let normals = |v: &[[f32; 3]]| normals(v, &self.triangles, &self.edges, self.edge_count);
        let end_normals = normals(&end);
        let start_normals = match known_normals {
            _ if !moving => end_normals.clone(),
            Some(n) => n,
            None => normals(&start),
        };
        MeshPose { start, end, boxes, moving, start_normals, end_normals }
    }

    /// [`MeshCollider::sample`] for the solver's step from `t0` to `t1` (s), with the BVH refit
    /// to it ([`MeshCollider::refit`]). A mesh that stands still over the step in the same place
    /// as in the last such step is not sampled again, and a moving one takes its start from the
    /// end of the previous step when that ended at `t0` (the same numbers, computed once). A
    /// still pose is shared with the cache, not copied.
    pub fn prepare(&mut self, t0: f64, t1: f64) -> Arc<MeshPose> {
        let still = self.still(t0, t1);
        let (pose, again) = if still {
            let key = (pose_at(&self.keys, t1), self.frames_at(t1));
            match &self.broadphase.still {
                Some((p, f, pose)) if (*p, *f) == key => (Arc::clone(pose), true),
                _ => {
                    let pose = Arc::new(self.sample(t0, t1));
                    self.broadphase.still = Some((key.0, key.1, Arc::clone(&pose)));
                    (pose, false)
                }
            }
        } else {
            let known = self.broadphase.last_end.take().filter(|(t, ..)| *t == t0).map(|(_, v, n)| (v, n));
            let pose = self.sample_from(t0, t1, known);
            self.broadphase.last_end = Some((t1, pose.end.clone(), pose.end_normals.clone()));
            (Arc::new(pose), false)
        };
        self.refit(&pose);
        // The still pose of the last step again: its drift is the same.
        if !(again && self.broadphase.last_still) {
            self.follow(&pose);
        }
        self.broadphase.last_still = still;
        pose
    }

    /// The [`Reach`] of the last step [`MeshCollider::prepare`]d (an epoch of `0` before the
    /// first).
    pub fn reach(&self) -> Reach {
        self.broadphase.reach
    }

    /// Measures `pose`'s drift from the anchor, moving the anchor to its end first when the
    /// drift would pass half the margin (or there is none).
    fn follow(&mut self, pose: &MeshPose) {
        let b = &mut self.broadphase;
        let margin = REACH_MARGIN * self.thickness;
        let drift = |anchor: &[[f32; 3]]| farthest(anchor, &pose.start).max(farthest(anchor, &pose.end));
        let kept = b.reach.epoch != 0 && b.anchor.len() == pose.end.len();
        let mut d = if kept { drift(&b.anchor) } else { f64::INFINITY };
        if d > 0.5 * f64::from(margin) {
            b.anchor.clone_from(&pose.end);
            b.reach.epoch = crate::self_collision::DataKey::fresh().get();
            // The end is the anchor now: the start alone is away from it.
            d = farthest(&b.anchor, &pose.start);
        }
        b.reach = Reach { drift: d, margin, ..b.reach };
    }

    /// Brings the BVH up to `pose`'s boxes: built the first time, refit afterwards (unless the
    /// boxes have not changed).
    pub fn refit(&mut self, pose: &MeshPose) {
        self.broadphase.tree.fit(&pose.boxes);
    }

    /// The triangles whose swept box in `pose` meets the box `query`, sorted, appended to `out`.
    /// Uses the BVH if [`MeshCollider::refit`] has been called with `pose`, otherwise tests every
    /// triangle; the answer is the same.
    pub fn candidates(&self, pose: &MeshPose, query: &Aabb, out: &mut Vec<u32>) {
        self.broadphase.tree.query(&pose.boxes, query, out);
    }
}

/// The farthest a particle may move in one step and still meet a mesh, in m. Only hostile input
/// gets there; beyond it the products of the closest-point test could overflow `f32`.
pub const MAX_STEP_MOTION: f32 = 1e6;

/// The query box of a particle at `prev` at the start of the step and `x` after the prediction,
/// for a collider of thickness `thickness` (m): the box around both, grown by
/// `2·thickness + |x − prev|`; `None` if it moved more than [`MAX_STEP_MOTION`] (or not finitely).
pub fn query_box(prev: [f32; 3], x: [f32; 3], thickness: f32) -> Option<Aabb> {
    let d: [f32; 3] = std::array::from_fn(|i| x[i] - prev[i]);
    let motion = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
    if motion.is_nan() || motion > MAX_STEP_MOTION {
        return None;
    }
    let grow = 2.0 * thickness + motion;
    Some(Aabb::new(
        std::array::from_fn(|i| prev[i].min(x[i]) - grow),
        std::array::from_fn(|i| prev[i].max(x[i]) + grow),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quad() -> MeshColliderDesc {
        MeshColliderDesc {
            triangles: vec![[0, 1, 2], [0, 2, 3]],
            frames: vec![vec![[-1.0, 0.0, -1.0], [1.0, 0.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 0.0, 1.0]]],
            ..MeshColliderDesc::default()
        }
    }

    #[test]
    fn bad_meshes_name_their_key() {
        let field = |d: MeshColliderDesc| {
            let e = d.validate().unwrap_err();
            (e.field, e.index)
        };
        let mut grown = quad();
        grown.frame_interval = 0.1;
        grown.frames.push(vec![[0.0; 3]; 5]);
        assert_eq!(field(grown), ("frames", Some(1)), "a frame with another vertex count");
        assert_eq!(field(MeshColliderDesc { triangles: vec![[0, 1, 4]], ..quad() }), ("triangles", Some(0)));
        assert_eq!(field(MeshColliderDesc { triangles: vec![[0, 1, 1]], ..quad() }), ("triangles", Some(0)));
        assert_eq!(field(MeshColliderDesc { thickness: -1.0, ..quad() }), ("thickness", None));
        let mut still = quad();
        still.frames.push(still.frames[0].clone());
        assert_eq!(field(still), ("frame_interval", None), "two frames need an interval");
        assert!(quad().validate().is_ok());
    }

    #[test]
    fn frames_interpolate_and_hold() {
        let mut d = quad();
        d.frames.push(d.frames[0].iter().map(|v| [v[0], v[1] + 1.0, v[2]]).collect());
        d.frame_start = 1.0;
        d.frame_interval = 0.5;
        let m = MeshCollider::new(&d).unwrap();
        assert_eq!(m.vertices_at(0.0)[0][1], 0.0, "held before frame 0");
        assert_eq!(m.vertices_at(1.25)[0][1], 0.5);
        assert_eq!(m.vertices_at(9.0)[0][1], 1.0, "held after the last frame");
        let pose = m.sample(1.0, 1.25);
        assert!(pose.moving);
        assert_eq!(pose.boxes[0], Aabb::new([-1.0, 0.0, -1.0], [1.0, 0.5, 1.0]));
    }

    #[test]
    fn the_debug_form_tells_geometries_apart_in_a_few_words() {
        let a = MeshCollider::new(&quad()).unwrap();
        let mut d = quad();
        d.frames[0][2][1] = 1e-7;
        let b = MeshCollider::new(&d).unwrap();
        assert_eq!(format!("{a:?}"), format!("{:?}", MeshCollider::new(&quad()).unwrap()));
        assert_ne!(format!("{a:?}"), format!("{b:?}"), "one coordinate moved");
        assert!(format!("{a:?}").contains("geometry_fnv1a"));
    }

    #[test]
    fn prepared_poses_are_the_sampled_ones() {
        // Still before 0.1 s, moving by frames and keys until 0.3 s, still afterwards: the caches
        // of `prepare` (still poses, the previous end as the next start) change nothing.
        let mut d = quad();
        d.frames.push(d.frames[0].iter().map(|v| [v[0], v[1] + 1.0, v[2] * 2.0]).collect());
        d.frame_start = 0.1;
        d.frame_interval = 0.2;
        d.keys = vec![
            RigidKey { time: 0.1, ..RigidKey::at([0.0; 3]) },
            RigidKey { time: 0.3, position: [1.0, 0.0, 0.0], rotation: [0.0, 0.3, 0.0, 1.0] },
        ];
        let mut m = MeshCollider::new(&d).unwrap();
        let (plain, h) = (m.clone(), 1.0 / 60.0);
        let mut t = 0.0f64;
        for step in 0..30 {
            let pose = m.prepare(t, t + h);
            assert_eq!(*pose, plain.sample(t, t + h), "step {step}");
            t += h;
        }
    }

    #[test]
    fn bvh_candidates_are_the_brute_force_ones() {
        // A strip of triangles, moving, queried with boxes all along it, before and after refits.
        let n = 40;
        let mut frame = Vec::new();
        for i in 0..=n {
            frame.push([i as f32 * 0.1, 0.0, 0.0]);
            frame.push([i as f32 * 0.1, 0.0, 0.1]);
        }
        let triangles: Vec<[u32; 3]> = (0..n as u32)
            .flat_map(|i| [[2 * i, 2 * i + 2, 2 * i + 1], [2 * i + 1, 2 * i + 2, 2 * i + 3]])
            .collect();
        let moved: Vec<[f32; 3]> = frame.iter().map(|v| [v[0], (v[0] * 3.0).sin(), v[2]]).collect();
        let desc = MeshColliderDesc {
            triangles,
            frames: vec![frame, moved],
            frame_interval: 1.0,
            ..Default::default()
        };
        let mut m = MeshCollider::new(&desc).unwrap();
        let plain = m.clone();
        for step in 0..10 {
            let (t0, t1) = (step as f64 * 0.1, step as f64 * 0.1 + 0.1);
            let pose = m.sample(t0, t1);
            m.refit(&pose);
            for q in 0..50 {
                let x = q as f32 * 0.09;
                let query = query_box([x, 0.3, 0.05], [x + 0.01, 0.2, 0.05], 0.01).unwrap();
                let (mut fast, mut slow) = (Vec::new(), Vec::new());
                m.candidates(&pose, &query, &mut fast);
                plain.candidates(&pose, &query, &mut slow);
                assert_eq!(fast, slow, "step {step}, query {q}");
            }
        }
    }
}
