//! Promise: `weft bake a.toml b.toml … --out DIR` bakes each scene into `DIR/<file stem>/`, and a
//! scene with a `[wedge]` bakes each variant into `DIR/<variant name>/`, to the same bytes as
//! each bake on its own whatever the threads are shared out; a scene that fails does not stop the
//! others, and is one error line naming it (exit status 1). Every bake leaves a `summary.toml`
//! that says what it was; `weft validate` lists a wedge's variants.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use weft_testkit::cli::{Bin, contents};

/// The `weft` binary cargo built for these tests.
const WEFT: Bin = Bin(env!("CARGO_BIN_EXE_weft"));

/// A small horizontal grid cloth falling from two corners (so it bends), baked to a strain tolerance.
const FLAG: &str = r#"[simulation]
fps = 24.0
frames = 6

[[cloth]]
name = "flag"
grid = { resolution = [6, 5], size = [1.5, 1.0], origin = [0.0, 1.0, 0.0], plane = "xz" }
density = 0.2
stretch_compliance = 1e-6
pin_corners = ["top-left", "top-right"]
"#;

/// `FLAG` swept: two stretch compliances × two bending compliances.
fn wedge() -> String {
    FLAG.replace(
        "[[cloth]]",
        "[wedge]\n\"cloth.flag.stretch_compliance\" = [1e-6, 1e-3]\n\
         \"cloth.flag.bending_compliance\" = [1e-3, 1.0]\n\n[[cloth]]",
    )
}

fn read_summary(dir: &Path) -> toml::Table {
    fs::read_to_string(dir.join("summary.toml")).unwrap().parse().unwrap()
}

fn bake<S: AsRef<OsStr>>(args: &[S]) -> std::process::Output {
    let mut all: Vec<&OsStr> = vec!["bake".as_ref()];
    all.extend(args.iter().map(AsRef::as_ref));
    WEFT.run(&all)
}

#[test]
fn several_scenes_bake_into_their_folders_and_a_failing_one_does_not_stop_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("a.toml"), FLAG).unwrap();
    fs::write(d.join("b.toml"), FLAG.replace("frames = 6", "frames = 4")).unwrap();
    fs::write(d.join("bad.toml"), FLAG.replace("density = 0.2", "density = -0.2")).unwrap();
    let out = d.join("out");
    let scenes = ["a.toml", "bad.toml", "b.toml"].map(|s| d.join(s));
    let mut args: Vec<&OsStr> = scenes.iter().map(|s| s.as_os_str()).collect();
    args.extend(["--out".as_ref(), out.as_os_str(), "-j".as_ref(), "2".as_ref()]);
    let output = bake(&args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains(&*scenes[1].display().to_string()) && errors[0].contains("density"),
        "{stderr}"
    );
    for (scene, frames) in [("a", 6), ("b", 4)] {
        assert!(
            stderr.contains(&format!("{}: done, {frames} frames", d.join(format!("{scene}.toml")).display())),
            "{stderr}"
        );
        let folder = out.join(scene);
        let summary = read_summary(&folder);
        assert_eq!(summary["frames"].as_integer(), Some(frames));
        assert!(summary.get("wedge_index").is_none());
        // The same bytes as the scene baked on its own, on one thread.
        let alone = d.join(format!("alone-{scene}"));
        let scene_path = d.join(format!("{scene}.toml"));
        assert!(
            bake(&[scene_path.as_os_str(), "--out".as_ref(), alone.as_os_str(), "-j".as_ref(), "1".as_ref()])
                .status
                .success()
        );
        assert!(contents(&folder) == contents(&alone), "{scene} differs from its bake alone");
        assert!(alone.join("summary.toml").exists(), "a single bake writes its summary too");
    }
    assert!(!out.join("bad").exists(), "the failed scene left a folder");
}

