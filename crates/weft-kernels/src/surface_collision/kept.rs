//! The candidate pairs kept between steps ([`Kept`]) and the proofs that a kept pair is too far
//! for a contact in a step ([`far_apart`], [`apart_through_step`]).
//!
//! **Clusters.** Both proofs, and the test that the kept pairs still hold every pair a step
//! needs ([`Kept::covers`]), bound how much nearer two points have come since the anchor. A
//! cloth that drapes moves by metres per second in one part against another, but two points a
//! few edges apart move nearly alike. So the vertices are grouped at the anchor into clusters
//! (the cells, [`CLUSTER_EDGES`] mean edges wide, of a grid over their anchor positions), and
//! each bound takes two parts: how far a cluster's points have moved apart from one another, and how
//! far two clusters have moved apart. Two points of one cluster (or of clusters moving alike)
//! then bound each other by their own spread, however far the cloth has moved.

use weft_core::surface_collision::{SEARCH_REACH, SurfaceCollision};
use weft_geometry::Aabb;
use weft_geometry::proximity::{self, PairKind};
use wide::f64x4;

use super::{FeatureBoxes, Pair, particles};
use crate::records::Record;

/// How much farther than a step's search the kept candidate pairs reach, as a multiple of the
/// mean edge: how far two points may come nearer than they were at the anchor, relative to
/// each other, before the pairs are found again. A wider margin finds them less often and
/// scans more of them in every step; since a rebuild tests its edges in lanes, 0.4 costs least
/// (docs/performance.md, "Finding the kept pairs in lanes").
pub const KEEP_MARGIN: f32 = 0.4;

/// The side of a cluster's cell, as a multiple of the mean edge (module docs).
const CLUSTER_EDGES: f32 = 4.0;

/// The most cells of the clusters' grid: a wider cloth gets wider cells.
const MAX_CELLS: usize = 1 << 16;

/// How much farther apart than the reach plus two features' extents two clusters may be and
/// still be compared in [`Kept::covers`], as a multiple of the mean edge: clusters farther
/// apart are bounded by the spread of the whole cloth.
const NEAR_EDGES: f32 = 2.0;

/// What the kept candidate pairs were found for: every pair whose boxes at `anchor` (each the
/// features' positions, the first grown by the search pad plus the margin) meet. While no two
/// points of a step's start and prediction, less the drift since, have come nearer than at the
/// anchor by more than the margin (along an axis that parts them by at most the reach), every
/// pair the step's own broad phase would find is among them ([`Kept::covers`]). The pairs
/// themselves are held by the search's chunks (`super::search::Chunk`), each the pairs of its
/// share of the features.
#[derive(Debug, Default)]
pub(super) struct Kept {
    pub(super) anchor: Vec<Record>,
    /// The sum of the shifts of the steps since the anchor, this step's excluded (m).
    pub(super) drift: [f64; 3],
    /// The data they were found for (`SurfaceCollision::key`); 0: none.
    pub(super) key: u64,
    /// Per particle, its cluster (set for the vertices).
    cluster: Vec<u32>,
    /// Per cluster, the box of its vertices at the anchor (m).
    cluster_boxes: Vec<Aabb>,
    /// The pairs of clusters (the first not above the second) whose boxes are nearer than
    /// `near` along every axis.
    near_pairs: Vec<(u32, u32)>,
    /// How far apart (m) along some axis two clusters not in `near_pairs` are at least.
    near: f32,
    /// The largest extent of a feature's box along an axis at the anchor (m).
    extent: f32,
}

/// Per cluster, the least and the most displacement (m, per axis) of its points since the
/// anchor, less the drift: the scratch of [`Kept::covers`] and [`Kept::wander`].
#[derive(Debug, Default)]
pub(super) struct Spread {
    low: Vec<[f32; 3]>,
    high: Vec<[f32; 3]>,
}

