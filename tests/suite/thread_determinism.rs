//! Promise: a step is a pure function of the model: bit-identical positions, velocities, `λ` and
//! statistics for thread pools of 1, 2, 3 and 8 threads, run after run.
//!
//! Two cloths: a large grid in its natural order, whose constraints are mostly interior to the
//! particle blocks solved in parallel (stage 1), and the same grid with its particles renumbered
//! at random, whose constraints mostly cross blocks, so that the boundary colours are cut into
//! several parallel chunks (stage 2).

use weft_kernels::{KernelPath, StepStats, schedule::CHUNK_BATCHES};
use weft_testkit::models::{Grid, run, settings, state_bits};

fn bake(threads: usize, damping: f32, shuffle: Option<u64>) -> (Vec<u32>, StepStats) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let mut grid = Grid::new(97, 131);
    grid.stretch = 1e-7;
    grid.shear = 1e-5;
    grid.damping = damping;
    grid.shuffle = shuffle;
    let mut model = grid.model(settings(60.0, 4, 6, [0.3, -9.81, 0.1]));
    let r = model.report();
    assert!(r.sets.distance.blocks >= 3, "several blocks run in parallel");
    if shuffle.is_some() {
        let largest = r.sets.distance.boundary_colours.iter().max().copied().unwrap();
        assert!(largest > 4 * CHUNK_BATCHES * 8, "boundary colours span several chunks");
    }
    let stats = pool.install(|| run(&mut model, 30, KernelPath::Simd));
    (state_bits(&model), stats)
}

#[test]
fn one_two_three_and_eight_threads_give_the_same_bits() {
    for (damping, shuffle) in [(0.0, None), (0.5, None), (0.0, Some(7))] {
        let (one, stats) = bake(1, damping, shuffle);
        for threads in [2, 3, 8, 2] {
            let (other, other_stats) = bake(threads, damping, shuffle);
            assert_eq!(stats, other_stats, "{threads} threads: statistics");
            assert!(one == other, "{threads} threads, damping {damping}, shuffle {shuffle:?}: state differs");
        }
    }
}
