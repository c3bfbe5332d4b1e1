//! The built model: particles, constraint sets, cloths and the build report.

use std::ops::Range;

use crate::aero::AeroModel;
use crate::batches::Batches;
use crate::collider::Collider;
use crate::digest::{Digest, digest_debug};
use crate::kinds::{KindSets, SetReports};
use crate::particles::{Particles, ParticlesMut};
use crate::settings::SimSettings;
use crate::volume::VolumeConstraint;

/// One cloth of the model: its particles are a contiguous range of the model's.
#[derive(Debug, Clone, PartialEq)]
pub struct ClothInfo {
    /// The cloth's name (cache files are named after it).
    pub name: String,
    /// Its particles in the model.
    pub particles: Range<usize>,
    /// Its simulated triangles, in indices local to the cloth. May be empty.
    pub triangles: Vec<[u32; 3]>,
    /// Its faces as given, with their UVs, in indices local to the cloth (for mesh caches): the
    /// scene's polygons ([`crate::ClothDesc::polygons`]), or else its triangles. May be empty.
    pub polygons: crate::polygons::Polygons,
    /// The render mesh its caches hold instead of its particles, bound to them (see
    /// [`crate::binding`]); `None`: the caches hold the particles with [`ClothInfo::polygons`].
    pub render: Option<crate::binding::RenderMesh>,
}

/// How one batched constraint set was laid out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SetReport {
    /// Constraints solved.
    pub constraints: usize,
    /// Blocks of particles whose interior constraints are solved in parallel.
    pub blocks: usize,
    /// The most colours a block needs.
    pub block_colours: usize,
    /// Constraints interior to a block.
    pub interior: usize,
    /// Constraints in each strand (crossing blocks, solved colour by colour on one thread; see
    /// [`crate::colouring`]).
    pub strands: Vec<usize>,
    /// Constraints in each boundary colour (crossing blocks, in no strand).
    pub boundary_colours: Vec<usize>,
    /// Constraints solved serially (overflow of the colouring).
    pub serial: usize,
    /// SIMD batches.
    pub batches: usize,
    /// Fraction of lanes holding a real constraint.
    pub fill: f64,
}

impl SetReport {
    /// Constraints crossing blocks: in the strands and in the boundary colours.
    pub fn across(&self) -> usize {
        self.strands.iter().chain(&self.boundary_colours).sum()
    }

    /// The layout of `set`.
    pub fn of<const K: usize, const P: usize>(set: &Batches<K, P>) -> Self {
        SetReport {
            constraints: set.len(),
            blocks: set.block_count(),
            block_colours: set.block_colours(),
            interior: set.interior_len(),
            strands: set.strand_sizes(),
            boundary_colours: set.boundary_colour_sizes(),
            serial: set.serial_len(),
            batches: set.plan().len(),
            fill: set.batch_fill(),
        }
    }
}

/// What the builder made of a scene.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BuildReport {
    /// Particles in the model.
    pub particles: usize,
    /// Pinned particles (inverse mass 0).
    pub pinned: usize,
    /// Stretch constraints solved.
    pub stretch: usize,
    /// Shear constraints solved.
    pub shear: usize,
    /// Distance constraints left out because both particles are pinned (they can never move).
    pub dropped_pinned: usize,
    /// Layout of each batched constraint set.
    pub sets: SetReports,
    /// Volume constraints (one per closed cloth that asks for one).
    pub volumes: usize,
    /// Triangles with aerodynamics.
    pub aero_triangles: usize,
    /// Colliders (static and animated).
    pub colliders: usize,
    /// Triangle-mesh colliders.
    pub mesh_colliders: usize,
    /// Pins that follow a path or a collider.
    pub following_pins: usize,
}

/// A validated model, ready to step.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub(crate) settings: SimSettings,
    pub(crate) particles: Particles,
    pub(crate) sets: KindSets,
    pub(crate) volumes: Vec<VolumeConstraint>,
    pub(crate) aero: AeroModel,
    pub(crate) colliders: Vec<Collider>,
    pub(crate) meshes: Vec<crate::mesh_collider::MeshCollider>,
    pub(crate) followers: crate::follow::Followers,
    pub(crate) self_collision: crate::self_collision::SelfCollision,
    pub(crate) surface_collision: crate::surface_collision::SurfaceCollision,
    pub(crate) cloths: Vec<ClothInfo>,
    pub(crate) report: BuildReport,
    pub(crate) time: f64,
}

