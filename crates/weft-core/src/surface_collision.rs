//! Surface self-collision (`self_collision = "triangles"`): thin cloth whose triangles keep a
//! thickness between them and never pass through each other, at any vertex spacing.
//!
//! A cloth in this mode gives its particles a thickness `h` (m) and a friction coefficient `μ`
//! (dimensionless); a pair of features takes the larger of each over its four particles.
//! Particles of every cloth in the mode collide with each other, across cloths too. The features
//! are the cloths' triangles, their unique edges and their vertices:
//!
//! * a **vertex–triangle** pair: a vertex and a triangle it is not a corner of;
//! * an **edge–edge** pair: two edges that share no vertex.
//!
//! # One step (solved in `weft-kernels`' `surface_collision`, and its brute-force twin in
//! `weft-reference`)
//!
//! 1. **Contacts**, after the prediction. A broad phase over the swept boxes of the features
//!    (from the start of the step to the prediction, the first box padded by
//!    [`SEARCH_REACH`]`·h_max`) gives candidate pairs; [`SurfaceCollision::vertex_triangle_contact`]
//!    and [`SurfaceCollision::edge_edge_contact`] keep those that can come within `SEARCH_REACH·h`
//!    and fix each one's closest points (as weights of its four particles) and its **normal**,
//!    from the positions at the start of the step: the side the features were on before they
//!    moved, so that a pair that crossed during the prediction is pushed back, not through.
//! 2. **Projection**, each iteration: every contact whose gap along its normal is under `h` is
//!    projected to `h` (an inequality constraint of compliance 0), then its tangential slip in
//!    the step is cut by up to `μ ×` that push (Coulomb friction in positions). A contact whose
//!    free particles carry little of its weight (a vertex on a triangle near its pinned corners,
//!    with the vertex pinned too) would fling them by the gap over that weight: no particle is
//!    moved farther than [`MAX_PUSH`] times the gap by one projection. Contacts are
//!    projected one after another in a fixed order (vertex–triangle by vertex then triangle,
//!    then edge–edge by edge index), so the result does not depend on the thread count.
//! 3. **Guard**, after everything else moved the particles: every pair is checked over its
//!    motion in the step (`weft_geometry::proximity::may_touch`, with the gap [`GUARD_SCALE`]`·h_min`);
//!    the free particles of a pair that may touch go back to where they were at the start of the
//!    step (with no displacement, so no velocity), and the check runs again until no pair may
//!    touch (after [`MAX_GUARD_ROUNDS`] rounds every moving free particle goes back). A state free
//!    of crossings stays free of them: two triangles can only begin to cross
//!    where a vertex meets a triangle or an edge meets an edge. Pins moved by a path are never
//!    moved back; a pair with only pinned particles moving is counted and left.
//!
//! # The thickness rule
//! `0 < h ≤ ` [`MAX_THICKNESS_SCALE`]` ×` the cloth's shortest rest edge. In a flat mesh of
//! well-shaped triangles a vertex is about `0.7 ×` an edge from the far side of its
//! neighbouring triangles; a thickness that reaches that far would hold the cloth's own rest shape
//! apart (the contacts fight the stretch constraints, and the cloth locks).

use weft_geometry::Aabb;
use weft_geometry::proximity::{self, P, PairKind};

use crate::digest::{Digest, digest_debug};
use crate::error::{BuildError, Rule, widen};
use crate::particles::RECORD;
use crate::self_collision::{DataKey, SWITCH_FIELD, SelfCollisionDesc, THICKNESS_FIELD};

/// The largest thickness, as a multiple of the cloth's shortest rest edge (module docs).
pub const MAX_THICKNESS_SCALE: f32 = 0.5;

/// A contact is made for a pair that can come within `SEARCH_REACH × h` in the step (its
/// distance at the start less its relative motion in the prediction): the margin covers the
/// motion of the iterations.
pub const SEARCH_REACH: f32 = 2.0;

/// The guard's gap, as a multiple of the smallest thickness: a pair that may come closer than
/// that in a step is moved back.
pub const GUARD_SCALE: f32 = 0.1;

