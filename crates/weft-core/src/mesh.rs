//! Mesh → cloth helpers: the distance constraints of a triangulated polygon mesh, the warp / weft /
//! bias grain of its edges from UVs, and pin selection (an axis-aligned box, an index list).
//!
//! # Stretch and shear edges
//!
//! A cloth mesh comes as polygons that a reader has cut into triangles, remembering which pairs of
//! triangles came from one quad (their shared edge is the quad's *split diagonal*). Its distance
//! constraints follow the convention of a [grid](crate::grid), whose cells are quads:
//!
//! * **stretch**: every edge of every triangle, except a quad's split diagonal (the four sides of
//!   a quad, every edge of a triangle face, every side and fan edge of an n-gon);
//! * **shear**: both diagonals of every quad; and, for two triangles that share an edge and are
//!   not from quads (a triangle mesh), the pair of vertices opposite that edge, which spans the
//!   two triangles across the edge as a quad's diagonal spans its two halves.
//!
//! An edge shared by more than two triangles (non-manifold) has no opposite pair, so it gives no
//! shear. A pair that is already a stretch edge is not repeated as shear. Both lists are sorted,
//! each edge written `[min, max]`, and each edge comes with the first triangle it was found in
//! (its *source*), so that a reader can point at the face behind a constraint. Everything depends
//! only on the triangle list: no hash order, no thread timing.
//!
//! ```
//! use weft_core::mesh::mesh_edges;
//! // One quad 0-1-2-3 split along 0–2 into two triangles.
//! let e = mesh_edges(&[[0, 1, 2], [0, 2, 3]], &[[0, 1]], true);
//! assert_eq!(e.stretch, vec![[0, 1], [0, 3], [1, 2], [2, 3]]);
//! assert_eq!(e.shear, vec![[0, 2], [1, 3]]);
//! // The same two triangles as a triangle mesh: 0–2 is a side, 1–3 spans the pair.
//! let e = mesh_edges(&[[0, 1, 2], [0, 2, 3]], &[], true);
//! assert_eq!(e.stretch.len(), 5);
//! assert_eq!(e.shear, vec![[1, 3]]);
//! ```
//!
//! # Warp, weft and bias
//!
//! Woven cloth is stiffer along its threads than across them. With UVs laid out so that `U` runs
//! along the warp (the lengthwise grain) and `V` along the weft, [`grain`] classifies an edge by
//! the direction of its UV difference `(Δu, Δv)`: within [`GRAIN_ANGLE_DEG`] (22.5°) of `U` it is
//! [`Grain::Warp`], within 22.5° of `V` it is [`Grain::Weft`], and otherwise (between 22.5° and
//! 67.5°, the diagonals) or if it has no UV extent it is [`Grain::Bias`]. The three sectors split
//! the quarter circle evenly, so a rotated layout degrades to bias rather than to the wrong
//! thread. An edge takes its UVs from its source triangle (an edge on a UV seam has two UV
//! segments; the first triangle's is used).
//!
//! # Pins
//!
//! [`in_box`] selects the particles inside an axis-aligned box (bounds included).
//! [`parse_index_list`] reads a list of particle indices, one per line, with `#` comments: the
//! format of a scene's `pin_file`. (Wavefront OBJ has no vertex groups: its `g` statements group
//! faces, not vertices, so a named set of vertices comes as such a file.)

use crate::topology::MeshTopology;

/// Half-width in degrees of the warp and weft sectors: an edge whose UV direction is within this
/// angle of `U` is warp, within it of `V` weft, and bias otherwise.
pub const GRAIN_ANGLE_DEG: f64 = 22.5;

/// The thread direction an edge runs along.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Grain {
    /// Along `U` (the warp, the lengthwise grain).
    Warp,
    /// Along `V` (the weft, the crosswise grain).
    Weft,
    /// Neither: diagonal in UV space, or no UV extent.
    Bias,
}

