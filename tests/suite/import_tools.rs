//! Promise: the caches open in the tools users load them into, as the user expects. The USD cache
//! opens in the USD library (`usd-core`, Python's `pxr`) with time-sampled points and unit
//! normals, faces as given (quads stay quads), UVs that keep the grid's aspect, an `xz` grid
//! facing `+y`, and no finding of USD's compliance checker; an OBJ frame imports into Blender as
//! one object named after the cloth, with quads and weft's smooth normals.
//!
//! The checks run the scripts in `tests/tools/`. Where `python3 -c 'import pxr'` fails the USD
//! test skips with a message, unless `WEFT_REQUIRE_USD=1` (as `.ci/run` sets it, after installing
//! `usd-core`); where `blender` is not on `PATH` the Blender test skips with a message.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use weft_testkit::cli::Bin;

/// The `weft` binary cargo built for these tests.
const WEFT: Bin = Bin(env!("CARGO_BIN_EXE_weft"));

/// An `xz` grid of 9 × 6 particles, 1.6 m × 1.0 m, pinned at two corners: 5 frames.
const GRID: &str = r#"[simulation]
fps = 30.0
frames = 4
substeps = 4
iterations = 4

[[cloth]]
name = "sheet"
grid = { resolution = [9, 6], size = [1.6, 1.0], origin = [-0.8, 1.0, -0.5], plane = "xz" }
density = 0.2
stretch_compliance = 1e-6
pin_corners = ["top-left", "top-right"]
"#;

/// A quad mesh cloth read from `quads.obj`: 5 frames.
const QUAD_SCENE: &str = r#"[simulation]
fps = 24.0
frames = 4
substeps = 4
iterations = 4

[[cloth]]
name = "panel"
mesh = "quads.obj"
density = 0.2
stretch_compliance = 1e-6
pins = [8, 11]
"#;

/// A 4 × 3 vertex panel of 6 quads with UVs, hanging in the xy plane, facing +z.
fn quads_obj() -> String {
    let (nu, nv) = (4, 3);
    let mut s = String::from("# a small quad panel\n");
    for j in 0..nv {
        for i in 0..nu {
            s += &format!("v {} {} 0\n", i as f32 * 0.2, 1.0 - (nv - 1 - j) as f32 * 0.2);
            s += &format!("vt {} {}\n", i as f32 / 3.0, j as f32 / 3.0);
        }
    }
    for j in 0..nv - 1 {
        for i in 0..nu - 1 {
            let c = [j * nu + i + 1, j * nu + i + 2, (j + 1) * nu + i + 2, (j + 1) * nu + i + 1];
            s += &format!("f {0}/{0} {1}/{1} {2}/{2} {3}/{3}\n", c[0], c[1], c[2], c[3]);
        }
    }
    s
}

/// Bakes `scene` (with `files` beside it) to `usd,obj` in a new folder; returns the folder.
fn bake(scene: &str, files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        fs::write(dir.path().join(name), text).unwrap();
    }
    let path = dir.path().join("scene.toml");
    fs::write(&path, scene).unwrap();
    let out = dir.path().join("out");
    WEFT.run_ok([
        OsStr::new("bake"),
        path.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--format".as_ref(),
        "usd,obj".as_ref(),
        "-q".as_ref(),
    ]);
    (dir, out)
}

/// `tests/tools/NAME`.
fn tool(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools").join(name)
}

/// Runs a checking script; fails the test with its output unless it printed `ok_line`.
fn run_check(mut command: Command, ok_line: &str) {
    let output = command.output().expect("the checking tool runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let failed: Vec<&str> = stdout.lines().filter(|l| l.contains("-failed: ")).collect();
    assert!(
        output.status.success() && stdout.lines().any(|l| l == ok_line),
        "{command:?} failed ({}):\n{}\n{stdout}\n{stderr}",
        output.status,
        failed.join("\n")
    );
}

/// True when `python3` can import the USD library; otherwise says why the test skips (or fails
/// it, with `WEFT_REQUIRE_USD=1`).
fn usd_available() -> bool {
    let found = Command::new("python3").args(["-c", "import pxr"]).output().is_ok_and(|o| o.status.success());
    if !found {
        let why =
            "`python3 -c 'import pxr'` fails: install the USD library with `python3 -m pip install usd-core`";
        assert!(std::env::var("WEFT_REQUIRE_USD").as_deref() != Ok("1"), "WEFT_REQUIRE_USD=1, but {why}");
        println!("skipped: {why}");
    }
    found
}

#[test]
fn usd_caches_open_in_the_usd_library() {
    if !usd_available() {
        return;
    }
    // The grid: 54 points, 40 quads, UVs 0–1 along the 1.6 m side and 0–0.625 along the 1 m one.
    let (_dir, out) = bake(GRID, &[]);
    let mut check = Command::new("python3");
    check.arg(tool("check_usd.py")).arg(out.join("sheet.usda")).args([
        "--samples",
        "5",
        "--points",
        "54",
        "--fps",
        "30",
        "--face-size",
        "4",
        "--facing",
        "0,1,0",
        "--uv-max",
        "1,0.625",
    ]);
    run_check(check, "weft-usd-ok");

    // The quad mesh: its quads stay quads, its UVs as given, facing +z.
    let (_dir, out) = bake(QUAD_SCENE, &[("quads.obj", &quads_obj())]);
    let mut check = Command::new("python3");
    check.arg(tool("check_usd.py")).arg(out.join("panel.usda")).args([
        "--samples",
        "5",
        "--points",
        "12",
        "--fps",
        "24",
        "--face-size",
        "4",
        "--facing",
        "0,0,1",
        "--uv-max",
        "1,0.6666667",
    ]);
    run_check(check, "weft-usd-ok");
}

#[test]
fn obj_frames_import_into_blender() {
    let found = Command::new("blender").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        println!("skipped: `blender` is not on PATH, so the OBJ import into Blender is not checked");
        return;
    }
    let (_dir, out) = bake(QUAD_SCENE, &[("quads.obj", &quads_obj())]);
    // The last frame: the panel has swung and bent, so its normals vary.
    let frame = out.join("panel.0004.obj");
    let mut check = Command::new("blender");
    check
        .args(["-b", "--factory-startup", "--python-exit-code", "1", "--python"])
        .arg(tool("check_blender.py"))
        .arg("--")
        .arg(&frame)
        .args(["panel", "12", "4"]);
    run_check(check, "weft-blender-ok");
}