/// Each particle's wander in a step ([`Kept::wander`]), each cluster's centre, and per cluster
/// what bounds the wander of the kept pairs it is home to ([`Wander::run_bound`]).
#[derive(Debug, Default)]
pub(super) struct Wander {
    /// Per particle: how far it is at the step's start from its anchor less the drift and its
    /// cluster's centre, and how far it moves in the step (m).
    particles: Vec<[f32; 2]>,
    /// Per cluster, the middle of its points' displacements at the step's start (m).
    centres: Vec<[f32; 3]>,
    /// The largest magnitude of a coordinate of the drift, the centres, the step's start and
    /// the anchor (m): what the slack's rounding is sized from, with the step's end.
    most_at_start: f32,
    /// Per cluster `c`, with `N(c)` the clusters near it and itself: the most wander and motion
    /// of a point of `N(c)`, and the farthest centre of `N(c)` from `c`'s (m; a `NaN` counted
    /// as infinite; see [`Kept::bound_wander`]).
    near: Vec<[f32; 3]>,
    /// The most motion of a point in the step (m, a `NaN` counted as infinite).
    most_motion: f32,
    /// Per cluster, the most wander and motion of its points (`Kept::bound_wander`'s scratch).
    most: Vec<[f32; 2]>,
    spread: Spread,
}

impl Kept {
    /// Anchors the kept pairs at `prev` (m) for `sc`, whose features' boxes there are `boxes`:
    /// the anchor, no drift, and the clusters.
    pub(super) fn reset(&mut self, sc: &SurfaceCollision, prev: &[Record], boxes: &FeatureBoxes) {
        self.anchor.clear();
        self.anchor.extend_from_slice(prev);
        self.drift = [0.0; 3];
        self.key = sc.key();
        let span = |b: &Aabb| (0..3).fold(0.0f32, |m, k| m.max(b.max[k] - b.min[k]));
        let features = boxes.triangles.iter().chain(&boxes.edges);
        self.extent = features.fold(0.0, |m, b| m.max(span(b)));
        self.near =
            sc.search_pad() + KEEP_MARGIN * sc.mean_edge() + 2.0 * self.extent + NEAR_EDGES * sc.mean_edge();
        self.cluster.clear();
        self.cluster.resize(prev.len(), 0);
        self.cluster_boxes.clear();
        self.near_pairs.clear();
        if let Some(cells) = Cells::new(sc, prev) {
            self.group(sc, prev, cells);
        }
    }

    /// Puts each vertex in the cluster of its cell of `cells` at `prev` (m), then lists the
    /// near pairs of clusters.
    fn group(&mut self, sc: &SurfaceCollision, prev: &[Record], mut cells: Cells) {
        for &v in sc.vertices() {
            let x = prev[v as usize];
            let at = cells.index(cells.of(x));
            let cell = &mut cells.id[at];
            if *cell == u32::MAX {
                *cell = self.cluster_boxes.len() as u32;
                self.cluster_boxes.push(point_box(x));
            }
            self.cluster[v as usize] = *cell;
            take_in(&mut self.cluster_boxes[*cell as usize], x);
        }
        // The clusters whose boxes are nearer than `near` lie within that many cells and one.
        let r = ((self.near / cells.side) as usize).saturating_add(1);
        for (c, b) in self.cluster_boxes.iter().enumerate() {
            let (lo, hi) = (
                cells.of([b.min[0], b.min[1], b.min[2], 0.0]),
                cells.of([b.max[0], b.max[1], b.max[2], 0.0]),
            );
            let range = |k: usize| lo[k].saturating_sub(r)..=(hi[k] + r).min(cells.n[k] - 1);
            for i in range(0) {
                for j in range(1) {
                    for l in range(2) {
                        let d = cells.id[cells.index([i, j, l])];
                        if d != u32::MAX
                            && d as usize >= c
                            && apart(b, &self.cluster_boxes[d as usize]) < self.near
                        {
                            self.near_pairs.push((c as u32, d));
                        }
                    }
                }
            }
        }
    }