/// The farthest one projection of a contact moves a particle, as a multiple of the contact's gap
/// (module docs). With every particle free and of one mass a projection moves none farther than
/// the gap, and with the vertex pinned none farther than 3 times it, so the cap leaves those as
/// they are.
pub const MAX_PUSH: f32 = 4.0;

/// Guard rounds before every moving free particle taking part goes back at once (module docs).
pub const MAX_GUARD_ROUNDS: u32 = 16;

/// A particle record: `[x, y, z, w]` (m, and inverse mass in 1/kg).
pub type Record = [f32; RECORD];

/// The surface self-collision data of a model: the features of the cloths taking part and each
/// particle's thickness and friction (`0` thickness: not taking part).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SurfaceCollision {
    triangles: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    vertices: Vec<u32>,
    thickness: Vec<f32>,
    friction: Vec<f32>,
    edge_length_sum: f64,
    min_thickness: f32,
    max_thickness: f32,
    /// See [`SurfaceCollision::key`].
    key: DataKey,
}

/// The box around the positions of `particles` in `prev` and in `now` less `shift`, grown by
/// `pad` (m) on every side. With one `shift` for every feature (a translation common to the step,
/// see [`common_shift`]) the boxes hold the features' paths relative to a frame that moves with
/// it, which changes no distance between them. Grown by `pad` later ([`Aabb::grown`]), a box
/// made with no pad has the same bits.
#[inline]
pub fn swept_box(particles: &[u32], prev: &[Record], now: &[Record], shift: [f32; 3], pad: f32) -> Aabb {
    let mut b = Aabb::new([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for &i in particles {
        let (p, n) = (prev[i as usize], now[i as usize]);
        for r in [[p[0], p[1], p[2]], [n[0] - shift[0], n[1] - shift[1], n[2] - shift[2]]] {
            for (k, c) in r.into_iter().enumerate() {
                b.min[k] = b.min[k].min(c);
                b.max[k] = b.max[k].max(c);
            }
        }
    }
    b.grown(pad)
}

/// A contact of one step between two features: the gap `g = Σ_k w_k (x_k − x_0)` (m) of its
/// particles' positions, along `normal`, is kept at least `thickness`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// The vertex then the triangle's corners, or the first edge's ends then the second's.
    pub particles: [u32; 4],
    /// `[1, −wa, −wb, −wc]` (the closest point's barycentric weights) or
    /// `[1 − s, s, −(1 − t), −t]` (the closest points' parameters on the edges): they sum to 0,
    /// and `Σ w_k x_k` is the vector from the second feature's closest point to the first's.
    pub weights: [f32; 4],
    /// Unit vector from the second feature to the first at the start of the step.
    pub normal: [f32; 3],
    /// Distance kept in m.
    pub thickness: f32,
    /// Friction coefficient (dimensionless).
    pub friction: f32,
}

/// A contact's push along its normal, capped so that no particle moves farther than
/// [`MAX_PUSH`] times the gap (module docs). `scale` holds each particle's `w_k·inv_k` (its
/// weight times its inverse mass), `gap < 0` is the contact's gap (m) and `denom = Σ w_k² inv_k`
/// is positive. The push moves particle `k` by `scale[k] · push` along the normal; the friction
/// that follows moves it by `−scale[k] · cut.of(f)` along the slip, for
/// `f = min(μ·(−gap)/|slip|, 1)`.
///
/// The push is `−gap/denom` times the cap `min(1, MAX_PUSH·(−gap) / (max|scale|·(−gap/denom)))`
/// and the cut `f/denom` times the cap. Where one of those overflows `f32` — the free particles
/// carry almost none of the contact's weight, and `denom` is subnormal — the same moves are made
/// from `scale` divided by its largest magnitude `m` (and `denom` by `m`): the push
/// `min(−gap·m/denom, MAX_PUSH·(−gap))`, the cut `f · min(m/denom, MAX_PUSH)`, which a minimum
/// keeps finite (a pinned particle's `0 × ∞` made every position NaN). Elsewhere the values are
/// those of the first form, bit for bit.
#[inline]
pub fn capped_push(scale: &mut [f32; 4], gap: f32, denom: f32) -> (f32, Cut) {
    let most = scale.iter().fold(0.0f32, |m, s| m.max(s.abs()));
    let ratio = -gap / denom;
    let moved = most * ratio;
    if moved.is_finite() && (1.0 / denom).is_finite() {
        let cap = if moved > MAX_PUSH * -gap { MAX_PUSH * -gap / moved } else { 1.0 };
        return (ratio * cap, Cut::Capped { denom, cap });
    }
    scale.iter_mut().for_each(|s| *s /= most);
    let denom = denom / most;
    ((-gap / denom).min(MAX_PUSH * -gap), Cut::Scaled { factor: (1.0 / denom).min(MAX_PUSH) })
}

/// The friction cut of a contact's projection ([`capped_push`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cut {
    /// `f / denom · cap`.
    Capped {
        /// `Σ w_k² inv_k`.
        denom: f32,
        /// The push's cap (`0 < cap ≤ 1`).
        cap: f32,
    },
    /// `f · factor`, the scales divided by their largest magnitude.
    Scaled {
        /// `min(m/denom, MAX_PUSH)`.
        factor: f32,
    },
}

