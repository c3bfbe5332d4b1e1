//! The bake summary a person reads on stderr after `weft bake` and `weft demo`: text rendered from
//! a [`BakeReport`].

use std::fmt::Write as _;
use std::path::PathBuf;

use weft::bake::{BakeReport, FrameStats};
use weft::core::kinds::SummaryLine;
use weft::kernels::KernelPath;

/// A few lines for a person: frames, steps, time, threads, SIMD level, degenerate projections,
/// constraints dropped at build, the final `|C|` and the files written (`files`: the bake's and
/// `summary.toml`).
pub(crate) fn summary(report: &BakeReport, files: &[PathBuf]) -> String {
    let mut s = String::new();
    if let Some(note) = &report.resume_note {
        let _ = writeln!(s, "not resumed: {note}; baked from frame 0");
    }
    timing(&mut s, report);
    substeps(&mut s, report);
    model(&mut s, report);
    let measured = Measured::of(report);
    contacts(&mut s, report, &measured);
    quality(&mut s, report, &measured);
    let _ = writeln!(s, "  wrote {}", file_list(files));
    s
}

/// Frames, time steps, wall time and throughput, and where a resumed bake started.
fn timing(s: &mut String, report: &BakeReport) {
    let _ = writeln!(
        s,
        "baked {} ({}) in {:.3} s: {:.2} ms/frame, {:.3e} projections/s",
        count(report.frames as u64, "frame"),
        count(report.steps, "time step"),
        report.wall_time.as_secs_f64(),
        report.ms_per_frame(),
        report.projections_per_second()
    );
    if let Some(frame) = report.resumed_from {
        let _ =
            writeln!(s, "  resumed from the checkpoint after frame {frame}: these figures cover the rest");
    }
}

/// Baking to a strain tolerance: the substeps chosen, and the frames that ended over it.
fn substeps(s: &mut String, report: &BakeReport) {
    let Some(t) = report.tolerance else { return };
    let (least, most) = report.substep_range().unwrap_or((report.substeps, report.substeps));
    let _ = writeln!(
        s,
        "  substeps chosen to a largest strain of {:.3} %: {least} to {most} per frame (allowed \
         {} to {}), {} iteration{} each; {} redone at a higher count",
        t.max_strain * 100.0,
        t.min_substeps,
        t.max_substeps,
        report.iterations,
        if report.iterations == 1 { "" } else { "s" },
        count(report.redone_steps, "time step")
    );
    if let Some(over) = report.over_tolerance() {
        let _ = writeln!(
            s,
            "  over the tolerance at max_substeps = {}: {}, the worst {:.3} % (frame {}); raise \
             max_substeps, or tether a pinned cloth to a tighter tether_scale",
            t.max_substeps,
            count(over.frames as u64, "frame"),
            over.worst_strain * 100.0,
            over.worst_frame
        );
    }
}

/// Threads, kernel and SIMD level; the model's size; degenerate projections and held states.
fn model(s: &mut String, report: &BakeReport) {
    let _ = writeln!(
        s,
        "  threads {}, kernel {}, SIMD {}",
        report.threads,
        kernel_name(report.kernel),
        weft::kernels::simd_level()
    );
    let _ = writeln!(
        s,
        "  model: {} ({} pinned), {}, {} dropped at build (both ends pinned)",
        count(report.particles as u64, "particle"),
        report.pinned,
        count(report.constraints as u64, "distance constraint"),
        report.dropped_at_build
    );
    let _ = writeln!(s, "  degenerate projections: {}", report.totals.degenerate());
    if report.totals.held > 0 {
        let _ = writeln!(
            s,
            "  held: {} (a prediction or a velocity beyond the f32 range was not taken; the particle \
             kept its state)",
            report.totals.held
        );
    }
}

/// The frames measured fully (`--stats`): the deep particles, intersecting pairs and residuals
/// are theirs.
struct Measured<'r> {
    frames: Vec<&'r FrameStats>,
    /// `" (measured on N of M frames)"`, or empty when every frame was.
    of_frames: String,
    /// The last frame, if it was measured.
    last: Option<&'r FrameStats>,
}

impl<'r> Measured<'r> {
    fn of(report: &'r BakeReport) -> Self {
        let frames: Vec<&FrameStats> =
            report.per_frame.iter().filter(|f| f.intersections.is_some()).collect();
        let of_frames = if frames.len() == report.per_frame.len() {
            String::new()
        } else {
            format!(" (measured on {} of {})", frames.len(), count(report.per_frame.len() as u64, "frame"))
        };
        let last = report.per_frame.last().filter(|f| f.intersections.is_some());
        Measured { frames, of_frames, last }
    }

    /// `(largest, its frame)` of `value` over the measured frames (the earliest on a tie).
    fn worst(&self, value: impl Fn(&FrameStats) -> u64) -> (u64, u32) {
        let worst = self.frames.iter().max_by_key(|f| (value(f), std::cmp::Reverse(f.frame)));
        worst.map_or((0, 0), |f| (value(f), f.frame))
    }
}

