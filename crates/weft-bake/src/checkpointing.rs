//! Checkpoints of a bake, and resuming from one (the file format is [`weft_io::checkpoint`]).
//!
//! A bake writes a checkpoint after a frame when its [`CheckpointPolicy`] says so: it flushes and
//! syncs every cache's temporary file and the statistics, then records the particle state and
//! where each file stands in `DIR/weft.checkpoint` (atomically). `weft bake --resume` reads it
//! back: if it belongs to this very bake (same [`fingerprint`]), the temporary files are reopened
//! and cut back to the recorded lengths, the state is put back, and the bake goes on from the
//! next frame. Because a bake is deterministic, a resumed bake writes the same bytes as one that
//! never stopped (the `resume` tests of the `weft` package). The checkpoint is removed once the bake has published its
//! files.

use std::hash::Hasher as _;
use std::time::{Duration, Instant};

use weft_core::Model;
use weft_core::digest::{Digest, Hash64};
use weft_io::CacheFormat;
use weft_io::CacheMark;
use weft_io::checkpoint::{Checkpoint, CheckpointView};
use weft_kernels::KernelPath;

use crate::stats::StatsLevel;

/// When a bake writes checkpoints.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CheckpointPolicy {
    /// Never.
    Never,
    /// After every `n`-th frame (`n ≥ 1`).
    EveryFrames(u32),
    /// After the first frame that ends at least this long after the previous checkpoint (or the
    /// start). When is a matter of wall time, but what is written never depends on it.
    Every(Duration),
}

impl Default for CheckpointPolicy {
    /// Every 30 s of baking: a crash costs at most about that much work.
    fn default() -> Self {
        CheckpointPolicy::Every(Duration::from_secs(30))
    }
}

/// Decides, frame by frame, whether to write a checkpoint.
#[derive(Debug)]
pub(crate) struct Schedule {
    policy: CheckpointPolicy,
    last: Instant,
}

impl Schedule {
    pub(crate) fn new(policy: CheckpointPolicy) -> Self {
        Schedule { policy, last: Instant::now() }
    }

    /// Whether to write a checkpoint after `frame` (not after the last one: the bake is about to
    /// publish its files).
    pub(crate) fn due(&mut self, frame: u32, last_frame: u32) -> bool {
        if frame >= last_frame {
            return false;
        }
        let due = match self.policy {
            CheckpointPolicy::Never => false,
            CheckpointPolicy::EveryFrames(n) => frame.is_multiple_of(n.max(1)),
            CheckpointPolicy::Every(period) => self.last.elapsed() >= period,
        };
        if due {
            self.last = Instant::now();
        }
        due
    }
}

/// Identifies a bake: the model as built (its every field, bit for bit, through
/// [`weft_core::digest`]), the formats, the kernel, the statistics level and the weft build
/// (version and SIMD level, since the bits of a bake are promised per build). Two bakes with the
/// same fingerprint write the same bytes.
pub fn fingerprint(model: &Model, formats: &[CacheFormat], kernel: KernelPath, stats: StatsLevel) -> u64 {
    let mut h = Hash64::default();
    let build = format!(
        "weft {} | {} | {kernel:?} | {formats:?} | {stats:?}",
        env!("CARGO_PKG_VERSION"),
        weft_kernels::simd_level()
    );
    build.digest(&mut h);
    model.digest(&mut h);
    h.finish()
}

/// The model's state now, for a checkpoint after `frame`, with the caches' `marks` and the
/// statistics file's length `stats_bytes`: borrowed from the model, never copied. The model's
/// substep count is the one the next frame starts with.
pub(crate) fn capture<'a>(
    model: &'a Model,
    fingerprint: u64,
    frame: u32,
    stats_since: u64,
    marks: &'a [CacheMark],
    stats_bytes: u64,
) -> CheckpointView<'a> {
    let p = model.particles();
    CheckpointView {
        fingerprint,
        frame,
        time: model.time(),
        substeps: model.settings().substeps,
        stats_since,
        positions: p.positions(),
        prev_positions: p.prev_positions(),
        velocities: p.velocities(),
        caches: marks,
        stats_bytes,
    }
}

/// Why `checkpoint` cannot continue this bake, if it cannot.
pub(crate) fn unusable(
    checkpoint: &Checkpoint,
    model: &Model,
    fingerprint: u64,
    caches: usize,
) -> Option<String> {
    let frames = model.settings().frames;
    if checkpoint.fingerprint != fingerprint {
        return Some("it belongs to another scene, weft build, kernel or set of formats".into());
    }
    if checkpoint.positions.len() != model.particles().len() {
        return Some(format!(
            "it holds {} particles, the scene has {}",
            checkpoint.positions.len(),
            model.particles().len()
        ));
    }
    if checkpoint.caches.len() != caches {
        return Some(format!("it records {} caches, this bake writes {caches}", checkpoint.caches.len()));
    }
    let settings = model.settings();
    let (least, most) = settings
        .tolerance
        .map_or((settings.substeps, settings.substeps), |t| (t.min_substeps, t.max_substeps));
    if !(least..=most).contains(&checkpoint.substeps) {
        return Some(format!(
            "its next frame takes {} substeps, this bake takes {least} to {most}",
            checkpoint.substeps
        ));
    }
    if checkpoint.frame == 0 || checkpoint.frame >= frames {
        return Some(format!("it is at frame {} of {frames}", checkpoint.frame));
    }
    if let Some(i) =
        checkpoint.positions.iter().zip(model.particles().inv_mass()).position(|(p, w)| p[3] != *w)
    {
        return Some(format!("particle {i} has another mass"));
    }
    None
}

