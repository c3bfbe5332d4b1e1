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
    /// A key of the strain tolerance given with a fixed `substeps`.
    #[error(
        "`{key}` has the substep count of each frame chosen to a strain tolerance, `substeps` fixes \
         it: give one"
    )]
    FixedAndTolerance {
        /// The tolerance key (`max_strain`, `min_substeps` or `max_substeps`).
        key: &'static str,
    },
    /// A cloth with none of `positions`, `grid` and `mesh`.
    #[error(
        "a cloth needs its particles: give `positions` (explicit particles), `grid` or `mesh` (an OBJ file)"
    )]
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
    /// A key that a mesh cloth derives from its OBJ file.
    #[error(
        "`{key}` cannot be combined with `mesh`: a mesh cloth takes its particles and triangles from \
         the OBJ file and derives its stretch edges (at their initial length) and shear edges"
    )]
    GeneratedByMesh {
        /// The key.
        key: &'static str,
    },
    /// A key that only means something for a mesh cloth.
    #[error("`{key}` applies to a `mesh` cloth only")]
    NeedsMesh {
        /// The key.
        key: &'static str,
    },
    /// A key that only means something for a cloth that generates its edges.
    #[error("`{key}` applies to `grid` and `mesh` cloths only (an explicit cloth lists its `shear_edges`)")]
    NeedsGridOrMesh {
        /// The key.
        key: &'static str,
    },
    /// A warp or weft material on a cloth without UVs.
    #[error(
        "`{key}` sorts the stretch edges into warp and weft by their UV direction, so it needs UVs: {why}"
    )]
    NeedsUvs {
        /// The key.
        key: &'static str,
        /// Why the cloth has none.
        why: String,
    },
    /// A key that needs another.
    #[error("`{key}` needs {needs}")]
    Needs {
        /// The key.
        key: &'static str,
        /// What else it needs.
        needs: &'static str,
    },
    /// An empty list where one element at least is needed.
    #[error("`{key}` is an empty list: give at least one")]
    EmptyList {
        /// The key.
        key: &'static str,
    },
    /// A problem on a line of an OBJ file (the error's position is in that file).
    #[error("{0}")]
    Obj(crate::obj::ObjProblem),
    /// A problem with an OBJ file as a whole (the error's position is the scene key naming it).
    #[error("{file}: {problem}")]
    ObjFile {
        /// The OBJ file.
        file: String,
        /// What is wrong.
        problem: crate::obj::ObjProblem,
    },
    /// A problem with a mesh collider's animation (a PC2 file, a frame of an OBJ sequence) as a
    /// whole (the error's position is the `animation` key).
    #[error("{file}: {problem}")]
    AnimationFile {
        /// The PC2 file, or the frame's OBJ file.
        file: String,
        /// What is wrong.
        problem: String,
    },
    /// Two colliders of one name.
    #[error("'{name}' is already the name of the collider on line {line}: collider names must be unique")]
    DuplicateCollider {
        /// The name.
        name: String,
        /// The line of the first collider's name (or table).
        line: usize,
    },
    /// A line of a pin file that is not a particle index (the error's position is in that file).
    #[error("{0}")]
    PinFileLine(String),
    /// A pin file that cannot be used (the error's position is the `pin_file` key).
    #[error("{file}: {problem}")]
    PinFile {
        /// The pin file.
        file: String,
        /// What is wrong.
        problem: String,
    },
    /// A box whose `min` is above its `max` along an axis.
    #[error("min {min:?} is above max {max:?} along {axis}: a box needs min ≤ max on every axis")]
    BoxInverted {
        /// `x`, `y` or `z`.
        axis: char,
        /// The low bound in m.
        min: f32,
        /// The high bound in m.
        max: f32,
    },
    /// A pin box that holds no particle.
    #[error(
        "the box from {min:?} to {max:?} holds no particle of the cloth, whose particles span {lo:?} to {hi:?} (m)"
    )]
    EmptyBox {
        /// The box's low corner in m.
        min: [f32; 3],
        /// The box's high corner in m.
        max: [f32; 3],
        /// The cloth's low corner in m.
        lo: [f32; 3],
        /// The cloth's high corner in m.
        hi: [f32; 3],
    },
    /// `wind` that is neither `[x, y, z]` nor a list of keys.
    #[error(
        "give a constant wind as [x, y, z] (m/s) or keys as [{{ time = 0.0, velocity = [x, y, z] }}, ...], not a mix"
    )]
    MixedWind,
    /// A constant wind without exactly three components.
    #[error("a constant wind has 3 components [x, y, z] (m/s), not {len}")]
    WindLength {
        /// The components given.
        len: usize,
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
    /// `[wedge]` is not a table.
    #[error(
        "`wedge` is a table of keys, each an array of values: [wedge] then \"cloth.NAME.KEY\" = [1.0, 2.0]"
    )]
    WedgeNotTable,
    /// A `[wedge]` table without keys.
    #[error(
        "the wedge names no key: give at least one, e.g. \"cloth.NAME.stretch_compliance\" = [1e-6, 1e-4]"
    )]
    WedgeEmpty,
    /// A wedge value that is not an array.
    #[error("a wedge key takes an array of the values to sweep, e.g. [1e-6, 1e-4]")]
    WedgeNotArray,
    /// A wedge key with an empty array.
    #[error("an empty array sweeps nothing: give at least one value")]
    WedgeEmptySweep,
    /// A wedge key that does not start with a table of the scene.
    #[error("`{key}` is not a scene key: a wedge key is simulation.KEY, cloth.NAME.KEY or collider.NAME.KEY")]
    WedgeTable {
        /// The wedge key.
        key: String,
    },
    /// A wedge key naming a cloth or collider the scene does not have.
    #[error("no {kind} is named '{name}' (the names: {names})")]
    WedgeNoName {
        /// `[[cloth]]` or `[[collider]]`.
        kind: &'static str,
        /// The name in the key.
        name: String,
        /// The names the scene has, comma-separated.
        names: String,
    },
    /// A wedge key going through a table the scene does not write inline.
    #[error("{place} has no inline table `{table}` for the key to go on into")]
    WedgeNoTable {
        /// The table: `[simulation]`, `cloth 'curtain'`.
        place: String,
        /// The part of the key.
        table: String,
    },
    /// A wedge key whose value is written as tables of its own (`[cloth.grid]`, `[[collider.keys]]`),
    /// or a key to add to a table with no plain key to place it after.
    #[error(
        "the wedge cannot set `{key}` here: it replaces values written on one line or inline (`key = value`, `key = {{ ... }}`); write `{key}` that way in the scene"
    )]
    WedgeNotInline {
        /// The key.
        key: String,
    },
    /// Two wedge keys that change the same text.
    #[error("the wedge key `{other}` changes the same value: give each value once")]
    WedgeOverlap {
        /// The other key.
        other: String,
    },
    /// A wedge of too many variants.
    #[error("the wedge makes more than {limit} variants")]
    WedgeTooLarge {
        /// The most variants.
        limit: usize,
    },
    /// A variant index out of range.
    #[error("variant {index} does not exist: the wedge has {count} variants, 0 to {}", count - 1)]
    WedgeIndex {
        /// The index asked for.
        index: usize,
        /// The variants of the wedge.
        count: usize,
    },
    /// A variant asked of a scene without `[wedge]`.
    #[error("variant {index} asked for, but the scene has no [wedge] table")]
    NoWedge {
        /// The index asked for.
        index: usize,
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
        "{}: the scene file is {len} bytes, more than the limit of {limit} bytes for a scene (raise it with --max-scene-bytes)",
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
        /// The rule (boxed: it is large, and errors travel in every `Result`).
        rule: Box<SceneRule>,
    },
}

impl SceneError {
    /// The model rule broken, if the error is one (`weft-core`'s [`Rule`], whether found by the
    /// model builder or by the scene reader with `weft-core`'s types).
    pub fn rule(&self) -> Option<&Rule> {
        match self {
            SceneError::Invalid { rule, .. } => match &**rule {
                SceneRule::Model(rule) => Some(rule),
                _ => None,
            },
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
