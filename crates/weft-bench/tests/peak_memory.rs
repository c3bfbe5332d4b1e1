//! Promise: the heap a bake takes at its peak, counted by the allocator, is at most what
//! `weft validate`'s estimate gives it (`weft_bake::memory::bake_heap_bytes`, the part of
//! `peak_bytes` that is heap a bake of a model takes), and not a quarter more (every term is an
//! array the bake allocates; on this small grid the fixed terms weigh most); and a bake's heap
//! does not grow with the number of frames (caches are written sample by sample, and the
//! intersection count's buffer is sized by the triangles, not by how the cloth crumples); and
//! the estimate covers the surface self-collision stage of a sheet folded onto itself.
//!
//! The count allocates its search's buffer at the first frame it has to search (a cloth that
//! lies unfolded is not searched, `weft_geometry::outline`), so the bakes compared here are long
//! enough for the hanging grid to fold: a bake of a few frames holds less.

use weft_bake::stats::StatsLevel;
use weft_bake::{BakeOptions, CheckpointPolicy, bake_model};
use weft_bench::memory::{Counting, peak, reset_peak};

#[global_allocator]
static HEAP: Counting = Counting;

/// Held by each test while it counts: the count is the whole process's, and tests run on
/// threads side by side.
static COUNTING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The peak heap of a bake of `model` (one thread, no checkpoints, statistics at `stats`), and
/// the heap part of the estimate for it, in bytes.
fn counted_peak(model: &weft_core::Model, stats: StatsLevel) -> (usize, u64) {
    let estimate = weft_bake::memory::bake_heap_bytes(model, 1);
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

/// [`counted_peak`] of the `n × n` comparison grid for `frames` frames.
fn baked_peak(n: u32, frames: u32, stats: StatsLevel) -> (usize, u64) {
    counted_peak(&weft_bench::comparison_grid(n, frames).unwrap(), stats)
}

#[test]
fn the_estimate_is_near_the_counted_peak_and_frames_cost_no_memory() {
    let _alone = COUNTING.lock().unwrap_or_else(|e| e.into_inner());
    // Every frame measured: the grid folds within 40 frames, and its count searches.
    let (counted, estimate) = baked_peak(48, 40, StatsLevel::Full);
    let ratio = estimate as f64 / counted as f64;
    assert!((1.0..1.25).contains(&ratio), "estimate {estimate} B, counted {counted} B");
    // Unfolded for its 4 frames, the grid is not searched: it holds less than the search.
    let (unfolded, _) = baked_peak(48, 4, StatsLevel::Full);
    let search = 2 * 47 * 47 * weft_geometry::intersections::BYTES_PER_TRIANGLE;
    assert!(unfolded + search / 2 < counted, "4 frames: {unfolded} B, 40 frames: {counted} B");
    let (long, _) = baked_peak(48, 120, StatsLevel::Full);
    assert!((long as f64) < counted as f64 * 1.02, "40 frames: {counted} B, 120 frames: {long} B");
}

/// [`counted_peak`] of the scene at `path`, at the default statistics.
fn scene_peak(path: &str) -> (usize, u64) {
    let limits = weft_core::limits::Limits::default();
    let scene = weft_io::scene::load_scene(std::path::Path::new(path), &limits).unwrap();
    counted_peak(&scene.build_model().unwrap(), StatsLevel::default())
}

#[test]
fn the_estimate_covers_surface_self_collision_as_layers_stack() {
    let _alone = COUNTING.lock().unwrap_or_else(|e| e.into_inner());
    // The folding sheet: its upper half laid onto the lower one, held 4 mm apart by the surface
    // stage, whose kept pairs, scanned pairs and contacts grow as the layers meet.
    let (counted, estimate) = scene_peak(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/fold.toml"));
    eprintln!("fold: counted {counted} B, estimate {estimate} B");
    assert!(counted as u64 <= estimate, "estimate {estimate} B, counted {counted} B");
}
