//! `Scene.validate()`: what `weft validate` prints about a scene's model, as data.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use weft_bake::memory::{model_bytes, peak_bytes};
use weft_bake::stats::Quality;
use weft_core::Model;
use weft_core::self_collision::ThinParticleContacts;

/// The model `scene` built, as `weft validate` describes it (the same items, in the same units):
/// the simulation settings, each cloth and collider, the following pins, the particle and the
/// surface self-collision, the triangles crossing at the start, the particles, the constraints per kind
/// and how each batched kind is laid out for the parallel solve, the work of a bake, and its
/// memory in bytes.
pub(crate) fn describe<'py>(
    py: Python<'py>,
    scene: &weft_io::Scene,
    model: &Model,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("scene", scene.path())?;
    d.set_item("simulation", simulation(py, model)?)?;
    d.set_item("cloths", cloths(py, model)?)?;
    d.set_item("colliders", colliders(py, model)?)?;
    let report = model.report();
    d.set_item("following_pins", report.following_pins)?;
    d.set_item("particle_self_collision", particle_contacts(py, model)?)?;
    let sc = model.surface_collision();
    if sc.is_empty() {
        d.set_item("surface_self_collision", py.None())?;
    } else {
        let s = PyDict::new(py);
        s.set_item("vertices", sc.vertices().len())?;
        s.set_item("triangles", sc.triangles().len())?;
        s.set_item("edges", sc.edges().len())?;
        s.set_item("max_thickness", sc.max_thickness())?;
        s.set_item("guard_gap", sc.guard_gap())?;
        d.set_item("surface_self_collision", s)?;
    }
    d.set_item("intersecting_pairs", Quality::new(model).measure(model).0)?;
    d.set_item("particles", report.particles)?;
    d.set_item("pinned", report.pinned)?;
    d.set_item("constraints", constraints(py, model)?)?;
    d.set_item("dropped", report.dropped_pinned)?;
    d.set_item("solve", solve(py, model)?)?;
    let settings = model.settings();
    let steps = settings.frames as u64 * settings.substeps as u64;
    let batched: usize = report.sets.iter().map(|(_, set)| set.constraints).sum();
    let work = PyDict::new(py);
    work.set_item("time_steps", steps)?;
    work.set_item(
        "projections",
        (batched + report.volumes) as u128 * settings.iterations as u128 * steps as u128,
    )?;
    work.set_item("at_least", settings.tolerance.is_some())?;
    d.set_item("work", work)?;
    let memory = PyDict::new(py);
    let peak = peak_bytes(model, 1);
    memory.set_item("model_bytes", model_bytes(model))?;
    memory.set_item("peak_bytes", peak)?;
    memory.set_item("peak_bytes_per_particle", peak / (model.particles().len() as u64).max(1))?;
    d.set_item("memory", memory)?;
    d.set_item("variant", scene.variant().map(|v| v.name.clone()))?;
    d.set_item("ok", true)?;
    Ok(d)
}

/// Particle self-collision: `None`, or the particles taking part, their thickness range (m) and
/// a warning per cloth too thin for its vertex spacing (`weft validate`'s lines).
fn particle_contacts<'py>(py: Python<'py>, model: &Model) -> PyResult<Option<Bound<'py, PyDict>>> {
    let sc = model.self_collision();
    if sc.is_empty() {
        return Ok(None);
    }
    let d = PyDict::new(py);
    d.set_item("particles", sc.members().len())?;
    d.set_item("min_thickness", sc.min_thickness())?;
    d.set_item("max_thickness", sc.max_thickness())?;
    let warnings = ThinParticleContacts::of_model(model).into_iter();
    let warnings: Vec<String> = warnings.map(|(name, thin)| format!("cloth \"{name}\": {thin}")).collect();
    d.set_item("warnings", warnings)?;
    Ok(Some(d))
}

