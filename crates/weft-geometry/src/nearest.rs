//! The triangle of a mesh nearest to a point within a reach: [`NearestTriangle`].
//!
//! The triangles' boxes, grown by the reach, are entered in a [`Grid`] with cells one reach
//! wide, and a point is measured against the triangles listed in its cell (and the few too large
//! to list, against every point): about one closest-point test per nearby triangle. A triangle
//! within the reach of a point has the point in its grown box, so it is listed in the point's
//! cell: the answer is the one that measuring every triangle gives. Ties go to the lowest
//! triangle index, so the answer depends only on the mesh and the point.

use crate::aabb::Aabb;
use crate::grid::Grid;
use crate::proximity::closest_on_triangle;

/// A grown box spanning more cells than this (a triangle hundreds of times the reach) is
/// measured against every point instead of listed in them all.
const MAX_CELLS: u64 = 1 << 16;

type V = [f64; 3];

/// The triangles of a mesh, ready to find the one nearest to a point within a reach.
#[derive(Debug)]
pub struct NearestTriangle<'a> {
    positions: &'a [[f32; 3]],
    triangles: &'a [[u32; 3]],
    reach: f64,
    grid: Grid,
}

/// A point's nearest triangle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Nearest {
    /// The triangle (index into the mesh's triangles).
    pub triangle: u32,
    /// The barycentric weights of the triangle's point closest to the point (sum 1).
    pub weights: [f64; 3],
    /// The distance from the point to it, m.
    pub distance: f64,
}

/// The distance in m from `p` to the point of triangle `t` at weights `w`.
fn distance(p: V, t: [V; 3], w: [f64; 3]) -> f64 {
    let q: V = std::array::from_fn(|k| t[0][k] * w[0] + t[1][k] * w[1] + t[2][k] * w[2]);
    let d: V = std::array::from_fn(|k| p[k] - q[k]);
    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
}

/// The corners of triangle `t` of `positions`, in `f64`.
fn corners(positions: &[[f32; 3]], t: [u32; 3]) -> [V; 3] {
    t.map(|i| positions[i as usize].map(f64::from))
}

impl<'a> NearestTriangle<'a> {
    /// The triangles `triangles` over `positions` (m; indices in range, positions finite), for
    /// points within `reach` (m, `> 0`) of them.
    pub fn new(positions: &'a [[f32; 3]], triangles: &'a [[u32; 3]], reach: f64) -> Self {
        let mut grid = Grid::default();
        let grown = |k: usize| {
            let c = corners(positions, triangles[k]);
            let lo: V = std::array::from_fn(|a| c[0][a].min(c[1][a]).min(c[2][a]) - reach);
            let hi: V = std::array::from_fn(|a| c[0][a].max(c[1][a]).max(c[2][a]) + reach);
            // Rounding to `f32` keeps every `f32` point of the box in it (rounding is monotone).
            Aabb::new(lo.map(|x| x as f32), hi.map(|x| x as f32))
        };
        grid.build_boxes(reach.max(1e-9), MAX_CELLS, triangles.len(), grown);
        NearestTriangle { positions, triangles, reach, grid }
    }

    /// The reach, m.
    pub fn reach(&self) -> f64 {
        self.reach
    }

    /// The triangle nearest to `p` (m) if one is within the reach (ties: the lowest index).
    pub fn find(&self, p: [f32; 3]) -> Option<Nearest> {
        let wide = p.map(f64::from);
        let mut best: Option<Nearest> = None;
        self.grid.for_each_at(p, |k| {
            let t = corners(self.positions, self.triangles[k as usize]);
            let weights = closest_on_triangle(wide, t);
            let d = distance(wide, t, weights);
            if best.is_none_or(|b| d < b.distance || (d == b.distance && k < b.triangle)) {
                best = Some(Nearest { triangle: k, weights, distance: d });
            }
        });
        best.filter(|b| b.distance <= self.reach)
    }
}

/// The distance in m from `p` to the nearest of `triangles` over `positions`, measuring every
/// one (`∞` without triangles).
pub fn distance_to_triangles(p: [f32; 3], positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> f64 {
    let wide = p.map(f64::from);
    triangles
        .iter()
        .map(|&t| {
            let c = corners(positions, t);
            distance(wide, c, closest_on_triangle(wide, c))
        })
        .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_within_reach_is_the_nearest_of_all() {
        // A crumpled 9 × 9 sheet and points around it.
        let n = 9u32;
        let mut seed = 99u32;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as f32 / u32::MAX as f32 - 0.5
        };
        let p: Vec<[f32; 3]> =
            (0..n * n).map(|k| [(k % n) as f32 * 0.1, (k / n) as f32 * 0.1, 0.05 * rnd()]).collect();
        let mut t = Vec::new();
        for j in 0..n - 1 {
            for i in 0..n - 1 {
                let a = j * n + i;
                t.push([a, a + 1, a + n + 1]);
                t.push([a, a + n + 1, a + n]);
            }
        }
        let reach = 0.1;
        let search = NearestTriangle::new(&p, &t, reach);
        for _ in 0..500 {
            let q = [0.4 + 1.2 * rnd(), 0.4 + 1.2 * rnd(), 0.3 * rnd()];
            let all = distance_to_triangles(q, &p, &t);
            match search.find(q) {
                Some(found) => {
                    assert_eq!(found.distance, all);
                    let c = corners(&p, t[found.triangle as usize]);
                    let lower = (0..found.triangle).any(|k| {
                        let c = corners(&p, t[k as usize]);
                        distance(q.map(f64::from), c, closest_on_triangle(q.map(f64::from), c)) == all
                    });
                    assert!(!lower, "a tie goes to the lowest index");
                    assert_eq!(distance(q.map(f64::from), c, found.weights), all);
                }
                None => assert!(all > reach, "{q:?} is {all} m away"),
            }
        }
    }
}
