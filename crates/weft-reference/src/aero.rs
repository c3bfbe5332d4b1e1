//! Aerodynamics: drag and lift on each triangle from its velocity relative to the wind, summed
//! onto its corners. (Being written: the solver already calls it.)

use glam::Vec3;
use weft_core::Model;

use crate::particle::Particle;

/// The model's triangles in the wind.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Aero {}

impl Aero {
    /// Copies the model's aerodynamic triangles and wind.
    pub(crate) fn from_model(model: &Model) -> Self {
        let _ = model;
        Aero {}
    }

    /// True when no triangle feels the air.
    pub(crate) fn is_empty(&self) -> bool {
        true
    }

    /// The aerodynamic force on every particle (N) at time `time` (s).
    pub(crate) fn forces(&self, particles: &[Particle], time: f64) -> Vec<Vec3> {
        let _ = time;
        vec![Vec3::ZERO; particles.len()]
    }
}
