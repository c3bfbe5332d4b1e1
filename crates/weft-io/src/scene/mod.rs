//! Scene files (TOML) into a [`ModelBuilder`].
//!
//! A scene is one `[simulation]` table, any number of `[[cloth]]` tables and any number of
//! `[[collider]]` tables (planes, spheres, capsules, boxes and triangle meshes, static or
//! animated: see `scene/collider.rs`). Units are SI: metres, kilograms, seconds. Every key is
//! listed below; any other key is an error, as is a value of the wrong type, a non-finite number
//! (TOML allows `nan` and `inf`), or a number that does not fit its type.
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
//! A mesh cloth (a shirt from an OBJ file, hung by its shoulders, with bending and tethers):
//!
//! ```toml
//! [[cloth]]
//! name = "shirt"
//! mesh = "shirt.obj"               # relative to this scene file's folder
//! object = "tshirt"                # needed only if the file has several objects
//! density = 0.15
//! stretch_compliance = 1e-6
//! warp_compliance = 5e-7           # the stretch edges along U (needs UVs)
//! shear_compliance = 1e-4
//! bending_compliance = 5.0
//! tether_scale = 1.05
//! pin_box = { min = [-1.0, 1.6, -0.2], max = [1.0, 1.8, 0.2] }
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
//! | `wind` | `[x, y, z]` floats, or a list of `{ time, velocity }` | m/s (time in s) | still air | the air's velocity: constant, or keys `[{ time = 0.0, velocity = [x, y, z] }, ...]` at increasing times (`≥ 0`), interpolated linearly and held before the first and after the last; it acts on cloths with `drag` or `lift` |
//! | `air_density` | float | kg/m³ | `1.2` | density of the air for `drag` and `lift` (`≥ 0`) |
//!
//! `frames × substeps` is bounded by [`Limits::max_steps`].
//!
//! # `[[cloth]]` (one table per cloth)
//!
//! | key | type | unit | default | meaning |
//! |-----|------|------|---------|---------|
//! | `name` | string | — | required | cache files are named after it: letters, digits, `-`, `_`, `.`, not starting with `.`; unique in the scene |
//! | `positions` | list of `[x, y, z]` | m | — | explicit particles (initial and rest shape); give this, `grid` **or** `mesh` |
//! | `grid` | table, see below | — | — | a generated rectangular cloth; give this, `positions` **or** `mesh` |
//! | `mesh` | string | path | — | a Wavefront OBJ file (relative to the scene file's folder), see below; give this, `positions` **or** `grid` |
//! | `object` | string, or list of strings | — | the file's only object | mesh cloths only: the OBJ object(s) (`o`/`g` names) that make the cloth; several are merged, sharing their common vertices |
//! | `non_manifold` | `"error"` or `"skip"` | — | `"error"` | an edge shared by more than two triangles is an error naming its vertices and triangles, or (`"skip"`) is kept as a stretch edge but left out of bending and shear |
//! | `velocities` | list of `[x, y, z]` | m/s | at rest | initial velocity of each particle, one per particle |
//! | `particle_mass` | float | kg | `1` | mass of every particle (`> 0`); exclusive with `density` |
//! | `density` | float | kg/m² | — | areal density (`> 0`): each triangle's mass is split equally among its three corners; needs triangles, and every free particle must be in one |
//! | `triangles` | list of `[a, b, c]` | indices | none | triangles for `density`, bending, drag and lift and for mesh caches; explicit cloths only (a grid or a mesh makes its own) |
//! | `edges` | list of `[a, b]` | indices | none | stretch (distance) constraints; explicit cloths only (a grid or a mesh derives its own) |
//! | `rest_lengths` | list of floats | m | initial distances | rest length of each of `edges` (`> 0`), one per edge; explicit cloths only |
//! | `stretch_compliance` | float | m/N | `0` (rigid) | compliance `α ≥ 0` of the stretch constraints; exclusive with `stretch_stiffness` |
//! | `stretch_stiffness` | float | N/m | — | stiffness `k = 1/α > 0` of the stretch constraints |
//! | `stretch_damping` | float | N·s/m | `0` | XPBD constraint damping `β ≥ 0` of the stretch constraints (warp and weft included) |
//! | `warp_compliance` | float | m/N | `stretch_*` | grid and mesh cloths: compliance of the stretch edges along `U` (the warp, see *Warp and weft*); exclusive with `warp_stiffness` |
//! | `warp_stiffness` | float | N/m | — | stiffness `k = 1/α > 0` of the warp edges |
//! | `weft_compliance` | float | m/N | `stretch_*` | grid and mesh cloths: compliance of the stretch edges along `V` (the weft); exclusive with `weft_stiffness` |
//! | `weft_stiffness` | float | N/m | — | stiffness `k = 1/α > 0` of the weft edges |
//! | `shear` | bool | — | `true` | grid and mesh cloths: `false` leaves out the generated shear edges |
//! | `shear_edges` | list of `[a, b]` | indices | none | shear (distance) constraints, rest length = initial distance; explicit cloths only (a grid uses both diagonals of each cell, a mesh see below) |
//! | `shear_compliance` | float | m/N | `0` (rigid) | like `stretch_compliance`, for the shear constraints |
//! | `shear_stiffness` | float | N/m | — | like `stretch_stiffness`, for the shear constraints |
//! | `shear_damping` | float | N·s/m | `0` | like `stretch_damping`, for the shear constraints |
//! | `pins` | list of integers | indices | none | pinned particles (inverse mass 0); repeats allowed; a grid's particle `(i, j)` is `j·nu + i` |
//! | `pin_corners` | list of strings | — | none | grid cloths only: pins corners by name, `"bottom-left"`, `"bottom-right"`, `"top-left"`, `"top-right"` |
//! | `pin_box` | `{ min = [x, y, z], max = [x, y, z] }`, or a list of them | m | none | pins every particle inside the axis-aligned box (bounds included) in the initial positions; a box that holds no particle is an error |
//! | `pin_file` | string | path | none | pins the particles listed in a text file (relative to the scene file's folder): one index per line, `#` comments, same numbering as `pins` |
//! | `bending_compliance` | float | rad²/(N·m) | — | turns on bending (dihedral angle of the two triangles of each interior edge, resting at the input mesh's angle): its compliance `α ≥ 0`; exclusive with `bending_stiffness` |
//! | `bending_stiffness` | float | N·m/rad² | — | bending stiffness `k = 1/α > 0` |
//! | `bending_damping` | float | N·m·s/rad² | `0` | XPBD damping `β ≥ 0` of bending; needs `bending_compliance` or `bending_stiffness` |
//! | `tether_scale` | float | — | `1` | turns on tethers (every free particle to its nearest pin by geodesic rest distance, unilateral): the allowed distance as a multiple of that rest distance (`≥ 1`); needs pins |
//! | `tether_compliance` | float | m/N | `0` (rigid) | turns on tethers: their compliance `α ≥ 0`; exclusive with `tether_stiffness` |
//! | `tether_stiffness` | float | N/m | — | tether stiffness `k = 1/α > 0` |
//! | `pressure` | float | — | `1` | turns on the volume constraint of a closed cloth: target volume as a multiple of the rest volume (`> 0`); needs a closed, consistently oriented surface |
//! | `volume_compliance` | float | m⁵/N | `0` (rigid) | turns on the volume constraint: its compliance `α ≥ 0`; exclusive with `volume_stiffness` |
//! | `volume_stiffness` | float | N/m⁵ | — | volume stiffness `k = 1/α > 0` |
//! | `drag` | float | — | `0` | turns on aerodynamics: drag coefficient (`≥ 0`) of each triangle in the relative wind; needs triangles |
//! | `lift` | float | — | `0` | turns on aerodynamics: lift coefficient (`≥ 0`) |
//! | `follow` | string, or a list of `{ time, position, rotation }` | —, or s, m, — | pins stay put | the pins follow animation: the name of a `[[collider]]` (analytic: carried by its keys; mesh: each pin attached to its nearest triangle at time 0), or keys of a rigid path (as a collider's `keys`; `position` defaults to `[0, 0, 0]`, `rotation` to `[0, 0, 0, 1]`), each pin keeping its place relative to the path at time 0; needs pins |
//!
//! Indices are 0-based particle numbers within the cloth, whole numbers from 0 to 2³²−1. Each pair
//! of particles may be joined once across `edges` and `shear_edges`. A constraint whose particles
//! are all pinned is left out of the solve and counted. Pins from `pins`, `pin_corners`,
//! `pin_box` and `pin_file` add up (repeats allowed).
//!
//! A constraint kind beyond distance (bending, tethers, volume, aerodynamics) is on as soon as one
//! of its keys is given; its other keys take their defaults. Bending works on the triangles of
//! any cloth (a grid's, a mesh's, or an explicit cloth's `triangles`).
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
//! `shear = false`, shear constraints along both diagonals of each cell. Its UVs, carried into the
//! caches, are `(i/(nu−1), j/(nv−1))`. Corners are named with
//! left/right = low/high `U` (`i = 0` / `i = nu−1`) and bottom/top = low/high `V` (`j = 0` /
//! `j = nv−1`): with `plane = "xy"` and y up, `"top-left"` and `"top-right"` hang a flag from its
//! upper edge.
//!
//! ## `mesh`
//!
//! `mesh = "shirt.obj"` reads a Wavefront OBJ file with [`crate::obj`] (which documents the format
//! in full). In short: triangles, quads and larger polygons; `vt` texture coordinates kept per
//! triangle corner for the caches (USD `primvars:st`, OBJ `vt`), never splitting a particle at a
//! UV seam; `o` and `g` both name objects, chosen with `object`. The particles are the vertices the
//! chosen faces use, in file order: for a file with one object using all its vertices, particle
//! `k` is OBJ vertex `k + 1`. A quad is cut into two triangles along its shorter diagonal, an n-gon
//! into a fan from its first corner.
//!
//! The cloth's stretch edges are every edge of its faces (a quad's four sides, a triangle's three
//! edges, an n-gon's sides and fan edges); its shear edges are both diagonals of every quad and,
//! for two triangles (not from quads) sharing an edge, the pair of vertices opposite that edge
//! (see [`weft_core::mesh`]). Rest lengths are the initial distances. An error in the OBJ file, or
//! a model rule broken by one of its faces or vertices, names the OBJ file and line.
//!
//! ## Warp and weft
//!
//! Woven cloth is stiffer along its threads. With `warp_*` or `weft_*` given, each stretch edge is
//! sorted by the direction of its UV segment: within 22.5° of `U` it is warp and takes
//! `warp_compliance` (or `warp_stiffness`), within 22.5° of `V` it is weft and takes `weft_*`, and
//! otherwise (bias, around 45°) it keeps `stretch_*`; a thread without its own material keeps
//! `stretch_*` too. A grid's rows are warp and its columns weft (its UVs are
//! `(i/(nu−1), j/(nv−1))`). A mesh needs `vt` on every face; an explicit cloth has no UVs.
//!
//! ## Pins
//!
//! OBJ has no vertex groups (its `g` statements group faces), so a named set of vertices comes as
//! a `pin_file` (exported from the modelling tool) or as a `pin_box` around them.
//!
//! # Errors
//!
//! Every error is a [`SceneError`] whose `Display` is one line: the file, the line and column, the
//! place in the scene and the rule, e.g.
//! `scene.toml:14:9: cloth 'seed': edges[3]: [1, 1] joins particle 1 to itself: an edge needs two
//! different particles`. Rules of the model (indices in range, self edges, duplicates, lengths that
//! pair up, masses, counts, ...) are checked by `weft-core` when [`Scene::build_model`] runs, and
//! mapped back to the line of the offending key or list element — or, for a mesh cloth's
//! particles, triangles and edges and for pins from a `pin_file`, to the line of that file
//! (`shirt.obj:120:1: cloth 'shirt': triangles[37] (from this face): edge [3, 4] is shared by 3
//! triangles ...`); [`SceneError::rule`] gives the underlying [`Rule`].

mod collider;
mod convert;
mod error;
mod mesh_collider;
mod raw;
mod sources;
mod spans;

use std::fs::File;
use std::io::Read;
use std::path::Path;

use weft_core::builder::ClothDesc;
use weft_core::collider::ColliderDesc;
use weft_core::error::BuildError;
use weft_core::limits::Limits;
use weft_core::mesh_collider::MeshColliderDesc;
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
    cloth_sources: Vec<sources::ClothSource>,
    colliders: Vec<ColliderDesc>,
    mesh_colliders: Vec<MeshColliderDesc>,
    /// Where each analytic collider's table is, and how messages name it.
    collider_places: Vec<(usize, String)>,
    /// Where each mesh collider's `mesh` key is, and how messages name it.
    mesh_collider_places: Vec<(usize, String)>,
}

/// Reads and parses the scene file at `path`, refusing files over
/// [`Limits::max_scene_bytes`] (by default [`MAX_SCENE_BYTES`]) before reading them. Grids are
/// generated here, checked against `limits` first.
pub fn load_scene(path: &Path, limits: &Limits) -> Result<Scene, SceneError> {
    load_scene_limited(path, limits, limits.max_scene_bytes)
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
        let map = |e| self.map_build_error(e);
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
