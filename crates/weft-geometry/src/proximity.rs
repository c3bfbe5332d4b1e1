//! Distances between the features of triangles, and a conservative test of whether two moving
//! features come within a gap of each other: the geometry of surface self-collision
//! (`weft_core::surface_collision`) and of binding a render mesh ([`crate::nearest`]).
//!
//! Everything here works in `f64` on positions in m, so that the rounding of the tests is far
//! below the gaps (a tenth of a millimetre and up) they decide on.

mod reals;
mod separation;

use reals::{combine, dot, sub};
pub use separation::separations;

/// A point in m.
pub type P = [f64; 3];

fn norm(a: P) -> f64 {
    dot(a, a).sqrt()
}

/// Barycentric weights `[wa, wb, wc]` (each in `0..=1`, summing to 1) of the point of triangle
/// `t` closest to `p`. A triangle with no area (two corners in one place, or all on a line) gives
/// the closest point of its sides.
pub fn closest_on_triangle(p: P, t: [P; 3]) -> [f64; 3] {
    let [a, b, c] = t;
    let (ab, ac, ap) = (sub(b, a), sub(c, a), sub(p, a));
    let (d1, d2) = (dot(ab, ap), dot(ac, ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return [1.0, 0.0, 0.0];
    }
    let bp = sub(p, b);
    let (d3, d4) = (dot(ab, bp), dot(ac, bp));
    if d3 >= 0.0 && d4 <= d3 {
        return [0.0, 1.0, 0.0];
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        if d1 - d3 <= 0.0 {
            return closest_on_flat(p, t); // `d1 − d3 = |ab|²`: a and b in one place
        }
        let v = d1 / (d1 - d3);
        return [1.0 - v, v, 0.0];
    }
    let cp = sub(p, c);
    let (d5, d6) = (dot(ab, cp), dot(ac, cp));
    if d6 >= 0.0 && d5 <= d6 {
        return [0.0, 0.0, 1.0];
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        if d2 - d6 <= 0.0 {
            return closest_on_flat(p, t); // `d2 − d6 = |ac|²`: a and c in one place
        }
        let w = d2 / (d2 - d6);
        return [1.0 - w, 0.0, w];
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        let bc = (d4 - d3) + (d5 - d6); // `|bc|²`
        if bc <= 0.0 {
            return closest_on_flat(p, t); // b and c in one place
        }
        let w = (d4 - d3) / bc;
        return [0.0, 1.0 - w, w];
    }
    let sum = va + vb + vc;
    if sum.abs() <= f64::MIN_POSITIVE {
        return closest_on_flat(p, t);
    }
    let (v, w) = (vb / sum, vc / sum);
    [1.0 - v - w, v, w]
}

/// [`closest_on_triangle`] of a triangle with no area (its corners on a line, or two or three of
/// them in one place): the closest point of its three sides.
fn closest_on_flat(p: P, t: [P; 3]) -> [f64; 3] {
    let sides = [(0, 1), (0, 2), (1, 2)];
    let mut best = ([1.0, 0.0, 0.0], f64::INFINITY);
    for (i, j) in sides {
        let ((_, along), _) = closest_between_segments([p, p], [t[i], t[j]]);
        let mut w = [0.0; 3];
        w[i] = 1.0 - along;
        w[j] = along;
        let d = norm(sub(p, combine(w, t)));
        if d < best.1 {
            best = (w, d);
        }
    }
    best.0
}

/// The closest points of segments `a` and `b`: `((s, t), distance)` with the points
/// `a0 + s·(a1 − a0)` and `b0 + t·(b1 − b0)`, `s` and `t` in `0..=1`. Parallel segments give one
/// of their closest pairs.
pub fn closest_between_segments(a: [P; 2], b: [P; 2]) -> ((f64, f64), f64) {
    const EPS: f64 = 1e-30;
    let (d1, d2, r) = (sub(a[1], a[0]), sub(b[1], b[0]), sub(a[0], b[0]));
    let (aa, e, f) = (dot(d1, d1), dot(d2, d2), dot(d2, r));
    let clamp = |x: f64| x.clamp(0.0, 1.0);
    let (s, t) = if aa <= EPS && e <= EPS {
        (0.0, 0.0)
    } else if aa <= EPS {
        (0.0, clamp(f / e))
    } else {
        let c = dot(d1, r);
        if e <= EPS {
            (clamp(-c / aa), 0.0)
        } else {
            let bb = dot(d1, d2);
            let denom = aa * e - bb * bb;
            let s = if denom > EPS * aa * e { clamp((bb * f - c * e) / denom) } else { 0.0 };
            let t = (bb * s + f) / e;
            if t < 0.0 {
                (clamp(-c / aa), 0.0)
            } else if t > 1.0 {
                (clamp((bb - c) / aa), 1.0)
            } else {
                (s, t)
            }
        }
    };
    let pa = combine([1.0 - s, s], a);
    let pb = combine([1.0 - t, t], b);
    ((s, t), norm(sub(pa, pb)))
}

/// The two kinds of feature pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairKind {
    /// A vertex (first of the four points) and a triangle (the other three).
    VertexTriangle,
    /// Two edges: points 0–1 and points 2–3.
    EdgeEdge,
}

