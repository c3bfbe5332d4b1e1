//! The reference time step: predict, reset `λ`, project constraint by constraint, derive velocities.

use glam::Vec3;
use weft_core::Model;
use weft_core::kinds::{KindId, PerKind};
use weft_core::settings::TimeStep;

use crate::particle::Particle;

/// Makes [`Twins`] from the registry of constraint kinds (`weft_core::constraint_kinds!`).
macro_rules! twins {
    (
        batched { $(
            $field:ident : $kind:ident in $module:ident [$k:literal, $p:literal]
            { $($key:ident : $ty:ident),* $(,)? }
        ),* $(,)? }
        phased { $($pfield:ident : $pid:ident = $pinfo:path),* $(,)? }
    ) => {
        /// The twin of every batched constraint kind (each kind's `Set`, in the module named
        /// as in its registry line), in registry order.
        #[derive(Debug, Clone, PartialEq)]
        struct Twins {
            $($field: crate::$module::Set,)*
        }

        impl Twins {
            /// Copies every batched set of `model`, in its solve order.
            fn from_model(model: &Model) -> Self {
                Twins { $($field: crate::$module::Set::from_model(model),)* }
            }

            /// Sets every `λ` to 0.
            fn reset(&mut self) {
                $(self.$field.reset();)*
            }

            /// One sweep over every kind, kind after kind, adding the degenerate projections of
            /// each to `degenerate`.
            fn project_all(&mut self, particles: &mut [Particle], step: &TimeStep, degenerate: &mut PerKind<u64>) {
                $(degenerate[KindId::$kind] += self.$field.project_all(particles, step);)*
            }
        }
    };
}

weft_core::constraint_kinds!(twins);

/// weft's XPBD time step, written plainly: array of structs, `glam::Vec3`, `f32`, one constraint
/// at a time in the model's solve order.
///
/// Build it from a [`Model`] with [`ReferenceSolver::from_model`], advance it with
/// [`ReferenceSolver::step`], read the state back with [`positions`](ReferenceSolver::positions),
/// [`velocities`](ReferenceSolver::velocities) and [`lambdas`](ReferenceSolver::lambdas).
/// The solver owns a copy of the state; the model is not changed.
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceSolver {
    particles: Vec<Particle>,
    /// The batched constraint kinds, each in solve order: colour by colour, then the serial list.
    kinds: Twins,
    /// `h` (s) and the factors derived from it, as `weft-core` rounds them.
    time_step: TimeStep,
    /// Solver iterations per time step.
    iterations: u32,
    /// Gravity in m/s².
    gravity: Vec3,
    /// Volume constraints.
    volumes: crate::volume::Set,
    /// Triangles in the wind.
    aero: crate::aero::Aero,
    /// Self-collision.
    self_collision: crate::self_collision::Set,
    /// Surface self-collision.
    surface: crate::surface_collision::Set,
    /// Colliders.
    colliders: crate::collider::Colliders,
    /// Triangle-mesh colliders.
    meshes: crate::mesh_collider::MeshColliders,
    /// Pins that follow a path or a collider, and the meshes they may follow.
    followers: (weft_core::follow::Followers, Vec<weft_core::mesh_collider::MeshCollider>),
    /// Simulated time in s.
    time: f64,
}

/// What one time step did, for the statistics a solver reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReferenceStepStats {
    /// Constraint projections skipped as degenerate (particles closer than
    /// [`MIN_LENGTH`](weft_core::kinds::distance::MIN_LENGTH) or farther apart than
    /// [`MAX_LENGTH`](weft_core::kinds::distance::MAX_LENGTH), say), summed over the iterations: a
    /// constraint skipped in all of 8 iterations counts 8. All kinds together.
    pub degenerate: u64,
    /// Of which each constraint kind's (self-collision: two particles closer than 1 µm).
    pub kinds: PerKind<u64>,
    /// Free particles deeper in a collider than half its thickness after the step.
    pub collider_deep: u64,
    /// Particles the swept check moved back to where their path entered a collider.
    pub collider_swept: u64,
    /// Predictions and velocities that `f32` could not hold, not taken (the particle kept its
    /// state).
    pub held: u64,
    /// Particles the surface self-collision guard moved back to the start of the step.
    pub surface_reverted: u64,
}