/// The colliders' deep particles and swept checks, and surface self-collision's work.
fn contacts(s: &mut String, report: &BakeReport, measured: &Measured<'_>) {
    if report.colliders > 0 && !measured.frames.is_empty() {
        let deep = |f: &FrameStats| f.step.colliders.deep.unwrap_or(0);
        let (most, at) = measured.worst(deep);
        let _ = writeln!(
            s,
            "  colliders: {}; particles deeper than half the thickness{}: {} after the last \
             frame, at most {} (frame {}); particles caught by the swept check: {}",
            report.colliders,
            measured.of_frames,
            measured.last.map_or(0, deep),
            most,
            at,
            report.totals.colliders.swept
        );
    }
    let surface = report.totals.surface;
    // Every step of a model with surface self-collision searches, and its first finds the kept
    // pairs: a model with it has at least one rebuild.
    if surface.rebuilds > 0 || surface.contacts > 0 || surface.reverted > 0 || surface.unresolved > 0 {
        let _ = writeln!(
            s,
            "  surface self-collision: {} made, {} pushed apart; the guard moved {} back to the start \
             of their step, {} left (no free particle to move); candidate pairs found again in {} of \
             {} time steps{}",
            count(surface.contacts, "contact"),
            surface.pushes,
            count(surface.reverted, "particle"),
            count(surface.unresolved, "pair"),
            surface.rebuilds,
            report.steps - report.redone_steps,
            if surface.contacts == 0 {
                " (no surfaces came near: the stage only proved them apart)"
            } else {
                ""
            }
        );
    }
}

/// Intersecting pairs, the largest stretch, and each kind's residual after the last frame.
fn quality(s: &mut String, report: &BakeReport, measured: &Measured<'_>) {
    if let Some(last) = measured.last {
        let pairs = |f: &FrameStats| f.intersections.unwrap_or(0);
        let (most, at) = measured.worst(pairs);
        let start =
            report.start_intersections.map_or(String::new(), |n| format!("; {n} at the start (frame 0)"));
        let _ = writeln!(
            s,
            "  intersecting triangle pairs{}: {} after the last frame, at most {} (frame {}){start}",
            measured.of_frames,
            pairs(last),
            most,
            at,
        );
    }
    if let Some(last) = report.per_frame.last() {
        let stretch = report.per_frame.iter().map(|f| f.max_stretch).fold(0.0f32, f32::max);
        let _ = writeln!(
            s,
            "  largest stretch {:.3} % after the last frame, {:.3} % at most",
            last.max_stretch * 100.0,
            stretch * 100.0
        );
    }
    match measured.last {
        None if !report.per_frame.is_empty() => {
            let _ = writeln!(s, "  residuals, intersecting pairs: not measured (--stats off)");
        }
        None => {}
        Some(last) => residual_lines(s, last),
    }
}

/// The residual of each constraint kind after the last frame, as its [`SummaryLine`] says.
fn residual_lines(s: &mut String, last: &FrameStats) {
    for (kind, stats) in last.step.kinds.iter() {
        let Some(r) = stats.residual else { continue };
        let (name, unit) = (kind.info().name, kind.info().unit);
        let _ = match kind.info().summary {
            SummaryLine::AbsAndStrain => writeln!(
                s,
                "  final {name} |C|: max {:.3e} {unit}, mean {:.3e} {unit}, largest strain {:.3} %",
                r.max_abs,
                r.mean_abs(),
                r.max_rel * 100.0
            ),
            SummaryLine::Abs if r.count > 0 => writeln!(
                s,
                "  final {name} |C|: max {:.3e} {unit}, mean {:.3e} {unit} ({} degenerate projections)",
                r.max_abs,
                r.mean_abs(),
                stats.degenerate
            ),
            SummaryLine::RelativeError if r.count > 0 => {
                writeln!(s, "  final {name} error: {:.3} % of the target", r.max_rel * 100.0)
            }
            _ => Ok(()),
        };
    }
}

/// `1 frame`, `2 frames`.
fn count(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// The name of a kernel path as the command line spells it.
pub(crate) fn kernel_name(path: KernelPath) -> &'static str {
    match path {
        KernelPath::Simd => "simd",
        KernelPath::Scalar => "scalar",
    }
}

/// `N files in DIR: a, b, ...` for people, eliding the middle of a long list (OBJ sequences).
pub(crate) fn file_list(files: &[PathBuf]) -> String {
    let dir = files.first().and_then(|f| f.parent()).map(|d| d.display().to_string()).unwrap_or_default();
    let name = |f: &PathBuf| f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let names: Vec<String> = if files.len() <= 8 {
        files.iter().map(name).collect()
    } else {
        let mut v: Vec<String> = files[..3].iter().map(name).collect();
        v.push("…".to_string());
        v.extend(files[files.len() - 3..].iter().map(name));
        v
    };
    let plural = if files.len() == 1 { "" } else { "s" };
    format!("{} file{plural} in {dir}: {}", files.len(), names.join(", "))
}

