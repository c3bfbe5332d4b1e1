//! Aerodynamic forces (see `weft_core::aero`): per-triangle drag and lift from the cloth's
//! velocity relative to the wind, accumulated per particle in a fixed order, as phases of the
//! step's team before the prediction. (Being written: the step already calls it.)

use weft_core::aero::AeroModel;

use crate::records::Record;
use crate::shared::SharedSlice;
use crate::team::Team;

/// Writes the aerodynamic force on every particle (N, `[x, y, z, 0]`) into `forces`, at time
/// `time` (s), from the positions and velocities at the start of the step.
///
/// The caller guarantees that `forces` has one record per particle and that no other code
/// touches it during the call; `positions` and `velocities` are not written meanwhile.
pub(crate) fn force_phases(
    _team: &Team<'_>,
    aero: &AeroModel,
    _positions: &[Record],
    _velocities: &[Record],
    _forces: SharedSlice<'_, Record>,
    _time: f64,
) {
    assert!(aero.is_empty(), "not written yet");
}