/// How far the distance constraints are from being satisfied: statistics of `|C|` in m.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Residual {
    /// Largest `|C| = ||x_b − x_a| − L|` in m; `0` when there are no constraints.
    pub max: f32,
    /// Mean `|C|` in m (summed in `f64`); `0` when there are no constraints.
    pub mean: f32,
}

impl ReferenceSolver {
    /// Copies the model's particles, its settings (time step, iterations, gravity) and its
    /// distance constraints in the model's solve order
    /// ([`DistanceBatches::solve_order`](weft_core::kinds::distance::DistanceBatches::solve_order):
    /// colour by colour, then the serial list), each with its current `λ`.
    pub fn from_model(model: &Model) -> Self {
        let state = model.particles();
        let vec3 = |r: &[f32; 4]| Vec3::new(r[0], r[1], r[2]);
        let particles = state
            .positions()
            .iter()
            .zip(state.prev_positions())
            .zip(state.velocities())
            .zip(state.inv_mass())
            .map(|(((x, x_prev), v), &w)| Particle {
                position: vec3(x),
                prev_position: vec3(x_prev),
                velocity: vec3(v),
                displacement: Vec3::ZERO,
                inv_mass: w,
            })
            .collect();
        let settings = model.settings();
        ReferenceSolver {
            particles,
            kinds: Twins::from_model(model),
            time_step: settings.time_step(),
            iterations: settings.iterations,
            gravity: Vec3::from_array(settings.gravity),
            volumes: crate::volume::Set::from_model(model),
            aero: crate::aero::Aero::from_model(model),
            self_collision: crate::self_collision::Set::from_model(model),
            surface: crate::surface_collision::Set::from_model(model),
            colliders: crate::collider::Colliders::from_model(model),
            meshes: crate::mesh_collider::MeshColliders::from_model(model),
            followers: (model.followers().clone(), model.mesh_colliders().to_vec()),
            time: model.time(),
        }
    }

    /// Advances the state by one XPBD time step of `h = 1/(fps·substeps)` seconds: the eight
    /// stages of `docs/physics.md` ("The time step"), written plainly one after another below —
    /// forces, predict (every later correction of a particle is added to both `x` and its
    /// displacement `d`; a position set outright sets `d = x − x_prev`), the swept check,
    /// `λ := 0` and the contacts found, the iterations (every constraint in solve order, kind
    /// after kind; self-collision contacts together, Jacobi; surface contacts one by one; then
    /// the colliders' contacts), friction, the surface guard, velocities.
    pub fn step(&mut self) -> ReferenceStepStats {
        let forces =
            if self.aero.is_empty() { None } else { Some(self.aero.forces(&self.particles, self.time)) };
        let mut stats = ReferenceStepStats { held: self.predict(forces.as_deref()), ..Default::default() };
        let end = self.time + self.time_step.h64;
        self.follow(end);
        self.colliders.begin_step(self.particles.len(), self.time, end);
        if !self.colliders.is_empty() {
            stats.collider_swept = self.colliders.sweep_all(&mut self.particles);
        }
        self.reset_lambdas();
        self.self_collision.find_contacts(&self.particles);
        if !self.surface.is_empty() {
            self.surface.find_contacts(&self.particles);
        }
        self.meshes.begin_step(&self.particles, self.time, end);
        for _ in 0..self.iterations {
            let (particles, step) = (&mut self.particles, &self.time_step);
            self.kinds.project_all(particles, step, &mut stats.kinds);
            stats.kinds[KindId::Volume] += self.volumes.project_all(particles, step);
            stats.kinds[KindId::SelfCollision] += self.self_collision.project_all(particles);
            self.surface.project_all(&mut self.particles);
            if !self.colliders.is_empty() {
                self.colliders.project_all(&mut self.particles, true);
            }
            if !self.meshes.is_empty() {
                self.meshes.project_all(&mut self.particles, true);
            }
        }
        if !self.colliders.is_empty() || !self.meshes.is_empty() {
            self.colliders.friction_all(&mut self.particles);
            self.meshes.friction_all(&mut self.particles);
            self.colliders.project_all(&mut self.particles, false);
            self.meshes.project_all(&mut self.particles, false);
        }
        if !self.surface.is_empty() {
            stats.surface_reverted = self.surface.guard(&mut self.particles);
        }
        if !self.colliders.is_empty() || !self.meshes.is_empty() {
            stats.collider_deep = (0..self.particles.len())
                .filter(|&i| {
                    let p = &self.particles[i];
                    p.is_free() && (self.colliders.is_deep(p.position) || self.meshes.is_deep(i, p.position))
                })
                .count() as u64;
        }
        stats.degenerate = stats.kinds.iter().map(|(_, &d)| d).sum();
        stats.held += self.update_velocities();
        self.time += self.time_step.h64;
        stats
    }

