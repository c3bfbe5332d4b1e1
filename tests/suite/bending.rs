//! Promise: the bending constraint behaves as a dihedral-angle spring with the rest angle of the
//! input mesh, and survives the hinges that break naive implementations.
//!
//! * A flat sheet held together by bending alone keeps its shape under a random rigid motion
//!   (and gravity): every dihedral angle stays at 0. A pleated sheet thrown in a straight line
//!   keeps its pleats.
//! * A hinge of two triangles, one pinned, opened by a kick, swings back to its rest angle and
//!   settles there: for a flat rest shape and for a folded one.
//! * Hinges folded through `θ = ±π` stay finite and are not degenerate; a triangle collapsing onto
//!   its edge is skipped and counted, by the SIMD path, its scalar twin and the reference alike.
//! * A validation method, for bending: a cantilever strip clamped at one end sags under
//!   gravity to a tip deflection that does not depend on the time step (the same physical time at
//!   two step sizes), for each of two compliances, and the softer strip sags more.
//! * A zero-area triangle used by bending is refused, naming the triangle.

use weft_core::grid::{GridDesc, GridPlane};
use weft_core::kinds::KindDescs;
use weft_core::kinds::KindId;
use weft_core::kinds::bending::{BendingDesc, dihedral_angle};
use weft_core::limits::Limits;
use weft_core::units::{Compliance, Elasticity};
use weft_core::{ClothDesc, EdgeSet, MassSpec, Model, ModelBuilder, Rule, SimSettings};
use weft_kernels::{KernelPath, StepOptions, StepStats, step};
use weft_reference::ReferenceSolver;
use weft_testkit::models::{positions, settings};

fn elasticity(alpha: f32) -> Elasticity {
    Elasticity::Compliance(Compliance::new(alpha).unwrap())
}

fn build(settings: SimSettings, cloth: &ClothDesc) -> Model {
    let mut b = ModelBuilder::new(settings, Limits::default()).unwrap();
    b.add_cloth(cloth).unwrap();
    b.build().unwrap()
}

fn run(model: &mut Model, path: KernelPath) -> StepStats {
    step(model, &StepOptions { path, residual: true })
}

