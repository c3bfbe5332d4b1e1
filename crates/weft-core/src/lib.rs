//! # weft-core — the cloth model
//!
//! Structure-of-arrays state and validated constraint sets for weft's XPBD cloth solver. This crate
//! holds data and its rules; the solvers live in `weft-kernels` (SIMD, parallel) and
//! `weft-reference` (scalar, plain).
//!
//! * [`units`]: [`Compliance`](units::Compliance) and [`Stiffness`](units::Stiffness) as distinct
//!   types with units.
//! * [`particles`]: positions, previous positions, velocities and inverse masses as arrays.
//! * [`kinds`]: the registry of constraint kinds, and the batched kinds themselves —
//!   [`kinds::distance`] (stretch, shear), [`kinds::bending`] (dihedral angles),
//!   [`kinds::tether`] (long-range attachments), [`kinds::seam`] (particles sewn together) — each
//!   with its rules and its projection written once for SIMD lanes and one constraint
//!   ([`lanes::Real`]).
//! * [`batches`]: constraints of one kind packed in SIMD batches by a plan, with `λ`.
//! * [`volume`]: pressure of closed cloths; [`aero`]: drag and lift in the wind.
//! * [`colouring`]: deterministic greedy colouring and SIMD batch packing, with its invariant.
//! * [`cloth`]: [`ClothDesc`], a cloth as a scene describes it;
//! * [`builder`]: [`ModelBuilder`] checks every rule of the bad-input policy and returns
//!   [`BuildError`]s naming the cloth, field and index.
//! * [`grid`], [`topology`]: grid generation and edges from triangles.
//! * [`binding`]: a render mesh bound to the simulated proxy; [`normals`]: smooth vertex normals.
//! * [`digest`]: a model's exact bits fed to a hash, for a bake's fingerprint.
//! * [`polygons`]: the faces as given (triangles, quads, n-gons, with UVs), for the caches.
//! * [`moving`]: colliders moved between frames from outside the scene.
//! * [`self_collision`]: particle self-collision; [`surface_collision`]: thin layers, vertex
//!   against triangle and edge against edge.
//!
//! The geometry under the rules (the spatial grid, the BVH of mesh colliders, closest points,
//! the intersecting-pair and stretch measures) is `weft-geometry`'s.
//!
//! Units are SI throughout: m, kg, s; inverse masses in 1/kg, `0` meaning pinned.

pub mod aero;
pub mod batches;
pub mod binding;
pub mod builder;
pub mod cloth;
pub mod collider;
pub mod colouring;
pub mod digest;
pub mod error;
pub mod follow;
pub mod grid;
pub mod kinds;
pub mod lanes;
pub mod limits;
pub mod mesh;
pub mod mesh_collider;
pub mod model;
pub mod moving;
pub mod normals;
pub mod particles;
pub mod polygons;
pub mod self_collision;
pub mod settings;
pub mod shapes;
pub mod surface_collision;
pub mod topology;
pub mod units;
pub mod volume;

pub use builder::ModelBuilder;
pub use cloth::{ClothDesc, EdgeSet, MassSpec, NonManifold};
pub use error::{BuildError, Rule};
pub use model::Model;
pub use settings::{SimSettings, StrainTolerance, TimeStep};
