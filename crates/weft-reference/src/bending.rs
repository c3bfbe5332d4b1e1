//! Bending: the dihedral angle between the two triangles of each interior edge, one constraint at
//! a time.
//!
//! A hinge is an edge `a–b` with a wing on each side: `c` of triangle `(a, b, c)` and `d` of
//! triangle `(b, a, d)`. With `e = x_b − x_a` and the two (unnormalised) triangle normals
//! `n₁ = e × (x_c − x_a)` and `n₂ = (x_d − x_a) × e`, the signed angle between the triangles is
//!
//! ```text
//! θ = atan2((n₁ × n₂)·ê, n₁·n₂) = atan2(−(n₁·(x_d − x_a))·|e|, n₁·n₂)      (rad)
//! ```
//!
//! `0` when the two triangles lie flat, `±π` when folded shut. The constraint keeps it at the rest
//! angle `θ₀` of the input mesh: `C = θ − θ₀`, taken the short way round, in `(−π, π]`.
//!
//! How `θ` changes when one particle moves: a wing turns the angle by
//! `1/height` per metre it moves along its triangle's normal, and the edge ends share the
//! opposite of that in proportion to where the wings stand along the edge:
//!
//! ```text
//! ∇_c θ = −|e|·n₁/|n₁|²                 ∇_d θ = −|e|·n₂/|n₂|²
//! ∇_b θ = (x_c − x_a)·ê · n₁/|n₁|² + (x_d − x_a)·ê · n₂/|n₂|²
//! ∇_a θ = −(∇_b θ + ∇_c θ + ∇_d θ)        (the four sum to zero)
//! ```
//!
//! The XPBD step is the one of every constraint:
//! `Δλ = (−C − α̃λ − γ·Σ∇ᵢθ·(xᵢ − xᵢ_prev)) / ((1 + γ)·Σwᵢ|∇ᵢθ|² + α̃)`, `xᵢ += wᵢ·∇ᵢθ·Δλ`,
//! with `α̃ = α/h²` (α in rad²/(N·m)) and `γ = α·β/h` (β in N·m·s/rad²). `λ` is in kg·m²/rad.

use glam::Vec3;
use weft_core::Model;
use weft_core::kinds::bending::{BendingConstraint as Packed, IMMOVABLE, MAX_SPAN, MIN_EDGE, MIN_HEIGHT};
use weft_core::settings::TimeStep;

use crate::distance::Projection;
use crate::particle::Particle;

/// One hinge and its multiplier for this time step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BendingConstraint {
    /// The edge's first particle.
    pub(crate) a: usize,
    /// The edge's second particle.
    pub(crate) b: usize,
    /// The wing of triangle `(a, b, c)`.
    pub(crate) c: usize,
    /// The wing of triangle `(b, a, d)`.
    pub(crate) d: usize,
    /// Rest angle `θ₀` in rad.
    pub(crate) rest_angle: f32,
    /// Compliance `α` in rad²/(N·m) (`0` = rigid).
    pub(crate) compliance: f32,
    /// Damping `β` in N·m·s/rad² (`0` = none).
    pub(crate) damping: f32,
    /// Lagrange multiplier `λ` in kg·m²/rad, accumulated over the iterations of the time step.
    pub(crate) lambda: f32,
}

/// The geometry of a hinge as it stands now.
struct Hinge {
    /// The dihedral angle `θ` in rad.
    angle: f32,
    /// `∇θ` at `a, b, c, d`, in rad/m.
    gradients: [Vec3; 4],
}

