//! The contact search of a step, in five stages that the stepper runs as team phases and
//! [`Buffers::search`] runs in turn: [`begin`] (one work item: the shift, and when the kept pairs
//! no longer cover the step, their anchor, boxes and grids, and the edges' lanes), [`rebuild_chunk`]
//! (each of [`SEARCH_CHUNKS`] items finds the kept pairs of its share of the vertices and of the
//! edges, the latter in lanes: `super::lanes`, and the floors of those within the contacts'
//! reach),
//! [`prepare`] (one item: the step's boxes, each particle's wander and each cluster's bound),
//! [`scan_chunk`] (each item tests its kept pairs, each feature's nearest first: its home's
//! bound, boxes, then the proof that they are too far apart, then closest points) and [`join`]
//! (one item: the chunks' pairs and contacts in chunk order). The chunks are cut the same way
//! for any number of threads and joined in the fixed order (every vertex–triangle pair by
//! vertex, then every edge–edge pair by first edge), so the contacts, and the step, are the same
//! bits for any thread count.

use std::ops::Range;

use weft_core::surface_collision::{Contact, SEARCH_REACH, SurfaceCollision, common_shift};
use weft_geometry::Grid;
use weft_geometry::proximity::PairKind;

use super::kept::{KEEP_MARGIN, far_apart, far_by_bound, pair_wander};
use super::lanes::{first_edge, half_grown};
use super::{FeatureBoxes, MAX_CELLS, Pair, Scratch, SurfaceStats, particles};
use crate::records::Record;
use crate::team::Forks;

/// Work items of the search's parallel stages: a fixed count, so that what each finds, and the
/// order they are joined in, do not depend on the number of threads.
pub(crate) const SEARCH_CHUNKS: usize = 32;

/// One work item of the search: the kept pairs of its share of the vertices and of the edges,
/// and what a step found among them. The kept pairs lie in one run per feature of the share
/// (its vertices, then its edges), each run the pairs of that feature (as the first, held once
/// for the run; the pairs hold their second features) sorted by
/// their box gap at the anchor, nearest first, so that a step reads each run only up to the
/// first pair its bound proves too far (`super::kept::far_by_bound`). The lists of a step hold
/// the vertex–triangle pairs first, then the edge–edge pairs, with the count of the first
/// beside them.
#[derive(Debug, Default)]
pub(crate) struct Chunk {
    near: Vec<u32>,
    /// Per kept pair, its second feature (its first is the feature of its run).
    second: Vec<u32>,
    /// Per feature of the share, the feature: a vertex (particle) or an edge (index).
    features: Vec<u32>,
    /// Per feature of the share, where its run of `second` starts, and one more: where the last
    /// ends.
    starts: Vec<u32>,
    /// Per feature of the share, its home (`Kept::home`).
    homes: Vec<u32>,
    /// How many of the share's features are vertices.
    vertex_count: usize,
    /// Per kept pair, the distance of its features' boxes at the anchor (m; a floor that needs
    /// no closest points, `FeatureBoxes::gap`).
    gap: Vec<f32>,
    /// Per kept pair, `Kept::floor` (m): made at the rebuild for a pair whose gap is within the
    /// contacts' reach ([`eager_floors`]), else `NaN` until a step first needs it.
    pub(super) floor: Vec<f32>,
    /// A run's pairs, each its gap and second feature in one key ([`run_key`]), sorted as they
    /// are kept; a run's contacts by second feature, put in order as they are joined.
    run: Vec<u64>,
    found: Vec<(u32, Contact)>,
    pairs: Vec<Pair>,
    /// Per pair of `pairs`, its floor and the first half of its wander (m, see `Scratch`).
    pair_floors: Vec<[f32; 2]>,
    pairs_split: usize,
    contacts: Vec<Contact>,
    contacts_split: usize,
    /// The guard's marks of the chunk's pairs in its first round, and its pairs that may touch
    /// with none to mark (`super::guard_check_chunk`).
    pub(super) marked: Vec<u32>,
    pub(super) unresolved: u64,
}

