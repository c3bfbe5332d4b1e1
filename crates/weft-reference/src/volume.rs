//! Volume: one global constraint per closed cloth, `C = V − p·V₀`.
//! (Being written: the solver already calls it.)

use weft_core::Model;
use weft_core::settings::TimeStep;

use crate::particle::Particle;

/// The model's constraints of this kind, in its solve order.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Set {}

impl Set {
    /// Copies the model's constraints of this kind in solve order.
    pub(crate) fn from_model(model: &Model) -> Self {
        let _ = model;
        Set {}
    }

    /// Sets every `λ` to 0.
    pub(crate) fn reset(&mut self) {}

    /// Projects every constraint once, in order; returns how many were skipped as degenerate.
    pub(crate) fn project_all(&mut self, particles: &mut [Particle], step: &TimeStep) -> u64 {
        let _ = (particles, step);
        0
    }
}
