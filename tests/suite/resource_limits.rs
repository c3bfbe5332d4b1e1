//! Promise: no input makes weft allocate without bound or take quadratic time. Every resource
//! limit (`weft_core::limits::Limits`) is checked before anything of its size is allocated, ends
//! in a one-line error that says which flag raises it, and can be changed on the command line of
//! `weft bake` and `weft validate`. Hostile shapes of input that stay under the limits (a face of
//! a million corners, a file of a hundred thousand objects, TOML nested a hundred thousand deep)
//! fail fast.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use weft_core::limits::Limits;
use weft_io::obj::{ObjProblem, ObjectSelection, parse_obj, parse_obj_limited};

const WEFT: &str = env!("CARGO_BIN_EXE_weft");

/// Generous bound for work that is linear (or `n log n`) in a few megabytes of input; the
/// quadratic versions of the same checks take minutes.
const FAST: Duration = Duration::from_secs(20);

const SEED: &str = r#"[simulation]
fps = 10.0
frames = 1

[[cloth]]
name = "seed"
positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
edges = [[0, 1]]
pins = [0]
"#;

const MESH_SCENE: &str = r#"[simulation]
fps = 24.0
frames = 1

[[cloth]]
name = "sheet"
mesh = "sheet.obj"
pins = [0]
"#;

const SQUARE_OBJ: &str = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n";

/// Runs `weft ARGS…` and returns (exit code, stderr).
fn weft(args: &[&str], dir: &Path) -> (Option<i32>, String) {
    let out = Command::new(WEFT).args(args).current_dir(dir).output().expect("weft runs");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Checks that `weft bake` and `weft validate` on `scene` with `flags` fail with one error line
/// containing every one of `says`.
fn refused(files: &[(&str, &str)], flags: &[&str], says: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let scene = files[0].0;
    for command in [&["bake", scene, "--out", "out", "-q"][..], &["validate", scene][..]] {
        let args: Vec<&str> = command.iter().chain(flags).copied().collect();
        let (code, stderr) = weft(&args, dir.path());
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
        for s in says {
            assert!(stderr.contains(s), "{args:?}: {s:?} not in {stderr}");
        }
        assert!(!dir.path().join("out").join("seed.pc2").exists());
    }
}

#[test]
fn scene_file_size_is_a_flag() {
    let len = SEED.len().to_string();
    refused(
        &[("seed.toml", SEED)],
        &["--max-scene-bytes", "100"],
        &[&len, "more than the limit of 100 bytes", "--max-scene-bytes"],
    );
    // The same scene passes under the default limit.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seed.toml"), SEED).unwrap();
    assert_eq!(weft(&["validate", "seed.toml"], dir.path()).0, Some(0));
}

#[test]
fn mesh_file_size_is_a_flag() {
    refused(
        &[("sheet.toml", MESH_SCENE), ("sheet.obj", SQUARE_OBJ)],
        &["--max-mesh-bytes", "20"],
        &["sheet.obj", "more than the limit of 20 bytes for a mesh", "--max-mesh-bytes"],
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sheet.toml"), MESH_SCENE).unwrap();
    std::fs::write(dir.path().join("sheet.obj"), SQUARE_OBJ).unwrap();
    assert_eq!(weft(&["validate", "sheet.toml"], dir.path()).0, Some(0));
}

#[test]
fn obj_vertex_count_is_checked_line_by_line() {
    // The fourth `v` crosses a limit of 3 particles: refused on its line, before the faces.
    refused(
        &[("sheet.toml", MESH_SCENE), ("sheet.obj", SQUARE_OBJ)],
        &["--max-particles", "3"],
        &["sheet.obj:4", "more than 3 vertices", "--max-particles"],
    );
    let limits = Limits { max_particles: 3, ..Limits::default() };
    let e = parse_obj_limited(SQUARE_OBJ.as_bytes(), &ObjectSelection::Only, &limits).unwrap_err();
    assert_eq!(e.line, Some(4));
    assert!(matches!(e.problem, ObjProblem::TooMany { what: "vertices", limit: 3, .. }), "{e}");
}

#[test]
fn obj_triangle_count_is_checked_line_by_line() {
    // A quad is two triangles: over a limit of one constraint on line 5.
    let limits = Limits { max_constraints: 1, ..Limits::default() };
    let e = parse_obj_limited(SQUARE_OBJ.as_bytes(), &ObjectSelection::Only, &limits).unwrap_err();
    assert_eq!(e.line, Some(5));
    assert!(matches!(e.problem, ObjProblem::TooMany { what: "triangles", limit: 1, .. }), "{e}");
    assert!(e.to_string().contains("--max-constraints"), "{e}");
    let limits = Limits { max_constraints: 2, ..Limits::default() };
    assert!(parse_obj_limited(SQUARE_OBJ.as_bytes(), &ObjectSelection::Only, &limits).is_ok());
}

#[test]
fn a_face_of_a_million_corners_is_checked_fast() {
    let n = 1_000_000usize;
    let mut text = "v 0 0 0\n".repeat(n);
    text.push('f');
    for k in 1..=n {
        text.push_str(&format!(" {k}"));
    }
    // The last corner repeats vertex 2.
    text.push_str(" 2\n");
    let start = Instant::now();
    let e = parse_obj(text.as_bytes(), &ObjectSelection::Only).unwrap_err();
    assert!(start.elapsed() < FAST, "{:?}", start.elapsed());
    assert_eq!(e.line, Some(n + 1));
    assert_eq!(e.problem, ObjProblem::RepeatedVertex { number: 2 });
    // Small faces name the same vertex a left-to-right reading meets again first.
    let e = parse_obj(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3 2 1\n", &ObjectSelection::Only).unwrap_err();
    assert_eq!(e.problem, ObjProblem::RepeatedVertex { number: 2 });
}

#[test]
fn a_hundred_thousand_objects_are_listed_fast() {
    let n = 100_000;
    let mut text = String::from("v 0 0 0\nv 1 0 0\nv 0 1 0\n");
    for k in 0..n {
        text.push_str(&format!("o part{k}\nf 1 2 3\n"));
    }
    let start = Instant::now();
    let e = parse_obj(text.as_bytes(), &ObjectSelection::Only).unwrap_err();
    assert!(start.elapsed() < FAST, "{:?}", start.elapsed());
    assert!(matches!(&e.problem, ObjProblem::ChooseObject { names } if names.len() == n), "{e}");
    assert!(e.to_string().contains(&format!("and {} more", n - 20)), "{e}");
    let start = Instant::now();
    let wanted = (0..n).step_by(2).map(|k| format!("part{k}")).collect();
    let mesh = parse_obj(text.as_bytes(), &ObjectSelection::Named(wanted)).unwrap();
    assert!(start.elapsed() < FAST, "{:?}", start.elapsed());
    assert_eq!(mesh.objects.len(), n / 2);
    assert_eq!(mesh.triangles.len(), n / 2);
}

#[test]
fn deeply_nested_toml_fails_fast() {
    let depth = 100_000;
    for (open, close) in [("[", "]"), ("{ a = ", " }")] {
        let text = format!("{SEED}\n[extra]\nx = {}1{}\n", open.repeat(depth), close.repeat(depth));
        let start = Instant::now();
        let e = weft_io::parse_scene(&text, Path::new("deep.toml"), &Limits::default()).unwrap_err();
        assert!(start.elapsed() < FAST, "{:?}", start.elapsed());
        let message = e.to_string();
        assert!(message.starts_with("deep.toml:") && !message.contains('\n'), "{message}");
    }
}