/// The buffers of surface self-collision, kept between steps: the scratch and the search's
/// chunks (apart, so that the chunks can be written while the scratch is read).
#[derive(Debug)]
pub(crate) struct Buffers {
    pub(super) scratch: Scratch,
    pub(super) chunks: Vec<Chunk>,
}

impl Default for Buffers {
    fn default() -> Self {
        Buffers {
            scratch: Scratch::default(),
            chunks: (0..SEARCH_CHUNKS).map(|_| Chunk::default()).collect(),
        }
    }
}

impl Buffers {
    /// What the last step did.
    pub(crate) fn stats(&self) -> SurfaceStats {
        self.scratch.stats
    }

    /// The search of a step from `prev` to the prediction `now`, its stages in turn.
    pub(super) fn search(&mut self, sc: &SurfaceCollision, prev: &[Record], now: &[Record]) {
        let s = &mut self.scratch;
        begin(sc, prev, now, s, Forks::ALONE);
        for (c, chunk) in self.chunks.iter_mut().enumerate() {
            rebuild_chunk(sc, s, c, chunk);
        }
        prepare(sc, prev, now, s, Forks::ALONE);
        for chunk in &mut self.chunks {
            scan_chunk(sc, prev, now, s, chunk);
        }
        join(s, &self.chunks);
    }
}

/// Item `c`'s share of `0..len` in [`SEARCH_CHUNKS`] items.
pub(super) fn share(c: usize, len: usize) -> Range<usize> {
    let size = len.div_ceil(SEARCH_CHUNKS);
    (c * size).min(len)..((c + 1) * size).min(len)
}

/// The grid cell of a broad phase whose boxes are grown by `pad` (m): a mean edge and the pad,
/// about half a query's box (a feature about a mean edge across, grown by the pad on each side).
/// A query then spans two or three cells along each axis, and a feature is listed in one or two
/// (docs/performance.md has what this cell saves against the larger of the two alone).
fn cell(sc: &SurfaceCollision, pad: f32) -> f64 {
    (sc.mean_edge() + pad).max(f32::MIN_POSITIVE) as f64
}

/// The cell of a rebuild's edges' grid, as a multiple of [`cell`]. Its listings are tested in
/// lanes (`super::lanes`), where one more listing of a cell costs little and one more cell an
/// edge asks for (its bucket found, the edges below it skipped by a binary search) costs more,
/// so cells larger than the queries' cost least (docs/performance.md, "Finding the kept pairs in
/// lanes").
const EDGE_CELLS: f64 = 2.5;

/// Fills `near` (cleared first, in the grid's order) with the triangles of `grid` that are not
/// `v`'s own and whose boxes meet `v`'s grown by `pad`.
fn near_triangles(
    sc: &SurfaceCollision,
    (boxes, pad, grid): (&FeatureBoxes, f32, &Grid),
    v: u32,
    near: &mut Vec<u32>,
) {
    let tris = sc.triangles();
    near.clear();
    // `FeatureBoxes::meet`, the query's box grown once.
    let grown = boxes.vertices[v as usize].grown(pad);
    grid.keep_in_box(&grown, near, |t| {
        let [a, b, c] = tris[t as usize];
        grown.overlaps(&boxes.triangles[t as usize]) & (a != v) & (b != v) & (c != v)
    });
}

/// Fills `near` (cleared first, in the grid's order) with the edges `f > e` of `grid` that share
/// no particle with edge `e` and whose boxes meet `e`'s grown by `pad`.
fn near_edges(
    sc: &SurfaceCollision,
    (boxes, pad, grid): (&FeatureBoxes, f32, &Grid),
    e: usize,
    near: &mut Vec<u32>,
) {
    let all = sc.edges();
    let a = all[e];
    near.clear();
    // As in `near_triangles`.
    let grown = boxes.edges[e].grown(pad);
    grid.for_each_in_box(&grown, |f| {
        if f as usize > e && grown.overlaps(&boxes.edges[f as usize]) {
            let b = all[f as usize];
            if !a.contains(&b[0]) && !a.contains(&b[1]) {
                near.push(f);
            }
        }
    });
}

