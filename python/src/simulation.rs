//! `weft.Simulation`: a scene's model stepped frame by frame from Python, its particles read as
//! numpy arrays between frames, its colliders and pins moved between frames.
//!
//! Each frame is stepped by `weft_bake::FrameStepper`, as a bake steps it (the substep counts
//! chosen to the scene's strain tolerance included), so the positions after frame `k` are the
//! bits of sample `k` of the bake's cache.

use std::ops::Range;
use std::sync::Mutex;

use numpy::{PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use weft_bake::FrameStepper;
use weft_core::Model;
use weft_core::collider::RigidKey;

use crate::bake::kernel_path;
use crate::scene::scene_arg;
use crate::weft_error;

/// A scene's model, stepped frame by frame.
#[pyclass(module = "weft", frozen)]
pub(crate) struct Simulation {
    state: Mutex<State>,
}

/// What a simulation holds between frames.
struct State {
    model: Model,
    frames: FrameStepper,
    pool: rayon::ThreadPool,
    /// Frames stepped so far.
    frame: u32,
    /// Pins moving over the next frame.
    pins: Vec<PinMove>,
}

/// A pin moving over the next frame: particle `particle` from `from` to `to` (m), linearly over
/// its time steps.
#[derive(Debug, Clone, Copy)]
struct PinMove {
    particle: usize,
    from: [f32; 3],
    to: [f32; 3],
}

impl State {
    /// The particles of cloth `name`, or of the whole model for `None`.
    fn particles(&self, cloth: Option<&str>) -> PyResult<Range<usize>> {
        let Some(name) = cloth else { return Ok(0..self.model.particles().len()) };
        self.model.cloths().iter().find(|c| c.name == name).map(|c| c.particles.clone()).ok_or_else(|| {
            let names: Vec<&str> = self.model.cloths().iter().map(|c| c.name.as_str()).collect();
            weft_error(format!("no cloth is named '{name}' (the cloths: {})", names.join(", ")))
        })
    }

    /// Steps one frame, moving the pins asked for over it.
    fn step_frame(&mut self) {
        let State { model, frames, pool, pins, .. } = self;
        let moving = std::mem::take(pins);
        let mut move_pins = |model: &mut Model, step: u32, steps: u32| {
            let s = step as f64 / steps as f64;
            let positions = model.parts_mut().particles.positions;
            for m in &moving {
                let at =
                    m.from.iter().zip(&m.to).map(|(&a, &b)| (a as f64 + (b as f64 - a as f64) * s) as f32);
                positions[m.particle].iter_mut().zip(at).for_each(|(x, v)| *x = v);
            }
        };
        pool.install(|| frames.step_frame_with(model, &|_| false, &mut move_pins));
        self.frame += 1;
    }
}

/// `records` (`[x, y, z, w]`) of `range` as an `(n, 3)` array of `float32`.
fn xyz<'py>(
    py: Python<'py>,
    records: &[[f32; 4]],
    range: Range<usize>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let n = range.len();
    let flat: Vec<f32> = records[range].iter().flat_map(|r| [r[0], r[1], r[2]]).collect();
    PyArray1::from_vec(py, flat).reshape([n, 3])
}

