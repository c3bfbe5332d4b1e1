//! Intersecting triangle pairs: the exact triangle–triangle test and the count of a cloth's
//! intersecting pairs, for the per-frame statistics of a bake and for the tests.
//!
//! [`intersecting_pairs`] counts the pairs of triangles of one cloth that share no corner
//! (non-adjacent: triangles sharing a corner or an edge always touch there and are never counted)
//! and whose closed surfaces have a point in common: they cross, or touch at an edge or a corner,
//! or overlap in a common plane.
//!
//! The test is exact: it decides every case from the signs of orientation determinants evaluated
//! with Shewchuk's adaptive-precision predicates (the `robust` crate), so coplanar, touching and
//! nearly parallel triangles are classified correctly, not by an epsilon. Two non-coplanar
//! triangles meet exactly when an edge of one meets the other (the ends of their common segment lie
//! on edges); a segment and a triangle meet when the segment reaches the triangle's plane within
//! its length and the segment's line passes inside the triangle's three edges, or, for a segment in
//! the triangle's plane, when the two overlap in that plane (an exact 2D test after dropping the
//! coordinate of the normal's largest component). A zero-area triangle (collinear corners) is
//! taken as its three edges against a proper triangle; a pair of two zero-area triangles is not
//! counted (neither has a surface to pierce).
//!
//! Candidate pairs come from the triangles sorted by cell: cubes of twice the mean of the
//! triangles' largest box extents, each triangle keyed by the cell of its box's lowest corner. The
//! cell of a coordinate is monotone in it, so two boxes that meet and each span at most two cells
//! along every axis have their lowest corners in the same or neighbouring cells, and one lies a
//! cell above the other along an axis only if the other spans two cells along it. Every such pair
//! is searched once: within a cell, and from each cell against those of the 13 neighbouring cells
//! after it in the sort's order that its triangles' boxes can reach, found by cursors that only
//! move forward (in parallel by ranges of the sorted triangles on the current rayon pool). Within a
//! cell the triangles are in order of their boxes' lowest x, so each is tested only against those
//! whose boxes start before its own ends along x: where a cloth crumples many layers into a cell,
//! that skips most of the cell's pairs; and a neighbouring cell a step up along some axes is
//! searched against the cell's triangles whose boxes span those axes alone (each cell's triangles
//! grouped by the axes they span, each group read from past the boxes that end before the
//! neighbour's start along x). A *big* triangle, spanning more cells, is searched against the
//! small ones whose cells can reach its box, and the big ones among themselves as a search of their
//! own with cells fitted to them (at most half the triangles are big at any level, so the levels
//! are few). A pair is tested when its boxes meet and it shares no corner: where the boxes only
//! touch (one ends where the other starts along an axis, as for the neighbours of a cloth that
//! still lies as it was generated) the corners in the plane they share decide it exactly and at
//! once; else after a fast float separating-axis test with a wide margin has failed to show them
//! apart. On the flat 256² grid, whose ~320,000 pairs asked are all of the first kind, that made a
//! count 1.5× faster (55-65 → 35-41 ms on one thread, ~27 → ~21 ms on two). The count is a sum of
//! integers over the same pairs whatever the order of the sort, so it depends on no thread count.
//! Triangles with a non-finite corner are left out. The boxes of a cell are copied into columns
//! (the crate's `box_lanes`), in the cell's order and by group, so that a box is tested against
//! eight of them at once; a cell too crowded for the copies is searched one box at a time.
//!
//! Before searching, an [`IntersectionCounter`] asks whether the cloth lies unfolded
//! ([`crate::outline`]: seen along a coordinate axis, every triangle turns the same way and the
//! boundary is one simple loop), which proves the count 0 in time linear in the triangles. A
//! sheet as generated passes it, as do drapes and flags without folds: the flat 256² grid's
//! count went from 24–30 ms on two threads to ~1.1 ms (the loop found once, in 5–9 ms). A cloth
//! that fails it is searched.
//!
//! The search holds one record per triangle ([`BYTES_PER_TRIANGLE`]: its key, corners and box)
//! and sorts it in place: its memory depends on the triangle count alone, never on how the
//! cloth lies or folds. A bake keeps an [`IntersectionCounter`], whose buffer outlives a frame.
//! Against the grid search it replaced (each triangle listed in every cell its box covered, 3 to
//! 7 listings of 40 B on the comparison grids of docs/performance.md, flat and after 30 frames)
//! it takes a fourth to a sixth of the memory, and 0.9–1.1× the time on the 256² and 512² grids
//! and 0.6–0.9× on the 1024² one (interleaved runs on a shared 2-core machine, same counts).

use rayon::prelude::*;
use robust::{Coord, Coord3D, orient2d, orient3d};

use crate::aabb::Aabb;
use crate::box_lanes::{BoxLanes, LANES};
use crate::outline::Outline;

/// A point in m.
type P = [f32; 3];

fn c3(p: P) -> Coord3D<f64> {
    Coord3D { x: p[0] as f64, y: p[1] as f64, z: p[2] as f64 }
}

/// Exact sign of the orientation of `d` against the plane through `a, b, c`: `1`, `0` or `-1`.
fn orient(a: P, b: P, c: P, d: P) -> i32 {
    let o = orient3d(c3(a), c3(b), c3(c), c3(d));
    (o > 0.0) as i32 - (o < 0.0) as i32
}