/// Every candidate pair of features whose `boxes` meet (the first feature's grown by `pad`), in
/// the fixed order, one stage after the other: the broad phase of a step the kept pairs do not
/// cover, and of the guard.
pub(super) fn candidate_pairs(
    sc: &SurfaceCollision,
    boxes: &FeatureBoxes,
    pad: f32,
    grid: &mut Grid,
    near: &mut Vec<u32>,
    mut on_pair: impl FnMut(Pair),
) {
    let cell = cell(sc, pad);
    grid.build_boxes(cell, MAX_CELLS, sc.triangles().len(), |t| boxes.triangles[t]);
    for &v in sc.vertices() {
        // The pairs tested as the grid lists them, then sorted: fewer to sort than the listed.
        near_triangles(sc, (boxes, pad, grid), v, near);
        near.sort_unstable();
        near.iter().for_each(|&t| on_pair((PairKind::VertexTriangle, v, t)));
    }
    grid.build_boxes(cell, MAX_CELLS, sc.edges().len(), |e| boxes.edges[e]);
    for e in 0..sc.edges().len() {
        near_edges(sc, (boxes, pad, grid), e, near);
        near.sort_unstable();
        near.iter().for_each(|&f| on_pair((PairKind::EdgeEdge, e as u32, f)));
    }
}

/// The contact of `pair` in a step from `prev` to `now`, if it can come near.
fn contact(sc: &SurfaceCollision, pair: Pair, prev: &[Record], now: &[Record]) -> Option<Contact> {
    let p = particles(sc, pair);
    match pair.0 {
        PairKind::VertexTriangle => sc.vertex_triangle_contact(p[0], [p[1], p[2], p[3]], prev, now),
        PairKind::EdgeEdge => sc.edge_edge_contact([p[0], p[1]], [p[2], p[3]], prev, now),
    }
}

/// Stage 1 (one work item, its boxes and grids forked on `forks`): the step's shift and
/// prediction; when the kept pairs do not cover the step, their new anchor (the step's start)
/// and the boxes, grids and lanes they are found in.
pub(super) fn begin(
    sc: &SurfaceCollision,
    prev: &[Record],
    now: &[Record],
    s: &mut Scratch,
    forks: Forks<'_>,
) {
    s.contacts.clear();
    s.pairs.clear();
    s.pair_floors.clear();
    s.shift = common_shift(sc.vertices(), prev, now);
    s.predicted.clear();
    s.predicted.extend_from_slice(now);
    s.rebuild = !s.kept.covers(sc, prev, now, s.shift, &mut s.spread);
    if s.rebuild {
        s.boxes.fill(sc, prev, prev, [0.0; 3], forks);
        s.kept.reset(sc, prev, &s.boxes);
        s.reach = sc.search_pad() + KEEP_MARGIN * sc.mean_edge();
        let (cell, boxes) = (cell(sc, s.reach), &s.boxes);
        let reach = s.reach;
        // The triangles' grid beside the edges', then the edges' lanes (see `lanes`).
        forks.chunks_mut(&mut s.grids, 1, |g, grid| match g {
            0 => grid[0].build_boxes(cell, MAX_CELLS, sc.triangles().len(), |t| boxes.triangles[t]),
            _ => {
                let cell = cell * EDGE_CELLS;
                grid[0].build_boxes(cell, MAX_CELLS, sc.edges().len(), |e| half_grown(&boxes.edges[e], reach))
            }
        });
        s.edge_lanes.fill(&s.grids[1], (sc.edges(), &s.boxes.edges), forks);
        s.stats.rebuilds += 1;
    }
}