/// Puts the particle state, the time and the substep count of `checkpoint` back into `model`
/// (a checkpoint [`unusable`] found usable).
pub(crate) fn restore(model: &mut Model, checkpoint: &Checkpoint) {
    let parts = model.parts_mut();
    parts.particles.positions.copy_from_slice(&checkpoint.positions);
    parts.particles.prev_positions.copy_from_slice(&checkpoint.prev_positions);
    parts.particles.velocities.copy_from_slice(&checkpoint.velocities);
    *parts.time = checkpoint.time;
    model.set_substeps(checkpoint.substeps).expect("unusable() checked the count against the settings");
}

/// The state a frame starts from (particle positions, previous positions, velocities and the
/// time: everything a time step reads that it also changes), so that a frame over the strain
/// tolerance can be stepped again from its start. The buffers are kept from frame to frame.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    positions: Vec<[f32; 4]>,
    prev_positions: Vec<[f32; 4]>,
    velocities: Vec<[f32; 4]>,
    time: f64,
}

impl Snapshot {
    /// Records `model`'s state now.
    pub(crate) fn take(&mut self, model: &Model) {
        let p = model.particles();
        for (to, from) in [
            (&mut self.positions, p.positions()),
            (&mut self.prev_positions, p.prev_positions()),
            (&mut self.velocities, p.velocities()),
        ] {
            to.clear();
            to.extend_from_slice(from);
        }
        self.time = model.time();
    }

    /// Puts the recorded state back into `model` (the one it was taken of).
    pub(crate) fn put_back(&self, model: &mut Model) {
        let parts = model.parts_mut();
        parts.particles.positions.copy_from_slice(&self.positions);
        parts.particles.prev_positions.copy_from_slice(&self.prev_positions);
        parts.particles.velocities.copy_from_slice(&self.velocities);
        *parts.time = self.time;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules() {
        let mut every_3 = Schedule::new(CheckpointPolicy::EveryFrames(3));
        let due: Vec<u32> = (1..=10).filter(|&f| every_3.due(f, 10)).collect();
        assert_eq!(due, [3, 6, 9]);
        let mut never = Schedule::new(CheckpointPolicy::Never);
        assert!((1..=10).all(|f| !never.due(f, 10)));
        let mut always = Schedule::new(CheckpointPolicy::Every(Duration::ZERO));
        assert_eq!((1..=4).filter(|&f| always.due(f, 4)).count(), 3, "never after the last frame");
    }

    #[test]
    fn fingerprints_are_stable_and_tell_bakes_apart() {
        let grid = |n| weft_testkit::models::Grid::new(n, n).model(weft_core::SimSettings::default());
        let a = grid(6);
        let b = grid(6);
        let pc2 = [CacheFormat::Pc2];
        // Built twice, the same model has the same fingerprint (nothing in it hashes by address
        // or by a randomly seeded map).
        assert_eq!(
            fingerprint(&a, &pc2, KernelPath::Simd, StatsLevel::Light),
            fingerprint(&b, &pc2, KernelPath::Simd, StatsLevel::Light)
        );
        assert_ne!(
            fingerprint(&a, &pc2, KernelPath::Simd, StatsLevel::Light),
            fingerprint(&a, &pc2, KernelPath::Scalar, StatsLevel::Light)
        );
        assert_ne!(
            fingerprint(&a, &pc2, KernelPath::Simd, StatsLevel::Light),
            fingerprint(&a, &[CacheFormat::Pc2, CacheFormat::Usd], KernelPath::Simd, StatsLevel::Light)
        );
        assert_ne!(
            fingerprint(&a, &pc2, KernelPath::Simd, StatsLevel::Light),
            fingerprint(&a, &pc2, KernelPath::Simd, StatsLevel::Full)
        );
        let c = grid(7);
        assert_ne!(
            fingerprint(&a, &pc2, KernelPath::Simd, StatsLevel::Light),
            fingerprint(&c, &pc2, KernelPath::Simd, StatsLevel::Light)
        );
    }

    #[test]
    fn one_bit_anywhere_in_the_model_changes_the_fingerprint() {
        let print = |m: &Model| fingerprint(m, &[CacheFormat::Pc2], KernelPath::Simd, StatsLevel::Light);
        let grid = weft_testkit::models::Grid::new(6, 6);
        let a = grid.model(weft_core::SimSettings::default());
        // One coordinate of one particle one ulp off (particles go in bit for bit).
        let mut moved = a.clone();
        let x = &mut moved.parts_mut().particles.positions[17][0];
        *x = x.next_up();
        assert_ne!(print(&a), print(&moved));
        // Every stretch constraint a little softer (the constraint lanes go in bit for bit).
        let soft = weft_testkit::models::Grid { stretch: 1e-9, ..grid.clone() };
        assert_ne!(print(&a), print(&soft.model(weft_core::SimSettings::default())));
        // A setting (small values go in as their text).
        let slower = weft_core::SimSettings { substeps: 7, ..weft_core::SimSettings::default() };
        assert_ne!(print(&a), print(&grid.model(slower)));
    }
}
