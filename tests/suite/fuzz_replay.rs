//! Promise: every committed fuzz input (the starting corpora in `fuzz/corpus/TARGET/` and the inputs
//! that once found a bug, in `fuzz/regressions/TARGET/`) runs cleanly through the same library
//! function libFuzzer runs, under plain `cargo test` on the stable toolchain.

use std::path::Path;

fn replay(target: &str, body: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else { continue };
        let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
        files.sort();
        for file in files {
            let data = std::fs::read(&file).unwrap();
            let outcome = std::panic::catch_unwind(|| body(&data));
            assert!(outcome.is_ok(), "{} panicked", file.display());
            count += 1;
        }
    }
    assert!(count > 0, "no inputs for fuzz target {target}");
}

#[test]
fn scene_corpus() {
    replay("scene", weft_testkit::fuzzing::scene_text);
}

#[test]
fn obj_corpus() {
    replay("obj", weft_testkit::fuzzing::obj_bytes);
}

#[test]
fn pc2_corpus() {
    replay("pc2", weft_testkit::fuzzing::pc2_bytes);
}

#[test]
fn checkpoint_corpus() {
    replay("checkpoint", weft_testkit::fuzzing::checkpoint_bytes);
}

#[test]
fn triangle_pairs_corpus() {
    replay("triangle_pairs", weft_testkit::fuzzing::triangle_pairs);
}

#[test]
fn arbitrary_scene_corpus() {
    replay("arbitrary_scene", weft_testkit::fuzzing::arbitrary_scene);
}

/// Replays one committed regression input, which must exist.
fn regression(target: &str, name: &str, body: fn(&[u8])) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions").join(target).join(name);
    let data = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    body(&data);
}

/// The scene a committed `arbitrary_scene` regression input draws.
fn regression_scene(name: &str) -> weft_testkit::fuzzing::ArbitraryScene {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/arbitrary_scene").join(name);
    let data = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut u = arbitrary::Unstructured::new(&data);
    weft_testkit::fuzzing::ArbitraryScene::generate(&mut u, data.ends_with(weft_testkit::fuzzing::TAME))
        .unwrap()
}

/// `arbitrary_scene`: β = 1e30 N·s/m times a relative speed of 1e9 m/s overflowed `Δλ` to
/// infinity and the positions to NaN; such a lane is now skipped and counted.
#[test]
fn regression_damping_overflow() {
    regression("arbitrary_scene", "damping-overflow-4d194bbd", weft_testkit::fuzzing::arbitrary_scene);
}

/// `scene`: a wind of 1.1e17 m/s with lift overflowed a particle's predicted velocity to
/// infinity and then NaN; such a prediction is now not made.
#[test]
fn regression_wind_overflow() {
    regression("scene", "wind-overflow-19ae9dca.toml", weft_testkit::fuzzing::scene_text);
}

/// `arbitrary_scene`: a scene whose rest lengths are far from its initial distances (a random
/// tangle of rigid edges) broke the SIMD/reference agreement bound, which only the rounding
/// sensitivity of a scene starting at rest length justifies. Such scenes are now outside the
/// well-conditioned range, where only finiteness and counting are checked.
#[test]
fn regression_agreement_far_from_rest() {
    let scene = regression_scene("agreement-far-from-rest-a1f0eb56");
    assert!(scene.cloth.edge_sets.iter().any(|e| e.rest_lengths.is_some()));
    assert!(!scene.well_conditioned());
    regression("arbitrary_scene", "agreement-far-from-rest-a1f0eb56", weft_testkit::fuzzing::arbitrary_scene);
}

