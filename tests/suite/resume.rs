//! Promise: a bake that crashes after a checkpoint and is run again with `--resume` writes the
//! same bytes as a bake that never stopped (PC2, USD, OBJ sequence and `stats.csv`), whatever the
//! thread counts of the two runs; the crashed run leaves no file that looks complete; and a
//! checkpoint that does not belong to the bake (another scene, a damaged file, none at all) is
//! never used: the bake starts from frame 0, says why, and still writes the right bytes.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use weft_testkit::cli::{Bin, contents};

/// The `weft` binary cargo built for these tests.
const WEFT: Bin = Bin(env!("CARGO_BIN_EXE_weft"));

/// Runs a bake that must succeed; returns what it said on stderr.
fn bake_ok(args: Vec<&OsStr>) -> String {
    String::from_utf8_lossy(&WEFT.run_ok(args).stderr).into_owned()
}

/// The garment example cut to 12 frames (bending, shear, warp/weft, wind, self-collision, a mesh
/// collider, substeps chosen to a strain tolerance: every kind of state a checkpoint must carry),
/// written next to a copy of its mesh; `edit` changes the text.
fn scene(dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    fs::copy(examples.join("garment.obj"), dir.join("garment.obj")).unwrap();
    let text = fs::read_to_string(examples.join("garment.toml")).unwrap();
    assert!(text.contains("frames = 60 "), "the example's frame count changed");
    let path = dir.join("garment.toml");
    fs::write(&path, edit(text.replace("frames = 60 ", "frames = 12 "))).unwrap();
    path
}

fn bake_args<'a>(scene: &'a Path, out: &'a Path, extra: &[&'a str]) -> Vec<&'a OsStr> {
    let mut args: Vec<&OsStr> = vec!["bake".as_ref(), scene.as_ref(), "--out".as_ref(), out.as_ref()];
    args.extend(["--format", "pc2,usd,obj"].iter().map(OsStr::new));
    args.extend(extra.iter().map(|s| OsStr::new(*s)));
    args
}

/// Runs a bake that aborts right after the checkpoint of `frame` and checks what it leaves.
fn crash_after(scene: &Path, out: &Path, frame: u32, threads: &str) {
    let at = frame.to_string();
    let args =
        bake_args(scene, out, &["--checkpoint-every", "4", "--crash-after-checkpoint", &at, "-j", threads]);
    let output = WEFT.run(args);
    assert!(!output.status.success(), "the run was to crash");
    let left = contents(out);
    assert!(left.contains_key("weft.checkpoint"), "{:?}", left.keys());
    for name in left.keys().filter(|n| *n != "weft.checkpoint") {
        assert!(name.ends_with(".partial"), "{name} looks complete after a crash");
    }
}

/// Crashes a bake of `scene` after the checkpoint of frame 8 and resumes it, on 1 then 2 threads
/// and on 2 then 1, in folders under `dir`; each must write the bytes of `expected`.
fn crash_and_resume(dir: &Path, scene: &Path, expected: &BTreeMap<String, Vec<u8>>) {
    for (crash_threads, resume_threads) in [("1", "2"), ("2", "1")] {
        let out = dir.join(format!("resumed-{crash_threads}-{resume_threads}"));
        crash_after(scene, &out, 8, crash_threads);
        let stderr =
            bake_ok(bake_args(scene, &out, &["--resume", "--checkpoint-every", "4", "-j", resume_threads]));
        assert!(stderr.contains("resumed from the checkpoint after frame 8"), "{stderr}");
        assert!(!stderr.contains("not resumed"), "{stderr}");
        assert!(contents(&out) == *expected, "the resumed bake differs from the whole one");
    }
}

#[test]
fn a_resumed_bake_writes_the_same_bytes_as_one_that_never_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let scene = scene(dir.path(), |t| t);
    let whole = dir.path().join("whole");
    bake_ok(bake_args(&scene, &whole, &["-j", "2"]));
    let expected = contents(&whole);
    assert!(expected.contains_key("tshirt.pc2") && expected.contains_key("tshirt.0012.obj"));
    assert!(!expected.contains_key("weft.checkpoint"), "a finished bake leaves no checkpoint");

    crash_and_resume(dir.path(), &scene, &expected);
}

