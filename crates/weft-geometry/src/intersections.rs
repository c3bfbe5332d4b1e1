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
//! Candidate pairs come from the [`Grid`] over the triangles' bounding boxes, with cells about
//! twice a triangle's mean box extent: every pair of boxes sharing a cell, once
//! ([`Grid::for_each_pair`], searched by ranges of buckets in parallel on the current rayon
//! pool), and every pair with a triangle too large for the cells. A pair is tested when its boxes
//! meet and it shares no corner, after a fast float separating-axis test with a wide margin has
//! failed to show them apart. The count is a sum of integers, so it depends on no thread count
//! or iteration order. Triangles with a non-finite corner are left out. A bake keeps an
//! [`IntersectionCounter`], whose buffers outlive a frame.

use rayon::prelude::*;
use robust::{Coord, Coord3D, orient2d, orient3d};

use crate::aabb::Aabb;
use crate::grid::Grid;

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
fn orient_2d(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> i32 {
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
fn project(p: P, axis: usize) -> [f64; 2] {
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
fn segments_meet_2d(p: [f64; 2], q: [f64; 2], r: [f64; 2], s: [f64; 2]) -> bool {
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
    let ea = [sub(a[1], a[0]), sub(a[2], a[1]), sub(a[0], a[2])];
    let eb = [sub(b[1], b[0]), sub(b[2], b[1]), sub(b[0], b[2])];
    let (na, nb) = (cross(ea[0], ea[1]), cross(eb[0], eb[1]));
    let scale = a.iter().chain(&b).flatten().fold(0.0f64, |m, c| m.max(c.abs()));
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
    separates(na)
        || separates(nb)
        || ea.iter().any(|&e| separates(cross(na, e)) || eb.iter().any(|&f| separates(cross(e, f))))
        || eb.iter().any(|&f| separates(cross(nb, f)))
}

/// A triangle of the cloth, as the candidate search sees it.
#[derive(Clone, Copy)]
struct Tri {
    /// Particle indices of its corners.
    corners: [u32; 3],
    /// Its axis-aligned bounding box in m (exact: the extremes of `f32` corners).
    bounds: Aabb,
}

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
        Some(Tri { corners, bounds: Aabb::around(points) })
    }

    fn points(&self, positions: &[P]) -> [P; 3] {
        self.corners.map(|i| positions[i as usize])
    }

    fn shares_a_corner(&self, other: &Tri) -> bool {
        self.corners.iter().any(|v| other.corners.contains(v))
    }
}

/// Parallel tasks of the pair search: each searches an equal range of the grid's buckets.
const TASKS: usize = 128;

/// Cell side over a triangle's mean box extent: larger cells list each triangle in fewer cells
/// (less to sort) but hold more pairs to reject (measured best near 2 on cloth grids).
const CELL_PER_EXTENT: f64 = 2.0;

/// The most grid cells one triangle may cover on average before the grid is coarsened.
const MAX_CELLS_PER_TRIANGLE: u64 = 27;

/// The cell side for `tris` in m: `CELL_PER_EXTENT` times a triangle's mean box extent, doubled
/// until a triangle covers at most [`MAX_CELLS_PER_TRIANGLE`] cells on average, and never under a
/// millionth of the scene's extent.
fn cell_side(tris: &[Tri]) -> f64 {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    let mut mean_extent = 0.0f64;
    for t in tris {
        for k in 0..3 {
            lo[k] = lo[k].min(t.bounds.min[k] as f64);
            hi[k] = hi[k].max(t.bounds.max[k] as f64);
            mean_extent += (t.bounds.max[k] as f64 - t.bounds.min[k] as f64) / 3.0;
        }
    }
    mean_extent /= tris.len() as f64;
    let span = (0..3).map(|k| hi[k] - lo[k]).fold(0.0f64, f64::max);
    let mut side = (CELL_PER_EXTENT * mean_extent).max(span / 1e6).max(f64::MIN_POSITIVE);
    let covered = |t: &Tri, side: f64| {
        let inv = 1.0 / side;
        (0..3).fold(1u64, |n, k| {
            let (a, b) = ((t.bounds.min[k] as f64 * inv).floor(), (t.bounds.max[k] as f64 * inv).floor());
            n.saturating_mul((b - a + 1.0) as u64)
        })
    };
    // An integer sum, so the grid (and with it the work, never the count) is the same for any
    // thread count.
    while tris.par_iter().map(|t| covered(t, side)).reduce(|| 0, u64::saturating_add) > budget(tris) {
        side *= 2.0;
    }
    side
}

/// The cells all triangles may cover together: [`MAX_CELLS_PER_TRIANGLE`] each.
fn budget(tris: &[Tri]) -> u64 {
    MAX_CELLS_PER_TRIANGLE.saturating_mul(tris.len() as u64)
}

/// Whether the triangles `s` and `t` of `positions` are non-adjacent and intersect: their boxes
/// meet, they share no corner, a fast float test fails to show them apart, and the exact test
/// finds a common point. The cheap tests, which turn most pairs away, are inlined.
#[inline(always)]
fn intersect(s: &Tri, t: &Tri, positions: &[P]) -> bool {
    s.bounds.overlaps(&t.bounds) && !s.shares_a_corner(t) && corners_intersect(s, t, positions)
}

/// The float and the exact test of [`intersect`].
#[inline(never)]
fn corners_intersect(s: &Tri, t: &Tri, positions: &[P]) -> bool {
    let (a, b) = (s.points(positions), t.points(positions));
    !surely_apart(a, b) && triangles_intersect(a, b)
}

/// Counts intersecting triangle pairs (module docs) with buffers kept from one call to the next,
/// so that a bake measuring every frame does not allocate every frame. Same answer as
/// [`intersecting_pairs`].
///
/// ```
/// use weft_geometry::intersections::IntersectionCounter;
/// let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.2, 0.2, -1.0], [0.2, 0.2, 1.0], [2.0, 2.0, 0.5]];
/// let mut counter = IntersectionCounter::default();
/// assert_eq!(counter.count(&p, &[[0, 1, 2], [3, 4, 5]]), 1);
/// assert_eq!(counter.count(&p, &[[0, 1, 2], [0, 4, 5]]), 0); // sharing a corner: adjacent
/// ```
#[derive(Default)]
pub struct IntersectionCounter {
    /// The finite triangles of the last call.
    tris: Vec<Tri>,
    /// The grid of their boxes.
    grid: Grid,
}

impl std::fmt::Debug for IntersectionCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntersectionCounter")
            .field("triangles", &self.tris.len())
            .field("listings", &self.grid.listing_count())
            .finish()
    }
}

