//! Promise: the SIMD instantiation of the kernels and their scalar twin (the same kernel bodies on
//! `f32`, one constraint at a time) give bit-identical results, on random cloths, for every
//! position, velocity and `λ`. They share one source and use only correctly rounded operations
//! (no fused multiply-add), and the lanes of a batch never share a written particle, so any
//! difference is a bug in lane packing, padding, masking or the write-back.

use proptest::prelude::*;
use weft_kernels::KernelPath;
use weft_testkit::models::{Grid, run, settings, state_bits};

prop_compose! {
    fn cloth()(
        nu in 2u32..30,
        nv in 2u32..30,
        stretch in prop_oneof![Just(0.0f32), 1e-8f32..1e-1],
        shear in prop_oneof![Just(0.0f32), 1e-8f32..1e-1],
        damping in prop_oneof![Just(0.0f32), 0.0f32..2.0],
        pins in proptest::collection::vec(any::<u32>(), 0..6),
        speed in 0.0f32..5.0,
        seed in any::<u32>(),
    ) -> Grid {
        let n = nu * nv;
        let velocities = (0..n)
            .map(|i| {
                let h = (i ^ seed).wrapping_mul(2654435761);
                [h % 97, h % 89, h % 83].map(|k| (k as f32 / 48.0 - 1.0) * speed)
            })
            .collect();
        Grid {
            nu, nv, stretch, shear, damping, pins: pins.iter().map(|p| p % n).collect(),
            velocities: Some(velocities), shuffle: None,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn simd_and_scalar_paths_agree_bit_for_bit(grid in cloth(), iterations in 1u32..6, steps in 1usize..12) {
        let s = settings(60.0, 2, iterations, [0.0, -9.81, 0.0]);
        let mut simd = grid.model(s.clone());
        let mut scalar = grid.model(s);
        let a = run(&mut simd, steps, KernelPath::Simd);
        let b = run(&mut scalar, steps, KernelPath::Scalar);
        prop_assert_eq!(a, b);
        prop_assert!(state_bits(&simd) == state_bits(&scalar), "state differs");
        prop_assert!(simd.particles().mirror_is_consistent());
    }
}
