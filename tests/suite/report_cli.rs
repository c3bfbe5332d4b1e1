//! Promise: `weft report` through the command line. A bake (PC2 and OBJ caches) drawn with
//! `--scene` (a bake without `summary.toml`) lists the PNG files it wrote, and they are there;
//! bad input is one error line naming the folder, file or frame, with status 1.

use std::path::Path;

use weft_testkit::cli::Bin;

const WEFT: Bin = Bin(env!("CARGO_BIN_EXE_weft"));

const SCENE: &str = r#"
[simulation]
fps = 30.0
frames = 8
substeps = 4

[[cloth]]
name = "sheet"
grid = { resolution = [12, 12], size = [1.0, 1.0], origin = [-0.5, 1.0, -0.5], plane = "xz" }
density = 0.2
stretch_compliance = 1e-6

[[collider]]
name = "ball"
shape = "sphere"
radius = 0.3
position = [0.0, 0.6, 0.0]
"#;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The one line of stderr of a failed run.
fn error_line(args: &[&str]) -> String {
    let output = WEFT.run(args);
    assert_eq!(output.status.code(), Some(1), "{args:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr.trim_end().to_string()
}

#[test]
fn report_draws_a_bake_and_refuses_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = tmp.path().join("drop.toml");
    std::fs::write(&scene, SCENE).unwrap();
    let bake = tmp.path().join("bake");
    WEFT.run_ok(["bake", s(&scene), "--out", s(&bake), "--format", "pc2,obj", "--quiet"]);

    let out = tmp.path().join("pictures");
    let output = WEFT.run_ok(["report", s(&bake), "--scene", s(&scene), "--frames", "0,8", "--out", s(&out)]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let listed: Vec<&str> = stdout.lines().skip(1).map(str::trim).collect();
    assert_eq!(stdout.lines().next().unwrap(), format!("report: {}", out.display()));
    let names = [
        "strain.png",
        "constraint_error.png",
        "intersections.png",
        "substeps.png",
        "frame_0000.png",
        "frame_0008.png",
        "sheet.png",
    ];
    assert_eq!(listed, names.map(|n| out.join(n).display().to_string()));
    for name in names {
        let bytes = std::fs::read(out.join(name)).unwrap();
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 1_000, "{name}");
    }

    // Without --scene, the scene named by the bake's summary.toml: previews too.
    let from_summary = tmp.path().join("from-summary");
    WEFT.run_ok(["report", s(&bake), "--out", s(&from_summary)]);
    assert!(from_summary.join("sheet.png").is_file() && from_summary.join("frame_0000.png").is_file());

    // Without --scene and without summary.toml (the bake wrote one, naming its scene): the plots,
    // and a note that there are no previews.
    std::fs::remove_file(bake.join("summary.toml")).expect("the bake wrote summary.toml");
    let output = WEFT.run_ok(["report", s(&bake)]);
    assert!(bake.join("report/strain.png").is_file());
    assert!(!bake.join("report/sheet.png").exists());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("note: ") && stderr.contains("--scene"), "{stderr}");

    let missing = tmp.path().join("nowhere");
    assert_eq!(error_line(&["report", s(&missing)]), format!("error: {}: no such folder", missing.display()));
    assert_eq!(
        error_line(&["report", s(&bake), "--frames", "9"]),
        format!("error: frame 9 is out of range: {} has frames 0 to 8", bake.display())
    );
    std::fs::write(bake.join("stats.csv"), "frame,time_s\n1,0.1\n2,zero\n").unwrap();
    assert_eq!(
        error_line(&["report", s(&bake)]),
        format!("error: {}:3: `time_s` is `zero`, not a number", bake.join("stats.csv").display())
    );
    std::fs::remove_file(bake.join("stats.csv")).unwrap();
    let e = error_line(&["report", s(&bake)]);
    assert!(e.starts_with(&format!("error: {}: no such file", bake.join("stats.csv").display())), "{e}");
}
