//! Tethers: a unilateral distance bound from each free particle to its nearest pin, one at a time.
//!
//! A tether lets its particle move freely within `L` of its pin (`L`: the tether scale times the
//! shortest path from the pin along the cloth's rest lengths). Beyond it, it pulls the particle
//! back like a rope, never pushes:
//!
//! ```text
//! C = |x − x_pin| − L   (m), only when C > 0
//! Δλ = (−C − α̃·λ) / (w + w_pin + α̃),   α̃ = α/h²
//! λ_new = min(λ + Δλ, 0)                (λ ≤ 0 always: a pull; kg·m)
//! x += w · (λ_new − λ) · n,   n = (x − x_pin)/|x − x_pin|
//! ```

use glam::Vec3;
use weft_core::Model;
use weft_core::kinds::distance::{MAX_LENGTH, MIN_LENGTH};
use weft_core::kinds::tether::{COMPLIANCE, MAX_LENGTH as BOUND};
use weft_core::settings::TimeStep;

use crate::particle::Particle;

/// One tether with its multiplier for this time step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Tether {
    /// The free particle.
    pub(crate) particle: usize,
    /// Its pin.
    pub(crate) pin: usize,
    /// The longest allowed distance `L` in m.
    pub(crate) max_length: f32,
    /// Compliance `α` in m/N.
    pub(crate) compliance: f32,
    /// `λ` in kg·m (`≤ 0`).
    pub(crate) lambda: f32,
}

/// The model's tethers, in its solve order.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Set {
    tethers: Vec<Tether>,
}

impl Set {
    /// Copies the model's tethers in solve order.
    pub(crate) fn from_model(model: &Model) -> Self {
        let tethers = model
            .sets()
            .tethers
            .solve_order()
            .map(|(c, lambda)| Tether {
                particle: c.particles[0] as usize,
                pin: c.particles[1] as usize,
                max_length: c.params[BOUND],
                compliance: c.params[COMPLIANCE],
                lambda,
            })
            .collect();
        Set { tethers }
    }

    /// Sets every `λ` to 0.
    pub(crate) fn reset(&mut self) {
        for t in &mut self.tethers {
            t.lambda = 0.0;
        }
    }

    /// Projects every tether once, in order; returns how many were skipped as degenerate.
    pub(crate) fn project_all(&mut self, particles: &mut [Particle], step: &TimeStep) -> u64 {
        let mut degenerate = 0;
        for t in &mut self.tethers {
            if !t.project(particles, step) {
                degenerate += 1;
            }
        }
        degenerate
    }

    /// How far each particle is beyond its bound: `(max, sum)` in m.
    #[cfg(test)]
    fn excess(&self, particles: &[Particle]) -> (f32, f64) {
        let mut out = (0.0f32, 0.0f64);
        for t in &self.tethers {
            let e = ((particles[t.particle].position - particles[t.pin].position).length() - t.max_length)
                .max(0.0);
            out = (out.0.max(e), out.1 + e as f64);
        }
        out
    }
}

impl Tether {
    /// Projects the tether once. Returns false (and moves nothing) when the distance to the pin
    /// is below [`MIN_LENGTH`], above [`MAX_LENGTH`] or not finite: no usable direction.
    fn project(&mut self, particles: &mut [Particle], step: &TimeStep) -> bool {
        let p = particles[self.particle];
        let q = particles[self.pin];
        let d: Vec3 = p.position - q.position;
        let length = d.length();
        if !(length > MIN_LENGTH && length <= MAX_LENGTH) {
            return false;
        }
        let alpha_tilde = self.compliance * step.inv_h2;
        let denominator = p.inv_mass + q.inv_mass + alpha_tilde;
        if denominator.is_nan() || denominator <= 0.0 {
            return false;
        }
        let c = length - self.max_length;
        if c <= 0.0 {
            return true; // slack: within its bound, the tether does nothing
        }
        let delta_lambda = (-c - alpha_tilde * self.lambda) / denominator;
        let new_lambda = (self.lambda + delta_lambda).min(0.0);
        let applied = new_lambda - self.lambda;
        self.lambda = new_lambda;
        let n = d / length;
        particles[self.particle].shift(p.inv_mass * applied * n);
        particles[self.pin].shift(-(q.inv_mass * applied * n));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn particle(x: f32, inv_mass: f32) -> Particle {
        Particle::at_rest(Vec3::new(x, 0.0, 0.0), inv_mass)
    }

    #[test]
    fn pulls_back_to_the_bound_and_leaves_slack_alone() {
        let step = TimeStep::new(0.1, 0.0);
        let mut particles = [particle(0.0, 0.0), particle(3.0, 1.0)];
        let tether = Tether { particle: 1, pin: 0, max_length: 2.0, compliance: 0.0, lambda: 0.0 };
        let mut set = Set { tethers: vec![tether] };
        assert_eq!(set.project_all(&mut particles, &step), 0);
        assert_eq!(particles[1].position.x, 2.0);
        assert_eq!(set.tethers[0].lambda, -1.0);
        assert_eq!(set.excess(&particles), (0.0, 0.0));
        // Slack: inside its bound nothing moves and λ stays.
        particles[1].position.x = 1.0;
        set.project_all(&mut particles, &step);
        assert_eq!((particles[1].position.x, set.tethers[0].lambda), (1.0, -1.0));
    }
}