/// Rate, frames, substeps (or the tolerance that chooses them), iterations, gravity, damping.
fn simulation<'py>(py: Python<'py>, model: &Model) -> PyResult<Bound<'py, PyDict>> {
    let s = model.settings();
    let d = PyDict::new(py);
    d.set_item("fps", s.fps)?;
    d.set_item("frames", s.frames)?;
    d.set_item("substeps", s.substeps)?;
    d.set_item("iterations", s.iterations)?;
    d.set_item("gravity", s.gravity.to_vec())?;
    d.set_item("velocity_damping", s.velocity_damping)?;
    match s.tolerance {
        None => d.set_item("tolerance", py.None())?,
        Some(t) => {
            let tol = PyDict::new(py);
            tol.set_item("max_strain", t.max_strain)?;
            tol.set_item("min_substeps", t.min_substeps)?;
            tol.set_item("max_substeps", t.max_substeps)?;
            d.set_item("tolerance", tol)?;
        }
    }
    Ok(d)
}

/// Per cloth: name, particles, pinned, triangles, and its render mesh's vertices (or `None`).
fn cloths<'py>(py: Python<'py>, model: &Model) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for cloth in model.cloths() {
        let d = PyDict::new(py);
        let inv_mass = &model.particles().inv_mass()[cloth.particles.clone()];
        d.set_item("name", &cloth.name)?;
        d.set_item("particles", cloth.particles.len())?;
        d.set_item("pinned", inv_mass.iter().filter(|&&w| w == 0.0).count())?;
        d.set_item("triangles", cloth.triangles.len())?;
        d.set_item("render_vertices", cloth.render.as_ref().map(|r| r.binding.len()))?;
        list.append(d)?;
    }
    Ok(list)
}

/// Per collider: name, shape, keys, thickness (m), friction; a mesh's triangles, vertices and
/// frames.
fn colliders<'py>(py: Python<'py>, model: &Model) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for c in model.colliders() {
        let d = PyDict::new(py);
        d.set_item("name", &c.name)?;
        d.set_item("shape", c.shape.name())?;
        d.set_item("keys", c.keys.len())?;
        d.set_item("thickness", c.thickness)?;
        d.set_item("static_friction", c.friction.static_coefficient)?;
        d.set_item("kinetic_friction", c.friction.kinetic_coefficient)?;
        list.append(d)?;
    }
    for m in model.mesh_colliders() {
        let d = PyDict::new(py);
        d.set_item("name", &m.name)?;
        d.set_item("shape", "mesh")?;
        d.set_item("keys", m.keys.len())?;
        d.set_item("thickness", m.thickness)?;
        d.set_item("static_friction", m.friction.static_coefficient)?;
        d.set_item("kinetic_friction", m.friction.kinetic_coefficient)?;
        d.set_item("triangles", m.triangles.len())?;
        d.set_item("vertices", m.vertex_count())?;
        d.set_item("frames", m.frames.len())?;
        d.set_item("frame_interval", m.frame_interval)?;
        list.append(d)?;
    }
    Ok(list)
}

/// Constraints per kind (the distance kind split into stretch and shear too), volumes and the
/// triangles in the wind.
fn constraints<'py>(py: Python<'py>, model: &Model) -> PyResult<Bound<'py, PyDict>> {
    let report = model.report();
    let d = PyDict::new(py);
    for (kind, set) in report.sets.iter() {
        d.set_item(kind.info().name, set.constraints)?;
    }
    d.set_item("stretch", report.stretch)?;
    d.set_item("shear", report.shear)?;
    d.set_item("volume", report.volumes)?;
    d.set_item("wind_triangles", report.aero_triangles)?;
    Ok(d)
}

/// Per batched kind, its layout for the parallel solve.
fn solve<'py>(py: Python<'py>, model: &Model) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (kind, set) in model.report().sets.iter() {
        let s = PyDict::new(py);
        s.set_item("constraints", set.constraints)?;
        s.set_item("blocks", set.blocks)?;
        s.set_item("colours_per_block", set.block_colours)?;
        s.set_item("across_blocks", set.across())?;
        s.set_item("across_block_strands", set.strands.len())?;
        s.set_item("across_block_colours", set.boundary_colours.len())?;
        s.set_item("serial", set.serial)?;
        s.set_item("simd_batches", set.batches)?;
        s.set_item("lane_fill", if set.constraints == 0 { None } else { Some(set.fill) })?;
        d.set_item(kind.info().name, s)?;
    }
    Ok(d)
}
