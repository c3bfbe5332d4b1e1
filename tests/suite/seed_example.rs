//! Promise: the worked example of docs/physics.md holds exactly, through the public API of the fast path and
//! of the reference, and `λ` is reset every time step but accumulated across iterations.
//!
//! One end pinned, the other 1 kg at 2 m, rest length 1 m, `h = 0.1 s`, no gravity:
//! compliance 0 gives `Δλ = −1` and the free end at 1 m; compliance 0.01 m/N gives `α̃ = 1`,
//! denominator 2, `Δλ = −0.5` and the free end at 1.5 m; a second iteration in the same step gives
//! `Δλ = 0` and the end stays at 1.5 m.

use weft_kernels::{KernelPath, StepOptions, step};
use weft_reference::ReferenceSolver;
use weft_testkit::models::{positions, seed_model};

fn lambda(model: &weft_core::Model) -> f32 {
    model.sets().distance.solve_order().next().unwrap().1
}

#[test]
fn rigid_constraint_pulls_the_end_to_one_metre() {
    for path in [KernelPath::Simd, KernelPath::Scalar] {
        let mut m = seed_model(0.0, 1);
        step(&mut m, &StepOptions { path, residual: true });
        assert_eq!(positions(&m)[1], [1.0, 0.0, 0.0], "{path:?}");
        assert_eq!(positions(&m)[0], [0.0, 0.0, 0.0], "the pin does not move");
        assert_eq!(lambda(&m), -1.0, "Δλ = −1 kg·m");
        // v = (x − x_prev)/h = (1 − 2)/0.1 m/s
        assert_eq!(m.particles().velocities()[1][0], -10.0);
    }
}

#[test]
fn compliance_001_leaves_the_end_at_one_and_a_half() {
    for iterations in [1, 2, 5] {
        for path in [KernelPath::Simd, KernelPath::Scalar] {
            let mut m = seed_model(0.01, iterations);
            step(&mut m, &StepOptions { path, residual: true });
            assert_eq!(positions(&m)[1], [1.5, 0.0, 0.0], "{iterations} iterations, {path:?}");
            // λ accumulates: −0.5 after the first iteration, +0 after each further one.
            assert_eq!(lambda(&m), -0.5);
        }
    }
}

#[test]
fn reference_agrees_exactly() {
    for (compliance, expected) in [(0.0, 1.0), (0.01, 1.5)] {
        for iterations in [1, 2] {
            let mut r = ReferenceSolver::from_model(&seed_model(compliance, iterations));
            r.step();
            assert_eq!(r.positions()[1], [expected, 0.0, 0.0]);
        }
    }
}

/// λ is reset at the start of every step: the second step starts from `λ = 0`, not from the
/// `−0.5` the first step left. (Were λ kept, its `−α̃λ` term would push the end further: after
/// step 1 the end is at 1.5 m moving at −5 m/s; step 2 predicts 1.0 m, C = 0, and with λ = 0 the
/// projection leaves it there with Δλ = 0; with λ = −0.5 kept, Δλ = +0.25 would move it to 1.25 m.)
#[test]
fn lambda_is_reset_each_step_and_accumulated_within_it() {
    let mut m = seed_model(0.01, 2);
    step(&mut m, &StepOptions::default());
    assert_eq!(lambda(&m), -0.5);
    step(&mut m, &StepOptions::default());
    assert_eq!(positions(&m)[1], [1.0, 0.0, 0.0]);
    assert_eq!(lambda(&m), 0.0, "the second step starts from λ = 0");
}
