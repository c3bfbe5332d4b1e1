//! Promise: a step is a pure function of the model: bit-identical positions, velocities, `λ` and
//! statistics for thread pools of 1, 2, 3 and 8 threads, run after run.
//!
//! The cloth is large enough that every colour is cut into several parallel chunks.

mod common;

use common::{Grid, run, settings, state_bits};
use weft_kernels::{KernelPath, StepStats, distance::CHUNK_BATCHES};

fn bake(threads: usize, damping: f32) -> (Vec<u32>, StepStats) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let mut grid = Grid::new(97, 83);
    grid.stretch = 1e-7;
    grid.shear = 1e-5;
    grid.damping = damping;
    let mut model = grid.model(settings(60.0, 4, 6, [0.3, -9.81, 0.1]));
    let smallest_colour = model.report().distance_colours.iter().min().copied().unwrap();
    assert!(smallest_colour > 2 * CHUNK_BATCHES * 8, "every colour spans several chunks");
    let stats = pool.install(|| run(&mut model, 30, KernelPath::Simd));
    (state_bits(&model), stats)
}

#[test]
fn one_two_three_and_eight_threads_give_the_same_bits() {
    for damping in [0.0, 0.5] {
        let (one, stats) = bake(1, damping);
        for threads in [2, 3, 8, 2] {
            let (other, other_stats) = bake(threads, damping);
            assert_eq!(stats, other_stats, "{threads} threads: statistics");
            assert!(one == other, "{threads} threads: state differs");
        }
    }
}
