//! The scenes the benchmarks measure: hanging grid cloths built in code (the pile is
//! [`crate::pile`]), and the folding sheet of the examples ([`FOLD_SCENE`]).

use weft_core::grid::{GridDesc, GridPlane};
use weft_core::kinds::bending::BendingDesc;
use weft_core::kinds::tether::TetherDesc;
use weft_core::limits::Limits;
use weft_core::units::{Compliance, Elasticity};
use weft_core::{EdgeSet, MassSpec, Model, ModelBuilder, SimSettings};

/// The folding sheet of `examples/fold.toml` (a sheet whose edge is carried over it and laid on
/// top), byte for byte: the scene of the table's surface self-collision rows. The text lives in
/// this crate (`scenes/fold.toml`) so that the crate builds on its own, packaged; the root
/// package's `tests/suite/bench_scenes.rs` checks that it is still the example.
pub const FOLD_SCENE: &str = include_str!("../scenes/fold.toml");

/// Substeps (time steps) per frame of the frame-time scenes.
pub const SUBSTEPS: u32 = 4;
/// Solver iterations per time step of the frame-time scenes.
pub const ITERATIONS: u32 = 8;

/// A square grid cloth of `n × n` particles, 1 m × 1 m, hanging in the xy plane from its two top
/// corners, with stiff stretch (compliance 1e-8 m/N) and softer shear (1e-6 m/N), 0.2 kg/m²: the
/// standard bench cloth. One frame at 60 fps of [`SUBSTEPS`] time steps of [`ITERATIONS`]
/// iterations, gravity 9.81 m/s², velocity damping 0.1 1/s.
pub fn hanging_grid(n: u32) -> anyhow::Result<Model> {
    hanging_cloth(n, false)
}

/// [`hanging_grid`], with bending (compliance 1 rad²/(N·m)) and tethers (scale 1.05, rigid) to
/// its two pins when `full`.
pub(crate) fn hanging_cloth(n: u32, full: bool) -> anyhow::Result<Model> {
    Ok(hanging_builder(n, full)?.build()?)
}

/// The builder of [`hanging_cloth`], with its cloth added.
pub(crate) fn hanging_builder(n: u32, full: bool) -> anyhow::Result<ModelBuilder> {
    let settings = SimSettings {
        fps: 60.0,
        frames: 1,
        substeps: SUBSTEPS,
        iterations: ITERATIONS,
        gravity: [0.0, -9.81, 0.0],
        velocity_damping: 0.1,
        ..SimSettings::default()
    };
    let grid = GridDesc { resolution: [n, n], size: [1.0, 1.0], origin: [0.0; 3], plane: GridPlane::XY };
    let compliance = |c| Ok::<_, anyhow::Error>(Elasticity::Compliance(Compliance::new(c)?));
    let mut cloth = grid
        .generate(&Limits::default())
        .map_err(|(field, rule)| anyhow::anyhow!("grid.{field}: {rule}"))?
        .into_cloth("bench", MassSpec::Density(0.2), compliance(1e-8)?, compliance(1e-6)?);
    cloth.pins = vec![grid.corners()[2], grid.corners()[3]];
    if full {
        cloth.kinds.bending = Some(BendingDesc { elasticity: compliance(1.0)?, damping: 0.0 });
        cloth.kinds.tethers = Some(TetherDesc { scale: 1.05, elasticity: Elasticity::RIGID });
    }
    let mut builder = ModelBuilder::new(settings, Limits::default())?;
    builder.add_cloth(&cloth)?;
    Ok(builder)
}

/// Substeps (time steps) per frame of [`comparison_grid`].
pub const COMPARISON_SUBSTEPS: u32 = 5;

/// The comparison cloth, a cloth other position-based solvers can build identically: `n × n`
/// particles on 1 m × 1 m in the xz plane, falling from two pinned corners; 1 kg per particle; a
/// rigid distance constraint on every triangle edge and rigid dihedral bending on every interior
/// edge (`2n(n−1) + (n−1)²` edges, `4(n−1)` of them on the border); 60 fps,
/// [`COMPARISON_SUBSTEPS`] substeps × 1 iteration, gravity 9.81 m/s², no damping; `frames`
/// frames.
pub fn comparison_grid(n: u32, frames: u32) -> anyhow::Result<Model> {
    let settings = SimSettings {
        fps: 60.0,
        frames,
        substeps: COMPARISON_SUBSTEPS,
        iterations: 1,
        gravity: [0.0, -9.81, 0.0],
        ..SimSettings::default()
    };
    let grid = GridDesc { resolution: [n, n], size: [1.0, 1.0], origin: [0.0; 3], plane: GridPlane::XZ };
    let mut cloth = grid
        .generate(&Limits::default())
        .map_err(|(field, rule)| anyhow::anyhow!("grid.{field}: {rule}"))?
        .into_cloth("grid", MassSpec::ParticleMass(1.0), Elasticity::RIGID, Elasticity::RIGID);
    // Every triangle edge once, as one stretch set (a grid's own sets have both diagonals).
    let edges = weft_core::topology::unique_edges(&cloth.triangles);
    cloth.edge_sets = vec![EdgeSet { edges, elasticity: Elasticity::RIGID, ..EdgeSet::stretch() }];
    cloth.kinds.bending = Some(BendingDesc { elasticity: Elasticity::RIGID, damping: 0.0 });
    cloth.pins = vec![grid.corners()[2], grid.corners()[3]];
    let mut builder = ModelBuilder::new(settings, Limits::default())?;
    builder.add_cloth(&cloth)?;
    Ok(builder.build()?)
}