    /// Fills `spread` with each cluster's least and most displacement of the vertices'
    /// positions in each of `times` (positions, less a shift), from the anchor less the drift.
    fn spread(&self, sc: &SurfaceCollision, times: &[(&[Record], [f32; 3])], spread: &mut Spread) {
        let c = self.drift.map(|d| d as f32);
        let n = self.cluster_boxes.len();
        spread.low.clear();
        spread.low.resize(n, [f32::INFINITY; 3]);
        spread.high.clear();
        spread.high.resize(n, [f32::NEG_INFINITY; 3]);
        // A cluster's bounds are held in registers over a run of its vertices (stored back when
        // the run ends): the same `min`s and `max`s in the same order, without a round trip
        // through memory for each.
        let (mut lows, mut highs) = (RunOf::new(&mut spread.low), RunOf::new(&mut spread.high));
        for &i in sc.vertices() {
            let (i, a) = (i as usize, self.anchor[i as usize]);
            let cl = self.cluster[i] as usize;
            let (low, high) = (lows.of(cl), highs.of(cl));
            for &(x, shift) in times {
                for k in 0..3 {
                    let d = x[i][k] - shift[k] - c[k] - a[k];
                    low[k] = low[k].min(d);
                    high[k] = high[k].max(d);
                }
            }
        }
        lows.end();
        highs.end();
    }

    /// Whether the kept pairs hold every pair whose boxes meet, grown by at most the search pad,
    /// in a step from `prev` to `now` less `shift` (m). Two points, of clusters `c` and `d`,
    /// come nearer along an axis by at most the most their displacements differ along it; a
    /// pair not kept was farther apart along some axis than the reach at the anchor, and at
    /// least as far as its points' clusters' boxes. So it cannot meet while, for every two
    /// clusters and axis, that difference is under the margin plus how much farther than the
    /// reach their boxes were apart (with 1 % and a micrometre for rounding).
    pub(super) fn covers(
        &self,
        sc: &SurfaceCollision,
        prev: &[Record],
        now: &[Record],
        shift: [f32; 3],
        spread: &mut Spread,
    ) -> bool {
        if self.key == 0 || self.key != sc.key() || self.anchor.len() != prev.len() {
            return false;
        }
        let margin = KEEP_MARGIN * sc.mean_edge();
        let (budget, reach) = (0.99 * margin - 1e-6, sc.search_pad() + margin);
        self.spread(sc, &[(prev, [0.0; 3]), (now, shift)], spread);
        let (low, high) = (&spread.low, &spread.high);
        let range = [0, 1, 2].map(|k| {
            let lo = low.iter().fold(f32::INFINITY, |m, l| m.min(l[k]));
            high.iter().fold(f32::NEG_INFINITY, |m, h| m.max(h[k])) - lo
        });
        if range.iter().all(|&r| r <= budget) {
            return true;
        }
        // Clusters farther apart than `near` along an axis: features of theirs were that far
        // apart less their extents along the axis that parts them most, which the spread of
        // the whole cloth must not close by more than the margin.
        let far = self.near - 2.0 * self.extent - reach;
        let whole = range.iter().all(|&r| r <= budget + far);
        let boxes = &self.cluster_boxes;
        whole
            && self.near_pairs.iter().all(|&(c, d)| {
                let (c, d) = (c as usize, d as usize);
                (0..3).all(|k| {
                    let apart = (boxes[d].min[k] - boxes[c].max[k]).max(boxes[c].min[k] - boxes[d].max[k]);
                    let closer = (high[c][k] - low[d][k]).max(high[d][k] - low[c][k]);
                    closer <= budget + (apart - reach).max(0.0)
                })
            })
    }

    /// A lower bound of the distance between the features of `pair` at the anchor (m):
    /// `weft_geometry::proximity::separation`, rounded down to `f32`.
    pub(super) fn floor(&self, sc: &SurfaceCollision, pair: Pair) -> f32 {
        round_down(proximity::separation(pair.0, self.anchor_points(sc, pair)))
    }

    /// [`Kept::floor`] of four pairs of one kind at once (`proximity::separations`), the same
    /// bits.
    pub(super) fn floors(&self, sc: &SurfaceCollision, pairs: &[Pair; 4]) -> [f32; 4] {
        let mut lanes = [[[0.0f64; 4]; 3]; 4];
        for (l, &pair) in pairs.iter().enumerate() {
            for (i, point) in self.anchor_points(sc, pair).iter().enumerate() {
                for k in 0..3 {
                    lanes[i][k][l] = point[k];
                }
            }
        }
        let d = proximity::separations(pairs[0].0, lanes.map(|point| point.map(f64x4::from)));
        d.to_array().map(round_down)
    }

