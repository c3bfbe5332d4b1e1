//! Promise: with bending on, the fast path (SIMD lanes, colour batches run by rayon) computes what
//! the reference solver computes, and the SIMD kernels and their scalar twin agree bit for bit.
//!
//! The cloths are random: triangulated grids from `weft_core::grid` whose sides are not multiples
//! of 8, lifted out of their plane by random heights (so every rest angle is different), and
//! closed icospheres with random vertex noise; random pins (none to a few), stretch, shear and
//! bending compliance from 0 (rigid) to soft, bending damping on or off, random initial
//! velocities.
//!
//! * After one step the positions agree within [`TOL_1`] = 1e-5 m, and both count the same
//!   degenerate bending projections.
//! * After twenty steps they agree within `TOL_20_FLOOR + TOL_20_FACTOR × sensitivity`, where the
//!   sensitivity is the gap between the reference and the reference started from positions moved
//!   by one ulp (the same measure as `simd_matches_reference.rs`, and for the same reason: the
//!   two programs round differently, and a crumpling motion feeds each rounding difference back
//!   through `v = Δx/h`).
//!
//! What bending adds to that argument. The kernel's `atan2` is a polynomial within 4.8e-7 rad of
//! the true angle, the reference's is the C library's (within an ulp); the kernel forms
//! `n/|n|²` as `n·(1/|n|²)` and `p/|e|` as `|e|·((x − x_a)·e/|e|²)`, the reference divides; so one
//! projection differs by a few ulp of the angle times the wing height, well below a micrometre.
//! Every gradient is `1/height`, so a rounding difference in a short, crumpled hinge is amplified
//! the way `1/|d|` amplifies it in a short edge, and the reference nudged by one ulp shows the
//! same amplification. Measured with `WEFT_PRINT_GAPS=1` over 2000 random cases of each test
//! (grids and spheres): the largest one-step gap was 5.0e-7 m; after twenty steps the largest
//! ratio gap/sensitivity was 7.6 (most cases are below 2), and the largest gap in a case whose
//! sensitivity was below 1e-6 m was 2.3e-6 m. The bound keeps the factor 16 and floor 2e-5 m of
//! the distance test. A wrong term in the bending kernel (a gradient sign, a missing `|e|`, the
//! rest angle not subtracted, a lane written to the wrong particle) moves the cloth by
//! millimetres in the first step.

use proptest::prelude::*;
use weft_core::kinds::KindDescs;
use weft_core::kinds::KindId;
use weft_core::kinds::bending::BendingDesc;
use weft_core::limits::Limits;
use weft_core::shapes::icosphere;
use weft_core::topology::unique_edges;
use weft_core::units::{Compliance, Elasticity};
use weft_core::{ClothDesc, EdgeSet, MassSpec, Model, ModelBuilder, SimSettings};
use weft_kernels::{KernelPath, StepOptions, step};
use weft_reference::ReferenceSolver;
use weft_testkit::models::{Grid, max_diff, positions, settings};

/// Tolerance after one step, in m.
const TOL_1: f32 = 1e-5;
/// Gap below which twenty steps always pass, in m.
const TOL_20_FLOOR: f32 = 2e-5;
/// Allowed multiple of the motion's own sensitivity to a one-ulp change of the input.
const TOL_20_FACTOR: f32 = 16.0;

/// A cloth with bending, as the strategies draw it.
#[derive(Debug, Clone)]
struct Case {
    cloth: ClothDesc,
}

