//! Promise: every rule of the bad-input policy (docs/cli.md), through `weft bake`, ends the same
//! way — exit status 1, exactly one line on stderr, `error: ` then the file (with `:LINE:` where
//! the input has one) and the rule, never a panic — and leaves no file at all in the output
//! directory. Usage errors keep clap's exit status 2.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};

use weft_testkit::cli::Bin;

/// The `weft` binary cargo built for these tests.
const WEFT: Bin = Bin(env!("CARGO_BIN_EXE_weft"));

/// The worked example of docs/physics.md plus a third particle (for triangles).
const SEED: &str = r#"[simulation]
fps = 10.0
frames = 1
substeps = 1
iterations = 1
gravity = [0.0, 0.0, 0.0]

[[cloth]]
name = "seed"
positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
particle_mass = 1.0
edges = [[0, 1]]
rest_lengths = [1.0]
stretch_compliance = 0.01
pins = [0]
"#;

/// A small grid cloth.
const GRID: &str = r#"[simulation]
fps = 24.0
frames = 2

[[cloth]]
name = "flag"
grid = { resolution = [4, 3], size = [1.5, 1.0], origin = [0.0, 1.0, 0.0], plane = "xy" }
density = 0.2
stretch_compliance = 1e-6
pin_corners = ["top-left", "top-right"]
"#;

/// `base` with the first `from` replaced by `to` (which must be there).
fn with(base: &str, from: &str, to: &str) -> String {
    assert!(base.contains(from), "{from:?} not in the base scene");
    base.replacen(from, to, 1)
}

/// One bad scene: its text, the text that marks the line the error must name (`None`: the
/// error has no line), and words of the rule the message must say.
struct Case {
    name: &'static str,
    scene: Option<String>,
    line_of: Option<&'static str>,
    says: &'static [&'static str],
    args: &'static [&'static str],
}

fn case(name: &'static str, scene: String, line_of: &'static str, says: &'static [&'static str]) -> Case {
    Case { name, scene: Some(scene), line_of: Some(line_of), says, args: &[] }
}