/// The grain of a segment from UV `a` to UV `b` (see the [module docs](self)).
///
/// ```
/// use weft_core::mesh::{Grain, grain};
/// assert_eq!(grain([0.0, 0.0], [0.1, 0.02]), Grain::Warp);
/// assert_eq!(grain([0.0, 0.0], [-0.02, 0.1]), Grain::Weft);
/// assert_eq!(grain([0.0, 0.0], [0.1, 0.1]), Grain::Bias);
/// assert_eq!(grain([0.5, 0.5], [0.5, 0.5]), Grain::Bias);
/// ```
pub fn grain(a: [f32; 2], b: [f32; 2]) -> Grain {
    let du = (b[0] as f64 - a[0] as f64).abs();
    let dv = (b[1] as f64 - a[1] as f64).abs();
    if !(du > 0.0 || dv > 0.0) || !du.is_finite() || !dv.is_finite() {
        return Grain::Bias;
    }
    let angle = dv.atan2(du).to_degrees();
    if angle <= GRAIN_ANGLE_DEG {
        Grain::Warp
    } else if angle >= 90.0 - GRAIN_ANGLE_DEG {
        Grain::Weft
    } else {
        Grain::Bias
    }
}

/// The grain of each edge, from the UVs of its source triangle.
///
/// `uvs` holds one UV per triangle corner (`uvs[t][k]` for corner `k` of triangle `t`). An edge
/// whose source triangle does not have both its ends, or that has no UVs, is [`Grain::Bias`].
pub fn classify_grain(
    edges: &[[u32; 2]],
    sources: &[u32],
    triangles: &[[u32; 3]],
    uvs: &[[[f32; 2]; 3]],
) -> Vec<Grain> {
    edges
        .iter()
        .zip(sources)
        .map(|(&[a, b], &t)| {
            let (Some(tri), Some(uv)) = (triangles.get(t as usize), uvs.get(t as usize)) else {
                return Grain::Bias;
            };
            match (tri.iter().position(|&p| p == a), tri.iter().position(|&p| p == b)) {
                (Some(i), Some(j)) => grain(uv[i], uv[j]),
                _ => Grain::Bias,
            }
        })
        .collect()
}

/// The distance constraints of a triangulated polygon mesh (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MeshEdges {
    /// Stretch edges, `[min, max]`, sorted.
    pub stretch: Vec<[u32; 2]>,
    /// The first triangle each stretch edge was found in.
    pub stretch_source: Vec<u32>,
    /// Shear edges, `[min, max]`, sorted; none of them a stretch edge.
    pub shear: Vec<[u32; 2]>,
    /// The first triangle each shear edge was found in.
    pub shear_source: Vec<u32>,
}

/// The stretch and shear edges of `triangles`, where each element of `quads` names two triangles
/// cut from one quad (they share its split diagonal). With `shear = false` there are no shear
/// edges, and a quad's split diagonal is left out altogether.
///
/// Triangles must have valid, distinct corners (a triangle that repeats a corner is skipped). A
/// `quads` entry whose triangles do not share exactly one edge is ignored.
pub fn mesh_edges(triangles: &[[u32; 3]], quads: &[[u32; 2]], shear: bool) -> MeshEdges {
    let quads = QuadSplits::of(triangles, quads);
    // Stretch: every (edge, triangle) occurrence that is not its triangle's split diagonal; the
    // first triangle per edge is its source.
    let mut occurrences: Vec<([u32; 2], u32)> = Vec::with_capacity(3 * triangles.len());
    for (t, tri) in triangles.iter().enumerate() {
        if !distinct(tri) {
            continue;
        }
        for k in 0..3 {
            let e = key(tri[k], tri[(k + 1) % 3]);
            if quads.split.binary_search(&(t as u32, e)).is_err() {
                occurrences.push((e, t as u32));
            }
        }
    }
    occurrences.sort_unstable();
    occurrences.dedup_by_key(|o| o.0);
    let mut edges = MeshEdges {
        stretch: occurrences.iter().map(|o| o.0).collect(),
        stretch_source: occurrences.iter().map(|o| o.1).collect(),
        ..MeshEdges::default()
    };
    if shear {
        let mut pairs = shear_pairs(triangles, quads);
        pairs.retain(|p| edges.stretch.binary_search(&p.0).is_err());
        edges.shear = pairs.iter().map(|p| p.0).collect();
        edges.shear_source = pairs.iter().map(|p| p.1).collect();
    }
    edges
}

