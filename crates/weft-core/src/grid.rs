//! Rectangular cloth grids: particles, triangles, structural and shear edges.
//!
//! Particle `(i, j)` (column `i < nu`, row `j < nv`) has index `j·nu + i` and sits at
//! `origin + i·du·U + j·dv·V`, where `U`, `V` are the unit axes of the grid's plane and
//! `du = width/(nu − 1)`, `dv = height/(nv − 1)`.
//!
//! # Facing and UVs
//!
//! A grid faces the positive axis its plane leaves out ([`GridPlane::normal`]): `xy` faces `+z`,
//! `xz` faces `+y` (a sheet lying flat with y up shows its front to the sky), `yz` faces `+x`.
//! Its triangles and its quads ([`GridMesh::polygons`], one per cell, what the caches write) are
//! counter-clockwise seen from that side.
//!
//! Its UVs keep the grid's aspect ratio: the longer side spans `0–1` and the shorter
//! proportionally less (`u = i·du/L`, `v = j·dv/L`, `L = max(width, height)`), so a square
//! texture is not squeezed. `u` grows along `U`; `v` grows along `V`, except on an `xz` grid,
//! where it grows towards `−z` (`v = (nv − 1 − j)·dv/L`), so that a texture reads unmirrored seen
//! from the front on every plane.

use crate::cloth::{ClothDesc, EdgeSet, MassSpec};
use crate::error::Rule;
use crate::limits::{Limits, RAISE_HINT};
use crate::polygons::Polygons;
use crate::units::Elasticity;

/// The plane a grid lies in: its first axis `U` and second axis `V`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GridPlane {
    /// `U = x`, `V = y` (a hanging flag with y up).
    #[default]
    XY,
    /// `U = x`, `V = z` (a sheet lying flat with y up).
    XZ,
    /// `U = y`, `V = z`.
    YZ,
}

impl GridPlane {
    fn axes(self) -> (usize, usize) {
        match self {
            GridPlane::XY => (0, 1),
            GridPlane::XZ => (0, 2),
            GridPlane::YZ => (1, 2),
        }
    }

    /// The unit normal the grid faces: `+z`, `+y`, `+x` for `xy`, `xz`, `yz`.
    pub fn normal(self) -> [f32; 3] {
        match self {
            GridPlane::XY => [0.0, 0.0, 1.0],
            GridPlane::XZ => [0.0, 1.0, 0.0],
            GridPlane::YZ => [1.0, 0.0, 0.0],
        }
    }

    /// True when `U × V` points away from [`GridPlane::normal`] (`xz`: `x × z = −y`), so that
    /// faces are wound from `V` to `U` and `v` runs against `V`.
    fn flipped(self) -> bool {
        self == GridPlane::XZ
    }
}

/// A grid request.
#[derive(Debug, Clone, PartialEq)]
pub struct GridDesc {
    /// Particles along `U` and along `V` (each `≥ 2`).
    pub resolution: [u32; 2],
    /// Extent along `U` and `V` in m (each `> 0`).
    pub size: [f32; 2],
    /// Position of particle `(0, 0)` in m.
    pub origin: [f32; 3],
    /// The plane.
    pub plane: GridPlane,
}

/// A generated grid.
#[derive(Debug, Clone, PartialEq)]
pub struct GridMesh {
    /// Particle positions in m.
    pub positions: Vec<[f32; 3]>,
    /// Two triangles per cell, counter-clockwise seen from the plane's
    /// [normal](GridPlane::normal).
    pub triangles: Vec<[u32; 3]>,
    /// The UVs of each triangle's corners (see the [module docs](self)).
    pub uvs: Vec<[[f32; 2]; 3]>,
    /// One quad per cell, wound as the triangles, with its UVs: the faces the caches write.
    pub polygons: Polygons,
    /// Edges along `U` then along `V`.
    pub structural: Vec<[u32; 2]>,
    /// Both diagonals of each cell.
    pub shear: Vec<[u32; 2]>,
}

