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
    substeps: u32,
}

/// The bar's layout: its position counts time steps, so that `per_sec` reads as steps per second.
const TEMPLATE: &str = "{elapsed_precise} [{wide_bar}] {msg} · steps {per_sec:1} · ETA {eta}";

impl Bar {
    /// A bar drawn on stderr once the bake starts, when `enabled`.
    pub(crate) fn new(enabled: bool) -> Self {
        Bar { enabled, bar: None, frames: 0, substeps: 0 }
    }
}

impl Progress for Bar {
    fn start(&mut self, frames: u32, substeps: u32) {
        (self.frames, self.substeps) = (frames, substeps);
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

    fn frame_done(&mut self, frame: u32) {
        if let Some(bar) = &self.bar {
            bar.set_position(frame as u64 * self.substeps as u64);
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