/// Whether a triangle's three corners differ.
fn distinct(t: &[u32; 3]) -> bool {
    t[0] != t[1] && t[1] != t[2] && t[0] != t[2]
}

/// An edge as `[min, max]`.
fn key(a: u32, b: u32) -> [u32; 2] {
    [a.min(b), a.max(b)]
}

/// The quads of a mesh: which triangles come from one, each such triangle's split diagonal, and
/// both diagonals of each quad (with the lower of its triangles).
struct QuadSplits {
    from_quad: Vec<bool>,
    /// `(triangle, its split diagonal)`, sorted.
    split: Vec<(u32, [u32; 2])>,
    diagonals: Vec<([u32; 2], u32)>,
}

impl QuadSplits {
    /// The quads of `quads` (each two triangles of `triangles` sharing exactly one edge; others
    /// are ignored).
    fn of(triangles: &[[u32; 3]], quads: &[[u32; 2]]) -> Self {
        let mut q =
            QuadSplits { from_quad: vec![false; triangles.len()], split: Vec::new(), diagonals: Vec::new() };
        for &[t0, t1] in quads {
            let (Some(a), Some(b)) = (triangles.get(t0 as usize), triangles.get(t1 as usize)) else {
                continue;
            };
            if t0 == t1 || !distinct(a) || !distinct(b) {
                continue;
            }
            let shared: Vec<u32> = a.iter().copied().filter(|p| b.contains(p)).collect();
            let (Some(&c), Some(&d)) = (a.iter().find(|p| !b.contains(p)), b.iter().find(|p| !a.contains(p)))
            else {
                continue;
            };
            if shared.len() != 2 {
                continue;
            }
            let diagonal = key(shared[0], shared[1]);
            q.from_quad[t0 as usize] = true;
            q.from_quad[t1 as usize] = true;
            q.split.push((t0, diagonal));
            q.split.push((t1, diagonal));
            q.diagonals.push((diagonal, t0.min(t1)));
            q.diagonals.push((key(c, d), t0.min(t1)));
        }
        q.split.sort_unstable();
        q
    }
}

/// Shear pairs with their source triangle, sorted, one per pair: both diagonals of each quad,
/// and the opposite corners of every interior edge between two triangles not from quads.
fn shear_pairs(triangles: &[[u32; 3]], quads: QuadSplits) -> Vec<([u32; 2], u32)> {
    let mut pairs = quads.diagonals;
    let valid: Vec<[u32; 3]> = triangles.iter().copied().filter(distinct).collect();
    // Rare (the model builder refuses such triangles): index the valid ones only.
    let index: Vec<u32> = (0..triangles.len() as u32).filter(|&t| distinct(&triangles[t as usize])).collect();
    let topology = MeshTopology::new(if valid.len() == triangles.len() { triangles } else { &valid });
    for e in &topology.interior {
        let [t0, t1] = e.triangles.map(|t| index[t as usize]);
        let [c, d] = e.opposite;
        if c != d && !quads.from_quad[t0 as usize] && !quads.from_quad[t1 as usize] {
            pairs.push((key(c, d), t0.min(t1)));
        }
    }
    pairs.sort_unstable();
    pairs.dedup_by_key(|p| p.0);
    pairs
}

