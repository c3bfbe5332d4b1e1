//! Promise: every batched constraint kind of the registry (`weft_core::constraint_kinds!`) — the
//! ones there now and any added later, with no change to this file — is solved by the fast path
//! as the reference solver solves it, with the SIMD lanes and their scalar twin giving the same
//! bits, and with the same bits on one thread and on two.
//!
//! The scenes are random grid cloths of a scene file (so a kind is turned on exactly as a user
//! turns it on: with the items of its `KindInfo::example`), 5 to 19 particles a side, lifted out
//! of their plane by random heights, with random pins (pinned corners, one to all four: a kind may need one, as tethers do) and
//! random initial velocities, baked in the fixed mode at random substeps and iterations.
//!
//! * After one step the positions agree within 1e-5 m, and the kernels and the reference count
//!   the same degenerate projections of each kind.
//! * After twenty steps they agree within 2e-5 m plus 16 times the gap between the reference and
//!   the reference started one ulp off (the tolerance of `bending_matches_reference.rs` and
//!   `simd_matches_reference.rs`, for the same reason: the two programs round differently, and
//!   `v = Δx/h` feeds every rounding difference back).
//! * The state (positions, previous positions, velocities, every `λ` of every kind) is the same
//!   bit for bit on the SIMD and the scalar path, and on one and two threads.

use std::path::Path;

use proptest::prelude::*;
use weft_core::Model;
use weft_core::kinds::KindId;
use weft_kernels::{KernelPath, StepOptions, step};
use weft_reference::ReferenceSolver;
use weft_testkit::models::{bits_after, max_diff, nudged, positions, state_bits};

/// A random cloth with one batched kind turned on.
#[derive(Debug, Clone)]
struct Case {
    kind: KindId,
    n: u32,
    corners: Vec<&'static str>,
    lift: f32,
    speed: f32,
    substeps: u32,
    iterations: u32,
    seed: u64,
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

impl Case {
    /// The scene file: a grid in the xz plane, lifted by `lift` cells at random, with the kind's
    /// example keys and random velocities.
    fn scene(&self) -> String {
        let mut next = noise(self.seed);
        let n = self.n as usize;
        let cell = 1.0 / (self.n - 1) as f32;
        let mut positions = Vec::with_capacity(n * n);
        for j in 0..n {
            for i in 0..n {
                positions.push(format!(
                    "[{:?}, {:?}, {:?}]",
                    i as f32 * cell,
                    self.lift * cell * next(),
                    j as f32 * cell
                ));
            }
        }
        let velocities: Vec<String> = (0..n * n)
            .map(|_| {
                format!("[{:?}, {:?}, {:?}]", self.speed * next(), self.speed * next(), self.speed * next())
            })
            .collect();
        let triangles: Vec<String> = (0..n - 1)
            .flat_map(|j| (0..n - 1).map(move |i| (i, j)))
            .flat_map(|(i, j)| {
                let (a, b, c, d) = (j * n + i, j * n + i + 1, (j + 1) * n + i, (j + 1) * n + i + 1);
                [format!("[{a}, {c}, {b}]"), format!("[{b}, {c}, {d}]")]
            })
            .collect();
        let edges: Vec<String> =
            weft_core::topology::unique_edges(&triangles.iter().map(|t| parse3(t)).collect::<Vec<_>>())
                .iter()
                .map(|e| format!("[{}, {}]", e[0], e[1]))
                .collect();
        let corners = [0, n - 1, n * (n - 1), n * n - 1];
        let pins: Vec<String> = self
            .corners
            .iter()
            .map(|c| {
                corners[["bottom-left", "bottom-right", "top-left", "top-right"]
                    .iter()
                    .position(|k| k == c)
                    .unwrap()]
                .to_string()
            })
            .collect();
        format!(
            "[simulation]\nfps = 60.0\nframes = 1\nsubsteps = {}\niterations = {}\n\n[[cloth]]\nname = \"c\"\n\
             positions = [{}]\nvelocities = [{}]\ntriangles = [{}]\nedges = [{}]\nstretch_compliance = 1e-6\n\
             pins = [{}]\nparticle_mass = 0.01\n{}\n",
            self.substeps,
            self.iterations,
            positions.join(", "),
            velocities.join(", "),
            triangles.join(", "),
            edges.join(", "),
            pins.join(", "),
            self.kind.info().example.join("\n")
        )
    }

