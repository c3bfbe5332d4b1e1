//! Promise: the adversarial numerics of the README's table that no other test file covers are
//! handled as the table says, on the SIMD path and in the reference alike: never a NaN, a panic
//! or an unbounded correction; an error where the input is illegal; a skipped and counted
//! projection where a constraint has no usable direction or correction.
//!
//! * coincident particles that no constraint joins build and stay finite;
//! * an all-pinned grid with every constraint kind drops every constraint at build and counts it;
//! * rigid constraints between 1e-6 kg and 1e6 kg particles hold, and the heavy side does not
//!   notice the light one;
//! * initial speeds of 1e30 m/s stay finite, their constraints skipped and counted;
//! * extreme damping times an extreme relative velocity (whose `Δλ` overflows `f32`) is skipped
//!   and counted — the fuzz finding `fuzz/regressions/arbitrary_scene/damping-overflow-*`.

use weft_core::kinds::KindId;
use weft_core::kinds::bending::BendingDesc;
use weft_core::limits::Limits;
use weft_core::units::{Compliance, Elasticity};
use weft_core::{ClothDesc, EdgeSet, MassSpec, Model, ModelBuilder, SimSettings};
use weft_kernels::{KernelPath, StepOptions, StepStats, step};
use weft_reference::{ReferenceSolver, ReferenceStepStats};
use weft_testkit::models::{max_diff, positions, settings};

fn compliance(alpha: f32) -> Elasticity {
    Elasticity::Compliance(Compliance::new(alpha).unwrap())
}

fn build(settings: SimSettings, cloth: &ClothDesc) -> Model {
    let mut b = ModelBuilder::new(settings, Limits::default()).unwrap();
    b.add_cloth(cloth).unwrap();
    b.build().unwrap()
}

/// Steps the SIMD path and the reference side by side, checking after every step that both are
/// finite and count the same degenerate projections. Returns the totals of both.
fn run_both(model: &mut Model, steps: usize) -> (StepStats, ReferenceStepStats, ReferenceSolver) {
    let mut reference = ReferenceSolver::from_model(model);
    let mut fast_total = StepStats::default();
    let mut slow_total = ReferenceStepStats::default();
    for k in 0..steps {
        let fast = step(model, &StepOptions { path: KernelPath::Simd, residual: true });
        let slow = reference.step();
        assert!(model.particles().all_finite(), "SIMD: non-finite state after step {k}");
        assert!(reference.positions().iter().flatten().all(|c| c.is_finite()), "reference: step {k}");
        assert_eq!(fast.degenerate(), slow.degenerate, "step {k}: both count the same skips");
        fast_total.accumulate(&fast);
        slow_total.degenerate += slow.degenerate;
        slow_total.kinds[KindId::Distance] += slow.kinds[KindId::Distance];
        slow_total.kinds[KindId::Bending] += slow.kinds[KindId::Bending];
    }
    (fast_total, slow_total, reference)
}

#[test]
fn coincident_particles_not_joined_stay_finite() {
    // Particles 1 and 2 share a position; no constraint joins them, so nothing needs a
    // direction between them. They hang from 0 by two rigid edges and fall together.
    let cloth = ClothDesc {
        name: "twins".into(),
        positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]],
        edge_sets: vec![EdgeSet { edges: vec![[0, 1], [0, 2]], ..EdgeSet::stretch() }],
        pins: vec![0],
        ..ClothDesc::default()
    };
    let mut model = build(settings(60.0, 4, 8, [0.0, -9.81, 0.0]), &cloth);
    let (fast, _, reference) = run_both(&mut model, 120);
    assert_eq!(fast.degenerate(), 0, "no constraint lies between the twins");
    let p = positions(&model);
    assert_eq!(p[1], p[2], "twins under the same forces stay twins");
    assert!(p[1][1] < -0.5, "they swung down: {:?}", p[1]);
    assert!(max_diff(&p, &reference.positions()) <= 1e-4);
}

