//! # weft-io — weft's files
//!
//! Everything weft reads and writes, with one bad-input policy: a user's mistake is an
//! `Err` whose one-line message names the file, the line and the rule, never a panic.
//!
//! * [`scene`]: scene files (TOML) into a [`weft_core::ModelBuilder`] (the keys are documented in
//!   the repository's `docs/scene.md`). [`load_scene`] / [`parse_scene`] give a [`Scene`];
//!   [`Scene::build_model`] gives a [`weft_core::Model`]; errors are [`SceneError`]s pointing at
//!   `file:line:column`. [`scene::wedge`]: a scene's `[wedge]` table, a sweep of its keys
//!   into named variants ([`wedge_variants`], [`load_scene_variant`]).
//! * [`obj`]: Wavefront OBJ meshes for cloths ([`read_obj`]): polygons triangulated with their quad
//!   pairs kept, the faces as given, UVs per corner, and the file line behind every particle and
//!   triangle.
//! * [`cache`]: the [`CacheWriter`] trait, the [`CacheFormat`]s and [`create_cache`].
//! * [`pc2`]: PC2 point caches (writer and a hardened reader, [`read_pc2`] / [`parse_pc2`]).
//! * [`usd`]: ASCII USD (`.usda`) meshes with time-sampled points and normals.
//! * [`obj_sequence`]: one Wavefront OBJ file per sample, with normals.
//! * [`checkpoint`]: a bake's checkpoint file.
//! * [`bounded`]: the one bounded read behind every file read above
//!   ([`bounded::read_bounded`]): a file over its byte limit is refused, before reading and while
//!   reading.
//! * [`StagedFile`]: the one-file form of the staged writing below (`stats.csv`, checkpoints,
//!   `summary.toml`).
//!
//! Every cache is written under a temporary name (`NAME.pc2.partial`, ...) and renamed to its final
//! name only when every declared sample is written: a bake that fails, is killed, or drops its
//! writer leaves no cache that looks complete.

pub mod bounded;
pub mod cache;
pub mod checkpoint;
pub mod obj;
pub mod obj_sequence;
pub mod pc2;
pub mod scene;
mod staged;
pub mod usd;

pub use cache::{CacheFormat, CacheMark, CacheSpec, CacheWriter, UnknownFormat, create_cache, resume_cache};
pub use obj::{ObjError, ObjMesh, ObjProblem, ObjectSelection, parse_obj, read_obj};
pub use pc2::{Pc2, Pc2Error, parse_pc2, read_pc2};
pub use scene::{
    MAX_SCENE_BYTES, Scene, SceneError, SceneRule, SourcePos, Variant, Wedge, load_scene, load_scene_variant,
    parse_scene, parse_scene_variant, wedge_variants,
};
pub use staged::{StagedFile, WRITE_BUFFER};
