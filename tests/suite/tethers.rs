//! Promise: tethers (long-range attachments) hold every free particle within `tether_scale ×` its
//! geodesic rest distance of its nearest pin, and do nothing else.
//!
//! * A particle inside its bound is untouched: a motion that stays inside every bound gives the
//!   same bits with tethers as without; one that leaves a bound is pulled back onto it, never
//!   closer.
//! * A long hanging strip (1 × 40 particles, soft stretch) with ONE solver iteration stays within
//!   `tether_scale` of its rest length, while without tethers it sags far beyond: one
//!   Gauss-Seidel sweep carries a correction one edge per colour, so the untethered strip hangs
//!   like a rubber band (measured: 25 % too long for a stretch compliance of 1e-4 m/N whose
//!   converged stretch would be 0.8 %).
//! * A particle no pin can reach along the cloth gets no tether.
//! * Bad input is refused with its rule: a scale below 1 or not finite, tethers on a cloth with
//!   no pin, a compliance too large for the time step.

use weft_core::kinds::KindDescs;
use weft_core::kinds::tether::{MAX_LENGTH, TetherDesc};
use weft_core::limits::Limits;
use weft_core::units::{Compliance, Elasticity};
use weft_core::{BuildError, ClothDesc, EdgeSet, MassSpec, Model, ModelBuilder, Rule, SimSettings};
use weft_kernels::{KernelPath, StepOptions, step};
use weft_testkit::models::{positions, settings};

fn compliance(v: f32) -> Elasticity {
    Elasticity::Compliance(Compliance::new(v).unwrap())
}

/// A vertical strip of `n` particles of 10 g, 1 m long, hanging from particle 0.
fn strip(n: u32, stretch: f32, tethers: Option<f32>) -> ClothDesc {
    let spacing = 1.0 / (n - 1) as f32;
    ClothDesc {
        name: "strip".into(),
        positions: (0..n).map(|i| [0.0, -(i as f32) * spacing, 0.0]).collect(),
        mass: MassSpec::ParticleMass(0.01),
        edge_sets: vec![EdgeSet {
            edges: (0..n - 1).map(|i| [i, i + 1]).collect(),
            elasticity: compliance(stretch),
            ..EdgeSet::stretch()
        }],
        pins: vec![0],
        kinds: KindDescs {
            tethers: tethers.map(|scale| TetherDesc { scale, elasticity: Elasticity::RIGID }),
            ..KindDescs::default()
        },
        ..ClothDesc::default()
    }
}

fn build(settings: SimSettings, cloth: &ClothDesc) -> Result<Model, BuildError> {
    let mut b = ModelBuilder::new(settings, Limits::default())?;
    b.add_cloth(cloth)?;
    b.build()
}

fn run(model: &mut Model, steps: usize) {
    for _ in 0..steps {
        let s = step(model, &StepOptions { path: KernelPath::Simd, residual: false });
        assert_eq!(s.degenerate(), 0);
    }
}

