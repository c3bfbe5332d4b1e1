//! [`SceneError`]: one line naming the file, the line and column, the place in the scene and the
//! rule broken.

use std::fmt;
use std::io;
use std::path::PathBuf;

use weft_core::Rule;

use super::spans::one_line;

/// A position in a scene file: `file:line:column`, both 1-based, the column counted in characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcePos {
    /// The file as the caller named it.
    pub file: String,
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

impl fmt::Display for SourcePos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// A rule of the scene format itself (as opposed to a rule of the model, a [`Rule`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SceneRule {
    /// A rule of the model, checked by `weft-core` or with its types.
    #[error(transparent)]
    Model(Rule),
    /// Two keys that exclude each other are both given.
    #[error("give `{first}` or `{second}`, not both")]
    Conflict {
        /// The key met first in the key table.
        first: &'static str,
        /// The other key.
        second: &'static str,
    },
    /// A cloth with neither `positions` nor `grid`.
    #[error("a cloth needs its particles: give `positions` (explicit particles) or `grid`")]
    NoShape,
    /// A key that a grid cloth generates for itself.
    #[error(
        "`{key}` cannot be combined with `grid`: a grid generates its own particles, triangles, \
         stretch edges (at their initial length) and shear edges"
    )]
    GeneratedByGrid {
        /// The key.
        key: &'static str,
    },
    /// A key that only means something for a grid cloth.
    #[error("`{key}` applies to a `grid` cloth only")]
    NeedsGrid {
        /// The key.
        key: &'static str,
    },
    /// An index that is negative or does not fit 32 bits.
    #[error("{value} is not a particle index: indices are whole numbers from 0 to {}", u32::MAX)]
    BadIndex {
        /// The value as written.
        value: i64,
    },
    /// A count larger than 32 bits.
    #[error("{value} is more than {}, the largest count weft takes", u32::MAX)]
    CountTooLarge {
        /// The value as written.
        value: i64,
    },
    /// A finite number too large for a 32-bit float.
    #[error("{value:?} does not fit a 32-bit float (largest magnitude {:?})", f32::MAX)]
    NotF32 {
        /// The value as written.
        value: f64,
    },
}

/// Why a scene could not be read or built. Its `Display` is one line.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// The file could not be opened or read.
    #[error("{}: cannot read the scene file: {source}", one_line(&path.display().to_string()))]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// The file is larger than [`MAX_SCENE_BYTES`](super::MAX_SCENE_BYTES); nothing was read.
    #[error(
        "{}: the scene file is {len} bytes, more than the limit of {limit} bytes for a scene",
        one_line(&path.display().to_string())
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its length in bytes.
        len: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// The file is not UTF-8 text (TOML must be).
    #[error("{at}: the scene file is not UTF-8 text")]
    NotUtf8 {
        /// The first byte that is not.
        at: SourcePos,
    },
    /// The text is not valid TOML, or does not fit the scene format: a syntax error, an unknown
    /// key, a missing key, a value of the wrong type. The message is the TOML reader's, on one line.
    #[error("{at}: {message}")]
    Toml {
        /// Where.
        at: SourcePos,
        /// What, on one line.
        message: String,
    },
    /// A value breaks a rule of the scene format or of the model.
    #[error("{at}: {place}: {rule}")]
    Invalid {
        /// Where in the file.
        at: SourcePos,
        /// Where in the scene: `simulation.fps`, `cloth 'seed': edges[3]`.
        place: String,
        /// The rule.
        rule: SceneRule,
    },
}

impl SceneError {
    /// The model rule broken, if the error is one (`weft-core`'s [`Rule`], whether found by the
    /// model builder or by the scene reader with `weft-core`'s types).
    pub fn rule(&self) -> Option<&Rule> {
        match self {
            SceneError::Invalid { rule: SceneRule::Model(rule), .. } => Some(rule),
            _ => None,
        }
    }

    /// The scene-format rule broken, if the error is one.
    pub fn scene_rule(&self) -> Option<&SceneRule> {
        match self {
            SceneError::Invalid { rule, .. } => Some(rule),
            _ => None,
        }
    }

    /// The position in the file, if the error has one (not for unreadable or oversized files).
    pub fn position(&self) -> Option<&SourcePos> {
        match self {
            SceneError::NotUtf8 { at } | SceneError::Toml { at, .. } => Some(at),
            SceneError::Invalid { at, .. } => Some(at),
            SceneError::Read { .. } | SceneError::TooLarge { .. } => None,
        }
    }

    /// The 1-based line of the error, if it has a position.
    pub fn line(&self) -> Option<usize> {
        self.position().map(|p| p.line)
    }
}