/// `arbitrary_scene`, three findings of one afternoon, each a scene whose triangles are slivers
/// (the tame lattice's particles in one row, lifted by at most 5 cm) that a particle sweeps
/// across in one step, so that which way a bending angle turns is a matter of rounding:
///
/// * `zero-coordinate-nudge`: a 2.5e-4 m gap against a sensitivity of 1.2e-7 m, because the
///   scene lies in y = 0 and `0.0.next_up()` (1e-45 m) probes nothing: the nudge is now one ulp
///   of the scene's largest coordinate;
/// * `one-sided-fold`: one ulp one way moved the reference 2e-6 m, the other way 2e-4 m: the
///   sensitivity is now the larger of the two directions;
/// * `count-at-a-threshold-4-ulps`: a degenerate count the reference kept one ulp either way
///   but changed four ulps off: counts are now compared only where 16 ulps either way leave it.
///
/// Those three sharpen the check. The cause they share now puts the scenes outside the
/// well-conditioned range (see `regression_sliver_swept_in_one_step`); they are replayed.
#[test]
fn regression_slivers_in_a_row() {
    for name in
        ["zero-coordinate-nudge-a721dbd9", "one-sided-fold-9c200220", "count-at-a-threshold-4-ulps-4d2e8d39"]
    {
        let scene = regression_scene(name);
        assert!(scene.cloth.positions.iter().all(|p| p[1] == 0.0), "{name}: one row of the lattice");
        assert!(!scene.well_conditioned(), "{name}: slivers swept in a step");
        regression("arbitrary_scene", name, weft_testkit::fuzzing::arbitrary_scene);
    }
}

/// `arbitrary_scene`: a hinge of two slivers (3 mm high) with rigid bending, whose one free
/// corner moves 17 mm in a step: it sweeps across the hinge, the bending angle turns by π, and
/// the two paths (both jumping 90 m) went round different ways. A triangle lower than 1 cm or than
/// four times a step's reach now puts a scene outside the well-conditioned range.
#[test]
fn regression_sliver_swept_in_one_step() {
    let scene = regression_scene("sliver-swept-in-one-step-907d985f");
    assert!(!scene.well_conditioned());
    regression(
        "arbitrary_scene",
        "sliver-swept-in-one-step-907d985f",
        weft_testkit::fuzzing::arbitrary_scene,
    );
}

/// `arbitrary_scene`: twenty pinned particles following a keyed path (its rotation not
/// normalised) at coordinates near 3e38 m, 1e6 steps per second: the pin targets were finite, but
/// `(x - x_prev) / h` overflowed and `inf - inf` made NaN velocities. The rule it broke: finite
/// input never produces a non-finite value. A velocity f32 cannot hold is now not taken (the
/// particle keeps the velocity it had) and the step statistics count it as held, in the SIMD
/// path and in the reference alike.
#[test]
fn regression_nan_velocity_following_pins() {
    let scene = regression_scene("nan-velocity-following-pins");
    let mut fast = scene.build(scene.cloths()).expect("the finding's scene builds");
    let mut reference = weft_reference::ReferenceSolver::from_model(&fast);
    let options = weft_kernels::StepOptions { path: weft_kernels::KernelPath::Simd, residual: false };
    let (mut held_fast, mut held_reference) = (0, 0);
    for step in 0..weft_testkit::fuzzing::ARBITRARY_STEPS {
        held_fast += weft_kernels::step(&mut fast, &options).held;
        held_reference += reference.step().held;
        assert!(fast.particles().all_finite(), "SIMD: a non-finite position or velocity after step {step}");
        let finite = |v: Vec<[f32; 3]>| v.iter().flatten().all(|c| c.is_finite());
        assert!(
            finite(reference.positions()) && finite(reference.velocities()),
            "reference: non-finite after step {step}"
        );
    }
    assert!(held_fast > 0, "the finding exercises the hold rule in the SIMD path");
    assert!(held_reference > 0, "the finding exercises the hold rule in the reference");
    regression("arbitrary_scene", "nan-velocity-following-pins", weft_testkit::fuzzing::arbitrary_scene);
}

/// `arbitrary_scene`: a tame scene of two copies of a cloth whose one hinge lies folded flat (its
/// wings and one edge end on one line, all three pinned): the free end's gradient is 0 in exact
/// arithmetic, and the two paths, with the same positions to the bit, disagreed on whether it
/// was degenerate (the SIMD form rounded its `Σ wᵢ|∇ᵢ|²` to 0, the reference's to 1e-15 and
/// projected a `Δλ` of 0). The rule it broke: both paths skip the same projections. A hinge whose
/// free corners weigh at most `IMMOVABLE` of what its corners could is now skipped in both.
#[test]
fn regression_immovable_flat_hinge() {
    let scene = regression_scene("immovable-flat-hinge-538bf481");
    assert!(scene.well_conditioned(), "the counts are compared");
    let mut fast = scene.build(scene.cloths()).expect("the finding's scene builds");
    let mut reference = weft_reference::ReferenceSolver::from_model(&fast);
    let options = weft_kernels::StepOptions { path: weft_kernels::KernelPath::Simd, residual: false };
    for step in 0..weft_testkit::fuzzing::ARBITRARY_STEPS {
        let (a, b) = (weft_kernels::step(&mut fast, &options), reference.step());
        assert_eq!(a.degenerate(), 2, "step {step}: each copy's hinge skipped (SIMD)");
        assert_eq!(b.degenerate, 2, "step {step}: each copy's hinge skipped (reference)");
    }
    regression("arbitrary_scene", "immovable-flat-hinge-538bf481", weft_testkit::fuzzing::arbitrary_scene);
}

