//! Promise: the peak heap `weft validate` estimates for a bake (`weft_bake::memory::peak_bytes`)
//! is within a factor of 1.5 either way of the heap a bake takes at its peak, counted by the
//! allocator; and a bake's heap does not grow with the number of frames (caches are written
//! sample by sample; checked without the intersection count, whose grid grows as the cloth
//! crumples).

use weft_bake::stats::StatsLevel;
use weft_bake::{BakeOptions, CheckpointPolicy, bake_model};
use weft_bench::memory::{Counting, peak, reset_peak};

#[global_allocator]
static HEAP: Counting = Counting;

/// The peak heap of a bake of the `n × n` comparison grid for `frames` frames, in bytes.
fn baked_peak(n: u32, frames: u32, stats: StatsLevel) -> (usize, u64) {
    let model = weft_bench::comparison_grid(n, frames).unwrap();
    let estimate = weft_bake::memory::peak_bytes(&model, 1);
    let dir = tempfile::tempdir().unwrap();
    let options = BakeOptions {
        threads: Some(1),
        checkpoints: CheckpointPolicy::Never,
        stats,
        ..BakeOptions::new(dir.path())
    };
    let before = reset_peak();
    let mut baked = model.clone();
    bake_model(&mut baked, &options).unwrap();
    (peak() - before, estimate)
}

#[test]
fn the_estimate_is_near_the_counted_peak_and_frames_cost_no_memory() {
    let (counted, estimate) = baked_peak(48, 4, StatsLevel::Light);
    let ratio = estimate as f64 / counted as f64;
    assert!((1.0 / 1.5..1.5).contains(&ratio), "estimate {estimate} B, counted {counted} B");
    let (short, _) = baked_peak(48, 4, StatsLevel::Off);
    let (long, _) = baked_peak(48, 40, StatsLevel::Off);
    assert!((long as f64) < short as f64 * 1.02, "4 frames: {short} B, 40 frames: {long} B");
}
