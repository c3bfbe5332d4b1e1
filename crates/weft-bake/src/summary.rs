//! `DIR/summary.toml`: what a finished bake was and did, for tools that collect many bakes (a
//! sweep, a farm's output). [`write_summary`] writes it; the keys are [`summary_toml`]'s.
//!
//! Unlike every other file of a bake it holds timings, so its bytes differ from run to run; the
//! caches and `stats.csv` do not.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use weft_io::{Scene, StagedFile};

use crate::stats::STATS_FILE;
use crate::{BakeError, BakeOptions, BakeReport};

/// The summary's file name in the output directory.
pub const SUMMARY_FILE: &str = "summary.toml";

/// Writes [`summary_toml`] to `options.out_dir/`[`SUMMARY_FILE`], under a temporary name renamed
/// into place; returns its path. Call it once the bake of `scene` with `options` returned
/// `report`.
pub fn write_summary(
    scene: &Scene,
    options: &BakeOptions,
    report: &BakeReport,
) -> Result<PathBuf, BakeError> {
    let path = options.out_dir.join(SUMMARY_FILE);
    let err = |source| BakeError::File { path: path.clone(), source };
    let text = summary_toml(scene, options, report);
    let mut file = StagedFile::create(&path).map_err(err)?;
    file.write(text.as_bytes()).map_err(err)?;
    file.commit().map_err(err)
}

/// The summary's text, TOML with these keys:
///
/// | key | value |
/// |---|---|
/// | `scene` | the scene file, an absolute path (canonical where it can be made so) |
/// | `wedge_index` | a wedge variant only: its index |
/// | `variant` | a wedge variant only: its name (the folder a sweep bakes it into) |
/// | `frames` | frames of the bake |
/// | `fps` | frames per second, 1/s |
/// | `formats` | the cache formats written (`"pc2"`, `"usd"`, `"obj"`) |
/// | `files` | the cache files, relative to the output directory (`stats.csv` and this file left out) |
/// | `wall_seconds` | the bake's wall time, s |
/// | `ms_per_frame` | ms per frame of the frames this run stepped |
/// | `peak_strain` | the largest stretch of a stretch edge after any frame (0.021 = 2.1 %) |
/// | `last_strain` | the same after the last frame |
/// | `intersecting_pairs` | crossing triangle pairs after the last frame; absent if not measured |
/// | `[wedge]` | a wedge variant only: each wedge key with this variant's value |
///
/// For a resumed bake the strains cover the frames before the checkpoint too (read back from
/// `stats.csv`); the timings cover this run.
pub fn summary_toml(scene: &Scene, options: &BakeOptions, report: &BakeReport) -> String {
    let scene_path = fs::canonicalize(scene.path()).unwrap_or_else(|_| absolute(scene.path()));
    let mut strains: Vec<f32> = Vec::new();
    if report.resumed_from.is_some() {
        strains.extend(earlier_strains(&options.out_dir.join(STATS_FILE), report.resumed_from.unwrap_or(0)));
    }
    strains.extend(report.per_frame.iter().map(|f| f.max_stretch));
    let peak = strains.iter().copied().fold(0.0f32, f32::max);
    let last = strains.last().copied().unwrap_or(0.0);

    let value = |v: toml::Value| v.to_string();
    let string = |s: &str| value(toml::Value::String(s.to_string()));
    let list =
        |items: Vec<String>| value(toml::Value::Array(items.into_iter().map(toml::Value::String).collect()));
    let mut s = String::new();
    let _ = writeln!(s, "scene = {}", string(&scene_path.to_string_lossy()));
    if let Some(variant) = scene.variant() {
        let _ = writeln!(s, "wedge_index = {}", variant.index);
        let _ = writeln!(s, "variant = {}", string(&variant.name));
    }
    let _ = writeln!(s, "frames = {}", report.frames);
    let _ = writeln!(s, "fps = {}", value(toml::Value::Float(scene.settings().fps)));
    let formats = options.effective_formats().iter().map(|f| f.to_string()).collect();
    let _ = writeln!(s, "formats = {}", list(formats));
    let files = report
        .files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n != STATS_FILE))
        .map(|f| f.strip_prefix(&options.out_dir).unwrap_or(f).to_string_lossy().into_owned())
        .collect();
    let _ = writeln!(s, "files = {}", list(files));
    let _ = writeln!(s, "wall_seconds = {}", value(toml::Value::Float(report.wall_time.as_secs_f64())));
    let _ = writeln!(s, "ms_per_frame = {}", value(toml::Value::Float(report.ms_per_frame())));
    let _ = writeln!(s, "peak_strain = {}", value(toml::Value::Float(peak as f64)));
    let _ = writeln!(s, "last_strain = {}", value(toml::Value::Float(last as f64)));
    if let Some(pairs) = report.per_frame.last().and_then(|f| f.intersections) {
        let _ = writeln!(s, "intersecting_pairs = {pairs}");
    }
    if let Some(variant) = scene.variant() {
        let _ = writeln!(s, "\n[wedge]");
        for (key, v) in &variant.values {
            let _ = writeln!(s, "{} = {}", string(key), value(v.clone()));
        }
    }
    s
}

