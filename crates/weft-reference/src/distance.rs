//! The distance constraint and its XPBD projection, one constraint at a time.
//!
//! `C = |x_b − x_a| − L` (m), with gradient `∇_b C = n`, `∇_a C = −n`, `n = (x_b − x_a)/|x_b − x_a|`.
//! Both gradients have length 1, so the generalised inverse mass `Σ wᵢ|∇Cᵢ|²` is just `w_a + w_b`.

use glam::Vec3;
use weft_core::Model;
use weft_core::kinds::distance::{MAX_LENGTH, MIN_LENGTH};
use weft_core::settings::TimeStep;

use crate::particle::Particle;

/// The model's distance constraints (stretch, shear), in its solve order (colour by colour, then
/// the serial list), each with its `λ`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Set {
    pub(crate) constraints: Vec<DistanceConstraint>,
}

impl Set {
    /// Copies the model's distance constraints in solve order, each with its current `λ`.
    pub(crate) fn from_model(model: &Model) -> Self {
        let constraints = model
            .sets()
            .distance
            .solve_order()
            .map(|(packed, lambda)| {
                (weft_core::kinds::distance::DistanceConstraint::from_packed(&packed), lambda)
            })
            .map(|(c, lambda)| DistanceConstraint {
                a: c.particles[0] as usize,
                b: c.particles[1] as usize,
                rest_length: c.rest_length,
                compliance: c.compliance.get(),
                damping: c.damping,
                lambda,
            })
            .collect();
        Set { constraints }
    }

    /// Sets every `λ` to 0.
    pub(crate) fn reset(&mut self) {
        for c in &mut self.constraints {
            c.lambda = 0.0;
        }
    }

    /// One Gauss-Seidel sweep over the constraints, in solve order; each sees the positions the
    /// ones before it left. Returns how many were skipped as degenerate.
    pub(crate) fn project_all(&mut self, particles: &mut [Particle], step: &TimeStep) -> u64 {
        let mut degenerate = 0;
        for c in &mut self.constraints {
            if c.project(particles, step) == Projection::Degenerate {
                degenerate += 1;
            }
        }
        degenerate
    }
}

/// A distance constraint between particles `a` and `b`, with its multiplier for this time step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct DistanceConstraint {
    /// First particle (index into the solver's particles).
    pub(crate) a: usize,
    /// Second particle (index into the solver's particles).
    pub(crate) b: usize,
    /// Rest length `L` in m.
    pub(crate) rest_length: f32,
    /// Compliance `α` in m/N (`0` = rigid).
    pub(crate) compliance: f32,
    /// Constraint damping `β` in N·s/m (`0` = none).
    pub(crate) damping: f32,
    /// Lagrange multiplier `λ` in kg·m, accumulated over the iterations of the current time step.
    pub(crate) lambda: f32,
}

/// What one projection did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Projection {
    /// The particles moved; `λ` grew by this `Δλ` (kg·m).
    Applied(f32),
    /// Nothing moved and `λ` is unchanged (`Δλ = 0`): the particles are closer than
    /// [`MIN_LENGTH`], so the direction `n` is undefined, or farther apart than [`MAX_LENGTH`]
    /// (or at a non-finite distance), where a correction could overflow; or the correction
    /// `(w_a + w_b)·|Δλ|` would be longer than [`MAX_LENGTH`] or not finite (extreme damping
    /// times an extreme relative velocity); or, impossible in a valid model, the denominator is
    /// not positive.
    Degenerate,
}

impl DistanceConstraint {
    /// The constraint value `C = |x_b − x_a| − L` in m, for the particles as they are now.
    pub(crate) fn value(&self, particles: &[Particle]) -> f32 {
        (particles[self.b].position - particles[self.a].position).length() - self.rest_length
    }

