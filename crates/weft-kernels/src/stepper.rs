//! The XPBD time step: a [`Stepper`] keeps the buffers a step needs between steps and runs the
//! step on one team of the pool's threads (see [`crate::team`]) as the schedule of
//! `docs/physics.md` ("The time step"), stage for stage: `Stages::run` is that numbered list in
//! code, each stage a method whose docs name the modules doing its work — forces
//! ([`crate::aero`]), predict ([`crate::integrate`], following pins), sweep
//! ([`crate::collider`]), reset and search (every kind's `λ`; [`crate::self_collision`],
//! [`crate::surface_collision`], [`crate::mesh_collider`]), iterate (the batched kinds of the
//! registry through [`crate::schedule`], volume, contacts), friction, guard, velocities.
//!
//! A prediction or a velocity that `f32` cannot hold is not taken: the particle keeps its state
//! (see [`crate::integrate`]) and [`StepStats::held`] counts it.
//!
//! Stages with nothing to do (no wind, no collider) cost nothing. The result is the same, bit for
//! bit, for any number of threads.
//!
//! In steady state a step allocates nothing on a pool of one thread: every buffer lives in the
//! [`Stepper`] and keeps its capacity (`weft-kernels/tests/no_allocation_per_step.rs`). A larger pool is woken
//! once per step by `rayon::broadcast`, which allocates its jobs, and an animated mesh collider
//! samples a new pose every step (several meshes on the pool's threads, one mesh per job, before
//! the team starts).

use std::sync::Arc;

use weft_core::Model;
use weft_core::batches::{BatchLanes, Batches};
use weft_core::collider::Placed;
use weft_core::kinds::{BatchedKind, KindId, KindSets, PerKind, SetVisitor};
use weft_core::lanes::Lanes;
use weft_core::mesh_collider::{MeshCollider, MeshPose};
use weft_core::model::ModelMut;
use weft_core::self_collision::SelfCollision;
use weft_core::settings::TimeStep;
use weft_core::surface_collision::SurfaceCollision;
use weft_core::volume::VolumeConstraint;

use crate::collider::{self, ContactArrays};
use crate::integrate::{ParticleArrays, particle_chunks, predict_phase, velocity_phase};
use crate::mesh_collider::{self, ChunkContacts, MeshArrays};
use crate::records::Record;
use crate::schedule::{self, SolveArrays};
use crate::shared::SharedSlice;
use crate::stats::{ColliderStats, KindStats, Residual, StepStats};
use crate::team::{self, Team};
use crate::{KernelPath, aero, self_collision, surface_collision, volume};

/// How to run a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StepOptions {
    /// SIMD lanes or the scalar instantiation of the same kernels.
    pub path: KernelPath,
    /// Evaluate `|C|` of every constraint after the last iteration (one read-only pass per kind),
    /// and count the particles deep in a collider.
    pub residual: bool,
}

/// Advances models by XPBD time steps of `h = 1/(fps·substeps)`, on the current rayon pool,
/// keeping the buffers a step needs from one step to the next.
///
/// ```
/// use weft_core::{ClothDesc, ModelBuilder, SimSettings};
/// use weft_core::limits::Limits;
/// use weft_kernels::{StepOptions, Stepper};
///
/// let mut builder = ModelBuilder::new(SimSettings::default(), Limits::default()).unwrap();
/// let particle = ClothDesc { name: "p".into(), positions: vec![[0.0, 1.0, 0.0]], ..ClothDesc::default() };
/// builder.add_cloth(&particle).unwrap();
/// let mut model = builder.build().unwrap();
/// let mut stepper = Stepper::new(StepOptions::default());
/// for _ in 0..10 {
///     stepper.step(&mut model);
/// }
/// assert!(model.particles().positions()[0][1] < 1.0, "it falls");
/// ```
#[derive(Debug, Default)]
pub struct Stepper {
    options: StepOptions,
    scratch: Scratch,
}

impl Stepper {
    /// A stepper that runs steps as `options` says; its buffers grow on the first step.
    pub fn new(options: StepOptions) -> Self {
        Stepper { options, scratch: Scratch::default() }
    }

    /// How this stepper runs a step.
    pub fn options(&self) -> StepOptions {
        self.options
    }

    /// Changes how the next steps run (the residual on a frame's last step, say).
    pub fn set_options(&mut self, options: StepOptions) {
        self.options = options;
    }

