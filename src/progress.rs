//! The progress bar of a bake: frames done of the total, time steps per second and the time left,
//! drawn on stderr, or nothing at all.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use weft::bake::Progress;

/// Frame-by-frame progress of a bake on stderr; a no-op when not enabled.
#[derive(Debug)]
pub(crate) struct Bar {
    enabled: bool,
    bar: Option<ProgressBar>,
    frames: u32,
    /// The count the first frame starts with (for the frames before a resumed bake's first).
    substeps: u32,
    /// Time steps counted so far (those before the first frame stepped estimated).
    steps: u64,
    /// The count the last frame kept: the estimate for every frame left.
    last: u32,
    /// Whether a frame was counted yet.
    counted: bool,
}

/// The bar's layout: its position counts time steps, so that `per_sec` reads as steps per second.
/// The length is the steps taken so far and, for every frame left, the count of the last frame
/// (the count changes from frame to frame in a bake to a strain tolerance).
const TEMPLATE: &str = "{elapsed_precise} [{wide_bar}] {msg} · steps {per_sec:1} · ETA {eta}";

impl Bar {
    /// A bar drawn on stderr once the bake starts, when `enabled`.
    pub(crate) fn new(enabled: bool) -> Self {
        Bar { enabled, bar: None, frames: 0, substeps: 0, steps: 0, last: 0, counted: false }
    }
}

impl Progress for Bar {
    fn start(&mut self, frames: u32, substeps: u32) {
        (self.frames, self.substeps, self.last) = (frames, substeps, substeps);
        self.bar = self.enabled.then(|| {
            let total = frames as u64 * substeps as u64;
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            // The template is a constant: it parses, and a failure would only cost the layout.
            if let Ok(style) = ProgressStyle::with_template(TEMPLATE) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message(format!("frame 0/{frames}"));
            bar
        });
    }

    fn frame_steps(&mut self, frame: u32, steps: u64, substeps: u32) {
        if !self.counted {
            // A resumed bake: the frames before its first, at the first frame's count.
            self.steps = (frame as u64 - 1) * self.substeps as u64;
            self.counted = true;
        }
        self.steps += steps;
        self.last = substeps;
    }

    fn frame_done(&mut self, frame: u32) {
        if let Some(bar) = &self.bar {
            let left = self.frames.saturating_sub(frame) as u64 * self.last as u64;
            bar.set_length(self.steps + left);
            bar.set_position(self.steps);
            bar.set_message(format!("frame {frame}/{}", self.frames));
        }
    }

    /// Removes the bar (the caller prints its own summary).
    fn finish(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Bar {
    /// A bake that fails leaves no half-drawn bar above its error line.
    fn drop(&mut self) {
        self.finish();
    }
}
