//! Scene reading: the worked-example (`seed`) and grid scenes, and every rule with its one-line
//! message and line.

use super::*;
use weft_core::units::UnitError;

const SEED: &str = r#"[simulation]
fps = 10.0
frames = 1
substeps = 1
iterations = 1
gravity = [0.0, 0.0, 0.0]

[[cloth]]
name = "seed"
positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
particle_mass = 1.0
edges = [[0, 1]]
rest_lengths = [1.0]
stretch_compliance = 0.01
pins = [0]
"#;

const FLAG: &str = r#"[simulation]
fps = 24.0
frames = 48

[[cloth]]
name = "flag"
grid = { resolution = [4, 3], size = [1.5, 1.0], origin = [0.0, 1.0, 0.0], plane = "xy" }
density = 0.2
stretch_compliance = 1e-6
shear_stiffness = 1e4
pin_corners = ["top-left", "top-right"]
"#;

fn parse(text: &str) -> Result<Scene, SceneError> {
    parse_scene(text, Path::new("scene.toml"), &Limits::default())
}

/// The error of parsing then building `text`, checked to be one line.
fn error(text: &str) -> SceneError {
    let e = match parse(text) {
        Err(e) => e,
        Ok(scene) => scene.build_model().expect_err("the scene should fail"),
    };
    assert!(!e.to_string().contains('\n'), "{e}");
    e
}

/// The seed scene with `from` replaced by `to`.
fn seed_with(from: &str, to: &str) -> String {
    assert!(SEED.contains(from), "{from}");
    SEED.replacen(from, to, 1)
}

fn flag_with(from: &str, to: &str) -> String {
    assert!(FLAG.contains(from), "{from}");
    FLAG.replacen(from, to, 1)
}

#[test]
fn seed_scene_builds() {
    let scene = parse(SEED).unwrap();
    assert_eq!(scene.settings().fps, 10.0);
    assert_eq!(scene.settings().frames, 1);
    assert_eq!(scene.settings().gravity, [0.0; 3]);
    assert_eq!(scene.cloth_names().collect::<Vec<_>>(), ["seed"]);
    let cloth = &scene.cloths()[0];
    assert_eq!(cloth.edge_sets[0].rest_lengths, Some(vec![1.0]));
    assert_eq!(cloth.edge_sets[0].elasticity.compliance(), weft_core::units::Compliance::new(0.01).unwrap());
    let model = scene.build_model().unwrap();
    assert_eq!(model.particles().inv_mass(), &[0.0, 1.0]);
    assert_eq!(model.report().stretch, 1);
    assert_eq!(model.report().shear, 0);
}

#[test]
fn defaults_fill_optional_keys() {
    let scene =
        parse("[simulation]\nfps = 30\nframes = 2\n[[cloth]]\nname = \"c\"\npositions = [[0, 0, 0]]\n")
            .unwrap();
    let s = scene.settings();
    // Neither `substeps` nor `iterations`: the substep count is chosen to a strain tolerance.
    assert_eq!((s.fps, s.substeps, s.iterations), (30.0, 4, 1));
    assert_eq!(s.tolerance, Some(weft_core::StrainTolerance::default()));
    assert_eq!(s.gravity, [0.0, -9.81, 0.0]);
    assert_eq!(s.velocity_damping, 0.0);
    let c = &scene.cloths()[0];
    assert_eq!(c.mass, weft_core::MassSpec::ParticleMass(1.0));
    assert!(c.velocities.is_none() && c.pins.is_empty());
    assert!(scene.build_model().is_ok());
}

#[test]
fn the_substep_count_is_fixed_or_chosen_to_a_tolerance() {
    let sim = |keys: &str| {
        let text = format!(
            "[simulation]\nfps = 30\nframes = 2\n{keys}\n[[cloth]]\nname = \"c\"\npositions = [[0, 0, 0]]\n"
        );
        let scene = parse(&text).unwrap();
        assert!(scene.build_model().is_ok(), "{keys}");
        scene.settings().clone()
    };
    let tol = |max_strain, min_substeps, max_substeps| {
        Some(weft_core::StrainTolerance { max_strain, min_substeps, max_substeps })
    };
    // Either fixed key alone: a fixed count, the other key's default.
    let s = sim("substeps = 2");
    assert_eq!((s.substeps, s.iterations, s.tolerance), (2, 8, None));
    let s = sim("iterations = 3");
    assert_eq!((s.substeps, s.iterations, s.tolerance), (4, 3, None));
    // Neither: the tolerance mode with its defaults.
    let s = sim("");
    assert_eq!((s.substeps, s.iterations, s.tolerance), (4, 1, tol(0.02, 4, 128)));
    // A tolerance key: the tolerance mode, the other keys at their defaults; `iterations` may be
    // given with it.
    let s = sim("max_strain = 0.05");
    assert_eq!((s.substeps, s.iterations, s.tolerance), (4, 1, tol(0.05, 4, 128)));
    let s = sim("min_substeps = 2\nmax_substeps = 32\niterations = 2");
    assert_eq!((s.substeps, s.iterations, s.tolerance), (2, 2, tol(0.02, 2, 32)));
    let s = sim("min_substeps = 8\nmax_substeps = 8");
    assert_eq!((s.substeps, s.tolerance), (8, tol(0.02, 8, 8)));
}

/// Baking to a tolerance, a scene with surface self-collision takes
/// `StrainTolerance::SURFACE_ITERATIONS` unless it names `iterations`; particle self-collision,
/// a fixed count or a given `iterations` leave the count as it was.
#[test]
fn surface_self_collision_raises_the_default_iterations_of_the_tolerance_mode() {
    let iterations = |sim: &str, cloth: &str| {
        let text = format!(
            "[simulation]\nfps = 30\nframes = 2\n{sim}\n[[cloth]]\nname = \"c\"\n\
             grid = {{ resolution = [4, 4], size = [1.0, 1.0] }}\n{cloth}\n"
        );
        let scene = parse(&text).unwrap();
        assert!(scene.build_model().is_ok(), "{sim} / {cloth}");
        scene.settings().iterations
    };
    let surface = "self_collision = \"triangles\"\nself_thickness = 0.004";
    let particles = "self_collision = \"particles\"\nself_thickness = 0.2";
    let surface_iterations = weft_core::StrainTolerance::SURFACE_ITERATIONS;
    assert!(surface_iterations > weft_core::StrainTolerance::DEFAULT_ITERATIONS);
    assert_eq!(iterations("", surface), surface_iterations);
    assert_eq!(iterations("max_strain = 0.05", surface), surface_iterations);
    assert_eq!(iterations("", particles), weft_core::StrainTolerance::DEFAULT_ITERATIONS);
    assert_eq!(iterations("", ""), weft_core::StrainTolerance::DEFAULT_ITERATIONS);
    assert_eq!(iterations("max_strain = 0.05\niterations = 2", surface), 2);
    assert_eq!(iterations("substeps = 4", surface), 8, "a fixed count keeps its own default");
    assert_eq!(iterations("", "self_collision = false"), weft_core::StrainTolerance::DEFAULT_ITERATIONS);
}

/// `(the [simulation] keys after fps and frames, the error)` for the tolerance keys.
const TOLERANCE_CASES: &[(&str, &str)] = &[
    ("max_strain = 0.0", "scene.toml:4:14: simulation.max_strain: 0 must be greater than zero"),
    ("max_strain = -0.01", "scene.toml:4:14: simulation.max_strain: -0.01 must be greater than zero"),
    ("max_strain = nan", "scene.toml:4:14: simulation.max_strain: NaN is not a finite number"),
    ("max_strain = inf", "scene.toml:4:14: simulation.max_strain: inf is not a finite number"),
    ("min_substeps = 0", "scene.toml:4:16: simulation.min_substeps: must be at least 1"),
    ("max_substeps = 0", "scene.toml:4:16: simulation.max_substeps: must be at least 1"),
    ("min_substeps = 0\nmax_substeps = 0", "scene.toml:4:16: simulation.min_substeps: must be at least 1"),
    ("min_substeps = -1", "scene.toml:4:16: simulation.min_substeps: -1 must not be negative"),
    ("min_substeps = 200", "scene.toml:4:16: simulation.min_substeps: 200 is more than max_substeps = 128"),
    (
        "min_substeps = 16\nmax_substeps = 8",
        "scene.toml:5:16: simulation.max_substeps: 8 is less than min_substeps = 16",
    ),
    (
        "substeps = 8\nmax_strain = 0.02",
        "scene.toml:5:14: simulation.max_strain: `max_strain` has the substep count of each frame \
         chosen to a strain tolerance, `substeps` fixes it: give one",
    ),
    (
        "min_substeps = 2\nsubsteps = 8",
        "scene.toml:4:16: simulation.min_substeps: `min_substeps` has the substep count of each \
         frame chosen to a strain tolerance, `substeps` fixes it: give one",
    ),
    (
        "max_substeps = 64\nsubsteps = 8",
        "scene.toml:4:16: simulation.max_substeps: `max_substeps` has the substep count of each \
         frame chosen to a strain tolerance, `substeps` fixes it: give one",
    ),
];