/// Exact sign of the 2D orientation of `c` against the line through `a, b`.
pub(crate) fn orient_2d(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> i32 {
    let o = orient2d(Coord { x: a[0], y: a[1] }, Coord { x: b[0], y: b[1] }, Coord { x: c[0], y: c[1] });
    (o > 0.0) as i32 - (o < 0.0) as i32
}

/// True when the corners of the triangle are not collinear (exactly).
fn has_area(t: [P; 3]) -> bool {
    // Collinear exactly when every axis-aligned projection is collinear.
    (0..3).any(|axis| {
        let p = t.map(|v| project(v, axis));
        orient_2d(p[0], p[1], p[2]) != 0
    })
}

/// Drops coordinate `axis` (exact).
pub(crate) fn project(p: P, axis: usize) -> [f64; 2] {
    let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
    [p[u] as f64, p[v] as f64]
}

/// The coordinate along which the triangle's plane projects without collapsing: one where its 2D
/// orientation is not zero (the normal's component along it is not zero).
fn projection_axis(t: [P; 3]) -> Option<usize> {
    (0..3).find(|&axis| {
        let p = t.map(|v| project(v, axis));
        orient_2d(p[0], p[1], p[2]) != 0
    })
}

/// Closed 2D segments `p q` and `r s` have a point in common.
pub(crate) fn segments_meet_2d(p: [f64; 2], q: [f64; 2], r: [f64; 2], s: [f64; 2]) -> bool {
    let (o1, o2) = (orient_2d(p, q, r), orient_2d(p, q, s));
    let (o3, o4) = (orient_2d(r, s, p), orient_2d(r, s, q));
    if o1 * o2 < 0 && o3 * o4 < 0 {
        return true;
    }
    let within = |a: [f64; 2], b: [f64; 2], c: [f64; 2]| {
        a[0].min(b[0]) <= c[0] && c[0] <= a[0].max(b[0]) && a[1].min(b[1]) <= c[1] && c[1] <= a[1].max(b[1])
    };
    (o1 == 0 && within(p, q, r))
        || (o2 == 0 && within(p, q, s))
        || (o3 == 0 && within(r, s, p))
        || (o4 == 0 && within(r, s, q))
}

/// Closed 2D point-in-triangle (the triangle has non-zero area).
fn inside_2d(t: [[f64; 2]; 3], p: [f64; 2]) -> bool {
    let o = [orient_2d(t[0], t[1], p), orient_2d(t[1], t[2], p), orient_2d(t[2], t[0], p)];
    o.iter().all(|&s| s >= 0) || o.iter().all(|&s| s <= 0)
}

/// The closed segment `p q` meets the closed triangle `t`, which has non-zero area.
fn segment_meets_triangle(p: P, q: P, t: [P; 3]) -> bool {
    let (sp, sq) = (orient(t[0], t[1], t[2], p), orient(t[0], t[1], t[2], q));
    if sp * sq > 0 {
        return false;
    }
    if sp == 0 && sq == 0 {
        // In the triangle's plane: an exact 2D test in a projection that keeps the triangle's area.
        let Some(axis) = projection_axis(t) else { return false };
        let tt = t.map(|v| project(v, axis));
        let (pp, qq) = (project(p, axis), project(q, axis));
        return inside_2d(tt, pp)
            || inside_2d(tt, qq)
            || (0..3).any(|k| segments_meet_2d(pp, qq, tt[k], tt[(k + 1) % 3]));
    }
    // The segment reaches the plane within its length; its line passes through the closed
    // triangle when it sees the three edges turning the same way (zeros allowed).
    let o = [orient(p, q, t[0], t[1]), orient(p, q, t[1], t[2]), orient(p, q, t[2], t[0])];
    o.iter().all(|&s| s >= 0) || o.iter().all(|&s| s <= 0)
}

/// The closed triangles `a` and `b` have a point in common (module docs). Exact.
///
/// ```
/// use weft_geometry::intersections::triangles_intersect;
/// let a = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
/// let crossing = [[0.2, 0.2, -1.0], [0.2, 0.2, 1.0], [2.0, 2.0, 0.5]];
/// let above = [[0.2, 0.2, 0.1], [0.3, 0.2, 1.0], [2.0, 2.0, 0.5]];
/// assert!(triangles_intersect(a, crossing));
/// assert!(!triangles_intersect(a, above));
/// ```
pub fn triangles_intersect(a: [P; 3], b: [P; 3]) -> bool {
    let (area_a, area_b) = (has_area(a), has_area(b));
    let edges_meet = |s: [P; 3], t: [P; 3]| (0..3).any(|k| segment_meets_triangle(s[k], s[(k + 1) % 3], t));
    match (area_a, area_b) {
        (true, true) => edges_meet(a, b) || edges_meet(b, a),
        (false, true) => edges_meet(a, b),
        (true, false) => edges_meet(b, a),
        (false, false) => false,
    }
}

/// A fast, conservative float test: true when some axis certainly separates the triangles (with a
/// margin far above the `f64` rounding of the projections), so the exact test can be skipped.
/// Axes: both normals, the nine edge–edge cross products, and each edge crossed with its own
/// triangle's normal (the in-plane axes that separate coplanar triangles).
fn surely_apart(a: [P; 3], b: [P; 3]) -> bool {
    let v = |p: P| [p[0] as f64, p[1] as f64, p[2] as f64];
    let (a, b) = (a.map(v), b.map(v));
    let sub = |p: [f64; 3], q: [f64; 3]| [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
    let cross = |p: [f64; 3], q: [f64; 3]| {
        [p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2], p[0] * q[1] - p[1] * q[0]]
    };
    let dot = |p: [f64; 3], q: [f64; 3]| p[0] * q[0] + p[1] * q[1] + p[2] * q[2];
    // Plain comparisons: the corners are finite (the count leaves out any other triangle).
    let scale = a.iter().chain(&b).flatten().fold(0.0f64, |m, c| if c.abs() > m { c.abs() } else { m });
    let separates = |axis: [f64; 3]| {
        let size = axis[0].abs() + axis[1].abs() + axis[2].abs();
        if size == 0.0 {
            return false;
        }
        let margin = 1e-9 * size * scale;
        let pa = a.map(|p| dot(axis, p));
        let pb = b.map(|p| dot(axis, p));
        let (lo_a, hi_a) = (pa[0].min(pa[1]).min(pa[2]), pa[0].max(pa[1]).max(pa[2]));
        let (lo_b, hi_b) = (pb[0].min(pb[1]).min(pb[2]), pb[0].max(pb[1]).max(pb[2]));
        lo_b > hi_a + margin || lo_a > hi_b + margin
    };
    // The pairs asked here are those whose boxes meet without only touching (a flat sheet's
    // neighbours touch, and `touching_meet` decides them): most are triangles of layers that
    // lie across one another, which a normal separates, so the normals go first (the second
    // triangle's edges made only if the first normal does not separate them), then the in-plane
    // axes, and the edge–edge axes last. Any axis that separates gives the same answer.
    let ea = [sub(a[1], a[0]), sub(a[2], a[1]), sub(a[0], a[2])];
    let na = cross(ea[0], ea[1]);
    if separates(na) {
        return true;
    }
    let eb = [sub(b[1], b[0]), sub(b[2], b[1]), sub(b[0], b[2])];
    let nb = cross(eb[0], eb[1]);
    separates(nb)
        || ea.iter().any(|&e| separates(cross(na, e)))
        || eb.iter().any(|&f| separates(cross(nb, f)))
        || ea.iter().any(|&e| eb.iter().any(|&f| separates(cross(e, f))))
}

/// A triangle of the cloth, as the candidate search sees it.
#[derive(Clone, Copy)]
struct Tri {
    /// Its cell in the search's order (within a cell the order is the box's lowest x): for a
    /// small triangle the packed cell of its box's lowest corner ([`Cells::key`]) shifted up by
    /// 3 bits, below them the axes along which the box spans two cells (bit `k` for axis `k`);
    /// [`BIG`] for a box that spans more.
    key: u64,
    /// Particle indices of its corners.
    corners: [u32; 3],
    /// Its axis-aligned bounding box in m (exact: the extremes of `f32` corners).
    bounds: Aabb,
}

/// Heap an [`IntersectionCounter`]'s search holds per triangle of the cloths it counts, in
/// bytes: its one buffer, a record of each triangle's key, corners and box, allocated at the
/// first search (no other buffer of the search grows with the cloth; what it adds is at most
/// 0.4 MiB per thread, the copies of one crowded cell). Besides, the counter holds the triangles
/// it was given and their outline ([`crate::outline::BYTES_PER_PARTICLE`]).
pub const BYTES_PER_TRIANGLE: usize = std::mem::size_of::<Tri>();

/// The key of a triangle too large for the cells: after every other.
const BIG: u64 = u64::MAX;

impl Tri {
    /// The triangle `corners` of `positions`, unless an index is out of range or a corner is not
    /// finite.
    fn new(corners: [u32; 3], positions: &[P]) -> Option<Self> {
        let points = [
            *positions.get(corners[0] as usize)?,
            *positions.get(corners[1] as usize)?,
            *positions.get(corners[2] as usize)?,
        ];
        if !points.iter().flatten().all(|v| v.is_finite()) {
            return None;
        }
        Some(Tri { key: BIG, corners, bounds: Aabb::around(points) })
    }

    /// The packed cell of a small triangle.
    #[inline]
    fn cell(&self) -> u64 {
        self.key >> 3
    }

    /// The axes along which a small triangle's box spans two cells (bit `k`).
    #[inline]
    fn spans(&self) -> u8 {
        (self.key & 7) as u8
    }

    fn points(&self, positions: &[P]) -> [P; 3] {
        self.corners.map(|i| positions[i as usize])
    }

    /// Whether the two triangles share a corner: all nine comparisons made, without a branch
    /// between them (most pairs whose boxes meet are neighbours, but not predictably so).
    #[inline]
    fn shares_a_corner(&self, other: &Tri) -> bool {
        let [a, b, c] = self.corners;
        other.corners.iter().fold(false, |shared, &v| shared | (v == a) | (v == b) | (v == c))
    }
}

/// Parallel tasks of the pair search: each searches an equal range of the sorted triangles.
const TASKS: usize = 128;

/// Cell side over the mean of the triangles' largest box extents: at most half the triangles
/// (Markov's inequality) can be wider than two such means, and for a cloth of even triangles
/// none is, so almost every box spans one or two cells along each axis.
const CELL_PER_EXTENT: f64 = 2.0;

/// Bits of each packed cell coordinate: the cells along an axis number at most `2^19 + 1`.
const CELL_BITS: u32 = 20;

/// The largest cell coordinate.
const LAST_CELL: u32 = (1 << CELL_BITS) - 1;

/// The cells of one level of the search: cubes of side `1/inv` m, counted from the corner `lo`
/// of the triangles' boxes.
#[derive(Clone, Copy)]
struct Cells {
    lo: [f64; 3],
    inv: f64,
}

impl Cells {
    /// The cells for `tris`: a side of [`CELL_PER_EXTENT`] times the mean of their largest box
    /// extents, but never under a `2^19`th of their span along any axis (so that a coordinate
    /// fits [`CELL_BITS`]), nor under the smallest positive `f64`. A sum in triangle order, so
    /// the same for any thread count.
    fn fitted(tris: &[Tri]) -> Cells {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        let mut extents = 0.0f64;
        for t in tris {
            let (min, max) = (t.bounds.min.map(f64::from), t.bounds.max.map(f64::from));
            extents += (0..3).map(|k| max[k] - min[k]).fold(0.0, f64::max);
            for k in 0..3 {
                lo[k] = lo[k].min(min[k]);
                hi[k] = hi[k].max(max[k]);
            }
        }
        let span = (0..3).map(|k| hi[k] - lo[k]).fold(0.0f64, f64::max);
        let mean = extents / tris.len() as f64;
        let side = (CELL_PER_EXTENT * mean).max(span / f64::from(1u32 << 19)).max(f64::MIN_POSITIVE);
        Cells { lo, inv: 1.0 / side }
    }

    /// The cell of point `p` (m) along each axis: `⌊(p − lo)·inv⌋`, clamped to
    /// `0..=LAST_CELL`. Monotone along each axis, which is all the search's exactness needs
    /// (rounding moves a point to a neighbouring cell at worst, which costs only work).
    #[inline]
    fn cell(&self, p: P) -> [u32; 3] {
        std::array::from_fn(|k| (((p[k] as f64 - self.lo[k]) * self.inv).floor() as u32).min(LAST_CELL))
    }

    /// The cells twice as wide.
    fn coarser(self) -> Cells {
        Cells { inv: self.inv / 2.0, ..self }
    }

    /// The packed cell `c`, `x` slowest: keys sort as their cells in `x`, `y`, `z` order.
    #[inline]
    fn key(c: [u32; 3]) -> u64 {
        (c[0] as u64) << (2 * CELL_BITS) | (c[1] as u64) << CELL_BITS | c[2] as u64
    }

    /// The sort key of box `b` ([`Tri::key`]).
    #[inline]
    fn key_of(&self, b: &Aabb) -> u64 {
        let (lo, hi) = (self.cell(b.min), self.cell(b.max));
        if (0..3).all(|k| hi[k] - lo[k] <= 1) {
            Cells::key(lo) << 3 | (0..3).fold(0, |m, k| m | ((hi[k] > lo[k]) as u64) << k)
        } else {
            BIG
        }
    }
}

/// The cell one step `d` from the packed cell `cell`, packed; `None` off the cells.
#[inline]
fn shifted(cell: u64, d: [i32; 3]) -> Option<u64> {
    let mask = LAST_CELL as u64;
    let c = [cell >> (2 * CELL_BITS), (cell >> CELL_BITS) & mask, cell & mask];
    let mut out = [0u32; 3];
    for k in 0..3 {
        out[k] = u32::try_from(c[k] as i64 + d[k] as i64).ok().filter(|&v| v <= LAST_CELL)?;
    }
    Some(Cells::key(out))
}

/// The 13 cells one step after a cell in key order (`x` slowest): with the cell itself, every
/// pair of cells at most one step apart along each axis is searched once, from its lower cell.
const FORWARD: [[i32; 3]; 13] = [
    [0, 0, 1],
    [0, 1, -1],
    [0, 1, 0],
    [0, 1, 1],
    [1, -1, -1],
    [1, -1, 0],
    [1, -1, 1],
    [1, 0, -1],
    [1, 0, 0],
    [1, 0, 1],
    [1, 1, -1],
    [1, 1, 0],
    [1, 1, 1],
];

/// Per direction of [`FORWARD`], the axes along which it steps up and down (bit `k`): a
/// triangle meets one in the cell a step up along an axis only if its box spans two cells
/// along it (the other box starts inside it), and one a step down only if the other's does.
const STEPS: [(u8, u8); FORWARD.len()] = {
    let mut steps = [(0, 0); FORWARD.len()];
    let mut i = 0;
    while i < FORWARD.len() {
        let mut k = 0;
        while k < 3 {
            steps[i].0 |= ((FORWARD[i][k] > 0) as u8) << k;
            steps[i].1 |= ((FORWARD[i][k] < 0) as u8) << k;
            k += 1;
        }
        i += 1;
    }
    steps
};

/// Per set of axes `a` (bit `k` for axis `k`), the sets of axes that hold it, as bit `m` for set
/// `m`: a cell holds a triangle spanning at least `a` when the bits of the sets its triangles
/// span meet `SUPERSETS[a]`.
const SUPERSETS: [u8; 8] = {
    let mut sets = [0u8; 8];
    let mut a = 0;
    while a < 8 {
        let mut m = 0;
        while m < 8 {
            sets[a] |= ((m & a == a) as u8) << m;
            m += 1;
        }
        a += 1;
    }
    sets
};

/// Whether the triangles `s` and `t` of `positions` are non-adjacent and intersect: their boxes
/// meet, they share no corner, a fast float test fails to show them apart, and the exact test
/// finds a common point. The cheap tests, which turn most pairs away, are inlined.
#[inline(always)]
fn intersect(s: &Tri, t: &Tri, positions: &[P]) -> bool {
    s.bounds.overlaps(&t.bounds) && !s.shares_a_corner(t) && corners_intersect(s, t, positions)
}

/// The float and the exact test of [`intersect`], or the exact test of boxes that only touch
/// ([`touching_meet`]).
#[inline(never)]
fn corners_intersect(s: &Tri, t: &Tri, positions: &[P]) -> bool {
    let (a, b) = (s.points(positions), t.points(positions));
    if let Some(meet) = touching_meet(a, &s.bounds, b, &t.bounds) {
        return meet;
    }
    !surely_apart(a, b) && triangles_intersect(a, b)
}

/// The exact answer for two triangles whose boxes meet only in a plane `x_k = c` (one box ends
/// where the other starts along axis `k`, and not both are flat along it), else `None`.
///
/// On a cloth generated flat, or still lying as generated, almost every pair that the search
/// asks about is one of these: neighbours whose boxes share a side or a corner. Every common
/// point of the triangles then lies in that plane, and the part of a triangle in it is the hull
/// of its corners there (the points of a triangle where a coordinate is largest, or smallest,
/// are the hull of the corners where it is): one corner, an edge, or the whole triangle when it
/// is flat along `k`. The two hulls meet exactly when an edge of one meets an edge of the other
/// or one holds a corner of the other, decided in the plane's other two coordinates, which the
/// projection keeps exactly, with the same exact predicates as [`triangles_intersect`]. A pair of
/// zero-area triangles is not counted, as there.
#[inline]
fn touching_meet(a: [P; 3], box_a: &Aabb, b: [P; 3], box_b: &Aabb) -> Option<bool> {
    // Along `k` the boxes share the one value `c`, an end of each (so that each triangle lies
    // on one side of the plane, or in it), and not both lie in the plane.
    let axis = (0..3).find(|&k| {
        let (lo, hi) = (box_a.min[k].max(box_b.min[k]), box_a.max[k].min(box_b.max[k]));
        let ends = |b: &Aabb| b.min[k] == lo || b.max[k] == lo;
        let both_flat = box_a.min[k] == box_a.max[k] && box_b.min[k] == box_b.max[k];
        lo == hi && ends(box_a) && ends(box_b) && !both_flat
    })?;
    let c = box_a.min[axis].max(box_b.min[axis]);
    let on_plane = |t: [P; 3]| {
        let mut hull = [[0.0f64; 2]; 3];
        let mut len = 0;
        for v in t.into_iter().filter(|v| v[axis] == c) {
            hull[len] = project(v, axis);
            len += 1;
        }
        (hull, len)
    };
    let ((ha, na), (hb, nb)) = (on_plane(a), on_plane(b));
    let meet = hulls_meet_2d(&ha[..na], &hb[..nb]);
    Some(meet && (has_area(a) || has_area(b)))
}

/// The convex hulls of 1 to 3 points each have a point in common (exact): an edge of one meets
/// an edge of the other (a hull of one point is a segment of zero length), or one is a triangle
/// of non-zero area that holds a corner of the other.
fn hulls_meet_2d(p: &[[f64; 2]], q: &[[f64; 2]]) -> bool {
    // A corner against a corner or an edge, most of what a flat sheet asks, without the
    // general case's four orientations.
    let on_segment = |v: [f64; 2], s0: [f64; 2], s1: [f64; 2]| {
        let within = (0..2).all(|k| s0[k].min(s1[k]) <= v[k] && v[k] <= s0[k].max(s1[k]));
        within && orient_2d(s0, s1, v) == 0
    };
    match (p, q) {
        ([v], [w]) => return v == w,
        ([v], [s0, s1]) | ([s0, s1], [v]) => return on_segment(*v, *s0, *s1),
        _ => {}
    }
    fn edges(h: &[[f64; 2]]) -> impl Iterator<Item = ([f64; 2], [f64; 2])> + '_ {
        (0..h.len()).map(move |i| (h[i], h[(i + 1) % h.len()]))
    }
    let holds = |h: &[[f64; 2]], v: [f64; 2]| {
        h.len() == 3 && orient_2d(h[0], h[1], h[2]) != 0 && inside_2d([h[0], h[1], h[2]], v)
    };
    edges(p).any(|(p0, p1)| edges(q).any(|(q0, q1)| segments_meet_2d(p0, p1, q0, q1)))
        || holds(p, q[0])
        || holds(q, p[0])
}

