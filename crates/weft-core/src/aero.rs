//! Aerodynamics: per-triangle drag and lift from the velocity of the cloth relative to the wind,
//! the triangle's normal and area, and the air density; forces accumulated per particle in a fixed
//! order (deterministic), then applied in the prediction with gravity (`v += h·(g + w·F)`).
//!
//! The model is the flat-plate one common in cloth simulation. For a triangle with corners
//! `a, b, c`, at the start of the step:
//!
//! ```text
//! v    = (v_a + v_b + v_c)/3 − wind(t)      its velocity through the air (m/s)
//! A n̂  = ½ (b − a) × (c − a)                area A (m²) and unit normal n̂ (either side: the
//!                                           forces below do not change when n̂ flips)
//! q    = ½ ρ A |v|                          (kg/s; ρ: air density in kg/m³)
//! F_d  = −C_d q (v·n̂) n̂                     drag: the air pushing on the face, against the
//!                                           normal part of the motion (N)
//! F_l  = −C_l q (v·n̂) (n̂ − (v·n̂) v/|v|²)   lift: perpendicular to v, in the plane of n̂ and v,
//!                                           on the side the face deflects the air from (N)
//! ```
//!
//! `|F_d| = ½ρ C_d A |v|² cos θ` and `|F_l| = ½ρ C_l A |v|² cos θ sin θ`, with `θ` the angle
//! between `v` and `n̂`: both vanish for a triangle moving edge-on through the air, and lift also
//! for one moving face-on. `C_d` and `C_l` are dimensionless. Each corner receives a third of
//! `F_d + F_l`; a particle's force is the sum over its triangles in triangle order. A triangle
//! with no area or no velocity through the air (or whose force would not be finite) gets no
//! force, never a NaN.
//!
//! The wind is the same everywhere: a velocity keyed over time ([`wind_at`]).

use crate::cloth::ClothContext;
use crate::digest::{Digest, digest_debug};
use crate::error::{BuildError, Rule, widen};
use crate::settings::{SimSettings, WindKey};
use crate::topology::triangle_area;

/// Aerodynamics of a cloth, as a scene states it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AeroDesc {
    /// Drag coefficient (dimensionless, `≥ 0`).
    pub drag: f32,
    /// Lift coefficient (dimensionless, `≥ 0`).
    pub lift: f32,
}

/// The triangles that feel the air, and what the force accumulation needs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AeroModel {
    /// Triangles with aerodynamics, global particle indices.
    pub triangles: Vec<[u32; 3]>,
    /// `[drag, lift]` coefficients of each triangle.
    pub coefficients: Vec<[f32; 2]>,
    /// Wind keys (copied from the settings).
    pub wind: Vec<WindKey>,
    /// Air density in kg/m³.
    pub air_density: f32,
    /// Particle `i`'s triangles are `incidence[incidence_start[i]..incidence_start[i + 1]]`
    /// (indices into `triangles`, increasing); one entry per particle of the model, plus one.
    /// Empty when no triangle feels the air.
    pub incidence_start: Vec<u32>,
    /// See `incidence_start`.
    pub incidence: Vec<u32>,
}

impl Digest for AeroModel {
    fn digest<H: std::hash::Hasher>(&self, h: &mut H) {
        let AeroModel { triangles, coefficients, wind, air_density, incidence_start, incidence } = self;
        triangles.digest(h);
        coefficients.digest(h);
        digest_debug(wind, h);
        air_density.digest(h);
        incidence_start.digest(h);
        incidence.digest(h);
    }
}

impl AeroModel {
    /// The aerodynamic triangles (with their coefficients) of a model of `particles` particles,
    /// with the wind and air density of `settings`, and each particle's incident triangles.
    pub fn new(triangles: &[AeroTriangle], settings: &SimSettings, particles: usize) -> Self {
        let mut incidence_start = Vec::new();
        let mut incidence = Vec::new();
        if !triangles.is_empty() {
            incidence_start = vec![0u32; particles + 1];
            for (t, _) in triangles {
                for &p in t {
                    incidence_start[p as usize + 1] += 1;
                }
            }
            for i in 0..particles {
                incidence_start[i + 1] += incidence_start[i];
            }
            let mut fill = incidence_start.clone();
            incidence = vec![0u32; incidence_start[particles] as usize];
            for (k, (t, _)) in triangles.iter().enumerate() {
                for &p in t {
                    incidence[fill[p as usize] as usize] = k as u32;
                    fill[p as usize] += 1;
                }
            }
        }
        AeroModel {
            triangles: triangles.iter().map(|a| a.0).collect(),
            coefficients: triangles.iter().map(|a| a.1).collect(),
            wind: settings.wind.clone(),
            air_density: settings.air_density,
            incidence_start,
            incidence,
        }
    }

    /// True when no triangle feels the air.
    pub fn is_empty(&self) -> bool {
        self.triangles.is_empty()
    }

    /// The triangles of particle `i` (indices into `triangles`, increasing).
    pub fn incident(&self, i: usize) -> &[u32] {
        &self.incidence[self.incidence_start[i] as usize..self.incidence_start[i + 1] as usize]
    }
}