    fn model(&self) -> Model {
        let scene = weft_io::parse_scene(&self.scene(), Path::new("kind.toml"), &Default::default())
            .unwrap_or_else(|e| panic!("{e}\n{}", self.scene()));
        scene.build_model().unwrap_or_else(|e| panic!("{e}"))
    }
}

/// `[a, b, c]` of a TOML triangle.
fn parse3(t: &str) -> [u32; 3] {
    let v: Vec<u32> =
        t.trim_matches(|c| c == '[' || c == ']').split(", ").map(|x| x.parse().unwrap()).collect();
    [v[0], v[1], v[2]]
}

/// The batched kinds a scene can turn on (distance is in every cloth).
fn kinds() -> Vec<KindId> {
    KindId::ALL.iter().copied().filter(|k| k.is_batched()).collect()
}

fn case() -> impl Strategy<Value = Case> {
    let corners =
        proptest::sample::subsequence(vec!["bottom-left", "bottom-right", "top-left", "top-right"], 1..=4);
    (
        proptest::sample::select(kinds()),
        5u32..20,
        corners,
        0.0f32..1.0,
        0.0f32..2.0,
        1u32..4,
        1u32..8,
        any::<u64>(),
    )
        .prop_map(|(kind, n, corners, lift, speed, substeps, iterations, seed)| Case {
            kind,
            n,
            corners,
            lift,
            speed,
            substeps,
            iterations,
            seed,
        })
}

/// The gap between the kernels and the reference after `steps` steps, and the gap between the
/// reference and the reference started one ulp off (m); both count the same degenerate
/// projections of each kind in every step.
fn compare(case: &Case, steps: usize) -> (f32, f32) {
    let mut model = case.model();
    let mut reference = ReferenceSolver::from_model(&model);
    let mut off = ReferenceSolver::from_model(&nudged(&model));
    for _ in 0..steps {
        let fast = step(&mut model, &StepOptions { path: KernelPath::Simd, residual: false });
        let slow = reference.step();
        off.step();
        for &kind in KindId::ALL {
            assert_eq!(
                fast.kinds[kind].degenerate, slow.kinds[kind],
                "{kind:?}: the same degenerate projections"
            );
        }
    }
    assert!(model.particles().all_finite());
    (max_diff(&positions(&model), &reference.positions()), max_diff(&off.positions(), &reference.positions()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn one_step_within_1e_5(case in case()) {
        let (gap, _) = compare(&case, 1);
        prop_assert!(gap <= 1e-5, "{:?}: gap {gap} m after one step", case.kind);
    }

    #[test]
    fn twenty_steps_within_tolerance(case in case()) {
        let (gap, sensitivity) = compare(&case, 20);
        prop_assert!(
            gap <= 2e-5 + 16.0 * sensitivity,
            "{:?}: gap {gap} m after twenty steps, sensitivity {sensitivity} m",
            case.kind
        );
    }

    #[test]
    fn simd_scalar_and_threads_give_the_same_bits(case in case(), steps in 1usize..8) {
        let simd = bits_after(|| case.model(), steps, KernelPath::Simd, 1);
        prop_assert!(simd == bits_after(|| case.model(), steps, KernelPath::Scalar, 1), "{:?}: scalar", case.kind);
        prop_assert!(simd == bits_after(|| case.model(), steps, KernelPath::Simd, 2), "{:?}: 2 threads", case.kind);
        prop_assert!(simd != state_bits(&case.model()), "the cloth moved");
    }
}