#[test]
fn every_tolerance_rule_has_its_line_and_message() {
    for &(keys, message) in TOLERANCE_CASES {
        let text = format!(
            "[simulation]\nfps = 30.0\nframes = 2\n{keys}\n[[cloth]]\nname = \"c\"\npositions = [[0, 0, 0]]\n"
        );
        assert_eq!(error(&text).to_string(), message, "{keys}");
    }
}

#[test]
fn the_step_limit_counts_max_substeps_in_the_tolerance_mode() {
    let limits = Limits { max_steps: 1000, ..Limits::default() };
    let text = "[simulation]\nfps = 30\nframes = 10\n[[cloth]]\nname = \"c\"\npositions = [[0, 0, 0]]\n";
    let scene = parse_scene(text, Path::new("s.toml"), &limits).unwrap();
    assert_eq!(
        scene.build_model().unwrap_err().to_string(),
        "s.toml:3:10: simulation.frames: 1280 frames × max_substeps time steps: more than the limit \
         of 1000 (raise it with --max-particles / --max-constraints / --max-steps)"
    );
    let fits = text.replace("frames = 10", "frames = 10\nmax_substeps = 100");
    assert!(parse_scene(&fits, Path::new("s.toml"), &limits).unwrap().build_model().is_ok());
}

#[test]
fn grid_scene_builds() {
    let scene = parse(FLAG).unwrap();
    let cloth = &scene.cloths()[0];
    assert_eq!(cloth.positions.len(), 12);
    assert_eq!(cloth.positions[11], [1.5, 2.0, 0.0]);
    // top-left is (0, nv−1) = 8, top-right (nu−1, nv−1) = 11.
    assert_eq!(cloth.pins, vec![8, 11]);
    assert_eq!(cloth.triangles.len(), 12);
    let model = scene.build_model().unwrap();
    let report = model.report();
    assert_eq!(report.stretch, 3 * 3 + 4 * 2);
    assert_eq!(report.shear, 2 * 3 * 2);
    assert_eq!(report.pinned, 2);
    assert_eq!(model.cloths()[0].triangles.len(), 12);

    // `[cloth.grid]` table form, another plane, no shear diagonals, explicit pins too.
    let text = "[simulation]\nfps = 24\nframes = 1\n[[cloth]]\nname = \"sheet\"\nshear = false\n\
                pins = [0]\npin_corners = [\"bottom-right\"]\n[cloth.grid]\nresolution = [3, 2]\n\
                size = [2.0, 1.0]\nplane = \"xz\"\n";
    let scene = parse(text).unwrap();
    let cloth = &scene.cloths()[0];
    assert_eq!(cloth.positions[4], [1.0, 0.0, 1.0]);
    assert_eq!(cloth.pins, vec![0, 2]);
    let model = scene.build_model().unwrap();
    assert_eq!(model.report().shear, 0);
    assert_eq!(model.report().stretch, 7);
    assert_eq!(model.report().pinned, 2);
}

#[test]
fn element_errors_point_at_the_element_line() {
    let text = seed_with(
        "edges = [[0, 1]]\nrest_lengths = [1.0]",
        "positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [2.0, 1.0, 0.0], [0.0, 1.0, 0.0]]\nedges = [\n        [0, 1],\n        [1, 2],\n        [2, 3],\n        [1, 1],\n]",
    )
    .replacen("positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]\n", "", 1);
    let e = error(&text);
    assert_eq!(
        e.to_string(),
        "scene.toml:16:9: cloth 'seed': edges[3]: [1, 1] joins particle 1 to itself: an edge \
         needs two different particles"
    );
    assert_eq!(e.line(), Some(16));
    assert_eq!(e.rule(), Some(&weft_core::Rule::SelfEdge { particle: 1 }));
}