    /// Advances `model` by one time step (module docs) and says what the step did.
    ///
    /// # Panics
    /// If the model's constraint sets do not belong to its particles (a model never built that
    /// way).
    pub fn step(&mut self, model: &mut Model) -> StepStats {
        let dropped_at_build = model.report().dropped_pinned;
        let mut parts = model.parts_mut();
        let time_step = parts.settings.time_step();
        let (t0, t1) = (*parts.time, *parts.time + time_step.h64);
        self.scratch.prepare(&mut parts, t0, t1);
        let counts = {
            let stages = Stages::new(&mut parts, &mut self.scratch, &self.options, &time_step);
            team::run(|team| stages.run(team), Counts::merge)
        };
        self.scratch.self_collision.finish();
        *parts.time = t1;
        let positions = &*parts.particles.positions;
        let mut residuals = Residuals { positions, of: PerKind::default() };
        if self.options.residual {
            parts.sets.visit(&mut residuals);
            residuals.of[KindId::Volume] = Some(volume::residual(parts.volumes, positions));
        }
        StepStats {
            kinds: PerKind::from_fn(|kind| KindStats {
                degenerate: counts.degenerate[kind],
                residual: residuals.of[kind],
            }),
            surface: self.scratch.surface_collision.stats(),
            colliders: ColliderStats {
                deep: self.options.residual.then(|| self.scratch.deep.iter().sum::<u64>() + counts.mesh_deep),
                swept: counts.swept,
            },
            held: counts.held,
            dropped_at_build,
        }
    }
}

/// The residual of every batched kind, visited after the step.
struct Residuals<'x> {
    positions: &'x [Record],
    of: PerKind<Option<Residual>>,
}

impl<'a> SetVisitor<'a> for Residuals<'_> {
    fn visit<T: BatchedKind<K, P>, const K: usize, const P: usize>(
        &mut self,
        kind: T,
        set: &'a Batches<K, P>,
    ) {
        self.of[T::ID] = Some(schedule::residual(kind, &set.lanes(), self.positions));
    }
}

#[cfg(test)]
impl Stepper {
    /// The self-collision buffers, for the tests of `crate::self_collision`.
    pub(crate) fn contacts_mut(&mut self) -> &mut self_collision::Scratch {
        &mut self.scratch.self_collision
    }
}

/// Advances `model` by one XPBD time step with a new [`Stepper`] (whose buffers are allocated
/// for this one step); a bake keeps one `Stepper` instead.
pub fn step(model: &mut Model, options: &StepOptions) -> StepStats {
    Stepper::new(*options).step(model)
}

/// The buffers of a step besides the model, kept between steps. Each is refilled by
/// [`Scratch::prepare`] and keeps its capacity.
#[derive(Debug, Default)]
struct Scratch {
    /// The displacement of the step of each particle, `[dx, dy, dz, 0]` in m (see
    /// [`crate::integrate`]); set by the prediction.
    displacement: Vec<Record>,
    /// The wind's force on each particle (N), or empty without wind.
    forces: Vec<Record>,
    /// The wind's force on each aerodynamic triangle (N).
    triangle_forces: Vec<[f32; 3]>,
    /// The colliders at their poses of this step.
    placed: Vec<Placed>,
    /// Pushes of the colliders, one per particle and collider (m).
    collider_depth: Vec<f32>,
    /// Free particles deep in a collider, per particle chunk.
    deep: Vec<u64>,
    /// The mesh colliders' vertices of this step.
    mesh_poses: Vec<Arc<MeshPose>>,
    /// Pushes of the mesh colliders, one per particle and mesh (m).
    mesh_depth: Vec<f32>,
    /// Candidate triangles and sides, per particle chunk.
    mesh_contacts: Vec<ChunkContacts>,
    /// Where each following pin goes (particle, m).
    pin_targets: Vec<(u32, [f32; 3])>,
    /// The self-collision grid and contact lists.
    self_collision: self_collision::Scratch,
    /// The surface self-collision grid and contacts.
    surface_collision: surface_collision::Buffers,
}

/// `v` holding `len` copies of `value`, in its own capacity where it fits.
pub(crate) fn refill<T: Clone>(v: &mut Vec<T>, len: usize, value: T) {
    v.clear();
    v.resize(len, value);
}