fn distance(a: [f32; 3], b: [f32; 3]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

#[test]
fn one_iteration_strip_stays_within_its_tethers_and_sags_without_them() {
    let s = settings(60.0, 4, 1, [0.0, -9.81, 0.0]);
    let longest = |tethers: Option<f32>| {
        let mut m = build(s.clone(), &strip(40, 1e-4, tethers)).unwrap();
        let mut longest = 0.0f32;
        for _ in 0..240 {
            run(&mut m, 1);
            longest = longest.max(distance(m.particles().position(39), m.particles().position(0)));
        }
        longest
    };
    let free = longest(None);
    for scale in [1.0f32, 1.1] {
        let held = longest(Some(scale));
        // Rigid tethers are projected last in each iteration: the strip ends each step on its
        // bound, up to the rounding of one projection (a few ulp of 1 m).
        assert!(held <= scale * (1.0 + 1e-6), "scale {scale}: the strip reached {held} m");
        // Without tethers it overshoots its rest length by more than twice what the tethers allow.
        assert!(free - 1.0 > 2.0 * (scale - 1.0), "without tethers: {free} m, with ({scale}): {held} m");
    }
    assert!(free > 1.2, "without tethers one iteration lets the strip hang at {free} m");
}

#[test]
fn inside_its_bound_a_tether_changes_nothing() {
    // Zero gravity, the strip drifting gently toward its pin and sideways: every particle stays
    // inside its bound (scale 1.1), so the tethers never act and the bits equal those of the
    // untethered strip.
    let s = settings(60.0, 2, 4, [0.0; 3]);
    let mut cloth = strip(12, 1e-3, None);
    cloth.velocities = Some((0..12).map(|i| [0.01 * (i % 3) as f32, 0.05 * i as f32 / 11.0, 0.0]).collect());
    let mut plain = build(s.clone(), &cloth).unwrap();
    cloth.kinds.tethers = Some(TetherDesc { scale: 1.1, elasticity: Elasticity::RIGID });
    let mut tethered = build(s, &cloth).unwrap();
    assert_eq!(tethered.report().sets.tethers.constraints, 11);
    let bits = |m: &Model| positions(m).iter().flatten().map(|c| c.to_bits()).collect::<Vec<_>>();
    for _ in 0..60 {
        run(&mut plain, 1);
        run(&mut tethered, 1);
        assert!(tethered.sets().tethers.solve_order().all(|(_, lambda)| lambda == 0.0), "a tether acted");
        assert!(bits(&plain) == bits(&tethered), "an idle tether moved something");
    }
}

#[test]
fn a_particle_beyond_its_bound_is_pulled_back_onto_it_never_closer() {
    // Two particles joined by a very soft edge: one pinned, one thrown away from it at 20 m/s.
    // Both tethers pull it back (λ < 0, never > 0). The rigid one holds it on its bound every
    // step after; the compliant one (α̃ = 3.6 against w = 10/kg) takes it a fraction
    // w/(w + α̃) of the way back, so it ends between the bound and where it would have flown.
    let sling = |tether_compliance: Option<f32>| {
        let cloth = ClothDesc {
            name: "sling".into(),
            positions: vec![[0.0; 3], [0.0, -0.5, 0.0]],
            velocities: Some(vec![[0.0; 3], [3.0, -20.0, 1.0]]),
            mass: MassSpec::ParticleMass(0.1),
            edge_sets: vec![EdgeSet {
                edges: vec![[0, 1]],
                elasticity: compliance(10.0),
                ..EdgeSet::stretch()
            }],
            pins: vec![0],
            kinds: KindDescs {
                tethers: tether_compliance.map(|c| TetherDesc { scale: 1.5, elasticity: compliance(c) }),
                ..KindDescs::default()
            },
            ..ClothDesc::default()
        };
        build(settings(60.0, 1, 2, [0.0; 3]), &cloth).unwrap()
    };
    let mut free = sling(None);
    run(&mut free, 1);
    let flown = distance(free.particles().position(1), [0.0; 3]);
    let mut rigid = sling(Some(0.0));
    let bound = rigid.sets().tethers.solve_order().next().unwrap().0.params[MAX_LENGTH];
    assert_eq!(bound, 0.75);
    assert!(flown > 0.8, "the throw leaves the bound: {flown} m");
    for _ in 0..30 {
        run(&mut rigid, 1);
        let d = distance(rigid.particles().position(1), [0.0; 3]);
        assert!((d - bound).abs() <= bound * 1e-6, "a rigid tether leaves it at {d} m, bound {bound} m");
        assert!(rigid.sets().tethers.solve_order().all(|(_, lambda)| lambda < 0.0), "a tether pushed");
    }
    let mut soft = sling(Some(1e-3));
    run(&mut soft, 1);
    let d = distance(soft.particles().position(1), [0.0; 3]);
    assert!(d > bound && d < flown, "compliant: {d} m, bound {bound} m, untethered {flown} m");
    assert!(soft.sets().tethers.solve_order().all(|(_, lambda)| lambda < 0.0));
}

#[test]
fn unreachable_particles_get_no_tether_and_nearest_pins_win() {
    // Two strips in one cloth, side by side; only the first is pinned (at its top).
    let mut cloth = strip(5, 0.0, Some(1.0));
    let second: Vec<[f32; 3]> = cloth.positions.iter().map(|p| [1.0, p[1], 0.0]).collect();
    cloth.positions.extend(second);
    cloth.edge_sets[0].edges.extend((5..9).map(|i| [i, i + 1]));
    let m = build(settings(60.0, 1, 1, [0.0; 3]), &cloth).unwrap();
    let tethers: Vec<[u32; 2]> = m.sets().tethers.solve_order().map(|(c, _)| c.particles).collect();
    assert_eq!(tethers.len(), 4, "{tethers:?}");
    assert!(tethers.iter().all(|&[p, pin]| p < 5 && pin == 0));
    // Pinned at both ends, each particle goes to the pin nearer along the strip.
    cloth.pins = vec![0, 4];
    let m = build(settings(60.0, 1, 1, [0.0; 3]), &cloth).unwrap();
    let mut tethers: Vec<([u32; 2], f32)> =
        m.sets().tethers.solve_order().map(|(c, _)| (c.particles, c.params[MAX_LENGTH])).collect();
    tethers.sort_by_key(|t| t.0);
    assert_eq!(tethers, vec![([1, 0], 0.25), ([2, 0], 0.5), ([3, 4], 0.25)], "ties go to the lower pin");
}

#[test]
fn bad_tether_input_is_refused_with_its_rule() {
    let s = settings(60.0, 1, 1, [0.0; 3]);
    let fails = |cloth: ClothDesc| build(s.clone(), &cloth).unwrap_err();
    let e = fails(strip(4, 0.0, Some(0.99)));
    assert_eq!(e.location.field, "tether_scale");
    assert!(matches!(e.rule, Rule::BelowMinimum { min: 1.0, .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "cloth 'strip': tether_scale: 0.99 must be at least 1: a tether shorter than the rest path \
         along the cloth would fight the cloth"
    );
    for bad in [f32::NAN, f32::INFINITY] {
        let e = fails(strip(4, 0.0, Some(bad)));
        assert_eq!(
            (e.location.field, &e.rule),
            ("tether_scale", &Rule::NotFinite { value: bad.to_string() })
        );
    }
    let e = fails(ClothDesc { pins: vec![], ..strip(4, 0.0, Some(1.0)) });
    assert_eq!(e.location.field, "tether_scale");
    assert!(matches!(e.rule, Rule::MissingPrerequisite { feature: "tethers", .. }), "{e}");
    let mut cloth = strip(4, 0.0, None);
    cloth.kinds.tethers = Some(TetherDesc { scale: 1.0, elasticity: compliance(f32::MAX) });
    let e = fails(cloth);
    assert_eq!(e.location.field, "tether_compliance");
    assert!(matches!(e.rule, Rule::TooLargeForTimeStep { .. }), "{e}");
}