/// A deterministic stream in `[−1, 1)` (xorshift), so that a case is a function of its seed.
fn noise(seed: u64) -> impl FnMut() -> f32 {
    let mut x = seed | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// A compliance: 0 (rigid) or `10^e` for `e` in `range`.
fn compliance(range: std::ops::Range<f32>) -> impl Strategy<Value = f32> {
    prop_oneof![Just(0.0f32), range.prop_map(|e| 10f32.powf(e))]
}

fn elasticity(alpha: f32) -> Elasticity {
    Elasticity::Compliance(Compliance::new(alpha).unwrap())
}

/// Random velocities of `n` particles, each component in `[−speed, speed]` m/s.
fn velocities(n: usize, speed: f32, next: &mut impl FnMut() -> f32) -> Vec<[f32; 3]> {
    (0..n).map(|_| [next() * speed, next() * speed, next() * speed]).collect()
}

prop_compose! {
    /// A 1 m × 1 m grid (0.2 kg/m²) lifted out of its plane by up to `relief` × the cell size.
    fn grid()(
        nu in 2u32..20,
        nv in 2u32..20,
        stretch in compliance(-9.0..-2.0),
        shear in compliance(-9.0..-2.0),
        bend in compliance(-6.0..4.0),
        damping in prop_oneof![Just(0.0f32), 1e-6f32..1e-3],
        relief in 0.0f32..0.5,
        pin_bits in any::<u64>(),
        pin_count in 0usize..4,
        speed in 0.0f32..2.0,
        seed in any::<u64>(),
    ) -> Case {
        let n = nu * nv;
        let mut next = noise(seed);
        let pins = (0..pin_count).map(|k| ((pin_bits >> (16 * k)) as u32) % n).collect();
        let grid = Grid {
            nu, nv, stretch, shear, damping: 0.0, pins, velocities: None, shuffle: None,
        };
        let mut cloth = grid.cloth();
        let cell = 1.0 / (nu.max(nv) - 1) as f32;
        for p in &mut cloth.positions {
            p[2] += relief * cell * next();
        }
        cloth.velocities = Some(velocities(n as usize, speed, &mut next));
        cloth.kinds.bending = Some(BendingDesc { elasticity: elasticity(bend), damping });
        Case { cloth }
    }
}

prop_compose! {
    /// An icosphere of radius 0.3 m with its vertices moved by up to `roughness` × 3 cm; every
    /// edge a stretch constraint, 10 g per particle, bending on every edge.
    fn sphere()(
        levels in 1u32..3,
        stretch in compliance(-9.0..-3.0),
        bend in compliance(-6.0..3.0),
        damping in prop_oneof![Just(0.0f32), 1e-6f32..1e-3],
        roughness in 0.0f32..1.0,
        pin_count in 0usize..3,
        speed in 0.0f32..2.0,
        seed in any::<u64>(),
    ) -> Case {
        let mut next = noise(seed);
        let (mut positions, triangles) = icosphere(levels, 0.3, [0.0, 1.0, 0.0]);
        for p in &mut positions {
            for c in p.iter_mut() {
                *c += 0.03 * roughness * next();
            }
        }
        let n = positions.len();
        let cloth = ClothDesc {
            name: "sphere".into(),
            velocities: Some(velocities(n, speed, &mut next)),
            mass: MassSpec::ParticleMass(0.01),
            edge_sets: vec![EdgeSet {
                edges: unique_edges(&triangles),
                elasticity: elasticity(stretch),
                ..EdgeSet::stretch()
            }],
            pins: (0..pin_count).map(|k| (k * 7 % n) as u32).collect(),
            kinds: KindDescs { bending: Some(BendingDesc { elasticity: elasticity(bend), damping }), ..KindDescs::default() },
            positions,
            triangles,
            ..ClothDesc::default()
        };
        Case { cloth }
    }
}

fn build(settings: &SimSettings, cloth: &ClothDesc) -> Model {
    let mut b = ModelBuilder::new(settings.clone(), Limits::default()).unwrap();
    b.add_cloth(cloth).unwrap();
    b.build().unwrap()
}

/// Runs the fast path and the reference side by side for `steps` steps; returns the largest
/// position gap between them and the largest gap between the reference and the reference
/// started one ulp off (in m). Both must count the same degenerate projections every step.
fn compare(case: &Case, substeps: u32, iterations: u32, steps: usize) -> (f32, f32) {
    let settings = settings(60.0, substeps, iterations, [0.0, -9.81, 0.0]);
    let mut model = build(&settings, &case.cloth);
    let mut reference = ReferenceSolver::from_model(&model);
    let mut nudged = {
        let mut cloth = case.cloth.clone();
        for (i, p) in cloth.positions.iter_mut().enumerate() {
            for (k, c) in p.iter_mut().enumerate() {
                *c = if (i * 3 + k) % 2 == 0 { c.next_up() } else { c.next_down() };
            }
        }
        ReferenceSolver::from_model(&build(&settings, &cloth))
    };
    for _ in 0..steps {
        let fast = step(&mut model, &StepOptions { path: KernelPath::Simd, residual: false });
        let slow = reference.step();
        nudged.step();
        assert_eq!(
            fast.kinds[KindId::Bending].degenerate,
            slow.kinds[KindId::Bending],
            "both skip the same degenerate hinges"
        );
        assert_eq!(fast.degenerate(), slow.degenerate, "and the same degenerate projections overall");
    }
    assert!(model.particles().all_finite());
    let gap = max_diff(&positions(&model), &reference.positions());
    let sensitivity = max_diff(&nudged.positions(), &reference.positions());
    if std::env::var_os("WEFT_PRINT_GAPS").is_some() {
        eprintln!(
            "GAP steps={steps} gap={gap:e} sens={sensitivity:e} ratio={:.3}",
            gap / sensitivity.max(1e-12)
        );
    }
    (gap, sensitivity)
}

/// Bit patterns of every position, previous position, velocity and bending `λ` of a model.
fn state_bits(model: &Model) -> Vec<u32> {
    let p = model.particles();
    p.positions()
        .iter()
        .chain(p.prev_positions())
        .chain(p.velocities())
        .flat_map(|r| r.map(f32::to_bits))
        .chain(model.sets().bending.solve_order().map(|(_, lambda)| lambda.to_bits()))
        .chain(model.sets().distance.solve_order().map(|(_, lambda)| lambda.to_bits()))
        .collect()
}

fn case() -> impl Strategy<Value = Case> {
    prop_oneof![3 => grid(), 1 => sphere()]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn one_step_within_1e_5(case in case(), substeps in 1u32..5, iterations in 1u32..9) {
        let (gap, _) = compare(&case, substeps, iterations, 1);
        prop_assert!(gap <= TOL_1, "gap {gap} m after one step");
    }

    #[test]
    fn twenty_steps_within_tolerance(case in case(), iterations in 1u32..9) {
        let (gap, sensitivity) = compare(&case, 2, iterations, 20);
        prop_assert!(
            gap <= TOL_20_FLOOR + TOL_20_FACTOR * sensitivity,
            "gap {gap} m after twenty steps, sensitivity {sensitivity} m"
        );
    }

    #[test]
    fn simd_and_scalar_agree_bit_for_bit(case in case(), iterations in 1u32..6, steps in 1usize..10) {
        let s = settings(60.0, 2, iterations, [0.0, -9.81, 0.0]);
        let mut simd = build(&s, &case.cloth);
        let mut scalar = simd.clone();
        for _ in 0..steps {
            let a = step(&mut simd, &StepOptions { path: KernelPath::Simd, residual: true });
            let b = step(&mut scalar, &StepOptions { path: KernelPath::Scalar, residual: true });
            prop_assert_eq!(a, b);
        }
        prop_assert!(state_bits(&simd) == state_bits(&scalar), "state differs");
        prop_assert!(simd.particles().mirror_is_consistent());
    }
}

/// A cloth large enough for several blocks and boundary colours cut into parallel chunks, run on
/// a four-thread pool, against the reference; and a shuffled numbering, which puts most hinges on
/// block boundaries.
#[test]
fn large_cloth_on_four_threads() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
    for shuffle in [None, Some(17)] {
        let mut grid = Grid::new(71, 67);
        grid.stretch = 1e-6;
        grid.shear = 1e-4;
        grid.shuffle = shuffle;
        let mut cloth = grid.cloth();
        let mut next = noise(3);
        for p in &mut cloth.positions {
            p[2] += 0.0005 * next();
        }
        cloth.kinds.bending = Some(BendingDesc { elasticity: elasticity(10.0), damping: 1e-4 });
        let case = Case { cloth };
        let (gap, sensitivity) = pool.install(|| compare(&case, 2, 4, 20));
        assert!(
            gap <= TOL_20_FLOOR + TOL_20_FACTOR * sensitivity,
            "gap {gap} m, sensitivity {sensitivity} m"
        );
        assert!(gap <= 1e-5, "a hanging cloth stays within 1e-5 m of the reference: {gap} m");
    }
}