/// Mutable parts of a model for a solver: the particle state and the constraint sets.
#[derive(Debug)]
pub struct ModelMut<'a> {
    /// Simulation settings.
    pub settings: &'a SimSettings,
    /// Particle state.
    pub particles: ParticlesMut<'a>,
    /// The batched constraint sets, one per kind.
    pub sets: &'a mut KindSets,
    /// Volume constraints.
    pub volumes: &'a mut [VolumeConstraint],
    /// Aerodynamic triangles.
    pub aero: &'a AeroModel,
    /// Colliders, in scene order.
    pub colliders: &'a [Collider],
    /// Triangle-mesh colliders, in scene order (mutable: each keeps a BVH it refits).
    pub meshes: &'a mut [crate::mesh_collider::MeshCollider],
    /// Pins that follow a path or a collider.
    pub followers: &'a crate::follow::Followers,
    /// Self-collision thickness, friction and exclusions.
    pub self_collision: &'a crate::self_collision::SelfCollision,
    /// Surface self-collision: features, thickness and friction.
    pub surface_collision: &'a crate::surface_collision::SurfaceCollision,
    /// Simulated time in s since the start (the solver advances it by `h` each step).
    pub time: &'a mut f64,
}

impl Digest for Model {
    /// Every field as built, the big arrays bit for bit: what a bake's fingerprint is made of
    /// (see [`crate::digest`]).
    fn digest<H: std::hash::Hasher>(&self, h: &mut H) {
        let Model {
            settings,
            particles,
            sets,
            volumes,
            aero,
            colliders,
            meshes,
            followers,
            self_collision,
            surface_collision,
            cloths,
            report,
            time,
        } = self;
        digest_debug(settings, h);
        particles.digest(h);
        sets.digest(h);
        volumes.digest(h);
        aero.digest(h);
        digest_debug(colliders, h);
        meshes.digest(h);
        followers.digest(h);
        self_collision.digest(h);
        surface_collision.digest(h);
        cloths.digest(h);
        digest_debug(report, h);
        time.digest(h);
    }
}

impl Digest for ClothInfo {
    fn digest<H: std::hash::Hasher>(&self, h: &mut H) {
        let ClothInfo { name, particles, triangles, polygons, render } = self;
        name.digest(h);
        particles.digest(h);
        triangles.digest(h);
        polygons.digest(h);
        render.digest(h);
    }
}

impl Model {
    /// Simulation settings.
    pub fn settings(&self) -> &SimSettings {
        &self.settings
    }

    /// Particle state.
    pub fn particles(&self) -> &Particles {
        &self.particles
    }

    /// The batched constraint sets, one per kind of the registry ([`crate::kinds`]).
    pub fn sets(&self) -> &KindSets {
        &self.sets
    }

    /// Volume constraints.
    pub fn volumes(&self) -> &[VolumeConstraint] {
        &self.volumes
    }

    /// Aerodynamic triangles and the wind.
    pub fn aero(&self) -> &AeroModel {
        &self.aero
    }

    /// Colliders, in scene order.
    pub fn colliders(&self) -> &[Collider] {
        &self.colliders
    }

    /// Triangle-mesh colliders, in scene order.
    pub fn mesh_colliders(&self) -> &[crate::mesh_collider::MeshCollider] {
        &self.meshes
    }

    /// Pins that follow a path or a collider.
    pub fn followers(&self) -> &crate::follow::Followers {
        &self.followers
    }

    /// Self-collision thickness, friction and exclusions (empty when no cloth asks for it).
    pub fn self_collision(&self) -> &crate::self_collision::SelfCollision {
        &self.self_collision
    }

    /// Surface self-collision (`self_collision = "triangles"`): features, thickness and
    /// friction (empty when no cloth asks for it).
    pub fn surface_collision(&self) -> &crate::surface_collision::SurfaceCollision {
        &self.surface_collision
    }

    /// The cloths, in scene order.
    pub fn cloths(&self) -> &[ClothInfo] {
        &self.cloths
    }

    /// Sets the time steps per frame of the steps to come (`settings().substeps`), so that they
    /// are `h = 1/(fps·substeps)` s long: how a bake to a strain tolerance
    /// ([`crate::settings::StrainTolerance`]) changes the count between frames. The state and
    /// the time are left as they are.
    ///
    /// A count outside `min_substeps..=max_substeps` of the model's tolerance, or, without one, a
    /// count that gives a time step `f32` cannot hold, is refused with the rule it breaks, and the
    /// model is left unchanged.
    pub fn set_substeps(&mut self, substeps: u32) -> Result<(), crate::BuildError> {
        let settings = SimSettings { substeps, ..self.settings.clone() };
        settings.validate()?;
        self.settings = settings;
        Ok(())
    }

    /// Simulated time in s since the start of the bake.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// What the builder made of the scene.
    pub fn report(&self) -> &BuildReport {
        &self.report
    }

    /// Mutable parts for a solver.
    pub fn parts_mut(&mut self) -> ModelMut<'_> {
        ModelMut {
            settings: &self.settings,
            particles: self.particles.state_mut(),
            sets: &mut self.sets,
            volumes: &mut self.volumes,
            aero: &self.aero,
            colliders: &self.colliders,
            meshes: &mut self.meshes,
            followers: &self.followers,
            self_collision: &self.self_collision,
            surface_collision: &self.surface_collision,
            time: &mut self.time,
        }
    }
}
