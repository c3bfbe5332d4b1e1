//! Promise: a bake asked to stop by its progress stops after that frame with a checkpoint and its
//! temporary files kept, and a resumed bake goes on from there to the same bytes as one that never
//! stopped; a model stepped frame by frame with a `FrameStepper` goes through the very positions
//! a bake writes.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use weft_bake::{BakeError, BakeOptions, CheckpointPolicy, FrameStepper, Progress, bake, bake_with_progress};
use weft_core::limits::Limits;
use weft_io::{CacheFormat, Scene};

/// A small flag baked to a strain tolerance (substep counts chosen per frame, tethers), hit by
/// wind, over a ball: state a checkpoint must carry.
const SCENE: &str = r#"[simulation]
fps = 30.0
frames = 12
wind = [1.0, 0.0, 2.0]

[[cloth]]
name = "flag"
grid = { resolution = [12, 9], size = [1.2, 0.9], origin = [-0.6, 1.0, -0.45], plane = "xz" }
density = 0.2
stretch_compliance = 1e-6
bending_compliance = 1e-2
drag = 1.0
pin_corners = ["top-left"]

[[collider]]
name = "ball"
shape = "sphere"
radius = 0.3
position = [0.1, 0.5, 0.0]
"#;

fn scene() -> Scene {
    weft_io::parse_scene(SCENE, Path::new("flag.toml"), &Limits::default()).unwrap()
}

fn options(dir: &Path) -> BakeOptions {
    BakeOptions { formats: CacheFormat::ALL.to_vec(), ..BakeOptions::new(dir) }
}

/// Every file of `dir` by name, with its bytes.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), fs::read(e.path()).unwrap()))
        .collect()
}

/// Asks the bake to stop after frame `after`.
struct StopAfter {
    after: u32,
    done: u32,
}

impl Progress for StopAfter {
    fn frame_done(&mut self, frame: u32) {
        self.done = frame;
    }

    fn should_stop(&mut self) -> bool {
        self.done >= self.after
    }
}

#[test]
fn a_stopped_bake_keeps_its_checkpoint_and_resumes_to_the_same_bytes() {
    let whole = tempfile::tempdir().unwrap();
    bake(&scene(), &options(whole.path())).unwrap();

    let parts = tempfile::tempdir().unwrap();
    let mut stop = StopAfter { after: 5, done: 0 };
    let e = bake_with_progress(&scene(), &options(parts.path()), &mut stop).unwrap_err();
    let checkpoint = parts.path().join("weft.checkpoint");
    assert!(matches!(&e, BakeError::Stopped { frame: 5, checkpoint: Some(c) } if *c == checkpoint), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!("stopped after frame 5: {} kept; bake again with resume to go on", checkpoint.display())
    );
    let left = contents(parts.path());
    assert!(left.keys().all(|n| n.ends_with(".partial") || n == "weft.checkpoint"), "{:?}", left.keys());
    assert!(left.contains_key("weft.checkpoint") && left.contains_key("flag.pc2.partial"));

    let resumed = BakeOptions { resume: true, ..options(parts.path()) };
    let report = bake(&scene(), &resumed).unwrap();
    assert_eq!(report.resumed_from, Some(5));
    assert_eq!(contents(parts.path()), contents(whole.path()));
}

#[test]
fn a_bake_without_checkpoints_stops_with_nothing_kept() {
    let dir = tempfile::tempdir().unwrap();
    let never = BakeOptions { checkpoints: CheckpointPolicy::Never, ..options(dir.path()) };
    let e = bake_with_progress(&scene(), &never, &mut StopAfter { after: 3, done: 0 }).unwrap_err();
    assert!(matches!(e, BakeError::Stopped { frame: 3, checkpoint: None }), "{e:?}");
    assert!(contents(dir.path()).is_empty());
    // Asked to stop at the last frame, a bake is done: nothing is left to stop.
    bake_with_progress(&scene(), &options(dir.path()), &mut StopAfter { after: 12, done: 0 }).unwrap();
}

#[test]
fn frames_stepped_one_by_one_are_the_bakes_samples_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    bake(&scene(), &BakeOptions::new(dir.path())).unwrap();
    let cache = weft_io::read_pc2(&dir.path().join("flag.pc2")).unwrap();

    let mut model = scene().build_model().unwrap();
    let mut frames = FrameStepper::new(&model, weft_kernels::KernelPath::Simd);
    let mut counts = Vec::new();
    for k in 1..=12 {
        let stepped = frames.step_frame(&mut model, &|_| false);
        counts.push(stepped.substeps);
        let positions: Vec<[f32; 3]> =
            model.particles().positions().iter().map(|p| [p[0], p[1], p[2]]).collect();
        let same =
            positions.iter().zip(cache.sample(k)).all(|(a, b)| a.map(f32::to_bits) == b.map(f32::to_bits));
        assert!(same, "frame {k}");
    }
    assert!(counts.iter().any(|&c| c != counts[0]), "the counts were chosen per frame: {counts:?}");
}
