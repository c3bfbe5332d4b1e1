//! # weft-geometry — spatial searches and geometric tests
//!
//! The geometry under weft's model and solvers, knowing nothing of cloth: `weft-core` and the
//! solvers build on it, never the reverse.
//!
//! * [`aabb`]: [`Aabb`], an axis-aligned box.
//! * [`grid`]: [`Grid`], the one uniform grid of every broad phase (hashed, counting-sorted,
//!   answers in a fixed order).
//! * [`bvh`]: [`BoxTree`](bvh::BoxTree), a BVH over boxes that move (a mesh collider's
//!   triangles), refit rather than rebuilt.
//! * [`proximity`]: closest points of triangles and segments, and whether two moving features
//!   may touch.
//! * [`nearest`]: the triangle of a mesh nearest to a point within a reach.
//! * [`intersections`]: the exact triangle–triangle test and the count of intersecting triangle
//!   pairs (the triangles sorted by cell, one record each); [`outline`]: the certificate that a
//!   cloth lies unfolded, so that the count is 0 without a search; [`stretch`]: the largest
//!   stretch of a set of edges.
//!
//! Units are SI: positions in m.

pub mod aabb;
mod box_lanes;
pub mod bvh;
pub mod grid;
pub mod intersections;
pub mod nearest;
pub mod outline;
pub mod proximity;
pub mod stretch;

pub use aabb::Aabb;
pub use grid::Grid;
