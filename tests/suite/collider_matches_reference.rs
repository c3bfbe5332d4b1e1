//! Promise: with colliders (plane, sphere, capsule, box; static or keyframed; thickness and
//! friction), the fast path computes what the reference solver computes; its SIMD and scalar
//! instantiations agree bit for bit; pools of 1 and 2 threads give the same bits; and both
//! solvers count the same deep particles.
//!
//! Random scenes: a grid (sides from 2 to 13 particles, so tails of fewer than 8 lanes) with random
//! velocities (each component up to 1 m/s, or up to 150 m/s in one case in four so that the swept
//! check moves particles), soft or rigid, dropped among one to three random colliders at random
//! poses, some moving and turning between two keys, with random thickness and friction.
//!
//! Tolerances: after one step 1e-5 m, or 16 × the sensitivity below where that is larger (a rigid
//! cloth whose constraints fight the contacts moves the reference by up to 1.8e-4 m in one step for
//! a one-ulp change of its input, measured). After steps 2 to 5, `2e-5 m + 16 × sensitivity`, where
//! the sensitivity is how far the reference itself moves when every input position is one ulp off,
//! as `tests/suite/tether_volume_wind_matches_reference.rs` argues: the two programs round differently
//! (the kernels' `v·(1/|v|)` and rotation sums written out against glam's), and a rigid cloth
//! thrown among colliders amplifies any rounding difference (measured: one case grows 4e-6 → 2e-5 →
//! 1.2e-4 m over steps 1, 3 and 5, with the reference's own one-ulp sensitivity of the same size).
//! The nudge moves every coordinate of every particle by one ulp, alternately up and down (as in
//! `tests/suite/tether_volume_wind_matches_reference.rs`): nudging x alone misses how a contact that
//! starts or stops, or friction that switches between sticking and sliding, amplifies a rounding
//! difference in y or z (one case: gap 5.2e-5 m at step 4 against an x-only sensitivity of 1.6e-6
//! m, and 1.4e-5 m with the full nudge). Measured (WEFT_PRINT_GAPS=1, 96 cases): gap/sensitivity at
//! most 5.4, gaps under 4e-6 m where the sensitivity is small (with the fast cases and the swept
//! check: at most 4.0, and 2.9e-6 m; the largest gap is 0.21 of its tolerance).

use proptest::prelude::*;
use weft_core::collider::{ColliderDesc, ColliderShape, Friction, RigidKey};
use weft_core::limits::Limits;
use weft_core::{Model, ModelBuilder};
use weft_kernels::{KernelPath, StepOptions, step};
use weft_reference::ReferenceSolver;
use weft_testkit::models::{Grid, bits_after, contact_tolerance, max_diff, nudged, positions, settings};

/// A random collider: shape index, size, pose, an optional second key, thickness, friction.
fn collider() -> impl Strategy<Value = ColliderDesc> {
    (
        0..4usize,
        (0.1f32..0.6, 0.0f32..0.5, [0.05f32..0.5, 0.05f32..0.5, 0.05f32..0.5]),
        [-0.5f32..1.5, -0.8f32..0.3, -0.5f32..1.5],
        [-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, 0.2f32..1.0],
        proptest::option::of((
            [-0.3f32..0.3, -0.3f32..0.3, -0.3f32..0.3],
            [-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, 0.2f32..1.0],
        )),
        (0.0f32..0.03, 0.0f32..1.0, 0.0f32..1.0),
    )
        .prop_map(
            |(
                kind,
                (radius, half_length, half_extents),
                position,
                rotation,
                moving,
                (thickness, mu_s, mu_k),
            )| {
                let shape = match kind {
                    0 => ColliderShape::Plane { normal: [rotation[0] * 0.3, 1.0, rotation[2] * 0.3] },
                    1 => ColliderShape::Sphere { radius },
                    2 => ColliderShape::Capsule { radius, half_length },
                    _ => ColliderShape::Box { half_extents },
                };
                let first = RigidKey { time: 0.0, position, rotation };
                let mut keys = vec![first];
                if let Some((offset, turn)) = moving {
                    let p = [0, 1, 2].map(|i| position[i] + offset[i]);
                    keys.push(RigidKey { time: 0.05, position: p, rotation: turn });
                }
                let friction = Friction { static_coefficient: mu_s, kinetic_coefficient: mu_k };
                ColliderDesc { name: "c".into(), shape, keys, thickness, friction }
            },
        )
}