/// A deterministic stream in `[−1, 1)` (xorshift).
fn noise(seed: u64) -> impl FnMut() -> f32 {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// A `nu × nv` grid of 1 m × 0.8 m in the xy plane, 0.2 kg/m², with bending (`α` in
/// rad²/(N·m)) and no distance constraints at all.
fn bending_only_sheet(nu: u32, nv: u32, alpha: f32) -> ClothDesc {
    let g = GridDesc { resolution: [nu, nv], size: [1.0, 0.8], origin: [0.0; 3], plane: GridPlane::XY };
    let mut cloth = g.generate(&Limits::default()).unwrap().into_cloth(
        "sheet",
        MassSpec::Density(0.2),
        Elasticity::RIGID,
        Elasticity::RIGID,
    );
    cloth.edge_sets.clear();
    cloth.kinds.bending = Some(BendingDesc { elasticity: elasticity(alpha), damping: 0.0 });
    cloth
}

/// The largest `|θ − θ₀|` over the model's hinges (rad), from the current positions, in `f64`.
fn largest_bend(model: &Model) -> f64 {
    let x = positions(model);
    model
        .sets()
        .bending
        .solve_order()
        .map(|(c, _)| {
            let [a, b, c_, d] = c.particles.map(|p| x[p as usize]);
            let mut bend =
                dihedral_angle(a, b, c_, d) - c.params[weft_core::kinds::bending::REST_ANGLE] as f64;
            if bend > std::f64::consts::PI {
                bend -= std::f64::consts::TAU;
            } else if bend <= -std::f64::consts::PI {
                bend += std::f64::consts::TAU;
            }
            bend.abs()
        })
        .fold(0.0, f64::max)
}

/// A flat sheet with rigid bending and nothing else, moving rigidly (random translation and spin)
/// under gravity. The prediction maps the sheet by an affine map each step, which keeps a plane
/// a plane, so no hinge should bend and the bending constraints should change nothing: the
/// angles stay at 0 and the sheet flies as the same sheet without bending does. (Measured: the
/// angles stay below 1e-6 rad and the two sheets within 1e-6 m; the bounds are ten times that.)
#[test]
fn a_flat_sheet_keeps_its_shape_under_rigid_motion() {
    for seed in 1..6 {
        let mut next = noise(seed);
        let mut cloth = bending_only_sheet(13, 9, 0.0);
        let v0 = [next() * 2.0, next() * 2.0, next() * 2.0];
        let spin = [next() * 3.0, next() * 3.0, next() * 3.0];
        let centre = [0.5, 0.4, 0.0];
        cloth.velocities = Some(
            cloth
                .positions
                .iter()
                .map(|p| {
                    let r = [p[0] - centre[0], p[1] - centre[1], p[2] - centre[2]];
                    let w = spin;
                    [
                        v0[0] + w[1] * r[2] - w[2] * r[1],
                        v0[1] + w[2] * r[0] - w[0] * r[2],
                        v0[2] + w[0] * r[1] - w[1] * r[0],
                    ]
                })
                .collect(),
        );
        let s = settings(60.0, 2, 4, [0.0, -9.81, 0.0]);
        let mut bent = build(s.clone(), &cloth);
        assert!(
            !bent.sets().bending.has_param(weft_core::kinds::bending::REST_ANGLE),
            "a flat sheet: θ₀ = 0"
        );
        let mut free = build(
            s,
            &ClothDesc { kinds: KindDescs { bending: None, ..cloth.kinds.clone() }, ..cloth.clone() },
        );
        for path in [KernelPath::Simd, KernelPath::Scalar] {
            let (mut bent, mut free) = (bent.clone(), free.clone());
            let mut largest = 0.0f32;
            for _ in 0..60 {
                let stats = run(&mut bent, path);
                run(&mut free, path);
                assert_eq!(stats.kinds[KindId::Bending].degenerate, 0);
                largest = largest.max(stats.kinds[KindId::Bending].residual.unwrap().max_abs);
            }
            assert!(largest <= 2e-5, "seed {seed}, {path:?}: a hinge bent by {largest} rad");
            assert!(largest_bend(&bent) <= 2e-5);
            let gap = weft_testkit::models::max_diff(&positions(&bent), &positions(&free));
            assert!(gap <= 1e-4, "seed {seed}, {path:?}: {gap} m from the sheet without bending");
        }
        run(&mut bent, KernelPath::Simd);
        run(&mut free, KernelPath::Simd);
    }
}

/// A pleated sheet (random heights, so every rest angle differs) thrown in a straight line under
/// gravity keeps every rest angle, up to `f32` rounding as above (measured: 6e-5 rad at most, the
/// pleats' hinges being less well conditioned than flat ones; bound 2e-4 rad, against pleats of
/// tenths of a radian).
#[test]
fn a_pleated_sheet_keeps_its_pleats_in_flight() {
    let mut next = noise(42);
    let mut cloth = bending_only_sheet(11, 10, 0.0);
    for p in &mut cloth.positions {
        p[2] += 0.03 * next();
    }
    cloth.velocities = Some(vec![[1.5, 2.0, -0.5]; cloth.positions.len()]);
    let mut m = build(settings(60.0, 2, 4, [0.0, -9.81, 0.0]), &cloth);
    assert!(m.sets().bending.has_param(weft_core::kinds::bending::REST_ANGLE));
    let mut largest = 0.0f32;
    for _ in 0..60 {
        largest = largest.max(run(&mut m, KernelPath::Simd).kinds[KindId::Bending].residual.unwrap().max_abs);
    }
    assert!(largest <= 2e-4, "a pleat changed by {largest} rad");
    assert!(largest_bend(&m) <= 2e-4);
}

/// Two triangles `(0, 1, 2)` and `(1, 0, 3)` on the edge 0–1 along x; the wing 3 turned by `fold`
/// rad about the edge from the flat position (0.5, −1, 0). Particles 0, 1, 2 pinned; the wing 1 kg,
/// held at its distance from the edge ends by rigid edges; bending `α` (rad²/(N·m)) and `β`.
fn hinge(fold: f32, alpha: f32, beta: f32, kick: [f32; 3]) -> ClothDesc {
    let (s, c) = fold.sin_cos();
    ClothDesc {
        name: "hinge".into(),
        positions: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.5, -c, -s]],
        velocities: Some(vec![[0.0; 3], [0.0; 3], [0.0; 3], kick]),
        triangles: vec![[0, 1, 2], [1, 0, 3]],
        edge_sets: vec![EdgeSet { edges: vec![[0, 3], [1, 3]], ..EdgeSet::stretch() }],
        pins: vec![0, 1, 2],
        kinds: KindDescs {
            bending: Some(BendingDesc { elasticity: elasticity(alpha), damping: beta }),
            ..KindDescs::default()
        },
        ..ClothDesc::default()
    }
}