#[test]
fn an_all_pinned_grid_drops_and_counts_every_distance_constraint() {
    let grid = weft_core::grid::GridDesc {
        resolution: [5, 4],
        size: [1.0, 1.0],
        origin: [0.0; 3],
        plane: weft_core::grid::GridPlane::XY,
    };
    let mut cloth = grid.generate(&Limits::default()).unwrap().into_cloth(
        "frozen",
        MassSpec::Density(0.2),
        compliance(0.0),
        compliance(1e-6),
    );
    let distance_constraints: usize = cloth.edge_sets.iter().map(|s| s.edges.len()).sum();
    assert!(distance_constraints > 0);
    cloth.pins = (0..20).collect();
    cloth.velocities = Some(vec![[1e3, -1e3, 7.0]; 20]);
    cloth.kinds.bending = Some(BendingDesc { elasticity: compliance(1e-3), damping: 0.1 });
    let mut model = build(settings(60.0, 2, 4, [0.0, -9.81, 0.0]), &cloth);
    let report = model.report().clone();
    assert_eq!(report.dropped_pinned, distance_constraints, "every distance constraint dropped, and counted");
    assert_eq!(report.stretch + report.shear, 0);
    let before = positions(&model);
    let (fast, slow, _) = run_both(&mut model, 10);
    assert_eq!(fast.dropped_at_build, distance_constraints, "the step statistics count them too");
    assert_eq!((fast.degenerate(), slow.degenerate), (0, 0));
    assert_eq!(positions(&model), before, "nothing moves");
}

/// A heavy triangle (1e6 kg at each corner) with a light one (1e-6 kg corners) hanging off its
/// corner at the origin, all joined by rigid edges. Masses come from the density: the heavy
/// triangle's area is 1e12 times the light one's.
fn mass_ratio_cloth(kick: f32) -> ClothDesc {
    let positions = vec![
        [0.0, 0.0, 0.0],    // 0: heavy corner shared with the light triangle
        [2000.0, 0.0, 0.0], // 1: heavy
        [0.0, 1000.0, 0.0], // 2: heavy
        [-1e-3, 0.0, 0.0],  // 3: light
        [0.0, -2e-3, 0.0],  // 4: light
    ];
    let triangles = vec![[0, 1, 2], [0, 4, 3]];
    let edges = vec![[0, 1], [1, 2], [0, 2], [0, 3], [3, 4], [0, 4]];
    ClothDesc {
        name: "ratio".into(),
        positions,
        velocities: Some(vec![[0.0; 3], [0.0; 3], [0.0; 3], [0.0, 0.0, kick], [0.0, 0.0, -kick]]),
        mass: MassSpec::Density(3.0),
        triangles,
        edge_sets: vec![EdgeSet { edges, ..EdgeSet::stretch() }],
        ..ClothDesc::default()
    }
}

#[test]
fn rigid_constraints_between_1e_minus_6_and_1e6_kg_hold() {
    let settings = settings(240.0, 1, 16, [0.0, -9.81, 0.0]);
    let mut kicked = build(settings.clone(), &mass_ratio_cloth(100.0));
    let inv_mass = kicked.particles().inv_mass().to_vec();
    let ratio = inv_mass[3] / inv_mass[1];
    assert!((0.99e12..=1.01e12).contains(&ratio), "the masses span 1e-6 to 1e6 kg: ratio {ratio:e}");
    let mut quiet = build(settings, &mass_ratio_cloth(0.0));
    let (fast, _, reference) = run_both(&mut kicked, 60);
    run_both(&mut quiet, 60);
    assert_eq!(fast.degenerate(), 0);
    let p = positions(&kicked);
    // The light particles, kicked at 100 m/s out of the plane, are held at their rest distances.
    let length = |a: usize, b: usize| weft_core::topology::distance(p[a], p[b]);
    for (a, b, rest) in [(0, 3, 1e-3f32), (0, 4, 2e-3), (3, 4, 5f32.sqrt() * 1e-3)] {
        let strain = (length(a, b) - rest).abs() / rest;
        assert!(strain <= 1e-3, "edge {a}–{b}: {} m for a rest length of {rest} m", length(a, b));
    }
    // The heavy triangle does not notice them: its corners move as without the kick.
    let heavy_gap = max_diff(&p[..3], &positions(&quiet)[..3]);
    assert!(heavy_gap <= 1e-6, "the heavy corners moved {heavy_gap} m because of the light ones");
    // And it falls freely: 60 steps of 1/240 s under g.
    let t = 0.25f32;
    assert!((p[1][1] - (-0.5 * 9.81 * t * t)).abs() <= 0.02, "heavy corner at {:?}", p[1]);
    assert!(max_diff(&p, &reference.positions()) <= 1e-3, "SIMD and reference agree");
}

