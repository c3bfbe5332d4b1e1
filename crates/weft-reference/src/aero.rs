//! Aerodynamics: drag and lift on each triangle from its velocity relative to the wind, summed
//! onto its corners.
//!
//! For a triangle of area `A` (m²) and unit normal `n` moving at `v` (m/s) through the air (the
//! mean of its corners' velocities minus the wind), in air of density `ρ` (kg/m³):
//!
//! ```text
//! drag = −½ρ·C_d·A·|v|·(v·n)·n                          (N), along the normal
//! lift = −½ρ·C_l·A·|v|·(v·n)·(n − (v·n)·v/|v|²)          (N), across v
//! ```
//!
//! Each corner gets a third of their sum. No area or no relative velocity: no force.

use glam::Vec3;
use weft_core::Model;
use weft_core::aero::wind_at;
use weft_core::settings::WindKey;

use crate::particle::Particle;

/// One triangle in the wind.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sail {
    corners: [usize; 3],
    drag: f32,
    lift: f32,
}

/// The model's triangles in the wind.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Aero {
    sails: Vec<Sail>,
    wind: Vec<WindKey>,
    air_density: f32,
}

impl Aero {
    /// Copies the model's aerodynamic triangles and wind.
    pub(crate) fn from_model(model: &Model) -> Self {
        let aero = model.aero();
        let sails = aero
            .triangles
            .iter()
            .zip(&aero.coefficients)
            .map(|(t, &[drag, lift])| Sail { corners: t.map(|p| p as usize), drag, lift })
            .collect();
        Aero { sails, wind: aero.wind.clone(), air_density: aero.air_density }
    }

    /// True when no triangle feels the air.
    pub(crate) fn is_empty(&self) -> bool {
        self.sails.is_empty()
    }

    /// The aerodynamic force on every particle (N) at time `time` (s). Pinned particles get none.
    pub(crate) fn forces(&self, particles: &[Particle], time: f64) -> Vec<Vec3> {
        let wind = Vec3::from_array(wind_at(&self.wind, time));
        let mut forces = vec![Vec3::ZERO; particles.len()];
        for sail in &self.sails {
            let [a, b, c] = sail.corners.map(|i| particles[i]);
            let v = (a.velocity + b.velocity + c.velocity) / 3.0 - wind;
            let area_vector = (b.position - a.position).cross(c.position - a.position); // 2A·n
            let (double_area, speed) = (area_vector.length(), v.length());
            let usable = double_area > 0.0 && double_area.is_finite() && speed > 0.0 && speed.is_finite();
            if !usable {
                continue;
            }
            let n = area_vector / double_area;
            let area = double_area / 2.0;
            let v_n = v.dot(n);
            let pressure = -0.5 * self.air_density * area * speed * v_n; // −½ρA|v|(v·n), in N
            let drag = sail.drag * pressure * n;
            let lift = sail.lift * pressure * (n - v_n / (speed * speed) * v);
            let force = drag + lift;
            if !force.is_finite() {
                continue;
            }
            for (i, p) in sail.corners.iter().zip([a, b, c]) {
                if p.is_free() {
                    forces[*i] += force / 3.0;
                }
            }
        }
        forces
    }
}
