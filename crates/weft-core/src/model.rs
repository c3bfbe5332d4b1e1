//! The built model: particles, constraint sets, cloths and the build report.

use std::ops::Range;

use crate::distance::DistanceBatches;
use crate::particles::{Particles, ParticlesMut};
use crate::settings::SimSettings;

/// One cloth of the model: its particles are a contiguous range of the model's.
#[derive(Debug, Clone, PartialEq)]
pub struct ClothInfo {
    /// The cloth's name (cache files are named after it).
    pub name: String,
    /// Its particles in the model.
    pub particles: Range<usize>,
    /// Its triangles, in indices local to the cloth (for mesh caches). May be empty.
    pub triangles: Vec<[u32; 3]>,
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
    /// Blocks of particles whose interior distance constraints are solved in parallel.
    pub distance_blocks: usize,
    /// The most colours a block needs.
    pub distance_block_colours: usize,
    /// Distance constraints interior to a block.
    pub distance_interior: usize,
    /// Distance constraints in each boundary colour (crossing blocks).
    pub distance_boundary_colours: Vec<usize>,
    /// Distance constraints solved serially (overflow of the colouring).
    pub distance_serial: usize,
    /// SIMD batches of distance constraints.
    pub distance_batches: usize,
    /// Fraction of distance lanes holding a real constraint.
    pub distance_fill: f64,
}

/// A validated model, ready to step.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub(crate) settings: SimSettings,
    pub(crate) particles: Particles,
    pub(crate) distance: DistanceBatches,
    pub(crate) cloths: Vec<ClothInfo>,
    pub(crate) report: BuildReport,
}

/// Mutable parts of a model for a solver: the particle state and the constraint sets.
#[derive(Debug)]
pub struct ModelMut<'a> {
    /// Simulation settings.
    pub settings: &'a SimSettings,
    /// Particle state.
    pub particles: ParticlesMut<'a>,
    /// Distance constraints.
    pub distance: &'a mut DistanceBatches,
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

    /// Distance constraints (stretch and shear).
    pub fn distance(&self) -> &DistanceBatches {
        &self.distance
    }

    /// The cloths, in scene order.
    pub fn cloths(&self) -> &[ClothInfo] {
        &self.cloths
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
            distance: &mut self.distance,
        }
    }
}