fn cases() -> Vec<Case> {
    let seed = |from, to| with(SEED, from, to);
    vec![
        case("NaN number", seed("fps = 10.0", "fps = nan"), "fps = nan", &["fps", "not a finite number"]),
        case(
            "infinite position",
            seed("[2.0, 0.0, 0.0]", "[inf, 0.0, 0.0]"),
            "positions",
            &["positions[1]", "not a finite number"],
        ),
        case(
            "fps = 0",
            seed("fps = 10.0", "fps = 0.0"),
            "fps = 0.0",
            &["simulation.fps", "greater than zero"],
        ),
        case(
            "negative fps",
            seed("fps = 10.0", "fps = -24.0"),
            "fps = -24.0",
            &["simulation.fps", "greater than zero"],
        ),
        case(
            "zero substeps",
            seed("substeps = 1", "substeps = 0"),
            "substeps = 0",
            &["simulation.substeps", "at least 1"],
        ),
        case(
            "zero iterations",
            seed("iterations = 1", "iterations = 0"),
            "iterations = 0",
            &["simulation.iterations", "at least 1"],
        ),
        case(
            "zero frames",
            seed("frames = 1", "frames = 0"),
            "frames = 0",
            &["simulation.frames", "at least 1"],
        ),
        case(
            "negative mass",
            seed("particle_mass = 1.0", "particle_mass = -1.0"),
            "particle_mass",
            &["particle_mass", "-1", "greater than zero"],
        ),
        case(
            "negative density",
            seed("particle_mass = 1.0", "density = -0.2\ntriangles = [[0, 1, 2]]"),
            "density",
            &["density", "-0.2"],
        ),
        case(
            "negative compliance",
            seed("stretch_compliance = 0.01", "stretch_compliance = -0.01"),
            "stretch_compliance",
            &["stretch_compliance", "-0.01"],
        ),
        case(
            "stiffness 0",
            seed("stretch_compliance = 0.01", "stretch_stiffness = 0.0"),
            "stretch_stiffness",
            &["stretch_stiffness", "0"],
        ),
        case(
            "stiffness and compliance",
            seed("stretch_compliance = 0.01", "stretch_compliance = 0.01\nstretch_stiffness = 100.0"),
            "stretch_stiffness",
            &["stretch_compliance", "stretch_stiffness", "not both"],
        ),
        case(
            "particle_mass and density",
            seed("particle_mass = 1.0", "particle_mass = 1.0\ndensity = 0.2\ntriangles = [[0, 1, 2]]"),
            "density",
            &["particle_mass", "density", "not both"],
        ),
        case(
            "edge index out of range",
            seed("edges = [[0, 1]]", "edges = [[0, 7]]"),
            "edges",
            &["edges[0]", "index 7 is out of range", "3 particles"],
        ),
        case(
            "pin index out of range",
            seed("pins = [0]", "pins = [0, 9]"),
            "pins",
            &["pins[1]", "index 9 is out of range"],
        ),
        case(
            "negative index",
            seed("pins = [0]", "pins = [-1]"),
            "pins",
            &["pins[0]", "-1 is not a particle index"],
        ),
        case(
            "edge (i, i)",
            seed("edges = [[0, 1]]", "edges = [[1, 1]]"),
            "edges",
            &["edges[0]", "joins particle 1 to itself"],
        ),
        case(
            "rest length 0",
            seed("rest_lengths = [1.0]", "rest_lengths = [0.0]"),
            "rest_lengths",
            &["rest_lengths[0]", "greater than zero"],
        ),
        case(
            "negative rest length",
            seed("rest_lengths = [1.0]", "rest_lengths = [-1.0]"),
            "rest_lengths",
            &["rest_lengths[0]", "greater than zero"],
        ),
        case(
            "rest_lengths longer than edges",
            seed("rest_lengths = [1.0]", "rest_lengths = [1.0, 2.0]"),
            "rest_lengths",
            &["rest_lengths", "length 2", "edges has length 1"],
        ),
        case(
            "velocities shorter than positions",
            seed("pins = [0]", "pins = [0]\nvelocities = [[0.0, 0.0, 0.0]]"),
            "velocities",
            &["velocities", "length 1", "positions has length 3"],
        ),
        case(
            "a cloth with no particles",
            seed(
                "positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 1.0, 0.0]]\n\
                 particle_mass = 1.0\nedges = [[0, 1]]\nrest_lengths = [1.0]\n\
                 stretch_compliance = 0.01\npins = [0]",
                "positions = []",
            ),
            "positions",
            &["positions", "no particles"],
        ),
        case(
            "coincident particles joined by an edge",
            seed("[2.0, 0.0, 0.0]", "[0.0, 0.0, 0.0]"),
            "edges",
            &["edges[0]", "particles 0 and 1", "0 m apart"],
        ),
        case(
            "density with a zero-area triangle",
            seed(
                "[0.0, 1.0, 0.0]]\nparticle_mass = 1.0",
                "[1.0, 0.0, 0.0]]\ndensity = 0.2\ntriangles = [[0, 1, 2]]",
            ),
            "triangles",
            &["triangles[0]", "[0, 1, 2] has zero area", "lumping the density"],
        ),
        case(
            "density leaving a particle out of every triangle",
            seed(
                "[0.0, 1.0, 0.0]]\nparticle_mass = 1.0",
                "[0.0, 1.0, 0.0], [5.0, 5.0, 0.0]]\ndensity = 0.2\ntriangles = [[0, 1, 2]]",
            ),
            "density",
            &["density", "particle 3 is in no triangle"],
        ),
        case("malformed TOML", seed("fps = 10.0", "fps = = 10.0"), "fps = =", &["scene.toml:"]),
        case(
            "unknown key",
            seed("pins = [0]", "pins = [0]\ncolour = \"red\""),
            "colour",
            &["unknown field", "colour"],
        ),
        case(
            "unknown key in [simulation]",
            seed("frames = 1", "frames = 1\ntimestep = 0.1"),
            "timestep",
            &["unknown field", "timestep"],
        ),
        case(
            "grid over the particle limit",
            with(GRID, "resolution = [4, 3]", "resolution = [100000, 100000]"),
            "grid",
            &["10000000000", "more than the limit of 16777216"],
        ),
        case(
            "frames × substeps over the step limit",
            seed("frames = 1\nsubsteps = 1", "frames = 100000000\nsubsteps = 2"),
            "frames",
            &["200000000", "more than the limit of 100000000"],
        ),
        case(
            "duplicate cloth names",
            format!("{SEED}\n[[cloth]]\nname = \"seed\"\npositions = [[0.0, 0.0, 0.0]]\n"),
            "name = \"seed\"\npositions = [[0.0, 0.0, 0.0]]",
            &["'seed'", "used by cloth #0"],
        ),
        case(
            "duplicate edge",
            seed(
                "edges = [[0, 1]]\nrest_lengths = [1.0]",
                "edges = [[0, 1], [1, 0]]\nrest_lengths = [1.0, 1.0]",
            ),
            "edges",
            &["edges[1]", "repeats edges[0]"],
        ),
        case(
            "a scene without cloth",
            SEED.split("[[cloth]]").next().unwrap_or_default().to_string(),
            "[simulation]",
            &["no cloth"],
        ),
        Case {
            name: "over a limit given on the command line",
            scene: Some(SEED.to_string()),
            line_of: Some("positions"),
            says: &["more than the limit of 2", "--max-particles"],
            args: &["--max-particles", "2"],
        },
        Case {
            name: "more frames than a PC2 cache can count",
            scene: Some(with(SEED, "frames = 1", "frames = 4000000000")),
            line_of: None,
            says: &["simulation.frames: 4000000000 frames: more than the limit of 2147483646"],
            args: &["--max-steps", "18446744073709551615"],
        },
        Case {
            name: "a missing scene file",
            scene: None,
            line_of: None,
            says: &["cannot read the scene file"],
            args: &[],
        },
    ]
}