impl BendingConstraint {
    /// The angle and its gradients, or `None` when the hinge has no usable gradient: an edge
    /// not longer than [`MIN_EDGE`] or longer than [`MAX_SPAN`], a wing not higher than
    /// [`MIN_HEIGHT`] above the edge line (a triangle collapsed onto the edge) or higher than
    /// [`MAX_SPAN`], or anything not finite. (The heights `|n|/|e|` are compared squared, as
    /// `|n|² > MIN_HEIGHT²·|e|²`, so that no square root or division comes first.)
    fn hinge(&self, particles: &[Particle]) -> Option<Hinge> {
        let [xa, xb, xc, xd] = [self.a, self.b, self.c, self.d].map(|i| particles[i].position);
        let e = xb - xa;
        let n1 = e.cross(xc - xa);
        let n2 = (xd - xa).cross(e);
        let e2 = e.length_squared();
        let edge_ok = e2 > MIN_EDGE * MIN_EDGE && e2 <= MAX_SPAN * MAX_SPAN;
        let wing_ok = |n: Vec3| {
            n.length_squared() > MIN_HEIGHT * MIN_HEIGHT * e2
                && n.length_squared() <= MAX_SPAN * MAX_SPAN * e2
        };
        if !(edge_ok && wing_ok(n1) && wing_ok(n2)) {
            return None;
        }
        let edge = e2.sqrt();
        let angle = f32::atan2(-n1.dot(xd - xa) * edge, n1.dot(n2));
        let unit = e / edge;
        let (m1, m2) = (n1 / n1.length_squared(), n2 / n2.length_squared());
        let gc = -edge * m1;
        let gd = -edge * m2;
        let gb = (xc - xa).dot(unit) * m1 + (xd - xa).dot(unit) * m2;
        let ga = -(gb + gc + gd);
        Some(Hinge { angle, gradients: [ga, gb, gc, gd] })
    }

    /// `C = θ − θ₀` in rad, the short way round: in `(−π, π]`. `None` for a degenerate hinge.
    #[cfg(test)]
    fn value(&self, particles: &[Particle]) -> Option<f32> {
        self.hinge(particles).map(|h| wrap(h.angle - self.rest_angle))
    }

    /// Projects the constraint once: computes `Δλ` (kg·m²/rad), adds it to `λ` and moves the
    /// four particles along their gradients in proportion to their inverse masses.
    pub(crate) fn project(&mut self, particles: &mut [Particle], step: &TimeStep) -> Projection {
        let Some(hinge) = self.hinge(particles) else { return Projection::Degenerate };
        let c = wrap(hinge.angle - self.rest_angle);
        let ids = [self.a, self.b, self.c, self.d];
        let alpha_tilde = self.compliance * step.inv_h2;
        let gamma = self.compliance * self.damping * step.inv_h;

        // Σ wᵢ|∇ᵢθ|²: how far the angle turns per unit of Δλ (rad²/(kg·m²)).
        let mut weighted = 0.0;
        // Σ ∇ᵢθ·(xᵢ − xᵢ_prev): how much the angle has turned over this step so far (rad).
        let mut turned = 0.0;
        // The most the corners could weigh: max wᵢ · Σ|∇ᵢθ|².
        let (mut heaviest, mut weight) = (0.0f32, 0.0);
        for (g, &i) in hinge.gradients.iter().zip(&ids) {
            let p = &particles[i];
            weighted += p.inv_mass * g.length_squared();
            turned += g.dot(p.position - p.prev_position);
            heaviest = heaviest.max(p.inv_mass);
            weight += g.length_squared();
        }
        // Free corners that cannot turn the hinge (`weft_core::kinds::bending`'s module docs).
        if weighted.partial_cmp(&(IMMOVABLE * heaviest * weight)) != Some(std::cmp::Ordering::Greater) {
            return Projection::Degenerate;
        }
        let numerator = -c - alpha_tilde * self.lambda - gamma * turned;
        let denominator = (1.0 + gamma) * weighted + alpha_tilde;
        if !(denominator > 0.0 && denominator.is_finite()) {
            return Projection::Degenerate;
        }
        let delta_lambda = numerator / denominator;
        if !delta_lambda.is_finite() {
            return Projection::Degenerate;
        }

        self.lambda += delta_lambda;
        for (g, &i) in hinge.gradients.iter().zip(&ids) {
            let w = particles[i].inv_mass;
            particles[i].shift(w * delta_lambda * *g);
        }
        Projection::Applied(delta_lambda)
    }
}

