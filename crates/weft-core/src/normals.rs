//! Smooth vertex normals: for the mesh caches, and for the frame a render mesh is bound in
//! ([`crate::binding`]).
//!
//! [`vertex_normals`] gives each point the normalised, area-weighted sum of the normals of the
//! faces around it:
//!
//! * a face's normal is its *Newell vector*, `N = Σ_k p_k × p_{k+1}` over its corners in order
//!   (the last back to the first): for a flat polygon, twice its area times its unit normal,
//!   pointing to the side from which the corners turn counter-clockwise; for a bent quad, the
//!   normal of the plane that fits it best. Summing Newell vectors weighs each face by its area;
//! * a point's normal is `Σ N / |Σ N|` over the faces that use it.
//!
//! Sums are taken in `f64`, in face order, so the result depends only on the positions and the
//! faces, never on threads. A point whose sum has no direction (a point on no face, or whose
//! faces all have zero area, or two faces folded flat onto each other, cancelling) takes the
//! normal of the whole mesh (the sum over every face), and `+y` when that has none either. So
//! every normal is a finite unit vector: never NaN.

use crate::polygons::Polygons;

/// The normal of a point with no direction of its own on a mesh with none either.
pub const FALLBACK_NORMAL: [f32; 3] = [0.0, 1.0, 0.0];

/// Squared length below which a sum is taken to have no direction (m⁴: the square of twice an
/// area, so `1e-40` is an area of about `5e-21 m²`, far below any `f32` cloth).
const NO_DIRECTION: f64 = 1e-40;

/// The Newell vector of the face with corners `face` (twice its area times its unit normal).
pub fn newell(positions: &[[f32; 3]], face: &[u32]) -> [f64; 3] {
    let mut n = [0.0f64; 3];
    for (k, &a) in face.iter().enumerate() {
        let b = face[(k + 1) % face.len()];
        let (p, q) = (positions[a as usize].map(f64::from), positions[b as usize].map(f64::from));
        n[0] += (p[1] - q[1]) * (p[2] + q[2]);
        n[1] += (p[2] - q[2]) * (p[0] + q[0]);
        n[2] += (p[0] - q[0]) * (p[1] + q[1]);
    }
    n
}

/// Writes into `out` (cleared first) one unit normal per point of `positions`, smooth across
/// the `polygons` (see the [module docs](self)). `scratch` holds the `f64` sums between calls, so
/// a writer calling this once per sample allocates only once. Every index of `polygons` must be
/// below `positions.len()` (a cache checks it when it is made).
///
/// ```
/// use weft_core::polygons::Polygons;
/// let quad = Polygons::new(vec![4], vec![0, 1, 2, 3], Vec::new()).unwrap();
/// let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]];
/// let mut normals = Vec::new();
/// weft_core::normals::vertex_normals(&p, &quad, &mut Vec::new(), &mut normals);
/// assert_eq!(normals, vec![[0.0, 0.0, 1.0]; 4]);
/// ```
pub fn vertex_normals(
    positions: &[[f32; 3]],
    polygons: &Polygons,
    scratch: &mut Vec<[f64; 3]>,
    out: &mut Vec<[f32; 3]>,
) {
    scratch.clear();
    scratch.resize(positions.len(), [0.0; 3]);
    let mut total = [0.0f64; 3];
    for face in polygons.faces() {
        let n = newell(positions, face);
        for &p in face {
            let s = &mut scratch[p as usize];
            for k in 0..3 {
                s[k] += n[k];
            }
        }
        for k in 0..3 {
            total[k] += n[k];
        }
    }
    let fallback = unit(total).unwrap_or(FALLBACK_NORMAL);
    out.clear();
    out.extend(scratch.iter().map(|&s| unit(s).unwrap_or(fallback)));
}

