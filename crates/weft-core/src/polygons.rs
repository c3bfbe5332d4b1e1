//! The faces of a mesh as given: [`Polygons`], each face a list of corners (point indices) with,
//! optionally, a texture coordinate per corner.
//!
//! The simulation works on triangles; a cache writes the faces a cloth was given (triangles,
//! quads, larger polygons) so that a quad mesh goes out as quads. A cloth keeps its faces beside
//! its triangles from the scene to the caches ([`crate::ClothDesc::polygons`],
//! [`crate::model::ClothInfo::polygons`]).
//!
//! The layout is the one USD and most mesh formats use: a size per face, then the corners of
//! every face one after the other, then (if any) one UV per corner in the same order.
//!
//! ```
//! use weft_core::polygons::Polygons;
//! // A quad and a triangle sharing the edge 1–2.
//! let p = Polygons::new(vec![4, 3], vec![0, 1, 2, 3, 1, 4, 2], Vec::new()).unwrap();
//! assert_eq!(p.len(), 2);
//! assert_eq!(p.face(0), &[0, 1, 2, 3]);
//! assert_eq!(p.points_needed(), 5);
//! let e = Polygons::new(vec![2], vec![0, 1], Vec::new()).unwrap_err();
//! assert_eq!(e.to_string(), "face 0 has 2 corners: a face needs at least 3");
//! ```

use crate::digest::Digest;

/// What is wrong with a face list given to [`Polygons::new`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PolygonError {
    /// A face of fewer than three corners.
    #[error("face {face} has {size} corner{}: a face needs at least 3", if *size == 1 { "" } else { "s" })]
    TooFewCorners {
        /// The face.
        face: usize,
        /// Its corners.
        size: u32,
    },
    /// The sizes do not add up to the corners given.
    #[error("the face sizes add up to {sum} corners, but {corners} are given")]
    CornerCount {
        /// The sum of the sizes.
        sum: u64,
        /// The corners given.
        corners: usize,
    },
    /// A face that uses one point twice.
    #[error("face {face} uses point {point} twice: a face needs distinct points")]
    RepeatedPoint {
        /// The face.
        face: usize,
        /// The point.
        point: u32,
    },
    /// UVs given, but not one per corner.
    #[error("{uvs} UVs for {corners} corners: give one per corner, or none")]
    UvCount {
        /// UVs given.
        uvs: usize,
        /// Corners.
        corners: usize,
    },
    /// A UV that is NaN or infinite.
    #[error("the UV of corner {corner} is {value:?}, not finite")]
    UvNotFinite {
        /// The corner (index into the flat corner list).
        corner: usize,
        /// The UV.
        value: [f32; 2],
    },
}

/// Faces as given (see the [module docs](self)): validated on construction, immutable after.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Polygons {
    /// Corners of each face (each `≥ 3`).
    sizes: Vec<u32>,
    /// Where each face's corners start in `corners`, and the total at the end.
    starts: Vec<usize>,
    /// Point indices of every face's corners, face after face.
    corners: Vec<u32>,
    /// Empty, or one `[u, v]` per corner.
    uvs: Vec<[f32; 2]>,
    /// One more than the largest point index (0 without faces).
    points_needed: usize,
}

impl Digest for Polygons {
    fn digest<H: std::hash::Hasher>(&self, h: &mut H) {
        let Polygons { sizes, starts, corners, uvs, points_needed } = self;
        sizes.digest(h);
        starts.digest(h);
        corners.digest(h);
        uvs.digest(h);
        points_needed.digest(h);
    }
}

impl Polygons {
    /// No faces (the same as `Polygons::default()`, usable in a `static`).
    pub const EMPTY: Polygons = Polygons {
        sizes: Vec::new(),
        starts: Vec::new(),
        corners: Vec::new(),
        uvs: Vec::new(),
        points_needed: 0,
    };

