//! A bake's output folder: its `stats.csv`, its `summary.toml`, the scene it was baked from, and
//! the caches of its cloths.

use std::path::{Path, PathBuf};

use weft_core::Model;
use weft_core::limits::Limits;
use weft_io::{ObjectSelection, Pc2};

use crate::error::ReportError;
use crate::shading::{Mesh, Surface};
use crate::stats_csv::{STATS_FILE, StatsTable};
use crate::summary::Summary;

/// A bake folder, read and checked.
#[derive(Debug, Clone)]
pub struct BakeFolder {
    /// The folder.
    pub dir: PathBuf,
    /// Its name in legends and sheets: the summary's `variant`, else the folder's name.
    pub label: String,
    /// Its `stats.csv`.
    pub stats: StatsTable,
    /// Its `summary.toml`, if it has one.
    pub summary: Option<Summary>,
}

impl BakeFolder {
    /// Opens and checks `dir`: it must be a folder with a well-formed `stats.csv`.
    pub fn open(dir: &Path) -> Result<Self, ReportError> {
        if !dir.is_dir() {
            let problem = if dir.exists() { "not a folder" } else { "no such folder" };
            return Err(ReportError::input(dir, problem));
        }
        let stats = StatsTable::read(&dir.join(STATS_FILE))?;
        let summary = Summary::read(dir)?;
        let folder_name = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string());
        let label = summary.as_ref().and_then(|s| s.variant.clone()).unwrap_or(folder_name);
        Ok(BakeFolder { dir: dir.to_path_buf(), label, stats, summary })
    }

    /// Frames per second: the summary's, else the step between `time_s` rows, else `None`.
    pub fn fps(&self) -> Option<f64> {
        if let Some(fps) = self.summary.as_ref().and_then(|s| s.fps) {
            return Some(fps);
        }
        let points = self.stats.points("frame", "time_s", 1.0);
        let &(frame, time) = points.last()?;
        (time > 0.0).then(|| frame / time)
    }
}

/// The scene of a bake folder, loaded and built into a model: `scene_override` (`--scene`) if
/// given, else the `scene` of its `summary.toml`, as the summary's wedge variant if it names one.
/// `Ok(None)` when there is neither.
///
/// This is the one place a report loads a bake's scene.
pub fn load_bake_scene(
    folder: &BakeFolder,
    scene_override: Option<&Path>,
) -> Result<Option<Model>, ReportError> {
    let path = match (scene_override, folder.summary.as_ref().and_then(|s| s.scene.as_deref())) {
        (Some(path), _) | (None, Some(path)) => path,
        (None, None) => return Ok(None),
    };
    // A wedge variant is its scene with the variant's values applied.
    let scene = match folder.summary.as_ref().and_then(|s| s.wedge_index) {
        Some(index) => weft_io::load_scene_variant(path, &Limits::default(), index as usize)?,
        None => weft_io::load_scene(path, &Limits::default())?,
    };
    Ok(Some(scene.build_model()?))
}

/// Where the frames of one cloth come from.
#[derive(Debug, Clone)]
enum Source {
    /// `NAME.pc2`, with the cloth's triangles.
    Pc2 { cache: Pc2, triangles: Vec<[u32; 3]> },
    /// `NAME.NNNN.obj`, one file per sample, in order.
    Obj { files: Vec<PathBuf> },
}

/// The baked frames of one cloth.
#[derive(Debug, Clone)]
pub struct ClothFrames {
    /// The cloth's name.
    pub name: String,
    source: Source,
}

impl ClothFrames {
    /// Samples in the cache (frames + 1: sample 0 is the initial state).
    pub fn samples(&self) -> usize {
        match &self.source {
            Source::Pc2 { cache, .. } => cache.sample_count,
            Source::Obj { files } => files.len(),
        }
    }

