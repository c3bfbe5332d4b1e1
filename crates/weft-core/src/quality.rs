//! Quality measures of a cloth's shape: intersecting triangle pairs and stretch. Pure functions
//! of positions and topology, used for the per-frame statistics of a bake and by the tests.
//!
//! # Intersecting triangle pairs
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
//! Candidate pairs come from a uniform grid over the triangles' bounding boxes; each pair is tested
//! once, in the cell holding the lowest corner of the intersection of its two boxes, after a fast
//! float separating-axis test with a wide margin has failed to show them apart. Cells are counted
//! in parallel on the current rayon pool; the count is a sum of integers, so it depends on no
//! thread count or iteration order. Triangles with a non-finite corner are left out.
//!
//! # Stretch
//!
//! [`max_stretch`] is the largest `|x_a − x_b| / L − 1` over a set of edges with rest lengths `L`:
//! how much longer than at rest the most stretched edge is (dimensionless; `0.1` is 10 %
//! stretch); `0` when no edge is longer than at rest.

use rayon::prelude::*;
use robust::{Coord, Coord3D, orient2d, orient3d};

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
/// use weft_core::quality::triangles_intersect;
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

/// Axis-aligned bounding box of a triangle in `f64`.
fn bounds(t: [P; 3]) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for v in t {
        for k in 0..3 {
            lo[k] = lo[k].min(v[k] as f64);
            hi[k] = hi[k].max(v[k] as f64);
        }
    }
    (lo, hi)
}

/// The most grid cells one triangle may cover on average before the grid is coarsened.
const MAX_CELLS_PER_TRIANGLE: f64 = 27.0;