/// `(replace, with, message)` in the worked-example scene (`seed`).
const SEED_CASES: &[(&str, &str, &str)] = &[
    // Format rules.
    (
        "fps = 10.0",
        "fps = 10.0\nfoo = 1",
        "scene.toml:3:1: unknown field `foo`, expected one of `fps`, `frames`, `substeps`, `iterations`, `gravity`, `velocity_damping`, `wind`, `air_density`, `max_strain`, `min_substeps`, `max_substeps`",
    ),
    ("fps = 10.0", "fps = 10.0 x", "scene.toml:2:7: string values must be quoted, expected literal string"),
    ("frames = 1", "frames = 1\nframes = 2", "scene.toml:4:1: duplicate key"),
    (
        "frames = 1",
        "frames = 1.5",
        "scene.toml:3:10: invalid type: floating point `1.5`, expected an integer",
    ),
    ("fps = 10.0", "fps = \"fast\"", "scene.toml:2:7: invalid type: string \"fast\", expected a number"),
    ("name = \"seed\"", "", "scene.toml:8:1: missing field `name`"),
    ("frames = 1\n", "", "scene.toml:1:1: missing field `frames`"),
    ("[[cloth]]", "[cloth]", "scene.toml:8:1: invalid type: table, expected an array"),
    (
        "edges = [[0, 1]]",
        "edges = [[0, 1, 2]]",
        "scene.toml:12:10: invalid length 3, expected an array of exactly 2 elements",
    ),
    (
        "positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]",
        "positions = [[0.0, 0.0], [2.0, 0.0, 0.0]]",
        "scene.toml:10:14: invalid length 2, expected an array of exactly 3 elements",
    ),
    ("fps = 10.0", "fps = nan", "scene.toml:2:7: simulation.fps: NaN is not a finite number"),
    (
        "gravity = [0.0, 0.0, 0.0]",
        "gravity = [0.0, -inf, 0.0]",
        "scene.toml:6:11: simulation.gravity: -inf is not a finite number",
    ),
    (
        "positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]",
        "positions = [[0.0, 0.0, 0.0], [2.0, 0.0, inf]]",
        "scene.toml:10:31: cloth 'seed': positions[1]: inf is not a finite number",
    ),
    (
        "positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]",
        "positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 1e39]]",
        "scene.toml:10:31: cloth 'seed': positions[1]: 1e39 does not fit a 32-bit float (largest magnitude 3.4028235e38)",
    ),
    (
        "rest_lengths = [1.0]",
        "rest_lengths = [nan]",
        "scene.toml:13:17: cloth 'seed': rest_lengths[0]: NaN is not a finite number",
    ),
    (
        "pins = [0]",
        "pins = [0, -1]",
        "scene.toml:15:12: cloth 'seed': pins[1]: -1 is not a particle index: indices are whole numbers from 0 to 4294967295",
    ),
    (
        "edges = [[0, 1]]",
        "edges = [[0, 4294967296]]",
        "scene.toml:12:10: cloth 'seed': edges[0]: 4294967296 is not a particle index: indices are whole numbers from 0 to 4294967295",
    ),
    ("frames = 1", "frames = -3", "scene.toml:3:10: simulation.frames: -3 must not be negative"),
    (
        "frames = 1",
        "frames = 99999999999",
        "scene.toml:3:10: simulation.frames: 99999999999 is more than 4294967295, the largest count weft takes",
    ),
    (
        "stretch_compliance = 0.01",
        "stretch_compliance = -0.01",
        "scene.toml:14:22: cloth 'seed': stretch_compliance: -0.01 must not be negative",
    ),
    (
        "stretch_compliance = 0.01",
        "stretch_stiffness = 0",
        "scene.toml:14:21: cloth 'seed': stretch_stiffness: 0 must be greater than zero",
    ),
    (
        "stretch_compliance = 0.01",
        "stretch_compliance = 0.01\nstretch_stiffness = 1.0",
        "scene.toml:15:21: cloth 'seed': stretch_stiffness: give `stretch_compliance` or `stretch_stiffness`, not both",
    ),
    (
        "particle_mass = 1.0",
        "density = 1.0\nparticle_mass = 1.0",
        "scene.toml:12:17: cloth 'seed': particle_mass: give `particle_mass` or `density`, not both",
    ),
    (
        "positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]",
        "",
        "scene.toml:8:1: cloth 'seed': a cloth needs its particles: give `positions` (explicit particles), `grid` or `mesh` (an OBJ file)",
    ),
    (
        "pins = [0]",
        "pins = [0]\ngrid = { resolution = [2, 2], size = [1.0, 1.0] }",
        "scene.toml:16:8: cloth 'seed': grid: give `positions` or `grid`, not both",
    ),
    (
        "pins = [0]",
        "pin_corners = [\"top-left\"]",
        "scene.toml:15:15: cloth 'seed': pin_corners: `pin_corners` applies to a `grid` cloth only",
    ),
    (
        "pins = [0]",
        "shear = false",
        "scene.toml:15:9: cloth 'seed': shear: `shear` applies to `grid` and `mesh` cloths only (an explicit cloth lists its `shear_edges`)",
    ),
    // Model rules, found by weft-core and mapped back.
    (
        "edges = [[0, 1]]\nrest_lengths = [1.0]",
        "edges = [[0, 1], [1, 0]]",
        "scene.toml:12:18: cloth 'seed': edges[1]: [1, 0] repeats edges[0]: each pair of particles may be joined once",
    ),
    (
        "pins = [0]",
        "pins = [0, 5]",
        "scene.toml:15:12: cloth 'seed': pins[1]: index 5 is out of range: the cloth has 2 particles",
    ),
    (
        "pins = [0]",
        "triangles = [[0, 1, 2]]",
        "scene.toml:15:14: cloth 'seed': triangles[0]: index 2 is out of range: the cloth has 2 particles",
    ),
    (
        "positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]",
        "positions = []",
        "scene.toml:10:13: cloth 'seed': positions: the cloth has no particles",
    ),
    (
        "positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]",
        "positions = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]",
        "scene.toml:12:10: cloth 'seed': edges[0]: joins particles 0 and 1, which are 0 m apart in the rest shape: below the 1e-6 m a constraint direction can be computed from",
    ),
    (
        "rest_lengths = [1.0]",
        "rest_lengths = [1.0, 2.0]",
        "scene.toml:13:16: cloth 'seed': rest_lengths: has length 2 but edges has length 1: the two lists pair up one to one",
    ),
    (
        "rest_lengths = [1.0]",
        "rest_lengths = [0.0]",
        "scene.toml:13:17: cloth 'seed': rest_lengths[0]: 0 must be greater than zero",
    ),
    (
        "pins = [0]",
        "velocities = [[0.0, 0.0, 0.0]]",
        "scene.toml:15:14: cloth 'seed': velocities: has length 1 but positions has length 2: the two lists pair up one to one",
    ),
    (
        "particle_mass = 1.0",
        "particle_mass = -2.0",
        "scene.toml:11:17: cloth 'seed': particle_mass: -2 must be greater than zero",
    ),
    (
        "particle_mass = 1.0",
        "density = 1.0",
        "scene.toml:11:11: cloth 'seed': density: a density (kg/m²) needs triangles to lump mass from; give particle_mass instead",
    ),
    (
        "pins = [0]",
        "stretch_damping = -1.0",
        "scene.toml:15:19: cloth 'seed': stretch_damping: -1 must not be negative",
    ),
    (
        "stretch_compliance = 0.01",
        "stretch_stiffness = 1e-37",
        "scene.toml:14:21: cloth 'seed': stretch_stiffness (as stretch_compliance): 1e37 is too large for the time step h = 0.1 s: α/h² is not a finite f32",
    ),
    (
        "pins = [0]",
        "shear_edges = [[1, 0]]",
        "scene.toml:15:16: cloth 'seed': shear_edges[0]: [1, 0] repeats edges[0]: each pair of particles may be joined once",
    ),
    (
        "name = \"seed\"",
        "name = \"a/b\"",
        "scene.toml:9:8: cloth 'a/b': name: 'a/b' cannot name a cache file: use letters, digits, '-', '_' or '.', not starting with '.'",
    ),
    (
        "name = \"seed\"",
        "name = \"a\\nb\"",
        "scene.toml:9:8: cloth 'a\\nb': name: 'a\\nb' cannot name a cache file: use letters, digits, '-', '_' or '.', not starting with '.'",
    ),
    ("fps = 10.0", "fps = 0.0", "scene.toml:2:7: simulation.fps: 0 must be greater than zero"),
    ("substeps = 1", "substeps = 0", "scene.toml:4:12: simulation.substeps: must be at least 1"),
    ("iterations = 1", "iterations = 0", "scene.toml:5:14: simulation.iterations: must be at least 1"),
    ("frames = 1", "frames = 0", "scene.toml:3:10: simulation.frames: must be at least 1"),
    (
        "gravity = [0.0, 0.0, 0.0]",
        "velocity_damping = -1.0",
        "scene.toml:6:20: simulation.velocity_damping: -1 must not be negative",
    ),
];

/// An unknown cloth key lists every key a cloth takes: the constraint kinds' keys of the registry
/// (`weft_core::constraint_kinds!`), in registry order, where bending's always stood.
#[test]
fn an_unknown_cloth_key_lists_every_key_with_the_kinds_keys_in_registry_order() {
    let before = "`name`, `positions`, `grid`, `velocities`, `particle_mass`, `density`, `triangles`, `edges`, \
        `rest_lengths`, `stretch_compliance`, `stretch_stiffness`, `stretch_damping`, `shear`, `shear_edges`, \
        `shear_compliance`, `shear_stiffness`, `shear_damping`, `pins`, `pin_corners`, `mesh`, `object`, \
        `non_manifold`, `pin_box`, `pin_file`, `warp_compliance`, `warp_stiffness`, `weft_compliance`, \
        `weft_stiffness`";
    let after = "`pressure`, `volume_compliance`, `volume_stiffness`, `drag`, `lift`, `self_collision`, \
        `self_thickness`, `self_friction`, `follow`, `render_mesh`, `cache_proxy`";
    let kinds: Vec<String> = weft_core::kinds::KindId::ALL
        .iter()
        .flat_map(|k| k.key_names())
        .map(|key| format!("`{key}`"))
        .collect();
    assert!(kinds.contains(&"`bending_compliance`".to_string()) && kinds.contains(&"`tethers`".to_string()));
    let e = error(&seed_with("pins = [0]", "pins = [0]\npin = [1]"));
    assert_eq!(
        e.to_string(),
        format!(
            "scene.toml:16:1: unknown field `pin` (did you mean `pins`?), expected one of {before}, {}, {after}",
            kinds.join(", ")
        )
    );
}

/// A misspelt key in any table names the nearest key the table takes, right after the
/// misspelling (the list of every key follows, as for any unknown key).
#[test]
fn a_misspelt_key_is_answered_with_the_nearest_key_of_its_table() {
    let cases = [
        (seed_with("stretch_compliance", "stretch_compliace"), "stretch_compliace", "stretch_compliance"),
        (seed_with("frames = 1", "frams = 1"), "frams", "frames"),
        (flag_with("plane = \"xy\"", "plane = \"xy\", orign = [0.0, 0.0, 0.0]"), "orign", "origin"),
        (format!("{SEED}\n[[collider]]\nshape = \"sphere\"\nradus = 1.0\n"), "radus", "radius"),
        (format!("{SEED}\n[[collider]]\nshape = \"plane\"\nkeys = [{{ tme = 0.0 }}]\n"), "tme", "time"),
        (flag_with("\"top-left\", ", "\"top-lef\", "), "top-lef", "top-left"),
    ];
    for (text, wrong, right) in cases {
        let e = error(&text).to_string();
        let unknown = if wrong == "top-lef" { "variant" } else { "field" };
        let expected = format!("unknown {unknown} `{wrong}` (did you mean `{right}`?), expected ");
        assert!(e.contains(&expected), "{e}");
    }
}

/// With a missing cloth mesh and a missing collider mesh, the error is the one earlier in the
/// file, whichever table comes first.
#[test]
fn of_a_missing_cloth_mesh_and_collider_mesh_the_first_in_the_file_is_told() {
    let sim = "[simulation]\nfps = 24.0\nframes = 2\n";
    let cloth = "[[cloth]]\nname = \"sheet\"\nmesh = \"no-sheet.obj\"\n";
    let collider = "[[collider]]\nname = \"body\"\nshape = \"mesh\"\nmesh = \"no-body.obj\"\n";
    let e = error(&format!("{sim}{cloth}{collider}")).to_string();
    assert!(e.starts_with("scene.toml:6:8: cloth 'sheet': mesh: "), "{e}");
    let e = error(&format!("{sim}{collider}{cloth}")).to_string();
    assert!(e.starts_with("scene.toml:7:8: collider 'body': mesh: "), "{e}");
}