/// Stage 2 (item `c` of [`SEARCH_CHUNKS`]): when [`begin`] anchored the kept pairs anew, those
/// of chunk `c`'s vertices and edges, in runs (see [`Chunk`]).
pub(super) fn rebuild_chunk(sc: &SurfaceCollision, s: &Scratch, c: usize, chunk: &mut Chunk) {
    if !s.rebuild {
        return;
    }
    chunk.second.clear();
    chunk.gap.clear();
    chunk.starts.clear();
    chunk.features.clear();
    chunk.homes.clear();
    let (near, run) = (&mut chunk.near, &mut chunk.run);
    let vertices = &sc.vertices()[share(c, sc.vertices().len())];
    chunk.vertex_count = vertices.len();
    let (boxes, reach) = (&s.boxes, s.reach);
    for &v in vertices {
        near_triangles(sc, (boxes, reach, &s.grids[0]), v, near);
        run.clear();
        run.extend(near.iter().map(|&t| run_key(boxes.gap((PairKind::VertexTriangle, v, t)), t)));
        keep_run(run, (&mut chunk.second, &mut chunk.gap, &mut chunk.starts));
        chunk.features.push(v);
        chunk.homes.push(s.kept.home(&[v]));
    }
    for e in share(c, sc.edges().len()) {
        s.edge_lanes.near(
            &s.grids[1],
            &first_edge(sc, &boxes.edges, reach, e),
            (sc.edges(), &boxes.edges),
            near,
        );
        run.clear();
        run.extend(near.iter().map(|&f| run_key(boxes.gap((PairKind::EdgeEdge, e as u32, f)), f)));
        keep_run(run, (&mut chunk.second, &mut chunk.gap, &mut chunk.starts));
        chunk.features.push(e as u32);
        chunk.homes.push(s.kept.home(&sc.edges()[e]));
    }
    chunk.starts.push(chunk.second.len() as u32);
    chunk.floor.clear();
    chunk.floor.resize(chunk.second.len(), f32::NAN);
    eager_floors(sc, s, chunk);
}

/// The floors (`Kept::floor`) of the chunk's kept pairs whose gap is within the contacts'
/// reach (`SEARCH_REACH·h_max`): no bound of the scan can show such a pair far by its gap, so
/// the first step whose boxes of it meet needs its floor. Made here, four pairs of a kind at a
/// time in lanes (`Kept::floors`), where the scan made each alone behind its own chain of
/// loads, roots and quotients; the same floors, so the same bits.
fn eager_floors(sc: &SurfaceCollision, s: &Scratch, chunk: &mut Chunk) {
    let reach = SEARCH_REACH * sc.max_thickness();
    // Up to four pairs of the kind being read (`held` of them), and where their floors go.
    let mut batch = [(0usize, (PairKind::VertexTriangle, 0u32, 0u32)); 4];
    let mut held = 0;
    let flush = |batch: &[(usize, Pair)], floor: &mut [f32]| {
        if let Some(&(_, last)) = batch.last() {
            let pairs = std::array::from_fn(|l| batch.get(l).map_or(last, |b| b.1));
            for (&(k, _), f) in batch.iter().zip(s.kept.floors(sc, &pairs)) {
                floor[k] = f;
            }
        }
    };
    for f in 0..chunk.features.len() {
        let (kind, first) = (chunk.kind(f), chunk.features[f]);
        if f == chunk.vertex_count {
            flush(&batch[..held], &mut chunk.floor);
            held = 0;
        }
        // A run is in order of gap: its pairs within the reach come first.
        for k in chunk.starts[f] as usize..chunk.starts[f + 1] as usize {
            if chunk.gap[k] > reach {
                break;
            }
            batch[held] = (k, (kind, first, chunk.second[k]));
            held += 1;
            if held == batch.len() {
                flush(&batch, &mut chunk.floor);
                held = 0;
            }
        }
    }
    flush(&batch[..held], &mut chunk.floor);
}

