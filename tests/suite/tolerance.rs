//! Promise: a scene baked to a strain tolerance ends every frame with its largest stretch of a
//! stretch edge within `max_strain` (where a fixed low count does not), records the count each
//! frame kept in `stats.csv`, writes the same bytes for any thread count, and says in the bake
//! summary which frames stayed over the tolerance at `max_substeps`.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use weft::bake::{BakeOptions, BakeReport, bake};
use weft::core::limits::Limits;
use weft_testkit::cli::{Bin, contents};

/// The `weft` binary cargo built for these tests.
const WEFT: Bin = Bin(env!("CARGO_BIN_EXE_weft"));

/// A stiff flag held by its top corners, starting level: it swings down and snaps taut, so the
/// count it needs changes from frame to frame. `SIMULATION` marks the substep keys. Untethered,
/// so that the substep count alone keeps it within the tolerance (tethers would need fewer).
const FLAG: &str = r#"[simulation]
fps = 30.0
frames = 16
SIMULATION

[[cloth]]
name = "flag"
grid = { resolution = [24, 16], size = [1.2, 0.8], origin = [-0.6, 2.0, -0.4], plane = "xz" }
density = 0.2
stretch_compliance = 1e-5
shear_compliance = 1e-3
pin_corners = ["top-left", "top-right"]
tethers = false
"#;

/// 5 %, between 2 and 64 substeps of one iteration: enough for every frame of [`FLAG`] (64
/// substeps keep it below 5 %), and the count changes as the flag swings.
const TOLERANCE: &str = "max_strain = 0.05\nmin_substeps = 2\nmax_substeps = 64";

fn flag(simulation: &str) -> String {
    FLAG.replace("SIMULATION", simulation)
}

/// Bakes `text` (as `dir/NAME.toml`) into `dir/NAME` on `threads` threads.
fn bake_text(dir: &Path, name: &str, text: &str, threads: usize) -> BakeReport {
    let path = dir.join(format!("{name}.toml"));
    fs::write(&path, text).unwrap();
    let scene = weft::io::load_scene(&path, &Limits::default()).unwrap();
    let options = BakeOptions { threads: Some(threads), ..BakeOptions::new(dir.join(name)) };
    bake(&scene, &options).unwrap()
}

/// The `substeps` and `max_stretch` columns of a `stats.csv`.
fn stats_columns(dir: &Path) -> Vec<(u32, f32)> {
    let text = fs::read_to_string(dir.join("stats.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name| header.iter().position(|h| *h == name).unwrap();
    let (substeps, stretch) = (at("substeps"), at("max_stretch"));
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            (cells[substeps].parse().unwrap(), cells[stretch].parse().unwrap())
        })
        .collect()
}

#[test]
fn every_frame_ends_within_the_tolerance_where_a_fixed_low_count_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let fixed = bake_text(dir.path(), "fixed", &flag("substeps = 2\niterations = 1"), 2);
    let worst_fixed = fixed.per_frame.iter().map(|f| f.max_stretch).fold(0.0f32, f32::max);
    assert!(worst_fixed > 0.05, "2 substeps of one iteration keep the flag within 5 %: {worst_fixed}");
    assert!(fixed.per_frame.iter().all(|f| f.substeps == 2));
    assert_eq!(stats_columns(&dir.path().join("fixed")).iter().map(|c| c.0).collect::<Vec<_>>(), [2; 16]);
    assert_eq!((fixed.steps, fixed.redone_steps, fixed.tolerance), (32, 0, None));

    let text = flag(TOLERANCE);
    let report = bake_text(dir.path(), "tolerance", &text, 2);
    assert!(report.tolerance.is_some());
    for f in &report.per_frame {
        assert!(
            f.max_stretch <= 0.05,
            "frame {} ends at {} with {} substeps",
            f.frame,
            f.max_stretch,
            f.substeps
        );
    }
    assert_eq!(report.over_tolerance(), None);
    let (least, most) = report.substep_range().unwrap();
    assert!(least >= 2 && most > 2 && most <= 64, "{least} to {most}");
    // Every try counts: the kept counts plus the ones stepped again.
    let kept: u64 = report.per_frame.iter().map(|f| f.substeps as u64).sum();
    assert!(report.redone_steps > 0);
    assert_eq!(report.steps, kept + report.redone_steps);
    // stats.csv holds the count and the stretch of every frame.
    let columns = stats_columns(&dir.path().join("tolerance"));
    let expected: Vec<(u32, f32)> = report.per_frame.iter().map(|f| (f.substeps, f.max_stretch)).collect();
    assert_eq!(columns, expected);
}

