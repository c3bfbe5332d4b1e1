//! Scene files (TOML) into a [`ModelBuilder`].
//!
//! A scene is one `[simulation]` table, any number of `[[cloth]]` tables and any number of
//! `[[collider]]` tables, and may sweep its keys into variants with a `[wedge]` table ([`wedge`]:
//! [`load_scene_variant`] reads one variant; [`load_scene`] ignores the table). Every key, with its type, unit, default and rule, is documented once, in
//! the repository's `docs/scene.md`; `tests/scene_reference.rs` of this crate fails when that page
//! and the types here disagree.
//!
//! [`load_scene`] / [`parse_scene`] read a file or text into a [`Scene`] (the format's own rules:
//! types, finite numbers, exclusive keys, the files a scene names); [`Scene::build_model`]
//! validates it with `weft-core` into a [`Model`]. Every error is a [`SceneError`] whose `Display`
//! is one line: the file, the line and column, the place in the scene and the rule. A rule of the
//! model is mapped back to the line of the key or list element it concerns, or, for a mesh cloth's
//! particles, triangles and edges and for pins from a `pin_file`, to the line of that file;
//! [`SceneError::rule`] gives the underlying [`Rule`].

mod collider;
mod convert;
mod error;
mod mesh_collider;
mod raw;
mod sources;
mod spans;
mod suggest;
pub mod wedge;

use std::io;
use std::path::Path;

use weft_core::builder::ClothDesc;
use weft_core::collider::ColliderDesc;
use weft_core::error::BuildError;
use weft_core::limits::Limits;
use weft_core::mesh_collider::MeshColliderDesc;
use weft_core::{Model, ModelBuilder, Rule, SimSettings};

pub use error::{SceneError, SceneRule, SourcePos};
pub use wedge::{Variant, Wedge, load_scene_variant, parse_scene_variant, wedge_variants};

use crate::bounded::{Accept, ReadProblem, read_bounded};
use spans::{Found, KeySpans, Source, one_line};

/// Largest scene file [`load_scene`] reads, in bytes (256 MiB). Checked before and while reading
/// ([`crate::bounded`]).
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
    cloth_sources: Vec<sources::ClothSource>,
    colliders: Vec<ColliderDesc>,
    mesh_colliders: Vec<MeshColliderDesc>,
    /// Where each analytic collider's table is, and how messages name it.
    collider_places: Vec<(usize, String)>,
    /// Where each mesh collider's `mesh` key is, and how messages name it.
    mesh_collider_places: Vec<(usize, String)>,
    /// For a wedge variant: which, and how its text maps back to the file.
    variant: Option<Box<wedge::Applied>>,
}

/// Reads and parses the scene file at `path`, refusing files over
/// [`Limits::max_scene_bytes`] (by default [`MAX_SCENE_BYTES`]; see [`crate::bounded`]). Grids
/// are generated here, checked against `limits` first.
pub fn load_scene(path: &Path, limits: &Limits) -> Result<Scene, SceneError> {
    load_scene_limited(path, limits, limits.max_scene_bytes)
}

/// [`load_scene`] with a byte limit of `max_bytes`.
fn load_scene_limited(path: &Path, limits: &Limits, max_bytes: u64) -> Result<Scene, SceneError> {
    parse_scene(&read_scene_text(path, max_bytes)?, path, limits)
}

/// The text of the scene file at `path`, refusing files over `max_bytes` (see
/// [`read_bounded`]; a scene may come from a pipe).
fn read_scene_text(path: &Path, max_bytes: u64) -> Result<String, SceneError> {
    let bytes = read_bounded(path, max_bytes, Accept::AnyFile).map_err(|e| match e.problem {
        ReadProblem::TooLarge { len, limit } => SceneError::TooLarge { path: e.path, len, limit },
        ReadProblem::Io(source) => SceneError::Read { path: e.path, source },
        // Not with `Accept::AnyFile`; named as the operating system would name it.
        ReadProblem::NotAFile => {
            SceneError::Read { path: e.path, source: io::Error::other("not a regular file") }
        }
    })?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(&e.as_bytes()[..valid]);
            let file = one_line(&path.display().to_string());
            return Err(SceneError::NotUtf8 { at: spans::position(&file, &lossy, valid) });
        }
    };
    Ok(text)
}

/// Parses scene text; `path` names the file in messages, and the files the scene names (`mesh`,
/// `pin_file`) are read relative to its folder. Grids are generated here, checked against
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
        cloth_sources: converted.cloth_sources,
        colliders: converted.colliders.analytic,
        mesh_colliders: converted.colliders.meshes,
        collider_places: converted.colliders.analytic_places,
        mesh_collider_places: converted.colliders.mesh_places,
        variant: None,
    })
}

