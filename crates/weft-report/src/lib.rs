//! # weft-report — pictures of a bake
//!
//! `weft report DIR` shows a bake without a DCC: PNG plots of its `stats.csv` (largest stretch,
//! constraint error, intersecting triangle pairs, substeps) and preview images of chosen frames
//! (every cloth and collider, shaded, from a fixed camera framing the whole bake), with a contact
//! sheet of them. Given several bake folders (the variants of a sweep), it draws one line per
//! folder in each plot and a sheet of the variants side by side.
//!
//! The modules, each with one job:
//!
//! * [`stats_csv`]: reading `stats.csv` (an empty field is "not measured", never 0);
//! * [`summary`]: reading `summary.toml`;
//! * [`bake_folder`]: a bake folder, the one function loading its scene, its cloths' caches;
//! * [`plots`]: line and bar plots (plotters' bitmap backend);
//! * [`camera`], [`raster`], [`shading`], [`colliders`]: the software renderer of the previews
//!   (orthographic camera, z-buffered Gouraud triangles, Lambert light, tessellated colliders);
//! * [`preview`], [`sheet`]: preview images and contact sheets;
//! * [`image`], [`text`]: RGB images written as PNG atomically, text in the embedded font.
//!
//! Images are written under a temporary name and renamed when complete, like every weft file.

pub mod bake_folder;
pub mod camera;
pub mod colliders;
pub mod error;
pub mod image;
pub mod plots;
pub mod preview;
pub mod raster;
pub mod shading;
pub mod sheet;
pub mod stats_csv;
pub mod summary;
pub mod text;

use std::path::{Path, PathBuf};

use weft_core::Model;
use weft_core::kinds::{KindId, Plot};

pub use bake_folder::{BakeFolder, load_bake_scene};
pub use error::ReportError;

use crate::bake_folder::{ClothFrames, cloth_caches};
use crate::camera::{Bounds, Camera};
use crate::image::Image;
use crate::plots::{Line, Panel};
use crate::preview::{PREVIEW_SIZE, Stage};

/// What to report on and where.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReportOptions {
    /// The bake folders (one, or the variants of a sweep).
    pub dirs: Vec<PathBuf>,
    /// The frames to preview (0 is the initial state); empty: the defaults (for one folder the
    /// first, three between and the last; for several, each one's last).
    pub frames: Vec<u32>,
    /// The report's folder; `None`: `DIR/report` for one folder, `PARENT/report` for several
    /// folders with one parent.
    pub out: Option<PathBuf>,
    /// The scene file to draw the bakes with, instead of the `scene` of their `summary.toml`.
    pub scene: Option<PathBuf>,
}

/// What a report wrote.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// The report's folder.
    pub out_dir: PathBuf,
    /// Every file written, in order.
    pub files: Vec<PathBuf>,
    /// What was left out and why, one line each.
    pub notes: Vec<String>,
}

/// A bake folder with what its previews need.
struct Loaded {
    folder: BakeFolder,
    /// `None` when the folder has nothing to preview (no scene, no caches); the reason is noted.
    drawn: Option<(Model, Vec<ClothFrames>, f64)>,
}

impl Loaded {
    fn stage(&self) -> Option<Stage<'_>> {
        self.drawn.as_ref().map(|(model, cloths, fps)| Stage { model, cloths, fps: *fps })
    }
}

/// The bake folders of `dirs`: each folder itself, or, for a folder without `stats.csv` whose
/// subfolders have one (the output of a batch or of a whole `[wedge]`), those subfolders in the
/// order of their names.
fn bake_dirs(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in dirs {
        let mut inner: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(entries) if !dir.join(stats_csv::STATS_FILE).exists() => entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.join(stats_csv::STATS_FILE).is_file())
                .collect(),
            _ => Vec::new(),
        };
        if inner.is_empty() {
            out.push(dir.clone());
        } else {
            inner.sort();
            out.extend(inner);
        }
    }
    out
}

/// Makes the report of `options.dirs` (see the crate docs). Every input is read and checked
/// before the first image is written.
pub fn report(options: &ReportOptions) -> Result<Report, ReportError> {
    if options.dirs.is_empty() {
        return Err(ReportError::input(".", "no bake folder given"));
    }
    let folders =
        bake_dirs(&options.dirs).iter().map(|d| BakeFolder::open(d)).collect::<Result<Vec<_>, _>>()?;
    for folder in &folders {
        let last = folder.stats.len() as u32;
        if let Some(&frame) = options.frames.iter().find(|&&f| f > last) {
            return Err(ReportError::FrameOutOfRange { frame, dir: folder.dir.clone(), last });
        }
    }
    let out_dir = out_dir(options)?;
    let mut report = Report { out_dir: out_dir.clone(), ..Report::default() };

    let mut loaded = Vec::new();
    for folder in folders {
        let drawn = load_for_previews(&folder, options.scene.as_deref(), &mut report.notes)?;
        loaded.push(Loaded { folder, drawn });
    }
    for l in &loaded {
        if let Some(stage) = l.stage() {
            let last = stage.samples().saturating_sub(1) as u32;
            if let Some(&frame) = options.frames.iter().find(|&&f| f > last) {
                return Err(ReportError::FrameOutOfRange { frame, dir: l.folder.dir.clone(), last });
            }
        }
    }

    std::fs::create_dir_all(&out_dir)
        .map_err(|source| ReportError::Write { path: out_dir.clone(), source })?;
    let folders: Vec<&BakeFolder> = loaded.iter().map(|l| &l.folder).collect();
    for (name, image) in stat_plots(&folders, &mut report.notes)? {
        report.files.push(image.save(&out_dir, &name)?);
    }
    if loaded.len() == 1 {
        single_previews(&loaded[0], &options.frames, &out_dir, &mut report)?;
    } else {
        variant_sheet(&loaded, &options.frames, &out_dir, &mut report)?;
    }
    Ok(report)
}

