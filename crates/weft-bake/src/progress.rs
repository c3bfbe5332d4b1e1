//! Being told how a bake advances: [`Progress`].

/// Told how a bake advances, frame by frame (a progress bar, a log). Every method does nothing
/// unless implemented; `()` is the progress that ignores everything.
///
/// A bake calls [`Progress::start`] once before its first frame, [`Progress::frame_steps`] and
/// then [`Progress::frame_done`] after every frame it steps, and [`Progress::finish`] after its
/// last frame, before it publishes its files. A bake that fails stops calling, without
/// [`Progress::finish`].
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
}

/// No progress to tell.
impl Progress for () {}