    /// The points of `pair` at the anchor (m).
    fn anchor_points(&self, sc: &SurfaceCollision, pair: Pair) -> [[f64; 3]; 4] {
        particles(sc, pair).map(|i| {
            let a = self.anchor[i as usize];
            [a[0], a[1], a[2]].map(f64::from)
        })
    }

    /// Each particle's wander in a step from `prev` to `now` (m, into `wander`): how far it is
    /// at `prev` from its anchor less the drift and its cluster's centre
    /// ([`Kept::wander_at_start`]), and how far it moves to `now` ([`Kept::wander_in_step`]).
    /// Returns the slack of [`far_apart`] that covers their rounding (m).
    pub(super) fn wander(
        &self,
        sc: &SurfaceCollision,
        prev: &[Record],
        now: &[Record],
        wander: &mut Wander,
    ) -> f32 {
        self.wander_at_start(sc, prev, wander);
        self.wander_in_step(sc, prev, now, wander)
    }

    /// The first half of [`Kept::wander`], which depends on the step's start alone (so that
    /// the guard, whose step starts where the search's did, takes it as the search left it):
    /// the clusters' centres at `prev` and each particle's distance from its anchor less the
    /// drift and its cluster's centre (m).
    fn wander_at_start(&self, sc: &SurfaceCollision, prev: &[Record], wander: &mut Wander) {
        self.spread(sc, &[(prev, [0.0; 3])], &mut wander.spread);
        let (low, high) = (&wander.spread.low, &wander.spread.high);
        wander.centres.clear();
        wander.centres.extend(low.iter().zip(high).map(|(l, h)| [0, 1, 2].map(|k| 0.5 * (l[k] + h[k]))));
        wander.particles.resize(prev.len(), [0.0; 2]);
        let c = self.drift.map(|d| d as f32);
        let mut most = c.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        most = wander.centres.iter().flatten().fold(most, |m, x| m.max(x.abs()));
        for &i in sc.vertices() {
            let (x, a) = (prev[i as usize], self.anchor[i as usize]);
            let centre = wander.centres[self.cluster[i as usize] as usize];
            let off = [0, 1, 2].map(|k| x[k] - c[k] - a[k] - centre[k]);
            wander.particles[i as usize][0] = length(off);
            // The particle's own largest first, then one `max` into the running one: the same
            // maximum (of magnitudes, no sign of zero to tell apart), without a chain of six.
            most = most.max(largest_magnitude([x[0], x[1], x[2], a[0], a[1], a[2]]));
        }
        wander.most_at_start = most;
    }

    /// The second half of [`Kept::wander`], after [`Kept::wander_at_start`] of the same start
    /// `prev`: each particle's motion to `now` and the clusters' bounds (m). Returns the slack.
    pub(super) fn wander_in_step(
        &self,
        sc: &SurfaceCollision,
        prev: &[Record],
        now: &[Record],
        wander: &mut Wander,
    ) -> f32 {
        let mut most = wander.most_at_start;
        for &i in sc.vertices() {
            let (x, y) = (prev[i as usize], now[i as usize]);
            let step = [0, 1, 2].map(|k| y[k] - x[k]);
            wander.particles[i as usize][1] = length(step);
            most = most.max(largest_magnitude([y[0], y[1], y[2]]));
        }
        self.bound_wander(sc, wander);
        // The rounding of the differences and lengths above, four particles' worth, with room.
        64.0 * f32::EPSILON * (most + sc.search_pad())
    }

    /// The home of a kept pair whose first feature's particles are `first`: the cluster of its
    /// first particle, with [`SPLIT`] set when another of them lies in another cluster. Every
    /// particle of a kept pair lies in its home or a cluster near it (in `near_pairs`): the
    /// pair's features were within the reach of each other at the anchor, so any two of its
    /// points were within the reach plus two extents along every axis, which is less than
    /// `near`.
    pub(super) fn home(&self, first: &[u32]) -> u32 {
        let home = self.cluster[first[0] as usize];
        let split = first.iter().any(|&i| self.cluster[i as usize] != home);
        home | if split { SPLIT } else { 0 }
    }

