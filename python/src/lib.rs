//! # `weft._weft` — weft from Python
//!
//! The native module behind the Python package `weft` (`python/weft/`, which re-exports it and
//! carries its type stubs). It is a thin layer over weft's library crates: scenes are
//! `weft_io::Scene`s, bakes are `weft_bake::bake_with_progress`, stepping frame by frame is
//! `weft_bake::FrameStepper` (so the positions are a bake's, bit for bit), and every error is
//! weft's one-line message in a `weft.WeftError` (a `ValueError`).
//!
//! * [`scene`]: `weft.Scene`, from a file or a dict, with key overrides; `validate()`;
//! * [`bake`]: `weft.bake()`, with progress, the GIL released, and Ctrl-C that keeps the
//!   checkpoint;
//! * [`simulation`]: `weft.Simulation`, stepped frame by frame, its state as numpy arrays,
//!   colliders and pins moved between frames;
//! * [`caches`]: `weft.read_pc2()` and `weft.read_obj_sequence()`;
//! * [`values`]: Python values to TOML and back.
//!
//! Units are SI (m, kg, s) and weft's axes (y up), as everywhere in weft.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

mod bake;
mod caches;
mod scene;
mod simulation;
mod validate;
mod values;

pyo3::create_exception!(
    weft,
    WeftError,
    PyValueError,
    "Bad input to weft: a scene that breaks a rule, a missing file, a bad argument. Its message is \
     weft's one-line error (`FILE:LINE:COL: PLACE: RULE` for a scene)."
);

/// A `WeftError` with `message` on one line (line breaks become spaces).
pub(crate) fn weft_error(message: impl std::fmt::Display) -> PyErr {
    let text = message.to_string();
    let line: String =
        text.trim_end().chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect();
    WeftError::new_err(line)
}

/// The native part of the `weft` package.
#[pymodule]
fn _weft(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("WeftError", m.py().get_type::<WeftError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("simd_level", weft_kernels::simd_level())?;
    m.add_class::<scene::Scene>()?;
    m.add_class::<simulation::Simulation>()?;
    m.add_function(wrap_pyfunction!(bake::bake, m)?)?;
    m.add_function(wrap_pyfunction!(caches::read_pc2, m)?)?;
    m.add_function(wrap_pyfunction!(caches::read_obj_sequence, m)?)?;
    Ok(())
}