/// The hinge's `C` now (rad).
fn hinge_c(model: &Model) -> f32 {
    let (c, _) = model.sets().bending.solve_order().next().unwrap();
    let x = positions(model);
    let theta = dihedral_angle(x[0], x[1], x[2], x[3]);
    (theta - c.params[weft_core::kinds::bending::REST_ANGLE] as f64) as f32
}

/// Kicked open, the wing swings and comes back to its rest angle. With stiffness
/// `k = 1/α = 100 N·m/rad²` and the wing's moment of inertia 1 kg·m² the hinge rings at 10 rad/s;
/// `β = 10 N·m·s/rad²` is half the critical damping (`2·√(k·I)` = 20), so the swing decays as
/// `e^(−5 t)`: after 3 s the angle is back within 1e-3 rad (measured: below 1e-5 rad).
#[test]
fn a_kicked_hinge_returns_to_its_rest_angle() {
    for fold in [0.0f32, 1.0, -2.0] {
        for path in [KernelPath::Simd, KernelPath::Scalar] {
            // 3 m/s along the wing's circle about the edge (the wing is 1 m from it): 3 rad/s.
            let cloth = hinge(fold, 0.01, 10.0, [0.0, -3.0 * fold.sin(), 3.0 * fold.cos()]);
            let mut m = build(settings(60.0, 4, 10, [0.0; 3]), &cloth);
            let rest = m.sets().bending.solve_order().next().unwrap().0.params[0];
            assert!((rest.abs() - fold.abs()).abs() < 1e-6, "θ₀ {rest} from the mesh");
            let mut widest = 0.0f32;
            for _ in 0..3 * 60 * 4 {
                assert_eq!(run(&mut m, path).kinds[KindId::Bending].degenerate, 0);
                widest = widest.max(hinge_c(&m).abs());
            }
            assert!(widest > 0.1, "fold {fold}, {path:?}: the kick opened the hinge by {widest} rad");
            let last = hinge_c(&m);
            assert!(last.abs() <= 1e-3, "fold {fold}, {path:?}: {last} rad from rest after 3 s");
            assert!(m.particles().velocities()[3].iter().all(|v| v.abs() < 1e-2), "settled");
        }
    }
}