/// The particles inside the axis-aligned box from `min` to `max` (m, bounds included), in index
/// order.
///
/// ```
/// use weft_core::mesh::in_box;
/// let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 2.0, 0.0]];
/// assert_eq!(in_box(&p, [0.5, -1.0, -1.0], [1.0, 1.0, 1.0]), vec![1]);
/// ```
pub fn in_box(positions: &[[f32; 3]], min: [f32; 3], max: [f32; 3]) -> Vec<u32> {
    positions
        .iter()
        .enumerate()
        .filter(|(_, p)| (0..3).all(|a| p[a] >= min[a] && p[a] <= max[a]))
        .map(|(i, _)| i as u32)
        .collect()
}

/// One index of an index list, with the line it is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedIndex {
    /// The particle index.
    pub index: u32,
    /// The 1-based line it is on.
    pub line: usize,
}

/// A line of an index list that is not an index.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct IndexListError {
    /// The 1-based line.
    pub line: usize,
    /// What is wrong with it.
    pub problem: String,
}

/// Reads an index list: one particle index per line (a whole number from 0 to 2³²−1), blank lines
/// and `#` comments (to the end of the line) ignored.
///
/// ```
/// use weft_core::mesh::parse_index_list;
/// let list = parse_index_list("# shoulders\n12\n\n 40  # left\n").unwrap();
/// assert_eq!(list.iter().map(|i| (i.index, i.line)).collect::<Vec<_>>(), [(12, 2), (40, 4)]);
/// let e = parse_index_list("1\n2 3\n").unwrap_err();
/// assert_eq!(e.line, 2);
/// ```
pub fn parse_index_list(text: &str) -> Result<Vec<ListedIndex>, IndexListError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let content = line.split('#').next().unwrap_or("");
        let mut words = content.split_whitespace();
        let Some(word) = words.next() else { continue };
        let fail = |problem: String| Err(IndexListError { line: line_no, problem });
        if let Some(extra) = words.next() {
            return fail(format!("'{}' after the index: one index per line", extra.escape_debug()));
        }
        match word.parse::<u32>() {
            Ok(index) => out.push(ListedIndex { index, line: line_no }),
            Err(_) => {
                return fail(format!(
                    "'{}' is not a particle index: indices are whole numbers from 0 to {}",
                    word.escape_debug(),
                    u32::MAX
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quads_give_sides_as_stretch_and_both_diagonals_as_shear() {
        // Two quads side by side: 0-1-4-3 and 1-2-5-4 (a 3×2 grid), split along 0–4 and 1–5.
        let t = [[0, 1, 4], [0, 4, 3], [1, 2, 5], [1, 5, 4]];
        let e = mesh_edges(&t, &[[0, 1], [2, 3]], true);
        assert_eq!(e.stretch, vec![[0, 1], [0, 3], [1, 2], [1, 4], [2, 5], [3, 4], [4, 5]]);
        assert_eq!(e.shear, vec![[0, 4], [1, 3], [1, 5], [2, 4]]);
        assert_eq!(e.shear_source, vec![0, 0, 2, 2]);
        let none = mesh_edges(&t, &[[0, 1], [2, 3]], false);
        assert_eq!(none.stretch, e.stretch);
        assert!(none.shear.is_empty());
    }

    #[test]
    fn triangle_pairs_give_their_opposite_vertices() {
        // A fan of three triangles around vertex 0: interior edges 0–2 and 0–3.
        let t = [[0, 1, 2], [0, 2, 3], [0, 3, 4]];
        let e = mesh_edges(&t, &[], true);
        assert_eq!(e.shear, vec![[1, 3], [2, 4]]);
        assert_eq!(e.shear_source, vec![0, 1]);
        assert_eq!(e.stretch_source[e.stretch.binary_search(&[0, 3]).unwrap()], 1);
    }

    #[test]
    fn opposite_pairs_that_are_edges_are_not_repeated() {
        // A tetrahedron: every opposite pair is already an edge.
        let t = [[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]];
        let e = mesh_edges(&t, &[], true);
        assert_eq!(e.stretch.len(), 6);
        assert!(e.shear.is_empty());
    }

    #[test]
    fn non_manifold_edges_give_no_shear_and_bad_quads_are_ignored() {
        let t = [[0, 1, 2], [1, 0, 3], [0, 1, 4]];
        let e = mesh_edges(&t, &[[0, 7], [0, 0]], true);
        assert!(e.shear.is_empty());
        assert_eq!(e.stretch.len(), 7);
    }

    #[test]
    fn grain_sectors() {
        let at = |deg: f64| {
            let r = deg.to_radians();
            grain([0.0, 0.0], [r.cos() as f32, r.sin() as f32])
        };
        assert_eq!(at(0.0), Grain::Warp);
        assert_eq!(at(22.0), Grain::Warp);
        assert_eq!(at(23.0), Grain::Bias);
        assert_eq!(at(45.0), Grain::Bias);
        assert_eq!(at(67.0), Grain::Bias);
        assert_eq!(at(68.0), Grain::Weft);
        assert_eq!(at(180.0), Grain::Warp);
        assert_eq!(at(-90.0), Grain::Weft);
        let t = [[0, 1, 2]];
        let uv = [[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]];
        assert_eq!(
            classify_grain(&[[0, 1], [0, 2], [1, 2], [0, 5]], &[0, 0, 0, 0], &t, &uv),
            [Grain::Warp, Grain::Weft, Grain::Bias, Grain::Bias]
        );
    }

    #[test]
    fn the_builder_carries_uvs_and_checks_them() {
        use crate::builder::{ClothDesc, ModelBuilder};
        use crate::limits::Limits;
        use crate::settings::SimSettings;
        let cloth = ClothDesc {
            name: "c".into(),
            positions: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            triangles: vec![[0, 1, 2]],
            uvs: vec![[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]],
            ..ClothDesc::default()
        };
        let build = |c: &ClothDesc| {
            let mut b = ModelBuilder::new(SimSettings::default(), Limits::default()).unwrap();
            b.add_cloth(c)?;
            b.build()
        };
        // Without polygons, the triangles are the faces, with their UVs.
        let model = build(&cloth).unwrap();
        let faces = &model.cloths()[0].polygons;
        assert_eq!((faces.sizes(), faces.corners()), (&[3][..], &[0, 1, 2][..]));
        assert_eq!(faces.uvs(), &cloth.uvs[0]);
        // Polygons given are carried as they are, and checked against the particles.
        let quad = crate::polygons::Polygons::new(vec![4], vec![0, 1, 2, 3], Vec::new()).unwrap();
        let four = ClothDesc {
            positions: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]],
            polygons: quad.clone(),
            ..cloth.clone()
        };
        assert_eq!(build(&four).unwrap().cloths()[0].polygons, quad);
        let e = build(&ClothDesc { polygons: quad, ..cloth.clone() }).unwrap_err();
        assert_eq!((e.location.field, e.location.index), ("polygons", Some(0)));
        assert!(e.to_string().contains("index 3 is out of range: the cloth has 3 particles"), "{e}");
        let two = ClothDesc { uvs: vec![cloth.uvs[0]; 2], ..cloth.clone() };
        assert_eq!(build(&two).unwrap_err().location.field, "uvs");
        let nan = ClothDesc { uvs: vec![[[0.0, f32::NAN], [1.0, 0.0], [0.0, 1.0]]], ..cloth };
        let e = build(&nan).unwrap_err();
        assert_eq!((e.location.field, e.location.index), ("uvs", Some(0)));
    }

    #[test]
    fn index_lists() {
        assert_eq!(parse_index_list("").unwrap(), vec![]);
        let e = parse_index_list("1\n-2\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().starts_with("line 2: '-2' is not a particle index"), "{e}");
        assert_eq!(parse_index_list("4294967296").unwrap_err().line, 1);
        assert_eq!(parse_index_list("7\r\n8 # x\r\n").unwrap().len(), 2);
    }
}
