//! Resource limits, checked before anything of that size is allocated.
//!
//! A scene cannot make weft allocate without bound: particle and constraint counts are checked
//! against these limits (overridable from the command line) when a cloth is added, before its
//! arrays are built, and a grid's resolution is checked before its vertices are generated.

/// Upper bounds on what one model may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Particles in the whole model.
    pub max_particles: u64,
    /// Constraints of all kinds in the whole model.
    pub max_constraints: u64,
    /// `frames × substeps`: time steps in one bake.
    pub max_steps: u64,
}

impl Default for Limits {
    /// 16 M particles, 64 M constraints (about 6 GiB of model at most), 100 M time steps.
    fn default() -> Self {
        Limits { max_particles: 1 << 24, max_constraints: 1 << 26, max_steps: 100_000_000 }
    }
}

impl Limits {
    /// No limit at all (for tests and trusted input).
    pub const UNLIMITED: Limits =
        Limits { max_particles: u64::MAX, max_constraints: u64::MAX, max_steps: u64::MAX };
}

/// How to raise the limits, for error messages.
pub const RAISE_HINT: &str = "raise it with --max-particles / --max-constraints / --max-steps";
