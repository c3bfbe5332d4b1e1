//! [`separation`](super::separation) written once over [`Reals`](super::reals::Reals): for one pair of features in
//! `f64`, and for four pairs side by side in `f64x4` lanes ([`separations`]). Every
//! instantiation makes the same IEEE-754 operations in the same order (`+ − × ÷ √`, no fused
//! multiply-add; `min` and `max` pass over a `NaN` as `f64`'s do), so each lane is the scalar
//! form's result, a zero's sign aside (the order of a `min` of `+0` and `−0` is not fixed), which
//! no comparison sees. A call of the scalar form is a chain of roots and quotients that waits on
//! itself; four pairs in lanes wait once.

use wide::f64x4;

use super::PairKind;
use super::reals::{Reals, V, combine, cross, dot, sub};

/// `a` less its component along `e` (`a` itself when `e` is zero).
fn across<R: Reals>(a: V<R>, e: V<R>) -> V<R> {
    let ee = dot(e, e);
    let d = dot(a, e);
    let off = sub(a, e.map(|c| c * d / ee));
    let along = ee.positive();
    [0, 1, 2].map(|k| R::select(along, off[k], a[k]))
}

/// The gap between the projections of the points `a` and `b` on `u` (m; 0 where they overlap or
/// `u` has no finite, non-zero length).
fn gap<R: Reals>(u: V<R>, a: &[V<R>], b: &[V<R>]) -> R {
    let n = dot(u, u).sqrt();
    let range = |points: &[V<R>]| {
        let (mut lo, mut hi) = (R::splat(f64::INFINITY), R::splat(f64::NEG_INFINITY));
        for &q in points {
            (lo, hi) = (lo.min(dot(u, q)), hi.max(dot(u, q)));
        }
        (lo, hi)
    };
    let ((a_lo, a_hi), (b_lo, b_hi)) = (range(a), range(b));
    let g = ((b_lo - a_hi).max(a_lo - b_hi) / n).max(R::splat(0.0));
    R::select(n.positive_finite(), g, R::splat(0.0))
}

/// [`separation`](super::separation) of `points`, in any [`Reals`].
pub(super) fn separation_in<R: Reals>(kind: PairKind, points: [V<R>; 4]) -> R {
    let p = points.map(|q| sub(q, points[0]));
    let split = if kind == PairKind::VertexTriangle { 1 } else { 2 };
    let (a, b) = p.split_at(split);
    match kind {
        PairKind::VertexTriangle => {
            let [v, t0, t1, t2] = p;
            let normal = cross(sub(t1, t0), sub(t2, t0));
            let centre = combine([1.0 / 3.0; 3], [t0, t1, t2]);
            let sides = [sub(t1, t0), sub(t2, t1), sub(t0, t2)].map(|e| gap(cross(normal, e), a, b));
            gap(normal, a, b).max(gap(sub(centre, v), a, b)).max(sides[0]).max(sides[1]).max(sides[2])
        }
        PairKind::EdgeEdge => {
            let [a0, a1, b0, b1] = p;
            let (ea, eb) = (sub(a1, a0), sub(b1, b0));
            let between = sub(combine([0.5, 0.5], [b0, b1]), combine([0.5, 0.5], [a0, a1]));
            let axes = [cross(ea, eb), between, across(between, ea), across(between, eb)];
            axes.into_iter().fold(R::splat(0.0), |m, u| m.max(gap(u, a, b)))
        }
    }
}

/// [`separation`](super::separation) of four pairs of one kind at once, each lane the scalar
/// form's result (module docs): `points[i][k]` holds coordinate `k` of point `i` of each pair,
/// a pair to a lane.
pub fn separations(kind: PairKind, points: [[f64x4; 3]; 4]) -> f64x4 {
    separation_in::<f64x4>(kind, points)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A coordinate: on a coarse lattice (corners that coincide, edges in line, signed zeros),
    /// anywhere in a metre, tiny, far away, huge, infinite or `NaN`.
    fn coordinate() -> impl Strategy<Value = f64> {
        prop_oneof![
            4 => (-3i32..=3).prop_map(|v| f64::from(v) * 0.01),
            1 => Just(-0.0),
            6 => -1.0f64..1.0,
            1 => -1e-300f64..1e-300,
            1 => 1e3f64..1e3 + 1.0,
            1 => prop::sample::select(vec![1e200, -3e160, f64::INFINITY, f64::NEG_INFINITY, f64::NAN]),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// Four pairs in lanes give each pair's scalar separation (equal as numbers: a zero's
        /// sign may differ; `NaN` where it is `NaN`).
        #[test]
        fn the_lanes_are_the_scalar_separation(
            points in prop::array::uniform4(prop::array::uniform4(prop::array::uniform3(coordinate()))),
            edges in any::<bool>(),
        ) {
            let kind = if edges { PairKind::EdgeEdge } else { PairKind::VertexTriangle };
            let lanes = std::array::from_fn(|i| std::array::from_fn(|k| f64x4::from(points.map(|p| p[i][k]))));
            for (p, lane) in points.iter().zip(separations(kind, lanes).to_array()) {
                let scalar = separation_in::<f64>(kind, *p);
                prop_assert!(lane == scalar || (lane.is_nan() && scalar.is_nan()), "{kind:?} {p:?}: {lane} against {scalar}");
            }
        }
    }
}