#[test]
fn a_wedge_bakes_every_variant_as_a_batch_and_one_by_index_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scene = d.join("flag.toml");
    fs::write(&scene, wedge()).unwrap();

    let output = WEFT.run_ok([OsStr::new("validate"), scene.as_ref()]);
    let listed = String::from_utf8_lossy(&output.stdout);
    let variants = weft::io::wedge_variants(&scene, &Default::default()).unwrap();
    assert_eq!(variants.len(), 4);
    assert!(listed.contains("wedge:          4 variants"), "{listed}");
    for v in &variants {
        assert!(listed.contains(&format!("  {:>5}  {}\n", v.index, v.name)), "{listed}");
    }
    assert_eq!(variants[1].name, "w001_stretch_compliance=1e-06_bending_compliance=1");

    let all = d.join("all");
    let output = bake(&[scene.as_os_str(), "--out".as_ref(), all.as_os_str()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let mut caches = Vec::new();
    for v in &variants {
        let folder = all.join(&v.name);
        let summary = read_summary(&folder);
        assert_eq!(summary["wedge_index"].as_integer(), Some(v.index as i64));
        assert_eq!(summary["variant"].as_str(), Some(v.name.as_str()));
        let wedge = summary["wedge"].as_table().unwrap();
        assert_eq!(wedge.len(), 2);
        for (key, value) in &v.values {
            assert_eq!(wedge.get(key), Some(value));
        }
        caches.push(fs::read(folder.join("flag.pc2")).unwrap());
    }
    for (i, a) in caches.iter().enumerate() {
        for b in &caches[..i] {
            assert!(a != b, "two variants baked the same cache");
        }
    }
    // One variant by its index, on one thread: its folder, the same bytes.
    let one = d.join("one");
    let output = bake(&[
        scene.as_os_str(),
        "--out".as_ref(),
        one.as_os_str(),
        "--wedge-index".as_ref(),
        "2".as_ref(),
        "-j".as_ref(),
        "1".as_ref(),
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let folder = one.join(&variants[2].name);
    assert!(contents(&folder) == contents(&all.join(&variants[2].name)));
    assert_eq!(read_summary(&folder)["wedge_index"].as_integer(), Some(2));
    assert_eq!(fs::read_dir(&one).unwrap().count(), 1, "only the variant's folder");

    // The report of the whole wedge: every variant side by side, each drawn as its own variant.
    let output = WEFT.run_ok([OsStr::new("report"), all.as_os_str()]);
    let listed = String::from_utf8_lossy(&output.stdout);
    assert!(listed.starts_with(&format!("report: {}", all.join("report").display())), "{listed}");
    for name in ["strain.png", "ms_per_frame.png", "variants.png"] {
        assert!(all.join("report").join(name).is_file(), "{name}: {listed}");
    }
    let notes = String::from_utf8_lossy(&output.stderr);
    assert!(!notes.contains("not drawn"), "{notes}");
}

#[test]
fn a_batch_crashed_after_a_checkpoint_resumes_each_bake_to_the_bytes_of_a_whole_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("a.toml"), FLAG).unwrap();
    fs::write(d.join("b.toml"), FLAG.replace("frames = 6", "frames = 5")).unwrap();
    let (a, b) = (d.join("a.toml"), d.join("b.toml"));
    let whole = d.join("whole");
    let run = |out: &Path, extra: &[&str]| {
        let mut args: Vec<&OsStr> = vec![
            a.as_os_str(),
            b.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
            "-j".as_ref(),
            "1".as_ref(),
        ];
        args.extend(["--checkpoint-every", "2"].iter().chain(extra).map(OsStr::new));
        bake(&args)
    };
    assert!(run(&whole, &[]).status.success());
    // One thread: a bakes first, alone, and the process dies after its checkpoint of frame 4.
    let out = d.join("out");
    assert!(!run(&out, &["--crash-after-checkpoint", "4"]).status.success());
    assert!(out.join("a/weft.checkpoint").exists() && !out.join("b").exists());
    let output = run(&out, &["--resume"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("{}: done, 6 frames, resumed after frame 4", a.display())), "{stderr}");
    assert!(stderr.contains(&format!("{}: done, 5 frames, ", b.display())), "{stderr}");
    for scene in ["a", "b"] {
        assert!(
            contents(&out.join(scene)) == contents(&whole.join(scene)),
            "{scene} differs from a whole bake"
        );
    }
}

#[test]
fn a_bake_that_fails_after_its_scene_is_read_is_named_by_its_scene_and_resume_applies_to_each() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("a.toml"), FLAG).unwrap();
    fs::write(d.join("b.toml"), FLAG).unwrap();
    let out = d.join("out");
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("b"), "a file where b's folder would go").unwrap();
    let (a, b) = (d.join("a.toml"), d.join("b.toml"));
    let args =
        [a.as_os_str(), b.as_os_str(), "--out".as_ref(), out.as_os_str(), "-q".as_ref(), "--resume".as_ref()];
    let output = bake(&args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "-q leaves the error lines only: {stderr}");
    let expected =
        format!("error: {}: {}: cannot create the output directory", b.display(), out.join("b").display());
    assert!(stderr.starts_with(&expected), "{stderr}");
    assert!(out.join("a/flag.pc2").exists());
    // Again with --resume: a's bake has no checkpoint left, so it bakes again from frame 0.
    let before = contents(&out.join("a"));
    fs::remove_file(out.join("b")).unwrap();
    let output = bake(&args);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(contents(&out.join("a")) == before);
    assert!(out.join("b/summary.toml").exists());
}