/// The agreement check of `arbitrary_scene` is not vacuous: some corpus inputs are
/// well-conditioned scenes that build and have constraints, some of those have particle and
/// surface self-collision, and some have two cloths whose surface contacts meet each other.
#[test]
fn arbitrary_corpus_compares_simd_with_reference() {
    use weft_core::ClothDesc;
    use weft_core::self_collision::SelfCollisionMode;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/arbitrary_scene");
    let (mut compared, mut particles, mut triangles, mut between) = (0, 0, 0, 0);
    let surface =
        |c: &ClothDesc| c.self_collision.is_some() && c.self_collision_mode == SelfCollisionMode::Triangles;
    let options = weft_kernels::StepOptions { path: weft_kernels::KernelPath::Simd, residual: false };
    // The contacts the first step's search makes (on the predictions, before any projection).
    let contacts = |mut model: weft_core::Model| weft_kernels::step(&mut model, &options).surface.contacts;
    for entry in std::fs::read_dir(dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        let mut u = arbitrary::Unstructured::new(&data);
        let Ok(scene) = weft_testkit::fuzzing::ArbitraryScene::generate(
            &mut u,
            data.ends_with(weft_testkit::fuzzing::TAME),
        ) else {
            continue;
        };
        if !scene.well_conditioned() {
            continue;
        }
        let Ok(model) = scene.build(scene.cloths()) else { continue };
        compared += usize::from(model.report().stretch + model.report().shear > 0);
        match (scene.cloth.self_collision, scene.cloth.self_collision_mode) {
            (Some(_), SelfCollisionMode::Particles) => particles += 1,
            (Some(_), SelfCollisionMode::Triangles) => triangles += 1,
            (None, _) => {}
        }
        if surface(&scene.cloth) && scene.second.as_ref().is_some_and(surface) {
            // The first step's search sees each cloth's own predictions as it would alone, so
            // any contacts beyond the two cloths' alone are between them.
            let second = scene.second.as_ref().unwrap();
            let alone =
                contacts(scene.build([&scene.cloth]).unwrap()) + contacts(scene.build([second]).unwrap());
            between += usize::from(contacts(model) > alone);
        }
    }
    assert!(compared >= 3, "only {compared} corpus inputs compare the two paths");
    assert!(
        particles >= 1 && triangles >= 1 && between >= 1,
        "compared with self-collision: {particles} particle, {triangles} surface, {between} between two cloths"
    );
}

/// `arbitrary_scene`: two cloths with particle contacts, the second a copy of the first moved by
/// 0.3 m, the larger of their thicknesses: every particle starts exactly at the contact distance
/// from its copy, where rounding decides whether they touch (the SIMD path and the reference
/// ended 7 cm apart; 1 µm either way they agree within 5e-7 m). The nudged references moved a
/// particle and its copy alike, so they did not probe that threshold; the second cloth's nudge
/// is now the first's turned over.
#[test]
fn regression_copy_at_the_thickness() {
    let scene = regression_scene("copy-at-the-thickness-7593e71e");
    let second = scene.second.as_ref().expect("two cloths");
    let thickness = |c: &weft_core::ClothDesc| c.self_collision.unwrap().thickness;
    let apart = second.positions[0][2] - scene.cloth.positions[0][2];
    assert_eq!(apart, thickness(&scene.cloth).max(thickness(second)), "copies at the contact distance");
    assert!(scene.well_conditioned());
    regression("arbitrary_scene", "copy-at-the-thickness-7593e71e", weft_testkit::fuzzing::arbitrary_scene);
}