    /// Fills `wander.near` and `wander.most_motion` from its particles and centres. A `NaN`
    /// counts as infinite (`max` would pass over it), so it proves nothing.
    fn bound_wander(&self, sc: &SurfaceCollision, wander: &mut Wander) {
        let most = &mut wander.most;
        most.clear();
        most.resize(self.cluster_boxes.len(), [0.0; 2]);
        let up = |x: f32| if x.is_nan() { f32::INFINITY } else { x };
        for &i in sc.vertices() {
            let (c, w) = (self.cluster[i as usize] as usize, wander.particles[i as usize].map(up));
            most[c] = [most[c][0].max(w[0]), most[c][1].max(w[1])];
        }
        // Per cluster: the most wander and motion of `N(c)`, and the farthest centre from its.
        let near = &mut wander.near;
        near.clear();
        near.extend(most.iter().map(|m| [m[0], m[1], 0.0]));
        for &(c, d) in &self.near_pairs {
            let (c, d) = (c as usize, d as usize);
            let (x, y) = (wander.centres[c], wander.centres[d]);
            let far = up(length([0, 1, 2].map(|k| x[k] - y[k])));
            for (e, f) in [(c, d), (d, c)] {
                near[e] = [near[e][0].max(most[f][0]), near[e][1].max(most[f][1]), near[e][2].max(far)];
            }
        }
        wander.most_motion = most.iter().fold(0.0, |m, c| m.max(c[1]));
    }
}

/// A run of updates to one element of an array, held in a register: [`RunOf::of`] hands out
/// element `i`, storing the previous run's back first when `i` differs; [`RunOf::end`] stores
/// the last. The element's updates are the same, in the same order, as made in place.
struct RunOf<'a, T: Copy> {
    array: &'a mut [T],
    /// The element held, and its value.
    held: Option<(usize, T)>,
}

impl<'a, T: Copy> RunOf<'a, T> {
    fn new(array: &'a mut [T]) -> Self {
        RunOf { array, held: None }
    }

    /// Element `i`, to update.
    #[inline]
    fn of(&mut self, i: usize) -> &mut T {
        if self.held.is_none_or(|(j, _)| j != i) {
            self.end();
            self.held = Some((i, self.array[i]));
        }
        &mut self.held.as_mut().expect("held above").1
    }

    /// Stores the element held back.
    #[inline]
    fn end(&mut self) {
        if let Some((j, value)) = self.held.take() {
            self.array[j] = value;
        }
    }
}

/// The largest `|x|` of `values`, `NaN` passed over as `f32::max` does (`NaN` if all are): a
/// balanced tree of `max`, so that a loop folding it into a running maximum waits on one `max`
/// per element instead of a chain through every value.
#[inline]
fn largest_magnitude<const N: usize>(values: [f32; N]) -> f32 {
    let mut v = values.map(f32::abs);
    let mut width = N;
    while width > 1 {
        let half = width.div_ceil(2);
        for k in 0..width / 2 {
            v[k] = v[k].max(v[k + half]);
        }
        width = half;
    }
    v[0]
}

/// 1 and the share of a bound of sums of wanders that covers their rounding.
const ROUNDING: f32 = 1.0 + 1e-4;

/// The bit of a home ([`Kept::home`]) that says the first feature's particles lie in more than
/// one cluster (clusters number at most [`MAX_CELLS`], far below it).
const SPLIT: u32 = 1 << 31;

