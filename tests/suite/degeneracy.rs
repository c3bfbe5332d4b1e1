//! Promise: degenerate input is handled as the bad-input policy (docs/cli.md) says.
//!
//! * At run time, two particles driven onto each other (or flung beyond the longest projectable
//!   distance) make their constraint degenerate: the kernel skips that lane through a mask, the
//!   step statistics count it, and every position stays finite, in the SIMD path, its scalar twin
//!   and the reference alike.
//! * A constraint whose particles are all pinned can never move: it is left out at build and
//!   counted.

use weft_core::kinds::KindId;
use weft_core::kinds::distance::MAX_LENGTH;
use weft_core::limits::Limits;
use weft_core::units::{Compliance, Elasticity};
use weft_core::{ClothDesc, EdgeSet, MassSpec, Model, ModelBuilder};
use weft_kernels::KernelPath;
use weft_reference::ReferenceSolver;
use weft_testkit::models::{positions, run, settings};

/// Particles 0 and 1 (joined by an edge) are 0.2 m apart and move towards each other at 1 m/s
/// each, so they meet exactly at `x = 0` after 0.1 s; particles 2..10 form a chain off to the
/// side that keeps the batches busy.
fn head_on(compliance: f32) -> Model {
    let mut positions = vec![[-0.1, 0.0, 0.0], [0.1, 0.0, 0.0]];
    let mut velocities = vec![[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]];
    let mut edges = vec![[0, 1]];
    for i in 0..9u32 {
        positions.push([i as f32 * 0.1, 1.0, 0.0]);
        velocities.push([0.0; 3]);
        if i > 0 {
            edges.push([i + 1, i + 2]);
        }
    }
    let mut b = ModelBuilder::new(settings(10.0, 1, 3, [0.0; 3]), Limits::default()).unwrap();
    b.add_cloth(&ClothDesc {
        name: "head-on".into(),
        positions,
        velocities: Some(velocities),
        mass: MassSpec::ParticleMass(0.5),
        edge_sets: vec![EdgeSet {
            edges,
            // The rest length is the distance they started at, but the edge is very soft, so the
            // particles really do meet.
            elasticity: Elasticity::Compliance(Compliance::new(compliance).unwrap()),
            ..EdgeSet::stretch()
        }],
        pins: vec![2],
        ..ClothDesc::default()
    })
    .unwrap();
    b.build().unwrap()
}

#[test]
fn particles_driven_onto_each_other_are_skipped_and_counted() {
    for path in [KernelPath::Simd, KernelPath::Scalar] {
        let mut m = head_on(1e3);
        let stats = run(&mut m, 1, path);
        // Predicted onto the same point: 3 iterations, each skips the lane.
        assert_eq!(stats.kinds[KindId::Distance].degenerate, 3, "{path:?}");
        assert_eq!(positions(&m)[0], positions(&m)[1], "nothing moved them apart");
        assert!(m.particles().all_finite());
        let mut r = ReferenceSolver::from_model(&head_on(1e3));
        assert_eq!(r.step().degenerate, 3);
        // Later steps stay finite whatever happens.
        run(&mut m, 50, path);
        assert!(m.particles().all_finite());
    }
}

#[test]
fn particles_flung_beyond_the_longest_distance_are_skipped_and_counted() {
    // ±1e11 m/s: after one 0.1 s step the pair is 2e10 m apart, beyond MAX_LENGTH.
    let mut b = ModelBuilder::new(settings(10.0, 1, 2, [0.0; 3]), Limits::default()).unwrap();
    b.add_cloth(&ClothDesc {
        name: "fling".into(),
        positions: vec![[0.0; 3], [1.0, 0.0, 0.0]],
        velocities: Some(vec![[-1e11, 0.0, 0.0], [1e11, 0.0, 0.0]]),
        edge_sets: vec![EdgeSet { edges: vec![[0, 1]], ..EdgeSet::stretch() }],
        ..ClothDesc::default()
    })
    .unwrap();
    let mut m = b.build().unwrap();
    let stats = run(&mut m, 3, KernelPath::Simd);
    assert_eq!(
        stats.kinds[KindId::Distance].degenerate,
        3 * 2,
        "beyond MAX_LENGTH = {MAX_LENGTH} m: skipped every iteration"
    );
    assert!(m.particles().all_finite());
}

#[test]
fn a_constraint_between_two_pins_is_dropped_and_reported() {
    let mut b = ModelBuilder::new(settings(10.0, 1, 1, [0.0, -9.81, 0.0]), Limits::default()).unwrap();
    b.add_cloth(&ClothDesc {
        name: "pinned".into(),
        positions: vec![[0.0; 3], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]],
        edge_sets: vec![EdgeSet { edges: vec![[0, 1], [1, 2]], ..EdgeSet::stretch() }],
        pins: vec![0, 1],
        ..ClothDesc::default()
    })
    .unwrap();
    let mut m = b.build().unwrap();
    assert_eq!(m.report().dropped_pinned, 1);
    assert_eq!(m.sets().distance.len(), 1, "only [1, 2] is solved");
    let stats = run(&mut m, 5, KernelPath::Simd);
    assert_eq!(stats.dropped_at_build, 1, "the step statistics report it too");
    assert_eq!(positions(&m)[0], [0.0; 3]);
    assert_eq!(positions(&m)[1], [1.0, 0.0, 0.0]);
}

#[test]
fn all_pinned_cloth_never_moves() {
    let mut b = ModelBuilder::new(settings(10.0, 2, 3, [0.0, -9.81, 0.0]), Limits::default()).unwrap();
    b.add_cloth(&ClothDesc {
        name: "frozen".into(),
        positions: vec![[0.0; 3], [1.0, 0.0, 0.0]],
        velocities: Some(vec![[5.0; 3], [-5.0; 3]]),
        edge_sets: vec![EdgeSet { edges: vec![[0, 1]], ..EdgeSet::stretch() }],
        pins: vec![0, 1],
        ..ClothDesc::default()
    })
    .unwrap();
    let mut m = b.build().unwrap();
    assert!(m.sets().distance.is_empty());
    run(&mut m, 10, KernelPath::Simd);
    assert_eq!(positions(&m), vec![[0.0; 3], [1.0, 0.0, 0.0]]);
}