/// Counts the intersecting pairs (module docs) of one set of triangles, again and again as
/// they move, so that a bake measuring its frames neither allocates every time nor searches a
/// cloth that lies unfolded. Same answer as [`intersecting_pairs`].
///
/// At its first count, before any search, it finds the triangles' outline ([`Outline::of`]),
/// so that what finding it holds for a moment never comes on top of the search's buffer (the
/// bound `weft validate` prints relies on it). At each count, a cloth that passes the outline's
/// certificate ([`Outline::unfolded`]) has no intersecting pair, and any other is searched, in a
/// buffer kept from one search to the next ([`BYTES_PER_TRIANGLE`] per triangle).
///
/// ```
/// use weft_geometry::intersections::IntersectionCounter;
/// let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.2, 0.2, -1.0], [0.2, 0.2, 1.0], [2.0, 2.0, 0.5]];
/// assert_eq!(IntersectionCounter::new(vec![[0, 1, 2], [3, 4, 5]]).count(&p), 1);
/// assert_eq!(IntersectionCounter::new(vec![[0, 1, 2], [0, 4, 5]]).count(&p), 0); // sharing a corner: adjacent
/// ```
pub struct IntersectionCounter {
    /// The triangles counted: particle indices.
    triangles: Vec<[u32; 3]>,
    /// Their outline, found at the first count (`None` before it, `Some(None)` if they have none).
    outline: Option<Option<Outline>>,
    /// The finite triangles of the last search, sorted by cell.
    tris: Vec<Tri>,
}

