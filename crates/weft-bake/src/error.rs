//! Why a bake failed: [`BakeError`].

use std::io;
use std::path::PathBuf;

use weft_core::Rule;
use weft_io::{CacheFormat, SceneError};

/// Why a bake failed. Its `Display` is one line that names the file and the rule or the reason.
#[derive(Debug, thiserror::Error)]
pub enum BakeError {
    /// The scene breaks a rule (its message names the file, line and rule).
    #[error(transparent)]
    Scene(#[from] SceneError),
    /// The model is larger than [`BakeOptions::limits`](crate::BakeOptions::limits) allow (a model built in code), or has
    /// more frames than a cache can count.
    #[error("{place}: {rule}")]
    TooLarge {
        /// What is too large: `the model`, or the scene file and the setting.
        place: String,
        /// The limit broken (a [`Rule::TooLarge`]).
        rule: Rule,
    },
    /// The thread pool could not be started.
    #[error("cannot start a pool of {threads} threads: {source}")]
    ThreadPool {
        /// Threads asked for (`0`: rayon's default).
        threads: usize,
        /// rayon's reason.
        source: rayon::ThreadPoolBuildError,
    },
    /// The output directory could not be created.
    #[error("{}: cannot create the output directory: {source}", path.display())]
    OutDir {
        /// The directory.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// A cache could not be created, written or published (this includes a non-finite sample).
    #[error("{format} cache of cloth '{cloth}': {source}")]
    Cache {
        /// The cloth.
        cloth: String,
        /// The format.
        format: CacheFormat,
        /// The reason (it names the file).
        source: io::Error,
    },
    /// The bake stopped after `frame` because its [`Progress::should_stop`](crate::Progress::should_stop)
    /// asked it to.
    #[error("{}", stopped_message(*frame, checkpoint.as_deref()))]
    Stopped {
        /// The last frame stepped and written.
        frame: u32,
        /// The checkpoint written after it (`DIR/weft.checkpoint`), its temporary files kept;
        /// `None` for a bake without checkpoints, whose files were removed.
        checkpoint: Option<PathBuf>,
    },
    /// Another file (`stats.csv`, the demo's scene) could not be written or published.
    #[error("{}: cannot write the file: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
}

/// The message of [`BakeError::Stopped`].
fn stopped_message(frame: u32, checkpoint: Option<&std::path::Path>) -> String {
    match checkpoint {
        Some(path) => {
            format!("stopped after frame {frame}: {} kept; bake again with resume to go on", path.display())
        }
        None => format!("stopped after frame {frame}, without a checkpoint: nothing kept"),
    }
}