/// The report's folder (see [`ReportOptions::out`]).
fn out_dir(options: &ReportOptions) -> Result<PathBuf, ReportError> {
    if let Some(out) = &options.out {
        return Ok(out.clone());
    }
    if let [dir] = options.dirs.as_slice() {
        return Ok(dir.join("report"));
    }
    let parents: Vec<PathBuf> = options
        .dirs
        .iter()
        .map(|d| d.canonicalize().ok().and_then(|d| d.parent().map(Path::to_path_buf)))
        .collect::<Option<_>>()
        .ok_or(ReportError::NeedOut)?;
    if parents.iter().all(|p| *p == parents[0]) {
        Ok(parents[0].join("report"))
    } else {
        Err(ReportError::NeedOut)
    }
}

/// The model, caches and frame rate of `folder`'s previews, or `None` with a note.
fn load_for_previews(
    folder: &BakeFolder,
    scene: Option<&Path>,
    notes: &mut Vec<String>,
) -> Result<Option<(Model, Vec<ClothFrames>, f64)>, ReportError> {
    let Some(model) = load_bake_scene(folder, scene)? else {
        notes.push(format!(
            "{}: no previews: no summary.toml names the scene; give it with --scene SCENE.toml",
            folder.dir.display()
        ));
        return Ok(None);
    };
    let cloths = cloth_caches(&folder.dir, &model, notes)?;
    if cloths.is_empty() {
        notes.push(format!("{}: no cloth cache to draw: no previews", folder.dir.display()));
        return Ok(None);
    }
    let fps = model.settings().fps;
    Ok(Some((model, cloths, fps)))
}

/// The plots of the folders' `stats.csv`, by file name.
fn stat_plots(folders: &[&BakeFolder], notes: &mut Vec<String>) -> Result<Vec<(String, Image)>, ReportError> {
    let lines = |column: &str, scale: f64| -> Vec<Line> {
        folders
            .iter()
            .map(|f| Line { label: f.label.clone(), points: f.stats.points("time_s", column, scale) })
            .collect()
    };
    let measured = |lines: &[Line]| lines.iter().any(|l| !l.points.is_empty());
    let nonzero = |lines: &[Line]| lines.iter().any(|l| l.points.iter().any(|p| p.1 != 0.0));
    let panel = |title: &str, y_label: &str, lines: Vec<Line>| Panel {
        title: title.to_string(),
        y_label: y_label.to_string(),
        lines,
    };
    const TIME: &str = "time (s)";
    let mut out = Vec::new();

    let strain = lines("max_stretch", 100.0);
    if measured(&strain) {
        let p = panel("Largest stretch of a stretch edge", "stretch (%)", strain);
        out.push(("strain.png".to_string(), plots::plot("strain.png", TIME, &[p])?));
    } else {
        notes.push("stats.csv has no max_stretch values: no strain.png".to_string());
    }

    // Constraint error: a panel per plotted residual column of the constraint kinds (registry
    // order), for the kinds the bakes have (kinds a scene lacks read 0).
    let residuals: Vec<(&str, Plot)> =
        KindId::ALL.iter().flat_map(|k| k.info().columns).filter_map(|c| Some((c.name, c.plot?))).collect();
    let all: Vec<_> = residuals.iter().map(|(column, plot)| (lines(column, plot.scale), plot)).collect();
    if all.iter().any(|(l, _)| measured(l)) {
        let mut panels: Vec<Panel> =
            all.iter().filter(|(l, _)| nonzero(l)).map(|(l, p)| panel(p.title, p.axis, l.clone())).collect();
        if panels.is_empty() {
            panels.push(panel(all[0].1.title, all[0].1.axis, all[0].0.clone()));
        }
        out.push(("constraint_error.png".to_string(), plots::plot("constraint_error.png", TIME, &panels)?));
    } else {
        notes.push("stats.csv has no residuals measured (--stats off): no constraint_error.png".to_string());
    }

    let pairs = lines("intersecting_triangle_pairs", 1.0);
    if measured(&pairs) {
        let p = panel("Intersecting triangle pairs (frames measured fully)", "pairs", pairs);
        out.push(("intersections.png".to_string(), plots::plot("intersections.png", TIME, &[p])?));
    } else {
        notes.push(
            "stats.csv has no intersecting pairs measured (--stats off): no intersections.png".to_string(),
        );
    }

    let substeps = lines("substeps", 1.0);
    if measured(&substeps) {
        let title = match folders {
            [f] => match f.summary.as_ref().and_then(|s| s.ms_per_frame) {
                Some(ms) => format!("Time steps per frame (the bake took {ms:.1} ms per frame)"),
                None => "Time steps per frame".to_string(),
            },
            _ => "Time steps per frame".to_string(),
        };
        let p = panel(&title, "substeps", substeps);
        out.push(("substeps.png".to_string(), plots::plot("substeps.png", TIME, &[p])?));
    }

    if folders.len() > 1 {
        let timed: Vec<(String, f64)> = folders
            .iter()
            .filter_map(|f| Some((f.label.clone(), f.summary.as_ref()?.ms_per_frame?)))
            .collect();
        if timed.is_empty() {
            notes.push("no summary.toml has ms_per_frame: no ms_per_frame.png".to_string());
        } else {
            let image = plots::bars("ms_per_frame.png", "Wall-clock time per frame", "ms per frame", &timed)?;
            out.push(("ms_per_frame.png".to_string(), image));
        }
    }
    Ok(out)
}