/// `v / |v|` as `f32`, or `None` when `v` has no direction (or is not finite).
fn unit(v: [f64; 3]) -> Option<[f32; 3]> {
    let len2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if !(len2 > NO_DIRECTION && len2.is_finite()) {
        return None;
    }
    let len = len2.sqrt();
    Some(v.map(|c| (c / len) as f32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normals(positions: &[[f32; 3]], sizes: Vec<u32>, corners: Vec<u32>) -> Vec<[f32; 3]> {
        let polygons = Polygons::new(sizes, corners, Vec::new()).unwrap();
        let mut out = Vec::new();
        vertex_normals(positions, &polygons, &mut Vec::new(), &mut out);
        assert_eq!(out.len(), positions.len());
        for n in &out {
            let len = n.iter().map(|c| (*c as f64).powi(2)).sum::<f64>().sqrt();
            assert!((len - 1.0).abs() < 1e-6, "{n:?} is not unit");
        }
        out
    }

    fn close(a: [f32; 3], b: [f64; 3]) -> bool {
        (0..3).all(|k| (a[k] as f64 - b[k]).abs() < 1e-6)
    }

    #[test]
    fn a_flat_quad_has_its_normal_and_its_winding_decides_the_side() {
        // In the xz plane, wound counter-clockwise seen from +y.
        let p = [[0.0, 0.0, 0.0], [0.0, 0.0, 2.0], [3.0, 0.0, 2.0], [3.0, 0.0, 0.0]];
        assert_eq!(normals(&p, vec![4], vec![0, 1, 2, 3]), vec![[0.0, 1.0, 0.0]; 4]);
        assert_eq!(normals(&p, vec![4], vec![3, 2, 1, 0]), vec![[0.0, -1.0, 0.0]; 4]);
        // Newell's vector is twice the area: 2 · 6 m².
        assert_eq!(newell(&p, &[0, 1, 2, 3]), [0.0, 12.0, 0.0]);
    }

    #[test]
    fn a_cube_corner_points_along_the_diagonal() {
        // Three unit squares meeting at the origin, facing −x, −y, −z (outward of the cube
        // [0, 1]³): the corner's normal is −(1, 1, 1)/√3, the others keep their face's normal.
        let p = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 1.0, 0.0],
            [0.0, 1.0, 1.0],
            [1.0, 0.0, 1.0],
        ];
        // z = 0 face (−z): 0 2 4 1; x = 0 face (−x): 0 3 5 2; y = 0 face (−y): 0 1 6 3.
        let n = normals(&p, vec![4, 4, 4], vec![0, 2, 4, 1, 0, 3, 5, 2, 0, 1, 6, 3]);
        let d = -1.0 / 3f64.sqrt();
        assert!(close(n[0], [d, d, d]), "{:?}", n[0]);
        assert!(close(n[4], [0.0, 0.0, -1.0]), "{:?}", n[4]);
        assert!(close(n[5], [-1.0, 0.0, 0.0]), "{:?}", n[5]);
        assert!(close(n[6], [0.0, -1.0, 0.0]), "{:?}", n[6]);
        // Shared edges average their two faces.
        let h = -std::f64::consts::FRAC_1_SQRT_2;
        assert!(close(n[1], [0.0, h, h]), "{:?}", n[1]);
    }

    #[test]
    fn area_weights_the_faces() {
        // A fan of two triangles around point 0, one four times the area of the other, at right
        // angles: the sum leans four to one towards the large one's normal.
        let p = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]];
        // Triangle 0 1 2 in z = 0 (normal +z, area 2); triangle 0 3 4 in x = 0 (normal +x, area 0.5).
        let n = normals(&p, vec![3, 3], vec![0, 1, 2, 0, 3, 4]);
        let l = 17f64.sqrt();
        assert!(close(n[0], [1.0 / l, 0.0, 4.0 / l]), "{:?}", n[0]);
    }

    #[test]
    fn degenerate_faces_never_give_nan() {
        // A zero-area triangle (three points on a line) beside a good one: its own points take the
        // good face's normal where they share it, and the mesh's normal where they do not.
        let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [5.0, 5.0, 5.0]];
        let n = normals(&p, vec![3, 3], vec![0, 1, 2, 0, 1, 3]);
        assert_eq!(n[0], [0.0, 0.0, 1.0]);
        assert_eq!(n[2], [0.0, 0.0, 1.0]);
        // Point 4 is on no face: the mesh's normal.
        assert_eq!(n[4], [0.0, 0.0, 1.0]);
        // Every face degenerate, and all points in one spot: the fallback.
        let p = [[1.0, 1.0, 1.0]; 3];
        assert_eq!(normals(&p, vec![3], vec![0, 1, 2]), vec![FALLBACK_NORMAL; 3]);
        // Two faces folded flat onto each other cancel: the mesh has no normal either.
        let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        assert_eq!(normals(&p, vec![3, 3], vec![0, 1, 2, 0, 2, 1]), vec![FALLBACK_NORMAL; 3]);
        // Huge coordinates do not overflow into infinity.
        let p = [[0.0, 0.0, 0.0], [3e38, 0.0, 0.0], [0.0, 3e38, 0.0]];
        assert_eq!(normals(&p, vec![3], vec![0, 1, 2]), vec![[0.0, 0.0, 1.0]; 3]);
        // No faces at all.
        assert_eq!(normals(&p, vec![], vec![]), vec![FALLBACK_NORMAL; 3]);
    }
}
