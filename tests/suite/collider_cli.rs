//! Promise: colliders through the command line. Every bad `[[collider]]` is one error line naming
//! the file, the line of the offending key and the rule, with exit status 1 and no files; a bake
//! with animated colliders writes the same bytes for 1 and 2 threads and for either kernel; and
//! the shipped collider scenes bake with no particle deep in a collider, saying so in the summary.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::process::Output;

use weft_testkit::cli::Bin;

/// The `weft` binary cargo built for these tests.
const WEFT: Bin = Bin(env!("CARGO_BIN_EXE_weft"));

/// A small cloth over a floor and a keyframed box (the box is the last key table).
const BASE: &str = r#"[simulation]
fps = 30.0
frames = 6
substeps = 2
iterations = 4

[[cloth]]
name = "patch"
grid = { resolution = [9, 7], size = [0.6, 0.4], origin = [-0.3, 0.3, -0.2], plane = "xz" }
density = 0.2
stretch_compliance = 1e-6

[[collider]]
name = "floor"
shape = "plane"
thickness = 0.01
friction = 0.5

[[collider]]
name = "block"
shape = "box"
half_extents = [0.1, 0.1, 0.1]
thickness = 0.005
static_friction = 0.4
kinetic_friction = 0.3
keys = [
  { time = 0.0, position = [0.0, 0.1, -0.3], rotation = [0.0, 0.0, 0.0, 1.0] },
  { time = 0.2, position = [0.0, 0.15, 0.3], rotation = [0.0, 0.3826834, 0.0, 0.9238795] },
]
"#;

/// `BASE` with `from` replaced by `to` (which must be there).
fn with(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from:?} not in the base scene");
    BASE.replacen(from, to, 1)
}

/// The 1-based line of the first occurrence of `marker`.
fn line_of(text: &str, marker: &str) -> usize {
    let at = text.find(marker).unwrap_or_else(|| panic!("{marker:?} not in the scene"));
    text[..at].matches('\n').count() + 1
}

