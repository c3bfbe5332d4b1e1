//! One frame of a bake: [`FrameStepper`] takes its time steps, and, baking to a strain
//! tolerance, measures the largest stretch after them and steps it again from its start at twice
//! the count while it ends over the tolerance.
//!
//! [`bake`](crate::bake) steps every frame with one; a program that steps a model frame by frame
//! itself (the Python module's `Simulation`), reading its state between frames, steps it with one
//! too and gets the bake's very bits.

use weft_core::{Model, StrainTolerance};
use weft_kernels::{KernelPath, StepOptions, StepStats, Stepper};

use crate::checkpointing::Snapshot;
use crate::stats::Quality;

/// Steps a model frame by frame as a bake does: one [`Stepper`] kept for every frame, and, baking
/// to a strain tolerance (see the [crate docs](crate)), the largest stretch measured after each
/// and each frame's substep count chosen.
pub struct FrameStepper {
    stepper: Stepper,
    kernel: KernelPath,
    /// The largest stretch's measure, made the first time a frame is baked to a tolerance.
    quality: Option<Quality>,
    /// Baking to a strain tolerance: the start of a frame that may be stepped again.
    snapshot: Snapshot,
}

/// What stepping a frame did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SteppedFrame {
    /// Time steps the frame kept: the model's `substeps`, or, baking to a tolerance, the count
    /// chosen for it.
    pub substeps: u32,
    /// Time steps it took, tries stepped again at a higher count included.
    pub steps: u64,
    /// Per kind: degenerate projections over the kept try's steps, and `|C|` after its last step
    /// when `measured`.
    pub stats: StepStats,
    /// Whether its residual was measured (the `measure` answer for the kept try).
    pub measured: bool,
    /// Baking to a strain tolerance, the largest stretch of a stretch edge after the frame:
    /// `|x_a − x_b|/L − 1`; `None` otherwise (a bake measures it from the positions it writes,
    /// off the solver's path).
    pub max_stretch: Option<f32>,
}

impl FrameStepper {
    /// A stepper for frames of `model` with the kernels of `kernel` (the same bits either way).
    pub fn new(model: &Model, kernel: KernelPath) -> Self {
        FrameStepper {
            stepper: Stepper::new(StepOptions { path: kernel, residual: false }),
            kernel,
            quality: model.settings().tolerance.map(|_| Quality::new(model)),
            snapshot: Snapshot::default(),
        }
    }

    /// Steps `model` by one frame (see [`FrameStepper::step_frame_with`]), without moving
    /// anything between its time steps.
    pub fn step_frame(&mut self, model: &mut Model, measure: &dyn Fn(u32) -> bool) -> SteppedFrame {
        self.step_frame_with(model, measure, &mut |_, _, _| {})
    }