/// The example with its `max_strain = 0.02` line replaced by `simulation` (written under `dir`),
/// and the files of a whole bake of it on 2 threads.
fn whole_bake_with(dir: &Path, simulation: &str) -> (PathBuf, BTreeMap<String, Vec<u8>>) {
    let scene = scene(dir, |t| {
        assert!(t.contains("max_strain = 0.02 "), "the example's tolerance changed");
        t.replacen("max_strain = 0.02 ", &format!("{simulation} #"), 1)
    });
    let whole = dir.join("whole");
    bake_ok(bake_args(&scene, &whole, &["-j", "2"]));
    (scene, contents(&whole))
}

/// The cells of column `name` of the `stats.csv` among `files`, frame 1 first.
fn stats_column(files: &BTreeMap<String, Vec<u8>>, name: &str) -> Vec<String> {
    let stats = String::from_utf8(files["stats.csv"].clone()).unwrap();
    let at = stats.lines().next().unwrap().split(',').position(|h| h == name).unwrap();
    stats.lines().skip(1).map(|l| l.split(',').nth(at).unwrap().to_string()).collect()
}

#[test]
fn a_resumed_bake_to_a_strain_tolerance_writes_the_same_bytes() {
    // The count the frame after the checkpoint starts with is in the checkpoint: resumed at the
    // first frame's count instead, the bake would write other bytes.
    let dir = tempfile::tempdir().unwrap();
    let (scene, expected) =
        whole_bake_with(dir.path(), "max_strain = 0.2\nmin_substeps = 2\nmax_substeps = 32");
    let rows: Vec<(u32, f32)> = stats_column(&expected, "substeps")
        .iter()
        .zip(stats_column(&expected, "max_stretch"))
        .map(|(n, s)| (n.parse().unwrap(), s.parse().unwrap()))
        .collect();
    assert_eq!(rows.len(), 12);
    // Frame 8 kept more than min_substeps and ended above a quarter of the tolerance: frame 9
    // starts at that count, not at the first frame's.
    assert!(rows[7].0 > 2 && rows[7].1 >= 0.2 / 4.0, "frames: {rows:?}");

    crash_and_resume(dir.path(), &scene, &expected);
}

#[test]
fn a_resumed_bake_measures_the_same_frames_fully() {
    // With the default `--stats light`, a frame is measured fully once 240 sweeps have passed
    // since the last one: at 30 time steps × 1 iteration, frames 1, 9 and 12 (the last). The
    // checkpoint after frame 8 records the 210 sweeps since frame 1; resumed without them, frame
    // 9 would not be measured and `stats.csv` would differ.
    let dir = tempfile::tempdir().unwrap();
    let (scene, expected) = whole_bake_with(dir.path(), "substeps = 30\niterations = 1");
    let pairs = stats_column(&expected, "intersecting_triangle_pairs");
    let measured: Vec<usize> = (1..=pairs.len()).filter(|&k| !pairs[k - 1].is_empty()).collect();
    assert_eq!(measured, [1, 9, 12], "{pairs:?}");

    crash_and_resume(dir.path(), &scene, &expected);
}

#[test]
fn a_checkpoint_of_another_bake_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let original = scene(dir.path(), |t| t);
    let out = dir.path().join("out");
    crash_after(&original, &out, 4, "2");

    // The scene changes after the crash: the checkpoint is another bake's.
    let windy = |t: String| t.replace("velocity = [0.0, 0.0, -2.0]", "velocity = [0.0, 0.0, -3.0]");
    let changed = scene(dir.path(), windy);
    let whole = dir.path().join("whole");
    bake_ok(bake_args(&changed, &whole, &[]));
    let stderr = bake_ok(bake_args(&changed, &out, &["--resume"]));
    assert!(stderr.contains("not resumed: ") && stderr.contains("another scene"), "{stderr}");
    assert!(!stderr.contains("resumed from"), "{stderr}");
    assert!(contents(&out) == contents(&whole), "a fresh bake of the changed scene");

    // No checkpoint at all (the finished bake removed it).
    let stderr = bake_ok(bake_args(&changed, &out, &["--resume"]));
    assert!(stderr.contains("not resumed: no checkpoint in"), "{stderr}");
    assert!(contents(&out) == contents(&whole));
}

