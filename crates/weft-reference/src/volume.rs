//! Volume: one global constraint per closed cloth, `C = V − p·V₀`.
//!
//! The enclosed volume of a closed, outward-oriented triangle surface is, by the divergence
//! theorem, a sum of signed tetrahedra from any point `o` to its triangles:
//! `V = (1/6) Σ (a − o)·((b − o) × (c − o))` (m³). Moving one corner changes each of its
//! triangles' tetrahedra by a third of the triangle's area vector `N = ½ (b − a) × (c − a)`, so
//! `∇ᵢV = (1/3) Σ_{t ∋ i} N_t = (1/6) Σ_{t ∋ i} (b − a) × (c − a)` (m²).
//!
//! The projection is the plain XPBD one, with `α` in m⁵/N and `λ` in kg/m:
//!
//! ```text
//! Δλ = (−C − α̃·λ) / (Σᵢ wᵢ·|∇ᵢV|² + α̃),   α̃ = α/h²        xᵢ += wᵢ·∇ᵢV·Δλ
//! ```
//!
//! Sums over thousands of triangles are taken in `f64` (`glam::DVec3`), as the kernels take them:
//! in `f32` the rounding of `V` alone would be ~1e-7·V, the size of the corrections near
//! convergence. A projection is skipped and counted when the denominator is not positive and
//! finite, `Δλ` is not finite, or the largest correction `max wᵢ|∇ᵢV|·|Δλ|` exceeds
//! [`MAX_LENGTH`].

use std::ops::Range;

use glam::{DVec3, Vec3};
use weft_core::Model;
use weft_core::kinds::distance::MAX_LENGTH;
use weft_core::settings::TimeStep;

use crate::particle::Particle;

/// One closed cloth's volume constraint.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Volume {
    /// The cloth's particles.
    particles: Range<usize>,
    /// Its triangles, outward oriented.
    triangles: Vec<[usize; 3]>,
    /// `p·V₀` in m³.
    target: f64,
    /// Compliance `α` in m⁵/N.
    compliance: f32,
    /// `λ` in kg/m.
    lambda: f64,
}

/// The model's volume constraints.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Set {
    volumes: Vec<Volume>,
}

impl Set {
    /// Copies the model's volume constraints.
    pub(crate) fn from_model(model: &Model) -> Self {
        let volumes = model
            .volumes()
            .iter()
            .map(|v| Volume {
                particles: v.particles.clone(),
                triangles: v.triangles.iter().map(|t| t.map(|p| p as usize)).collect(),
                target: v.target(),
                compliance: v.compliance,
                lambda: v.lambda(),
            })
            .collect();
        Set { volumes }
    }

    /// Sets every `λ` to 0.
    pub(crate) fn reset(&mut self) {
        for v in &mut self.volumes {
            v.lambda = 0.0;
        }
    }

    /// Projects every constraint once, in order; returns how many were skipped as degenerate.
    pub(crate) fn project_all(&mut self, particles: &mut [Particle], step: &TimeStep) -> u64 {
        self.volumes.iter_mut().map(|v| u64::from(!v.project(particles, step))).sum()
    }
}

fn f64s(v: Vec3) -> DVec3 {
    v.as_dvec3()
}

impl Volume {
    /// The enclosed volume in m³, from the cloth's first particle.
    fn volume(&self, particles: &[Particle]) -> f64 {
        let o = f64s(particles[self.particles.start].position);
        let mut six_v = 0.0;
        for &[a, b, c] in &self.triangles {
            let [a, b, c] = [a, b, c].map(|i| f64s(particles[i].position) - o);
            six_v += a.dot(b.cross(c));
        }
        six_v / 6.0
    }

    /// Projects once; false (nothing moves) when degenerate.
    fn project(&mut self, particles: &mut [Particle], step: &TimeStep) -> bool {
        let c = self.volume(particles) - self.target;

        // ∇ᵢV: each triangle hands (b − a) × (c − a) / 6 to each of its corners.
        let first = self.particles.start;
        let mut gradient = vec![DVec3::ZERO; self.particles.len()];
        for &[a, b, c] in &self.triangles {
            let [pa, pb, pc] = [a, b, c].map(|i| f64s(particles[i].position));
            let share = (pb - pa).cross(pc - pa) / 6.0;
            for i in [a, b, c] {
                gradient[i - first] += share;
            }
        }
        let mut weighted = 0.0; // Σ w|∇V|², m⁴/kg
        let mut reach = 0.0f64; // max w|∇V|, m²/kg
        for (k, g) in gradient.iter().enumerate() {
            let w = particles[first + k].inv_mass as f64;
            if w > 0.0 {
                weighted += w * g.length_squared();
                reach = reach.max(w * g.length());
            }
        }

        let alpha_tilde = (self.compliance * step.inv_h2) as f64;
        let denominator = weighted + alpha_tilde;
        let delta_lambda = (-c - alpha_tilde * self.lambda) / denominator;
        let usable = denominator > 0.0
            && denominator.is_finite()
            && delta_lambda.is_finite()
            && reach * delta_lambda.abs() <= MAX_LENGTH as f64;
        if !usable {
            return false;
        }
        self.lambda += delta_lambda;
        for (k, g) in gradient.iter().enumerate() {
            let p = &mut particles[first + k];
            if p.is_free() {
                // In f64, rounded once, as the kernels do; the correction goes to `d` in f32.
                let delta = *g * (p.inv_mass as f64 * delta_lambda);
                p.position = (f64s(p.position) + delta).as_vec3();
                p.displacement += delta.as_vec3();
            }
        }
        true
    }
}