#[test]
fn every_seed_rule_has_its_line_and_message() {
    for &(from, to, message) in SEED_CASES {
        let e = error(&seed_with(from, to));
        assert_eq!(e.to_string(), message, "replacing {from:?} with {to:?}");
    }
}

#[test]
fn model_rules_are_reachable() {
    let e = error(&seed_with("stretch_compliance = 0.01", "stretch_stiffness = 0"));
    assert_eq!(e.rule(), Some(&weft_core::Rule::Unit { value: 0.0, error: UnitError::Zero }));
    let e = error(&seed_with("pins = [0]", "pins = [9]"));
    assert_eq!(e.rule(), Some(&weft_core::Rule::IndexOutOfRange { index: 9, len: 2 }));
    let e = error(&seed_with("pins = [0]", "pins = [-1]"));
    assert_eq!(e.rule(), None);
    assert_eq!(e.scene_rule(), Some(&SceneRule::BadIndex { value: -1 }));
}

/// `(replace, with, message)` in the flag scene.
const FLAG_CASES: &[(&str, &str, &str)] = &[
    (
        "resolution = [4, 3]",
        "resolution = [1, 3]",
        "scene.toml:7:23: cloth 'flag': grid.resolution: 1 particles per side: a grid needs at least 2",
    ),
    (
        "resolution = [4, 3]",
        "resolution = [100000, 100000]",
        "scene.toml:7:23: cloth 'flag': grid.resolution: 10000000000 grid particles: more than the limit of 16777216 (raise it with --max-particles / --max-constraints / --max-steps)",
    ),
    (
        "resolution = [4, 3]",
        "resolution = [4, -3]",
        "scene.toml:7:23: cloth 'flag': grid.resolution: -3 must not be negative",
    ),
    (
        "size = [1.5, 1.0]",
        "size = [1.5, 0.0]",
        "scene.toml:7:38: cloth 'flag': grid.size: 0 must be greater than zero",
    ),
    (
        "origin = [0.0, 1.0, 0.0]",
        "origin = [0.0, nan, 0.0]",
        "scene.toml:7:59: cloth 'flag': grid.origin: NaN is not a finite number",
    ),
    (
        "plane = \"xy\"",
        "plane = \"ab\"",
        "scene.toml:7:84: unknown variant `ab`, expected one of `xy`, `xz`, `yz`",
    ),
    (
        "[\"top-left\", \"top-right\"]",
        "[\"top-left\", \"top\"]",
        "scene.toml:11:28: unknown variant `top`, expected one of `bottom-left`, `bottom-right`, `top-left`, `top-right`",
    ),
    (
        "density = 0.2",
        "density = 0.2\nedges = [[0, 1]]",
        "scene.toml:9:9: cloth 'flag': edges: `edges` cannot be combined with `grid`: a grid generates its own particles, triangles, stretch edges (at their initial length) and shear edges",
    ),
    (
        "density = 0.2",
        "density = 0.2\nrest_lengths = [1.0]",
        "scene.toml:9:16: cloth 'flag': rest_lengths: `rest_lengths` cannot be combined with `grid`: a grid generates its own particles, triangles, stretch edges (at their initial length) and shear edges",
    ),
    (
        "size = [1.5, 1.0]",
        "size = [1e-7, 1.0]",
        "scene.toml:7:8: cloth 'flag': edges[0] (generated by the grid): joins particles 0 and 1, which are 3.3333333e-8 m apart in the rest shape: below the 1e-6 m a constraint direction can be computed from",
    ),
    (
        "pin_corners = [\"top-left\", \"top-right\"]",
        "pins = [12]",
        "scene.toml:11:9: cloth 'flag': pins[0]: index 12 is out of range: the cloth has 12 particles",
    ),
];

#[test]
fn every_grid_rule_has_its_line_and_message() {
    for &(from, to, message) in FLAG_CASES {
        let e = error(&flag_with(from, to));
        assert_eq!(e.to_string(), message, "replacing {from:?} with {to:?}");
    }
}

#[test]
fn scene_wide_rules() {
    let e = error("[simulation]\nfps = 10\nframes = 1\n");
    assert_eq!(e.to_string(), "scene.toml:1:1: scene: the scene has no cloth");
    let e = error("[[cloth]]\nname = \"a\"\npositions = [[0, 0, 0]]\n");
    assert_eq!(e.to_string(), "scene.toml:1:1: missing field `simulation`");
    let two = format!("{SEED}\n[[cloth]]\nname = \"seed\"\npositions = [[0, 0, 0]]\n");
    assert_eq!(
        error(&two).to_string(),
        "scene.toml:18:8: cloth 'seed': name: the name 'seed' is used by cloth #0 too: cache \
         files are named after cloths"
    );
    let limits = Limits { max_steps: 10, ..Limits::default() };
    let scene = parse_scene(&seed_with("frames = 1", "frames = 11"), Path::new("s.toml"), &limits).unwrap();
    assert_eq!(
        scene.build_model().unwrap_err().to_string(),
        "s.toml:3:10: simulation.frames: 11 frames × substeps time steps: more than the limit \
         of 10 (raise it with --max-particles / --max-constraints / --max-steps)"
    );
}

#[test]
fn files_are_read_with_limits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.toml");
    std::fs::write(&path, SEED).unwrap();
    let scene = load_scene(&path, &Limits::default()).unwrap();
    assert_eq!(scene.path(), path);
    assert_eq!(scene.text(), SEED);

    let missing = dir.path().join("missing.toml");
    let e = load_scene(&missing, &Limits::default()).unwrap_err();
    let message = e.to_string();
    assert!(
        message.starts_with(&format!("{}: cannot read the scene file: ", missing.display())),
        "{message}"
    );
    assert!(
        matches!(e, SceneError::Read { ref source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    );

    let e = load_scene(dir.path(), &Limits::default()).unwrap_err();
    assert!(matches!(e, SceneError::Read { .. }), "{e}");

    let e = load_scene_limited(&path, &Limits::default(), 10).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: the scene file is {} bytes, more than the limit of 10 bytes for a scene (raise it with --max-scene-bytes)",
            path.display(),
            SEED.len()
        )
    );

    // A (sparse) file over the real limit is refused from its length alone.
    let big = dir.path().join("big.toml");
    std::fs::File::create(&big).unwrap().set_len(MAX_SCENE_BYTES + 1).unwrap();
    assert!(matches!(
        load_scene(&big, &Limits::default()),
        Err(SceneError::TooLarge { len, .. }) if len == MAX_SCENE_BYTES + 1
    ));

    let latin1 = dir.path().join("latin1.toml");
    std::fs::write(&latin1, b"[simulation]\nfps = 1 # caf\xe9\n").unwrap();
    assert_eq!(
        load_scene(&latin1, &Limits::default()).unwrap_err().to_string(),
        format!("{}:2:14: the scene file is not UTF-8 text", latin1.display())
    );
}

/// A small deterministic xorshift generator for the mutation tests.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn mutated_scenes_never_panic_and_errors_stay_on_one_line() {
    let alphabet = b"[]{}=,.\"'\n -+0123456789eEinfatrux_#";
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for base in [SEED, FLAG] {
        for _ in 0..2000 {
            let mut bytes = base.as_bytes().to_vec();
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(bytes.len());
                match rng.below(3) {
                    0 => bytes[i] = alphabet[rng.below(alphabet.len())],
                    1 => {
                        bytes.remove(i);
                    }
                    _ => bytes.insert(i, alphabet[rng.below(alphabet.len())]),
                }
            }
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            let result = parse(&text).and_then(|scene| scene.build_model().map(|_| ()));
            if let Err(e) = result {
                let message = e.to_string();
                assert!(!message.contains('\n'), "{message}");
                assert!(message.starts_with("scene.toml:"), "{message}");
            }
        }
    }
}

/// A 3×2-vertex sheet of two quads in the xy plane, with UVs along x (U) and y (V).
const QUADS_OBJ: &str = "o sheet
v 0 0 0
v 1 0 0
v 2 0 0
v 0 1 0
v 1 1 0
v 2 1 0
vt 0 0
vt 0.5 0
vt 1 0
vt 0 1
vt 0.5 1
vt 1 1
f 1/1 2/2 5/5 4/4
f 2/2 3/3 6/6 5/5
";

const MESH_SCENE: &str = r#"[simulation]
fps = 24.0
frames = 1

[[cloth]]
name = "sheet"
mesh = "sheet.obj"
density = 0.2
stretch_compliance = 1e-6
"#;

/// Writes `scene` and the named files into a fresh folder and loads the scene.
fn load_with(scene: &str, files: &[(&str, &str)]) -> (tempfile::TempDir, Result<Scene, SceneError>) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let path = dir.path().join("scene.toml");
    std::fs::write(&path, scene).unwrap();
    let scene = load_scene(&path, &Limits::default());
    (dir, scene)
}

