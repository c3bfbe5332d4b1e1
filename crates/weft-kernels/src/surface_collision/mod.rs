//! Surface self-collision (see `weft_core::surface_collision` for the model and the three
//! stages of a step): the contact search, the projection and the guard. The search is split
//! across the team (`search`: a fixed number of chunks, joined in a fixed order), and so is the
//! check of the guard's first round (the marks joined in chunk order, then sorted); the
//! projection (the contacts in one fixed order, Gauss–Seidel) and the guard's later rounds are
//! one work item each, so the result is the same bits for any thread count. The broad phase is
//! `weft_geometry`'s grid over the features' boxes, whose candidate pairs are kept from step to
//! step (`kept`, see [`KEEP_MARGIN`]); a kept pair proven too far apart for a contact in a
//! step skips the closest-point test (`kept::far_apart`; by its run's bound alone,
//! `kept::far_by_bound`, it skips even the box test), and one proven to stay clear of the
//! guard's gap through the step skips the guard's (`kept::apart_through_step`): while the
//! guard's positions stay near the search's prediction, one bound proves that for every pair the
//! search set aside (`kept::far_stays_apart`), so the guard checks only the pairs the search
//! could not.
//!
//! The pure functions ([`find_contacts`], [`project`], [`guard`]) run on whole slices; the
//! stepper wraps each in a phase. `weft-reference` finds the same contacts and guard pairs by
//! testing every pair, and the property tests hold the two to the same bits.

use weft_core::surface_collision::{Contact, MAX_GUARD_ROUNDS, SurfaceCollision, capped_push, swept_box};
use weft_geometry::proximity::PairKind;
use weft_geometry::{Aabb, Grid};

use crate::integrate::ParticleArrays;
use crate::records::Record;
use crate::shared::SharedSlice;
use crate::team::{Forks, Team};

mod kept;
mod lanes;
mod search;

pub use kept::KEEP_MARGIN;
use search::candidate_pairs;
pub(crate) use search::{Buffers, Chunk, SEARCH_CHUNKS};

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

/// The buffers of surface self-collision that one work item at a time writes, kept between
/// steps (the search's chunks are apart, in [`Buffers`]).
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// The grids of the kept pairs' triangles and edges (the first also of any other broad phase).
    grids: [Grid; 2],
    near: Vec<u32>,
    /// The lanes of the edges' grid at a rebuild.
    edge_lanes: lanes::Lanes,
    boxes: FeatureBoxes,
    /// What the kept candidate pairs were found for (see `kept::Kept`).
    kept: kept::Kept,
    /// Whether this step finds the kept pairs again, how far their boxes are grown (m), and
    /// whether they cover the step.
    rebuild: bool,
    reach: f32,
    covered: bool,
    /// The slack of the wander test (m; see `kept::far_apart`).
    slack: f32,
    /// The scan's reach (m; see `kept::far_by_bound`), for the guard.
    scan_reach: f32,
    /// The search's candidate pairs that it did not prove too far apart for a contact
    /// (`kept::far_apart`), for the guard, and per pair its floor and how much nearer its points
    /// can have come at the step's start than at the anchor (m; `NaN`: none, see
    /// `kept::Kept::floor` and `kept::pair_wander`).
    pairs: Vec<Pair>,
    pair_floors: Vec<[f32; 2]>,
    /// The translation taken out of the boxes in this step (m).
    shift: [f32; 3],
    /// Every particle's predicted position (the `now` of the search).
    predicted: Vec<Record>,
    /// Per particle, how far it is from its anchor and how far it moves in the step (m; see
    /// `kept::far_apart`).
    wander: kept::Wander,
    /// The clusters' displacements, for `kept::Kept::covers`.
    spread: kept::Spread,
    contacts: Vec<Contact>,
    /// What the guard's round decided, and the particles it marks to move back.
    guard: GuardRound,
    marked: Vec<u32>,
    stats: SurfaceStats,
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
    pub(super) triangles: Vec<Aabb>,
    pub(super) edges: Vec<Aabb>,
    /// The vertices' boxes in the order of `SurfaceCollision::vertices`, as the forks make them,
    /// before they are placed by particle.
    in_order: Vec<Aabb>,
}