impl GridMesh {
    /// A cloth made of this grid: its structural edges as stretch constraints and its diagonals as
    /// shear constraints (both undamped, rest lengths from the grid), its triangles, UVs and quads,
    /// no pins.
    ///
    /// ```
    /// use weft_core::grid::{GridDesc, GridPlane};
    /// use weft_core::{MassSpec, limits::Limits, units::Elasticity};
    /// let g = GridDesc { resolution: [3, 3], size: [1.0, 1.0], origin: [0.0; 3], plane: GridPlane::XY };
    /// let cloth = g.generate(&Limits::default()).unwrap().into_cloth(
    ///     "sheet", MassSpec::Density(0.2), Elasticity::RIGID, Elasticity::RIGID);
    /// assert_eq!(cloth.edge_sets[0].edges.len(), 12);
    /// assert_eq!(cloth.edge_sets[1].edges.len(), 8);
    /// ```
    pub fn into_cloth(
        self,
        name: impl Into<String>,
        mass: MassSpec,
        stretch: Elasticity,
        shear: Elasticity,
    ) -> ClothDesc {
        ClothDesc {
            name: name.into(),
            positions: self.positions,
            velocities: None,
            mass,
            triangles: self.triangles,
            uvs: self.uvs,
            polygons: self.polygons,
            edge_sets: vec![
                EdgeSet { edges: self.structural, elasticity: stretch, ..EdgeSet::stretch() },
                EdgeSet { edges: self.shear, elasticity: shear, ..EdgeSet::shear() },
            ],
            ..ClothDesc::default()
        }
    }
}

impl GridDesc {
    /// Number of particles the grid has (computed without allocating).
    pub fn particle_count(&self) -> u64 {
        self.resolution[0] as u64 * self.resolution[1] as u64
    }

    /// Index of particle `(i, j)`.
    pub fn index(&self, i: u32, j: u32) -> u32 {
        j * self.resolution[0] + i
    }

    /// The four corner particles: `(0,0)`, `(nu−1,0)`, `(0,nv−1)`, `(nu−1,nv−1)`.
    pub fn corners(&self) -> [u32; 4] {
        let [nu, nv] = self.resolution;
        [self.index(0, 0), self.index(nu - 1, 0), self.index(0, nv - 1), self.index(nu - 1, nv - 1)]
    }

    /// Checks the request against its rules and `limits`, before anything is allocated.
    /// Returns the offending field (`"resolution"`, `"size"`, `"origin"`) and rule.
    pub fn validate(&self, limits: &Limits) -> Result<(), (&'static str, Rule)> {
        for &r in &self.resolution {
            if r < 2 {
                return Err(("resolution", Rule::GridTooSmall { value: r }));
            }
        }
        let n = self.particle_count();
        if n > limits.max_particles.min(u32::MAX as u64) {
            return Err((
                "resolution",
                Rule::TooLarge {
                    what: "grid particles",
                    requested: n,
                    limit: limits.max_particles.min(u32::MAX as u64),
                    hint: RAISE_HINT,
                },
            ));
        }
        for &s in &self.size {
            if !s.is_finite() {
                return Err(("size", Rule::NotFinite { value: s.to_string() }));
            }
            if s <= 0.0 {
                return Err(("size", Rule::NotPositive { value: crate::error::widen(s) }));
            }
        }
        if let Some(o) = self.origin.iter().find(|o| !o.is_finite()) {
            return Err(("origin", Rule::NotFinite { value: o.to_string() }));
        }
        Ok(())
    }