/// `arbitrary_scene`: surface self-collision at 6e8 m (a mesh collider 1e9 m thick threw the
/// cloth there), where `f32` puts two corners of a triangle in one place: the closest point of a
/// vertex on that triangle took its weights from 0/0, and the contact's NaN normal made every
/// position NaN in the SIMD path (the reference, rounding differently, met no such triangle). The
/// rule it broke: finite input never produces a non-finite value. A triangle with a side of no
/// length now gives the closest point of its sides, and a contact needs a distance that is a
/// number.
#[test]
fn regression_surface_contact_two_corners_in_one_place() {
    let scene = regression_scene("surface-contact-two-corners-in-one-place-13f23965");
    assert_eq!(scene.cloth.self_collision_mode, weft_core::self_collision::SelfCollisionMode::Triangles);
    regression(
        "arbitrary_scene",
        "surface-contact-two-corners-in-one-place-13f23965",
        weft_testkit::fuzzing::arbitrary_scene,
    );
}

/// `arbitrary_scene`: particle self-collision on a cloth with no constraints whose particles lie
/// four and two in one place: both paths counted 510 degenerate contacts in a step (no normal
/// between particles under 1 µm apart), the same in each, but the target held the count to the
/// constraints' projections alone (0). The rule it broke was the target's own: a degenerate
/// projection is one of the projections made, and self-collision contacts are projections too.
#[test]
fn regression_particle_contacts_of_particles_in_one_place() {
    let scene = regression_scene("particle-contacts-of-particles-in-one-place-5c6d281c");
    let mut model = scene.build(scene.cloths()).expect("the finding's scene builds");
    let options = weft_kernels::StepOptions { path: weft_kernels::KernelPath::Simd, residual: false };
    let stats = weft_kernels::step(&mut model, &options);
    assert!(
        stats.kinds[weft_core::kinds::KindId::SelfCollision].degenerate > 0,
        "the finding counts degenerate contacts"
    );
    regression(
        "arbitrary_scene",
        "particle-contacts-of-particles-in-one-place-5c6d281c",
        weft_testkit::fuzzing::arbitrary_scene,
    );
}

/// `arbitrary_scene`: surface self-collision on 20 particles, four of them pinned, under 13
/// overlapping triangles: 272 contacts, some of a pinned vertex on a triangle whose free corner
/// carries a weight near 0. Projected exactly, such a contact flings that corner by the gap over
/// its weight; in one iteration the positions reached 2e13 m, then NaN, in the SIMD path and in
/// the reference alike. The rule it broke: finite input never produces a non-finite value. A
/// projection now moves no particle farther than `MAX_PUSH` times the contact's gap.
#[test]
fn regression_surface_contacts_near_pinned_corners() {
    let scene = regression_scene("surface-contacts-near-pinned-corners-1dba574d");
    assert!(!scene.cloth.pins.is_empty());
    assert_eq!(scene.cloth.self_collision_mode, weft_core::self_collision::SelfCollisionMode::Triangles);
    regression(
        "arbitrary_scene",
        "surface-contacts-near-pinned-corners-1dba574d",
        weft_testkit::fuzzing::arbitrary_scene,
    );
}

/// `arbitrary_scene`: two cloths with surface self-collision, pinned particles following a keyed
/// path that jumps 1e9 m in 10 ms. A pinned vertex met a triangle whose only free corner carried
/// a weight of 4e-21 at the contact: `Σ w² inv` was subnormal, the friction's cut `f / Σ w² inv`
/// overflowed, and the pinned particles' `0 × ∞` made every position NaN, in the SIMD path, the
/// scalar twin and the reference alike. The rule it broke: finite input never produces a
/// non-finite value. Such a contact's moves are now made from its scales divided by their
/// largest (`weft_core::surface_collision::capped_push`), the same moves without an infinity.
#[test]
fn regression_nan_far_pins_surface() {
    let scene = regression_scene("nan-far-pins-surface-3bd2f788");
    assert!(scene.second.is_some(), "two cloths");
    assert_eq!(scene.cloth.self_collision_mode, weft_core::self_collision::SelfCollisionMode::Triangles);
    regression("arbitrary_scene", "nan-far-pins-surface-3bd2f788", weft_testkit::fuzzing::arbitrary_scene);
}