impl std::fmt::Debug for IntersectionCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntersectionCounter").field("triangles", &self.triangles.len()).finish()
    }
}

impl IntersectionCounter {
    /// A counter of `triangles` (particle indices).
    pub fn new(triangles: Vec<[u32; 3]>) -> Self {
        IntersectionCounter { triangles, outline: None, tris: Vec::new() }
    }

    /// The triangles it counts.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// How many pairs of non-adjacent triangles intersect at `positions` (the particles, in m).
    /// A triangle with an index out of range or a non-finite corner is left out.
    pub fn count(&mut self, positions: &[[f32; 3]]) -> u64 {
        let triangles = &self.triangles;
        let outline = self.outline.get_or_insert_with(|| Outline::of(triangles, positions.len()));
        if outline.as_ref().is_some_and(|o| o.unfolded(triangles, positions)) {
            return 0;
        }
        self.search(positions)
    }

    /// The count by the pair search alone.
    fn search(&mut self, positions: &[[f32; 3]]) -> u64 {
        self.tris.clear();
        // Grown to the size asked, not doubled: the buffer is kept for the rest of a bake.
        self.tris.reserve_exact(self.triangles.len());
        self.tris.extend(self.triangles.iter().filter_map(|c| Tri::new(*c, positions)));
        level_pairs(&mut self.tris, positions)
    }
}

