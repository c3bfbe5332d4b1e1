//! Surface self-collision (see `weft_core::surface_collision` for the model and the three
//! stages of a step): the contact search, the projection and the guard, each one team phase of
//! one work item (the contacts are projected in one fixed order, so the result is the same for
//! any thread count; the broad phase is `weft_geometry`'s grid over the features' boxes, whose
//! candidate pairs are kept from step to step, see [`KEEP_MARGIN`]).
//!
//! The pure functions ([`find_contacts`], [`project`], [`guard`]) run on whole slices; the
//! stepper wraps each in a phase. `weft-reference` finds the same contacts and guard pairs by
//! testing every pair, and the property tests hold the two to the same bits.

use weft_core::surface_collision::{
    Contact, MAX_GUARD_ROUNDS, SEARCH_REACH, SurfaceCollision, common_shift, swept_box,
};
use weft_geometry::proximity::{self, PairKind};
use weft_geometry::{Aabb, Grid};

use crate::integrate::ParticleArrays;
use crate::records::Record;
use crate::shared::SharedSlice;
use crate::team::Team;

/// A feature whose box covers more cells than this is tested against every query instead.
const MAX_CELLS: u64 = 64;

/// What surface self-collision did in one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SurfaceStats {
    /// Contacts made by the search.
    pub contacts: u64,
    /// Contacts pushed apart (gap under the thickness) in some iteration, counted once per
    /// iteration.
    pub pushes: u64,
    /// Particles the guard moved back to the start of the step.
    pub reverted: u64,
    /// Pairs the guard found that may touch with no free particle left to move back (pinned
    /// particles on a path): left as they are.
    pub unresolved: u64,
    /// Times the kept candidate pairs were found again.
    pub rebuilds: u64,
}

/// The buffers of surface self-collision, kept between steps.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    grid: Grid,
    near: Vec<u32>,
    boxes: FeatureBoxes,
    /// Candidate pairs kept between steps (see [`Kept`]).
    kept: Kept,
    /// The search's candidate pairs, for the guard.
    pairs: Vec<Pair>,
    /// The translation taken out of the boxes in this step (m).
    shift: [f32; 3],
    /// Every particle's predicted position (the `now` of the search).
    predicted: Vec<Record>,
    /// Per particle, how far it is from its anchor and how far it moves in the step (m; see
    /// [`Kept::far_apart`]).
    wander: Vec<[f32; 2]>,
    contacts: Vec<Contact>,
    marked: Vec<u32>,
    stats: SurfaceStats,
}

impl Scratch {
    /// What the last step did.
    pub(crate) fn stats(&self) -> SurfaceStats {
        self.stats
    }
}

/// A pair of features: a vertex (particle) and a triangle (index into
/// `SurfaceCollision::triangles`), or two edges (indices into `SurfaceCollision::edges`, the
/// first lower).
type Pair = (PairKind, u32, u32);

/// The four particles of `pair` (as `weft_core::surface_collision::Contact::particles`).
fn particles(sc: &SurfaceCollision, (kind, a, b): Pair) -> [u32; 4] {
    match kind {
        PairKind::VertexTriangle => {
            let t = sc.triangles()[b as usize];
            [a, t[0], t[1], t[2]]
        }
        PairKind::EdgeEdge => {
            let (e, f) = (sc.edges()[a as usize], sc.edges()[b as usize]);
            [e[0], e[1], f[0], f[1]]
        }
    }
}

/// Every feature's box for a step (`swept_box` with no pad): the boxes the broad phases and
/// `SurfaceCollision::boxes_meet` test, computed once per step.
#[derive(Debug, Default)]
struct FeatureBoxes {
    /// Indexed by particle (only those taking part are set).
    vertices: Vec<Aabb>,
    triangles: Vec<Aabb>,
    edges: Vec<Aabb>,
}