/// The one-line error of loading then building, with the folder's path cut out.
fn load_error(scene: &str, files: &[(&str, &str)]) -> String {
    let (dir, loaded) = load_with(scene, files);
    let e = match loaded {
        Err(e) => e,
        Ok(scene) => scene.build_model().expect_err("the scene should fail"),
    };
    let message = e.to_string();
    assert!(!message.contains('\n'), "{message}");
    message.replace(&format!("{}/", dir.path().display()), "")
}

#[test]
fn mesh_cloths_read_their_obj_file() {
    let (_dir, scene) = load_with(MESH_SCENE, &[("sheet.obj", QUADS_OBJ)]);
    let scene = scene.unwrap();
    let cloth = &scene.cloths()[0];
    assert_eq!(cloth.positions.len(), 6);
    assert_eq!(cloth.triangles.len(), 4);
    assert_eq!(cloth.uvs.len(), 4);
    assert_eq!(cloth.edge_sets.len(), 2);
    assert_eq!(cloth.edge_sets[0].edges.len(), 7, "the quads' sides");
    assert_eq!(cloth.edge_sets[1].edges.len(), 4, "both diagonals of both quads");
    let model = scene.build_model().unwrap();
    assert_eq!((model.report().stretch, model.report().shear), (7, 4));
    // The caches get the two quads as given, with a UV per corner.
    let polygons = &model.cloths()[0].polygons;
    assert_eq!((polygons.sizes(), polygons.uvs().len()), (&[4, 4][..], 8));

    let no_shear = MESH_SCENE.replace("density = 0.2", "density = 0.2\nshear = false");
    let (_dir, scene) = load_with(&no_shear, &[("sheet.obj", QUADS_OBJ)]);
    assert!(scene.unwrap().cloths()[0].edge_sets[1].edges.is_empty());
}

#[test]
fn warp_and_weft_split_the_stretch_edges() {
    let text = MESH_SCENE.replace(
        "stretch_compliance = 1e-6",
        "stretch_compliance = 1e-6\nwarp_stiffness = 1e5\nweft_compliance = 2e-6",
    );
    let (_dir, scene) = load_with(&text, &[("sheet.obj", QUADS_OBJ)]);
    let scene = scene.unwrap();
    let cloth = &scene.cloths()[0];
    let sets: Vec<(&str, usize)> = cloth.edge_sets.iter().map(|s| (s.field, s.edges.len())).collect();
    // Sides along x: 4 (warp); along y: 3 (weft); none left as bias.
    assert_eq!(sets, [("edges", 0), ("warp_edges", 4), ("weft_edges", 3), ("shear_edges", 4)]);
    assert_eq!(cloth.edge_sets[2].elasticity.compliance().get(), 2e-6);

    // Only warp given: the weft edges keep the stretch material.
    let text = MESH_SCENE.replace("density = 0.2", "density = 0.2\nwarp_compliance = 1e-7");
    let (_dir, scene) = load_with(&text, &[("sheet.obj", QUADS_OBJ)]);
    let scene = scene.unwrap();
    let cloth = &scene.cloths()[0];
    let sets: Vec<(&str, usize)> = cloth.edge_sets.iter().map(|s| (s.field, s.edges.len())).collect();
    assert_eq!(sets, [("edges", 3), ("warp_edges", 4), ("shear_edges", 4)]);

    // A grid: rows are warp, columns weft.
    let grid = flag_with("stretch_compliance = 1e-6", "warp_compliance = 1e-6\nweft_compliance = 1e-5");
    let scene = parse(&grid).unwrap();
    let sets: Vec<(&str, usize)> =
        scene.cloths()[0].edge_sets.iter().map(|s| (s.field, s.edges.len())).collect();
    assert_eq!(sets, [("edges", 0), ("warp_edges", 9), ("weft_edges", 8), ("shear_edges", 12)]);
    // UVs keep the aspect: the 1.5 m side spans 0–1, the 1 m side 0–2/3.
    assert_eq!(scene.cloths()[0].uvs[0], [[0.0, 0.0], [1.0 / 3.0, 0.0], [1.0 / 3.0, 1.0 / 3.0]]);
    assert_eq!(
        scene.cloths()[0].polygons.uvs()[..4],
        [[0.0, 0.0], [1.0 / 3.0, 0.0], [1.0 / 3.0, 1.0 / 3.0], [0.0, 1.0 / 3.0]]
    );
    assert_eq!(scene.cloths()[0].polygons.uvs().iter().map(|uv| uv[1]).fold(0.0, f32::max), 2.0 / 3.0);
    assert!(scene.build_model().is_ok());

    // No UVs: an explicit cloth, a mesh face without vt.
    let e = error(&seed_with("pins = [0]", "pins = [0]\nweft_stiffness = 5.0"));
    assert!(
        e.to_string().starts_with("scene.toml:16:18: cloth 'seed': weft_stiffness: `weft_stiffness` sorts"),
        "{e}"
    );
    let no_vt = QUADS_OBJ.replace("f 2/2 3/3 6/6 5/5", "f 2 3 6 5");
    let text = MESH_SCENE.replace("density = 0.2", "density = 0.2\nwarp_compliance = 1e-7");
    let e = load_error(&text, &[("sheet.obj", &no_vt)]);
    assert!(
        e.ends_with("needs UVs: the face on line 15 of sheet.obj has no texture coordinates (vt)"),
        "{e}"
    );
}

#[test]
fn obj_mistakes_name_the_obj_file_and_line() {
    let bad = QUADS_OBJ.replace("v 2 1 0", "v 2 nan 0");
    assert_eq!(
        load_error(MESH_SCENE, &[("sheet.obj", &bad)]),
        "sheet.obj:7:1: cloth 'sheet': mesh: `v`: 'nan' is not a finite 32-bit number"
    );
    let e = load_error(MESH_SCENE, &[]);
    assert!(
        e.starts_with("scene.toml:7:8: cloth 'sheet': mesh: sheet.obj: cannot read the OBJ file: "),
        "{e}"
    );
    let e = load_error(
        &MESH_SCENE.replace("density", "object = \"shirt\"\ndensity"),
        &[("sheet.obj", QUADS_OBJ)],
    );
    assert_eq!(
        e,
        "scene.toml:8:10: cloth 'sheet': object: sheet.obj: the OBJ file has no object named 'shirt'; its objects: 'sheet'"
    );
    let e = load_error(&MESH_SCENE.replace("density", "object = []\ndensity"), &[("sheet.obj", QUADS_OBJ)]);
    assert!(e.contains("`object` is an empty list"), "{e}");
    let e = load_error(&MESH_SCENE.replace("density", "positions = [[0, 0, 0]]\ndensity"), &[]);
    assert!(e.contains("give `positions` or `mesh`, not both"), "{e}");
    let e = load_error(&MESH_SCENE.replace("density", "edges = [[0, 1]]\ndensity"), &[]);
    assert!(e.contains("`edges` cannot be combined with `mesh`"), "{e}");
    let e = error(&seed_with("pins = [0]", "pins = [0]\nobject = \"a\""));
    assert!(e.to_string().contains("`object` applies to a `mesh` cloth only"), "{e}");
}

#[test]
fn model_rules_on_mesh_parts_name_the_face() {
    // A fin: the edge 1–2 (OBJ 2–5) is shared by three triangles.
    let fin = format!("{QUADS_OBJ}v 1 0.5 1\nf 2 5 7\n");
    let e = load_error(MESH_SCENE, &[("sheet.obj", &fin)]);
    assert!(e.starts_with("sheet.obj:14:1: cloth 'sheet': triangles[0] (from this face): edge [1, 4] is shared by 3 triangles"), "{e}");
    let skip = MESH_SCENE.replace("density = 0.2", "density = 0.2\nnon_manifold = \"skip\"");
    let (_dir, scene) = load_with(&skip, &[("sheet.obj", &fin)]);
    assert!(scene.unwrap().build_model().is_ok());
    // Two vertices on one point: the edge between them names its face.
    let coincident = QUADS_OBJ.replace("v 1 0 0", "v 0 0 0");
    let e = load_error(MESH_SCENE, &[("sheet.obj", &coincident)]);
    assert!(
        e.starts_with(
            "sheet.obj:14:1: cloth 'sheet': triangles[0] (from this face): [0, 1, 3] has zero area"
        ),
        "{e}"
    );
    let e = load_error(
        &MESH_SCENE.replace("density = 0.2", "particle_mass = 0.1"),
        &[("sheet.obj", &coincident)],
    );
    assert!(
        e.starts_with("sheet.obj:14:1: cloth 'sheet': edges[0] (from this face): joins particles 0 and 1"),
        "{e}"
    );
}