#[pymethods]
impl Simulation {
    /// Builds the model of `scene` (a `weft.Scene`, a dict laid out as a scene file, or a path),
    /// ready to step from its initial state. `threads`: the worker threads (`None`: as many as
    /// the model has work for, as `weft bake` chooses; the positions do not depend on it).
    #[new]
    #[pyo3(signature = (scene, *, threads = None, kernel = "simd"))]
    fn new(
        py: Python<'_>,
        scene: &Bound<'_, PyAny>,
        threads: Option<usize>,
        kernel: &str,
    ) -> PyResult<Simulation> {
        let scene = scene_arg(py, scene)?;
        let kernel = kernel_path(kernel)?;
        let scene = scene.get();
        let model = py.detach(|| scene.inner.build_model()).map_err(weft_error)?;
        let threads = threads.unwrap_or_else(|| weft_bake::fitted_threads(&model));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("weft-{i}"))
            .build()
            .map_err(|e| weft_error(format!("cannot start a pool of {threads} threads: {e}")))?;
        let frames = FrameStepper::new(&model, kernel);
        Ok(Simulation { state: Mutex::new(State { model, frames, pool, frame: 0, pins: Vec::new() }) })
    }

    /// Steps `frames` frames (the GIL released while they run). Ctrl-C stops it after the frame
    /// under way, raising `KeyboardInterrupt`; the state is that frame's.
    #[pyo3(signature = (frames = 1))]
    fn step(&self, py: Python<'_>, frames: u32) -> PyResult<()> {
        let mut state = self.lock()?;
        for _ in 0..frames {
            let state = &mut *state;
            py.detach(|| state.step_frame());
            py.check_signals()?;
        }
        Ok(())
    }

    /// Frames stepped so far.
    #[getter]
    fn frame(&self) -> PyResult<u32> {
        Ok(self.lock()?.frame)
    }

    /// Simulated time, s.
    #[getter]
    fn time(&self) -> PyResult<f64> {
        Ok(self.lock()?.model.time())
    }

    /// The scene's frames per second, 1/s.
    #[getter]
    fn fps(&self) -> PyResult<f64> {
        Ok(self.lock()?.model.settings().fps)
    }

    /// The scene's frame count (what a bake bakes; `step` may go on past it).
    #[getter]
    fn frames(&self) -> PyResult<u32> {
        Ok(self.lock()?.model.settings().frames)
    }

    /// Time steps the next frame starts with (baking to a tolerance, chosen frame by frame).
    #[getter]
    fn substeps(&self) -> PyResult<u32> {
        Ok(self.lock()?.model.settings().substeps)
    }

    /// The cloths' names, in scene order.
    #[getter]
    fn cloths(&self) -> PyResult<Vec<String>> {
        Ok(self.lock()?.model.cloths().iter().map(|c| c.name.clone()).collect())
    }

    /// The colliders' names: the analytic ones, then the meshes.
    #[getter]
    fn colliders(&self) -> PyResult<Vec<String>> {
        let state = self.lock()?;
        let analytic = state.model.colliders().iter().map(|c| c.name.clone());
        Ok(analytic.chain(state.model.mesh_colliders().iter().map(|m| m.name.clone())).collect())
    }

    /// The positions (m) of cloth `cloth`'s particles, or of every particle for `None`: a new
    /// `(n, 3)` array of `float32`, in the order of the cloth's caches.
    #[pyo3(signature = (cloth = None))]
    fn positions<'py>(&self, py: Python<'py>, cloth: Option<&str>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let state = self.lock()?;
        let range = state.particles(cloth)?;
        xyz(py, state.model.particles().positions(), range)
    }

    /// The velocities (m/s) of cloth `cloth`'s particles, or of every particle: `(n, 3)`,
    /// `float32`.
    #[pyo3(signature = (cloth = None))]
    fn velocities<'py>(&self, py: Python<'py>, cloth: Option<&str>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let state = self.lock()?;
        let range = state.particles(cloth)?;
        xyz(py, state.model.particles().velocities(), range)
    }

    /// The pinned particles of cloth `cloth` (indices within the cloth), in order.
    fn pins(&self, cloth: &str) -> PyResult<Vec<usize>> {
        let state = self.lock()?;
        let range = state.particles(Some(cloth))?;
        let inv_mass = &state.model.particles().inv_mass()[range];
        Ok(inv_mass.iter().enumerate().filter(|(_, w)| **w == 0.0).map(|(i, _)| i).collect())
    }

    /// Moves collider `name` (analytic or mesh) over the next frame, from where it is to
    /// `position` (m) and `rotation` (a quaternion `[x, y, z, w]`; `None` keeps its rotation),
    /// reached at the frame's end and held after. Pins that follow it keep following the keys it
    /// was built with.
    #[pyo3(signature = (name, position, rotation = None))]
    fn move_collider(&self, name: &str, position: [f32; 3], rotation: Option<[f32; 4]>) -> PyResult<()> {
        let mut state = self.lock()?;
        let model = &mut state.model;
        let now = model.time();
        let Some(current) = model.collider_key_at(name, now) else {
            let mut names: Vec<&str> = model.colliders().iter().map(|c| c.name.as_str()).collect();
            names.extend(model.mesh_colliders().iter().map(|m| m.name.as_str()));
            return Err(weft_error(format!(
                "no collider is named '{name}' (the colliders: {})",
                names.join(", ")
            )));
        };
        let time = (now + 1.0 / model.settings().fps) as f32;
        let to = RigidKey { time, position, rotation: rotation.unwrap_or(current.rotation) };
        model.move_collider(name, to).map_err(|e| {
            let index = e.index.map(|i| format!("[{i}]")).unwrap_or_default();
            weft_error(format!("collider '{name}': {}{index}: {}", e.field, e.rule))
        })
    }

    /// Moves pins of cloth `cloth` over the next frame: particle `indices[i]` (within the cloth,
    /// pinned) from where it is to `positions[i]` (m), linearly over the frame's time steps, and
    /// held there after.
    fn move_pins(&self, cloth: &str, indices: Vec<usize>, positions: Vec<[f32; 3]>) -> PyResult<()> {
        let mut state = self.lock()?;
        let range = state.particles(Some(cloth))?;
        if indices.len() != positions.len() {
            return Err(weft_error(format!(
                "move_pins: {} indices and {} positions: give one position per index",
                indices.len(),
                positions.len()
            )));
        }
        let mut moves = Vec::with_capacity(indices.len());
        let particles = state.model.particles();
        for (&i, &to) in indices.iter().zip(&positions) {
            if i >= range.len() {
                return Err(weft_error(format!(
                    "cloth '{cloth}' has {} particles: {i} is not one",
                    range.len()
                )));
            }
            let particle = range.start + i;
            if particles.inv_mass()[particle] != 0.0 {
                return Err(weft_error(format!(
                    "particle {i} of cloth '{cloth}' is not pinned: only pins are moved"
                )));
            }
            if let Some(v) = to.iter().find(|v| !v.is_finite()) {
                return Err(weft_error(format!("move_pins: particle {i}: {v} is not a finite number")));
            }
            moves.push(PinMove { particle, from: particles.position(particle), to });
        }
        state.pins.retain(|m| !moves.iter().any(|n| n.particle == m.particle));
        state.pins.extend(moves);
        Ok(())
    }

    fn __repr__(&self) -> PyResult<String> {
        let state = self.lock()?;
        Ok(format!(
            "weft.Simulation(frame={}, time={}, cloths={:?})",
            state.frame,
            state.model.time(),
            state.model.cloths().iter().map(|c| c.name.as_str()).collect::<Vec<_>>()
        ))
    }
}

impl Simulation {
    /// The state, locked. A step holds it while the GIL is released: another thread that asks for
    /// it meanwhile is refused rather than made to wait (waiting with the GIL held would keep the
    /// step from taking it back).
    fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, State>> {
        match self.state.try_lock() {
            Ok(state) => Ok(state),
            Err(std::sync::TryLockError::Poisoned(p)) => Ok(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => {
                Err(weft_error("the simulation is stepping in another thread: wait for its step to return"))
            }
        }
    }
}
