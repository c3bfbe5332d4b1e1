//! Mesh topology derived once from a triangle list: unique edges, interior edges with their two
//! opposite vertices (the bending and shear pairs), boundary edges, non-manifold edges, and
//! whether the surface is closed and consistently oriented (what a volume constraint needs).

use std::collections::HashMap;

/// An edge shared by exactly two triangles, with the vertex opposite it in each.
///
/// Triangle 0 is `[edge[0], edge[1], opposite[0]]` up to rotation and orientation, triangle 1
/// `[edge[1], edge[0], opposite[1]]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InteriorEdge {
    /// The shared edge, `[min, max]`.
    pub edge: [u32; 2],
    /// The vertex of each triangle that is not on the edge.
    pub opposite: [u32; 2],
    /// The two triangles (indices into the triangle list), in the order they were met.
    pub triangles: [u32; 2],
}

/// An edge shared by more than two triangles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonManifoldEdge {
    /// The edge, `[min, max]`.
    pub edge: [u32; 2],
    /// The triangles sharing it (indices into the triangle list), in order.
    pub triangles: Vec<u32>,
}

/// The topology of a triangle mesh.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MeshTopology {
    /// Every edge once, `[min, max]`, sorted.
    pub edges: Vec<[u32; 2]>,
    /// Edges shared by two triangles, sorted by edge.
    pub interior: Vec<InteriorEdge>,
    /// Edges of one triangle only, sorted.
    pub boundary: Vec<[u32; 2]>,
    /// Edges of more than two triangles, sorted by edge.
    pub non_manifold: Vec<NonManifoldEdge>,
    /// True when every interior edge is traversed in opposite directions by its two triangles
    /// (the triangles are consistently oriented).
    pub consistently_oriented: bool,
}

impl MeshTopology {
    /// The topology of `triangles`. Deterministic: the result depends only on the list.
    ///
    /// Indices must be valid and every triangle's corners distinct (the model builder checks
    /// both first).
    ///
    /// ```
    /// use weft_core::topology::MeshTopology;
    /// // Two triangles sharing the edge 1–2: a quad split along its diagonal.
    /// let t = MeshTopology::new(&[[0, 1, 2], [2, 1, 3]]);
    /// assert_eq!(t.edges.len(), 5);
    /// assert_eq!(t.interior.len(), 1);
    /// assert_eq!(t.interior[0].edge, [1, 2]);
    /// assert_eq!(t.interior[0].opposite, [0, 3]);
    /// assert_eq!(t.boundary.len(), 4);
    /// assert!(!t.is_closed() && t.consistently_oriented);
    /// ```
    pub fn new(triangles: &[[u32; 3]]) -> Self {
        // Every directed edge (a, b) of every triangle, with the triangle and its third vertex.
        let mut uses: HashMap<[u32; 2], Vec<(u32, u32, bool)>> = HashMap::new();
        for (t, tri) in triangles.iter().enumerate() {
            for k in 0..3 {
                let (a, b, c) = (tri[k], tri[(k + 1) % 3], tri[(k + 2) % 3]);
                uses.entry([a.min(b), a.max(b)]).or_default().push((t as u32, c, a < b));
            }
        }
        // Sorting the keys makes everything below independent of hash order.
        let mut keys: Vec<[u32; 2]> = uses.keys().copied().collect();
        keys.sort_unstable();
        let mut topology = MeshTopology { consistently_oriented: true, ..MeshTopology::default() };
        for edge in keys {
            let mut u = uses.remove(&edge).expect("key taken from the map");
            u.sort_unstable_by_key(|&(t, _, _)| t);
            topology.edges.push(edge);
            match u.as_slice() {
                [_] => topology.boundary.push(edge),
                [(t0, c0, f0), (t1, c1, f1)] => {
                    topology.consistently_oriented &= f0 != f1;
                    topology.interior.push(InteriorEdge {
                        edge,
                        opposite: [*c0, *c1],
                        triangles: [*t0, *t1],
                    });
                }
                _ => topology
                    .non_manifold
                    .push(NonManifoldEdge { edge, triangles: u.iter().map(|x| x.0).collect() }),
            }
        }
        topology
    }

    /// True when the surface has no boundary and no non-manifold edge (a closed surface).
    pub fn is_closed(&self) -> bool {
        self.boundary.is_empty() && self.non_manifold.is_empty() && !self.edges.is_empty()
    }
}

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

    #[test]
    fn tetrahedron_is_closed_and_oriented() {
        let t = MeshTopology::new(&[[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]]);
        assert_eq!((t.edges.len(), t.interior.len(), t.boundary.len()), (6, 6, 0));
        assert!(t.is_closed() && t.consistently_oriented);
        let flipped = MeshTopology::new(&[[0, 1, 2], [0, 1, 3], [1, 2, 3], [0, 3, 2]]);
        assert!(flipped.is_closed() && !flipped.consistently_oriented);
    }

    #[test]
    fn fins_are_non_manifold() {
        let t = MeshTopology::new(&[[0, 1, 2], [1, 0, 3], [0, 1, 4]]);
        assert_eq!(t.non_manifold, vec![NonManifoldEdge { edge: [0, 1], triangles: vec![0, 1, 2] }]);
        assert!(!t.is_closed());
    }
}