/// How to run this program again from the same folder: the path it was started by when that
/// names a file (`target/release/weft`), else `weft` (found on the `PATH`), as one shell word.
pub(crate) fn this_program() -> String {
    let arg0 = std::env::args_os().next().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default();
    if arg0.contains(std::path::MAIN_SEPARATOR) || arg0.contains('/') {
        shell_word(&arg0)
    } else {
        "weft".to_string()
    }
}

/// `word` as one word of a POSIX shell: as it is when it holds only letters, digits and
/// `_ - . / + = : , @ %`, else in single quotes.
pub(crate) fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./+=:,@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("target/release/weft"), "target/release/weft");
        assert_eq!(shell_word("my dir/weft"), "'my dir/weft'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn long_file_lists_are_elided() {
        let files: Vec<PathBuf> = (0..20).map(|i| PathBuf::from(format!("out/f.{i:04}.obj"))).collect();
        let s = file_list(&files);
        assert!(s.starts_with("20 files in out: f.0000.obj, "), "{s}");
        assert!(s.contains("…") && s.ends_with("f.0019.obj"), "{s}");
    }

    /// A report of two frames of one step each, with `held` held states in the totals.
    fn report(held: u64) -> BakeReport {
        BakeReport {
            frames: 2,
            substeps: 1,
            tolerance: None,
            iterations: 1,
            steps: 2,
            redone_steps: 0,
            particles: 4,
            pinned: 1,
            colliders: 0,
            constraints: 5,
            dropped_at_build: 0,
            totals: weft::kernels::StepStats { held, ..Default::default() },
            per_frame: Vec::new(),
            start_intersections: None,
            threads: 1,
            kernel: KernelPath::Simd,
            files: Vec::new(),
            resumed_from: None,
            resume_note: None,
            frame_time: std::time::Duration::from_millis(2),
            wall_time: std::time::Duration::from_millis(3),
        }
    }

    #[test]
    fn held_states_are_reported_only_when_there_are_some() {
        assert!(summary(&report(3), &[]).contains("  held: 3 ("), "{}", summary(&report(3), &[]));
        assert!(!summary(&report(0), &[]).contains("held:"), "{}", summary(&report(0), &[]));
    }

    /// The surface line shows for a model with surface self-collision (it always finds its
    /// candidate pairs at least once), and says when no contact was made; never without it.
    #[test]
    fn surface_self_collision_is_reported_with_or_without_contacts() {
        let with = |contacts, rebuilds| {
            let mut r = report(0);
            r.totals.surface =
                weft::kernels::surface_collision::SurfaceStats { contacts, rebuilds, ..Default::default() };
            summary(&r, &[])
        };
        let none = with(0, 1);
        assert!(none.contains("  surface self-collision: 0 contacts made, "), "{none}");
        assert!(none.contains("found again in 1 of 2 time steps (no surfaces came near"), "{none}");
        let some = with(5, 2);
        assert!(some.contains("found again in 2 of 2 time steps\n"), "{some}");
        assert!(!with(0, 0).contains("surface self-collision"));
    }

    #[test]
    fn frames_over_the_tolerance_are_reported() {
        let frame = |frame, substeps, max_stretch| FrameStats {
            frame,
            substeps,
            max_stretch,
            ..FrameStats::default()
        };
        let tolerance = weft::core::StrainTolerance { max_strain: 0.02, min_substeps: 4, max_substeps: 16 };
        let mut r = BakeReport {
            tolerance: Some(tolerance),
            substeps: 4,
            steps: 4 + 16 + 4 + 16 + 8,
            redone_steps: 4 + 8,
            per_frame: vec![frame(1, 4, 0.01), frame(2, 16, 0.031), frame(3, 16, 0.0304)],
            start_intersections: None,
            ..report(0)
        };
        let s = summary(&r, &[]);
        assert!(
            s.contains(
                "  substeps chosen to a largest strain of 2.000 %: 4 to 16 per frame (allowed 4 to \
                 16), 1 iteration each; 12 time steps redone at a higher count\n"
            ),
            "{s}"
        );
        assert!(
            s.contains("  over the tolerance at max_substeps = 16: 2 frames, the worst 3.100 % (frame 2);"),
            "{s}"
        );
        r.per_frame[1].max_stretch = 0.015;
        r.per_frame[2].max_stretch = 0.02;
        assert!(!summary(&r, &[]).contains("over the tolerance"), "{}", summary(&r, &[]));
        assert!(!summary(&report(0), &[]).contains("substeps chosen"), "a fixed count says nothing");
    }
}
