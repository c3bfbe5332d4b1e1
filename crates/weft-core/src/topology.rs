//! Mesh topology derived from a triangle list: unique edges and triangle areas.

/// The unique edges of a triangle list, each as `[min, max]`, sorted. Deterministic.
///
/// ```
/// use weft_core::topology::unique_edges;
/// assert_eq!(unique_edges(&[[0, 1, 2], [2, 1, 3]]), vec![[0, 1], [0, 2], [1, 2], [1, 3], [2, 3]]);
/// ```
pub fn unique_edges(triangles: &[[u32; 3]]) -> Vec<[u32; 2]> {
    let mut edges: Vec<[u32; 2]> = triangles
        .iter()
        .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]])
        .map(|[a, b]| [a.min(b), a.max(b)])
        .collect();
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// Area in m² of the triangle with corners `a`, `b`, `c` (m), computed in `f64`.
pub fn triangle_area(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> f64 {
    let d = |p: [f32; 3], q: [f32; 3]| [0, 1, 2].map(|i| p[i] as f64 - q[i] as f64);
    let (u, v) = (d(b, a), d(c, a));
    let cross = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
    0.5 * (cross[0] * cross[0] + cross[1] * cross[1] + cross[2] * cross[2]).sqrt()
}

/// Distance in m between two points, computed in `f64` and rounded to `f32`.
pub fn distance(a: [f32; 3], b: [f32; 3]) -> f32 {
    let d = [0, 1, 2].map(|i| a[i] as f64 - b[i] as f64);
    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_and_distances() {
        assert_eq!(triangle_area([0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]), 0.5);
        assert_eq!(triangle_area([0.0; 3], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]), 0.0);
        assert_eq!(distance([0.0; 3], [3.0, 4.0, 0.0]), 5.0);
    }
}