/// The frames previewed by default for a bake of `last` frames: the first, three between, the
/// last.
pub fn default_frames(last: u32) -> Vec<u32> {
    let mut frames: Vec<u32> = (0..=4).map(|i| (u64::from(last) * i / 4) as u32).collect();
    frames.dedup();
    frames
}

/// The caption of sample `k` of a bake of `last` frames at `fps`.
fn frame_caption(k: u32, last: u32, fps: f64) -> String {
    format!("frame {k} of {last}   t = {:.3} s", f64::from(k) / fps)
}

/// The previews of one folder: an image per chosen frame and `sheet.png`.
fn single_previews(
    l: &Loaded,
    frames: &[u32],
    out_dir: &Path,
    report: &mut Report,
) -> Result<(), ReportError> {
    let Some(stage) = l.stage() else { return Ok(()) };
    let last = stage.samples().saturating_sub(1) as u32;
    let frames = if frames.is_empty() { default_frames(last) } else { frames.to_vec() };
    let bounds = stage.bounds()?;
    let camera = Camera::framing(&bounds, stage.up(), PREVIEW_SIZE.0, PREVIEW_SIZE.1);
    let digits = weft_io::obj_sequence::frame_digits(last + 1);
    let mut tiles = Vec::new();
    for &k in &frames {
        let image = preview::render(&stage.meshes(k as usize, &bounds)?, &camera);
        let caption = frame_caption(k, last, stage.fps);
        let mut labelled = image.clone();
        text::label(&mut labelled, &[l.folder.label.clone(), caption.clone()], 18);
        report.files.push(labelled.save(out_dir, &format!("frame_{k:0digits$}.png"))?);
        tiles.push((image, vec![caption]));
    }
    let sheet = sheet::contact_sheet(&tiles, sheet::columns_for(tiles.len()), 2);
    report.files.push(sheet.save(out_dir, "sheet.png")?);
    Ok(())
}

/// The sheet of several folders, `variants.png`: a row per folder, a column per chosen frame
/// (default: each folder's last), all from one camera framing every folder's bake.
fn variant_sheet(
    loaded: &[Loaded],
    frames: &[u32],
    out_dir: &Path,
    report: &mut Report,
) -> Result<(), ReportError> {
    let stages: Vec<(&BakeFolder, Stage<'_>)> =
        loaded.iter().filter_map(|l| Some((&l.folder, l.stage()?))).collect();
    if stages.is_empty() {
        report.notes.push("no folder has anything to draw: no variants.png".to_string());
        return Ok(());
    }
    let mut bounds = Bounds::EMPTY;
    for (_, stage) in &stages {
        let b = stage.bounds()?;
        if !b.is_empty() {
            bounds.add(b.min);
            bounds.add(b.max);
        }
    }
    let camera = Camera::framing(&bounds, stages[0].1.up(), PREVIEW_SIZE.0, PREVIEW_SIZE.1);
    let mut tiles = Vec::new();
    let mut columns = 1;
    for (folder, stage) in &stages {
        let last = stage.samples().saturating_sub(1) as u32;
        let chosen = if frames.is_empty() { vec![last] } else { frames.to_vec() };
        columns = chosen.len();
        for k in chosen {
            let image = preview::render(&stage.meshes(k as usize, &bounds)?, &camera);
            tiles.push((image, vec![folder.label.clone(), frame_caption(k, last, stage.fps)]));
        }
    }
    let columns = if columns == 1 { sheet::columns_for(tiles.len()) } else { columns };
    let sheet = sheet::contact_sheet(&tiles, columns, 2);
    report.files.push(sheet.save(out_dir, "variants.png")?);
    Ok(())
}
