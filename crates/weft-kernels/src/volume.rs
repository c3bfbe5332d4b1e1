//! The kernel of the global volume constraint (see `weft_core::volume`): `V`, `∇V` and
//! `Σ w|∇C|²` assembled in parallel with a fixed reduction order, then one projection per
//! iteration. (Being written: the step already calls it.)

use weft_core::settings::TimeStep;
use weft_core::volume::VolumeConstraint;

use crate::records::Record;
use crate::shared::SharedSlice;
use crate::stats::Residual;
use crate::team::Team;

/// One iteration over every volume constraint, as phases of a team that every thread calls;
/// returns this thread's degenerate projections.
///
/// The caller guarantees that `records` holds the model's particles and that no other code
/// touches them or `volumes` during the call.
pub(crate) fn solve_phases(
    _team: &Team<'_>,
    volumes: SharedSlice<'_, VolumeConstraint>,
    _records: SharedSlice<'_, Record>,
    _step: &TimeStep,
) -> u64 {
    let _ = volumes;
    0
}

/// `|C|` (m³, and relative to `p·V₀`) over all volume constraints, now.
pub fn residual(volumes: &[VolumeConstraint], positions: &[Record]) -> Residual {
    let _ = (volumes, positions);
    Residual::default()
}