/// Features per sub-item of [`FeatureBoxes::fill`]'s forks.
const FILL_CHUNK: usize = 512;

impl FeatureBoxes {
    /// Every feature's box for a step from `prev` to `now` less `shift` (m), in sub-items of
    /// [`FILL_CHUNK`] features forked on `forks` (each box made alone: the same on any thread).
    fn fill(
        &mut self,
        sc: &SurfaceCollision,
        prev: &[Record],
        now: &[Record],
        shift: [f32; 3],
        forks: Forks<'_>,
    ) {
        let empty = Aabb { min: [0.0; 3], max: [0.0; 3] };
        let vertices = sc.vertices();
        self.in_order.resize(vertices.len(), empty);
        forks.chunks_mut(&mut self.in_order, FILL_CHUNK, |c, out| {
            for (b, &v) in out.iter_mut().zip(&vertices[c * FILL_CHUNK..]) {
                *b = swept_box(&[v], prev, now, shift, 0.0);
            }
        });
        self.vertices.resize(prev.len(), empty);
        for (&v, b) in vertices.iter().zip(&self.in_order) {
            self.vertices[v as usize] = *b;
        }
        // A feature's box is the union of its particles' (every one is a vertex of the stage):
        // the same extremes as `swept_box` of the feature, as the least and the greatest of the
        // same coordinates, without shifting each particle once per feature it belongs to.
        let vertices = &self.vertices;
        let union = |particles: &[u32]| {
            let mut b = Aabb::new([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
            for &i in particles {
                let v = &vertices[i as usize];
                for k in 0..3 {
                    b.min[k] = b.min[k].min(v.min[k]);
                    b.max[k] = b.max[k].max(v.max[k]);
                }
            }
            b
        };
        let (triangles, edges) = (sc.triangles(), sc.edges());
        self.triangles.resize(triangles.len(), empty);
        forks.chunks_mut(&mut self.triangles, FILL_CHUNK, |c, out| {
            for (b, t) in out.iter_mut().zip(&triangles[c * FILL_CHUNK..]) {
                *b = union(t);
            }
        });
        self.edges.resize(edges.len(), empty);
        forks.chunks_mut(&mut self.edges, FILL_CHUNK, |c, out| {
            for (b, e) in out.iter_mut().zip(&edges[c * FILL_CHUNK..]) {
                *b = union(e);
            }
        });
    }

    /// A lower bound of the distance between the features of `pair` (m): the distance between
    /// their boxes, with a hundred thousandth off for rounding.
    fn gap(&self, (kind, a, b): Pair) -> f32 {
        let (x, y) = match kind {
            PairKind::VertexTriangle => (&self.vertices[a as usize], &self.triangles[b as usize]),
            PairKind::EdgeEdge => (&self.edges[a as usize], &self.edges[b as usize]),
        };
        let apart = |k: usize| (y.min[k] - x.max[k]).max(x.min[k] - y.max[k]).max(0.0);
        let squares = apart(0) * apart(0) + apart(1) * apart(1) + apart(2) * apart(2);
        squares.sqrt() * (1.0 - 1e-5)
    }

    /// `SurfaceCollision::boxes_meet` of the pair, from the boxes.
    fn meet(&self, (kind, a, b): Pair, pad: f32) -> bool {
        let (grown, seconds) = self.first_grown(kind, a, pad);
        grown.overlaps(&seconds[b as usize])
    }

    /// The box of feature `a` as the first of a pair of `kind`, grown by `pad` (m), and the boxes
    /// of the second features: a pair `(kind, a, b)` meets when the first overlaps `b`'s.
    #[inline]
    fn first_grown(&self, kind: PairKind, a: u32, pad: f32) -> (Aabb, &[Aabb]) {
        match kind {
            PairKind::VertexTriangle => (self.vertices[a as usize].grown(pad), &self.triangles),
            PairKind::EdgeEdge => (self.edges[a as usize].grown(pad), &self.edges),
        }
    }
}

/// The contacts of a step from `prev` to the prediction `now` (positions in m), in the fixed
/// order the projection takes them.
pub fn find_contacts(sc: &SurfaceCollision, prev: &[Record], now: &[Record]) -> Vec<Contact> {
    let mut b = Buffers::default();
    b.search(sc, prev, now);
    b.scratch.contacts
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
        // A gap `f32` cannot hold (coordinates near its limit) is not taken.
        if !(gap < 0.0 && gap.is_finite()) {
            continue;
        }
        let inv = p.map(|i| positions[i][3]);
        let denom: f32 = (0..4).map(|k| c.weights[k] * c.weights[k] * inv[k]).sum();
        if denom <= 0.0 {
            continue;
        }
        pushes += 1;
        let mut scale: [f32; 4] = std::array::from_fn(|k| c.weights[k] * inv[k]);
        let (push, cut) = capped_push(&mut scale, gap, denom);
        for k in 0..4 {
            let s = scale[k] * push;
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
        let cut = cut.of((c.friction * -gap / length).min(1.0));
        for k in 0..4 {
            let s = -scale[k] * cut;
            for a in 0..3 {
                positions[p[k]][a] += s * slip[a];
                displacement[p[k]][a] += s * slip[a];
            }
        }
    }
    pushes
}

/// Where a round of the guard finds the pairs it checks (see [`guard_into`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum GuardSource {
    /// The search's candidate pairs.
    #[default]
    Searched,
    /// The kept pairs, chunk by chunk.
    Kept,
    /// A broad phase of its own.
    Broad,
}

/// What a round of the guard decided before it checks its pairs ([`guard_begin`]).
#[derive(Debug, Clone, Copy, Default)]
struct GuardRound {
    source: GuardSource,
    /// Whether the kept pairs' floors hold for this step's anchor.
    floors_hold: bool,
    /// The slack of the wander test (m); `NaN` where the floors do not hold.
    slack: f32,
}

/// What a round of the guard reads to check a pair.
struct GuardCheck<'s> {
    sc: &'s SurfaceCollision,
    prev: &'s [Record],
    now: &'s [Record],
    /// The step's boxes, filled for a round that does not take the search's pairs; such a
    /// round, with few pairs to check, makes each pair's boxes (less `shift`) as it checks it.
    boxes: &'s FeatureBoxes,
    shift: [f32; 3],
    kept: &'s kept::Kept,
    wander: &'s kept::Wander,
    round: GuardRound,
}

