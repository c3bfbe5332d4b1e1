//! Resource limits, checked before anything of that size is allocated.
//!
//! A scene cannot make weft allocate without bound. Every limit here can be raised or lowered
//! from the command line (`weft bake` and `weft validate`: `--max-particles`, `--max-constraints`,
//! `--max-steps`, `--max-scene-bytes`, `--max-mesh-bytes`), and each is checked before anything of
//! its size is allocated:
//!
//! | limit | checked where |
//! |-------|---------------|
//! | [`Limits::max_scene_bytes`] | the scene file's length, before it is read |
//! | [`Limits::max_mesh_bytes`] | an OBJ file's length, before it is read |
//! | [`Limits::max_particles`] | a grid's resolution before its vertices are generated; an OBJ file's `v` count line by line as it is read; the particles of each cloth before its arrays are built |
//! | [`Limits::max_constraints`] | the triangles an OBJ file's faces make, line by line; every constraint kind of each cloth before its batches are built |
//! | [`Limits::max_steps`] | `frames × substeps`, when the settings are checked |
//!
//! Deeply nested TOML is refused by the parser's recursion limit; a face that repeats a vertex,
//! or a file of millions of objects, is checked in `n log n` time, never quadratic.

/// Upper bounds on what one model may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Particles in the whole model.
    pub max_particles: u64,
    /// Constraints of all kinds in the whole model.
    pub max_constraints: u64,
    /// `frames × substeps`: time steps in one bake.
    pub max_steps: u64,
    /// Bytes of a scene file.
    pub max_scene_bytes: u64,
    /// Bytes of one mesh (OBJ) file.
    pub max_mesh_bytes: u64,
}

impl Default for Limits {
    /// 16 M particles, 64 M constraints (about 6 GiB of model at most), 100 M time steps, a
    /// 256 MiB scene file, a 1 GiB mesh file.
    fn default() -> Self {
        Limits {
            max_particles: 1 << 24,
            max_constraints: 1 << 26,
            max_steps: 100_000_000,
            max_scene_bytes: 256 << 20,
            max_mesh_bytes: 1 << 30,
        }
    }
}

impl Limits {
    /// No limit at all (for tests and trusted input).
    pub const UNLIMITED: Limits = Limits {
        max_particles: u64::MAX,
        max_constraints: u64::MAX,
        max_steps: u64::MAX,
        max_scene_bytes: u64::MAX,
        max_mesh_bytes: u64::MAX,
    };
}

/// How to raise the limits, for error messages.
pub const RAISE_HINT: &str = "raise it with --max-particles / --max-constraints / --max-steps";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlimited_is_above_every_default() {
        let (d, u) = (Limits::default(), Limits::UNLIMITED);
        let pairs = [
            (d.max_particles, u.max_particles),
            (d.max_constraints, u.max_constraints),
            (d.max_steps, u.max_steps),
            (d.max_scene_bytes, u.max_scene_bytes),
            (d.max_mesh_bytes, u.max_mesh_bytes),
        ];
        assert!(pairs.iter().all(|&(d, u)| 0 < d && d < u));
    }
}
