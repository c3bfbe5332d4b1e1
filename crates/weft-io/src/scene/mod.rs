//! Scene files (TOML) into a [`ModelBuilder`].
//!
//! A scene is one `[simulation]` table and any number of `[[cloth]]` tables. Units are SI: metres,
//! kilograms, seconds. Every key is listed below; any other key is an error, as is a value of the
//! wrong type, a non-finite number (TOML allows `nan` and `inf`), or a number that does not fit its
//! type.
//!
//! ```toml
//! [simulation]
//! fps = 10.0
//! frames = 1
//! substeps = 1
//! iterations = 1
//! gravity = [0.0, 0.0, 0.0]
//!
//! [[cloth]]
//! name = "seed"
//! positions = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
//! particle_mass = 1.0
//! edges = [[0, 1]]
//! rest_lengths = [1.0]
//! stretch_compliance = 0.01
//! pins = [0]
//! ```
//!
//! A grid cloth (a flag hanging from the two top corners):
//!
//! ```toml
//! [[cloth]]
//! name = "flag"
//! grid = { resolution = [32, 24], size = [1.6, 1.2], origin = [0.0, 1.0, 0.0], plane = "xy" }
//! density = 0.2
//! stretch_compliance = 1e-6
//! shear_compliance = 1e-4
//! pin_corners = ["top-left", "top-right"]
//! ```
//!
//! # `[simulation]` (required)
//!
//! | key | type | unit | default | meaning |
//! |-----|------|------|---------|---------|
//! | `fps` | float | 1/s | required | frames per second of the cache (`> 0`) |
//! | `frames` | integer | — | required | frames to bake (`≥ 1`); the cache holds `frames + 1` samples, sample 0 being the initial state |
//! | `substeps` | integer | — | `4` | XPBD time steps per frame (`≥ 1`); `h = 1/(fps·substeps)` |
//! | `iterations` | integer | — | `8` | solver iterations per time step (`≥ 1`) |
//! | `gravity` | `[x, y, z]` floats | m/s² | `[0, -9.81, 0]` | gravitational acceleration |
//! | `velocity_damping` | float | 1/s | `0` | after each time step `v ← v·exp(−rate·h)` (`≥ 0`) |
//!
//! `frames × substeps` is bounded by [`Limits::max_steps`].
//!
//! # `[[cloth]]` (one table per cloth)
//!
//! | key | type | unit | default | meaning |
//! |-----|------|------|---------|---------|
//! | `name` | string | — | required | cache files are named after it: letters, digits, `-`, `_`, `.`, not starting with `.`; unique in the scene |
//! | `positions` | list of `[x, y, z]` | m | — | explicit particles (initial and rest shape); give this **or** `grid` |
//! | `grid` | table, see below | — | — | a generated rectangular cloth; give this **or** `positions` |
//! | `velocities` | list of `[x, y, z]` | m/s | at rest | initial velocity of each particle, one per particle |
//! | `particle_mass` | float | kg | `1` | mass of every particle (`> 0`); exclusive with `density` |
//! | `density` | float | kg/m² | — | areal density (`> 0`): each triangle's mass is split equally among its three corners; needs triangles, and every free particle must be in one |
//! | `triangles` | list of `[a, b, c]` | indices | none | triangles for `density` and for mesh caches; explicit cloths only (a grid makes its own) |
//! | `edges` | list of `[a, b]` | indices | none | stretch (distance) constraints; explicit cloths only (a grid uses its structural edges) |
//! | `rest_lengths` | list of floats | m | initial distances | rest length of each of `edges` (`> 0`), one per edge; explicit cloths only |
//! | `stretch_compliance` | float | m/N | `0` (rigid) | compliance `α ≥ 0` of the stretch constraints; exclusive with `stretch_stiffness` |
//! | `stretch_stiffness` | float | N/m | — | stiffness `k = 1/α > 0` of the stretch constraints |
//! | `stretch_damping` | float | N·s/m | `0` | XPBD constraint damping `β ≥ 0` of the stretch constraints |
//! | `shear` | bool | — | `true` | grid cloths only: `false` leaves out the grid's shear diagonals |
//! | `shear_edges` | list of `[a, b]` | indices | none | shear (distance) constraints, rest length = initial distance; explicit cloths only (a grid uses both diagonals of each cell) |
//! | `shear_compliance` | float | m/N | `0` (rigid) | like `stretch_compliance`, for the shear constraints |
//! | `shear_stiffness` | float | N/m | — | like `stretch_stiffness`, for the shear constraints |
//! | `shear_damping` | float | N·s/m | `0` | like `stretch_damping`, for the shear constraints |
//! | `pins` | list of integers | indices | none | pinned particles (inverse mass 0); repeats allowed; a grid's particle `(i, j)` is `j·nu + i` |
//! | `pin_corners` | list of strings | — | none | grid cloths only: pins corners by name, `"bottom-left"`, `"bottom-right"`, `"top-left"`, `"top-right"` |
//!
//! Indices are 0-based particle numbers within the cloth, whole numbers from 0 to 2³²−1. Each pair
//! of particles may be joined once across `edges` and `shear_edges`. A constraint whose particles
//! are all pinned is left out of the solve and counted.
//!
//! ## `grid`
//!
//! `grid = { resolution = [nu, nv], size = [width, height], origin = [x, y, z], plane = "xy" }`, or
//! the same keys in a `[cloth.grid]` table.
//!
//! | key | type | unit | default | meaning |
//! |-----|------|------|---------|---------|
//! | `resolution` | `[nu, nv]` integers | — | required | particles along `U` and along `V` (each `≥ 2`) |
//! | `size` | `[width, height]` floats | m | required | extent along `U` and `V` (each `> 0`) |
//! | `origin` | `[x, y, z]` floats | m | `[0, 0, 0]` | position of particle `(0, 0)` (the bottom-left corner) |
//! | `plane` | string | — | `"xy"` | `"xy"`: `U = +x`, `V = +y`; `"xz"`: `U = +x`, `V = +z`; `"yz"`: `U = +y`, `V = +z` |
//!
//! Particle `(i, j)` (column `i < nu`, row `j < nv`) has index `j·nu + i` and sits at
//! `origin + i·width/(nu−1)·U + j·height/(nv−1)·V`. The grid makes two triangles per cell, stretch
//! constraints along its rows and columns (resting at the grid spacing), and, unless
//! `shear = false`, shear constraints along both diagonals of each cell. Corners are named with
//! left/right = low/high `U` (`i = 0` / `i = nu−1`) and bottom/top = low/high `V` (`j = 0` /
//! `j = nv−1`): with `plane = "xy"` and y up, `"top-left"` and `"top-right"` hang a flag from its
//! upper edge.
//!
//! # Errors
//!
//! Every error is a [`SceneError`] whose `Display` is one line: the file, the line and column, the
//! place in the scene and the rule, e.g.
//! `scene.toml:14:9: cloth 'seed': edges[3]: [1, 1] joins particle 1 to itself: an edge needs two
//! different particles`. Rules of the model (indices in range, self edges, duplicates, lengths that
//! pair up, masses, counts, ...) are checked by `weft-core` when [`Scene::build_model`] runs, and
//! mapped back to the line of the offending key or list element; [`SceneError::rule`] gives the
//! underlying [`Rule`].