    /// The cloth's mesh at sample `k` (`k < samples()`).
    pub fn mesh(&self, k: usize) -> Result<Mesh, ReportError> {
        let (positions, triangles) = match &self.source {
            Source::Pc2 { cache, triangles } => (cache.sample(k).to_vec(), triangles.clone()),
            Source::Obj { files } => {
                let mesh =
                    weft_io::read_obj(&files[k], &ObjectSelection::Only, Limits::default().max_mesh_bytes)
                        .map_err(|e| ReportError::input(&files[k], e.to_string()))?;
                (mesh.positions, mesh.triangles)
            }
        };
        Ok(Mesh { positions, triangles, surface: Surface::Cloth, smooth: true })
    }
}

/// The caches of every cloth of `model` in `dir`: `NAME.pc2` where it has the cloth's particle
/// count (its render mesh's vertex count, for a cloth with one), else the OBJ sequence `NAME.NNNN.obj` (with its own faces); a cloth with neither, or
/// without triangles, is left out with a line in `notes`.
pub fn cloth_caches(
    dir: &Path,
    model: &Model,
    notes: &mut Vec<String>,
) -> Result<Vec<ClothFrames>, ReportError> {
    let mut out = Vec::new();
    for cloth in model.cloths() {
        let name = cloth.name.clone();
        let pc2_path = dir.join(format!("{name}.pc2"));
        let obj = obj_sequence(dir, &name)?;
        let mut pc2_note = None;
        if pc2_path.is_file() {
            let cache =
                weft_io::read_pc2(&pc2_path).map_err(|e| ReportError::input(&pc2_path, e.to_string()))?;
            // A cloth with a render mesh caches that mesh under its name.
            let (points, triangles, what) = match &cloth.render {
                Some(r) => (r.binding.len(), r.polygons.fan_triangles(), "render mesh vertices"),
                None => (cloth.particles.len(), cloth.triangles.clone(), "particles"),
            };
            if cache.point_count != points {
                pc2_note = Some(format!(
                    "{}: {} points, the cloth has {points} {what}",
                    pc2_path.display(),
                    cache.point_count,
                ));
            } else if triangles.is_empty() {
                notes.push(format!("{}: cloth '{name}' has no triangles: not drawn", dir.display()));
                continue;
            } else {
                out.push(ClothFrames { name, source: Source::Pc2 { cache, triangles } });
                continue;
            }
        }
        match (obj, pc2_note) {
            (Some(files), _) => out.push(ClothFrames { name, source: Source::Obj { files } }),
            (None, Some(note)) => {
                notes.push(format!("{note} and there is no OBJ sequence: cloth '{name}' not drawn"))
            }
            (None, None) => notes.push(format!(
                "{}: no {name}.pc2 and no {name}.NNNN.obj: cloth '{name}' not drawn",
                dir.display()
            )),
        }
    }
    Ok(out)
}

/// The files of the OBJ sequence `NAME.NNNN.obj` in `dir`, by sample, if it has sample 0 and no
/// gap.
fn obj_sequence(dir: &Path, name: &str) -> Result<Option<Vec<PathBuf>>, ReportError> {
    let entries = std::fs::read_dir(dir).map_err(|e| ReportError::input(dir, format!("cannot list: {e}")))?;
    let prefix = format!("{name}.");
    let mut found: Vec<(u64, PathBuf)> = Vec::new();
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(file) = file.to_str() else { continue };
        let Some(digits) = file.strip_prefix(&prefix).and_then(|r| r.strip_suffix(".obj")) else { continue };
        if digits.len() >= 4
            && digits.bytes().all(|b| b.is_ascii_digit())
            && let Ok(k) = digits.parse()
        {
            found.push((k, entry.path()));
        }
    }
    found.sort();
    if found.is_empty() || found.iter().enumerate().any(|(i, (k, _))| *k != i as u64) {
        return Ok(None);
    }
    Ok(Some(found.into_iter().map(|(_, p)| p).collect()))
}