impl Scratch {
    /// Fills the buffers for a step of `parts` from `t0` to `t1` (s): the colliders placed, the
    /// meshes' poses sampled and their BVHs refit, the pins' targets, the pushes zeroed.
    fn prepare(&mut self, parts: &mut ModelMut<'_>, t0: f64, t1: f64) {
        let len = parts.particles.positions.len();
        self.displacement.resize(len, [0.0; 4]);
        self.forces.resize(if parts.aero.is_empty() { 0 } else { len }, [0.0; 4]);
        self.triangle_forces.resize(parts.aero.triangles.len(), [0.0; 3]);
        self.placed.clear();
        self.placed.extend(parts.colliders.iter().map(|c| c.placed(t0, t1)));
        refill(&mut self.collider_depth, len * self.placed.len(), 0.0);
        refill(&mut self.deep, particle_chunks(len), 0);
        // Several meshes are sampled on the pool's threads, one mesh per job (a pose depends on
        // its mesh and the times alone, so the poses are the same on any thread).
        if parts.meshes.len() > 1 && rayon::current_num_threads() > 1 {
            use rayon::prelude::*;
            parts.meshes.par_iter_mut().map(|m| m.prepare(t0, t1)).collect_into_vec(&mut self.mesh_poses);
        } else {
            self.mesh_poses.clear();
            self.mesh_poses.extend(parts.meshes.iter_mut().map(|m| m.prepare(t0, t1)));
        }
        let nm = parts.meshes.len();
        refill(&mut self.mesh_depth, len * nm, 0.0);
        self.mesh_contacts
            .resize_with(if nm == 0 { 0 } else { mesh_collider::chunks(len) }, Default::default);
        parts.followers.targets_into(parts.meshes, t1, &mut self.pin_targets);
        self.self_collision.fit(parts.self_collision);
    }
}

/// One batched constraint kind `T` of a step: its lanes and its multipliers.
struct BatchedSet<'a, T, const K: usize, const P: usize> {
    lanes: BatchLanes<'a, K, P>,
    lambdas: SharedSlice<'a, Lanes<f32>>,
    kind: std::marker::PhantomData<T>,
}

impl<'a, T: BatchedKind<K, P>, const K: usize, const P: usize> BatchedSet<'a, T, K, P> {
    /// `set`'s lanes with their multipliers, for a model of `particles` particles.
    fn new(set: &'a mut Batches<K, P>, particles: usize) -> Self {
        let (lanes, lambda) = set.lanes_and_lambda_mut();
        let count = lanes.particle_count();
        assert!(count == particles || lanes.batch_count() == 0, "the constraint sets belong to the model");
        BatchedSet { lanes, lambdas: SharedSlice::new(lambda), kind: std::marker::PhantomData }
    }

    /// `λ := 0` for every constraint, as a team phase.
    fn reset(&self, team: &Team<'_>) {
        const CHUNK: usize = 1024;
        let chunks = self.lambdas.len().div_ceil(CHUNK);
        team.for_each_chunk(chunks, (self.lambdas.chunks_mut(CHUNK),), |_, _, (lambdas,)| {
            lambdas.fill(Lanes::splat(0.0));
        });
    }

    /// One iteration over every constraint; this thread's degenerate projections.
    fn solve(
        &self,
        team: &Team<'_>,
        particles: &ParticleArrays<'_>,
        step: &TimeStep,
        path: KernelPath,
    ) -> u64 {
        let arrays = SolveArrays {
            lambdas: self.lambdas,
            records: particles.positions,
            displacement: particles.displacement,
            prev: particles.prev,
        };
        schedule::solve_phases::<T, K, P, _>(team, &self.lanes, arrays, step, path)
    }
}

/// Makes [`BatchedSets`] from the registry.
macro_rules! batched_sets {
    (
        batched { $(
            $field:ident : $kind:ident in $module:ident [$k:literal, $p:literal]
            { $($key:ident : $ty:ident),* $(,)? }
        ),* $(,)? }
        phased { $($pfield:ident : $pid:ident = $pinfo:path),* $(,)? }
    ) => {
        /// The batched constraint kinds of the registry, in the order an iteration solves them.
        struct BatchedSets<'a> {
            $($field: BatchedSet<'a, weft_core::kinds::$module::$kind, $k, $p>,)*
        }

        impl<'a> BatchedSets<'a> {
            /// The model's sets, for a model of `particles` particles.
            fn new(sets: &'a mut KindSets, particles: usize) -> Self {
                BatchedSets { $($field: BatchedSet::new(&mut sets.$field, particles),)* }
            }

            /// `λ := 0` for every constraint of every kind, as team phases.
            fn reset(&self, team: &Team<'_>) {
                $(self.$field.reset(team);)*
            }

            /// One iteration over every kind, adding this thread's degenerate projections to
            /// `degenerate`.
            fn solve(
                &self,
                team: &Team<'_>,
                particles: &ParticleArrays<'_>,
                step: &TimeStep,
                path: KernelPath,
                degenerate: &mut PerKind<u64>,
            ) {
                $(degenerate[KindId::$kind] += self.$field.solve(team, particles, step, path);)*
            }
        }
    };
}

