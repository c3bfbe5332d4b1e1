//! Seams: two particles sewn together, pulled onto each other, one seam at a time.
//!
//! ```text
//! C = |x_b − x_a|   (m; rest length 0)
//! Δλ = (−C − α̃·λ) / (w_a + w_b + α̃),   α̃ = α/h²
//! λ += Δλ;   x_a −= w_a·Δλ·n,   x_b += w_b·Δλ·n,   n = (x_b − x_a)/|x_b − x_a|
//! ```
//!
//! A seam closer than `MIN_LENGTH` is closed (no direction, nothing to do); one farther apart
//! than `MAX_LENGTH`, or at a non-finite distance, is skipped and counted as degenerate.

use weft_core::Model;
use weft_core::kinds::distance::{MAX_LENGTH, MIN_LENGTH};
use weft_core::kinds::seam::COMPLIANCE;
use weft_core::settings::TimeStep;

use crate::particle::Particle;

/// One seam with its multiplier for this time step.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Seam {
    /// The two particles.
    a: usize,
    b: usize,
    /// Compliance `α` in m/N.
    compliance: f32,
    /// `λ` in kg·m.
    lambda: f32,
}

/// The model's seams, in its solve order.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Set {
    seams: Vec<Seam>,
}

impl Set {
    /// Copies the model's seams in solve order, each with its `λ`.
    pub(crate) fn from_model(model: &Model) -> Self {
        let seams = model
            .sets()
            .seams
            .solve_order()
            .map(|(c, lambda)| Seam {
                a: c.particles[0] as usize,
                b: c.particles[1] as usize,
                compliance: c.params[COMPLIANCE],
                lambda,
            })
            .collect();
        Set { seams }
    }

    /// Sets every `λ` to 0.
    pub(crate) fn reset(&mut self) {
        for s in &mut self.seams {
            s.lambda = 0.0;
        }
    }

    /// Projects every seam once, in order; returns how many were skipped as degenerate.
    pub(crate) fn project_all(&mut self, particles: &mut [Particle], step: &TimeStep) -> u64 {
        let mut degenerate = 0;
        for s in &mut self.seams {
            if !s.project(particles, step) {
                degenerate += 1;
            }
        }
        degenerate
    }
}

impl Seam {
    /// Projects the seam once. Returns false (and moves nothing) when it is degenerate.
    fn project(&mut self, particles: &mut [Particle], step: &TimeStep) -> bool {
        let (pa, pb) = (particles[self.a], particles[self.b]);
        let d = pb.position - pa.position;
        let length = d.length();
        let alpha_tilde = self.compliance * step.inv_h2;
        let denominator = pa.inv_mass + pb.inv_mass + alpha_tilde;
        // Too far apart, not finite (NaN compares false) or no mass to move: degenerate.
        let usable = length <= MAX_LENGTH && denominator > 0.0;
        if !usable {
            return false;
        }
        if length <= MIN_LENGTH {
            return true; // closed: nothing to pull
        }
        let delta_lambda = (-length - alpha_tilde * self.lambda) / denominator;
        self.lambda += delta_lambda;
        let n = d / length;
        particles[self.a].shift(-(pa.inv_mass * delta_lambda * n));
        particles[self.b].shift(pb.inv_mass * delta_lambda * n);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn a_rigid_seam_closes_and_a_soft_one_closes_part_of_the_way() {
        let step = TimeStep::new(0.1, 0.0);
        let at = |x: f32| Particle::at_rest(Vec3::new(x, 0.0, 0.0), 1.0);
        let mut particles = vec![at(0.0), at(0.5)];
        let mut rigid = Set { seams: vec![Seam { a: 0, b: 1, compliance: 0.0, lambda: 0.0 }] };
        assert_eq!(rigid.project_all(&mut particles, &step), 0);
        assert!(
            (particles[0].position.x - 0.25).abs() < 1e-6 && (particles[1].position.x - 0.25).abs() < 1e-6
        );
        // α̃ = 0.02/0.1² = 2 against w_a + w_b = 2: half of the 0.4 m gap closes.
        let mut particles = vec![at(0.0), at(0.4)];
        let mut soft = Set { seams: vec![Seam { a: 0, b: 1, compliance: 0.02, lambda: 0.0 }] };
        soft.project_all(&mut particles, &step);
        assert!((particles[1].position.x - particles[0].position.x - 0.2).abs() < 1e-6);
        assert!((soft.seams[0].lambda + 0.1).abs() < 1e-7);
    }
}