impl FeatureBoxes {
    fn fill(&mut self, sc: &SurfaceCollision, prev: &[Record], now: &[Record], shift: [f32; 3]) {
        let empty = Aabb { min: [0.0; 3], max: [0.0; 3] };
        self.vertices.resize(prev.len(), empty);
        for &v in sc.vertices() {
            self.vertices[v as usize] = swept_box(&[v], prev, now, shift, 0.0);
        }
        self.triangles.clear();
        self.triangles.extend(sc.triangles().iter().map(|t| swept_box(t, prev, now, shift, 0.0)));
        self.edges.clear();
        self.edges.extend(sc.edges().iter().map(|e| swept_box(e, prev, now, shift, 0.0)));
    }

    /// `SurfaceCollision::boxes_meet` of the pair, from the boxes.
    fn meet(&self, (kind, a, b): Pair, pad: f32) -> bool {
        match kind {
            PairKind::VertexTriangle => {
                self.vertices[a as usize].grown(pad).overlaps(&self.triangles[b as usize])
            }
            PairKind::EdgeEdge => self.edges[a as usize].grown(pad).overlaps(&self.edges[b as usize]),
        }
    }
}

/// How much farther than a step's search the kept candidate pairs reach, as a multiple of the
/// mean edge: half of it is how far a particle may move, relative to the cloths' common drift,
/// before they are found again.
pub const KEEP_MARGIN: f32 = 0.5;

/// Candidate pairs kept between steps: every pair whose boxes at `anchor` (each the features'
/// positions, the first grown by the search pad plus the margin) meet. While every particle's
/// positions at a step's start and prediction, less the drift since, are within half the margin
/// of its anchor, every pair the step's own broad phase would find is among them.
#[derive(Debug, Default)]
struct Kept {
    pairs: Vec<Pair>,
    /// Per pair, a lower bound of the distance between its features at the anchor (m), `NaN`
    /// until a step first needs it.
    floor: Vec<f32>,
    anchor: Vec<Record>,
    /// The sum of the shifts of the steps since the anchor, this step's excluded (m).
    drift: [f64; 3],
    /// The data they were found for (`SurfaceCollision::key`); 0: none.
    key: u64,
}

impl Kept {
    /// Whether the kept pairs hold every pair whose boxes meet, grown by at most the search pad,
    /// in a step from `prev` to `now` less `shift` (m).
    fn covers(&self, sc: &SurfaceCollision, prev: &[Record], now: &[Record], shift: [f32; 3]) -> bool {
        if self.key == 0 || self.key != sc.key() || self.anchor.len() != prev.len() {
            return false;
        }
        let reach = 0.5 * KEEP_MARGIN * sc.mean_edge() * 0.99 - 1e-6;
        let c = self.drift.map(|d| d as f32);
        let near = |x: Record, shift: [f32; 3], a: Record| {
            (0..3).all(|k| (x[k] - shift[k] - c[k] - a[k]).abs() <= reach)
        };
        sc.vertices().iter().all(|&i| {
            let (i, a) = (i as usize, self.anchor[i as usize]);
            near(prev[i], [0.0; 3], a) && near(now[i], shift, a)
        })
    }

    /// A lower bound of the distance between the features of kept pair `k` at the anchor (m):
    /// `weft_geometry::proximity::separation`, rounded down to `f32`, measured once.
    fn floor(&mut self, sc: &SurfaceCollision, k: usize) -> f32 {
        if self.floor[k].is_nan() {
            let pair = self.pairs[k];
            let points = particles(sc, pair).map(|i| {
                let a = self.anchor[i as usize];
                [a[0], a[1], a[2]].map(f64::from)
            });
            let d = proximity::separation(pair.0, points);
            let f = d as f32;
            self.floor[k] = if f as f64 > d { f.next_down() } else { f };
        }
        self.floor[k]
    }

