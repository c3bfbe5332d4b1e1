//! Promise: every mistake in a mesh cloth — in the OBJ file, in the scene keys that read it, in a
//! pin file — ends `weft bake` the way every bad input does: exit status 1, exactly one line on
//! stderr, `error: ` then the file at fault with its line (the OBJ file's or the pin file's own
//! line where the mistake is in there) and the rule, and no file left in the output directory.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const WEFT: &str = env!("CARGO_BIN_EXE_weft");

/// A 3×3-vertex sheet of four quads in the xz plane, with UVs.
const SHEET: &str = "o sheet
v 0 1 0
v 0.5 1 0
v 1 1 0
v 0 1 0.5
v 0.5 1 0.5
v 1 1 0.5
v 0 1 1
v 0.5 1 1
v 1 1 1
vt 0 0
vt 0.5 0
vt 1 0
vt 0 0.5
vt 0.5 0.5
vt 1 0.5
vt 0 1
vt 0.5 1
vt 1 1
f 1/1 2/2 5/5 4/4
f 2/2 3/3 6/6 5/5
f 4/4 5/5 8/8 7/7
f 5/5 6/6 9/9 8/8
";

const SCENE: &str = r#"[simulation]
fps = 24.0
frames = 2

[[cloth]]
name = "sheet"
mesh = "sheet.obj"
density = 0.2
stretch_compliance = 1e-5
pins = [0]
"#;

/// Which file the error must name.
#[derive(Clone, Copy)]
enum In {
    Scene,
    Obj,
    Pins,
}

struct Case {
    name: &'static str,
    scene: String,
    obj: Option<String>,
    pins: Option<&'static str>,
    /// The file and the text that marks the line the error must name.
    at: (In, &'static str),
    says: &'static [&'static str],
}

fn scene_with(from: &str, to: &str) -> String {
    assert!(SCENE.contains(from), "{from:?}");
    SCENE.replacen(from, to, 1)
}

fn sheet_with(from: &str, to: &str) -> String {
    assert!(SHEET.contains(from), "{from:?}");
    SHEET.replacen(from, to, 1)
}

fn cases() -> Vec<Case> {
    let obj = |name, obj: String, marker, says| Case {
        name,
        scene: SCENE.to_string(),
        obj: Some(obj),
        pins: None,
        at: (In::Obj, marker),
        says,
    };
    vec![
        obj(
            "an OBJ line that does not parse",
            sheet_with("v 1 1 0.5", "v 1 one 0.5"),
            "v 1 one",
            &["mesh", "'one' is not a number"],
        ),
        obj(
            "a face index out of range",
            sheet_with("f 5/5 6/6 9/9 8/8", "f 5/5 6/6 10/9 8/8"),
            "f 5/5 6/6 10",
            &["refers to vertex 10", "only 9 vertices"],
        ),
        obj("a face index of 0", sheet_with("f 5/5 6/6 9/9 8/8", "f 0 6 9 8"), "f 0 6", &["vertex 0"]),
        obj(
            "a face with two vertices",
            sheet_with("f 5/5 6/6 9/9 8/8", "f 5/5 6/6"),
            "f 5/5 6/6\n",
            &["2 corners", "at least 3"],
        ),
        obj(
            "NaN coordinates",
            sheet_with("v 0.5 1 0.5", "v 0.5 NaN 0.5"),
            "v 0.5 NaN",
            &["'NaN' is not a finite"],
        ),
        obj(
            "an infinite coordinate",
            sheet_with("v 0.5 1 0.5", "v 0.5 1 inf"),
            "v 0.5 1 inf",
            &["'inf' is not a finite"],
        ),
        obj(
            "a coordinate beyond f32",
            sheet_with("v 0.5 1 0.5", "v 0.5 1 1e40"),
            "v 0.5 1 1e40",
            &["not a finite 32-bit"],
        ),
        obj(
            "a face that repeats a vertex",
            sheet_with("f 5/5 6/6 9/9 8/8", "f 5 6 9 6"),
            "f 5 6 9 6",
            &["vertex 6 twice"],
        ),
        obj(
            "a non-manifold edge",
            // A fin on the middle edge 5–8: a third triangle on it.
            format!("{SHEET}v 0.5 1.5 0.75\nf 5 8 10\n"),
            "f 4/4 5/5 8/8",
            &["triangles[", "edge [4, 7] is shared by 3 triangles", "non_manifold = \"skip\""],
        ),
        obj(
            "a zero-area face leaving a particle without mass",
            // Vertices 2, 3 and 6 on one line: the second quad's first triangle has no area, and it
            // is the only one vertex 3 is in.
            sheet_with("v 1 1 0\n", "v 0.75 1 0\n").replace("v 1 1 0.5\n", "v 0.625 1 0\n"),
            "f 2/2 3/3 6/6 5/5",
            &["triangles[2]", "zero area", "lumping the density"],
        ),
        Case {
            name: "a missing OBJ file",
            scene: scene_with("mesh = \"sheet.obj\"", "mesh = \"shirt.obj\""),
            obj: None,
            pins: None,
            at: (In::Scene, "mesh = "),
            says: &["shirt.obj", "cannot read the OBJ file"],
        },
        Case {
            name: "a missing object name",
            scene: scene_with("density", "object = \"shirt\"\ndensity"),
            obj: Some(SHEET.to_string()),
            pins: None,
            at: (In::Scene, "object = "),
            says: &["no object named 'shirt'", "'sheet'"],
        },
        Case {
            name: "several objects and none chosen",
            scene: SCENE.to_string(),
            obj: Some(sheet_with("f 5/5 6/6 9/9 8/8", "g collar\nf 5/5 6/6 9/9 8/8")),
            pins: None,
            at: (In::Scene, "mesh = "),
            says: &["2 objects ('sheet', 'collar')", "object = "],
        },
        Case {
            name: "a pin file with a bad line",
            scene: scene_with("pins = [0]", "pin_file = \"pins.txt\""),
            obj: Some(SHEET.to_string()),
            pins: Some("# corners\n0\n2 # near\nsix\n"),
            at: (In::Pins, "six"),
            says: &["pin_file", "'six' is not a particle index"],
        },
        Case {
            name: "a pin file index out of range",
            scene: scene_with("pins = [0]", "pin_file = \"pins.txt\""),
            obj: Some(SHEET.to_string()),
            pins: Some("0\n\n9\n"),
            at: (In::Pins, "9"),
            says: &["pins[1] (from pin_file)", "index 9 is out of range", "9 particles"],
        },
        Case {
            name: "a pin box that holds nothing",
            scene: scene_with("pins = [0]", "pin_box = { min = [0, 0, 0], max = [1, 0.5, 1] }"),
            obj: Some(SHEET.to_string()),
            pins: None,
            at: (In::Scene, "pin_box"),
            says: &["holds no particle"],
        },
        Case {
            name: "warp without UVs",
            scene: scene_with("pins = [0]", "pins = [0]\nwarp_compliance = 1e-6"),
            obj: Some(SHEET.replace("/1 ", " ").replace("/2 ", " ").replace("/4\n", "\n")),
            pins: None,
            at: (In::Scene, "warp_compliance"),
            says: &["needs UVs", "no texture coordinates (vt)"],
        },
        Case {
            name: "an open mesh with pressure",
            scene: scene_with("pins = [0]", "pins = [0]\npressure = 1.2"),
            obj: Some(SHEET.to_string()),
            pins: None,
            // The volume rule is about the surface: it points at the mesh.
            at: (In::Scene, "mesh = "),
            says: &["closed"],
        },
    ]
}

