//! Mesh topology derived once from a triangle list: unique edges, interior edges with their two
//! opposite vertices (the bending and shear pairs), boundary edges, non-manifold edges, and
//! whether the surface is closed and consistently oriented (what a volume constraint needs).

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
        // Every directed edge (a, b) of every triangle, as `3 t + k` (corner k to k + 1 of
        // triangle t), grouped by its lower vertex; within a group in triangle order.
        let vertices = triangles.iter().flatten().map(|&v| v as usize + 1).max().unwrap_or(0);
        let corner = |use_: u32| {
            let (t, k) = ((use_ / 3) as usize, (use_ % 3) as usize);
            (triangles[t][k], triangles[t][(k + 1) % 3], triangles[t][(k + 2) % 3])
        };
        let low = triangles.iter().flat_map(|t| [t[0].min(t[1]), t[1].min(t[2]), t[2].min(t[0])]);
        let (starts, mut uses) = group_by_vertex(vertices, low);
        let high = |use_: u32| {
            let (a, b, _) = corner(use_);
            a.max(b)
        };
        let mut topology = MeshTopology {
            edges: Vec::with_capacity(triangles.len() * 3 / 2 + 1),
            consistently_oriented: true,
            ..MeshTopology::default()
        };
        topology.interior.reserve(triangles.len() * 3 / 2);
        for (v, w) in starts.windows(2).enumerate() {
            let group = &mut uses[w[0] as usize..w[1] as usize];
            // Stable: the uses of one edge stay in triangle order.
            group.sort_by_key(|&u| high(u));
            for edge_uses in group.chunk_by(|&x, &y| high(x) == high(y)) {
                topology.add_edge([v as u32, high(edge_uses[0])], edge_uses, corner);
            }
        }
        topology.edges.shrink_to_fit();
        topology.interior.shrink_to_fit();
        topology
    }

    /// Files `edge`, used (in triangle order) by the directed edges `uses` (see [`Self::new`]):
    /// `corner(use)` is the use's start, end and opposite vertex.
    fn add_edge(&mut self, edge: [u32; 2], uses: &[u32], corner: impl Fn(u32) -> (u32, u32, u32)) {
        self.edges.push(edge);
        match *uses {
            [_] => self.boundary.push(edge),
            [u0, u1] => {
                let ((a0, b0, c0), (a1, b1, c1)) = (corner(u0), corner(u1));
                self.consistently_oriented &= (a0 < b0) != (a1 < b1);
                self.interior.push(InteriorEdge { edge, opposite: [c0, c1], triangles: [u0 / 3, u1 / 3] });
            }
            _ => self
                .non_manifold
                .push(NonManifoldEdge { edge, triangles: uses.iter().map(|u| u / 3).collect() }),
        }
    }

    /// True when the surface has no boundary and no non-manifold edge (a closed surface).
    pub fn is_closed(&self) -> bool {
        self.boundary.is_empty() && self.non_manifold.is_empty() && !self.edges.is_empty()
    }
}

/// Items grouped by a vertex of each, in one counting pass: `vertex_of` gives item `i`'s vertex
/// (below `vertices`). Returns the start of each vertex's group (`vertices + 1` offsets) and the
/// item indices, grouped by vertex and in item order within a group. Linear in items and
/// vertices, where sorting `(vertex, item)` pairs or hashing them would not be.
///
/// ```
/// use weft_core::topology::group_by_vertex;
/// let (starts, items) = group_by_vertex(3, [2, 0, 2, 1].into_iter());
/// assert_eq!(starts, vec![0, 1, 2, 4]);
/// assert_eq!(items, vec![1, 3, 0, 2]);
/// ```
pub fn group_by_vertex(
    vertices: usize,
    vertex_of: impl Iterator<Item = u32> + Clone,
) -> (Vec<u32>, Vec<u32>) {
    let mut starts = vec![0u32; vertices + 1];
    for v in vertex_of.clone() {
        starts[v as usize + 1] += 1;
    }
    for i in 0..vertices {
        starts[i + 1] += starts[i];
    }
    let mut next = starts.clone();
    let mut items = vec![0u32; starts[vertices] as usize];
    for (i, v) in vertex_of.enumerate() {
        let slot = &mut next[v as usize];
        items[*slot as usize] = u32::try_from(i).expect("fewer than 2³² items to group");
        *slot += 1;
    }
    (starts, items)
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

    /// The topology the slow way: every use of every edge in a sorted map.
    fn by_map(triangles: &[[u32; 3]]) -> MeshTopology {
        let mut uses: std::collections::BTreeMap<[u32; 2], Vec<(u32, u32, bool)>> = Default::default();
        for (t, tri) in triangles.iter().enumerate() {
            for k in 0..3 {
                let (a, b, c) = (tri[k], tri[(k + 1) % 3], tri[(k + 2) % 3]);
                uses.entry([a.min(b), a.max(b)]).or_default().push((t as u32, c, a < b));
            }
        }
        let mut topology = MeshTopology { consistently_oriented: true, ..MeshTopology::default() };
        for (edge, u) in uses {
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

    #[test]
    fn grouped_by_vertex_as_a_sorted_map_finds_it() {
        let mut seed = 7u32;
        let mut next = |n: u32| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) % n
        };
        for vertices in [3, 5, 9, 40] {
            let triangles: Vec<[u32; 3]> = (0..vertices * 2)
                .filter_map(|_| {
                    let t = [next(vertices), next(vertices), next(vertices)];
                    (t[0] != t[1] && t[1] != t[2] && t[0] != t[2]).then_some(t)
                })
                .collect();
            assert_eq!(MeshTopology::new(&triangles), by_map(&triangles), "{triangles:?}");
        }
        assert_eq!(MeshTopology::new(&[]), by_map(&[]));
    }
}
