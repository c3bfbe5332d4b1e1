//! Caches read back as numpy arrays: `weft.read_pc2()`, `weft.read_obj_sequence()`.

use std::path::{Path, PathBuf};

use numpy::{PyArray1, PyArray3, PyArrayMethods};
use pyo3::prelude::*;
use weft_io::Pc2Error;

use crate::weft_error;

/// The samples of the PC2 cache at `path` as a `(samples, points, 3)` array of `float32` (m):
/// sample `k` is the cloth after frame `k` (0: before the first step).
#[pyfunction]
pub(crate) fn read_pc2<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyArray3<f32>>> {
    let pc2 = py.detach(|| weft_io::read_pc2(&path)).map_err(|e| match e {
        // A read error names the file already.
        e @ Pc2Error::Read { .. } => weft_error(e),
        e => weft_error(format!("{}: {e}", path.display())),
    })?;
    samples(py, pc2.positions, pc2.sample_count, pc2.point_count)
}

/// The OBJ sequence `NAME.0000.obj`, `NAME.0001.obj`, ... in `folder` (as `weft bake --format
/// obj` writes it: its `v` lines) as a `(samples, points, 3)` array of `float32` (m), from sample
/// 0 up to the first missing number.
#[pyfunction]
pub(crate) fn read_obj_sequence<'py>(
    py: Python<'py>,
    folder: PathBuf,
    name: &str,
) -> PyResult<Bound<'py, PyArray3<f32>>> {
    let (positions, samples_read, points) = py.detach(|| read_sequence(&folder, name)).map_err(weft_error)?;
    samples(py, positions, samples_read, points)
}

/// `positions`, `samples × points` of them, as a `(samples, points, 3)` array.
fn samples<'py>(
    py: Python<'py>,
    positions: Vec<[f32; 3]>,
    samples: usize,
    points: usize,
) -> PyResult<Bound<'py, PyArray3<f32>>> {
    let flat: Vec<f32> = positions.into_iter().flatten().collect();
    PyArray1::from_vec(py, flat).reshape([samples, points, 3])
}

/// Reads the frames of the sequence `name` in `folder`: every position, the samples and the
/// points per sample; a frame with another point count, or a bad `v` line, is an error naming the
/// file and line.
fn read_sequence(folder: &Path, name: &str) -> Result<(Vec<[f32; 3]>, usize, usize), String> {
    // The writer pads the frame number to at least 4 digits (more for longer bakes).
    let digits = (4..=10)
        .find(|&d| folder.join(format!("{name}.{:0d$}.obj", 0, d = d)).is_file())
        .ok_or_else(|| format!("{}: no file {name}.0000.obj", folder.display()))?;
    let mut positions = Vec::new();
    let mut points = None;
    let mut k = 0usize;
    loop {
        let path = folder.join(format!("{name}.{k:0digits$}.obj"));
        let Ok(text) = std::fs::read_to_string(&path) else { break };
        let before = positions.len();
        for (line, l) in text.lines().enumerate() {
            let Some(rest) = l.strip_prefix("v ") else { continue };
            let v: Vec<f32> = rest.split_whitespace().map_while(|x| x.parse().ok()).collect();
            let [x, y, z] = v[..] else {
                return Err(format!("{}:{}: a vertex needs three numbers", path.display(), line + 1));
            };
            positions.push([x, y, z]);
        }
        let n = positions.len() - before;
        if *points.get_or_insert(n) != n {
            return Err(format!("{}: {n} vertices, frame 0 has {}", path.display(), points.unwrap_or(0)));
        }
        k += 1;
    }
    Ok((positions, k, points.unwrap_or(0)))
}