    /// Each particle's wander in a step from `prev` to `now` (m, into `wander`): how far it is
    /// at `prev` from its anchor less the drift, and how far it moves to `now`, each rounded up
    /// by the slack this returns for the pair test of [`Kept::far_apart`] (m).
    fn wander(
        &self,
        sc: &SurfaceCollision,
        prev: &[Record],
        now: &[Record],
        wander: &mut Vec<[f32; 2]>,
    ) -> f32 {
        wander.resize(prev.len(), [0.0; 2]);
        let c = self.drift.map(|d| d as f32);
        let mut most = c.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        for &i in sc.vertices() {
            let (x, y, a) = (prev[i as usize], now[i as usize], self.anchor[i as usize]);
            let off = [0, 1, 2].map(|k| x[k] - c[k] - a[k]);
            let step = [0, 1, 2].map(|k| y[k] - x[k]);
            wander[i as usize] = [length(off), length(step)];
            most = (0..3).fold(most, |m, k| m.max(x[k].abs()).max(y[k].abs()).max(a[k].abs()));
        }
        // The rounding of the differences and lengths above, four particles' worth, with room.
        64.0 * f32::EPSILON * (most + sc.search_pad())
    }

    /// Whether the kept pair `k` provably makes no contact in the step whose [`Kept::wander`] is
    /// `wander` (with `slack`): its features were at least `floor` apart at the anchor, each
    /// point has since moved at most its wander from there (less the common drift, which moves
    /// every point alike), and the distance less the motion of the step is what the contact test
    /// compares with the search's reach (`SurfaceCollision::vertex_triangle_contact`), which is
    /// at most `SEARCH_REACH` times the largest thickness.
    fn far_apart(&mut self, sc: &SurfaceCollision, k: usize, wander: &[[f32; 2]], slack: f32) -> bool {
        let (pair, floor) = (self.pairs[k], self.floor(sc, k));
        let p = particles(sc, pair);
        let split = if pair.0 == PairKind::VertexTriangle { 1 } else { 2 };
        let most = |ids: &[u32], j: usize| ids.iter().fold(0.0f32, |m, &i| m.max(wander[i as usize][j]));
        let (a, b) = p.split_at(split);
        let moved = most(a, 0) + most(b, 0) + most(a, 1) + most(b, 1);
        floor - moved > SEARCH_REACH * sc.max_thickness() + slack
    }
}

/// The length of `v` (m).
fn length(v: [f32; 3]) -> f32 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// Every candidate pair of features whose `boxes` meet (the first feature's grown by `pad`), in
/// the fixed order: `on_pair` for each vertex–triangle pair (vertex ascending, then triangle),
/// then each edge–edge pair `(e, f)`, `e < f`, sharing no particle.
fn candidate_pairs(
    sc: &SurfaceCollision,
    boxes: &FeatureBoxes,
    pad: f32,
    grid: &mut Grid,
    near: &mut Vec<u32>,
    mut on_pair: impl FnMut(Pair),
) {
    let cell = sc.mean_edge().max(pad).max(f32::MIN_POSITIVE) as f64;
    let tris = sc.triangles();
    grid.build_boxes(cell, MAX_CELLS, tris.len(), |t| boxes.triangles[t]);
    for &v in sc.vertices() {
        grid.in_box(&boxes.vertices[v as usize].grown(pad), near);
        for &t in near.iter() {
            let pair = (PairKind::VertexTriangle, v, t);
            if !tris[t as usize].contains(&v) && boxes.meet(pair, pad) {
                on_pair(pair);
            }
        }
    }
    let edges = sc.edges();
    grid.build_boxes(cell, MAX_CELLS, edges.len(), |e| boxes.edges[e]);
    for (e, a) in edges.iter().enumerate() {
        grid.in_box(&boxes.edges[e].grown(pad), near);
        for &f in near.iter().filter(|&&f| f as usize > e) {
            let b = edges[f as usize];
            let pair = (PairKind::EdgeEdge, e as u32, f);
            if !a.contains(&b[0]) && !a.contains(&b[1]) && boxes.meet(pair, pad) {
                on_pair(pair);
            }
        }
    }
}