impl<'s> GuardCheck<'s> {
    fn new(sc: &'s SurfaceCollision, prev: &'s [Record], now: &'s [Record], s: &'s Scratch) -> Self {
        let (boxes, kept, wander, round) = (&s.boxes, &s.kept, &s.wander, s.guard);
        GuardCheck { sc, prev, now, boxes, shift: s.shift, kept, wander, round }
    }

    /// Adds the free particles of `pair` that moved in the step to `marked` if the pair may
    /// touch during the step (`floor`: its kept floor and the first half of its wander, each
    /// `NaN` where unknown); 1 for a pair that may touch with none to add, else 0.
    fn check(&self, pair: Pair, [floor, off]: [f32; 2], marked: &mut Vec<u32>) -> u64 {
        let (sc, prev, now, round) = (self.sc, self.prev, self.now, self.round);
        let p = particles(sc, pair);
        let meet = match round.source {
            GuardSource::Searched => {
                SurfaceCollision::boxes_meet(pair.0, p, prev, now, self.shift, sc.guard_gap())
            }
            GuardSource::Kept | GuardSource::Broad => self.boxes.meet(pair, sc.guard_gap()),
        };
        let touch = meet
            && !(round.floors_hold
                && kept::apart_through_step(sc, self.kept, pair, [floor, off], self.wander, round.slack))
            && sc.may_touch(pair.0, p, prev, now);
        if !touch {
            return 0;
        }
        let before = marked.len();
        marked.extend(p.iter().filter(|&&i| now[i as usize][3] > 0.0 && moved(prev, now, i)));
        u64::from(marked.len() == before)
    }
}