/// The wind velocity (m/s) at time `t` (s): linear between keys, the first key's before it, the
/// last key's after it, still air without keys. Interpolated in `f64`, rounded once.
///
/// ```
/// use weft_core::aero::wind_at;
/// use weft_core::settings::WindKey;
/// let keys = [WindKey { time: 1.0, velocity: [0.0; 3] }, WindKey { time: 3.0, velocity: [4.0, 0.0, -2.0] }];
/// assert_eq!(wind_at(&keys, 0.0), [0.0; 3]);
/// assert_eq!(wind_at(&keys, 2.0), [2.0, 0.0, -1.0]);
/// assert_eq!(wind_at(&keys, 9.0), [4.0, 0.0, -2.0]);
/// assert_eq!(wind_at(&[], 2.0), [0.0; 3]);
/// ```
pub fn wind_at(keys: &[WindKey], t: f64) -> [f32; 3] {
    let (Some(first), Some(last)) = (keys.first(), keys.last()) else { return [0.0; 3] };
    if t <= first.time as f64 {
        return first.velocity;
    }
    if t >= last.time as f64 {
        return last.velocity;
    }
    // The segment [k, k + 1] with key k the last at or before t.
    let k = keys.partition_point(|key| key.time as f64 <= t) - 1;
    let (a, b) = (&keys[k], &keys[k + 1]);
    let s = (t - a.time as f64) / (b.time as f64 - a.time as f64);
    std::array::from_fn(|i| {
        let (va, vb) = (a.velocity[i] as f64, b.velocity[i] as f64);
        (va + s * (vb - va)) as f32
    })
}

/// A triangle in the wind: its corners (global indices) and `[drag, lift]` coefficients.
pub type AeroTriangle = ([u32; 3], [f32; 2]);

/// The aerodynamic triangles of one cloth, or the rule it breaks: every triangle of the cloth
/// but those whose corners are all pinned (no force could move them).
pub(crate) fn build(ctx: &ClothContext<'_>) -> Result<Vec<AeroTriangle>, BuildError> {
    let Some(desc) = ctx.desc.aero else { return Ok(Vec::new()) };
    for (field, c) in [("drag", desc.drag), ("lift", desc.lift)] {
        if !c.is_finite() {
            return Err(ctx.error(field, None, Rule::NotFinite { value: c.to_string() }));
        }
        if c < 0.0 {
            return Err(ctx.error(field, None, Rule::Negative { value: widen(c) }));
        }
    }
    if ctx.desc.triangles.is_empty() {
        return Err(ctx.error(
            "drag",
            None,
            Rule::MissingPrerequisite { feature: "drag and lift", needs: "triangles to act on" },
        ));
    }
    let mut out = Vec::with_capacity(ctx.desc.triangles.len());
    for (k, &t) in ctx.desc.triangles.iter().enumerate() {
        let [a, b, c] = t.map(|p| ctx.desc.positions[p as usize]);
        let area = triangle_area(a, b, c);
        if area == 0.0 {
            let [a, b, c] = t;
            return Err(ctx.error(
                "triangles",
                Some(k),
                Rule::ZeroAreaTriangle { a, b, c, area: area as f32, used_for: "drag and lift" },
            ));
        }
        if t.iter().all(|&p| ctx.pinned[p as usize]) {
            continue;
        }
        out.push((t.map(|p| p + ctx.offset), [desc.drag, desc.lift]));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wind_is_held_outside_the_keys_and_linear_between() {
        let keys = [
            WindKey { time: 0.5, velocity: [1.0, 0.0, 0.0] },
            WindKey { time: 1.5, velocity: [3.0, 0.0, 0.0] },
            WindKey { time: 2.0, velocity: [3.0, 1.0, 0.0] },
        ];
        assert_eq!(wind_at(&keys, 0.5), [1.0, 0.0, 0.0]);
        assert_eq!(wind_at(&keys, 1.0), [2.0, 0.0, 0.0]);
        assert_eq!(wind_at(&keys, 1.5), [3.0, 0.0, 0.0]);
        assert_eq!(wind_at(&keys, 1.75), [3.0, 0.5, 0.0]);
        assert_eq!(wind_at(&keys, 100.0), [3.0, 1.0, 0.0]);
        assert_eq!(wind_at(&keys[..1], 7.0), [1.0, 0.0, 0.0]);
    }

    #[test]
    fn incidence_lists_each_particles_triangles_in_order() {
        let tris: Vec<AeroTriangle> = vec![([0, 1, 2], [1.0, 0.0]), ([2, 1, 3], [1.0, 0.0])];
        let m = AeroModel::new(&tris, &SimSettings::default(), 5);
        assert_eq!(m.incident(1), &[0, 1]);
        assert_eq!(m.incident(3), &[1]);
        assert!(m.incident(4).is_empty());
        assert!(AeroModel::new(&[], &SimSettings::default(), 5).incidence_start.is_empty());
    }
}