/// The contacts of a step from `prev` to the prediction `now`, in the fixed order (see
/// `weft_core::surface_collision`), into `s`, with the candidate pairs and the shift.
fn find_contacts_into(sc: &SurfaceCollision, prev: &[Record], now: &[Record], s: &mut Scratch) {
    s.contacts.clear();
    s.pairs.clear();
    s.shift = common_shift(sc.vertices(), prev, now);
    s.predicted.clear();
    s.predicted.extend_from_slice(now);
    let (shift, pad) = (s.shift, sc.search_pad());
    let mut covered = s.kept.covers(sc, prev, now, shift);
    if !covered {
        // Found again at the start of the step.
        let k = &mut s.kept;
        k.anchor.clear();
        k.anchor.extend_from_slice(prev);
        k.drift = [0.0; 3];
        k.key = sc.key();
        k.pairs.clear();
        s.boxes.fill(sc, prev, prev, [0.0; 3]);
        let reach = pad + KEEP_MARGIN * sc.mean_edge();
        candidate_pairs(sc, &s.boxes, reach, &mut s.grid, &mut s.near, |pair| k.pairs.push(pair));
        k.floor.clear();
        k.floor.resize(k.pairs.len(), f32::NAN);
        s.stats.rebuilds += 1;
        covered = s.kept.covers(sc, prev, now, shift);
    }
    s.boxes.fill(sc, prev, now, shift);
    let slack = if covered { s.kept.wander(sc, prev, now, &mut s.wander) } else { 0.0 };
    let (contacts, pairs, boxes) = (&mut s.contacts, &mut s.pairs, &s.boxes);
    // Each candidate pair, for the guard; its contact, unless it is provably too far for one.
    let mut on_pair = |pair: Pair, far: bool| {
        pairs.push(pair);
        if far {
            return;
        }
        let p = particles(sc, pair);
        let contact = match pair.0 {
            PairKind::VertexTriangle => sc.vertex_triangle_contact(p[0], [p[1], p[2], p[3]], prev, now),
            PairKind::EdgeEdge => sc.edge_edge_contact([p[0], p[1]], [p[2], p[3]], prev, now),
        };
        contacts.extend(contact);
    };
    if covered {
        let (kept, wander) = (&mut s.kept, &s.wander);
        for k in 0..kept.pairs.len() {
            let pair = kept.pairs[k];
            if boxes.meet(pair, pad) {
                on_pair(pair, kept.far_apart(sc, k, wander, slack));
            }
        }
    } else {
        // Faster than the margin: this step's own broad phase.
        candidate_pairs(sc, boxes, pad, &mut s.grid, &mut s.near, |pair| on_pair(pair, false));
    }
}

/// The end of a step for the kept pairs: its shift joins the drift since their anchor.
fn end_step(s: &mut Scratch) {
    for (d, t) in s.kept.drift.iter_mut().zip(s.shift) {
        *d += t as f64;
    }
}

/// The contacts of a step from `prev` to the prediction `now` (positions in m), in the fixed
/// order the projection takes them.
pub fn find_contacts(sc: &SurfaceCollision, prev: &[Record], now: &[Record]) -> Vec<Contact> {
    let mut s = Scratch::default();
    find_contacts_into(sc, prev, now, &mut s);
    s.contacts
}