/// The guard (see `weft_core::surface_collision`): moves the free particles of every pair that
/// may touch during the step from `prev` to `positions` back to `prev` (with `displacement` 0),
/// round after round until no pair may touch. The pairs checked are those whose boxes (less the
/// step's shift) meet with the guard's gap; they are the search's candidates while every
/// particle is within `(search pad − gap)/2` of its prediction and the pairs the search set
/// aside by their bounds provably stay clear of the gap (`kept::far_stays_apart`; so every such
/// pair is one of them or would be passed over), else the kept pairs while they
/// cover the step (the gap is under the search pad), else a broad phase finds them. The same
/// pairs in any of the three ways, and what a round does with them depends on the set only (the
/// particles to move back are sorted), so the result is too: the stepper checks the first
/// round's pairs in [`SEARCH_CHUNKS`] work items ([`guard_check_chunk`]) and goes on from the
/// second (`first`: the round to start at). Returns `(reverted, unresolved)`.
fn guard_into(
    sc: &SurfaceCollision,
    prev: &[Record],
    positions: &mut [Record],
    displacement: &mut [Record],
    s: &mut Scratch,
    chunks: &[Chunk],
    (searched, first): (bool, u32),
) -> (u64, u64) {
    let mut reverted = 0;
    for round in first..=MAX_GUARD_ROUNDS {
        guard_begin(sc, prev, positions, s, searched);
        let unresolved = guard_check(sc, prev, positions, s, chunks);
        match guard_settle(sc, prev, positions, displacement, s, round) {
            Some(moved_back) => reverted += moved_back,
            None => return (reverted, unresolved),
        }
    }
    (reverted, 0)
}

/// The start of a round of the guard of a step from `prev` to `now`: where the round finds its
/// pairs (into `s.guard`), and the step's boxes where those are not the search's.
fn guard_begin(sc: &SurfaceCollision, prev: &[Record], now: &[Record], s: &mut Scratch, searched: bool) {
    let (gap, shift) = (sc.guard_gap(), s.shift);
    // The kept pairs' floors hold for this step's anchor when the search scanned the kept pairs.
    let floors_hold = searched && s.covered;
    // The step starts where the search's did: the wander at its start is the search's.
    let slack = if floors_hold { s.kept.wander_in_step(sc, prev, now, &mut s.wander) } else { f32::NAN };
    // How far the round's positions are from the search's prediction (none: no search).
    let moved = if searched { farthest_from(sc.vertices(), now, &s.predicted) } else { f32::INFINITY };
    let reuse = searched
        && 2.0 * moved + gap <= 0.99 * sc.search_pad()
        && (!floors_hold || kept::far_stays_apart(sc, s.scan_reach, moved, &s.wander, slack));
    let source = if reuse {
        GuardSource::Searched
    } else if searched && s.kept.covers(sc, prev, now, shift, &mut s.spread) {
        GuardSource::Kept
    } else {
        GuardSource::Broad
    };
    if source != GuardSource::Searched {
        s.boxes.fill(sc, prev, now, shift, Forks::ALONE);
    }
    s.guard = GuardRound { source, floors_hold, slack };
}

/// A round's check of every pair, into `s.marked` (cleared first): item after item of
/// [`guard_check_item`], in order; the pairs that may touch with no particle to mark.
fn guard_check(
    sc: &SurfaceCollision,
    prev: &[Record],
    now: &[Record],
    s: &mut Scratch,
    chunks: &[Chunk],
) -> u64 {
    debug_assert!(s.guard.source == GuardSource::Broad || chunks.len() == SEARCH_CHUNKS);
    let mut marked = std::mem::take(&mut s.marked);
    marked.clear();
    let check = GuardCheck::new(sc, prev, now, s);
    let unresolved: u64 =
        chunks.iter().enumerate().map(|(c, chunk)| guard_check_item(&check, s, c, chunk, &mut marked)).sum();
    s.marked = marked;
    unresolved + guard_broad(sc, prev, now, s)
}