/// The distance in m between the two features of `points` (see [`PairKind`]).
pub fn feature_distance(kind: PairKind, points: [P; 4]) -> f64 {
    let [p0, p1, p2, p3] = points;
    match kind {
        PairKind::VertexTriangle => {
            let w = closest_on_triangle(p0, [p1, p2, p3]);
            norm(sub(p0, combine(w, [p1, p2, p3])))
        }
        PairKind::EdgeEdge => closest_between_segments([p0, p1], [p2, p3]).1,
    }
}

/// A lower bound in m of [`feature_distance`], from separating axes: the largest gap, over a
/// few directions, between the projections of the first feature's points and the second's (0
/// where none separates them). The distance is at least the gap along any direction, so the
/// bound holds whichever directions are taken (up to the rounding of `f64`, relative to the
/// features' size, not to their place). They are chosen so that it is nearly the distance for
/// the pairs a layer of cloth is full of: features side by side in one layer (a triangle's
/// edge normals in its plane, the line between two edges' middles less each edge's own
/// direction) and features across layers (a triangle's normal, the common normal of two edges).
pub fn separation(kind: PairKind, points: [P; 4]) -> f64 {
    separation::separation_in::<f64>(kind, points)
}

/// A bound in m on how much the distance between the two features can change when their points
/// move by `moves` (each linearly, from start to end): the largest relative motion of a point of
/// the first feature against a point of the second.
pub fn relative_motion(kind: PairKind, moves: [P; 4]) -> f64 {
    let first: &[usize] = match kind {
        PairKind::VertexTriangle => &[0],
        PairKind::EdgeEdge => &[0, 1],
    };
    let second: &[usize] = match kind {
        PairKind::VertexTriangle => &[1, 2, 3],
        PairKind::EdgeEdge => &[2, 3],
    };
    let mut most: f64 = 0.0;
    for &i in first {
        for &j in second {
            most = most.max(norm(sub(moves[i], moves[j])));
        }
    }
    most
}

/// Conservative advancement steps before [`may_touch`] gives up and says yes.
pub const MAX_ADVANCES: u32 = 200;

