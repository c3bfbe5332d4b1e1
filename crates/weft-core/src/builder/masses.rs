//! A cloth's masses: the same mass for every particle, or an areal density lumped from the
//! triangles onto their corners; pinned particles get inverse mass 0.

use crate::cloth::{ClothDesc, ClothErrors, MassSpec};
use crate::error::{BuildError, Rule, widen};
use crate::topology::triangle_area;

/// The inverse mass (1/kg) of each particle of `desc`; `pinned` says which are pinned (0).
pub(super) fn inverse_masses(
    desc: &ClothDesc,
    pinned: &[bool],
    e: ClothErrors<'_>,
) -> Result<Vec<f32>, BuildError> {
    let n = desc.positions.len();
    let mut inv_mass = vec![0.0f32; n];
    match desc.mass {
        MassSpec::ParticleMass(m) => {
            let field = "particle_mass";
            if !m.is_finite() {
                return Err(e.at(field, None, Rule::NotFinite { value: m.to_string() }));
            }
            if m <= 0.0 {
                return Err(e.at(field, None, Rule::NotPositive { value: widen(m) }));
            }
            inv_mass.fill(1.0 / m);
        }
        MassSpec::Density(rho) => {
            let field = "density";
            if !rho.is_finite() {
                return Err(e.at(field, None, Rule::NotFinite { value: rho.to_string() }));
            }
            if rho <= 0.0 {
                return Err(e.at(field, None, Rule::NotPositive { value: widen(rho) }));
            }
            if desc.triangles.is_empty() {
                return Err(e.at(field, None, Rule::DensityWithoutTriangles));
            }
            let mut mass = vec![0.0f64; n];
            let area: Vec<f64> = desc
                .triangles
                .iter()
                .map(|t| {
                    let [a, b, c] = t.map(|p| desc.positions[p as usize]);
                    triangle_area(a, b, c)
                })
                .collect();
            for (t, &area) in desc.triangles.iter().zip(&area) {
                let share = area * rho as f64 / 3.0;
                for &p in t {
                    mass[p as usize] += share;
                }
            }
            for (i, &m) in mass.iter().enumerate() {
                let w = (1.0 / m) as f32;
                let has_mass = m > 0.0 && w.is_finite() && w > 0.0;
                if !pinned[i] && !has_mass {
                    // In a triangle, but only zero-area ones: name the first such triangle.
                    let zero = desc.triangles.iter().enumerate().find(|(_, t)| t.contains(&(i as u32)));
                    return Err(match zero {
                        Some((k, &[a, b, c])) => e.at(
                            "triangles",
                            Some(k),
                            Rule::ZeroAreaTriangle {
                                a,
                                b,
                                c,
                                area: area[k] as f32,
                                used_for: "lumping the density into masses",
                            },
                        ),
                        None => e.at(field, None, Rule::MasslessParticle { particle: i as u32 }),
                    });
                }
                inv_mass[i] = w;
            }
        }
    }
    for (w, &p) in inv_mass.iter_mut().zip(pinned) {
        if p {
            *w = 0.0;
        }
    }
    Ok(inv_mass)
}