#[test]
fn a_bake_to_a_tolerance_writes_the_same_bytes_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let text = flag(TOLERANCE);
    let one = bake_text(dir.path(), "one", &text, 1);
    let two = bake_text(dir.path(), "two", &text, 2);
    let three = bake_text(dir.path(), "three", &text, 3);
    assert!(one.substep_range().unwrap().0 < one.substep_range().unwrap().1, "the count changes");
    let expected = contents(&dir.path().join("one"));
    assert!(contents(&dir.path().join("two")) == expected, "2 threads differ");
    assert!(contents(&dir.path().join("three")) == expected, "3 threads differ");
    assert_eq!((one.steps, one.redone_steps), (two.steps, two.redone_steps));
    assert_eq!((one.steps, one.redone_steps), (three.steps, three.redone_steps));
}

#[test]
fn the_summary_names_the_frames_over_the_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    // At most 4 substeps of one iteration: the flag cannot be held to 0.5 %.
    let scene = dir.path().join("tight.toml");
    fs::write(&scene, flag("max_strain = 0.005\nmin_substeps = 2\nmax_substeps = 4")).unwrap();
    let out = dir.path().join("out");
    let output = WEFT.run_ok([OsStr::new("bake"), scene.as_ref(), "--out".as_ref(), out.as_ref()]);
    let summary = String::from_utf8_lossy(&output.stderr);
    let line = summary
        .lines()
        .find(|l| l.starts_with("  over the tolerance at max_substeps = 4: "))
        .unwrap_or_else(|| panic!("no line for the frames over the tolerance in\n{summary}"));
    // The figures are those of stats.csv.
    let columns = stats_columns(&out);
    let over: Vec<(usize, f32)> =
        columns.iter().enumerate().filter(|(_, c)| c.1 > 0.005).map(|(i, c)| (i + 1, c.1)).collect();
    assert!(!over.is_empty());
    assert!(over.iter().all(|&(f, _)| columns[f - 1].0 == 4), "over the tolerance below max_substeps");
    let (worst_frame, worst) =
        over.iter().fold((0, 0.0f32), |(wf, w), &(f, s)| if s > w { (f, s) } else { (wf, w) });
    let frames = if over.len() == 1 { "1 frame".to_string() } else { format!("{} frames", over.len()) };
    let expected = format!("{frames}, the worst {:.3} % (frame {worst_frame})", worst * 100.0);
    assert!(line.contains(&expected), "{line}\nexpected {expected}");
    assert!(summary.contains("  substeps chosen to a largest strain of 0.500 %: "), "{summary}");

    // Within the tolerance, no such line.
    let easy = dir.path().join("easy.toml");
    fs::write(&easy, flag(TOLERANCE)).unwrap();
    let out = dir.path().join("easy");
    let output = WEFT.run_ok([OsStr::new("bake"), easy.as_ref(), "--out".as_ref(), out.as_ref()]);
    let summary = String::from_utf8_lossy(&output.stderr);
    assert!(!summary.contains("over the tolerance"), "{summary}");
    assert!(
        summary.contains(
            "  substeps chosen to a largest strain of 5.000 %: 2 to 64 per frame (allowed 2 to 64)"
        ),
        "{summary}"
    );
}