/// The 1-based line of the first line of `text` on which `marker` starts (a marker may span lines).
fn line_of(text: &str, marker: &str) -> usize {
    let at = text.find(marker).unwrap_or_else(|| panic!("{marker:?} not in the scene"));
    text[..at].matches('\n').count() + 1
}

/// Every file (at any depth) under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// Runs one case; returns what is wrong with the outcome, if anything.
fn check(case: &Case, dir: &Path) -> Vec<String> {
    let scene_path = dir.join("scene.toml");
    if let Some(text) = &case.scene {
        fs::write(&scene_path, text).unwrap();
    }
    let out_dir = dir.join("out");
    fs::create_dir(&out_dir).unwrap();
    let mut args: Vec<OsString> = vec![
        "bake".into(),
        scene_path.clone().into(),
        "--out".into(),
        out_dir.clone().into(),
        "--format".into(),
        "pc2,usd,obj".into(),
    ];
    args.extend(case.args.iter().map(OsString::from));
    let output = WEFT.run(&args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let mut problems = Vec::new();
    if output.status.code() != Some(1) {
        problems.push(format!("exit status {:?}, not 1", output.status.code()));
    }
    if !output.stdout.is_empty() {
        problems.push("wrote to stdout".to_string());
    }
    if stderr.lines().count() != 1 || !stderr.ends_with('\n') {
        problems.push("stderr is not exactly one line".to_string());
    }
    if !stderr.starts_with("error: ") {
        problems.push("stderr does not start with `error: `".to_string());
    }
    if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
        problems.push("a panic".to_string());
    }
    let file = scene_path.display().to_string();
    match (&case.scene, case.line_of) {
        (Some(text), Some(marker)) => {
            let expected = format!("{file}:{}:", line_of(text, marker));
            if !stderr.contains(&expected) {
                problems.push(format!("does not name {expected}"));
            }
        }
        _ => {
            if !stderr.contains(&file) {
                problems.push(format!("does not name {file}"));
            }
        }
    }
    for word in case.says {
        if !stderr.contains(word) {
            problems.push(format!("does not say {word:?}"));
        }
    }
    let left = files_under(&out_dir);
    if !left.is_empty() {
        problems.push(format!("left files in the output directory: {left:?}"));
    }
    if !problems.is_empty() {
        problems.insert(0, format!("stderr: {stderr:?}"));
    }
    problems
}

#[test]
fn every_bad_input_rule_is_one_error_line_and_no_files() {
    let mut failures = Vec::new();
    for case in cases() {
        let dir = tempfile::tempdir().unwrap();
        let problems = check(&case, dir.path());
        if !problems.is_empty() {
            failures.push(format!("{}:\n    {}", case.name, problems.join("\n    ")));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn bad_input_does_not_create_the_output_directory() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("bad.toml");
    fs::write(&scene, with(SEED, "substeps = 1", "substeps = 0")).unwrap();
    let out = dir.path().join("not-yet");
    let output = WEFT.run([OsStr::new("bake"), scene.as_ref(), "-o".as_ref(), out.as_ref()]);
    assert_eq!(output.status.code(), Some(1));
    assert!(!out.exists(), "the output directory was created");
}

#[test]
fn validate_reports_the_same_errors() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("scene.toml");
    let text = with(SEED, "edges = [[0, 1]]", "edges = [[1, 1]]");
    fs::write(&scene, &text).unwrap();
    let output = WEFT.run([OsStr::new("validate"), scene.as_ref()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(output.stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let expected = format!("error: {}:{}:", scene.display(), line_of(&text, "edges"));
    assert!(stderr.starts_with(&expected), "{stderr}");
    assert!(stderr.contains("joins particle 1 to itself"), "{stderr}");
}

#[test]
fn usage_errors_keep_clap_exit_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("scene.toml");
    fs::write(&scene, SEED).unwrap();
    let out = dir.path().join("out");
    let s = scene.to_str().unwrap();
    let o = out.to_str().unwrap();
    for args in [
        vec!["bake", s],
        vec!["bake", s, "--out", o, "--format", "abc"],
        vec!["bake", s, "--out", o, "--threads", "0"],
        vec!["bake", s, "--out", o, "--kernel", "fast"],
        vec!["bake", s, "--out", o, "--max-steps", "-1"],
        vec!["frobnicate"],
        vec![],
    ] {
        let output = WEFT.run(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?} created the output directory");
    }
}