    /// Projects the constraint once: computes `Δλ` (kg·m), adds it to `λ` and moves both
    /// particles along `n` in proportion to their inverse masses.
    ///
    /// ```text
    /// α̃ = α/h²   γ = α·β/h
    /// Δλ = (−C − α̃·λ − γ·n·((x_b − x_b_prev) − (x_a − x_a_prev))) / ((1 + γ)·(w_a + w_b) + α̃)
    /// x_a −= w_a·Δλ·n     x_b += w_b·Δλ·n
    /// ```
    ///
    /// `step` supplies `1/h²` (1/s²) and `1/h` (1/s), rounded once from `f64`.
    pub(crate) fn project(&mut self, particles: &mut [Particle], step: &TimeStep) -> Projection {
        let pa = particles[self.a];
        let pb = particles[self.b];

        let d: Vec3 = pb.position - pa.position;
        let length = d.length();
        // Written as a range that a NaN length falls outside of too.
        let projectable = length > MIN_LENGTH && length <= MAX_LENGTH;
        if !projectable {
            return Projection::Degenerate;
        }
        let n = d / length;
        let c = length - self.rest_length;

        // α̃ (m/kg) turns λ (kg·m) into metres; γ (dimensionless) scales the damping.
        let alpha_tilde = self.compliance * step.inv_h2;
        let gamma = self.compliance * self.damping * step.inv_h;

        // The ends' relative displacement over this step (m); along n it is the change of C.
        let relative_motion = (pb.position - pb.prev_position) - (pa.position - pa.prev_position);
        let numerator = -c - alpha_tilde * self.lambda - gamma * n.dot(relative_motion);
        let denominator = (1.0 + gamma) * (pa.inv_mass + pb.inv_mass) + alpha_tilde;
        if denominator.is_nan() || denominator <= 0.0 {
            return Projection::Degenerate;
        }
        let delta_lambda = numerator / denominator;
        let correction = ((pa.inv_mass + pb.inv_mass) * delta_lambda).abs();
        if correction.is_nan() || correction > MAX_LENGTH {
            return Projection::Degenerate;
        }

        self.lambda += delta_lambda;
        particles[self.a].shift(-(pa.inv_mass * delta_lambda * n));
        particles[self.b].shift(pb.inv_mass * delta_lambda * n);
        Projection::Applied(delta_lambda)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn particle(x: f32, inv_mass: f32) -> Particle {
        Particle::at_rest(Vec3::new(x, 0.0, 0.0), inv_mass)
    }

    fn seed_constraint(compliance: f32) -> DistanceConstraint {
        DistanceConstraint { a: 0, b: 1, rest_length: 1.0, compliance, damping: 0.0, lambda: 0.0 }
    }

    /// The worked example of docs/physics.md, on the projection alone (h = 0.1 s).
    #[test]
    fn seed_projection() {
        let step = TimeStep::new(0.1, 0.0);

        let mut particles = [particle(0.0, 0.0), particle(2.0, 1.0)];
        let mut rigid = seed_constraint(0.0);
        assert_eq!(rigid.project(&mut particles, &step), Projection::Applied(-1.0));
        assert_eq!(particles[1].position, Vec3::new(1.0, 0.0, 0.0));
        assert_eq!(particles[0].position, Vec3::ZERO);

        let mut particles = [particle(0.0, 0.0), particle(2.0, 1.0)];
        let mut soft = seed_constraint(0.01);
        assert_eq!(soft.project(&mut particles, &step), Projection::Applied(-0.5));
        assert_eq!(particles[1].position.x, 1.5);
        assert_eq!(soft.value(&particles), 0.5);
        // Second iteration: −C − α̃λ = −0.5 − 1·(−0.5) = 0.
        assert_eq!(soft.project(&mut particles, &step), Projection::Applied(0.0));
        assert_eq!(particles[1].position.x, 1.5);
        assert_eq!(soft.lambda, -0.5);
    }

    #[test]
    fn coincident_particles_are_skipped() {
        let step = TimeStep::new(0.1, 0.0);
        let mut particles = [particle(0.25, 1.0), particle(0.25, 1.0)];
        let before = particles;
        let mut c = seed_constraint(0.0);
        assert_eq!(c.project(&mut particles, &step), Projection::Degenerate);
        assert_eq!(particles, before);
        assert_eq!(c.lambda, 0.0);
    }

    #[test]
    fn far_or_non_finite_particles_are_skipped() {
        let step = TimeStep::new(0.1, 0.0);
        for far in [2e9, f32::MAX, f32::INFINITY] {
            let mut particles = [particle(-far, 1.0), particle(far, 1.0)];
            let before = particles;
            let mut c = seed_constraint(0.0);
            assert_eq!(c.project(&mut particles, &step), Projection::Degenerate, "{far}");
            assert_eq!(particles, before);
        }
        // Exactly MAX_LENGTH apart is still projected.
        let mut particles = [particle(0.0, 1.0), particle(MAX_LENGTH, 1.0)];
        let mut c = DistanceConstraint { rest_length: MAX_LENGTH, ..seed_constraint(0.0) };
        assert_eq!(c.project(&mut particles, &step), Projection::Applied(0.0));
    }

    /// Damping opposes the ends' relative motion along `n`: with the ends already at rest
    /// length but separating, `C = 0` and the damping term alone gives `Δλ < 0` (pulls together).
    #[test]
    fn damping_opposes_separation() {
        let step = TimeStep::new(0.1, 0.0);
        let mut particles = [particle(0.0, 1.0), particle(1.0, 1.0)];
        particles[1].prev_position.x = 0.9; // b moved 0.1 m away from a this step
        let mut c = DistanceConstraint {
            compliance: 0.01, // α̃ = 1
            damping: 10.0,    // γ = 0.01·10/0.1 = 1
            ..seed_constraint(0.0)
        };
        // Δλ = (0 − 0 − 1·0.1) / (2·2 + 1) = −0.02
        let Projection::Applied(delta_lambda) = c.project(&mut particles, &step) else {
            panic!("not degenerate");
        };
        assert!((delta_lambda - -0.02).abs() < 1e-7, "{delta_lambda}");
        assert!(particles[1].position.x < 1.0 && particles[0].position.x > 0.0);
    }
}
