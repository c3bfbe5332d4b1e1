//! Closed test shapes built in code: an icosphere (for volume, bending and closed-mesh tests).

/// A sphere of `radius` (m) centred at `centre`, made by subdividing an icosahedron `levels`
/// times (20·4^levels triangles, counter-clockwise seen from outside). Deterministic.
///
/// ```
/// use weft_core::shapes::icosphere;
/// let (positions, triangles) = icosphere(1, 1.0, [0.0; 3]);
/// assert_eq!((positions.len(), triangles.len()), (42, 80));
/// ```
pub fn icosphere(levels: u32, radius: f32, centre: [f32; 3]) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let t = (1.0 + 5f64.sqrt()) / 2.0;
    let mut points: Vec<[f64; 3]> = vec![
        [-1.0, t, 0.0],
        [1.0, t, 0.0],
        [-1.0, -t, 0.0],
        [1.0, -t, 0.0],
        [0.0, -1.0, t],
        [0.0, 1.0, t],
        [0.0, -1.0, -t],
        [0.0, 1.0, -t],
        [t, 0.0, -1.0],
        [t, 0.0, 1.0],
        [-t, 0.0, -1.0],
        [-t, 0.0, 1.0],
    ];
    let mut triangles: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    let normalise = |p: [f64; 3]| {
        let l = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
        p.map(|c| c / l)
    };
    points = points.into_iter().map(normalise).collect();
    for _ in 0..levels {
        // Midpoints keyed by their (sorted) edge, so shared edges share a vertex.
        let mut midpoint = std::collections::BTreeMap::new();
        let mut split = |a: u32, b: u32, points: &mut Vec<[f64; 3]>| -> u32 {
            *midpoint.entry((a.min(b), a.max(b))).or_insert_with(|| {
                let (p, q) = (points[a as usize], points[b as usize]);
                points.push(normalise([0, 1, 2].map(|i| (p[i] + q[i]) / 2.0)));
                points.len() as u32 - 1
            })
        };
        let mut next = Vec::with_capacity(triangles.len() * 4);
        for [a, b, c] in triangles {
            let (ab, bc, ca) = (split(a, b, &mut points), split(b, c, &mut points), split(c, a, &mut points));
            next.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        triangles = next;
    }
    let positions =
        points.iter().map(|p| [0, 1, 2].map(|i| (centre[i] as f64 + radius as f64 * p[i]) as f32)).collect();
    (positions, triangles)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::MeshTopology;

    #[test]
    fn icospheres_are_closed_and_outward() {
        for levels in 0..4 {
            let (p, t) = icosphere(levels, 2.0, [1.0, 0.0, 0.0]);
            assert_eq!(t.len(), 20 * 4usize.pow(levels));
            assert_eq!(p.len(), 10 * 4usize.pow(levels) + 2);
            let topology = MeshTopology::new(&t);
            assert!(topology.is_closed() && topology.consistently_oriented);
            // Signed volume (divergence theorem) is positive: normals point outward.
            let volume: f64 = t
                .iter()
                .map(|&[a, b, c]| {
                    let [a, b, c] = [a, b, c].map(|i| p[i as usize].map(f64::from));
                    let cross =
                        [b[1] * c[2] - b[2] * c[1], b[2] * c[0] - b[0] * c[2], b[0] * c[1] - b[1] * c[0]];
                    (a[0] * cross[0] + a[1] * cross[1] + a[2] * cross[2]) / 6.0
                })
                .sum();
            assert!(volume > 0.0 && volume < 4.0 / 3.0 * std::f64::consts::PI * 8.0, "{volume}");
        }
    }
}