/// The intersecting pairs of `tris` (at `positions`), which it sorts: the pairs of small
/// triangles from the sorted cells, each big one against the small ones near it, and the pairs
/// of big ones as a level of their own, in cells fitted to them.
fn level_pairs(tris: &mut [Tri], positions: &[P]) -> u64 {
    if tris.len() < 2 {
        return 0;
    }
    let (cells, big) = classify(tris);
    tris.par_sort_unstable_by_key(|t| t.key);
    let (small, big) = tris.split_at_mut(tris.len() - big);
    // Each cell's small triangles by their boxes' lowest x (see `cells_pairs`): the cells' runs
    // are short. The big ones are keyed and sorted again at their own level.
    let by_x = |a: &Tri, b: &Tri| a.bounds.min[0].total_cmp(&b.bounds.min[0]);
    small.par_chunk_by_mut(|a, b| a.cell() == b.cell()).for_each(|run| run.sort_unstable_by(by_x));
    small_pairs(small, positions) + big_pairs(big, small, cells, positions) + level_pairs(big, positions)
}

/// Keys `tris` in cells fitted to them, twice as wide while more than half of them are big (it
/// takes a cloth of very uneven triangles); returns the cells and how many are big.
fn classify(tris: &mut [Tri]) -> (Cells, usize) {
    let mut cells = Cells::fitted(tris);
    loop {
        let big: usize = tris
            .par_iter_mut()
            .map(|t| {
                t.key = cells.key_of(&t.bounds);
                (t.key == BIG) as usize
            })
            .sum();
        if 2 * big <= tris.len() {
            return (cells, big);
        }
        cells = cells.coarser();
    }
}

/// The intersecting pairs among `small` (sorted by cell, none big), searched in [`TASKS`]
/// ranges in parallel on the current rayon pool, each range starting at a cell's first triangle.
/// An integer sum, so the same for any pool.
fn small_pairs(small: &[Tri], positions: &[P]) -> u64 {
    let per_task = small.len().div_ceil(TASKS);
    // The first triangle of the cell holding triangle `i`, or the end.
    let cell_start = |mut i: usize| {
        i = i.min(small.len());
        while i > 0 && i < small.len() && small[i - 1].cell() == small[i].cell() {
            i -= 1;
        }
        i
    };
    // The cells' copies are kept from task to task of a thread's share of the tasks.
    (0..TASKS)
        .into_par_iter()
        .map_init(CellCopies::default, |copies, task| {
            let range = cell_start(task * per_task)..cell_start((task + 1) * per_task);
            cells_pairs(small, range, positions, copies)
        })
        .sum()
}

/// The length of the run of triangles at the start of `tris` that lie in cell `cell`.
#[inline]
fn run(tris: &[Tri], cell: u64) -> usize {
    tris.iter().take_while(|t| t.cell() == cell).count()
}

/// The intersecting pairs found from the cells whose triangles start in `range` of `small`:
/// each cell's own pairs, and its triangles against those of the [`FORWARD`] cells that their
/// boxes can reach ([`STEPS`]), found with one cursor per direction that only moves forward
/// (cells and their neighbours come in the same order); each cell copied into `copies`, which
/// the thread keeps from call to call.
fn cells_pairs(
    small: &[Tri],
    range: std::ops::Range<usize>,
    positions: &[P],
    copies: &mut CellCopies,
) -> u64 {
    let mut cursors = [None::<usize>; FORWARD.len()];
    let mut count = 0;
    let mut i = range.start;
    while i < range.end {
        let cell = small[i].cell();
        let here = &small[i..i + run(&small[i..], cell)];
        // A cell too crowded for the copies (a cloth collapsed into a few cells) is walked whole,
        // one box at a time, its triangles that cannot reach a neighbour turned away one by one.
        let copied = here.len() <= MAX_COPIED;
        count += match copied {
            true => copies.own_pairs(here, positions),
            false => own_pairs(here, positions),
        };
        let present = match copied {
            true => copies.by_spans(here),
            false => here.iter().fold(0u8, |m, s| m | 1 << s.spans()),
        };
        for ((d, (up, down)), cursor) in FORWARD.iter().zip(STEPS).zip(&mut cursors) {
            let groups = present & SUPERSETS[up as usize];
            if groups == 0 {
                continue;
            }
            let Some(target) = shifted(cell, *d) else { continue };
            let at = seek(small, cursor, target << 3);
            // Per group, how many of its first boxes end before the boxes of the neighbour
            // seen so far start along x: they end before the later ones start too (the
            // neighbour's come in order of their lowest x), so they are passed over for good.
            // (`groups` is the same for every box of the neighbour, so the `k`th group taken is
            // always the same one.)
            let mut ended = [0usize; 8];
            for t in small[at..].iter().take_while(|t| t.cell() == target) {
                if t.spans() & down != down {
                    continue;
                }
                if copied {
                    for (group, ended) in copies.groups(groups).zip(ended.iter_mut()) {
                        let past = copies.tris[group.clone()][*ended..].iter();
                        *ended += past.take_while(|s| s.bounds.max[0] < t.bounds.min[0]).count();
                        count += copies.lanes.count_meeting(group.start + *ended, &t.bounds, |j| {
                            let s = &copies.tris[j];
                            !s.shares_a_corner(t) && corners_intersect(s, t, positions)
                        });
                    }
                } else {
                    let reaching = |s: &&Tri| s.bounds.min[0] <= t.bounds.max[0];
                    let starting = here.iter().take_while(reaching).filter(|s| s.spans() & up == up);
                    count += starting.filter(|s| intersect(s, t, positions)).count() as u64;
                }
            }
        }
        i += here.len();
    }
    count
}

/// The intersecting pairs within one cell's triangles `here` (in order of their boxes' lowest
/// x), one box at a time: each against those after it whose boxes start before its own ends
/// along x.
fn own_pairs(here: &[Tri], positions: &[P]) -> u64 {
    let mut count = 0;
    for (k, s) in here.iter().enumerate() {
        let reach = here[k + 1..].iter().take_while(|t| t.bounds.min[0] <= s.bounds.max[0]);
        count += reach.filter(|t| intersect(s, t, positions)).count() as u64;
    }
    count
}

/// The most triangles of one cell that [`CellCopies`] copies: what the search adds to the
/// counter's buffer stays under `MAX_COPIED × (2 × 24 B + BYTES_PER_TRIANGLE)` per thread, with
/// the fillers (under 0.4 MiB). The unit tests use 20, so that their brute-force comparisons take
/// both ways through a cell, and read the copies eight boxes at a time more than once.
const MAX_COPIED: usize = if cfg!(test) { 20 } else { 4096 };

