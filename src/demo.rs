//! `weft demo`: a bake that needs no files.
//!
//! The demo scene is a flag of 48 × 32 particles, 1.6 m × 1.0 m, held by its two top corners. It
//! starts level and swings down under gravity for 3 s: 90 frames at 30 fps, baked to a strain
//! tolerance of 2 % (each frame takes 4 to 128 substeps of one iteration, as many as keep every
//! stretch edge within 2 % of its rest length; the pinned flag is tethered to its pins), a little
//! stretch (`1e-4` m/N) and shear (`1e-3` m/N) compliance, 0.2 kg/m², velocity damping 0.5 1/s. Its text, [`SCENE`], is compiled into the binary and is
//! the file `examples/flag.toml` of the source tree; [`run`] writes it next to the caches as
//! `demo.toml`, so `weft bake DIR/demo.toml --out OTHER` writes the same bytes again, and the bake's
//! `summary.toml`, which names it (`weft report DIR` draws the flag from it).

use std::io;
use std::path::{Path, PathBuf};

use weft_bake::{BakeError, BakeOptions, BakeReport, Progress, bake_with_progress, write_summary};
use weft_io::StagedFile;

/// The demo scene (the text of `examples/flag.toml`).
pub const SCENE: &str = include_str!("../examples/flag.toml");

/// File name of the demo scene written next to the caches.
pub const SCENE_FILE: &str = "demo.toml";

/// Where the demo writes when no directory is given.
pub const DEFAULT_OUT_DIR: &str = "weft-demo";

/// What the demo did.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoReport {
    /// The scene file written (`DIR/demo.toml`).
    pub scene: PathBuf,
    /// The bake of that scene.
    pub bake: BakeReport,
    /// The bake's `DIR/summary.toml`, naming the scene (so that `weft report DIR` draws its
    /// previews).
    pub summary: PathBuf,
}

/// Bakes [`SCENE`] with `options` (output directory, formats, threads, kernel, limits), telling
/// `progress` of every frame, then writes the scene to `DIR/`[`SCENE_FILE`] (under a temporary
/// name, renamed when complete) and the bake's `summary.toml`, as `weft bake` does.
pub fn run(options: &BakeOptions, progress: &mut dyn Progress) -> Result<DemoReport, BakeError> {
    let scene_path = options.out_dir.join(SCENE_FILE);
    let scene = weft_io::parse_scene(SCENE, &scene_path, &options.limits)?;
    let bake = bake_with_progress(&scene, options, progress)?;
    write_scene(&scene_path).map_err(|source| BakeError::File { path: scene_path.clone(), source })?;
    let summary = write_summary(&scene, options, &bake)?;
    Ok(DemoReport { scene: scene_path, bake, summary })
}

/// Writes [`SCENE`] to `path` via `path.partial` (removed again on failure).
fn write_scene(path: &Path) -> io::Result<()> {
    let mut file = StagedFile::create(path)?;
    file.write(SCENE.as_bytes())?;
    file.commit().map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_scene_builds_as_described() {
        let scene = weft_io::parse_scene(SCENE, Path::new("demo.toml"), &Default::default())
            .expect("the demo scene parses");
        let model = scene.build_model().expect("the demo scene builds");
        let s = model.settings();
        assert_eq!((s.fps, s.frames, s.substeps, s.iterations), (30.0, 90, 4, 1));
        assert_eq!(s.tolerance, Some(weft_core::StrainTolerance::default()));
        assert!(scene.cloths()[0].kinds.tethers.is_some(), "a pinned cloth baked to a tolerance is tethered");
        assert_eq!(model.particles().len(), 48 * 32);
        assert_eq!(model.report().pinned, 2);
        assert_eq!(model.report().stretch, 47 * 32 + 48 * 31);
        assert_eq!(model.report().shear, 2 * 47 * 31);
    }
}