impl Cut {
    /// The cut for the friction factor `f = min(μ·(−gap)/|slip|, 1)`.
    #[inline]
    pub fn of(self, f: f32) -> f32 {
        match self {
            Cut::Capped { denom, cap } => f / denom * cap,
            Cut::Scaled { factor } => f * factor,
        }
    }
}

/// The mean motion of `vertices` from `prev` to `now` in m (summed in `f64`, in order), a
/// translation the broad phases take out of every box (see [`swept_box`]).
pub fn common_shift(vertices: &[u32], prev: &[Record], now: &[Record]) -> [f32; 3] {
    let mut sum = [0.0f64; 3];
    for &i in vertices {
        for k in 0..3 {
            sum[k] += now[i as usize][k] as f64 - prev[i as usize][k] as f64;
        }
    }
    let n = vertices.len().max(1) as f64;
    sum.map(|s| (s / n) as f32)
}

fn point(r: Record) -> P {
    [r[0] as f64, r[1] as f64, r[2] as f64]
}

impl Digest for SurfaceCollision {
    fn digest<H: std::hash::Hasher>(&self, h: &mut H) {
        let SurfaceCollision {
            triangles,
            edges,
            vertices,
            thickness,
            friction,
            edge_length_sum,
            min_thickness,
            max_thickness,
            key,
        } = self;
        triangles.digest(h);
        edges.digest(h);
        vertices.digest(h);
        thickness.digest(h);
        friction.digest(h);
        edge_length_sum.digest(h);
        min_thickness.digest(h);
        max_thickness.digest(h);
        digest_debug(key, h);
    }
}

impl SurfaceCollision {
    /// True when no particle takes part.
    pub fn is_empty(&self) -> bool {
        self.vertices.is_empty()
    }

    /// A number that names this data (as `SelfCollision::key`): each cloth appended takes a key
    /// no other data of this process had, a clone keeps it, and equality and `Debug` leave it
    /// out. The solver keeps its candidate pairs between steps while the key stays the same.
    pub fn key(&self) -> u64 {
        self.key.get()
    }