/// Copies of one cell's triangles, kept from cell to cell, so that a box is tested against
/// [`LANES`] of them at once ([`BoxLanes`]): their boxes in the cell's order, for the cell's own
/// pairs; and the triangles grouped by the axes their boxes span ([`Tri::spans`]), each group in
/// the cell's order and its boxes a run of their own, for a neighbouring cell a step up along
/// some axes, searched against the groups that span them alone.
#[derive(Default)]
struct CellCopies {
    /// The cell's boxes in its order, one run.
    own: BoxLanes,
    /// The groups: group `g` is `tris[starts[g]..ends[g]]`, its boxes the run at the same
    /// indices of `lanes` (each group followed by [`LANES`] fillers, in both).
    tris: Vec<Tri>,
    lanes: BoxLanes,
    starts: [usize; 8],
    ends: [usize; 8],
}

impl CellCopies {
    /// The intersecting pairs within the cell's triangles `here`, as [`own_pairs`] finds them,
    /// [`LANES`] boxes at a time.
    fn own_pairs(&mut self, here: &[Tri], positions: &[P]) -> u64 {
        self.own.clear();
        self.own.push_run(here.iter().map(|t| &t.bounds));
        let mut count = 0;
        for (k, s) in here.iter().enumerate() {
            count += self.own.count_meeting(k + 1, &s.bounds, |j| {
                let t = &here[j];
                !s.shares_a_corner(t) && corners_intersect(s, t, positions)
            });
        }
        count
    }

    /// Groups `here` by spans (a counting sort, stable); returns bit `g` for each group `g` not
    /// empty.
    fn by_spans(&mut self, here: &[Tri]) -> u8 {
        let mut sizes = [0usize; 8];
        for s in here {
            sizes[s.spans() as usize] += 1;
        }
        let mut next = [0usize; 8];
        let mut at = 0;
        for g in 0..8 {
            (self.starts[g], next[g], self.ends[g]) = (at, at, at + sizes[g]);
            at += sizes[g] + LANES * (sizes[g] > 0) as usize;
        }
        self.tris.clear();
        self.tris.resize(at, here[0]);
        for s in here {
            let g = s.spans() as usize;
            self.tris[next[g]] = *s;
            next[g] += 1;
        }
        self.lanes.clear();
        for g in (0..8).filter(|&g| sizes[g] > 0) {
            self.lanes.push_run(self.tris[self.starts[g]..self.ends[g]].iter().map(|s| &s.bounds));
        }
        (0..8).fold(0, |m, g| m | (((sizes[g] > 0) as u8) << g))
    }

    /// The index ranges of the groups whose bits are set in `groups`.
    fn groups(&self, groups: u8) -> impl Iterator<Item = std::ops::Range<usize>> + use<'_> {
        (0..8).filter(move |g| groups & (1 << g) != 0).map(|g| self.starts[g]..self.ends[g])
    }
}

/// Moves `cursor` forward to the first triangle of `small` keyed `target` or above, and returns
/// it: found by bisection the first time, then by galloping from where it was (steps doubling
/// until past it, then bisection), in time logarithmic in the distance moved.
#[inline]
fn seek(small: &[Tri], cursor: &mut Option<usize>, target: u64) -> usize {
    let at = match *cursor {
        Some(at) => {
            let mut step = 1;
            let mut from = at;
            while from + step < small.len() && small[from + step - 1].key < target {
                from += step;
                step *= 2;
            }
            let to = (from + step).min(small.len());
            from + small[from..to].partition_point(|t| t.key < target)
        }
        None => small.partition_point(|t| t.key < target),
    };
    *cursor = Some(at);
    at
}

/// The intersecting pairs of each of `big` against `small` (sorted by cell): a small triangle
/// meets a big one only if its lowest corner's cell lies from one cell below the big one's
/// lowest to its highest along each axis (its box spans at most two cells), so each big one
/// reads those columns of cells, or every small triangle when they are more than a bisection
/// each is worth. In parallel, an integer sum.
fn big_pairs(big: &[Tri], small: &[Tri], cells: Cells, positions: &[P]) -> u64 {
    let reads = u64::from(usize::BITS - small.len().leading_zeros()) + 1;
    big.par_iter()
        .map(|b| {
            let lo = cells.cell(b.bounds.min).map(|c| c.saturating_sub(1));
            let hi = cells.cell(b.bounds.max);
            let columns = u64::from(hi[0] - lo[0] + 1) * u64::from(hi[1] - lo[1] + 1);
            if columns.saturating_mul(reads) >= small.len() as u64 {
                return small.iter().filter(|t| intersect(b, t, positions)).count() as u64;
            }
            let (mut count, mut cursor) = (0, None);
            for x in lo[0]..=hi[0] {
                for y in lo[1]..=hi[1] {
                    // The columns come in key order: each found from where the last one started.
                    let first = Cells::key([x, y, lo[2]]) << 3;
                    let last = Cells::key([x, y, hi[2]]) << 3 | 7;
                    let from = seek(small, &mut cursor, first);
                    let column = small[from..].iter().take_while(|t| t.key <= last);
                    count += column.filter(|t| intersect(b, t, positions)).count() as u64;
                }
            }
            count
        })
        .sum()
}