#[test]
fn a_damaged_checkpoint_or_missing_partial_files_start_over() {
    let dir = tempfile::tempdir().unwrap();
    let scene = scene(dir.path(), |t| t);
    let whole = dir.path().join("whole");
    bake_ok(bake_args(&scene, &whole, &[]));

    // Cut short.
    let out = dir.path().join("cut");
    crash_after(&scene, &out, 4, "2");
    let checkpoint = out.join("weft.checkpoint");
    let bytes = fs::read(&checkpoint).unwrap();
    fs::write(&checkpoint, &bytes[..bytes.len() / 2]).unwrap();
    let stderr = bake_ok(bake_args(&scene, &out, &["--resume"]));
    assert!(stderr.contains("not a usable weft checkpoint"), "{stderr}");
    assert!(contents(&out) == contents(&whole));

    // A temporary cache file gone (someone cleaned up the folder).
    let out = dir.path().join("cleaned");
    crash_after(&scene, &out, 8, "2");
    fs::remove_file(out.join("tshirt.usda.partial")).unwrap();
    let stderr = bake_ok(bake_args(&scene, &out, &["--resume"]));
    assert!(stderr.contains("not resumed: usd cache 'tshirt'"), "{stderr}");
    assert!(contents(&out) == contents(&whole));
}

/// The cape example (an animated mesh collider, pins that follow it) cut to 12 frames, in `dir`
/// with a copy of its body files.
fn cape_scene(dir: &Path) -> PathBuf {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    fs::create_dir_all(dir.join("cape")).unwrap();
    for file in ["body.obj", "body.pc2"] {
        fs::copy(examples.join("cape").join(file), dir.join("cape").join(file)).unwrap();
    }
    let text = fs::read_to_string(examples.join("cape.toml")).unwrap();
    assert!(text.contains("frames = 60 "), "the example's frame count changed");
    let path = dir.join("cape.toml");
    fs::write(&path, text.replace("frames = 60 ", "frames = 12 ")).unwrap();
    path
}

#[test]
fn a_resumed_bake_with_an_animated_mesh_and_following_pins_writes_the_same_bytes() {
    // The mesh's samples, BVH and pose cache are not in the checkpoint: they follow from the time.
    let dir = tempfile::tempdir().unwrap();
    let scene = cape_scene(dir.path());
    let whole = dir.path().join("whole");
    bake_ok(bake_args(&scene, &whole, &["-j", "2"]));
    let expected = contents(&whole);
    assert!(expected.contains_key("cape.pc2") && expected.contains_key("cape.0012.obj"));
    let out = dir.path().join("resumed");
    crash_after(&scene, &out, 8, "1");
    let stderr = bake_ok(bake_args(&scene, &out, &["--resume", "--checkpoint-every", "4", "-j", "2"]));
    assert!(stderr.contains("resumed from the checkpoint after frame 8"), "{stderr}");
    assert!(contents(&out) == expected, "the resumed bake differs from the whole one");
}

/// A cloth with a render mesh and its proxy cached beside it: the curtain example cut to 12
/// frames. Both sets of caches resume to the same bytes.
#[test]
fn a_bake_with_a_render_mesh_resumes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    fs::copy(examples.join("curtain_render.obj"), dir.path().join("curtain_render.obj")).unwrap();
    let text = fs::read_to_string(examples.join("curtain.toml")).unwrap();
    assert!(text.contains("frames = 150 ") && text.contains("cache_proxy = true"), "the example changed");
    let scene = dir.path().join("curtain.toml");
    fs::write(&scene, text.replace("frames = 150 ", "frames = 12 ")).unwrap();
    let whole = dir.path().join("whole");
    bake_ok(bake_args(&scene, &whole, &["-j", "2"]));
    let expected = contents(&whole);
    assert!(expected.contains_key("curtain.pc2") && expected.contains_key("curtain_proxy.0012.obj"));
    crash_and_resume(dir.path(), &scene, &expected);
}