/// A hinge driven through `θ = ±π` (the wings pass through each other) stays finite and is never
/// degenerate: `atan2` has no trouble there, and `C` is taken the short way round.
#[test]
fn hinges_folded_through_pi_stay_finite() {
    // Rest almost shut (θ₀ = π − 0.01), and flat; the wing thrown through the other wing.
    for (fold, kick) in [(std::f32::consts::PI - 0.01, [0.0, 0.0, 20.0]), (0.0, [0.0, 20.0, -5.0])] {
        for alpha in [0.0, 0.1] {
            let cloth = hinge(fold, alpha, 0.0, kick);
            let mut m = build(settings(60.0, 2, 4, [0.0; 3]), &cloth);
            let rest = m.sets().bending.solve_order().next().unwrap().0.params[0];
            let mut reference = ReferenceSolver::from_model(&m);
            let mut crossed = false;
            for _ in 0..200 {
                let stats = run(&mut m, KernelPath::Simd);
                assert_eq!(stats.kinds[KindId::Bending].degenerate, 0);
                assert_eq!(reference.step().kinds[KindId::Bending], 0);
                assert!(m.particles().all_finite());
                let c = stats.kinds[KindId::Bending].residual.unwrap().max_abs;
                assert!(c.is_finite() && c <= std::f32::consts::PI, "|C| = {c}");
                let x = positions(&m);
                let theta = dihedral_angle(x[0], x[1], x[2], x[3]) as f32;
                crossed |= theta.abs() > 2.0 && theta.signum() != rest.signum();
            }
            // A rigid hinge (α = 0) holds the wing at its rest angle whatever the kick.
            if fold != 0.0 && alpha > 0.0 {
                assert!(crossed, "θ₀ = {rest}, α = {alpha}: the wing never passed through ±π");
            }
        }
    }
    // Four free particles thrown about at random, soft and rigid: everything stays finite.
    for seed in 1..20 {
        let mut next = noise(seed);
        let mut cloth = hinge(next() * 3.0, if seed % 2 == 0 { 0.0 } else { 1.0 }, 0.0, [0.0; 3]);
        cloth.pins.clear();
        cloth.edge_sets.clear();
        cloth.velocities = Some((0..4).map(|_| [next() * 30.0, next() * 30.0, next() * 30.0]).collect());
        let mut m = build(settings(60.0, 1, 6, [0.0; 3]), &cloth);
        for path in [KernelPath::Simd, KernelPath::Scalar] {
            let mut m = m.clone();
            for _ in 0..200 {
                run(&mut m, path);
                assert!(m.particles().all_finite(), "seed {seed}");
            }
        }
        run(&mut m, KernelPath::Simd);
    }
}

/// The wing 2 of a flat hinge runs onto the edge line: after one step of 0.1 s it lies exactly on
/// it, the triangle has no normal, and each of the three iterations skips the hinge and counts
/// it. Then the wing passes through, the hinge has an angle again (folded shut), and everything
/// stays finite.
#[test]
fn a_collapsing_triangle_is_skipped_and_counted() {
    let cloth = ClothDesc {
        name: "collapse".into(),
        positions: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.5, 0.1, 0.0], [0.5, -1.0, 0.0]],
        velocities: Some(vec![[0.0; 3], [0.0; 3], [0.0, -1.0, 0.0], [0.0; 3]]),
        triangles: vec![[0, 1, 2], [1, 0, 3]],
        pins: vec![0, 1, 3],
        kinds: KindDescs {
            bending: Some(BendingDesc { elasticity: elasticity(0.0), damping: 0.0 }),
            ..KindDescs::default()
        },
        ..ClothDesc::default()
    };
    let s = settings(10.0, 1, 3, [0.0; 3]);
    for path in [KernelPath::Simd, KernelPath::Scalar] {
        let mut m = build(s.clone(), &cloth);
        let stats = run(&mut m, path);
        assert_eq!(stats.kinds[KindId::Bending].degenerate, 3, "{path:?}");
        assert_eq!(stats.kinds[KindId::Bending].residual.unwrap().count, 0, "no angle to report");
        assert_eq!(positions(&m)[2], [0.5, 0.0, 0.0], "{path:?}: nothing moved the wing");
        for _ in 0..50 {
            run(&mut m, path);
            assert!(m.particles().all_finite(), "{path:?}");
        }
    }
    let mut reference = ReferenceSolver::from_model(&build(s, &cloth));
    assert_eq!(reference.step().kinds[KindId::Bending], 3);
    assert_eq!(reference.positions()[2], [0.5, 0.0, 0.0]);
}

/// What a cantilever run records once settled.
struct Sag {
    /// How far the free end's centre hangs below the clamp (m).
    tip: f32,
    /// Largest particle speed at the end (m/s).
    speed: f32,
}