/// How many pairs of non-adjacent triangles of one cloth intersect (module docs).
///
/// `positions` are the cloth's particles in m; `triangles` index into them. A triangle with an
/// index out of range or a non-finite corner is left out. To count often, keep an
/// [`IntersectionCounter`] instead.
pub fn intersecting_pairs(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> u64 {
    IntersectionCounter::new(triangles.to_vec()).count(positions)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    const A: [P; 3] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];

    fn both_ways(a: [P; 3], b: [P; 3]) -> bool {
        let r = triangles_intersect(a, b);
        assert_eq!(r, triangles_intersect(b, a), "symmetric");
        assert!(!(r && surely_apart(a, b)), "the float pre-filter must not reject a meeting pair");
        // Corner order does not matter either.
        assert_eq!(r, triangles_intersect([a[2], a[0], a[1]], [b[1], b[0], b[2]]));
        r
    }

    #[test]
    fn crossing_and_separate() {
        // Pierces A through its interior.
        assert!(both_ways(A, [[0.25, 0.25, -1.0], [0.25, 0.25, 1.0], [3.0, 3.0, 0.0]]));
        // A's edge passes through the middle of B (B vertical, straddling the x axis).
        assert!(both_ways(A, [[0.5, -1.0, -1.0], [0.5, 1.0, -1.0], [0.5, 0.0, 1.0]]));
        // Parallel, 1 mm above.
        assert!(!both_ways(A, A.map(|p| [p[0], p[1], 1e-3])));
        // Crosses A's plane but outside A, beyond the hypotenuse.
        assert!(!both_ways(A, [[0.6, 0.6, -1.0], [0.6, 0.6, 1.0], [3.0, 3.0, 0.0]]));
        // Far away.
        assert!(!both_ways(A, A.map(|p| [p[0] + 10.0, p[1], p[2]])));
    }

    #[test]
    fn touching_counts() {
        // B's corner lies on A's hypotenuse (exactly representable midpoint).
        assert!(both_ways(A, [[0.5, 0.5, 0.0], [0.5, 0.5, 1.0], [2.0, 2.0, 1.0]]));
        // B's edge lies on A's edge, in another plane.
        assert!(both_ways(A, [[0.25, 0.0, 0.0], [0.75, 0.0, 0.0], [0.5, -1.0, 1.0]]));
        // B's corner touches A's corner from above: a single common point.
        assert!(both_ways(A, [[1.0, 0.0, 0.0], [2.0, 0.0, 1.0], [2.0, 1.0, 1.0]]));
        // ... and one ulp away it does not.
        let off = 1.0f32 + f32::EPSILON;
        assert!(!both_ways(A, [[off, 0.0, 0.0], [2.0, 0.0, 1.0], [2.0, 1.0, 1.0]]));
    }

    #[test]
    fn coplanar() {
        // Overlapping in the plane z = 0.
        assert!(both_ways(A, [[0.5, 0.1, 0.0], [1.5, 0.1, 0.0], [0.5, 1.0, 0.0]]));
        // One inside the other (no edges cross).
        assert!(both_ways(A, [[0.1, 0.1, 0.0], [0.3, 0.1, 0.0], [0.1, 0.3, 0.0]]));
        // Side by side in the same plane, apart.
        assert!(!both_ways(A, [[1.0, 1.0, 0.0], [2.0, 1.0, 0.0], [1.0, 2.0, 0.0]]));
        // In a tilted plane: A rotated into x + y + z = 1 and a smaller copy inside it.
        let t: [P; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        let inner: [P; 3] = [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]];
        assert!(both_ways(t, inner));
    }

    #[test]
    fn degenerate_triangles() {
        // A zero-area "triangle" (a segment) piercing A counts; one beside it does not.
        assert!(both_ways(A, [[0.2, 0.2, -1.0], [0.2, 0.2, 0.0], [0.2, 0.2, 1.0]]));
        assert!(!both_ways(A, [[2.0, 2.0, -1.0], [2.0, 2.0, 0.0], [2.0, 2.0, 1.0]]));
        // Two degenerate ones never count; a point-triangle neither panics.
        assert!(!both_ways([[0.0; 3]; 3], [[0.0; 3]; 3]));
    }

    /// Two 2 × 1 strips of two triangles each.
    fn strips(z: f32, crossing: bool) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
        let mut p = vec![[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [2.0, 1.0, 0.0], [0.0, 1.0, 0.0]];
        // The second strip runs along y; tilted through the first one when crossing.
        let dz = if crossing { 1.0 } else { 0.0 };
        p.extend([[0.5, -0.5, z - dz], [1.5, -0.5, z - dz], [1.5, 1.5, z + dz], [0.5, 1.5, z + dz]]);
        (p, vec![[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]])
    }

    #[test]
    fn counts_pairs_and_skips_adjacent_ones() {
        let (p, t) = strips(0.5, false);
        assert_eq!(intersecting_pairs(&p, &t), 0);
        let (p, t) = strips(0.0, true);
        // Each triangle of the tilted strip crosses each of the flat strip's... where they overlap.
        let brute = brute_force(&p, &t);
        assert!(brute > 0);
        assert_eq!(intersecting_pairs(&p, &t), brute);
        // The two triangles of a strip share an edge: never counted, though they touch.
        let flat = vec![[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [2.0, 1.0, 0.0], [0.0, 1.0, 0.0]];
        assert_eq!(intersecting_pairs(&flat, &[[0, 1, 2], [0, 2, 3]]), 0);
        // Folded flat onto itself, sharing one corner only: adjacent, not counted.
        assert_eq!(intersecting_pairs(&flat, &[[0, 1, 2], [0, 1, 3]]), 0);
        // Bad indices and NaN corners are left out, not a panic.
        assert_eq!(intersecting_pairs(&[[f32::NAN; 3], [0.0; 3], [1.0; 3]], &[[0, 1, 2], [0, 1, 9]]), 0);
    }

    #[test]
    fn big_triangles_at_every_level_match_brute_force() {
        // A fine crumpled sheet crossed by a coarse one whose triangles span several of the fine
        // cells, and a few long slivers across both: big triangles at three levels, searched by
        // columns of cells and by whole passes.
        let mut rnd = rng(0x9e37_79b9);
        let (fine, coarse) = (40u32, 6u32);
        let mut p: Vec<P> = (0..fine * fine)
            .map(|k| [(k % fine) as f32 * 0.05, 0.02 * rnd(), (k / fine) as f32 * 0.05 + 0.01 * rnd()])
            .collect();
        let mut t = grid_triangles(fine, fine);
        let base = p.len() as u32;
        p.extend(
            (0..coarse * coarse).map(|k| [(k % coarse) as f32 * 0.35, (k / coarse) as f32 * 0.35 - 0.9, 0.8]),
        );
        t.extend(grid_triangles(coarse, coarse).iter().map(|c| c.map(|i| i + base)));
        for k in 0..4 {
            let base = p.len() as u32;
            let x = 0.3 + 0.4 * k as f32;
            p.extend([[x, -0.1, 0.0], [x + 0.01, 0.1, 1.9], [x + 0.6, 0.05 * k as f32, 1.0]]);
            t.push([base, base + 1, base + 2]);
        }
        let mut tris: Vec<Tri> = t.iter().filter_map(|c| Tri::new(*c, &p)).collect();
        let (cells, big) = classify(&mut tris);
        assert!(big > 0 && 2 * big < tris.len(), "{big} big of {}", tris.len());
        let columns = tris.iter().filter(|b| b.key == BIG).any(|b| {
            let (lo, hi) = (cells.cell(b.bounds.min), cells.cell(b.bounds.max));
            u64::from(hi[0] - lo[0] + 2) * u64::from(hi[1] - lo[1] + 2) * 16 < (tris.len() - big) as u64
        });
        assert!(columns, "some big triangle is searched by columns");
        tris.sort_unstable_by_key(|t| t.key);
        let n = tris.len();
        assert!(classify(&mut tris[n - big..]).1 > 0, "the slivers are big among the big ones too");
        let brute = brute_force(&p, &t);
        assert!(brute > 0);
        assert_eq!(intersecting_pairs(&p, &t), brute);
        // Any thread count, any order of the triangles.
        let reversed: Vec<[u32; 3]> = t.iter().rev().copied().collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        assert_eq!(pool.install(|| intersecting_pairs(&p, &reversed)), brute);
    }

    #[test]
    fn grid_matches_brute_force_on_a_crumpled_sheet() {
        // A 12 × 12 sheet crumpled by a deterministic pseudo-random displacement.
        let n = 12u32;
        let mut rnd = rng(0x2545_f491);
        let p: Vec<[f32; 3]> = (0..n * n)
            .map(|k| [(k % n) as f32 * 0.1 + 0.2 * rnd(), (k / n) as f32 * 0.1, 0.3 * rnd()])
            .collect();
        let t = grid_triangles(n, n);
        let brute = brute_force(&p, &t);
        assert!(brute > 0, "the crumpled sheet should cross itself somewhere");
        // The float pre-filter never calls an intersecting pair apart.
        for i in 0..t.len() {
            for j in i + 1..t.len() {
                let (a, b) = (t[i].map(|k| p[k as usize]), t[j].map(|k| p[k as usize]));
                assert!(!(surely_apart(a, b) && triangles_intersect(a, b)), "{a:?} {b:?}");
            }
        }
        assert_eq!(intersecting_pairs(&p, &t), brute);
    }

    #[test]
    fn grid_matches_brute_force_on_a_crumpled_sheet_lying_askew() {
        // A 24 × 24 sheet crumpled into layers and turned so that no triangle lies along an
        // axis: cells hold many boxes of several groups, and a neighbour's boxes pass over
        // those that end before them.
        let n = 24u32;
        let mut rnd = rng(0x1b87_3593);
        let (c, s) = (0.6f32, 0.8f32);
        let p: Vec<[f32; 3]> = (0..n * n)
            .map(|k| {
                let (u, v) = ((k % n) as f32 * 0.05, (k / n) as f32 * 0.05);
                let q = [u + 0.08 * rnd(), (4.0 * u).sin() * 0.1 + 0.08 * rnd(), v + 0.08 * rnd()];
                let (y, z) = (c * q[1] - s * q[2], s * q[1] + c * q[2]);
                [c * q[0] - s * y, s * q[0] + c * y, z]
            })
            .collect();
        let t = grid_triangles(n, n);
        let brute = brute_force(&p, &t);
        assert!(brute > 0, "the crumpled sheet should cross itself somewhere");
        assert_eq!(intersecting_pairs(&p, &t), brute);
    }

    /// A small deterministic generator (xorshift) in `-0.5..0.5`.
    pub(crate) fn rng(mut seed: u32) -> impl FnMut() -> f32 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed as f32 / u32::MAX as f32) - 0.5
        }
    }

    /// The triangles of an `n × m` grid of particles (row-major), two per cell.
    pub(crate) fn grid_triangles(n: u32, m: u32) -> Vec<[u32; 3]> {
        let mut t = Vec::new();
        for j in 0..m - 1 {
            for i in 0..n - 1 {
                let a = j * n + i;
                t.push([a, a + 1, a + n + 1]);
                t.push([a, a + n + 1, a + n]);
            }
        }
        t
    }

    /// Non-adjacent intersecting pairs by testing every pair.
    pub(crate) fn brute_force(p: &[P], t: &[[u32; 3]]) -> u64 {
        let mut n = 0;
        for i in 0..t.len() {
            for j in i + 1..t.len() {
                let finite = |c: [u32; 3]| c.iter().all(|&k| p[k as usize].iter().all(|v| v.is_finite()));
                if finite(t[i])
                    && finite(t[j])
                    && !t[i].iter().any(|v| t[j].contains(v))
                    && triangles_intersect(t[i].map(|k| p[k as usize]), t[j].map(|k| p[k as usize]))
                {
                    n += 1;
                }
            }
        }
        n
    }

    proptest::proptest! {
        /// Where the boxes only touch, the shortcut agrees with the full exact test: triangles
        /// with corners on a lattice of three values per axis, so that boxes share sides and
        /// corners, triangles lie in one plane, touch at corners and edges, or have no area.
        #[test]
        fn touching_boxes_are_decided_as_the_exact_test_does(
            corners in proptest::collection::vec(0u8..27, 6),
            step in proptest::prop_oneof![proptest::strategy::Just(1.0f32), 0.001f32..10.0],
        ) {
            let at = |c: u8| [(c % 3) as f32 * step, (c / 3 % 3) as f32 * step, (c / 9) as f32 * step];
            let (a, b) = ([at(corners[0]), at(corners[1]), at(corners[2])], [at(corners[3]), at(corners[4]), at(corners[5])]);
            let (box_a, box_b) = (Aabb::around(a), Aabb::around(b));
            // Boxes apart never reach the shortcut (`intersect` tests them first).
            if let (true, Some(meet)) = (box_a.overlaps(&box_b), touching_meet(a, &box_a, b, &box_b)) {
                proptest::prop_assert_eq!(meet, triangles_intersect(a, b), "{:?} {:?}", a, b);
            }
        }
    }

    #[test]
    fn touching_boxes_take_the_shortcut() {
        // Side by side in one plane, boxes sharing the side x = 1: apart, then sharing a corner
        // (not counted as adjacent here: the test sees only coordinates).
        let left = [[0.0, 0.0, 0.0], [1.0, 0.0, 1.0], [0.0, 0.0, 1.0]];
        let apart = [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [2.0, 0.0, 1.0]];
        let touching = [[1.0, 0.0, 1.0], [2.0, 0.0, 0.0], [2.0, 0.0, 1.0]];
        let (l, a, t) = (Aabb::around(left), Aabb::around(apart), Aabb::around(touching));
        assert_eq!(touching_meet(left, &l, apart, &a), Some(false));
        assert_eq!(touching_meet(left, &l, touching, &t), Some(true));
        // A box straddling the other's plane is not a touch: no shortcut.
        let across = [[0.5, -1.0, 0.5], [0.5, 1.0, 0.5], [0.6, 1.0, 0.6]];
        assert_eq!(touching_meet(left, &l, across, &Aabb::around(across)), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// The grid search finds exactly the pairs that testing every pair finds: sheets flat
        /// (coplanar contacts), crumpled or folded onto themselves, with outlier triangles
        /// stretched across the scene and the odd non-finite corner; and so does the count,
        /// which answers some of them from their outline, counting again with its buffer full.
        #[test]
        fn grid_matches_brute_force(
            n in 2u32..9,
            m in 2u32..9,
            crumple in proptest::prop_oneof![proptest::strategy::Just(0.0f32), 0.0f32..0.3],
            fold in proptest::bool::ANY,
            seed in proptest::num::u32::ANY,
            outliers in proptest::collection::vec((proptest::num::u32::ANY, -50.0f32..50.0), 0..3),
            broken in proptest::option::of(proptest::num::u32::ANY),
        ) {
            let mut rnd = rng(seed | 1);
            let mut p: Vec<P> = (0..n * m)
                .map(|k| {
                    let (i, j) = ((k % n) as f32 * 0.1, (k / n) as f32 * 0.1);
                    // Folded: the second half of the sheet lies back over the first, 0 to 2 cm up.
                    let (x, z) = if fold && i > 0.05 * n as f32 { (0.1 * n as f32 - i, 0.02 * rnd().abs()) } else { (i, 0.0) };
                    [x + crumple * rnd(), j + crumple * rnd(), z + crumple * rnd()]
                })
                .collect();
            for (k, far) in outliers {
                let k = (k % (n * m)) as usize;
                p[k][k % 3] += far;
            }
            if let Some(k) = broken {
                p[(k % (n * m)) as usize][0] = f32::NAN;
            }
            let t = grid_triangles(n, m);
            let brute = brute_force(&p, &t);
            let mut counter = IntersectionCounter::new(t);
            proptest::prop_assert_eq!(counter.search(&p), brute);
            proptest::prop_assert_eq!(counter.count(&p), brute);
            proptest::prop_assert_eq!(counter.search(&p), brute);
        }
    }
}