weft_core::constraint_kinds!(batched_sets);

/// What one thread of a step's team counted; the team's counts are the sum.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    /// Degenerate projections per constraint kind (see [`KindStats::degenerate`]).
    degenerate: PerKind<u64>,
    /// Particles the swept check moved.
    swept: u64,
    /// Free particles deep in a mesh collider and in no analytic one.
    mesh_deep: u64,
    /// Predictions and velocities `f32` could not hold, not taken.
    held: u64,
}

impl Counts {
    fn merge(a: Counts, b: Counts) -> Counts {
        Counts {
            degenerate: PerKind::from_fn(|kind| a.degenerate[kind] + b.degenerate[kind]),
            swept: a.swept + b.swept,
            mesh_deep: a.mesh_deep + b.mesh_deep,
            held: a.held + b.held,
        }
    }
}

/// Everything one step's team works on, as the stages of the module docs.
struct Stages<'a> {
    options: StepOptions,
    step: TimeStep,
    iterations: u32,
    gravity: [f32; 3],
    time: f64,
    particles: ParticleArrays<'a>,
    forces: SharedSlice<'a, Record>,
    triangle_forces: SharedSlice<'a, [f32; 3]>,
    aero: &'a weft_core::aero::AeroModel,
    pin_targets: &'a [(u32, [f32; 3])],
    sets: BatchedSets<'a>,
    volumes: &'a [VolumeConstraint],
    self_collision: &'a SelfCollision,
    contacts: self_collision::SharedScratch<'a>,
    surface: &'a SurfaceCollision,
    surface_scratch: surface_collision::SharedBuffers<'a>,
    colliders: ContactArrays<'a>,
    meshes: MeshArrays<'a>,
}

impl<'a> Stages<'a> {
    fn new(
        parts: &'a mut ModelMut<'_>,
        scratch: &'a mut Scratch,
        options: &StepOptions,
        time_step: &TimeStep,
    ) -> Self {
        let p = &mut parts.particles;
        let len = p.positions.len();
        let particles = ParticleArrays {
            positions: SharedSlice::new(p.positions),
            prev: SharedSlice::new(p.prev_positions),
            displacement: SharedSlice::new(&mut scratch.displacement),
            velocities: SharedSlice::new(p.velocities),
            len,
        };
        let meshes: &'a [MeshCollider] = &*parts.meshes;
        Stages {
            options: *options,
            step: *time_step,
            iterations: parts.settings.iterations,
            gravity: parts.settings.gravity,
            time: *parts.time,
            forces: SharedSlice::new(&mut scratch.forces),
            triangle_forces: SharedSlice::new(&mut scratch.triangle_forces),
            aero: parts.aero,
            pin_targets: &scratch.pin_targets,
            sets: BatchedSets::new(parts.sets, len),
            volumes: &*parts.volumes,
            self_collision: parts.self_collision,
            contacts: scratch.self_collision.share(),
            surface: parts.surface_collision,
            surface_scratch: scratch.surface_collision.share(),
            colliders: ContactArrays {
                colliders: &scratch.placed,
                records: particles.positions,
                displacement: particles.displacement,
                prev: particles.prev,
                depth: SharedSlice::new(&mut scratch.collider_depth),
                deep: SharedSlice::new(&mut scratch.deep),
                path: options.path,
            },
            meshes: MeshArrays {
                meshes,
                poses: &scratch.mesh_poses,
                records: particles.positions,
                displacement: particles.displacement,
                prev: particles.prev,
                depth: SharedSlice::new(&mut scratch.mesh_depth),
                contacts: SharedSlice::new(&mut scratch.mesh_contacts),
            },
            particles,
        }
    }

    /// The step, as every thread of the team runs it; this thread's counts.
    fn run(&self, team: &Team<'_>) -> Counts {
        let mut counts = Counts::default();
        self.apply_wind(team); // 1
        counts.held = self.predict(team); // 2
        counts.swept = self.sweep(team); // 3
        self.reset_and_search(team); // 4
        for iteration in 0..self.iterations {
            self.solve_constraints(team, iteration, &mut counts.degenerate); // 5
            self.project_contacts(team, true);
        }
        self.apply_friction(team); // 6
        self.project_contacts(team, false);
        self.guard(team); // 7
        if self.options.residual {
            counts.mesh_deep = self.count_deep(team);
        }
        counts.held += velocity_phase(team, &self.particles, &self.step); // 8
        counts
    }