    /// Faces of `sizes[f]` corners each, whose point indices follow one another in `corners`,
    /// with `uvs` empty or one (finite) texture coordinate per corner. Fails on a face of fewer
    /// than 3 corners or repeating a point, sizes that do not add up to `corners.len()`, or UVs
    /// of the wrong count or not finite.
    pub fn new(sizes: Vec<u32>, corners: Vec<u32>, uvs: Vec<[f32; 2]>) -> Result<Self, PolygonError> {
        let mut starts = Vec::with_capacity(sizes.len() + 1);
        let mut sum = 0u64;
        for (face, &size) in sizes.iter().enumerate() {
            if size < 3 {
                return Err(PolygonError::TooFewCorners { face, size });
            }
            starts.push(sum as usize);
            sum += size as u64;
        }
        if sum != corners.len() as u64 {
            return Err(PolygonError::CornerCount { sum, corners: corners.len() });
        }
        if !sizes.is_empty() {
            starts.push(corners.len());
        }
        for face in 0..sizes.len() {
            let c = &corners[starts[face]..starts[face + 1]];
            // Faces are small: a quadratic check beats a set.
            for (k, &p) in c.iter().enumerate() {
                if c[..k].contains(&p) {
                    return Err(PolygonError::RepeatedPoint { face, point: p });
                }
            }
        }
        if !uvs.is_empty() && uvs.len() != corners.len() {
            return Err(PolygonError::UvCount { uvs: uvs.len(), corners: corners.len() });
        }
        if let Some(corner) = uvs.iter().position(|uv| !uv.iter().all(|c| c.is_finite())) {
            return Err(PolygonError::UvNotFinite { corner, value: uvs[corner] });
        }
        let points_needed = corners.iter().max().map_or(0, |&m| m as usize + 1);
        Ok(Polygons { sizes, starts, corners, uvs, points_needed })
    }

    /// The triangles as faces, with their per-corner UVs (`uvs` empty, or one `[[u, v]; 3]` per
    /// triangle). Fails as [`Polygons::new`] does.
    ///
    /// ```
    /// use weft_core::polygons::Polygons;
    /// let p = Polygons::from_triangles(&[[0, 1, 2]], &[[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]]).unwrap();
    /// assert_eq!((p.sizes(), p.corners()), (&[3][..], &[0, 1, 2][..]));
    /// assert_eq!(p.uvs()[2], [0.0, 1.0]);
    /// ```
    pub fn from_triangles(triangles: &[[u32; 3]], uvs: &[[[f32; 2]; 3]]) -> Result<Self, PolygonError> {
        Polygons::new(
            vec![3; triangles.len()],
            triangles.iter().flatten().copied().collect(),
            uvs.iter().flatten().copied().collect(),
        )
    }

    /// Number of faces.
    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// True without faces.
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    /// Corners of each face.
    pub fn sizes(&self) -> &[u32] {
        &self.sizes
    }

    /// Point indices of every face's corners, face after face.
    pub fn corners(&self) -> &[u32] {
        &self.corners
    }

    /// Texture coordinates, one per entry of [`Polygons::corners`], or empty.
    pub fn uvs(&self) -> &[[f32; 2]] {
        &self.uvs
    }

    /// The point indices of face `f`, in order (panics if `f ≥ len()`).
    pub fn face(&self, f: usize) -> &[u32] {
        &self.corners[self.starts[f]..self.starts[f + 1]]
    }

    /// The faces' point indices, in order.
    pub fn faces(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        self.starts.windows(2).map(|w| &self.corners[w[0]..w[1]])
    }

    /// Every face cut into triangles, fans from its first corner (for drawing and for
    /// measuring; the caches write the faces as they are).
    pub fn fan_triangles(&self) -> Vec<[u32; 3]> {
        self.faces().flat_map(|f| (1..f.len() - 1).map(move |k| [f[0], f[k], f[k + 1]])).collect()
    }

    /// One more than the largest point index: the fewest points these faces can index (0 without
    /// faces).
    pub fn points_needed(&self) -> usize {
        self.points_needed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_checked() {
        let ok = Polygons::new(vec![3, 4], vec![0, 1, 2, 2, 1, 3, 4], vec![[0.0; 2]; 7]).unwrap();
        assert_eq!(ok.faces().collect::<Vec<_>>(), vec![&[0, 1, 2][..], &[2, 1, 3, 4][..]]);
        assert_eq!(ok.points_needed(), 5);
        assert_eq!(Polygons::default().points_needed(), 0);
        assert_eq!(Polygons::new(vec![], vec![], vec![]), Ok(Polygons::EMPTY));
        let cases = [
            (Polygons::new(vec![3, 2], vec![0, 1, 2, 3, 4], vec![]), "face 1 has 2 corners"),
            (Polygons::new(vec![3], vec![0, 1, 2, 3], vec![]), "add up to 3 corners, but 4"),
            (Polygons::new(vec![4], vec![0, 1, 2, 1], vec![]), "face 0 uses point 1 twice"),
            (Polygons::new(vec![3], vec![0, 1, 2], vec![[0.0; 2]]), "1 UVs for 3 corners"),
            (
                Polygons::new(vec![3], vec![0, 1, 2], vec![[0.0; 2], [f32::NAN, 0.0], [0.0; 2]]),
                "the UV of corner 1",
            ),
        ];
        for (result, says) in cases {
            let e = result.unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
    }
}