/// `path` made absolute against the working directory (it may not exist).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The `max_stretch` of frames `1..=frames` from a published `stats.csv` (those a resumed bake
/// did not step); empty if the file cannot be read.
fn earlier_strains(stats: &Path, frames: u32) -> Vec<f32> {
    let Ok(text) = fs::read_to_string(stats) else { return Vec::new() };
    let mut lines = text.lines();
    let Some(column) = lines.next().and_then(|h| h.split(',').position(|c| c == "max_stretch")) else {
        return Vec::new();
    };
    lines
        .take(frames as usize)
        .filter_map(|row| row.split(',').nth(column).and_then(|v| v.parse().ok()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::limits::Limits;

    const SCENE: &str = r#"[simulation]
fps = 30.0
frames = 3
substeps = 2

[wedge]
"cloth.c.stretch_compliance" = [1e-6, 1e-3]

[[cloth]]
name = "c"
grid = { resolution = [4, 4], size = [1.0, 1.0] }
density = 0.2
pin_corners = ["top-left"]
"#;

    #[test]
    fn a_variant_bake_records_its_wedge_and_its_strains() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        fs::write(&path, SCENE).unwrap();
        let scene = weft_io::load_scene_variant(&path, &Limits::default(), 1).unwrap();
        let mut options = BakeOptions::new(dir.path().join("out"));
        options.formats = vec![weft_io::CacheFormat::Pc2, weft_io::CacheFormat::Usd];
        options.stats = crate::stats::StatsLevel::Full;
        let report = crate::bake(&scene, &options).unwrap();
        let written = write_summary(&scene, &options, &report).unwrap();
        assert_eq!(written, options.out_dir.join(SUMMARY_FILE));
        let table: toml::Table = fs::read_to_string(&written).unwrap().parse().unwrap();
        assert_eq!(table["scene"].as_str().unwrap(), fs::canonicalize(&path).unwrap().to_str().unwrap());
        assert_eq!(table["wedge_index"].as_integer(), Some(1));
        assert_eq!(table["variant"].as_str(), Some("w001_stretch_compliance=0.001"));
        assert_eq!(table["frames"].as_integer(), Some(3));
        assert_eq!(table["fps"].as_float(), Some(30.0));
        assert_eq!(table["formats"].as_array().unwrap().len(), 2);
        let files: Vec<&str> =
            table["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
        assert_eq!(files, ["c.pc2", "c.usda"]);
        let peak = report.per_frame.iter().map(|f| f.max_stretch).fold(0.0f32, f32::max);
        assert!(peak > 0.0);
        assert_eq!(table["peak_strain"].as_float(), Some(peak as f64));
        assert_eq!(table["last_strain"].as_float(), Some(report.per_frame[2].max_stretch as f64));
        assert_eq!(table["intersecting_pairs"].as_integer(), Some(0));
        assert!(table["wall_seconds"].as_float().unwrap() > 0.0);
        assert_eq!(table["wedge"]["cloth.c.stretch_compliance"].as_float(), Some(1e-3));
        assert!(!options.out_dir.join("summary.toml.partial").exists());
    }

    #[test]
    fn a_scene_as_written_has_no_wedge_keys_and_a_resumed_one_keeps_earlier_strains() {
        let dir = tempfile::tempdir().unwrap();
        let stats = dir.path().join(STATS_FILE);
        fs::write(&stats, "frame,max_stretch\n1,0.5\n2,0.25\n3,0.125\n").unwrap();
        assert_eq!(earlier_strains(&stats, 2), [0.5, 0.25]);
        let scene = weft_io::parse_scene(SCENE, &dir.path().join("s.toml"), &Limits::default()).unwrap();
        let options = BakeOptions::new(dir.path().join("out"));
        let report = crate::bake(&scene, &options).unwrap();
        let table: toml::Table = summary_toml(&scene, &options, &report).parse().unwrap();
        assert!(
            table.get("wedge_index").is_none()
                && table.get("wedge").is_none()
                && table.get("variant").is_none()
        );
        assert!(table["scene"].as_str().unwrap().ends_with("s.toml"));
        assert!(Path::new(table["scene"].as_str().unwrap()).is_absolute());
        assert!(table.get("intersecting_pairs").is_some(), "the last frame is measured at --stats light");
    }
}