mod convert;
mod error;
mod raw;
mod spans;

use std::fs::File;
use std::io::Read;
use std::path::Path;

use weft_core::builder::ClothDesc;
use weft_core::error::BuildError;
use weft_core::limits::Limits;
use weft_core::{Model, ModelBuilder, Rule, SimSettings};

pub use error::{SceneError, SceneRule, SourcePos};

use spans::{Found, KeySpans, Source, one_line};

/// Largest scene file [`load_scene`] reads, in bytes (256 MiB). Checked before reading.
pub const MAX_SCENE_BYTES: u64 = 256 << 20;

/// A parsed scene: settings and cloth descriptions, not yet validated as a model.
///
/// It keeps the source text and the positions of every key and list element, so that the errors
/// of [`Scene::build_model`] point at lines.
#[derive(Debug)]
pub struct Scene {
    source: Source,
    limits: Limits,
    settings: SimSettings,
    simulation: KeySpans,
    cloths: Vec<ClothDesc>,
    cloth_spans: Vec<KeySpans>,
}

/// Reads and parses the scene file at `path`, refusing files over [`MAX_SCENE_BYTES`] before
/// reading them. Grids are generated here, checked against `limits` first.
pub fn load_scene(path: &Path, limits: &Limits) -> Result<Scene, SceneError> {
    load_scene_limited(path, limits, MAX_SCENE_BYTES)
}