    /// Stage 2: explicit gravity and external forces on the velocity, then the velocity on the
    /// position (semi-implicit Euler). `x_prev` keeps the start of the step for stages 5 and 8.
    fn predict(&mut self, forces: Option<&[Vec3]>) -> u64 {
        let h = self.time_step.h;
        let mut held = 0;
        for (i, p) in self.particles.iter_mut().enumerate() {
            p.prev_position = p.position;
            p.displacement = Vec3::ZERO;
            if p.is_free() {
                let acceleration = match forces {
                    Some(f) => self.gravity + p.inv_mass * f[i],
                    None => self.gravity,
                };
                // A prediction that would overflow f32 is not made (as in the kernels).
                let velocity = p.velocity + h * acceleration;
                let displacement = h * velocity;
                let position = p.position + displacement;
                if velocity.is_finite() && position.is_finite() {
                    p.velocity = velocity;
                    p.displacement = displacement;
                    p.position = position;
                } else {
                    held += 1;
                }
            }
        }
        held
    }

    /// Pins that follow a path or a collider go where it is at time `t` (s), after the
    /// prediction (so `x_prev` keeps where they were, and `d = x − x_prev`).
    fn follow(&mut self, t: f64) {
        let (followers, meshes) = &self.followers;
        for (i, x) in followers.targets(meshes, t) {
            self.particles[i as usize].place(Vec3::from_array(x));
        }
    }

    /// Stage 4: `λ` starts every time step at 0 (no warm start across steps).
    fn reset_lambdas(&mut self) {
        self.kinds.reset();
        self.volumes.reset();
    }

    /// One Gauss-Seidel sweep (stage 5) over the distance constraints, in solve order; each sees
    /// the positions the ones before it left. Returns how many were skipped as degenerate.
    ///
    /// Public so that benchmarks can time the projections alone, as they time the kernels'; a
    /// step calls it `iterations` times between the prediction and the velocity update.
    pub fn project_distances(&mut self) -> u64 {
        self.kinds.distance.project_all(&mut self.particles, &self.time_step)
    }

    /// Stage 8: the velocity (m/s) that carries `x_prev` to the corrected `x` in one step, `d/h`,
    /// then scaled by the global velocity damping factor. Pinned particles get `v = 0`.
    ///
    /// A velocity `f32` cannot hold (infinite, or NaN from an infinite one damped by a factor of
    /// 0) is not taken: the particle keeps the velocity it had. Returns how many were held.
    fn update_velocities(&mut self) -> u64 {
        let h = self.time_step.h;
        let scale = self.time_step.velocity_scale;
        let mut held = 0;
        for p in &mut self.particles {
            let mut velocity = p.displacement / h;
            velocity *= scale;
            if velocity.is_finite() {
                p.velocity = velocity;
            } else {
                held += 1;
            }
        }
        held
    }

    /// Particle positions in m.
    pub fn positions(&self) -> Vec<[f32; 3]> {
        self.particles.iter().map(|p| p.position.to_array()).collect()
    }

    /// Particle velocities in m/s.
    pub fn velocities(&self) -> Vec<[f32; 3]> {
        self.particles.iter().map(|p| p.velocity.to_array()).collect()
    }

    /// `λ` per distance constraint in solve order, in kg·m, as the last step left it (the sum of
    /// its `Δλ` over that step's iterations); `λ/h²` is the constraint force in N. Before the
    /// first step: the model's `λ`, normally 0.
    pub fn lambdas(&self) -> Vec<f32> {
        self.kinds.distance.constraints.iter().map(|c| c.lambda).collect()
    }

    /// The time step `h` (s) and its derived factors, as taken from the model's settings.
    pub fn time_step(&self) -> TimeStep {
        self.time_step
    }