#[test]
fn pins_by_box_and_by_file() {
    let text = MESH_SCENE.replace(
        "density = 0.2",
        "density = 0.2\npins = [0]\npin_box = { min = [-0.1, 0.9, -1], max = [1.1, 1.1, 1] }\npin_file = \"pins.txt\"",
    );
    let (_dir, scene) =
        load_with(&text, &[("sheet.obj", QUADS_OBJ), ("pins.txt", "# right column\n2\n\n5  # top\n")]);
    assert_eq!(scene.unwrap().cloths()[0].pins, vec![0, 3, 4, 2, 5]);
    let list = MESH_SCENE.replace(
        "density = 0.2",
        "density = 0.2\npin_box = [\n  { min = [-1, -1, -1], max = [0, 0, 0] },\n  { min = [1.5, -1, -1], max = [3, 0, 0] },\n]",
    );
    let (_dir, scene) = load_with(&list, &[("sheet.obj", QUADS_OBJ)]);
    assert_eq!(scene.unwrap().cloths()[0].pins, vec![0, 2]);

    let empty = list.replace("max = [3, 0, 0]", "max = [3, -0.5, 0]");
    let e = load_error(&empty, &[("sheet.obj", QUADS_OBJ)]);
    assert!(e.starts_with("scene.toml:11:3: cloth 'sheet': pin_box[1]: the box from [1.5, -1.0, -1.0] to [3.0, -0.5, 0.0] holds no particle"), "{e}");
    let inverted = list.replace("max = [0, 0, 0]", "max = [0, -2, 0]");
    let e = load_error(&inverted, &[("sheet.obj", QUADS_OBJ)]);
    assert!(e.contains("pin_box[0]: min -1.0 is above max -2.0 along y"), "{e}");

    let file = MESH_SCENE.replace("density = 0.2", "density = 0.2\npin_file = \"pins.txt\"");
    let e = load_error(&file, &[("sheet.obj", QUADS_OBJ), ("pins.txt", "1\n# x\n1.5\n")]);
    assert_eq!(
        e,
        "pins.txt:3:1: cloth 'sheet': pin_file: '1.5' is not a particle index: indices are whole numbers from 0 to 4294967295"
    );
    let e = load_error(&file, &[("sheet.obj", QUADS_OBJ), ("pins.txt", "1\n\n9\n")]);
    assert_eq!(
        e,
        "pins.txt:3:1: cloth 'sheet': pins[1] (from pin_file): index 9 is out of range: the cloth has 6 particles"
    );
    let e = load_error(&file, &[("sheet.obj", QUADS_OBJ), ("pins.txt", "# none\n")]);
    assert!(
        e.starts_with("scene.toml:9:12: cloth 'sheet': pin_file: pins.txt: the file lists no particle index"),
        "{e}"
    );
    let e = load_error(&file, &[("sheet.obj", QUADS_OBJ)]);
    assert!(e.starts_with("scene.toml:9:12: cloth 'sheet': pin_file: pins.txt: cannot read the file"), "{e}");
    // Pins by box on a grid and an explicit cloth too.
    let scene = parse(&flag_with(
        "pin_corners = [\"top-left\", \"top-right\"]",
        "pin_box = { min = [0, 2, 0], max = [0.6, 2, 0] }",
    ))
    .unwrap();
    assert_eq!(scene.cloths()[0].pins, vec![8, 9]);
}

#[test]
fn wind_air_and_constraint_kinds() {
    let text = seed_with(
        "gravity = [0.0, 0.0, 0.0]",
        "gravity = [0.0, 0.0, 0.0]\nwind = [1, 0.0, -2]\nair_density = 1.0",
    );
    let s = parse(&text).unwrap();
    assert_eq!(
        s.settings().wind,
        vec![weft_core::settings::WindKey { time: 0.0, velocity: [1.0, 0.0, -2.0] }]
    );
    assert_eq!(s.settings().air_density, 1.0);
    let keyed = seed_with(
        "gravity = [0.0, 0.0, 0.0]",
        "wind = [\n  { time = 0.0, velocity = [0, 0, 0] },\n  { time = 2.0, velocity = [3, 0, 0] },\n]",
    );
    assert_eq!(parse(&keyed).unwrap().settings().wind[1].velocity, [3.0, 0.0, 0.0]);
    let e = error(&keyed.replace("time = 2.0", "time = 0.0"));
    assert!(
        e.to_string().starts_with("scene.toml:8:3: simulation.wind[1]: key at 0 s does not come after"),
        "{e}"
    );
    let e =
        error(&seed_with("gravity = [0.0, 0.0, 0.0]", "wind = [1.0, { time = 0.0, velocity = [0, 0, 0] }]"));
    assert!(e.to_string().contains("simulation.wind: give a constant wind"), "{e}");
    let e = error(&seed_with("gravity = [0.0, 0.0, 0.0]", "wind = [1.0, 2.0]"));
    assert!(e.to_string().contains("not 2"), "{e}");
    let e = error(&seed_with(
        "gravity = [0.0, 0.0, 0.0]",
        "wind = [{ time = 0.0, velocity = [0, 0, 0], speed = 1 }]",
    ));
    assert!(e.to_string().contains("unknown field `speed`"), "{e}");
    let e = error(&seed_with("gravity = [0.0, 0.0, 0.0]", "air_density = -1.0"));
    assert!(
        e.to_string().starts_with("scene.toml:6:15: simulation.air_density: -1 must not be negative"),
        "{e}"
    );

    let text = flag_with(
        "pin_corners",
        "bending_stiffness = 2.0\nbending_damping = 0.1\ntether_scale = 1.1\npressure = 1.5\nvolume_compliance = 1e-3\ndrag = 0.5\nnon_manifold = \"skip\"\npin_corners",
    );
    let scene = parse(&text).unwrap();
    let c = &scene.cloths()[0];
    assert_eq!(c.kinds.bending.unwrap().elasticity.compliance().get(), 0.5);
    assert_eq!(c.kinds.bending.unwrap().damping, 0.1);
    assert_eq!(c.kinds.tethers.unwrap().scale, 1.1);
    assert_eq!(c.kinds.tethers.unwrap().elasticity, weft_core::units::Elasticity::RIGID);
    assert_eq!(c.volume.unwrap().pressure, 1.5);
    assert_eq!((c.aero.unwrap().drag, c.aero.unwrap().lift), (0.5, 0.0));
    assert_eq!(c.non_manifold, weft_core::NonManifold::Skip);
    let fixed = parse(&flag_with("frames = 48", "frames = 48\nsubsteps = 4")).unwrap();
    let plain = &fixed.cloths()[0];
    assert!(
        plain.kinds.bending.is_none()
            && plain.kinds.tethers.is_none()
            && plain.volume.is_none()
            && plain.aero.is_none()
    );

    let e = error(&flag_with("pin_corners", "bending_damping = 0.1\npin_corners"));
    assert!(
        e.to_string().contains("`bending_damping` needs `bending_compliance` or `bending_stiffness`"),
        "{e}"
    );
    let e =
        error(&flag_with("pin_corners", "bending_compliance = 1.0\nbending_stiffness = 1.0\npin_corners"));
    assert!(e.to_string().contains("give `bending_compliance` or `bending_stiffness`, not both"), "{e}");
    let e = error(&flag_with("pin_corners", "tether_stiffness = 0.0\npin_corners"));
    assert!(
        e.to_string()
            .starts_with("scene.toml:11:20: cloth 'flag': tether_stiffness: 0 must be greater than zero"),
        "{e}"
    );
    let e = error(&flag_with("pin_corners", "non_manifold = \"ignore\"\npin_corners"));
    assert!(e.to_string().contains("unknown variant `ignore`"), "{e}");
}

/// Two objects: `Other` (vertex 1) and `Body`, two triangles over vertices 2 to 5.
const BODY_OBJ: &str = "o Other
v 9 9 9
v 0 0 0
v 1 0 0
v 0 1 0
v 0 0 1
f 1 3 4
o Body
f 2 3 4
f 2 3 5
";

/// A cloth whose pin follows a mesh collider. Lines: `follow` 10, `[[collider]]` 12, its `name`
/// 13, `mesh` 15, `object` 16.
const BODY_SCENE: &str = r#"[simulation]
fps = 24.0
frames = 1

[[cloth]]
name = "cape"
positions = [[0.0, 2.0, 0.0], [1.0, 2.0, 0.0]]
edges = [[0, 1]]
pins = [0]
follow = "body"

[[collider]]
name = "body"
shape = "mesh"
mesh = "body.obj"
object = "Body"
"#;

