//! Promise: the self-collision kernel (hash-grid search, parallel Jacobi projection) and its twin
//! in the reference solver (every pair tested, one particle after another) agree: the same bits
//! for clouds of particles with no other constraint, for any thread count (proptest), and two
//! particles driven onto each other end exactly one thickness apart.

use proptest::prelude::*;
use weft::core::builder::{ClothDesc, ModelBuilder};
use weft::core::kinds::KindId;
use weft::core::limits::Limits;
use weft::core::self_collision::SelfCollisionDesc;
use weft::core::settings::SimSettings;
use weft::core::{MassSpec, Model};
use weft::kernels::{StepOptions, step};
use weft_reference::ReferenceSolver;

/// One cloud (cloth): positions (m), velocities (m/s), pins, thickness (m) and friction.
type Cloud = (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<u32>, f32, f32);

/// Two clouds of free particles with velocities, some pinned, each with self-collision.
#[derive(Debug, Clone)]
struct Clouds {
    cloths: Vec<Cloud>,
}

fn cloud() -> impl Strategy<Value = Cloud> {
    (2usize..40).prop_flat_map(|n| {
        (
            prop::collection::vec(prop::array::uniform3(-0.2f32..0.2), n),
            prop::collection::vec(prop::array::uniform3(-1.0f32..1.0), n),
            prop::collection::vec(0u32..n as u32, 0..3),
            0.01f32..0.08,
            0.0f32..1.0,
        )
    })
}

fn model(c: &Clouds, substeps: u32, iterations: u32) -> Model {
    let settings = SimSettings { fps: 60.0, substeps, iterations, ..SimSettings::default() };
    let mut b = ModelBuilder::new(settings, Limits::default()).unwrap();
    for (k, (positions, velocities, pins, thickness, friction)) in c.cloths.iter().enumerate() {
        b.add_cloth(&ClothDesc {
            name: format!("cloud{k}"),
            positions: positions.clone(),
            velocities: Some(velocities.clone()),
            mass: MassSpec::ParticleMass(0.01 * (k + 1) as f32),
            pins: pins.clone(),
            self_collision: Some(SelfCollisionDesc { thickness: *thickness, friction: *friction }),
            ..ClothDesc::default()
        })
        .unwrap();
    }
    b.build().unwrap()
}

fn bits(p: &[[f32; 3]]) -> Vec<[u32; 3]> {
    p.iter().map(|v| v.map(f32::to_bits)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The kernel and the reference run the same `f32` operations in the same order (contacts in
    /// ascending partner order, all corrections from the positions before the projection), and
    /// find the same contact sets (the grid's 27 cells cover the search radius), so they agree
    /// bit for bit; thread counts 1 and 3 too.
    #[test]
    fn kernel_matches_reference(a in cloud(), b in cloud(), steps in 1usize..6) {
        let clouds = Clouds { cloths: vec![a, b] };
        for threads in [1, 3] {
            let mut m = model(&clouds, 2, 3);
            let mut r = ReferenceSolver::from_model(&m);
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for s in 0..steps {
                let stats = pool.install(|| step(&mut m, &StepOptions::default()));
                let ref_stats = r.step();
                prop_assert_eq!(stats.kinds[KindId::SelfCollision].degenerate, ref_stats.kinds[KindId::SelfCollision]);
                let x: Vec<[f32; 3]> = m.particles().positions().iter().map(|p| [p[0], p[1], p[2]]).collect();
                prop_assert_eq!(bits(&x), bits(&r.positions()), "step {} on {} threads", s, threads);
            }
        }
    }
}

#[test]
fn two_particles_driven_together_end_one_thickness_apart() {
    // 1 kg each, 10 cm apart, running at each other at 0.3 m/s for one step of 0.1 s, no gravity:
    // predicted 4 cm apart, 4 cm inside the 8 cm thickness (rest distance 10 cm: not excluded).
    let settings =
        SimSettings { fps: 10.0, substeps: 1, iterations: 1, gravity: [0.0; 3], ..SimSettings::default() };
    let mut b = ModelBuilder::new(settings, Limits::default()).unwrap();
    b.add_cloth(&ClothDesc {
        name: "pair".into(),
        positions: vec![[-0.05, 0.0, 0.0], [0.05, 0.0, 0.0]],
        velocities: Some(vec![[0.3, 0.0, 0.0], [-0.3, 0.0, 0.0]]),
        self_collision: Some(SelfCollisionDesc { thickness: 0.08, friction: 0.0 }),
        ..ClothDesc::default()
    })
    .unwrap();
    let mut m = b.build().unwrap();
    step(&mut m, &StepOptions::default());
    let x = m.particles().positions();
    // Equal masses share the 4 cm correction: each moves 2 cm back out, ending at ±4 cm, within
    // the f32 rounding of the inputs (a few ulps of 0.1 m: 1e-7 m).
    assert!((x[1][0] - x[0][0] - 0.08).abs() < 1e-7, "{:?}", (x[0], x[1]));
    assert!((x[0][0] + x[1][0]).abs() < 1e-7, "symmetric: {:?}", (x[0], x[1]));
    // ... and their velocities are what carried them there: each moved 1 cm in 0.1 s.
    let v = m.particles().velocities();
    assert!((v[0][0] - 0.1).abs() < 1e-5 && (v[1][0] + 0.1).abs() < 1e-5, "{:?}", (v[0], v[1]));
}