impl Wander {
    /// At least [`pair_wander`]'s sum of any kept pair of the run of a first feature whose
    /// particles are `first`, at home in `home` ([`Kept::home`]) (m): the most wander and motion
    /// of those particles (the pair's first feature's, exactly), the most wander and motion in
    /// `N(home)` (its second feature's points lie there), and how far apart two of the pair's
    /// points' clusters' centres can be: at most the farthest centre of `N(home)` from home's
    /// when the first feature lies in its home alone, else twice that, all with 1/10,000 for
    /// rounding. (The centres' distances are the same `f32` lengths of the same differences, up
    /// to sign, in both.)
    #[inline]
    pub(super) fn run_bound(&self, home: u32, first: &[u32]) -> f32 {
        let up = |x: f32| if x.is_nan() { f32::INFINITY } else { x };
        let own = first.iter().fold([0.0f32; 2], |m, &i| {
            let w = self.particles[i as usize];
            [m[0].max(up(w[0])), m[1].max(up(w[1]))]
        });
        let [wander, motion, far] = self.near[(home & !SPLIT) as usize];
        let apart = if home & SPLIT == 0 { far } else { 2.0 * far };
        (own[0] + own[1] + wander + motion + apart) * ROUNDING
    }
}

/// The grid of the clusters: cells of a side of [`CLUSTER_EDGES`] mean edges (wider where that
/// would make more than [`MAX_CELLS`]) over the vertices' box, each with its cluster.
struct Cells {
    min: [f32; 3],
    /// m.
    side: f32,
    n: [usize; 3],
    /// Per cell, its cluster (`u32::MAX`: none yet).
    id: Vec<u32>,
}

impl Cells {
    /// The grid over the vertices of `sc` at `x` (m); `None` for no vertex.
    fn new(sc: &SurfaceCollision, x: &[Record]) -> Option<Cells> {
        let bounds = bounds(sc.vertices(), x)?;
        let extent = [0, 1, 2].map(|k| bounds.max[k] - bounds.min[k]);
        let mut side = (CLUSTER_EDGES * sc.mean_edge()).max(f32::MIN_POSITIVE);
        let cells = |side: f32| extent.map(|e| ((e / side) as usize).min(MAX_CELLS - 1) + 1);
        while cells(side).iter().product::<usize>() > MAX_CELLS {
            side *= 1.25;
        }
        let n = cells(side);
        Some(Cells { min: bounds.min, side, n, id: vec![u32::MAX; n.iter().product()] })
    }

    /// The cell of point `x` (m), clamped to the grid.
    fn of(&self, x: Record) -> [usize; 3] {
        [0, 1, 2].map(|k| (((x[k] - self.min[k]) / self.side) as usize).min(self.n[k] - 1))
    }

    /// The index into `id` of cell `c`.
    fn index(&self, c: [usize; 3]) -> usize {
        (c[0] * self.n[1] + c[1]) * self.n[2] + c[2]
    }
}

/// How far apart boxes `a` and `b` are along the axis that parts them most (m; at most 0 when
/// they meet).
fn apart(a: &Aabb, b: &Aabb) -> f32 {
    (0..3).fold(f32::NEG_INFINITY, |m, k| m.max(b.min[k] - a.max[k]).max(a.min[k] - b.max[k]))
}

/// The box of the positions of `vertices` in `x` (m); `None` for no vertex.
fn bounds(vertices: &[u32], x: &[Record]) -> Option<Aabb> {
    let mut b = point_box(x[*vertices.first()? as usize]);
    vertices.iter().for_each(|&v| take_in(&mut b, x[v as usize]));
    Some(b)
}

/// The box of the one point `p` (m).
fn point_box(p: Record) -> Aabb {
    Aabb::new([p[0], p[1], p[2]], [p[0], p[1], p[2]])
}

/// Grows `b` to hold the point `p` (m).
fn take_in(b: &mut Aabb, p: Record) {
    for (k, &x) in p[..3].iter().enumerate() {
        b.min[k] = b.min[k].min(x);
        b.max[k] = b.max[k].max(x);
    }
}