/// One projection of every contact, in order (see `weft_core::surface_collision`): each
/// particle moved is moved in `positions` and `displacement` alike (m). Returns the contacts
/// pushed.
pub fn project(contacts: &[Contact], positions: &mut [Record], displacement: &mut [Record]) -> u64 {
    let mut pushes = 0;
    for c in contacts {
        let p = c.particles.map(|i| i as usize);
        let x0 = positions[p[0]];
        let mut g = [0.0f32; 3];
        for k in 1..4 {
            let x = positions[p[k]];
            for a in 0..3 {
                g[a] += c.weights[k] * (x[a] - x0[a]);
            }
        }
        let n = c.normal;
        let gap = n[0] * g[0] + n[1] * g[1] + n[2] * g[2] - c.thickness;
        if gap >= 0.0 {
            continue;
        }
        let inv = p.map(|i| positions[i][3]);
        let denom: f32 = (0..4).map(|k| c.weights[k] * c.weights[k] * inv[k]).sum();
        if denom <= 0.0 {
            continue;
        }
        pushes += 1;
        let push = -gap / denom;
        for k in 0..4 {
            let s = c.weights[k] * inv[k] * push;
            for a in 0..3 {
                positions[p[k]][a] += s * n[a];
                displacement[p[k]][a] += s * n[a];
            }
        }
        if c.friction <= 0.0 {
            continue;
        }
        let mut u = [0.0f32; 3];
        for k in 0..4 {
            for a in 0..3 {
                u[a] += c.weights[k] * displacement[p[k]][a];
            }
        }
        let un = n[0] * u[0] + n[1] * u[1] + n[2] * u[2];
        let slip = [u[0] - un * n[0], u[1] - un * n[1], u[2] - un * n[2]];
        let length = (slip[0] * slip[0] + slip[1] * slip[1] + slip[2] * slip[2]).sqrt();
        if length <= 0.0 {
            continue;
        }
        let cut = (c.friction * -gap / length).min(1.0) / denom;
        for k in 0..4 {
            let s = -c.weights[k] * inv[k] * cut;
            for a in 0..3 {
                positions[p[k]][a] += s * slip[a];
                displacement[p[k]][a] += s * slip[a];
            }
        }
    }
    pushes
}

/// The guard (see `weft_core::surface_collision`): moves the free particles of every pair that
/// may touch during the step from `prev` to `positions` back to `prev` (with `displacement` 0),
/// round after round until no pair may touch. The pairs checked are those whose boxes (less the
/// step's shift) meet with the guard's gap; they are the search's candidates while every
/// particle is within `(search pad − gap)/2` of its prediction (so every such pair is one of
/// them), else the kept pairs while they cover the step (the gap is under the search pad), else a
/// broad phase finds them. The same pairs in any of the three ways, and what a round does with
/// them depends on the set only (the particles to move back are sorted), so the result is too.
/// Returns `(reverted, unresolved)`.
fn guard_into(
    sc: &SurfaceCollision,
    prev: &[Record],
    positions: &mut [Record],
    displacement: &mut [Record],
    s: &mut Scratch,
    searched: bool,
) -> (u64, u64) {
    let (gap, shift) = (sc.guard_gap(), s.shift);
    let mut reverted = 0;
    for round in 0..=MAX_GUARD_ROUNDS {
        s.marked.clear();
        let mut unresolved = 0;
        let now: &[Record] = positions;
        s.boxes.fill(sc, prev, now, shift);
        let reuse =
            searched && 2.0 * farthest_from(sc.vertices(), now, &s.predicted) + gap <= 0.99 * sc.search_pad();
        let (marked, boxes) = (&mut s.marked, &s.boxes);
        let mut check = |pair: Pair| {
            let p = particles(sc, pair);
            if boxes.meet(pair, gap) && sc.may_touch(pair.0, p, prev, now) {
                let free = p.iter().filter(|&&i| now[i as usize][3] > 0.0 && moved(prev, now, i));
                let before = marked.len();
                marked.extend(free);
                if marked.len() == before {
                    unresolved += 1;
                }
            }
        };
        if reuse {
            s.pairs.iter().for_each(|&pair| check(pair));
        } else if searched && s.kept.covers(sc, prev, now, shift) {
            s.kept.pairs.iter().for_each(|&pair| check(pair));
        } else {
            candidate_pairs(sc, boxes, gap, &mut s.grid, &mut s.near, check);
        }
        if s.marked.is_empty() {
            return (reverted, unresolved);
        }
        if round == MAX_GUARD_ROUNDS {
            // Every moving free particle back: the start of the step was free of crossings.
            s.marked.clear();
            let movers = sc
                .vertices()
                .iter()
                .filter(|&&i| positions[i as usize][3] > 0.0 && moved(prev, positions, i));
            s.marked.extend(movers);
        }
        s.marked.sort_unstable();
        s.marked.dedup();
        for &i in &s.marked {
            let i = i as usize;
            let w = positions[i][3];
            positions[i] = [prev[i][0], prev[i][1], prev[i][2], w];
            displacement[i] = [0.0; 4];
        }
        reverted += s.marked.len() as u64;
    }
    (reverted, 0)
}

