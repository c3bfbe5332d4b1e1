//! The progress bar of a bake: frames done of the total, time steps per second and the time left,
//! drawn on stderr, or nothing at all.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Frame-by-frame progress of a bake; a no-op when not enabled.
#[derive(Debug)]
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    frames: u32,
    substeps: u32,
}

/// The bar's layout: its position counts time steps, so that `per_sec` reads as steps per second.
const TEMPLATE: &str = "{elapsed_precise} [{wide_bar}] {msg} · steps {per_sec:1} · ETA {eta}";

impl Progress {
    /// A bar for `frames` frames of `substeps` time steps each, on stderr when `enabled`.
    pub(crate) fn new(enabled: bool, frames: u32, substeps: u32) -> Self {
        let bar = enabled.then(|| {
            let total = frames as u64 * substeps as u64;
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            // The template is a constant: it parses, and a failure would only cost the layout.
            if let Ok(style) = ProgressStyle::with_template(TEMPLATE) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message(format!("frame 0/{frames}"));
            bar
        });
        Progress { bar, frames, substeps }
    }

    /// Marks frame `frame` (1-based) as done.
    pub(crate) fn frame_done(&self, frame: u32) {
        if let Some(bar) = &self.bar {
            bar.set_position(frame as u64 * self.substeps as u64);
            bar.set_message(format!("frame {frame}/{}", self.frames));
        }
    }

    /// Removes the bar (the caller prints its own summary).
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    /// A bake that fails leaves no half-drawn bar above its error line.
    fn drop(&mut self) {
        self.finish();
    }
}