/// The 1-based line on which `marker` starts in `text`.
fn line_of(text: &str, marker: &str) -> usize {
    let at = text.find(marker).unwrap_or_else(|| panic!("{marker:?} not in the file"));
    text[..at].matches('\n').count() + 1
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() { out.extend(files_under(&p)) } else { out.push(p) }
    }
    out
}

fn bake(scene: &Path, out: &Path) -> Output {
    Command::new(WEFT)
        .args(["bake".as_ref(), scene.as_os_str(), "--out".as_ref(), out.as_os_str()])
        .args(["--format", "pc2,usd,obj", "--quiet"])
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("weft runs")
}

/// Runs one case; returns what is wrong with the outcome.
fn check(case: &Case, dir: &Path) -> Vec<String> {
    let scene_path = dir.join("scene.toml");
    fs::write(&scene_path, &case.scene).unwrap();
    if let Some(obj) = &case.obj {
        fs::write(dir.join("sheet.obj"), obj).unwrap();
    }
    if let Some(pins) = case.pins {
        fs::write(dir.join("pins.txt"), pins).unwrap();
    }
    let out_dir = dir.join("out");
    fs::create_dir(&out_dir).unwrap();
    let output = bake(&scene_path, &out_dir);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let mut problems = Vec::new();
    if output.status.code() != Some(1) {
        problems.push(format!("exit status {:?}, not 1", output.status.code()));
    }
    if stderr.lines().count() != 1 || !stderr.ends_with('\n') || !stderr.starts_with("error: ") {
        problems.push("stderr is not one line `error: ...`".to_string());
    }
    if stderr.contains("panicked") {
        problems.push("a panic".to_string());
    }
    let (file, text) = match case.at.0 {
        In::Scene => (scene_path.clone(), case.scene.clone()),
        In::Obj => (dir.join("sheet.obj"), case.obj.clone().unwrap()),
        In::Pins => (dir.join("pins.txt"), case.pins.unwrap().to_string()),
    };
    let expected = format!("error: {}:{}:", file.display(), line_of(&text, case.at.1));
    if !stderr.starts_with(&expected) {
        problems.push(format!("does not start with {expected}"));
    }
    for word in case.says {
        if !stderr.contains(word) {
            problems.push(format!("does not say {word:?}"));
        }
    }
    let left = files_under(&out_dir);
    if !left.is_empty() {
        problems.push(format!("left files: {left:?}"));
    }
    if !problems.is_empty() {
        problems.insert(0, format!("stderr: {stderr:?}"));
    }
    problems
}

#[test]
fn every_mesh_mistake_is_one_error_line_naming_its_file_and_line() {
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
fn a_non_manifold_mesh_bakes_when_the_scene_skips_such_edges() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("scene.toml");
    fs::write(&scene, scene_with("density", "non_manifold = \"skip\"\ndensity")).unwrap();
    fs::write(dir.path().join("sheet.obj"), format!("{SHEET}v 0.5 1.5 0.75\nf 5 8 10\n")).unwrap();
    let out = dir.path().join("out");
    let output = bake(&scene, &out);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let pc2 = weft::io::read_pc2(&out.join("sheet.pc2")).unwrap();
    assert_eq!((pc2.point_count, pc2.sample_count), (10, 3));
}
