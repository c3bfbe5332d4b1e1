//! The kernel of the unilateral tether constraint (see `weft_core::tether`): one body for any [`Real`](crate::lane::Real), a SIMD and a scalar
//! instantiation, run by [`crate::schedule`]. (Being written: the step already calls it.)

use weft_core::lanes::Lanes;
use weft_core::settings::TimeStep;
use weft_core::tether::TetherLanes;

use crate::KernelPath;
use crate::records::Record;
use crate::shared::SharedSlice;
use crate::stats::Residual;
use crate::team::Team;

/// One sweep as phases of a team that every thread calls; returns this thread's degenerate
/// projections.
///
/// The caller guarantees that `records` holds the lanes' particles and `lambdas` their
/// multipliers, and that no other code touches either during the call.
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_phases(
    _team: &Team<'_>,
    lanes: &TetherLanes<'_>,
    _lambdas: SharedSlice<'_, Lanes<f32>>,
    _records: SharedSlice<'_, Record>,
    _prev: &[Record],
    _step: &TimeStep,
    _path: KernelPath,
) -> u64 {
    assert_eq!(lanes.batch_count(), 0, "not written yet");
    0
}

/// `|C|` (m beyond the bound) over all constraints, now, reduced in a fixed order.
pub fn residual(lanes: &TetherLanes<'_>, positions: &[Record]) -> Residual {
    assert_eq!(positions.len(), lanes.particle_count(), "positions belong to another model");
    Residual::default()
}