/// [`load_scene`] with a byte limit of `max_bytes`.
fn load_scene_limited(path: &Path, limits: &Limits, max_bytes: u64) -> Result<Scene, SceneError> {
    let read_err = |source| SceneError::Read { path: path.to_path_buf(), source };
    let too_large = |len| SceneError::TooLarge { path: path.to_path_buf(), len, limit: max_bytes };
    let file = File::open(path).map_err(read_err)?;
    let len = file.metadata().map_err(read_err)?.len();
    if len > max_bytes {
        return Err(too_large(len));
    }
    // The length can change under us (or be 0 for a special file): never read past the limit.
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max_bytes + 1).read_to_end(&mut bytes).map_err(read_err)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64));
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(&e.as_bytes()[..valid]);
            let file = one_line(&path.display().to_string());
            return Err(SceneError::NotUtf8 { at: spans::position(&file, &lossy, valid) });
        }
    };
    parse_scene(&text, path, limits)
}

/// Parses scene text; `path` names the file in messages. Grids are generated here, checked against
/// `limits` first.
pub fn parse_scene(text: &str, path: &Path, limits: &Limits) -> Result<Scene, SceneError> {
    let source = Source::new(path, text);
    let raw: raw::RawScene = toml::from_str(text).map_err(|e| SceneError::Toml {
        at: source.pos(e.span().map_or(0, |s| s.start)),
        message: plain_toml_message(e.message()),
    })?;
    let converted = convert::convert(raw, &source, limits)?;
    Ok(Scene {
        source,
        limits: *limits,
        settings: converted.settings,
        simulation: converted.simulation,
        cloths: converted.cloths,
        cloth_spans: converted.cloth_spans,
    })
}

/// The TOML reader's message on one line, with serde's Rust type names in TOML's words.
fn plain_toml_message(message: &str) -> String {
    let mut message = one_line(message.trim());
    for (rust, toml) in [
        ("expected i64", "expected an integer"),
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected an array"),
        ("invalid type: map", "invalid type: table"),
        ("invalid type: sequence", "invalid type: array"),
    ] {
        message = message.replace(rust, toml);
    }
    message
}

impl Scene {
    /// The simulation settings (not yet validated: [`Scene::build_model`] does that).
    pub fn settings(&self) -> &SimSettings {
        &self.settings
    }

    /// The resource limits the scene was read with and the model will be built with.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The file the scene came from.
    pub fn path(&self) -> &Path {
        self.source.path()
    }

    /// The scene's text.
    pub fn text(&self) -> &str {
        self.source.text()
    }

    /// The cloths in file order, as `weft-core` descriptions (grids already generated).
    pub fn cloths(&self) -> &[ClothDesc] {
        &self.cloths
    }

    /// The cloth names in file order.
    pub fn cloth_names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.cloths.iter().map(|c| c.name.as_str())
    }

    /// Validates the scene with `weft-core`'s [`ModelBuilder`] and builds the model. A
    /// [`BuildError`] comes back as a [`SceneError`] at the line of the key or list element it
    /// names.
    pub fn build_model(&self) -> Result<Model, SceneError> {
        let map = |e| self.map_build_error(e);
        let mut builder = ModelBuilder::new(self.settings.clone(), self.limits).map_err(map)?;
        for cloth in &self.cloths {
            builder.add_cloth(cloth).map_err(map)?;
        }
        builder.build().map_err(map)
    }

    /// Turns `weft-core`'s "cloth #0, edges[3]" into `file:line:column` and a place.
    fn map_build_error(&self, error: BuildError) -> SceneError {
        let BuildError { location, rule } = error;
        let index = location.index.map(|i| format!("[{i}]")).unwrap_or_default();
        let (at, place) = match (&location.cloth, location.field) {
            (Some(cloth), field) => {
                let spans = self.cloth_spans.get(cloth.ordinal);
                let (at, found) = spans.map_or((0, Found::Table), |s| s.locate(field, location.index));
                let shown = match found {
                    Found::Key | Found::Table => format!("{field}{index}"),
                    Found::Alias(alias) => format!("{alias} (as {field}){index}"),
                    Found::Grid => format!("{field}{index} (generated by the grid)"),
                };
                (at, format!("cloth '{}': {shown}", one_line(&cloth.name)))
            }
            (None, "cloth") => (0, "scene".to_string()),
            (None, field) => (self.simulation.locate(field, None).0, format!("simulation.{field}{index}")),
        };
        let rule = match rule {
            Rule::BadName { name } => Rule::BadName { name: one_line(&name) },
            other => other,
        };
        SceneError::Invalid { at: self.source.pos(at), place, rule: SceneRule::Model(rule) }
    }
}

#[cfg(test)]
mod tests;