/// Appends one feature's run (its pairs' [`run_key`]s), sorted nearest first (then by second
/// feature), to the kept pairs' second features and gaps, and its start to the starts.
fn keep_run(run: &mut [u64], (second, gap, starts): (&mut Vec<u32>, &mut Vec<f32>, &mut Vec<u32>)) {
    run.sort_unstable();
    starts.push(second.len() as u32);
    second.extend(run.iter().map(|&key| from_run_key(key).1));
    gap.extend(run.iter().map(|&key| from_run_key(key).0));
}

/// The key that orders a kept pair in its run as `f32::total_cmp` of its gap (m), then its
/// second feature, would: the gap's bits in the high half, turned so that unsigned integers
/// compare as `total_cmp` does (negatives flipped whole, the rest above them).
fn run_key(gap: f32, second: u32) -> u64 {
    let bits = gap.to_bits();
    let ordered = if bits >> 31 == 1 { !bits } else { bits | 1 << 31 };
    u64::from(ordered) << 32 | u64::from(second)
}

/// The gap and second feature of a [`run_key`].
fn from_run_key(key: u64) -> (f32, u32) {
    let ordered = (key >> 32) as u32;
    let bits = if ordered >> 31 == 1 { ordered & !(1 << 31) } else { !ordered };
    (f32::from_bits(bits), key as u32)
}

impl Chunk {
    /// The kind of the pairs of feature `f` of the share.
    fn kind(&self, f: usize) -> PairKind {
        if f < self.vertex_count { PairKind::VertexTriangle } else { PairKind::EdgeEdge }
    }

    /// Every kept pair of the chunk with its floor (`Kept::floor`, `NaN` where none is made
    /// yet), run by run.
    pub(super) fn kept(&self) -> impl Iterator<Item = (Pair, f32)> + '_ {
        (0..self.features.len()).flat_map(move |f| {
            let (kind, first) = (self.kind(f), self.features[f]);
            let run = self.starts[f] as usize..self.starts[f + 1] as usize;
            run.map(move |k| ((kind, first, self.second[k]), self.floor[k]))
        })
    }
}

/// Stage 3 (one work item, its boxes forked on `forks`): whether the kept pairs cover the step,
/// the step's boxes and each particle's wander; for a step faster than the margin, its own broad
/// phase and contacts.
pub(super) fn prepare(
    sc: &SurfaceCollision,
    prev: &[Record],
    now: &[Record],
    s: &mut Scratch,
    forks: Forks<'_>,
) {
    s.covered = !s.rebuild || s.kept.covers(sc, prev, now, s.shift, &mut s.spread);
    s.boxes.fill(sc, prev, now, s.shift, forks);
    if s.covered {
        s.slack = s.kept.wander(sc, prev, now, &mut s.wander);
        s.scan_reach = SEARCH_REACH * sc.max_thickness() + s.slack;
    } else {
        let (contacts, pairs) = (&mut s.contacts, &mut s.pairs);
        let floors = &mut s.pair_floors;
        candidate_pairs(sc, &s.boxes, sc.search_pad(), &mut s.grids[0], &mut s.near, |pair| {
            pairs.push(pair);
            floors.push([f32::NAN; 2]); // no floor: found without the kept pairs
            contacts.extend(contact(sc, pair, prev, now));
        });
    }
}