/// Item `c` of [`SEARCH_CHUNKS`] of the first round's check, into the chunk's marks (see
/// [`guard_check_item`]).
fn guard_check_chunk(
    sc: &SurfaceCollision,
    prev: &[Record],
    now: &[Record],
    s: &Scratch,
    c: usize,
    chunk: &mut Chunk,
) {
    let mut marked = std::mem::take(&mut chunk.marked);
    marked.clear();
    let check = GuardCheck::new(sc, prev, now, s);
    chunk.unresolved = guard_check_item(&check, s, c, chunk, &mut marked);
    chunk.marked = marked;
}

/// Item `c` of [`SEARCH_CHUNKS`] of a round's check, added to `marked`: its share of the
/// search's pairs, or `chunk`'s kept pairs (none where the round takes a broad phase of its
/// own, [`guard_broad`]); the pairs that may touch with no particle to mark. The items in order
/// check every pair in the order of the whole list.
fn guard_check_item(
    check: &GuardCheck<'_>,
    s: &Scratch,
    c: usize,
    chunk: &Chunk,
    marked: &mut Vec<u32>,
) -> u64 {
    let mut mark = |(pair, floor): (Pair, [f32; 2])| check.check(pair, floor, marked);
    match s.guard.source {
        GuardSource::Searched => {
            let share = search::share(c, s.pairs.len());
            let floors = s.pair_floors[share.clone()].iter().copied();
            s.pairs[share].iter().copied().zip(floors).map(&mut mark).sum()
        }
        GuardSource::Kept => chunk.kept().map(|(pair, floor)| mark((pair, [floor, f32::NAN]))).sum(),
        GuardSource::Broad => 0,
    }
}

/// The first round's marks from the chunks, in chunk order, into `s.marked`, and from its broad
/// phase where it takes one; the pairs that may touch with no particle to mark.
fn guard_gather(
    sc: &SurfaceCollision,
    prev: &[Record],
    now: &[Record],
    s: &mut Scratch,
    chunks: &[Chunk],
) -> u64 {
    s.marked.clear();
    for c in chunks {
        s.marked.extend_from_slice(&c.marked);
    }
    chunks.iter().map(|c| c.unresolved).sum::<u64>() + guard_broad(sc, prev, now, s)
}

/// A round's check by a broad phase of its own where the round takes one, added to `s.marked`;
/// the pairs that may touch with no particle to mark.
fn guard_broad(sc: &SurfaceCollision, prev: &[Record], now: &[Record], s: &mut Scratch) -> u64 {
    if s.guard.source != GuardSource::Broad {
        return 0;
    }
    let mut marked = std::mem::take(&mut s.marked);
    let (mut grid, mut near) = (std::mem::take(&mut s.grids[0]), std::mem::take(&mut s.near));
    let check = GuardCheck::new(sc, prev, now, s);
    let mut unresolved = 0;
    candidate_pairs(sc, &s.boxes, sc.guard_gap(), &mut grid, &mut near, |pair| {
        unresolved += check.check(pair, [f32::NAN; 2], &mut marked);
    });
    (s.grids[0], s.near, s.marked) = (grid, near, marked);
    unresolved
}

/// The end of round `round` of the guard, whose marks are in `s.marked`: `None` if it marked
/// nothing, else the particles it moved back (in the last round, every moving free particle).
fn guard_settle(
    sc: &SurfaceCollision,
    prev: &[Record],
    positions: &mut [Record],
    displacement: &mut [Record],
    s: &mut Scratch,
    round: u32,
) -> Option<u64> {
    if s.marked.is_empty() {
        return None;
    }
    if round == MAX_GUARD_ROUNDS {
        // Every moving free particle back: the start of the step was free of crossings.
        s.marked.clear();
        let movers =
            sc.vertices().iter().filter(|&&i| positions[i as usize][3] > 0.0 && moved(prev, positions, i));
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
    Some(s.marked.len() as u64)
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
    guard_into(sc, prev, positions, displacement, &mut s, &[], (false, 0))
}

/// The team's handle on the buffers.
#[derive(Clone, Copy)]
pub(crate) struct SharedBuffers<'a> {
    /// One element: the scratch.
    scratch: SharedSlice<'a, Scratch>,
    /// [`SEARCH_CHUNKS`] elements.
    chunks: SharedSlice<'a, Chunk>,
}