#[test]
fn bad_colliders_are_one_error_line_naming_the_key() {
    // (name, scene, marker of the line the error must name, words it must say)
    let cases: Vec<(&str, String, &str, &[&str])> = vec![
        (
            "negative thickness",
            with("thickness = 0.01", "thickness = -0.01"),
            "thickness = -0.01",
            &["collider 'floor': thickness", "-0.01", "must not be negative"],
        ),
        (
            "negative friction",
            with("friction = 0.5", "friction = -0.5"),
            "friction = -0.5",
            &["collider 'floor': friction", "must not be negative"],
        ),
        (
            "negative kinetic friction",
            with("kinetic_friction = 0.3", "kinetic_friction = -0.3"),
            "kinetic_friction = -0.3",
            &["kinetic_friction", "must not be negative"],
        ),
        (
            "friction twice",
            with("static_friction = 0.4", "friction = 0.4\nstatic_friction = 0.4"),
            "static_friction = 0.4",
            &["collider 'block'", "friction", "static_friction", "not both"],
        ),
        (
            "keys out of order",
            with("{ time = 0.2, position", "{ time = 0.0, position"),
            "{ time = 0.0, position = [0.0, 0.15",
            &["collider 'block': keys[1].time", "increas"],
        ),
        (
            "negative key time",
            with("{ time = 0.0, position", "{ time = -1.0, position"),
            "{ time = -1.0",
            &["keys[0].time", "must not be negative"],
        ),
        (
            "zero rotation",
            with("rotation = [0.0, 0.0, 0.0, 1.0]", "rotation = [0.0, 0.0, 0.0, 0.0]"),
            "rotation = [0.0, 0.0, 0.0, 0.0]",
            &["keys[0].rotation", "is zero"],
        ),
        (
            "zero half extent",
            with("half_extents = [0.1, 0.1, 0.1]", "half_extents = [0.1, 0.0, 0.1]"),
            "half_extents",
            &["collider 'block': half_extents", "greater than zero"],
        ),
        (
            "zero radius",
            with("shape = \"box\"\nhalf_extents = [0.1, 0.1, 0.1]", "shape = \"sphere\"\nradius = 0.0"),
            "radius = 0.0",
            &["collider 'block': radius", "greater than zero"],
        ),
        (
            "capsule without half_length",
            with("shape = \"box\"\nhalf_extents = [0.1, 0.1, 0.1]", "shape = \"capsule\"\nradius = 0.1"),
            "shape = \"capsule\"",
            &["collider 'block': shape", "half_length"],
        ),
        (
            "radius on a box",
            with("half_extents = [0.1, 0.1, 0.1]", "half_extents = [0.1, 0.1, 0.1]\nradius = 0.2"),
            "radius = 0.2",
            &["radius", "sphere"],
        ),
        (
            "zero plane normal",
            with("shape = \"plane\"", "shape = \"plane\"\nnormal = [0.0, 0.0, 0.0]"),
            "normal = ",
            &["collider 'floor': normal", "is zero"],
        ),
        ("unknown shape", with("shape = \"plane\"", "shape = \"torus\""), "\"torus\"", &["torus", "plane"]),
        ("unknown key", with("thickness = 0.01", "thickness = 0.01\nmass = 2.0"), "mass = 2.0", &["mass"]),
        (
            "empty keys",
            format!("{}keys = []\n", &BASE[..BASE.find("keys = [").unwrap()]),
            "keys = []",
            &["keys", "empty"],
        ),
        (
            "NaN position",
            with("position = [0.0, 0.1, -0.3]", "position = [nan, 0.1, -0.3]"),
            "nan",
            &["not a finite number"],
        ),
    ];
    let mut failures = Vec::new();
    for (name, scene, marker, says) in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scene.toml");
        fs::write(&path, &scene).unwrap();
        let out = dir.path().join("out");
        let output = WEFT.run([OsStr::new("bake"), path.as_ref(), "--out".as_ref(), out.as_ref()]);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let mut problems = Vec::new();
        if output.status.code() != Some(1) {
            problems.push(format!("exit status {:?}", output.status.code()));
        }
        if stderr.lines().count() != 1 || !stderr.starts_with("error: ") || stderr.contains("panicked") {
            problems.push("not one `error: ` line".to_string());
        }
        let expected = format!("{}:{}:", path.display(), line_of(&scene, marker));
        if !stderr.contains(&expected) {
            problems.push(format!("does not name {expected}"));
        }
        for word in says {
            if !stderr.contains(word) {
                problems.push(format!("does not say {word:?}"));
            }
        }
        if out.exists() {
            problems.push("created the output directory".to_string());
        }
        if !problems.is_empty() {
            failures.push(format!("{name}: {stderr:?}\n    {}", problems.join("\n    ")));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

fn bake(scene: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<&OsStr> = vec![OsStr::new("bake"), scene.as_ref(), "--out".as_ref(), out.as_ref()];
    args.extend(extra.iter().map(OsStr::new));
    let output = WEFT.run(&args);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    output
}

#[test]
fn animated_colliders_bake_the_same_bytes_for_any_threads_and_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("scene.toml");
    fs::write(&scene, BASE).unwrap();
    let runs: [&[&str]; 3] = [&["-j", "1"], &["-j", "2"], &["-j", "2", "--kernel", "scalar"]];
    let mut outputs = Vec::new();
    for (i, extra) in runs.iter().enumerate() {
        let out = dir.path().join(format!("out{i}"));
        bake(&scene, &out, &[extra, &["-f", "pc2,usd", "-q"][..]].concat());
        let files: Vec<Vec<u8>> =
            ["patch.pc2", "patch.usda", "stats.csv"].iter().map(|f| fs::read(out.join(f)).unwrap()).collect();
        outputs.push(files);
    }
    assert_eq!(outputs[0], outputs[1], "1 and 2 threads differ");
    assert_eq!(outputs[1], outputs[2], "SIMD and scalar differ");
    // The block moved: the cloth is not a plain drop onto the floor (the stats name the column).
    let stats = String::from_utf8(outputs[0][2].clone()).unwrap();
    assert!(stats.lines().next().unwrap().contains(",collider_deep_particles,"));
}

#[test]
fn the_example_collider_scenes_bake_with_no_deep_particle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in ["drape_sphere", "sweep"] {
        let dir = tempfile::tempdir().unwrap();
        let scene = root.join("examples").join(format!("{name}.toml"));
        let output = bake(&scene, dir.path(), &["--stats", "full"]);
        let summary = String::from_utf8_lossy(&output.stderr);
        assert!(
            summary.contains("particles deeper than half the thickness: 0 after the last frame, at most 0"),
            "{name}: {summary}"
        );
        let stats = fs::read_to_string(dir.path().join("stats.csv")).unwrap();
        let frames = stats.lines().skip(1).count();
        assert!(frames > 0);
        assert!(stats.lines().skip(1).all(|l| l.ends_with(",0")), "{name}: a frame with deep particles");
    }
}