/// Stage 4 (one work item per chunk): the chunk's kept pairs whose boxes meet in the step, and
/// the contacts of those not provably too far apart (`super::kept::far_apart`).
pub(super) fn scan_chunk(
    sc: &SurfaceCollision,
    prev: &[Record],
    now: &[Record],
    s: &Scratch,
    chunk: &mut Chunk,
) {
    chunk.pairs.clear();
    chunk.pair_floors.clear();
    chunk.contacts.clear();
    (chunk.pairs_split, chunk.contacts_split) = (0, 0);
    if !s.covered {
        return;
    }
    let (pad, reach) = (sc.search_pad(), s.scan_reach);
    for f in 0..chunk.homes.len() {
        if f == chunk.vertex_count {
            (chunk.pairs_split, chunk.contacts_split) = (chunk.pairs.len(), chunk.contacts.len());
        }
        let (kind, first) = (chunk.kind(f), chunk.features[f]);
        let own = match kind {
            PairKind::VertexTriangle => &[first][..],
            PairKind::EdgeEdge => &sc.edges()[first as usize][..],
        };
        let bound = s.wander.run_bound(chunk.homes[f], own);
        // `FeatureBoxes::meet` of the run's pairs, the first feature's box grown once.
        let (grown, seconds) = s.boxes.first_grown(kind, first, pad);
        for k in chunk.starts[f] as usize..chunk.starts[f + 1] as usize {
            if far_by_bound(chunk.gap[k], bound, reach) {
                break; // and every pair after it in the run, whose gap is no smaller
            }
            let second = chunk.second[k];
            // `NaN` (no floor yet) is never far.
            if far_by_bound(chunk.floor[k], bound, reach) || !grown.overlaps(&seconds[second as usize]) {
                continue;
            }
            let pair = (kind, first, second);
            let wander = pair_wander(sc, &s.kept, pair, &s.wander);
            // The gap is a floor too, and needs no closest points.
            if far_apart(sc, wander, chunk.gap[k], s.slack) {
                continue;
            }
            if chunk.floor[k].is_nan() {
                chunk.floor[k] = s.kept.floor(sc, pair);
            }
            let floor = chunk.floor[k];
            if far_apart(sc, wander, floor, s.slack) {
                continue;
            }
            chunk.pairs.push(pair);
            chunk.pair_floors.push([floor, wander[0]]);
            chunk.found.extend(contact(sc, pair, prev, now).map(|c| (pair.2, c)));
        }
        // The run's contacts in the fixed order: by second feature.
        chunk.found.sort_unstable_by_key(|&(b, _)| b);
        chunk.contacts.extend(chunk.found.drain(..).map(|(_, c)| c));
    }
    if chunk.vertex_count == chunk.homes.len() {
        (chunk.pairs_split, chunk.contacts_split) = (chunk.pairs.len(), chunk.contacts.len());
    }
}

