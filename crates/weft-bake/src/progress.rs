//! Being told how a bake advances: [`Progress`].

/// Told how a bake advances, frame by frame (a progress bar, a log). Every method does nothing
/// unless implemented; `()` is the progress that ignores everything.
///
/// A bake calls [`Progress::start`] once before its first frame, [`Progress::frame_steps`] and
/// then [`Progress::frame_done`] after every frame it steps, and [`Progress::finish`] after its
/// last frame, before it publishes its files. A bake that fails stops calling, without
/// [`Progress::finish`]. After each frame but the last it asks [`Progress::should_stop`].
pub trait Progress: Send {
    /// The bake is about to step its frames: `frames` in all (from frame 1; a resumed bake goes on
    /// after its checkpoint's frame), `substeps` time steps each. In a bake to a strain tolerance
    /// the count changes from frame to frame: `substeps` is then the count the first frame starts
    /// with, an estimate, and [`Progress::frame_steps`] tells the steps each frame took.
    fn start(&mut self, frames: u32, substeps: u32) {
        let _ = (frames, substeps);
    }

    /// Frame `frame` (from 1) took `steps` time steps, tries stepped again at a higher count
    /// included; it ends with `substeps` of them (the count it kept). Called before
    /// [`Progress::frame_done`]. With a fixed count, `steps == substeps` always.
    fn frame_steps(&mut self, frame: u32, steps: u64, substeps: u32) {
        let _ = (frame, steps, substeps);
    }

    /// Frame `frame` (from 1) is stepped and its samples written.
    fn frame_done(&mut self, frame: u32) {
        let _ = frame;
    }

    /// Every frame is stepped; the files are about to be published.
    fn finish(&mut self) {}

    /// Asked after [`Progress::frame_done`] of every frame but the last: whether the bake should
    /// stop there (a user's Ctrl-C, a cancel button). A bake that stops writes a checkpoint after
    /// that frame, leaves its temporary files as they stand and returns
    /// [`BakeError::Stopped`](crate::BakeError::Stopped); baking again with
    /// [`BakeOptions::resume`](crate::BakeOptions::resume) goes on from there to the same bytes.
    /// (A bake whose checkpoints are [`CheckpointPolicy::Never`](crate::CheckpointPolicy::Never)
    /// and which does not resume writes none: it stops with its temporary files removed.)
    fn should_stop(&mut self) -> bool {
        false
    }
}

/// No progress to tell.
impl Progress for () {}