    /// Generates the grid after [`GridDesc::validate`].
    pub fn generate(&self, limits: &Limits) -> Result<GridMesh, (&'static str, Rule)> {
        self.validate(limits)?;
        let [nu, nv] = self.resolution;
        let (ua, va) = self.plane.axes();
        let du = self.size[0] as f64 / (nu - 1) as f64;
        let dv = self.size[1] as f64 / (nv - 1) as f64;
        let mut positions = Vec::with_capacity(self.particle_count() as usize);
        for j in 0..nv {
            for i in 0..nu {
                let mut p = self.origin.map(f64::from);
                p[ua] += i as f64 * du;
                p[va] += j as f64 * dv;
                positions.push(p.map(|c| c as f32));
            }
        }
        let cells = (nu as usize - 1) * (nv as usize - 1);
        let flipped = self.plane.flipped();
        let longer = self.size[0].max(self.size[1]) as f64;
        let uv = |p: u32| {
            let (i, j) = (p % nu, p / nu);
            let j = if flipped { nv - 1 - j } else { j };
            [(i as f64 * du / longer) as f32, (j as f64 * dv / longer) as f32]
        };
        let mut triangles = Vec::with_capacity(2 * cells);
        let mut quads = Vec::with_capacity(4 * cells);
        let mut shear = Vec::with_capacity(2 * cells);
        for j in 0..nv - 1 {
            for i in 0..nu - 1 {
                let (p00, p10) = (self.index(i, j), self.index(i + 1, j));
                let (p01, p11) = (self.index(i, j + 1), self.index(i + 1, j + 1));
                if flipped {
                    triangles.push([p00, p01, p11]);
                    triangles.push([p00, p11, p10]);
                    quads.extend([p00, p01, p11, p10]);
                } else {
                    triangles.push([p00, p10, p11]);
                    triangles.push([p00, p11, p01]);
                    quads.extend([p00, p10, p11, p01]);
                }
                shear.push([p00, p11]);
                shear.push([p10, p01]);
            }
        }
        let uvs = triangles.iter().map(|t| t.map(uv)).collect();
        let quad_uvs = quads.iter().map(|&p| uv(p)).collect();
        let polygons = Polygons::new(vec![4; cells], quads, quad_uvs)
            .expect("grid cells are quads of four distinct particles with finite UVs");
        let mut structural = Vec::with_capacity(2 * (nu as usize) * (nv as usize));
        for j in 0..nv {
            for i in 0..nu - 1 {
                structural.push([self.index(i, j), self.index(i + 1, j)]);
            }
        }
        for j in 0..nv - 1 {
            for i in 0..nu {
                structural.push([self.index(i, j), self.index(i, j + 1)]);
            }
        }
        Ok(GridMesh { positions, triangles, uvs, polygons, structural, shear })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_by_two() {
        let g = GridDesc { resolution: [3, 2], size: [2.0, 1.0], origin: [0.0; 3], plane: GridPlane::XZ };
        let m = g.generate(&Limits::default()).unwrap();
        assert_eq!(m.positions.len(), 6);
        assert_eq!(m.positions[4], [1.0, 0.0, 1.0]);
        assert_eq!(m.triangles.len(), 4);
        assert_eq!(m.structural.len(), 2 * 2 + 3);
        assert_eq!(m.shear.len(), 4);
        assert_eq!(g.corners(), [0, 2, 3, 5]);
    }

    #[test]
    fn grids_face_their_normal_with_unmirrored_uvs_that_keep_the_aspect() {
        let sub = |a: [f32; 3], b: [f32; 3]| [0, 1, 2].map(|k| b[k] as f64 - a[k] as f64);
        for plane in [GridPlane::XY, GridPlane::XZ, GridPlane::YZ] {
            let g = GridDesc { resolution: [4, 3], size: [2.0, 0.5], origin: [0.5, -1.0, 2.0], plane };
            let m = g.generate(&Limits::default()).unwrap();
            let n = plane.normal().map(f64::from);
            for (t, uv) in m.triangles.iter().zip(&m.uvs) {
                let [a, b, c] = t.map(|p| m.positions[p as usize]);
                let (e1, e2) = (sub(a, b), sub(a, c));
                let cross = [
                    e1[1] * e2[2] - e1[2] * e2[1],
                    e1[2] * e2[0] - e1[0] * e2[2],
                    e1[0] * e2[1] - e1[1] * e2[0],
                ];
                let facing = (0..3).map(|k| cross[k] * n[k]).sum::<f64>();
                assert!(facing > 0.0, "{plane:?} {t:?}: {cross:?}");
                // Counter-clockwise in UV space too: the texture is not mirrored.
                let (f1, f2) =
                    ([uv[1][0] - uv[0][0], uv[1][1] - uv[0][1]], [uv[2][0] - uv[0][0], uv[2][1] - uv[0][1]]);
                assert!(f1[0] * f2[1] - f1[1] * f2[0] > 0.0, "{plane:?} {uv:?}");
            }
            // The quads list the corners of the two triangles of their cell, in the same turn.
            assert_eq!(m.polygons.len(), 6);
            for (q, face) in m.polygons.faces().enumerate() {
                let [t0, t1] = [m.triangles[2 * q], m.triangles[2 * q + 1]];
                assert_eq!((t0[0], t0[1], t0[2]), (face[0], face[1], face[2]), "{plane:?}");
                assert_eq!((t1[0], t1[1], t1[2]), (face[0], face[2], face[3]), "{plane:?}");
            }
            let (mut umax, mut vmax) = (0.0f32, 0.0f32);
            for uv in m.polygons.uvs() {
                umax = umax.max(uv[0]);
                vmax = vmax.max(uv[1]);
            }
            assert_eq!((umax, vmax), (1.0, 0.25), "{plane:?}");
        }
    }

    #[test]
    fn refuses_before_allocating() {
        let g = GridDesc {
            resolution: [100_000, 100_000],
            size: [1.0; 2],
            origin: [0.0; 3],
            plane: GridPlane::XY,
        };
        assert!(matches!(g.generate(&Limits::default()), Err(("resolution", Rule::TooLarge { .. }))));
        let g = GridDesc { resolution: [1, 5], ..g };
        assert!(matches!(
            g.validate(&Limits::default()),
            Err(("resolution", Rule::GridTooSmall { value: 1 }))
        ));
        let g = GridDesc { resolution: [2, 2], size: [0.0, 1.0], ..g };
        assert!(matches!(g.validate(&Limits::default()), Err(("size", Rule::NotPositive { .. }))));
    }
}