/// An angle difference in `(−2π, 2π)` taken into `(−π, π]` (rad).
fn wrap(angle: f32) -> f32 {
    use std::f32::consts::{PI, TAU};
    if angle > PI {
        angle - TAU
    } else if angle <= -PI {
        angle + TAU
    } else {
        angle
    }
}

/// The model's bending constraints, in its solve order.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Set {
    constraints: Vec<BendingConstraint>,
}

impl Set {
    /// Copies the model's bending constraints in solve order
    /// ([`BendingBatches::solve_order`](weft_core::kinds::bending::BendingBatches::solve_order)), each
    /// with its current `λ`.
    pub(crate) fn from_model(model: &Model) -> Self {
        let constraints = model
            .sets()
            .bending
            .solve_order()
            .map(|(packed, lambda)| {
                let c = Packed::from_packed(&packed);
                let [a, b, c_, d] = c.particles.map(|p| p as usize);
                BendingConstraint {
                    a,
                    b,
                    c: c_,
                    d,
                    rest_angle: c.rest_angle,
                    compliance: c.compliance,
                    damping: c.damping,
                    lambda,
                }
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

    /// Projects every constraint once, in order; returns how many were skipped as degenerate.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn particle(x: [f32; 3], inv_mass: f32) -> Particle {
        Particle::at_rest(Vec3::from(x), inv_mass)
    }

    fn hinge(rest_angle: f32, compliance: f32) -> BendingConstraint {
        BendingConstraint { a: 0, b: 1, c: 2, d: 3, rest_angle, compliance, damping: 0.0, lambda: 0.0 }
    }

    /// A flat hinge with the wing d free (1 kg) and turned up by a right angle; everything else
    /// pinned. `|∇_d θ| = 1/height = 1 rad/m`, so a rigid projection gives `Δλ = −C = −π/2`.
    #[test]
    fn rigid_projection_of_a_right_angle() {
        let mut p = [
            particle([0.0, 0.0, 0.0], 0.0),
            particle([1.0, 0.0, 0.0], 0.0),
            particle([0.5, 1.0, 0.0], 0.0),
            particle([0.5, 0.0, -1.0], 1.0),
        ];
        let mut c = hinge(0.0, 0.0);
        let half_pi = std::f32::consts::FRAC_PI_2;
        assert!((c.value(&p).unwrap() - half_pi).abs() < 1e-6);
        let step = TimeStep::new(0.1, 0.0);
        let Projection::Applied(dl) = c.project(&mut p, &step) else { panic!("degenerate") };
        assert!((dl + half_pi).abs() < 1e-6, "{dl}");
        // The wing moves along its normal, straight, not round the edge: C shrinks but is not 0.
        assert!(c.value(&p).unwrap().abs() < half_pi * 0.5);
        for _ in 0..20 {
            c.project(&mut p, &step);
        }
        assert!(c.value(&p).unwrap().abs() < 1e-5, "converges on the flat rest angle");
        assert_eq!(p[0].position, Vec3::ZERO, "pins stay");
    }

    #[test]
    fn collapsed_wing_is_skipped() {
        let mut p = [
            particle([0.0, 0.0, 0.0], 1.0),
            particle([1.0, 0.0, 0.0], 1.0),
            particle([0.5, 0.0, 0.0], 1.0),
            particle([0.5, -1.0, 0.0], 1.0),
        ];
        let before = p;
        let mut c = hinge(0.0, 0.0);
        assert_eq!(c.project(&mut p, &TimeStep::new(0.1, 0.0)), Projection::Degenerate);
        assert_eq!(p, before);
        assert_eq!(c.value(&p), None);
    }

    #[test]
    fn wrap_takes_the_short_way() {
        use std::f32::consts::PI;
        assert_eq!(wrap(0.5), 0.5);
        assert!((wrap(2.0 * PI - 0.25) + 0.25).abs() < 1e-6);
        assert!((wrap(-2.0 * PI + 0.25) - 0.25).abs() < 1e-6);
        assert!(wrap(-PI) > 0.0);
    }
}