    /// The triangles of the cloths taking part (model particle indices).
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// Their unique edges, each `[a, b]` with `a < b`, ascending.
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }

    /// The particles taking part, ascending.
    pub fn vertices(&self) -> &[u32] {
        &self.vertices
    }

    /// Thickness of each particle in m (`0`: not taking part).
    pub fn thickness(&self) -> &[f32] {
        &self.thickness
    }

    /// Friction coefficient of each particle (dimensionless).
    pub fn friction(&self) -> &[f32] {
        &self.friction
    }

    /// The largest thickness in m (`0` when empty).
    pub fn max_thickness(&self) -> f32 {
        self.max_thickness
    }

    /// The pad in m of the first feature's box in the contact search: [`SEARCH_REACH`]`·h_max`.
    pub fn search_pad(&self) -> f32 {
        SEARCH_REACH * self.max_thickness
    }

    /// The guard's gap in m: [`GUARD_SCALE`]`·h_min`.
    pub fn guard_gap(&self) -> f32 {
        GUARD_SCALE * self.min_thickness
    }

    /// The mean rest length of the edges in m (`0` when empty): the scale of a broad phase's cell.
    pub fn mean_edge(&self) -> f32 {
        if self.edges.is_empty() { 0.0 } else { (self.edge_length_sum / self.edges.len() as f64) as f32 }
    }

    /// The larger thickness and friction of the four particles.
    fn pair_material(&self, particles: [u32; 4]) -> (f32, f32) {
        let h = particles.iter().map(|&i| self.thickness[i as usize]).fold(0.0, f32::max);
        let mu = particles.iter().map(|&i| self.friction[i as usize]).fold(0.0, f32::max);
        (h, mu)
    }

    /// A contact from the gap vector `g` at the start (m), if the pair can come within
    /// `SEARCH_REACH·h` in the step from `prev` to `now` (module docs).
    fn contact(
        &self,
        kind: PairKind,
        particles: [u32; 4],
        weights: [f64; 4],
        g: P,
        (prev, now): (&[Record], &[Record]),
    ) -> Option<Contact> {
        let moves = particles.map(|i| {
            let (a, b) = (point(prev[i as usize]), point(now[i as usize]));
            [b[0] - a[0], b[1] - a[1], b[2] - a[2]]
        });
        let distance = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
        let (h, mu) = self.pair_material(particles);
        // No contact from features too close for a normal, or whose distance is not a number.
        if distance.is_nan()
            || distance <= 1e-9
            || distance - proximity::relative_motion(kind, moves) >= (SEARCH_REACH * h) as f64
        {
            return None;
        }
        Some(Contact {
            particles,
            weights: weights.map(|w| w as f32),
            normal: g.map(|c| (c / distance) as f32),
            thickness: h,
            friction: mu,
        })
    }

    /// The contact of vertex `v` and triangle `t` for a step from `prev` to `now` (the
    /// prediction), or `None` when they cannot come near (module docs). `v` must not be a corner
    /// of `t`.
    pub fn vertex_triangle_contact(
        &self,
        v: u32,
        t: [u32; 3],
        prev: &[Record],
        now: &[Record],
    ) -> Option<Contact> {
        let particles = [v, t[0], t[1], t[2]];
        let start = particles.map(|i| point(prev[i as usize]));
        let w = proximity::closest_on_triangle(start[0], [start[1], start[2], start[3]]);
        let g: P = std::array::from_fn(|k| {
            start[0][k] - (w[0] * start[1][k] + w[1] * start[2][k] + w[2] * start[3][k])
        });
        self.contact(PairKind::VertexTriangle, particles, [1.0, -w[0], -w[1], -w[2]], g, (prev, now))
    }

    /// The contact of edges `a` and `b` (sharing no particle) for a step from `prev` to `now`,
    /// or `None` when they cannot come near.
    pub fn edge_edge_contact(
        &self,
        a: [u32; 2],
        b: [u32; 2],
        prev: &[Record],
        now: &[Record],
    ) -> Option<Contact> {
        let particles = [a[0], a[1], b[0], b[1]];
        let s = particles.map(|i| point(prev[i as usize]));
        let ((u, v), _) = proximity::closest_between_segments([s[0], s[1]], [s[2], s[3]]);
        let g: P = std::array::from_fn(|k| {
            (s[0][k] + u * (s[1][k] - s[0][k])) - (s[2][k] + v * (s[3][k] - s[2][k]))
        });
        self.contact(PairKind::EdgeEdge, particles, [1.0 - u, u, -(1.0 - v), -v], g, (prev, now))
    }

    /// Whether the boxes of the pair's two features meet (see [`swept_box`]; the first
    /// feature's box grown by `pad`): the broad phases' test, which every pair they pass meets.
    pub fn boxes_meet(
        kind: PairKind,
        p: [u32; 4],
        prev: &[Record],
        now: &[Record],
        shift: [f32; 3],
        pad: f32,
    ) -> bool {
        let split = if kind == PairKind::VertexTriangle { 1 } else { 2 };
        let a = swept_box(&p[..split], prev, now, shift, pad);
        a.overlaps(&swept_box(&p[split..], prev, now, shift, 0.0))
    }

    /// The guard's test (module docs): whether the pair `particles` of `kind` may come within
    /// the guard's gap moving from `prev` to `now`.
    pub fn may_touch(&self, kind: PairKind, particles: [u32; 4], prev: &[Record], now: &[Record]) -> bool {
        let start = particles.map(|i| point(prev[i as usize]));
        let end = particles.map(|i| point(now[i as usize]));
        proximity::may_touch(kind, start, end, self.guard_gap() as f64)
    }

    /// Checks a cloth's surface self-collision; [`SurfaceCollision::commit`] appends it.
    /// `positions` are the cloth's finite rest positions in m, `triangles` its triangles (local
    /// indices, checked), `edges` its unique edges; `desc` is `None` for a cloth not taking part.
    pub(crate) fn prepare(
        &self,
        positions: &[[f32; 3]],
        triangles: &[[u32; 3]],
        edges: &[[u32; 2]],
        desc: Option<&SelfCollisionDesc>,
        err: impl Fn(&'static str, Rule) -> BuildError,
    ) -> Result<PendingSurface, BuildError> {
        let n = positions.len();
        let Some(desc) = desc else {
            return Ok(PendingSurface {
                n,
                desc: None,
                triangles: Vec::new(),
                edges: Vec::new(),
                length: 0.0,
            });
        };
        desc.check(&err)?;
        let h = desc.thickness;
        if triangles.is_empty() {
            return Err(err(
                SWITCH_FIELD,
                Rule::MissingPrerequisite { feature: "self_collision = \"triangles\"", needs: "triangles" },
            ));
        }
        let lengths = edges
            .iter()
            .map(|e| crate::topology::distance(positions[e[0] as usize], positions[e[1] as usize]));
        let shortest = lengths.clone().fold(f32::INFINITY, f32::min);
        let max = MAX_THICKNESS_SCALE * shortest;
        if h > max {
            return Err(err(
                THICKNESS_FIELD,
                Rule::AboveMaximum {
                    value: widen(h),
                    max: widen(max),
                    why: "half the cloth's shortest rest edge; a thicker layer reaches across the cloth's own \
                          triangles at rest and locks it (or use self_collision = \"particles\")",
                },
            ));
        }
        let offset = self.thickness.len() as u32;
        Ok(PendingSurface {
            n,
            desc: Some(*desc),
            triangles: triangles.iter().map(|t| t.map(|i| i + offset)).collect(),
            edges: edges.iter().map(|e| [e[0].min(e[1]) + offset, e[0].max(e[1]) + offset]).collect(),
            length: lengths.map(f64::from).sum(),
        })
    }

    /// Appends a cloth prepared by [`SurfaceCollision::prepare`] (with nothing appended since).
    pub(crate) fn commit(&mut self, pending: PendingSurface) {
        let PendingSurface { n, desc, triangles, mut edges, length } = pending;
        let offset = self.thickness.len() as u32;
        self.key = DataKey::fresh();
        let Some(desc) = desc else {
            self.thickness.extend(std::iter::repeat_n(0.0, n));
            self.friction.extend(std::iter::repeat_n(0.0, n));
            return;
        };
        edges.sort_unstable();
        edges.dedup();
        self.triangles.extend(triangles);
        self.edges.extend(edges);
        self.edge_length_sum += length;
        self.thickness.extend(std::iter::repeat_n(desc.thickness, n));
        self.friction.extend(std::iter::repeat_n(desc.friction, n));
        self.min_thickness =
            if self.vertices.is_empty() { desc.thickness } else { self.min_thickness.min(desc.thickness) };
        self.max_thickness = self.max_thickness.max(desc.thickness);
        self.vertices.extend(offset..offset + n as u32);
    }
}

/// A cloth's surface self-collision, checked, not yet appended.
#[derive(Debug)]
pub(crate) struct PendingSurface {
    n: usize,
    desc: Option<SelfCollisionDesc>,
    triangles: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    length: f64,
}