/// A PC2 file of `points` points and `samples` samples: point `p` of sample `k` at `[p, k, p²]`.
fn pc2_bytes(points: i32, samples: i32) -> Vec<u8> {
    let mut bytes = crate::pc2::header(points, 0.0, 1.0, samples).to_vec();
    for k in 0..samples {
        for p in 0..points {
            for c in [p as f32, k as f32, (p * p) as f32] {
                bytes.extend_from_slice(&c.to_le_bytes());
            }
        }
    }
    bytes
}

/// Writes `scene` and the named files (in subfolders if named so) into a fresh folder and loads
/// the scene under `limits`.
fn load_files(
    scene: &str,
    files: &[(&str, &[u8])],
    limits: &Limits,
) -> (tempfile::TempDir, Result<Scene, SceneError>) {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let path = dir.path().join("scene.toml");
    std::fs::write(&path, scene).unwrap();
    let scene = load_scene(&path, limits);
    (dir, scene)
}

/// The one-line error of loading then building under `limits`, with the folder's path cut out.
fn files_error(scene: &str, files: &[(&str, &[u8])], limits: &Limits) -> String {
    let (dir, loaded) = load_files(scene, files, limits);
    let e = match loaded {
        Err(e) => e,
        Ok(scene) => scene.build_model().expect_err("the scene should fail"),
    };
    let message = e.to_string();
    assert!(!message.contains('\n'), "{message}");
    message.replace(&format!("{}/", dir.path().display()), "")
}

fn body_error(scene: &str, files: &[(&str, &[u8])]) -> String {
    files_error(scene, files, &Limits::default())
}

fn body_with(from: &str, to: &str) -> String {
    assert!(BODY_SCENE.contains(from), "{from}");
    BODY_SCENE.replacen(from, to, 1)
}

/// `BODY_OBJ` with every vertex moved by `dx` along x.
fn body_frame(dx: f32) -> String {
    let mut out = String::new();
    for line in BODY_OBJ.lines() {
        match line.strip_prefix("v ") {
            Some(rest) => {
                let c: Vec<f32> = rest.split(' ').map(|w| w.parse().unwrap()).collect();
                out.push_str(&format!("v {} {} {}\n", c[0] + dx, c[1], c[2]));
            }
            None => out.push_str(&format!("{line}\n")),
        }
    }
    out
}