    /// Steps `model` by one frame: `substeps` time steps (from the model's settings), calling
    /// `before_step(model, s, substeps)` before step `s` (from 1) so that a caller may move
    /// what it drives (a pin's target) between them. `measure(substeps)` says whether a try of
    /// that many steps measures its residual after its last step (a read-only pass: the bits do
    /// not depend on it).
    ///
    /// Baking to a strain tolerance, a try that ends over `max_strain` with steps to spare is put
    /// back to the frame's start and stepped again with twice the count (at most
    /// `max_substeps`); after the frame, the model's count is set to the one the next frame
    /// starts with (half as many, at least `min_substeps`, after a frame that ended below a
    /// quarter of the tolerance).
    pub fn step_frame_with(
        &mut self,
        model: &mut Model,
        measure: &dyn Fn(u32) -> bool,
        before_step: &mut dyn FnMut(&mut Model, u32, u32),
    ) -> SteppedFrame {
        let tolerance = model.settings().tolerance;
        let mut steps = 0u64;
        // Whether the frame is measured fully is decided for each try: one at more substeps may be.
        let (stats, max_stretch, measured) = loop {
            let substeps = model.settings().substeps;
            let measured = measure(substeps);
            let may_redo = tolerance.is_some_and(|t| substeps < t.max_substeps);
            if may_redo {
                self.snapshot.take(model);
            }
            let stats = self.step_substeps(model, substeps, measured, before_step);
            steps += substeps as u64;
            let max_stretch =
                tolerance.map(|_| self.quality.get_or_insert_with(|| Quality::new(model)).max_stretch(model));
            if let Some(t) = tolerance.filter(|_| may_redo)
                && max_stretch.is_some_and(|s| s > t.max_strain)
            {
                // Over the tolerance with steps to spare: again from the start, twice the count.
                self.snapshot.put_back(model);
                set_substeps(model, substeps.saturating_mul(2).min(t.max_substeps));
                continue;
            }
            break (stats, max_stretch, measured);
        };
        let substeps = model.settings().substeps;
        if let (Some(t), Some(stretch)) = (tolerance, max_stretch) {
            // What the next frame starts with (and a checkpoint after this frame records).
            set_substeps(model, next_substeps(&t, substeps, stretch));
        }
        SteppedFrame { substeps, steps, stats, measured, max_stretch }
    }

    /// `substeps` time steps; the residual is measured on the last one if `measured`.
    fn step_substeps(
        &mut self,
        model: &mut Model,
        substeps: u32,
        measured: bool,
        before_step: &mut dyn FnMut(&mut Model, u32, u32),
    ) -> StepStats {
        let mut stats = StepStats::default();
        for s in 1..=substeps {
            before_step(model, s, substeps);
            self.stepper.set_options(StepOptions { path: self.kernel, residual: s == substeps && measured });
            stats.accumulate(&self.stepper.step(model));
        }
        stats
    }
}

/// The count the frame after one that kept `substeps` and ended with the largest stretch
/// `max_stretch` starts with: half as many when it ended below `max_strain ×`
/// [`StrainTolerance::RELAX_BELOW`], three quarters (rounded up) below `max_strain ×`
/// [`StrainTolerance::EASE_BELOW`] (either at least `min_substeps`), else the same.
fn next_substeps(t: &StrainTolerance, substeps: u32, max_stretch: f32) -> u32 {
    if max_stretch < t.max_strain * StrainTolerance::RELAX_BELOW {
        (substeps / 2).max(t.min_substeps)
    } else if max_stretch < t.max_strain * StrainTolerance::EASE_BELOW {
        (substeps - substeps / 4).max(t.min_substeps)
    } else {
        substeps
    }
}

/// Sets the model's substep count to one between its tolerance's bounds.
fn set_substeps(model: &mut Model, substeps: u32) {
    model.set_substeps(substeps).expect("a count between min_substeps and max_substeps, checked at build");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Below a quarter of the tolerance the next frame tries half the count, below half of it
    /// three quarters (rounded up), else the same; never under `min_substeps`.
    #[test]
    fn the_next_frame_eases_its_count_by_how_far_under_the_tolerance_this_one_ended() {
        let t = StrainTolerance { max_strain: 0.02, min_substeps: 4, max_substeps: 128 };
        assert_eq!(next_substeps(&t, 128, 0.0049), 64);
        assert_eq!(next_substeps(&t, 128, 0.005), 96);
        assert_eq!(next_substeps(&t, 128, 0.0099), 96);
        assert_eq!(next_substeps(&t, 7, 0.0099), 6, "three quarters of 7, rounded up");
        assert_eq!(next_substeps(&t, 128, 0.01), 128);
        assert_eq!(next_substeps(&t, 128, 0.019), 128);
        assert_eq!(next_substeps(&t, 5, 0.0099), 4, "at least min_substeps");
        assert_eq!(next_substeps(&t, 5, 0.0), 4);
        assert_eq!(next_substeps(&t, 128, f32::NAN), 128, "a NaN stretch eases nothing");
    }
}