#[test]
fn extreme_velocities_stay_finite_and_are_counted() {
    // One end flung at 1e30 m/s: after the first prediction the pair is 4e27 m apart, beyond
    // the longest projectable distance, so every projection of it is skipped and counted.
    let cloth = ClothDesc {
        name: "flung".into(),
        positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]],
        velocities: Some(vec![[0.0; 3], [1e30, -1e30, 1e30], [0.0; 3]]),
        edge_sets: vec![EdgeSet { edges: vec![[0, 1], [1, 2]], ..EdgeSet::stretch() }],
        pins: vec![0],
        ..ClothDesc::default()
    };
    let iterations = 8;
    let steps = 50;
    let mut model = build(settings(240.0, 1, iterations, [0.0, -9.81, 0.0]), &cloth);
    let (fast, slow, _) = run_both(&mut model, steps);
    let both_edges = 2 * iterations as u64 * steps as u64;
    assert_eq!(fast.degenerate(), both_edges, "both edges skipped in every iteration of every step");
    assert_eq!(slow.degenerate, both_edges);
    let p = positions(&model);
    assert!(p[1][0] > 1e27, "the flung particle flies on: {:?}", p[1]);
    assert_eq!(p[0], [0.0; 3]);
}

#[test]
fn extreme_damping_times_extreme_velocity_is_skipped_and_counted() {
    // γ = α·β/h = 10 · 1e30 · 60 = 6e32 is finite, and so is a relative velocity of 1e9 m/s, but
    // their product in the numerator of Δλ is not a finite f32: that lane has no usable
    // correction and is skipped and counted (found by the `arbitrary_scene` fuzz target).
    let cloth = ClothDesc {
        name: "damped".into(),
        positions: vec![[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]],
        velocities: Some(vec![[0.0; 3], [1e9, 5.5, 0.0]]),
        edge_sets: vec![EdgeSet {
            edges: vec![[0, 1]],
            elasticity: compliance(10.0),
            damping: 1e30,
            ..EdgeSet::stretch()
        }],
        ..ClothDesc::default()
    };
    let mut model = build(settings(30.0, 2, 14, [0.0; 3]), &cloth);
    let (fast, slow, _) = run_both(&mut model, 1);
    assert!(fast.degenerate() > 0 && slow.degenerate > 0, "the overflowing projection is counted");
    // A moderate damping on the same motion projects normally.
    let mut tame = cloth.clone();
    tame.edge_sets[0].damping = 1e-3;
    let mut model = build(settings(30.0, 2, 14, [0.0; 3]), &tame);
    let (fast, _, _) = run_both(&mut model, 1);
    assert_eq!(fast.degenerate(), 0);
}

#[test]
fn a_prediction_that_would_overflow_is_not_made() {
    // A wind of 1.1e17 m/s on a cloth with lift (the `scene` fuzz finding
    // `fuzz/regressions/scene/wind-overflow-*`): drag and lift summed over a particle's
    // triangles overflow its velocity, so that particle keeps its state for the step instead of
    // becoming infinite (and then NaN). The SIMD path and the reference both stay finite.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/scene/wind-overflow-19ae9dca.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("wind = [2.0, 111111111111111110.0, -0.5]"));
    let scene = weft_io::parse_scene(&text, &path, &Limits::default()).unwrap();
    let mut model = scene.build_model().unwrap();
    let mut reference = ReferenceSolver::from_model(&model);
    for k in 0..8 {
        step(&mut model, &StepOptions { path: KernelPath::Simd, residual: true });
        reference.step();
        assert!(model.particles().all_finite(), "SIMD: non-finite state after step {k}");
        assert!(reference.positions().iter().flatten().all(|c| c.is_finite()), "reference: step {k}");
    }
    // The same scene in a storm of 10 m/s moves as usual.
    let calm = text.replace("111111111111111110.0", "10.0");
    let mut model = weft_io::parse_scene(&calm, &path, &Limits::default()).unwrap().build_model().unwrap();
    let before = positions(&model);
    for _ in 0..8 {
        step(&mut model, &StepOptions { path: KernelPath::Simd, residual: false });
    }
    assert!(model.particles().all_finite());
    assert!(max_diff(&before, &positions(&model)) > 1e-3, "a 10 m/s wind moves the flag");
}
