//! The stretch of a set of edges: [`max_stretch`] is the largest `|x_a − x_b| / L − 1` over
//! edges with rest lengths `L`, how much longer than at rest the most stretched edge is
//! (dimensionless; `0.1` is 10 % stretch); `0` when no edge is longer than at rest.

use rayon::prelude::*;
use wide::f32x8;

/// The largest `|x_a − x_b| / L − 1` over `edges` with rest lengths `rest` (m), or `0` when no
/// edge is longer than at rest. Edges with an index out of range, a rest length `≤ 0` or a
/// non-finite length are left out.
///
/// Edges are measured [`LANES`] at a time in SIMD lanes, each lane the bits of [`stretch`]; a
/// maximum, so the same value for any order, chunking and thread count.
pub fn max_stretch(positions: &[[f32; 3]], edges: &[[u32; 2]], rest: &[f32]) -> f32 {
    // In parallel chunks on the current rayon pool.
    let n = edges.len().min(rest.len());
    edges[..n]
        .par_chunks(STRETCH_CHUNK)
        .zip(rest[..n].par_chunks(STRETCH_CHUNK))
        .map(|(edges, rest)| chunk_max(positions, edges, rest))
        .reduce(|| 0.0, f32::max)
}

/// The stretch `|x_a − x_b| / L − 1` of the edge `[a, b]` with rest length `l` (m), or `None`
/// where [`max_stretch`] leaves it out (an index out of range, `l ≤ 0`, a non-finite stretch).
pub fn stretch(positions: &[[f32; 3]], [a, b]: [u32; 2], l: f32) -> Option<f32> {
    let (pa, pb) = (positions.get(a as usize)?, positions.get(b as usize)?);
    let d = [pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]];
    let s = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() / l - 1.0;
    (l > 0.0 && s.is_finite()).then_some(s)
}

/// Edges measured side by side by [`max_stretch`].
pub const LANES: usize = 8;

/// The largest stretch (at least `0`) of one chunk: whole groups of [`LANES`] edges in SIMD, the
/// rest one by one.
fn chunk_max(positions: &[[f32; 3]], edges: &[[u32; 2]], rest: &[f32]) -> f32 {
    let (groups, rest_groups) = (edges.chunks_exact(LANES), rest.chunks_exact(LANES));
    let (tail, rest_tail) = (groups.remainder(), rest_groups.remainder());
    let mut most = f32x8::ZERO;
    for (edges, rest) in groups.zip(rest_groups) {
        most = most.max(lanes_stretch(positions, edges, rest));
    }
    let mut most = most.to_array().into_iter().fold(0.0, f32::max);
    for (&edge, &l) in tail.iter().zip(rest_tail) {
        if let Some(s) = stretch(positions, edge, l) {
            most = most.max(s);
        }
    }
    most
}

/// The stretch of [`LANES`] edges, `0` in a lane [`stretch`] leaves out: each lane's difference
/// made as the scalar form makes it, then its square sum, root, quotient and difference from 1
/// side by side (each IEEE-rounded, in the scalar form's order: the same bits).
fn lanes_stretch(positions: &[[f32; 3]], edges: &[[u32; 2]], rest: &[f32]) -> f32x8 {
    let mut d = [[0.0f32; LANES]; 3];
    // A lane whose index is out of range gets `l = 0`: left out below, like a rest length ≤ 0.
    let mut l = [0.0f32; LANES];
    for (i, (&[a, b], &rest)) in edges.iter().zip(rest).enumerate() {
        if let (Some(pa), Some(pb)) = (positions.get(a as usize), positions.get(b as usize)) {
            for (k, dk) in d.iter_mut().enumerate() {
                dk[i] = pa[k] - pb[k];
            }
            l[i] = rest;
        }
    }
    let [dx, dy, dz] = d.map(f32x8::from);
    let l = f32x8::from(l);
    let s = (dx * dx + dy * dy + dz * dz).sqrt() / l - f32x8::ONE;
    let kept = l.simd_gt(f32x8::ZERO) & s.is_finite();
    kept.select(s, f32x8::ZERO)
}

/// Edges per parallel task of [`max_stretch`].
const STRETCH_CHUNK: usize = 16384;

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn a_stretched_edge_and_edges_left_out() {
        let p = [[0.0, 0.0, 0.0], [1.1, 0.0, 0.0], [1.1, 0.5, 0.0]];
        let s = max_stretch(&p, &[[0, 1], [1, 2]], &[1.0, 1.0]);
        // |x₁ − x₀| = 1.1 (f32), so the stretch is 0.1 within f32 rounding of 1.1 − 1.
        assert!((s - 0.1).abs() < 1e-6, "{s}");
        assert_eq!(max_stretch(&p, &[[1, 2]], &[1.0]), 0.0);
        assert_eq!(max_stretch(&p, &[[0, 9]], &[1.0]), 0.0);
    }

    /// The maximum over every edge of the scalar form, for the SIMD form to match.
    fn one_by_one(positions: &[[f32; 3]], edges: &[[u32; 2]], rest: &[f32]) -> f32 {
        edges.iter().zip(rest).filter_map(|(&e, &l)| stretch(positions, e, l)).fold(0.0, f32::max)
    }

    /// A coordinate: mostly ordinary, sometimes far, not finite, or a signed zero.
    fn coordinate() -> impl Strategy<Value = f32> {
        prop_oneof![
            8 => -2.0f32..2.0,
            1 => prop::sample::select(vec![0.0, -0.0, 1e30, -1e30, f32::INFINITY, f32::NAN]),
        ]
    }

    /// A rest length: mostly positive, sometimes zero, negative, tiny or not a number.
    fn rest_length() -> impl Strategy<Value = f32> {
        prop_oneof![
            8 => 0.01f32..1.0,
            1 => prop::sample::select(vec![0.0, -0.0, -0.5, 1e-38, f32::NAN]),
        ]
    }

    proptest! {
        /// Every lane is the bits of the scalar stretch, whatever the edges: the SIMD maximum is
        /// the scalar one over any count (whole groups and a tail), with indices out of range,
        /// rest lengths ≤ 0 or NaN, and positions that are far, infinite or NaN.
        #[test]
        fn the_lanes_are_the_scalar_stretch(
            positions in prop::collection::vec([coordinate(), coordinate(), coordinate()], 1..40),
            edges in prop::collection::vec(([0u32..44, 0u32..44], rest_length()), 0..70),
        ) {
            let (edges, rest): (Vec<[u32; 2]>, Vec<f32>) = edges.into_iter().unzip();
            let simd = max_stretch(&positions, &edges, &rest);
            prop_assert_eq!(simd.to_bits(), one_by_one(&positions, &edges, &rest).to_bits());
        }
    }
}