/// The largest distance in m of a particle of `vertices` in `now` from its place in `then`.
fn farthest_from(vertices: &[u32], now: &[Record], then: &[Record]) -> f32 {
    let mut most = 0.0f32;
    for &i in vertices {
        let (a, b) = (now[i as usize], then[i as usize]);
        let d = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
        most = most.max((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt());
    }
    // Rounding of the boxes: a hair more.
    most * 1.001
}

/// Whether particle `i` is not where it was at the start of the step.
fn moved(prev: &[Record], now: &[Record], i: u32) -> bool {
    let (a, b) = (prev[i as usize], now[i as usize]);
    a[0] != b[0] || a[1] != b[1] || a[2] != b[2]
}

/// The guard of a step from `prev` to `positions` with its own buffers and a broad phase of its
/// own, the boxes less `shift` (m; see `weft_core::surface_collision::common_shift`). Returns
/// `(reverted, unresolved)`.
pub fn guard(
    sc: &SurfaceCollision,
    prev: &[Record],
    positions: &mut [Record],
    displacement: &mut [Record],
    shift: [f32; 3],
) -> (u64, u64) {
    let mut s = Scratch { shift, ..Scratch::default() };
    guard_into(sc, prev, positions, displacement, &mut s, false)
}

/// The team's handle on the buffers (one element: the phases below are one work item each).
pub(crate) type SharedScratch<'a> = SharedSlice<'a, Scratch>;

/// Runs `f` as the one work item of a team phase, on the scratch, the positions at the start
/// of the step, and the positions and displacements it may move.
fn alone(
    team: &Team<'_>,
    scratch: SharedScratch<'_>,
    p: &ParticleArrays<'_>,
    mut f: impl FnMut(&mut Scratch, &[Record], &mut [Record], &mut [Record]),
) {
    let parts = (scratch.each_mut(), p.prev, p.positions.whole_mut(), p.displacement.whole_mut());
    team.for_each_chunk(1, parts, |_, _, (s, prev, x, d)| f(s, prev, x, d));
}

/// Stage 4 of a step: the contacts, at the prediction.
pub(crate) fn search_phase(
    team: &Team<'_>,
    sc: &SurfaceCollision,
    scratch: SharedScratch<'_>,
    p: &ParticleArrays<'_>,
) {
    if !sc.is_empty() {
        alone(team, scratch, p, |s, prev, x, _| {
            s.stats = SurfaceStats::default();
            find_contacts_into(sc, prev, x, s);
            s.stats.contacts = s.contacts.len() as u64;
        });
    }
}

/// Stage 5, in each iteration: one projection of the step's contacts.
pub(crate) fn solve_phase(
    team: &Team<'_>,
    sc: &SurfaceCollision,
    scratch: SharedScratch<'_>,
    p: &ParticleArrays<'_>,
) {
    if !sc.is_empty() {
        alone(team, scratch, p, |s, _, x, d| s.stats.pushes += project(&s.contacts, x, d));
    }
}

/// The guard, after every other stage that moves particles and before the velocities.
pub(crate) fn guard_phase(
    team: &Team<'_>,
    sc: &SurfaceCollision,
    scratch: SharedScratch<'_>,
    p: &ParticleArrays<'_>,
) {
    if !sc.is_empty() {
        alone(team, scratch, p, |s, prev, x, d| {
            (s.stats.reverted, s.stats.unresolved) = guard_into(sc, prev, x, d, s, true);
            end_step(s);
        });
    }
}