impl Buffers {
    /// The buffers, for the team's phases.
    pub(crate) fn share(&mut self) -> SharedBuffers<'_> {
        SharedBuffers {
            scratch: SharedSlice::new(std::slice::from_mut(&mut self.scratch)),
            chunks: SharedSlice::new(&mut self.chunks),
        }
    }
}

/// Stage 4 of a step: the contacts, at the prediction (the stages of `search`, each a phase).
pub(crate) fn search_phases(
    team: &Team<'_>,
    sc: &SurfaceCollision,
    b: SharedBuffers<'_>,
    p: &ParticleArrays<'_>,
) {
    if sc.is_empty() {
        return;
    }
    let (prev, now, chunks) = (p.prev, p.positions, SEARCH_CHUNKS);
    team.for_each_chunk(1, (b.scratch.each_mut(), prev, now), |phase, _, (s, prev, now)| {
        s.stats = SurfaceStats::default();
        search::begin(sc, prev, now, s, phase.forks());
    });
    team.for_each_chunk(chunks, (b.scratch, b.chunks.each_mut()), |_, c, (s, chunk)| {
        search::rebuild_chunk(sc, &s[0], c, chunk);
    });
    team.for_each_chunk(1, (b.scratch.each_mut(), prev, now), |phase, _, (s, prev, now)| {
        search::prepare(sc, prev, now, s, phase.forks());
    });
    team.for_each_chunk(
        chunks,
        (b.scratch, b.chunks.each_mut(), prev, now),
        |_, _, (s, chunk, prev, now)| {
            search::scan_chunk(sc, prev, now, &s[0], chunk);
        },
    );
    team.for_each_chunk(1, (b.scratch.each_mut(), b.chunks), |_, _, (s, chunks)| search::join(s, chunks));
}

/// Stage 5, in each iteration: one projection of the step's contacts (one work item).
pub(crate) fn solve_phase(
    team: &Team<'_>,
    sc: &SurfaceCollision,
    b: SharedBuffers<'_>,
    p: &ParticleArrays<'_>,
) {
    if !sc.is_empty() {
        let parts = (b.scratch.each_mut(), p.positions.whole_mut(), p.displacement.whole_mut());
        team.for_each_chunk(1, parts, |_, _, (s, x, d)| s.stats.pushes += project(&s.contacts, x, d));
    }
}