/// Whether the two features of a pair, each point moving linearly from `start` to `end` (m),
/// may come within `min(gap, d₀/2)` of each other during the motion, `d₀` being their distance at
/// the start. `false` is a proof that they do not (up to the rounding of `f64`): the distance
/// can only fall as fast as the relative motion ([`relative_motion`]) allows, so time advances by
/// the distance left over that bound until it passes the end. `true` may be a near miss (after
/// [`MAX_ADVANCES`] steps the answer is yes). Features touching at the start (`d₀ = 0`) never
/// come closer, so the answer is `false`.
pub fn may_touch(kind: PairKind, start: [P; 4], end: [P; 4], gap: f64) -> bool {
    let moves: [P; 4] = std::array::from_fn(|k| sub(end[k], start[k]));
    let bound = relative_motion(kind, moves);
    let at = |t: f64| -> [P; 4] { std::array::from_fn(|k| combine([1.0 - t, t], [start[k], end[k]])) };
    let d0 = feature_distance(kind, start);
    let target = gap.min(0.5 * d0);
    if bound <= 0.0 || target <= 0.0 || d0 - bound > target {
        return false;
    }
    let mut t = 0.0;
    let mut d = d0;
    for _ in 0..MAX_ADVANCES {
        if d <= target {
            return true;
        }
        t += (d - target) / bound;
        if t >= 1.0 {
            return false;
        }
        d = feature_distance(kind, at(t));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_points_of_a_triangle_by_region() {
        let t = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        let w = closest_on_triangle([0.25, 0.25, 1.0], t);
        assert!((w[0] - 0.5).abs() < 1e-12 && (w[1] - 0.25).abs() < 1e-12);
        assert_eq!(closest_on_triangle([-1.0, -1.0, 0.5], t), [1.0, 0.0, 0.0]);
        assert_eq!(closest_on_triangle([2.0, -0.5, 0.0], t), [0.0, 1.0, 0.0]);
        let w = closest_on_triangle([0.5, -1.0, 0.0], t);
        assert!((w[1] - 0.5).abs() < 1e-12 && w[2] == 0.0, "on side ab: {w:?}");
        let w = closest_on_triangle([1.0, 1.0, 0.0], t);
        assert!(w[0] == 0.0 && (w[1] - 0.5).abs() < 1e-12, "on side bc: {w:?}");
        let d = feature_distance(PairKind::VertexTriangle, [[0.2, 0.2, 0.3], t[0], t[1], t[2]]);
        assert!((d - 0.3).abs() < 1e-12);
        // A triangle with no area still gives a point of it.
        let flat = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]];
        let w = closest_on_triangle([1.5, 1.0, 0.0], flat);
        let q = combine(w, flat);
        assert!((q[0] - 1.5).abs() < 1e-12 && q[1] == 0.0, "{q:?}");
    }

    /// Two corners in one place (a fuzz finding: 0/0 weights, a contact with no normal): the
    /// closest point is still one of the triangle's, with finite weights summing to 1, from every
    /// side of it, whichever two corners meet.
    #[test]
    fn closest_points_of_a_triangle_with_two_corners_in_one_place() {
        let (o, x) = ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0]);
        for t in [[o, o, x], [o, x, o], [x, o, o]] {
            for p in [[0.5, 1.0, 0.0], [-1.0, 0.5, 0.0], [2.0, -1.0, 0.5], [0.0, 0.0, 1.0], [1.0, 0.0, -1.0]]
            {
                let w = closest_on_triangle(p, t);
                assert!(
                    w.iter().all(|w| w.is_finite()) && (w.iter().sum::<f64>() - 1.0).abs() < 1e-12,
                    "{t:?} {p:?}: {w:?}"
                );
                let q = combine(w, t);
                let expect = [p[0].clamp(0.0, 1.0), 0.0, 0.0];
                assert!(norm(sub(q, expect)) < 1e-12, "{t:?} {p:?}: {q:?}");
            }
        }
    }

    #[test]
    fn closest_points_of_segments() {
        let ((s, t), d) =
            closest_between_segments([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]], [[1.0, -1.0, 0.5], [1.0, 1.0, 0.5]]);
        assert!((s - 0.5).abs() < 1e-12 && (t - 0.5).abs() < 1e-12 && (d - 0.5).abs() < 1e-12);
        // Parallel: any closest pair, at the right distance.
        let (_, d) =
            closest_between_segments([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], [[0.5, 0.2, 0.0], [1.5, 0.2, 0.0]]);
        assert!((d - 0.2).abs() < 1e-12);
        // Beyond the ends.
        let (st, d) =
            closest_between_segments([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], [[2.0, 1.0, 0.0], [3.0, 1.0, 0.0]]);
        assert_eq!(st, (1.0, 0.0));
        assert!((d - 2f64.sqrt()).abs() < 1e-12);
    }

    proptest::proptest! {
        /// The separating-axis bound never exceeds the distance.
        #[test]
        fn separation_is_at_most_the_distance(
            q in proptest::array::uniform4(proptest::array::uniform3(-1.0f64..1.0)),
            edges in proptest::bool::ANY,
        ) {
            let kind = if edges { PairKind::EdgeEdge } else { PairKind::VertexTriangle };
            let (s, d) = (separation(kind, q), feature_distance(kind, q));
            proptest::prop_assert!(s >= 0.0 && s <= d * (1.0 + 1e-12) + 1e-15, "{s} > {d}");
        }
    }

    #[test]
    fn separation_is_the_distance_beside_and_across_a_layer() {
        // A grid of 1 cm: the triangle across the diagonal from a vertex, 0.71 cm away.
        let t = [[0.01, 0.0, 0.0], [0.01, 0.0, 0.01], [0.0, 0.0, 0.01]];
        let beside = [[0.0; 3], t[0], t[1], t[2]];
        let d = feature_distance(PairKind::VertexTriangle, beside);
        assert!((separation(PairKind::VertexTriangle, beside) - d).abs() < 1e-12);
        // 4 mm above the triangle.
        let above = [[0.006, 0.004, 0.006], t[0], t[1], t[2]];
        assert!((separation(PairKind::VertexTriangle, above) - 0.004).abs() < 1e-12);
        // Parallel edges of neighbouring rows, 1 cm apart, and edges of two layers crossing.
        let rows = [[0.0; 3], [0.01, 0.0, 0.0], [0.0, 0.0, 0.01], [0.01, 0.0, 0.01]];
        assert!((separation(PairKind::EdgeEdge, rows) - 0.01).abs() < 1e-12);
        let layers = [[0.0; 3], [0.01, 0.0, 0.0], [0.005, 0.004, -0.005], [0.005, 0.004, 0.005]];
        assert!((separation(PairKind::EdgeEdge, layers) - 0.004).abs() < 1e-12);
        // Touching: 0.
        let touching = [[0.005, 0.0, 0.005], t[0], t[1], t[2]];
        assert_eq!(separation(PairKind::VertexTriangle, touching), 0.0);
    }

    #[test]
    fn a_vertex_through_a_triangle_is_caught_and_a_miss_is_not() {
        let t = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        let start = [[0.2, 0.2, 0.5], t[0], t[1], t[2]];
        // Straight through, far faster than the gap: caught.
        let end = [[0.2, 0.2, -0.5], t[0], t[1], t[2]];
        assert!(may_touch(PairKind::VertexTriangle, start, end, 1e-4));
        // Beside the triangle, never within 0.1 m.
        let start = [[1.2, 1.2, 0.5], t[0], t[1], t[2]];
        let end = [[1.2, 1.2, -0.5], t[0], t[1], t[2]];
        assert!(!may_touch(PairKind::VertexTriangle, start, end, 1e-4));
        // Moving together: no relative motion, no touch.
        let shift = |p: P| [p[0], p[1], p[2] - 1.0];
        let start = [[0.2, 0.2, 0.01], t[0], t[1], t[2]];
        assert!(!may_touch(PairKind::VertexTriangle, start, start.map(shift), 1e-4));
        // Two edges crossing: caught; passing 1 cm apart: not.
        let a = [[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]];
        let start = [a[0], a[1], [0.0, -1.0, 0.3], [0.0, 1.0, 0.3]];
        let end = [a[0], a[1], [0.0, -1.0, -0.3], [0.0, 1.0, -0.3]];
        assert!(may_touch(PairKind::EdgeEdge, start, end, 1e-4));
        let start = [a[0], a[1], [2.01, -1.0, 0.3], [2.01, 1.0, 0.3]];
        let end = [a[0], a[1], [2.01, -1.0, -0.3], [2.01, 1.0, -0.3]];
        assert!(!may_touch(PairKind::EdgeEdge, start, end, 1e-4));
    }
}