#[derive(Debug, Clone)]
struct Scene {
    grid: Grid,
    colliders: Vec<ColliderDesc>,
}

fn scene() -> impl Strategy<Value = Scene> {
    (
        2..14u32,
        2..14u32,
        prop_oneof![Just(0.0f32), 1e-6f32..1e-3],
        0u64..1 << 40,
        proptest::collection::vec(collider(), 1..4),
    )
        .prop_map(|(nu, nv, stretch, seed, colliders)| {
            let mut grid = Grid::new(nu, nv);
            grid.stretch = stretch;
            grid.shear = stretch;
            grid.pins = if seed % 3 == 0 { vec![0] } else { Vec::new() };
            let n = (nu * nv) as usize;
            // One case in four is thrown fast (up to 150 m/s a component, 62 cm a step) so that
            // the swept check moves particles that cross or pass the middle of a collider
            // (measured: in the first step of 8 of 96 cases, 16 particles).
            let speed = if seed % 4 == 1 { 150.0 } else { 1.0 };
            let mut x = seed | 1;
            grid.velocities = Some(
                (0..n)
                    .map(|_| {
                        [0, 1, 2].map(|_| {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            speed * ((x % 2001) as f32 / 1000.0 - 1.0)
                        })
                    })
                    .collect(),
            );
            Scene { grid, colliders }
        })
}

fn build(s: &Scene) -> Model {
    // 60 fps, 4 substeps (h = 1/240 s), 4 iterations, gravity: the grid (1 m square in the xy plane
    // at the origin) falls into the colliders around it.
    let mut b = ModelBuilder::new(settings(60.0, 4, 4, [0.0, -9.81, 0.0]), Limits::default()).unwrap();
    b.add_cloth(&s.grid.cloth()).unwrap();
    for c in &s.colliders {
        b.add_collider(c).unwrap();
    }
    b.build().unwrap()
}

/// Runs `steps` steps; the deep count of the last and the particles swept over all of them.
fn run_steps(model: &mut Model, steps: usize, path: KernelPath) -> (u64, u64) {
    let (mut deep, mut swept) = (0, 0);
    for _ in 0..steps {
        let stats = step(model, &StepOptions { path, residual: true }).colliders;
        (deep, swept) = (stats.deep.unwrap(), swept + stats.swept);
    }
    (deep, swept)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn kernels_match_the_reference(s in scene()) {
        let mut fast = build(&s);
        let mut reference = ReferenceSolver::from_model(&fast);
        let mut shadow = ReferenceSolver::from_model(&nudged(&fast));
        for steps in 1..=5 {
            let (deep, swept) = run_steps(&mut fast, 1, KernelPath::Simd);
            let stats = reference.step();
            shadow.step();
            let gap = max_diff(&positions(&fast), &reference.positions());
            let sensitivity = max_diff(&shadow.positions(), &reference.positions());
            let tolerance = contact_tolerance(steps, sensitivity);
            if std::env::var_os("WEFT_PRINT_GAPS").is_some() {
                eprintln!("step {steps}: gap {gap:.3e} m, sensitivity {sensitivity:.3e} m");
            }
            prop_assert!(gap <= tolerance, "step {}: gap {} m", steps, gap);
            if steps == 1 {
                prop_assert_eq!(deep, stats.collider_deep);
                prop_assert_eq!(swept, stats.collider_swept, "both sweep the same particles");
            }
        }
    }

    #[test]
    fn simd_scalar_and_threads_give_the_same_bits(s in scene()) {
        let simd = bits_after(|| build(&s), 5, KernelPath::Simd, 1);
        prop_assert_eq!(&simd, &bits_after(|| build(&s), 5, KernelPath::Scalar, 1));
        prop_assert_eq!(&simd, &bits_after(|| build(&s), 5, KernelPath::Simd, 2));
    }
}