/// Whether a pair whose features were at least `floor` apart at the anchor (m), and whose
/// [`pair_wander`] in a step is `[off, step]` (with the slack of [`Kept::wander`]), provably
/// makes no contact in the step: two points have
/// since come nearer by at most their wanders from their clusters' centres plus how far the
/// centres moved apart (the common drift moves every point alike, so leaves distances as they
/// are), and the distance at the step's start less the motion of the step is what the contact
/// test compares with the search's reach
/// (`SurfaceCollision::vertex_triangle_contact`), at most `SEARCH_REACH` times the largest
/// thickness.
pub(super) fn far_apart(sc: &SurfaceCollision, [off, step]: [f32; 2], floor: f32, slack: f32) -> bool {
    floor - (off + step) > SEARCH_REACH * sc.max_thickness() + slack
}

/// Whether the guard may pass over `pair` (its floor as in [`far_apart`] and the first half of
/// its [`pair_wander`], `NaN` where unknown; the wander of the step the guard checks, whose first
/// half is the search's): its features stay farther apart than the guard's gap throughout
/// the step, by a margin that each step of `weft_geometry::proximity::may_touch`'s conservative
/// advancement crosses at least 1/100 of, so that its answer, within its
/// `MAX_ADVANCES` (200) steps, is no. Passing over it is then the same answer without the
/// closest points.
pub(super) fn apart_through_step(
    sc: &SurfaceCollision,
    kept: &Kept,
    pair: Pair,
    [floor, off]: [f32; 2],
    wander: &Wander,
    slack: f32,
) -> bool {
    const { assert!(proximity::MAX_ADVANCES >= 200) };
    // The first half of the wander depends on the step's start alone: the search's where known.
    let [off, step] =
        if off.is_nan() { pair_wander(sc, kept, pair, wander) } else { [off, pair_step(sc, pair, wander)] };
    // The distance through the step is at least `floor − off − step`; advancement moves on by
    // that less the gap over the relative motion, which is at most `step` (1 % for rounding).
    let margin = floor - (off + step) - sc.guard_gap() - slack;
    margin > 0.0 && 100.0 * margin >= 1.01 * step + slack
}

/// Whether a kept pair passes [`far_apart`] by its run's bound alone (`bound`,
/// [`Wander::run_bound`], with `reach`, [`far_apart`]'s `SEARCH_REACH·h_max + slack`): its floor
/// (or any lower bound of its distance at the anchor) less the bound, which is at least the
/// pair's sum, is farther than the reach (the subtraction rounds no higher than
/// [`far_apart`]'s, so the answer implies its).
#[inline]
pub(super) fn far_by_bound(floor: f32, bound: f32, reach: f32) -> bool {
    floor - bound > reach
}

/// Whether the guard of a step, its wander `wander` (with `slack`) and its positions within
/// `moved` (m, rounding included) of the prediction the search scanned with the reach
/// `scan_reach`, may pass over every kept pair the search passed over by [`far_by_bound`] or
/// proved too far apart for a contact ([`far_apart`]). Each such pair's floor (or any lower
/// bound of its distance at the anchor: its gap) less its wander at the prediction was above
/// the reach; a feature moves in the guard's step at most its
/// motion to the prediction and `moved`, so [`apart_through_step`]'s margin is at least
/// `scan_reach − 2·moved − gap − slack`, and its motion at most twice the most of a point. The
/// cushion of twice the slack more and a ten-thousandth of the reach covers the rounding of
/// both tests (a floor is at most the anchor's extent, which the slack is sized from).
pub(super) fn far_stays_apart(
    sc: &SurfaceCollision,
    scan_reach: f32,
    moved: f32,
    wander: &Wander,
    slack: f32,
) -> bool {
    let motion = 2.0 * wander.most_motion * ROUNDING;
    let margin = scan_reach * (1.0 - 1e-4) - 2.0 * moved - sc.guard_gap() - 3.0 * slack;
    margin > 0.0 && 100.0 * margin >= 1.01 * motion + slack
}