    fn any_collider(&self) -> bool {
        !self.colliders.colliders.is_empty()
    }

    fn any_mesh(&self) -> bool {
        !self.meshes.meshes.is_empty()
    }

    /// Stage 1: the wind's force on every particle.
    fn apply_wind(&self, team: &Team<'_>) {
        if self.forces.len() > 0 {
            let p = &self.particles;
            let (state, triangles) = ((p.positions, p.velocities), self.triangle_forces);
            aero::force_phases(team, self.aero, state, triangles, self.forces, self.time);
        }
    }

    /// Stage 2: the prediction, then the following pins (set outright, so their displacement
    /// is `x − x_prev`); the predictions this thread held.
    fn predict(&self, team: &Team<'_>) -> u64 {
        let held = predict_phase(team, &self.particles, self.gravity, self.forces, &self.step);
        if !self.pin_targets.is_empty() {
            let p = &self.particles;
            let parts = (p.positions.whole_mut(), p.displacement.whole_mut(), p.prev);
            team.for_each_chunk(1, parts, |_, _, (x, d, prev)| {
                for &(i, target) in self.pin_targets {
                    let i = i as usize;
                    x[i] = [target[0], target[1], target[2], x[i][3]];
                    d[i] = [target[0] - prev[i][0], target[1] - prev[i][1], target[2] - prev[i][2], 0.0];
                }
            });
        }
        held
    }

    /// Stage 3: the swept check against the analytic colliders; the particles it moved.
    fn sweep(&self, team: &Team<'_>) -> u64 {
        if self.any_collider() { self.colliders.sweep_phase(team) } else { 0 }
    }

    /// Stage 4: `λ := 0`, and the contacts of the step found.
    fn reset_and_search(&self, team: &Team<'_>) {
        self.sets.reset(team);
        self_collision::search_phases(team, self.self_collision, self.contacts, self.particles.positions);
        surface_collision::search_phases(team, self.surface, self.surface_scratch, &self.particles);
        if self.any_mesh() {
            self.meshes.search_phase(team);
        }
    }

    /// Stage 5: one iteration over every constraint kind, adding this thread's degenerate
    /// projections to `d`.
    fn solve_constraints(&self, team: &Team<'_>, iteration: u32, d: &mut PerKind<u64>) {
        let first = iteration == 0;
        let (p, step, path) = (&self.particles, &self.step, self.options.path);
        self.sets.solve(team, p, step, path, d);
        d[KindId::Volume] +=
            volume::solve_phases(team, self.volumes, p.positions, p.displacement, step, first);
        let (sc, contacts) = (self.self_collision, self.contacts);
        d[KindId::SelfCollision] += self_collision::solve_phases(
            team,
            sc,
            contacts,
            p.positions,
            p.displacement,
            p.prev,
            iteration as usize,
        );
        surface_collision::solve_phase(team, self.surface, self.surface_scratch, p);
    }

    /// One contact projection against every collider, then every mesh collider; the pushes are
    /// added to the depths if `accumulate`.
    fn project_contacts(&self, team: &Team<'_>, accumulate: bool) {
        if self.any_collider() {
            self.colliders.contact_phase(team, accumulate);
        }
        if self.any_mesh() {
            self.meshes.contact_phase(team, accumulate);
        }
    }

    /// Stage 6: friction against the colliders, then the mesh colliders.
    fn apply_friction(&self, team: &Team<'_>) {
        if self.any_collider() {
            self.colliders.friction_phase(team);
        }
        if self.any_mesh() {
            self.meshes.friction_phase(team);
        }
    }

    /// Stage 7: the surface self-collision guard.
    fn guard(&self, team: &Team<'_>) {
        surface_collision::guard_phase(team, self.surface, self.surface_scratch, &self.particles);
    }

    /// Free particles deep in a collider, into the per-chunk counts; returns this thread's count
    /// of those deep in a mesh collider and in no analytic one (so none counts twice).
    fn count_deep(&self, team: &Team<'_>) -> u64 {
        if self.any_collider() {
            self.colliders.deep_phase(team);
        }
        if !self.any_mesh() {
            return 0;
        }
        let placed = self.colliders.colliders;
        let deep_elsewhere = |p: [f32; 3]| placed.iter().any(|c| collider::is_deep::<f32>(c, p, 1.0));
        self.meshes.deep_phase(team, &deep_elsewhere)
    }
}