/// The TOML reader's message on one line, with serde's Rust type names in TOML's words, and the
/// nearest name after a misspelt key or variant (see [`suggest`]).
pub(super) fn plain_toml_message(message: &str) -> String {
    let mut message = suggest::with_suggestion(&one_line(message.trim()));
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

    /// The scene's text (a wedge variant's: the file's with the variant's values).
    pub fn text(&self) -> &str {
        self.source.text()
    }

    /// The wedge variant this scene is ([`load_scene_variant`]), or `None` for a scene as written.
    pub fn variant(&self) -> Option<&Variant> {
        self.variant.as_ref().map(|a| &a.variant)
    }

    /// The same scene read again under `limits` (a wedge variant stays that variant).
    pub fn with_limits(&self, limits: &Limits) -> Result<Scene, SceneError> {
        let mut scene = parse_scene(self.text(), self.path(), limits).map_err(|e| self.relocate(e))?;
        scene.variant.clone_from(&self.variant);
        Ok(scene)
    }

    /// An error found in this scene's text as an error of its file (see [`wedge`]).
    fn relocate(&self, error: SceneError) -> SceneError {
        match &self.variant {
            Some(applied) => applied.relocate(error, self.text()),
            None => error,
        }
    }

    /// The cloths in file order, as `weft-core` descriptions (grids already generated).
    pub fn cloths(&self) -> &[ClothDesc] {
        &self.cloths
    }

    /// The analytic colliders (plane, sphere, capsule, box) in file order (already checked
    /// against every collider rule).
    pub fn colliders(&self) -> &[ColliderDesc] {
        &self.colliders
    }

    /// The mesh colliders (`shape = "mesh"`) in file order, their files read (already checked
    /// against every mesh collider rule).
    pub fn mesh_colliders(&self) -> &[MeshColliderDesc] {
        &self.mesh_colliders
    }

    /// The cloth names in file order.
    pub fn cloth_names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.cloths.iter().map(|c| c.name.as_str())
    }

    /// Validates the scene with `weft-core`'s [`ModelBuilder`] and builds the model. A
    /// [`BuildError`] comes back as a [`SceneError`] at the line of the key or list element it
    /// names.
    pub fn build_model(&self) -> Result<Model, SceneError> {
        let map = |e| self.relocate(self.map_build_error(e));
        let mut builder = ModelBuilder::new(self.settings.clone(), self.limits).map_err(map)?;
        for cloth in &self.cloths {
            builder.add_cloth(cloth).map_err(map)?;
        }
        for collider in &self.colliders {
            builder.add_collider(collider).map_err(map)?;
        }
        for mesh in &self.mesh_colliders {
            builder.add_mesh_collider(mesh).map_err(map)?;
        }
        builder.build().map_err(map)
    }

    /// Turns `weft-core`'s "cloth #0, edges[3]" into `file:line:column` and a place.
    fn map_build_error(&self, error: BuildError) -> SceneError {
        let BuildError { location, rule } = error;
        let index = location.index.map(|i| format!("[{i}]")).unwrap_or_default();
        let (at, place) = match (&location.cloth, location.field) {
            (Some(cloth), field) => {
                let outside =
                    self.cloth_sources.get(cloth.ordinal).and_then(|s| s.locate(field, location.index));
                let name = one_line(&cloth.name);
                if let Some(o) = outside {
                    let at = SourcePos { file: o.file, line: o.line as usize, column: 1 };
                    let rule = Box::new(SceneRule::Model(plain_rule(rule)));
                    return SceneError::Invalid { at, place: format!("cloth '{name}': {}", o.shown), rule };
                }
                let spans = self.cloth_spans.get(cloth.ordinal);
                let (at, found) = spans.map_or((0, Found::Table), |s| s.locate(field, location.index));
                let shown = match found {
                    Found::Key | Found::Table => format!("{field}{index}"),
                    Found::Alias(alias) => format!("{alias} (as {field}){index}"),
                    Found::Grid => format!("{field}{index} (generated by the grid)"),
                    Found::Mesh => format!("{field}{index} (from the mesh)"),
                };
                (at, format!("cloth '{name}': {shown}"))
            }
            (None, "cloth") => (0, "scene".to_string()),
            (None, field @ ("collider" | "mesh_collider")) => {
                let places =
                    if field == "collider" { &self.collider_places } else { &self.mesh_collider_places };
                match location.index.and_then(|i| places.get(i)) {
                    Some((at, shown)) => (*at, shown.clone()),
                    None => (0, format!("{field}{index}")),
                }
            }
            (None, field) => {
                (self.simulation.locate(field, location.index).0, format!("simulation.{field}{index}"))
            }
        };
        SceneError::Invalid {
            at: self.source.pos(at),
            place,
            rule: Box::new(SceneRule::Model(plain_rule(rule))),
        }
    }
}

/// A model rule with any name in it escaped to one line.
fn plain_rule(rule: Rule) -> Rule {
    match rule {
        Rule::BadName { name } => Rule::BadName { name: one_line(&name) },
        other => other,
    }
}

#[cfg(test)]
mod tests;
