//! The stretch of a set of edges: [`max_stretch`] is the largest `|x_a − x_b| / L − 1` over
//! edges with rest lengths `L`, how much longer than at rest the most stretched edge is
//! (dimensionless; `0.1` is 10 % stretch); `0` when no edge is longer than at rest.

use rayon::prelude::*;

/// The largest `|x_a − x_b| / L − 1` over `edges` with rest lengths `rest` (m), or `0` when no
/// edge is longer than at rest. Edges with an index out of range, a rest length `≤ 0` or a
/// non-finite length are left out.
pub fn max_stretch(positions: &[[f32; 3]], edges: &[[u32; 2]], rest: &[f32]) -> f32 {
    // In parallel chunks on the current rayon pool; a maximum, so the same for any pool.
    let n = edges.len().min(rest.len());
    edges[..n]
        .par_chunks(STRETCH_CHUNK)
        .zip(rest[..n].par_chunks(STRETCH_CHUNK))
        .map(|(edges, rest)| {
            let mut most = 0.0f32;
            for (&[a, b], &l) in edges.iter().zip(rest) {
                let (Some(pa), Some(pb)) = (positions.get(a as usize), positions.get(b as usize)) else {
                    continue;
                };
                let d = [pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]];
                let s = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() / l - 1.0;
                if l > 0.0 && s.is_finite() {
                    most = most.max(s);
                }
            }
            most
        })
        .reduce(|| 0.0, f32::max)
}

/// Edges per parallel task of [`max_stretch`].
const STRETCH_CHUNK: usize = 16384;

#[cfg(test)]
mod tests {
    use super::*;

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