/// Stage 5 (one work item): the chunks' candidate pairs and contacts in the fixed order.
pub(super) fn join(s: &mut Scratch, chunks: &[Chunk]) {
    if s.covered {
        for c in chunks {
            s.pairs.extend_from_slice(&c.pairs[..c.pairs_split]);
            s.pair_floors.extend_from_slice(&c.pair_floors[..c.pairs_split]);
            s.contacts.extend_from_slice(&c.contacts[..c.contacts_split]);
        }
        for c in chunks {
            s.pairs.extend_from_slice(&c.pairs[c.pairs_split..]);
            s.pair_floors.extend_from_slice(&c.pair_floors[c.pairs_split..]);
            s.contacts.extend_from_slice(&c.contacts[c.contacts_split..]);
        }
    }
    s.stats.contacts = s.contacts.len() as u64;
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use weft_core::Model;
    use weft_core::builder::{ClothDesc, ModelBuilder};
    use weft_core::limits::Limits;
    use weft_core::self_collision::{SelfCollisionDesc, SelfCollisionMode};
    use weft_core::settings::SimSettings;

    use super::*;

    /// A sheet of `triangles` at `positions`, surface self-collision at `thickness` (m).
    fn model(positions: Vec<[f32; 3]>, triangles: Vec<[u32; 3]>, thickness: f32) -> Model {
        let mut b = ModelBuilder::new(SimSettings::default(), Limits::default()).unwrap();
        b.add_cloth(&ClothDesc {
            name: "c".into(),
            positions,
            triangles,
            self_collision: Some(SelfCollisionDesc { thickness, friction: 0.0 }),
            self_collision_mode: SelfCollisionMode::Triangles,
            ..ClothDesc::default()
        })
        .unwrap();
        b.build().unwrap()
    }

    /// A crumpled sheet of `n × n` particles 2 cm apart: lifted by `scale` times `lift` (100
    /// values in `-1..1`), moved `offset` along every axis, particle `far` thrown 40 m up;
    /// surface self-collision at `thickness` times the most a build allows (half the shortest
    /// edge). `None` for a sheet crumpled so that an edge is under 1 mm.
    fn crumpled(
        n: u32,
        lift: &[f32],
        (scale, offset): (f32, f32),
        far: Option<usize>,
        thickness: f32,
    ) -> Option<Model> {
        let spacing = 0.02;
        let positions: Vec<[f32; 3]> = (0..(n * n) as usize)
            .map(|k| {
                let (i, j) = ((k as u32 % n) as f32, (k as u32 / n) as f32);
                let y = if far == Some(k) { 40.0 } else { scale * lift[k] };
                [offset + i * spacing + 0.3 * scale * lift[99 - k], offset + y, offset + j * spacing]
            })
            .collect();
        let mut triangles = Vec::new();
        for j in 0..n - 1 {
            for i in 0..n - 1 {
                let a = j * n + i;
                triangles.extend([[a, a + 1, a + n + 1], [a, a + n + 1, a + n]]);
            }
        }
        let d = |a: u32, b: u32| {
            let (p, q) = (positions[a as usize], positions[b as usize]);
            (0..3).map(|k| (p[k] as f64 - q[k] as f64).powi(2)).sum::<f64>().sqrt()
        };
        let sides = triangles.iter().flat_map(|t| [d(t[0], t[1]), d(t[1], t[2]), d(t[2], t[0])]);
        let shortest = sides.fold(f64::MAX, f64::min) as f32;
        (shortest > 1e-3).then(|| model(positions, triangles, 0.5 * thickness * shortest))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// The edge–edge pairs a rebuild keeps, found in lanes of the grid of half-grown boxes,
        /// are exactly those each edge's own query finds in a grid of its plain boxes
        /// (`near_edges`): on a crumpled sheet near the origin or far from it (where the
        /// rounding of the grown boxes matters most), with a particle sometimes thrown far off
        /// (edges spanning more cells than a grid lists: big entries), its thickness a fraction
        /// of what the build allows.
        #[test]
        fn a_rebuild_keeps_the_edge_pairs_each_edge_finds(
            n in 3u32..10,
            lift in prop::collection::vec(-1.0f32..1.0, 100),
            scale in prop::sample::select(vec![0.005f32, 0.02, 0.2]),
            offset in prop::sample::select(vec![0.0f32, 1e3, -7e3]),
            far in prop::option::of(0usize..100),
            thickness in 0.01f32..0.99,
        ) {
            let m = crumpled(n, &lift, (scale, offset), far, thickness);
            prop_assume!(m.is_some());
            let m = m.expect("assumed");
            let sc = m.surface_collision();
            let prev = m.particles().positions().to_vec();
            let mut b = Buffers::default();
            let s = &mut b.scratch;
            begin(sc, &prev, &prev, s, Forks::ALONE);
            prop_assert!(s.rebuild);
            let mut kept = Vec::new();
            for (c, chunk) in b.chunks.iter_mut().enumerate() {
                rebuild_chunk(sc, &b.scratch, c, chunk);
                kept.extend(chunk.kept().filter(|(p, _)| p.0 == PairKind::EdgeEdge).map(|(p, _)| [p.1, p.2]));
            }
            let s = &b.scratch;
            let mut grid = Grid::default();
            grid.build_boxes(cell(sc, s.reach), MAX_CELLS, sc.edges().len(), |e| s.boxes.edges[e]);
            let (mut want, mut near) = (Vec::new(), Vec::new());
            for e in 0..sc.edges().len() {
                near_edges(sc, (&s.boxes, s.reach, &grid), e, &mut near);
                want.extend(near.iter().map(|&f| [e as u32, f]));
            }
            prop_assert!(!want.is_empty());
            kept.sort_unstable();
            want.sort_unstable();
            prop_assert_eq!(kept, want);
        }

        /// The bound of a run is at least every one of its kept pairs' wander sums, so that a
        /// floor it proves far is far for `far_apart` too: on a crumpled sheet anchored, then
        /// moved by waves (parts of it apart, each cluster's centre its own way) and stepped on.
        /// Fails if a run whose first edge spans two clusters is given the farthest centre once.
        /// Before the step, holds the floors the rebuild made.
        #[test]
        fn a_run_bound_holds_each_pair_of_its_run(
            n in 3u32..10,
            lift in prop::collection::vec(-1.0f32..1.0, 100),
            scale in prop::sample::select(vec![0.005f32, 0.02, 0.2]),
            offset in prop::sample::select(vec![0.0f32, 1e3]),
            thickness in 0.01f32..0.99,
            waves in prop::array::uniform4(-1.0f32..1.0),
        ) {
            let m = crumpled(n, &lift, (scale, offset), None, thickness);
            prop_assume!(m.is_some());
            let m = m.expect("assumed");
            let sc = m.surface_collision();
            let anchor = m.particles().positions().to_vec();
            let mut b = Buffers::default();
            begin(sc, &anchor, &anchor, &mut b.scratch, Forks::ALONE);
            for (c, chunk) in b.chunks.iter_mut().enumerate() {
                rebuild_chunk(sc, &b.scratch, c, chunk);
            }
            // The rebuild made the floors of the pairs within the contacts' reach, four at a
            // time, each the one pair's own (`Kept::floor`), and no other.
            let reach = SEARCH_REACH * sc.max_thickness();
            for chunk in &b.chunks {
                for (k, (pair, floor)) in chunk.kept().enumerate() {
                    if chunk.gap[k] <= reach {
                        prop_assert_eq!(floor, b.scratch.kept.floor(sc, pair), "{:?}", pair);
                    } else {
                        prop_assert!(floor.is_nan(), "{:?}", pair);
                    }
                }
            }
            // Waves a few clusters long, up to a tenth of an edge: the kept pairs still cover.
            let moved = |x: &[Record], amp: f32, phase: f32| -> Vec<Record> {
                x.iter()
                    .map(|p| {
                        let w = (p[0] * 40.0 + p[2] * 25.0 + phase).sin() * amp * 0.002;
                        [p[0] + w, p[1] - w, p[2] + 0.5 * w, p[3]]
                    })
                    .collect()
            };
            let prev = moved(&anchor, waves[0], waves[1]);
            let now = moved(&prev, waves[2], waves[3]);
            let s = &mut b.scratch;
            begin(sc, &prev, &now, s, Forks::ALONE);
            prop_assume!(!s.rebuild);
            prepare(sc, &prev, &now, s, Forks::ALONE);
            prop_assert!(s.covered);
            let mut runs = 0;
            for chunk in &b.chunks {
                for f in 0..chunk.homes.len() {
                    let (kind, first) = (chunk.kind(f), chunk.features[f]);
                    let own = match kind {
                        PairKind::VertexTriangle => &[first][..],
                        PairKind::EdgeEdge => &sc.edges()[first as usize][..],
                    };
                    let bound = s.wander.run_bound(chunk.homes[f], own);
                    for k in chunk.starts[f] as usize..chunk.starts[f + 1] as usize {
                        let [off, step] = pair_wander(sc, &s.kept, (kind, first, chunk.second[k]), &s.wander);
                        prop_assert!(off + step <= bound, "{:?} {} {}: {} + {} over {}", kind, first, chunk.second[k], off, step, bound);
                    }
                    runs += 1;
                }
            }
            prop_assert!(runs > 0);
        }
    }
}
