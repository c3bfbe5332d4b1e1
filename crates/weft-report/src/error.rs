//! What can go wrong in a report: each error is one line naming the file (and line) and the rule.

use std::path::PathBuf;

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Bad input in a file or folder: `PATH[:LINE]: problem`.
    #[error("{}{}: {problem}", path.display(), line.map_or_else(String::new, |l| format!(":{l}")))]
    Input {
        /// The file or folder.
        path: PathBuf,
        /// The line (from 1), where the problem is on one.
        line: Option<usize>,
        /// What is wrong, and the rule.
        problem: String,
    },
    /// A frame asked for (`--frames`) that the bake does not have.
    #[error("frame {frame} is out of range: {} has frames 0 to {last}", dir.display())]
    FrameOutOfRange {
        /// The frame asked for.
        frame: u32,
        /// The bake folder.
        dir: PathBuf,
        /// Its last frame.
        last: u32,
    },
    /// The scene of a bake could not be loaded or built (the message names the file and key).
    #[error(transparent)]
    Scene(#[from] weft_io::SceneError),
    /// Several bake folders without a shared parent and no `--out`.
    #[error("the bake folders have different parent folders: give the report's folder with --out")]
    NeedOut,
    /// An image or folder could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A plot could not be drawn (a bug or an impossible range, not bad input).
    #[error("cannot draw {name}: {message}")]
    Draw {
        /// The image's file name.
        name: String,
        /// What the drawing library said.
        message: String,
    },
}

impl ReportError {
    /// Bad input in `path`, not tied to a line.
    pub fn input(path: impl Into<PathBuf>, problem: impl Into<String>) -> Self {
        ReportError::Input { path: path.into(), line: None, problem: problem.into() }
    }

    /// Bad input on line `line` (from 1) of `path`.
    pub fn at_line(path: impl Into<PathBuf>, line: usize, problem: impl Into<String>) -> Self {
        ReportError::Input { path: path.into(), line: Some(line), problem: problem.into() }
    }
}