    /// Max and mean `|C|` in m over all distance constraints, for the positions now.
    pub fn residual(&self) -> Residual {
        let distance = &self.kinds.distance.constraints;
        if distance.is_empty() {
            return Residual::default();
        }
        let mut max = 0.0f32;
        let mut sum = 0.0f64;
        for c in distance {
            let error = c.value(&self.particles).abs();
            max = max.max(error);
            sum += error as f64;
        }
        Residual { max, mean: (sum / distance.len() as f64) as f32 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::builder::{ClothDesc, EdgeSet, ModelBuilder};
    use weft_core::limits::Limits;
    use weft_core::settings::SimSettings;
    use weft_core::units::{Compliance, Elasticity};

    /// 10 fps, one substep (h = 0.1 s), no gravity.
    fn settings(iterations: u32) -> SimSettings {
        SimSettings { fps: 10.0, substeps: 1, iterations, gravity: [0.0; 3], ..SimSettings::default() }
    }

    fn build(settings: SimSettings, cloth: ClothDesc) -> Model {
        let mut builder = ModelBuilder::new(settings, Limits::default()).unwrap();
        builder.add_cloth(&cloth).unwrap();
        builder.build().unwrap()
    }

    fn edges(edges: Vec<[u32; 2]>, rest: Option<Vec<f32>>, compliance: f32) -> EdgeSet {
        EdgeSet {
            edges,
            rest_lengths: rest,
            elasticity: Elasticity::Compliance(Compliance::new(compliance).unwrap()),
            ..EdgeSet::stretch()
        }
    }

    /// The seed: particle 0 pinned at 0, particle 1 (1 kg) at 2 m, rest length 1 m, h = 0.1 s.
    fn seed(compliance: f32, iterations: u32) -> ReferenceSolver {
        let model = build(
            settings(iterations),
            ClothDesc {
                name: "seed".into(),
                positions: vec![[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]],
                edge_sets: vec![edges(vec![[0, 1]], Some(vec![1.0]), compliance)],
                pins: vec![0],
                ..ClothDesc::default()
            },
        );
        ReferenceSolver::from_model(&model)
    }

    /// A 4 × 4 grid of 0.1 kg particles, 0.25 m apart, with structural edges, the two top
    /// corners pinned, Earth gravity, and some initial swirl so nothing is symmetric.
    fn hanging_grid(velocity_damping: f32) -> ReferenceSolver {
        let n = 4u32;
        let index = |i: u32, j: u32| j * n + i;
        let mut positions = Vec::new();
        let mut velocities = Vec::new();
        for j in 0..n {
            for i in 0..n {
                positions.push([i as f32 * 0.25, -(j as f32) * 0.25, 0.0]);
                velocities.push([0.3 * j as f32, 0.1 * i as f32, 0.2 - 0.1 * i as f32]);
            }
        }
        let mut pairs = Vec::new();
        for j in 0..n {
            for i in 0..n {
                if i + 1 < n {
                    pairs.push([index(i, j), index(i + 1, j)]);
                }
                if j + 1 < n {
                    pairs.push([index(i, j), index(i, j + 1)]);
                }
            }
        }
        let model = build(
            SimSettings {
                substeps: 2,
                iterations: 4,
                gravity: [0.0, -9.81, 0.0],
                velocity_damping,
                ..settings(4)
            },
            ClothDesc {
                name: "grid".into(),
                positions,
                velocities: Some(velocities),
                mass: weft_core::MassSpec::ParticleMass(0.1),
                edge_sets: vec![edges(pairs, None, 1e-4)],
                pins: vec![index(0, 0), index(n - 1, 0)],
                ..ClothDesc::default()
            },
        );
        ReferenceSolver::from_model(&model)
    }

    #[test]
    fn seed_rigid_reaches_rest_length_in_one_projection() {
        let mut solver = seed(0.0, 1);
        let stats = solver.step();
        assert_eq!(stats, ReferenceStepStats::default());
        assert_eq!(solver.lambdas(), vec![-1.0]);
        assert_eq!(solver.positions(), vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]);
        assert_eq!(solver.residual(), Residual { max: 0.0, mean: 0.0 });
        // λ/h² = −1 kg·m / 0.01 s² = −100 N: the tension that pulls 1 kg back 1 m in 0.1 s.
        assert_eq!(solver.lambdas()[0] * solver.time_step().inv_h2, -100.0);
    }

    #[test]
    fn seed_compliant_goes_half_way() {
        let mut solver = seed(0.01, 1);
        assert_eq!(0.01 * solver.time_step().inv_h2, 1.0); // α̃ = 1, denominator 1 + 1 = 2
        solver.step();
        assert_eq!(solver.lambdas(), vec![-0.5]);
        assert_eq!(solver.positions(), vec![[0.0, 0.0, 0.0], [1.5, 0.0, 0.0]]);
        assert_eq!(solver.residual(), Residual { max: 0.5, mean: 0.5 });
    }

    /// λ accumulates across the iterations of a step: the second iteration sees λ = −0.5, so
    /// −C − α̃λ = −0.5 + 0.5 = 0 and nothing moves. (Were λ reset per iteration, the second
    /// iteration would give Δλ = −0.25 and move the end to 1.25 m.)
    #[test]
    fn seed_second_iteration_changes_nothing() {
        let mut solver = seed(0.01, 2);
        solver.step();
        assert_eq!(solver.lambdas(), vec![-0.5]);
        assert_eq!(solver.positions(), vec![[0.0, 0.0, 0.0], [1.5, 0.0, 0.0]]);
    }

    /// λ is reset at the start of each step. After step 1 the end is at 1.5 m moving at −5 m/s;
    /// step 2 predicts it to 1 m (C = 0), so with λ reset Δλ = 0 and λ = 0. (Carrying λ = −0.5
    /// over would give Δλ = 0.25.)
    #[test]
    fn lambda_is_reset_every_step() {
        let mut solver = seed(0.01, 1);
        solver.step();
        assert_eq!(solver.velocities(), vec![[0.0; 3], [-5.0, 0.0, 0.0]]);
        solver.step();
        assert_eq!(solver.lambdas(), vec![0.0]);
        assert_eq!(solver.positions()[1], [1.0, 0.0, 0.0]);
    }

    /// `v = d/h·scale`, `d` the displacement carried through the step: `x − x_prev` but for the
    /// rounding of `x`. Each of the 17 moves of a particle in a step (the prediction, then up
    /// to 4 edges × 4 iterations) rounds `x` by at most ε·|x|/2 and `d` by at most ε·|d|/2, so
    /// `|v − (x₁ − x₀)/h·scale| ≤ 17·ε·(|x| + |d|)/h·scale`, plus the last roundings of both.
    #[test]
    fn velocity_is_displacement_over_h() {
        let eps = f32::EPSILON;
        for damping in [0.0, 3.0] {
            let mut solver = hanging_grid(damping);
            let step = solver.time_step();
            for _ in 0..5 {
                let before = solver.positions();
                solver.step();
                for ((x0, x1), v) in before.iter().zip(solver.positions()).zip(solver.velocities()) {
                    let (x0, x1) = (Vec3::from(*x0), Vec3::from(x1));
                    let expected = (x1 - x0) / step.h * step.velocity_scale;
                    let size = x0.abs().max(x1.abs()) + (x1 - x0).abs();
                    let tol = 17.0 * eps * size / step.h * step.velocity_scale + 4.0 * eps * expected.abs();
                    let err = (Vec3::from(v) - expected).abs();
                    assert!(err.cmple(tol).all(), "damping rate {damping}: {v:?} vs {expected} ± {tol}");
                }
            }
        }
    }

    #[test]
    fn pinned_particles_never_move() {
        let mut solver = hanging_grid(0.0);
        let start = solver.positions();
        let pins = [0, 3];
        for _ in 0..50 {
            solver.step();
            let now = solver.positions();
            for p in pins {
                assert_eq!(now[p], start[p]);
                assert_eq!(solver.velocities()[p], [0.0; 3]);
            }
        }
        // ... while the rest of the cloth did fall.
        assert!(solver.positions()[15][1] < start[15][1]);
    }

    /// Two free particles 1 m apart running at each other at 5 m/s meet exactly at 0 after one
    /// step of 0.1 s: the constraint has no direction, so every iteration skips and counts it.
    #[test]
    fn degenerate_constraint_is_skipped_and_counted() {
        let model = build(
            settings(3),
            ClothDesc {
                name: "head-on".into(),
                positions: vec![[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0]],
                velocities: Some(vec![[5.0, 0.0, 0.0], [-5.0, 0.0, 0.0]]),
                edge_sets: vec![edges(vec![[0, 1]], None, 0.0)],
                ..ClothDesc::default()
            },
        );
        let mut solver = ReferenceSolver::from_model(&model);
        let stats = solver.step();
        assert_eq!(stats.degenerate, 3);
        assert_eq!(solver.positions(), vec![[0.0; 3], [0.0; 3]]);
        assert_eq!(solver.lambdas(), vec![0.0]);
        assert_eq!(solver.velocities(), vec![[5.0, 0.0, 0.0], [-5.0, 0.0, 0.0]]);
        assert_eq!(solver.residual().max, 1.0);

        // They pass through each other and the constraint has a direction again.
        let stats = solver.step();
        assert_eq!(stats.degenerate, 0);
        for p in solver.positions().iter().chain(&solver.velocities()) {
            assert!(p.iter().all(|c| c.is_finite()), "{p:?}");
        }
    }

    /// With no constraints, n steps of semi-implicit Euler from (x₀, v₀) give
    /// v_n = v₀ + n·h·g and x_n = x₀ + n·h·v₀ + h²·g·n(n+1)/2.
    ///
    /// Float tolerance (kept from when the velocity stage took `v = (x − x_prev)/h`, and still a bound now
    /// that it takes `v = d/h`, which is tighter): each step the rounding of `x` (up to ε·|x|,
    /// ε = `f32::EPSILON`) could turn into a velocity error of up to ε·|x|/h that the following
    /// steps carry along. After n steps that bounds the velocity error by about n·ε·X/h and the
    /// position error by about n²·ε·X, X the largest |x| on the way. `tests/suite/precision.rs` holds
    /// the carried displacement to a much tighter bound at 256 substeps.
    #[test]
    fn free_fall_matches_semi_implicit_euler() {
        let g = [0.0, -9.81, 1.5];
        let x0 = [1.0, 2.0, -3.0];
        let v0 = [0.5, 4.0, 0.0];
        let model = build(
            SimSettings { fps: 30.0, substeps: 4, gravity: g, ..settings(5) },
            ClothDesc {
                name: "stone".into(),
                positions: vec![x0],
                velocities: Some(vec![v0]),
                ..ClothDesc::default()
            },
        );
        let mut solver = ReferenceSolver::from_model(&model);
        let h = solver.time_step().h64;
        let steps = 120;
        let mut largest = 0.0f64;
        for _ in 0..steps {
            assert_eq!(solver.step().degenerate, 0);
            let x = solver.positions()[0];
            largest = x.iter().fold(largest, |m, c| m.max(c.abs() as f64));
        }
        let n = steps as f64;
        let eps = f32::EPSILON as f64;
        let (tol_x, tol_v) = (n * n * eps * largest, n * eps * largest / h);
        for k in 0..3 {
            let (g, x0, v0) = (g[k] as f64, x0[k] as f64, v0[k] as f64);
            let x = x0 + n * h * v0 + h * h * g * n * (n + 1.0) / 2.0;
            let v = v0 + n * h * g;
            let got_x = solver.positions()[0][k] as f64;
            let got_v = solver.velocities()[0][k] as f64;
            assert!((got_x - x).abs() <= tol_x, "x[{k}]: {got_x} vs {x} ± {tol_x}");
            assert!((got_v - v).abs() <= tol_v, "v[{k}]: {got_v} vs {v} ± {tol_v}");
        }
    }

    /// Constraints are solved in the model's order: colour by colour, then the serial list.
    #[test]
    fn constraints_follow_the_model_solve_order() {
        let positions: Vec<[f32; 3]> = (0..11).map(|i| [i as f32, 0.0, 0.0]).collect();
        let model = build(
            settings(1),
            ClothDesc {
                name: "chain".into(),
                positions,
                edge_sets: vec![edges((0..10).map(|i| [i, i + 1]).collect(), None, 0.0)],
                ..ClothDesc::default()
            },
        );
        let solver = ReferenceSolver::from_model(&model);
        let ours: Vec<[usize; 2]> = solver.kinds.distance.constraints.iter().map(|c| [c.a, c.b]).collect();
        let core: Vec<[usize; 2]> =
            model.sets().distance.solve_order().map(|(c, _)| c.particles.map(|p| p as usize)).collect();
        assert_eq!(ours, core);
        assert_eq!(solver.lambdas(), vec![0.0; 10]);
    }
}