/// How much nearer the points of the features of `pair` can have come at the step's start than
/// at the anchor (the most of each feature's points from their clusters' centres, summed over
/// the two features, plus the most two of their clusters' centres have moved apart), and the
/// most of each feature's motion in the step, summed (m).
pub(super) fn pair_wander(sc: &SurfaceCollision, kept: &Kept, pair: Pair, wander: &Wander) -> [f32; 2] {
    let (p, split) = split_particles(sc, pair);
    let (a, b) = p.split_at(split);
    let cluster = |i: u32| kept.cluster[i as usize];
    let mut apart = 0.0f32;
    if p.iter().any(|&i| cluster(i) != cluster(p[0])) {
        // The largest squared distance, then one square root: the root is correctly rounded
        // and never decreasing, so the root of the largest is the largest root, bit for bit.
        for &i in a {
            for &j in b {
                let (c, d) = (wander.centres[cluster(i) as usize], wander.centres[cluster(j) as usize]);
                let v = [0, 1, 2].map(|k| c[k] - d[k]);
                apart = larger(apart, v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            }
        }
        apart = apart.sqrt();
    }
    [wander.most(a, 0) + wander.most(b, 0) + apart, wander.most(a, 1) + wander.most(b, 1)]
}

/// The second half of [`pair_wander`] alone, the same bits: the most of each feature's motion
/// in the step, summed (m).
fn pair_step(sc: &SurfaceCollision, pair: Pair, wander: &Wander) -> f32 {
    let (p, split) = split_particles(sc, pair);
    let (a, b) = p.split_at(split);
    wander.most(a, 1) + wander.most(b, 1)
}

/// The four particles of `pair`, and how many of them are its first feature's.
fn split_particles(sc: &SurfaceCollision, pair: Pair) -> ([u32; 4], usize) {
    (particles(sc, pair), if pair.0 == PairKind::VertexTriangle { 1 } else { 2 })
}

impl Wander {
    /// The most of entry `j` (0: wander, 1: motion; m) of the particles `ids`.
    #[inline]
    fn most(&self, ids: &[u32], j: usize) -> f32 {
        ids.iter().fold(0.0f32, |m, &i| larger(m, self.particles[i as usize][j]))
    }
}

/// The larger of `m` and `v` by a plain comparison, not `f32::max`: the same answer where `m`
/// is a running most (a `NaN` `v` never replaces it), without the `NaN` handling on per-pair
/// paths.
#[inline]
fn larger(m: f32, v: f32) -> f32 {
    if v > m { v } else { m }
}

/// `d` (m) rounded down to `f32`.
fn round_down(d: f64) -> f32 {
    let f = d as f32;
    if f as f64 > d { f.next_down() } else { f }
}

/// The length of `v` (m).
fn length(v: [f32; 3]) -> f32 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A value: mostly ordinary, sometimes a signed zero, infinite or NaN.
    fn value() -> impl Strategy<Value = f32> {
        prop_oneof![
            6 => -10.0f32..10.0,
            1 => prop::sample::select(vec![0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN]),
        ]
    }

    proptest! {
        /// The tree of `max` is the chain's maximum of magnitudes: a running maximum folded with
        /// it ends where folding each magnitude in one after the other does, bit for bit.
        #[test]
        fn the_tree_of_magnitudes_is_the_chain(start in 0.0f32..5.0, values in prop::array::uniform6(value())) {
            let chain = values.iter().fold(start, |m, x| m.max(x.abs()));
            let tree = start.max(largest_magnitude(values));
            prop_assert_eq!(tree.to_bits(), chain.to_bits());
            let three = [values[0], values[1], values[2]];
            let chain = three.iter().fold(start, |m, x| m.max(x.abs()));
            prop_assert_eq!(start.max(largest_magnitude(three)).to_bits(), chain.to_bits());
        }

        /// Updates through a run held in a register leave the array as the same updates made in
        /// place, in the same order, whatever the runs.
        #[test]
        fn runs_held_in_a_register_update_as_in_place(
            updates in prop::collection::vec((0usize..5, value()), 0..60),
        ) {
            let mut in_place = [f32::INFINITY; 5];
            for &(i, x) in &updates {
                in_place[i] = in_place[i].min(x);
            }
            let mut held = [f32::INFINITY; 5];
            let mut run = RunOf::new(&mut held);
            for &(i, x) in &updates {
                let m = run.of(i);
                *m = m.min(x);
            }
            run.end();
            prop_assert_eq!(held.map(f32::to_bits), in_place.map(f32::to_bits));
        }
    }
}