/// A strip 0.2 m × 0.1 m (6 × 4 particles, 0.2 kg/m²) lying in the xy plane, clamped at x = 0 by
/// pinning its first two columns, sagging under gravity along −z for 4 s of physical time at
/// 60 fps with `substeps` steps per frame and 100 iterations; rigid stretch and shear, bending
/// compliance `alpha` (rad²/(N·m)), velocity damping 3/s so it settles.
fn cantilever(alpha: f32, substeps: u32) -> Sag {
    let g = GridDesc { resolution: [6, 4], size: [0.2, 0.1], origin: [0.0; 3], plane: GridPlane::XY };
    let mut cloth = g.generate(&Limits::default()).unwrap().into_cloth(
        "strip",
        MassSpec::Density(0.2),
        Elasticity::RIGID,
        Elasticity::RIGID,
    );
    cloth.pins = (0..4).flat_map(|j| [g.index(0, j), g.index(1, j)]).collect();
    cloth.kinds.bending = Some(BendingDesc { elasticity: elasticity(alpha), damping: 0.0 });
    let s = SimSettings { velocity_damping: 3.0, ..settings(60.0, substeps, 100, [0.0, 0.0, -9.81]) };
    let mut m = build(s, &cloth);
    for _ in 0..4 * 60 * substeps {
        step(&mut m, &StepOptions::default());
    }
    let x = positions(&m);
    let tip = -(0..4).map(|j| x[g.index(5, j) as usize][2]).sum::<f32>() / 4.0;
    let speed = m
        .particles()
        .velocities()
        .iter()
        .map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt())
        .fold(0.0, f32::max);
    Sag { tip, speed }
}

/// A validation method for bending: the same 4 s of physical time with two time steps
/// (h = 1/240 s and 1/480 s) gives the same settled tip deflection, for each of two compliances;
/// and in this small-deflection regime (tip below 1% of the length) the deflection is linear in
/// the compliance, as a torsion spring of stiffness 1/α predicts.
///
/// Tolerances: the strip must be solved to convergence for the static answer not to depend on
/// `h` (XPBD with too few iterations is softer at larger steps). With 100 iterations, measured:
/// the two steps agree within 2.5% and the ratio of deflections is 2.44 for a compliance ratio of
/// 2.5. Bounds: 5% across steps, and the ratio within 10% of 2.5. With 20 iterations the steps
/// disagree by a factor of 2 or more, so the test can fail.
#[test]
fn cantilever_sag_does_not_depend_on_the_time_step() {
    let (stiff, soft) = (2.0, 5.0);
    let mut tips = Vec::new();
    for alpha in [stiff, soft] {
        let (coarse, fine) = (cantilever(alpha, 4), cantilever(alpha, 8));
        for s in [&coarse, &fine] {
            assert!(s.speed < 1e-3, "α = {alpha}: still moving at {} m/s", s.speed);
            assert!(s.tip > 0.0 && s.tip < 0.002, "α = {alpha}: tip {} m (small deflection)", s.tip);
        }
        let spread = (coarse.tip - fine.tip).abs() / fine.tip;
        assert!(spread <= 0.05, "α = {alpha}: tips {} m and {} m differ by {spread}", coarse.tip, fine.tip);
        tips.push(fine.tip);
    }
    let ratio = tips[1] / tips[0];
    assert!((ratio / (soft / stiff) - 1.0).abs() <= 0.1, "deflections {tips:?} m: ratio {ratio}");
}

/// A zero-area triangle is fine for a cloth that only draws it, and refused, by index, once
/// bending needs its normal.
#[test]
fn a_zero_area_triangle_with_bending_is_refused() {
    let mut cloth = hinge(0.0, 0.01, 0.0, [0.0; 3]);
    cloth.positions[3] = [2.0, 0.0, 0.0]; // on the edge line: triangle 1 has no area
    cloth.edge_sets.clear();
    let s = settings(60.0, 1, 1, [0.0; 3]);
    let mut b = ModelBuilder::new(s.clone(), Limits::default()).unwrap();
    b.add_cloth(&ClothDesc { kinds: KindDescs { bending: None, ..cloth.kinds.clone() }, ..cloth.clone() })
        .unwrap();
    let mut b = ModelBuilder::new(s, Limits::default()).unwrap();
    let e = b.add_cloth(&cloth).unwrap_err();
    assert_eq!((e.location.field, e.location.index), ("triangles", Some(1)));
    assert_eq!(e.rule, Rule::ZeroAreaTriangle { a: 1, b: 0, c: 3, area: 0.0, used_for: "bending" });
    assert_eq!(
        e.to_string(),
        "cloth 'hinge': triangles[1]: [1, 0, 3] has zero area in the rest shape (0 m²) but is used for bending"
    );
}