impl IntersectionCounter {
    /// How many pairs of non-adjacent triangles intersect. `positions` are the particles in m;
    /// `triangles` index into them. A triangle with an index out of range or a non-finite corner
    /// is left out.
    pub fn count(&mut self, positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> u64 {
        self.tris.clear();
        self.tris.reserve_exact(triangles.len());
        self.tris.extend(triangles.iter().filter_map(|c| Tri::new(*c, positions)));
        if self.tris.len() < 2 {
            return 0;
        }
        let tris = &self.tris;
        // Every triangle is listed in all its cells (one larger than the whole budget would be
        // paired with every other instead, but the side keeps the cells within the budget).
        self.grid.build_boxes(cell_side(tris), budget(tris), tris.len(), |k| tris[k].bounds);
        let mut big = 0;
        self.grid.for_each_big_pair(|a, b| {
            big += intersect(&tris[a as usize], &tris[b as usize], positions) as u64
        });
        listed_pairs(&self.grid, tris, positions) + big
    }
}

/// The intersecting pairs of `tris` (at `positions`) that share a cell of `grid`: ranges of
/// buckets in parallel on the current rayon pool, each bucket's triangles gathered once for its
/// pairs. An integer sum, so the same for any pool.
fn listed_pairs(grid: &Grid, tris: &[Tri], positions: &[P]) -> u64 {
    let buckets = grid.bucket_count();
    let per_task = buckets.div_ceil(TASKS);
    (0..TASKS)
        .into_par_iter()
        .map_init(Vec::new, |near, task| {
            let mut count = 0;
            for b in (task * per_task).min(buckets)..((task + 1) * per_task).min(buckets) {
                let bucket = grid.bucket_at(b);
                near.clear();
                near.extend(bucket.entries().map(|k| tris[k as usize]));
                bucket.for_each_pair(|i, j| count += intersect(&near[i], &near[j], positions) as u64);
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
    IntersectionCounter::default().count(positions, triangles)
}

#[cfg(test)]
mod tests {
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
    fn grid_matches_brute_force_on_a_crumpled_sheet() {
        // A 12 × 12 sheet crumpled by a deterministic pseudo-random displacement.
        let n = 12u32;
        let mut seed = 0x2545_f491u32;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed as f32 / u32::MAX as f32) - 0.5
        };
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

    /// The triangles of an `n × m` grid of particles (row-major), two per cell.
    fn grid_triangles(n: u32, m: u32) -> Vec<[u32; 3]> {
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
    fn brute_force(p: &[P], t: &[[u32; 3]]) -> u64 {
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
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// The grid search finds exactly the pairs that testing every pair finds: sheets flat
        /// (coplanar contacts), crumpled or folded onto themselves, with outlier triangles
        /// stretched across the scene and the odd non-finite corner; one counter reused.
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
            let mut seed = seed | 1;
            let mut rnd = || {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                (seed as f32 / u32::MAX as f32) - 0.5
            };
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
            let mut counter = IntersectionCounter::default();
            // A first, larger call leaves the buffers full: the next count must not see them.
            counter.count(&p, &t.iter().chain(&t).copied().collect::<Vec<_>>());
            proptest::prop_assert_eq!(counter.count(&p, &t), brute_force(&p, &t));
        }
    }
}
