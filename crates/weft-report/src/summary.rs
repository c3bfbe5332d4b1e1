//! Reading a bake's `summary.toml` (written by `weft bake` when a bake completes): the keys a
//! report uses. Keys it does not know are ignored.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::ReportError;

/// Name of the summary file in a bake folder.
pub const SUMMARY_FILE: &str = "summary.toml";

/// The keys of `summary.toml` a report reads; each may be missing.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct Summary {
    /// The scene file the bake was made from (absolute; a relative path is taken relative to the
    /// bake folder).
    pub scene: Option<PathBuf>,
    /// The wedge variant's index, for a variant of a parameter sweep.
    pub wedge_index: Option<u64>,
    /// The wedge variant's name (its folder name), for a variant of a parameter sweep.
    pub variant: Option<String>,
    /// Frames baked.
    pub frames: Option<u32>,
    /// Frames per second, in 1/s.
    pub fps: Option<f64>,
    /// Wall-clock time per frame of the whole bake, in ms.
    pub ms_per_frame: Option<f64>,
}

impl Summary {
    /// Reads `DIR/summary.toml`; `Ok(None)` if there is none.
    pub fn read(dir: &Path) -> Result<Option<Self>, ReportError> {
        let path = dir.join(SUMMARY_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ReportError::input(path, format!("cannot read: {e}"))),
        };
        let mut summary: Summary =
            toml::from_str(&text).map_err(|e| ReportError::input(&path, one_line(&e.to_string())))?;
        if let Some(scene) = &summary.scene
            && scene.is_relative()
        {
            summary.scene = Some(dir.join(scene));
        }
        Ok(Some(summary))
    }
}

/// `text` on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_ignored_and_relative_scenes_resolved() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(SUMMARY_FILE),
            "scene = \"s.toml\"\nvariant = \"w001\"\nfuture_key = 3\nms_per_frame = 2.5\n[wedge]\n\"a.b\" = 1.0\n",
        )
        .unwrap();
        let s = Summary::read(dir.path()).unwrap().unwrap();
        assert_eq!(s.scene, Some(dir.path().join("s.toml")));
        assert_eq!(s.variant.as_deref(), Some("w001"));
        assert_eq!(s.ms_per_frame, Some(2.5));
        assert_eq!(Summary::read(&dir.path().join("none")).unwrap(), None);
        std::fs::write(dir.path().join(SUMMARY_FILE), "frames = \"many\"\n").unwrap();
        let e = Summary::read(dir.path()).unwrap_err().to_string();
        assert!(
            e.starts_with(&dir.path().join(SUMMARY_FILE).display().to_string()) && !e.contains('\n'),
            "{e}"
        );
    }
}