/// The guard, after every other stage that moves particles and before the velocities: its first
/// round's start (one work item), its check ([`SEARCH_CHUNKS`] items) and the rest (one item:
/// the marks gathered, then the rounds from the second); the end of the step for the kept pairs.
pub(crate) fn guard_phase(
    team: &Team<'_>,
    sc: &SurfaceCollision,
    b: SharedBuffers<'_>,
    p: &ParticleArrays<'_>,
) {
    if sc.is_empty() {
        return;
    }
    let (prev, now) = (p.prev, p.positions);
    team.for_each_chunk(1, (b.scratch.each_mut(), prev, now), |_, _, (s, prev, now)| {
        guard_begin(sc, prev, now, s, true);
    });
    team.for_each_chunk(
        SEARCH_CHUNKS,
        (b.scratch, b.chunks.each_mut(), prev, now),
        |_, c, (s, chunk, prev, now)| guard_check_chunk(sc, prev, now, &s[0], c, chunk),
    );
    let parts = (b.scratch.each_mut(), b.chunks, prev, now.whole_mut(), p.displacement.whole_mut());
    team.for_each_chunk(1, parts, |_, _, (s, chunks, prev, x, d)| {
        let unresolved = guard_gather(sc, prev, x, s, chunks);
        (s.stats.reverted, s.stats.unresolved) = match guard_settle(sc, prev, x, d, s, 0) {
            None => (0, unresolved),
            Some(first) => {
                let (reverted, unresolved) = guard_into(sc, prev, x, d, s, chunks, (true, 1));
                (first + reverted, unresolved)
            }
        };
        for (d, t) in s.kept.drift.iter_mut().zip(s.shift) {
            *d += t as f64;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::surface_collision::MAX_PUSH;

    /// A contact of a pinned vertex on a triangle whose only free corner carries 1 % of the
    /// closest point: projected exactly it would move that corner 50 times the gap.
    #[test]
    fn a_projection_moves_no_particle_farther_than_max_push_times_the_gap() {
        let contact = |weights: [f32; 4]| Contact {
            particles: [0, 1, 2, 3],
            weights,
            normal: [0.0, 1.0, 0.0],
            thickness: 0.01,
            friction: 0.0,
        };
        let start = |inv: [f32; 4]| -> Vec<Record> {
            vec![
                [0.01, 0.005, 0.0, inv[0]],
                [0.0, 0.0, 0.0, inv[1]],
                [1.0, 0.0, 0.0, inv[2]],
                [0.0, 0.0, 1.0, inv[3]],
            ]
        };
        let gap = 0.005f32;
        let mut x = start([0.0, 0.0, 1.0, 0.0]);
        let mut d = [[0.0; 4]; 4];
        assert_eq!(project(&[contact([1.0, -0.99, -0.01, 0.0])], &mut x, &mut d), 1);
        let moved = -x[2][1];
        assert!(moved > 0.0 && moved <= MAX_PUSH * gap * 1.0001, "the free corner moved {moved} m");
        assert_eq!(d[2][1], x[2][1], "the displacement records the move");
        // Every particle free, of one mass: the exact projection, which closes the gap.
        let mut x = start([1.0; 4]);
        project(&[contact([1.0, -0.5, -0.25, -0.25])], &mut x, &mut [[0.0; 4]; 4]);
        let g = x[0][1] - (0.5 * x[1][1] + 0.25 * x[2][1] + 0.25 * x[3][1]);
        assert!((g - 0.01).abs() < 1e-7, "gap closed: {g}");
    }

    /// The fuzz finding `nan-far-pins-surface-*`: a pinned vertex on a triangle whose only free
    /// corner carries a weight of 4e-21, so that `Σ w² inv` is subnormal and the friction's
    /// `f / Σ w² inv` overflowed (with a weight of 1e-22 the push's `−gap / Σ w² inv` does too);
    /// the pinned particles' `0 × ∞` made every position NaN. At the cap's limit the free corner
    /// moves `MAX_PUSH` times the gap, with friction too, and nothing else moves.
    #[test]
    fn a_contact_whose_free_corner_carries_almost_no_weight_moves_it_by_the_cap() {
        for (weight, friction) in [(-4.3e-21, 0.0), (-4.3e-21, 1.0), (-1e-22, 0.0), (-1e-22, 1.0)] {
            let contact = Contact {
                particles: [0, 1, 2, 3],
                weights: [1.0, -0.5, -0.5, weight],
                normal: [0.0, 1.0, 0.0],
                thickness: 0.05,
                friction,
            };
            let mut x: Vec<Record> = vec![
                [0.3, 0.0, 0.0, 0.0],
                [0.0, 0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0, 0.0],
                [0.0, 0.0, 1.0, 100.0],
            ];
            let mut d = vec![[0.0, 0.0, 0.01, 0.0]; 4];
            let before = x.clone();
            assert_eq!(project(&[contact], &mut x, &mut d), 1);
            assert!(x.iter().chain(&d).flatten().all(|c| c.is_finite()), "{x:?}");
            assert_eq!(x[..3], before[..3], "the pinned particles stay");
            let moved = -x[3][1];
            assert!((moved - MAX_PUSH * 0.05).abs() <= 1e-6, "the free corner moved {moved} m");
        }
    }
}