#[test]
fn mesh_colliders_load_static_and_animated() {
    let obj = BODY_OBJ.as_bytes();
    // Static: the OBJ file's vertices (those of `Body`), one frame.
    let (_dir, scene) = load_files(BODY_SCENE, &[("body.obj", obj)], &Limits::default());
    let scene = scene.unwrap();
    assert!(scene.colliders().is_empty());
    let mesh = &scene.mesh_colliders()[0];
    assert_eq!(mesh.name, "body");
    assert_eq!(mesh.triangles, [[0, 1, 2], [0, 1, 3]]);
    assert_eq!(mesh.frames.len(), 1);
    assert_eq!(mesh.frames[0], [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
    assert_eq!(mesh.thickness, weft_core::collider::DEFAULT_THICKNESS);
    assert_eq!(scene.cloths()[0].follow, Some(weft_core::follow::FollowDesc::Collider("body".into())));
    scene.build_model().unwrap();

    // A PC2 cache: one point per `v` of the file (5), mapped through the vertex numbers.
    let text = body_with(
        "object = \"Body\"",
        "object = [\"Body\"]\nanimation = \"body.pc2\"\nanimation_fps = 12.0\nthickness = 0.01\nfriction = 0.3\nposition = [0.0, 1.0, 0.0]",
    );
    let pc2 = pc2_bytes(5, 3);
    let (_dir, scene) = load_files(&text, &[("body.obj", obj), ("body.pc2", &pc2)], &Limits::default());
    let scene = scene.unwrap();
    let mesh = &scene.mesh_colliders()[0];
    assert_eq!(mesh.frames.len(), 3);
    assert_eq!(mesh.frames[2], [[1.0, 2.0, 1.0], [2.0, 2.0, 4.0], [3.0, 2.0, 9.0], [4.0, 2.0, 16.0]]);
    assert_eq!((mesh.frame_start, mesh.frame_interval), (0.0, 1.0 / 12.0));
    assert_eq!((mesh.thickness, mesh.friction.kinetic_coefficient), (0.01, 0.3));
    assert_eq!(mesh.keys[0].position, [0.0, 1.0, 0.0]);
    scene.build_model().unwrap();

    // An OBJ sequence from frame 1 until a file is missing; the simulation's fps by default.
    let text = body_with(
        "object = \"Body\"",
        "object = \"Body\"\nanimation = \"walk/body_##.obj\"\nanimation_start = 0.5",
    );
    let (f1, f2, f4) = (body_frame(1.0), body_frame(2.0), body_frame(4.0));
    let files: &[(&str, &[u8])] = &[
        ("body.obj", obj),
        ("walk/body_00.obj", obj),
        ("walk/body_01.obj", f1.as_bytes()),
        ("walk/body_02.obj", f2.as_bytes()),
        ("walk/body_04.obj", f4.as_bytes()),
    ];
    let (_dir, scene) = load_files(&text, files, &Limits::default());
    let scene = scene.unwrap();
    let mesh = &scene.mesh_colliders()[0];
    assert_eq!(mesh.frames.len(), 2, "frames 1 and 2: frame 3 is missing");
    assert_eq!(mesh.frames[1][1], [3.0, 0.0, 0.0]);
    assert_eq!((mesh.frame_start, mesh.frame_interval), (0.5, 1.0 / 24.0));
    scene.build_model().unwrap();
    // From frame 0.
    let text = text.replace("animation_start = 0.5", "animation_first = 0");
    let (_dir, scene) = load_files(&text, files, &Limits::default());
    assert_eq!(scene.unwrap().mesh_colliders()[0].frames.len(), 3);

    // Pins following keys, and an analytic collider by name.
    let text = body_with(
        "follow = \"body\"",
        "follow = [{ time = 0.0 }, { time = 1.0, position = [0.0, 1.0, 0.0] }]",
    );
    let (_dir, scene) = load_files(&text, &[("body.obj", obj)], &Limits::default());
    let scene = scene.unwrap();
    let Some(weft_core::follow::FollowDesc::Keys(keys)) = &scene.cloths()[0].follow else { panic!() };
    assert_eq!(keys[1].position, [0.0, 1.0, 0.0]);
    scene.build_model().unwrap();
    let text = format!(
        "{}\n[[collider]]\nname = \"ball\"\nshape = \"sphere\"\nradius = 0.1\n",
        body_with("follow = \"body\"", "follow = \"ball\"")
    );
    let (_dir, scene) = load_files(&text, &[("body.obj", obj)], &Limits::default());
    scene.unwrap().build_model().unwrap();
}

#[test]
fn mesh_collider_mistakes_name_the_file_and_line() {
    let obj = BODY_OBJ.as_bytes();
    // An OBJ file that does not parse: its line.
    let bad = BODY_OBJ.replace("v 1 0 0", "v 1 x 0");
    assert_eq!(
        body_error(BODY_SCENE, &[("body.obj", bad.as_bytes())]),
        "body.obj:4:1: collider 'body': mesh: `v`: 'x' is not a number"
    );
    let e = body_error(BODY_SCENE, &[]);
    assert!(
        e.starts_with("scene.toml:15:8: collider 'body': mesh: body.obj: cannot read the OBJ file: "),
        "{e}"
    );
    assert_eq!(
        body_error(&body_with("\"Body\"", "\"Torso\""), &[("body.obj", obj)]),
        "scene.toml:16:10: collider 'body': object: body.obj: the OBJ file has no object named 'Torso'; its objects: 'Other', 'Body'"
    );

    // An OBJ-sequence frame with another vertex count: the frame file and both counts.
    let seq = body_with("object = \"Body\"", "object = \"Body\"\nanimation = \"walk/body_####.obj\"");
    let short = "o Body\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
    let e = body_error(
        &seq,
        &[("body.obj", obj), ("walk/body_0001.obj", obj), ("walk/body_0002.obj", short.as_bytes())],
    );
    assert_eq!(
        e,
        "scene.toml:17:13: collider 'body': animation: walk/body_0002.obj: frame 1 has 3 vertices, but the \
         collider's mesh body.obj has 4: every frame needs the mesh's vertices, in the same order"
    );
    // ... with other faces; a frame that does not parse; no frame at all.
    let flipped = BODY_OBJ.replace("f 2 3 5", "f 3 2 5");
    let e = body_error(&seq, &[("body.obj", obj), ("walk/body_0001.obj", flipped.as_bytes())]);
    assert!(e.contains("walk/body_0001.obj: frame 0's faces differ from those of the collider's mesh body.obj: triangle 1 is [1, 0, 3] here and [0, 1, 3] there"), "{e}");
    let e = body_error(&seq, &[("body.obj", obj), ("walk/body_0001.obj", bad.as_bytes())]);
    assert_eq!(e, "walk/body_0001.obj:4:1: collider 'body': animation (frame 0): `v`: 'x' is not a number");
    let e = body_error(&seq, &[("body.obj", obj)]);
    assert!(
        e.starts_with(
            "scene.toml:17:13: collider 'body': animation: walk/body_0001.obj: the OBJ sequence has no frame"
        ),
        "{e}"
    );

    // A PC2 file with another point count: the file and both counts.
    let text = body_with("object = \"Body\"", "object = \"Body\"\nanimation = \"body.pc2\"");
    let e = body_error(&text, &[("body.obj", obj), ("body.pc2", &pc2_bytes(4, 2))]);
    assert_eq!(
        e,
        "scene.toml:17:13: collider 'body': animation: body.pc2: the PC2 file has 4 points, but body.obj has 5 \
         vertices (`v` lines): a PC2 cache needs one point per vertex of the OBJ file, in file order"
    );
    let e = body_error(&text, &[("body.obj", obj), ("body.pc2", b"POINTCACHE")]);
    assert!(
        e.starts_with("scene.toml:17:13: collider 'body': animation: body.pc2: 10 bytes is shorter"),
        "{e}"
    );

    // The mesh byte limit holds for the OBJ file, the PC2 file and every frame.
    let small = Limits { max_mesh_bytes: 100, ..Limits::default() };
    let e = files_error(&text, &[("body.obj", obj), ("body.pc2", &pc2_bytes(5, 2))], &small);
    assert!(e.contains("body.pc2: the PC2 file is 152 bytes, more than the limit of 100 bytes"), "{e}");
    let tiny = Limits { max_mesh_bytes: 10, ..Limits::default() };
    let e = files_error(BODY_SCENE, &[("body.obj", obj)], &tiny);
    assert!(e.starts_with("scene.toml:15:8: collider 'body': mesh: body.obj: the OBJ file is 79 bytes, more than the limit of 10"), "{e}");

    // Rules of every collider, at their key.
    let e = body_error(
        &body_with("object = \"Body\"", "object = \"Body\"\nthickness = -0.1"),
        &[("body.obj", obj)],
    );
    assert_eq!(e, "scene.toml:17:13: collider 'body': thickness: -0.1 must not be negative");
    let keys = "object = \"Body\"\nkeys = [\n  { time = 1.0 },\n  { time = 0.5 },\n]";
    let e = body_error(&body_with("object = \"Body\"", keys), &[("body.obj", obj)]);
    assert!(e.starts_with("scene.toml:19:12: collider 'body': keys[1].time: "), "{e}");
    assert!(e.contains("0.5"), "{e}");
    let e = body_error(
        &body_with(
            "object = \"Body\"",
            "object = \"Body\"\nanimation = \"body.pc2\"\nanimation_start = -1.0",
        ),
        &[("body.obj", obj), ("body.pc2", &pc2_bytes(5, 2))],
    );
    assert_eq!(e, "scene.toml:18:19: collider 'body': animation_start: -1 must not be negative");
    let e = body_error(
        &body_with("object = \"Body\"", "object = \"Body\"\nanimation_fps = 0.0"),
        &[("body.obj", obj)],
    );
    assert_eq!(
        e,
        "scene.toml:17:17: collider 'body': animation_fps: `animation_fps` needs `animation` (a PC2 file or an OBJ sequence)"
    );

    // Keys of other shapes.
    let e = body_error(&body_with("object = \"Body\"", "radius = 1.0"), &[("body.obj", obj)]);
    assert_eq!(
        e,
        "scene.toml:16:10: collider 'body': radius: `radius` needs shape = \"sphere\" or \"capsule\""
    );
    let e =
        body_error(&body_with("shape = \"mesh\"", "shape = \"sphere\"\nradius = 1.0"), &[("body.obj", obj)]);
    assert_eq!(e, "scene.toml:16:8: collider 'body': mesh: `mesh` needs shape = \"mesh\"");
    let e = body_error(&body_with("mesh = \"body.obj\"\nobject = \"Body\"\n", ""), &[]);
    assert!(e.starts_with("scene.toml:14:9: collider 'body': shape: `shape` needs `mesh`"), "{e}");

    // Names are unique across analytic and mesh colliders.
    let twice = format!("{BODY_SCENE}\n[[collider]]\nname = \"body\"\nshape = \"sphere\"\nradius = 0.1\n");
    assert_eq!(
        body_error(&twice, &[("body.obj", obj)]),
        "scene.toml:19:8: collider 'body': name: 'body' is already the name of the collider on line 13: collider names must be unique"
    );

    // `follow`: an unknown name, no pins, keys out of order.
    let e = body_error(&body_with("follow = \"body\"", "follow = \"nobody\""), &[("body.obj", obj)]);
    assert_eq!(
        e,
        "scene.toml:10:10: cloth 'cape': follow: 'nobody' is not the name of a collider of the scene"
    );
    let e = body_error(&body_with("pins = [0]\n", ""), &[("body.obj", obj)]);
    assert_eq!(
        e,
        "scene.toml:9:10: cloth 'cape': follow: follow (pins that follow animation) needs pins, and the cloth has none"
    );
    let e = body_error(
        &body_with("follow = \"body\"", "follow = [{ time = 1.0 }, { time = 1.0 }]"),
        &[("body.obj", obj)],
    );
    assert!(e.starts_with("scene.toml:10:36: cloth 'cape': follow[1].time: "), "{e}");
    let e = body_error(&body_with("follow = \"body\"", "follow = []"), &[("body.obj", obj)]);
    assert_eq!(e, "scene.toml:10:10: cloth 'cape': follow: `follow` is an empty list: give at least one");
    let e = body_error(&body_with("follow = \"body\"", "follow = 3"), &[("body.obj", obj)]);
    assert!(e.starts_with("scene.toml:10:10: "), "{e}");
}

#[test]
fn a_pinned_cloth_baked_to_a_tolerance_is_tethered_unless_told_not_to() {
    // FLAG names neither `substeps` nor `iterations`: it bakes to the default 2 % tolerance.
    let tethers = parse(FLAG).unwrap().cloths()[0].kinds.tethers.expect("tethered by default");
    assert_eq!((tethers.scale, tethers.elasticity), (1.01, weft_core::units::Elasticity::RIGID));
    let tighter = parse(&flag_with("frames = 48", "frames = 48\nmax_strain = 0.005")).unwrap();
    assert_eq!(tighter.cloths()[0].kinds.tethers.unwrap().scale, 1.0025);
    // A key of their own keeps its value; the others take the tolerance's defaults.
    let keyed = parse(&flag_with("pin_corners", "tether_compliance = 1e-3\npin_corners")).unwrap();
    assert_eq!(keyed.cloths()[0].kinds.tethers.unwrap().scale, 1.01);
    let off = parse(&flag_with("pin_corners", "tethers = false\npin_corners")).unwrap();
    assert!(off.cloths()[0].kinds.tethers.is_none());
    // A fixed substep count keeps the old default: no tethers unless asked for.
    let fixed = parse(&flag_with("frames = 48", "frames = 48\nsubsteps = 8")).unwrap();
    assert!(fixed.cloths()[0].kinds.tethers.is_none());
    let asked = flag_with("frames = 48", "frames = 48\nsubsteps = 8")
        .replace("pin_corners", "tethers = true\npin_corners");
    let asked = parse(&asked).unwrap();
    assert_eq!(asked.cloths()[0].kinds.tethers.unwrap().scale, 1.0);
    // Off and a tether key at once is a contradiction, named on one line.
    let e = error(&flag_with("pin_corners", "tethers = false\ntether_scale = 1.2\npin_corners"));
    assert!(e.to_string().contains("give `tethers = false` or `tether_scale`, not both"), "{e}");
    assert!(e.to_string().starts_with("scene.toml:"), "{e}");
    let e = error(&flag_with("pin_corners", "tethers = false\ntether_stiffness = 10.0\npin_corners"));
    assert!(e.to_string().contains("`tether_stiffness`"), "{e}");
    // A cloth without pins is not tethered by default.
    let free = parse(&FLAG.replace("pin_corners = [\"top-left\", \"top-right\"]\n", "")).unwrap();
    assert!(free.cloths()[0].kinds.tethers.is_none());
}