/// How many pairs of non-adjacent triangles of one cloth intersect (module docs).
///
/// `positions` are the cloth's particles in m; `triangles` index into them. A triangle with an
/// index out of range or a non-finite corner is left out.
pub fn intersecting_pairs(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> u64 {
    let n = positions.len();
    let tris: Vec<(u32, [u32; 3], [P; 3])> = triangles
        .iter()
        .enumerate()
        .filter(|(_, t)| t.iter().all(|&i| (i as usize) < n))
        .map(|(k, t)| (k as u32, *t, t.map(|i| positions[i as usize])))
        .filter(|(_, _, c)| c.iter().flatten().all(|v| v.is_finite()))
        .collect();
    if tris.len() < 2 {
        return 0;
    }
    let boxes: Vec<([f64; 3], [f64; 3])> = tris.iter().map(|t| bounds(t.2)).collect();
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    let mut mean_extent = 0.0f64;
    for (l, h) in &boxes {
        for k in 0..3 {
            lo[k] = lo[k].min(l[k]);
            hi[k] = hi[k].max(h[k]);
            mean_extent += (h[k] - l[k]) / 3.0;
        }
    }
    mean_extent /= boxes.len() as f64;
    let span = (0..3).map(|k| hi[k] - lo[k]).fold(0.0f64, f64::max);
    // Cells about the size of a triangle, never so small that the grid would not fit in u32
    // coordinates or a triangle would cover too many cells.
    let mut cell = mean_extent.max(span / 1e6).max(f64::MIN_POSITIVE);
    let cell_of = |x: f64, k: usize, cell: f64| ((x - lo[k]) / cell).floor() as u64;
    let covered = |cell: f64| -> f64 {
        boxes
            .iter()
            .map(|(l, h)| {
                (0..3).map(|k| (cell_of(h[k], k, cell) - cell_of(l[k], k, cell) + 1) as f64).product::<f64>()
            })
            .sum()
    };
    while covered(cell) > MAX_CELLS_PER_TRIANGLE * boxes.len() as f64 {
        cell *= 2.0;
    }
    let dims: [u64; 3] = std::array::from_fn(|k| cell_of(hi[k], k, cell) + 1);
    let key = |c: [u64; 3]| (c[0] * dims[1] + c[1]) * dims[2] + c[2];
    let mut entries: Vec<(u64, u32)> = Vec::new();
    for (t, (l, h)) in boxes.iter().enumerate() {
        let (a, b): ([u64; 3], [u64; 3]) = (
            std::array::from_fn(|k| cell_of(l[k], k, cell)),
            std::array::from_fn(|k| cell_of(h[k], k, cell)),
        );
        for x in a[0]..=b[0] {
            for y in a[1]..=b[1] {
                for z in a[2]..=b[2] {
                    entries.push((key([x, y, z]), t as u32));
                }
            }
        }
    }
    entries.par_sort_unstable();
    let pair_count = |group: &[(u64, u32)]| -> u64 {
        let here = group[0].0;
        let mut count = 0u64;
        for (i, &(_, s)) in group.iter().enumerate() {
            for &(_, t) in &group[i + 1..] {
                let (s, t) = (s as usize, t as usize);
                let ((ls, hs), (lt, ht)) = (boxes[s], boxes[t]);
                if (0..3).any(|k| ls[k] > ht[k] || lt[k] > hs[k]) {
                    continue;
                }
                // Count the pair only in the cell of the lowest corner of the boxes' overlap.
                let corner: [u64; 3] = std::array::from_fn(|k| cell_of(ls[k].max(lt[k]), k, cell));
                if key(corner) != here {
                    continue;
                }
                let (vs, vt) = (tris[s].1, tris[t].1);
                if vs.iter().any(|v| vt.contains(v)) {
                    continue;
                }
                if !surely_apart(tris[s].2, tris[t].2) && triangles_intersect(tris[s].2, tris[t].2) {
                    count += 1;
                }
            }
        }
        count
    };
    // Cells in parallel on the current rayon pool; an integer sum, so the same for any pool.
    entries.par_chunk_by(|a, b| a.0 == b.0).map(pair_count).sum()
}

/// The largest `|x_a − x_b| / L − 1` over `edges` with rest lengths `rest` (m), or `0` when no
/// edge is longer than at rest (module docs). Edges with an index out of range, a rest length
/// `≤ 0` or a non-finite length are left out.
pub fn max_stretch(positions: &[[f32; 3]], edges: &[[u32; 2]], rest: &[f32]) -> f32 {
    let mut most = 0.0f32;
    for (&[a, b], &l) in edges.iter().zip(rest) {
        let (Some(pa), Some(pb)) = (positions.get(a as usize), positions.get(b as usize)) else { continue };
        let d = [pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]];
        let s = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() / l - 1.0;
        if l > 0.0 && s.is_finite() {
            most = most.max(s);
        }
    }
    most
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
        let brute = {
            let mut n = 0;
            for i in 0..t.len() {
                for j in i + 1..t.len() {
                    if !t[i].iter().any(|v| t[j].contains(v))
                        && triangles_intersect(t[i].map(|k| p[k as usize]), t[j].map(|k| p[k as usize]))
                    {
                        n += 1;
                    }
                }
            }
            n
        };
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
        let mut t = Vec::new();
        for j in 0..n - 1 {
            for i in 0..n - 1 {
                let a = j * n + i;
                t.push([a, a + 1, a + n + 1]);
                t.push([a, a + n + 1, a + n]);
            }
        }
        let mut brute = 0;
        for i in 0..t.len() {
            for j in i + 1..t.len() {
                if !t[i].iter().any(|v| t[j].contains(v))
                    && triangles_intersect(t[i].map(|k| p[k as usize]), t[j].map(|k| p[k as usize]))
                {
                    brute += 1;
                }
            }
        }
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
    fn stretch() {
        let p = [[0.0, 0.0, 0.0], [1.1, 0.0, 0.0], [1.1, 0.5, 0.0]];
        let s = max_stretch(&p, &[[0, 1], [1, 2]], &[1.0, 1.0]);
        // |x₁ − x₀| = 1.1 (f32), so the stretch is 0.1 within f32 rounding of 1.1 − 1.
        assert!((s - 0.1).abs() < 1e-6, "{s}");
        assert_eq!(max_stretch(&p, &[[1, 2]], &[1.0]), 0.0);
        assert_eq!(max_stretch(&p, &[[0, 9]], &[1.0]), 0.0);
    }
}
