//! `weft.Scene`: a scene read from a file (or one variant of its `[wedge]`), or built from a
//! dict, with key overrides in the `[wedge]` keys' syntax.

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use weft_core::limits::Limits;
use weft_io::{Wedge, load_scene, load_scene_variant, parse_scene, parse_scene_variant, wedge_variants};

use crate::values::{inline, scene_text, to_python, to_toml};
use crate::weft_error;

/// What a scene from a dict is called in messages, and where its files are read from (the
/// working directory) unless `path` is given.
const DICT_PATH: &str = "<dict>";

/// A weft scene: settings, cloths and colliders, read and checked against the scene format
/// (every key known, every type right), not yet built into a model.
#[pyclass(module = "weft", frozen)]
pub(crate) struct Scene {
    pub(crate) inner: weft_io::Scene,
    /// The scene's text with any overrides put in, without the `[wedge]` that carried them.
    text: String,
}

impl Scene {
    /// A scene from `text` (the file at `path`'s, or a dict's), with `overrides` applied.
    fn parse(text: &str, path: &Path, overrides: Option<&Bound<'_, PyDict>>) -> PyResult<Scene> {
        let limits = Limits::default();
        let Some(overrides) = overrides.filter(|o| !o.is_empty()) else {
            let inner = parse_scene(text, path, &limits).map_err(weft_error)?;
            return Ok(Scene { inner, text: text.to_string() });
        };
        if Wedge::parse(text, path).map_err(weft_error)?.is_some() {
            return Err(weft_error(format!(
                "{}: the scene has its own [wedge] table: overrides apply to a scene without one (read one of its variants with variant=I)",
                path.display()
            )));
        }
        // The overrides as a wedge of one variant: the scene reader puts each value in (or adds
        // the key), checks it as it checks any scene, and names the key in an error.
        let mut with_wedge = text.trim_end().to_string();
        with_wedge.push_str("\n[wedge]\n");
        for (key, value) in overrides.iter() {
            let key: String =
                key.extract().map_err(|_| weft_error(format!("override key {key} is not a string")))?;
            let value = to_toml(&value, &key)?;
            with_wedge.push_str(&format!("{} = [{}]\n", toml::Value::String(key.clone()), inline(&value)));
        }
        let inner = parse_scene_variant(&with_wedge, path, &limits, 0).map_err(weft_error)?;
        // The variant's text is the scene's with the values put in, then the `[wedge]`.
        let applied = inner.text();
        let end = applied.rfind("\n[wedge]\n").unwrap_or(applied.len());
        let text = format!("{}\n", applied[..end].trim_end());
        Ok(Scene { inner, text })
    }
}

#[pymethods]
impl Scene {
    /// Reads the scene file at `path`: as written, or its `[wedge]` variant `variant`, or with
    /// `overrides`, a dict of `[wedge]` keys (`"cloth.flag.stretch_compliance"`,
    /// `"simulation.frames"`) to the value each takes.
    #[new]
    #[pyo3(signature = (path, *, overrides = None, variant = None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        overrides: Option<&Bound<'_, PyDict>>,
        variant: Option<usize>,
    ) -> PyResult<Scene> {
        let limits = Limits::default();
        match (variant, overrides.filter(|o| !o.is_empty())) {
            (Some(_), Some(_)) => {
                Err(weft_error("give overrides or a variant of the scene's [wedge], not both"))
            }
            (Some(index), None) => {
                let inner = py.detach(|| load_scene_variant(&path, &limits, index)).map_err(weft_error)?;
                let text = inner.text().to_string();
                Ok(Scene { inner, text })
            }
            (None, overrides) => {
                let scene = py.detach(|| load_scene(&path, &limits)).map_err(weft_error)?;
                match overrides {
                    None => {
                        let text = scene.text().to_string();
                        Ok(Scene { inner: scene, text })
                    }
                    Some(o) => Scene::parse(scene.text(), &path, Some(o)),
                }
            }
        }
    }

    /// A scene from a dict laid out as a scene file: `{"simulation": {...}, "cloth": [{...}],
    /// "collider": [{...}]}`, with `overrides` as for a file. `path` is what messages call it and
    /// where the files it names (`mesh`, `pin_file`) are read from (its folder; without it, the
    /// working directory); nothing is read from `path` itself.
    #[staticmethod]
    #[pyo3(signature = (data, *, path = None, overrides = None))]
    fn from_dict(
        data: &Bound<'_, PyDict>,
        path: Option<PathBuf>,
        overrides: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Scene> {
        let table = match to_toml(data.as_any(), "")? {
            toml::Value::Table(t) => t,
            _ => unreachable!("a dict converts to a table"),
        };
        let path = path.unwrap_or_else(|| PathBuf::from(DICT_PATH));
        Scene::parse(&scene_text(&table), &path, overrides)
    }

    /// The variants of the `[wedge]` of the scene file at `path`, in order, each a dict with its
    /// `index`, `name` and the `values` of the wedge keys; empty without a `[wedge]`.
    #[staticmethod]
    fn variants<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyList>> {
        let variants = py.detach(|| wedge_variants(&path, &Limits::default())).map_err(weft_error)?;
        let list = PyList::empty(py);
        for v in variants {
            list.append(variant_dict(py, &v)?)?;
        }
        Ok(list)
    }

    /// The file the scene is read from (for a dict, what it is called).
    #[getter]
    fn path(&self) -> PathBuf {
        self.inner.path().to_path_buf()
    }

    /// The scene as TOML text, overrides included.
    #[getter]
    fn text(&self) -> &str {
        &self.text
    }

    /// Frames per second of the caches, 1/s.
    #[getter]
    fn fps(&self) -> f64 {
        self.inner.settings().fps
    }

    /// Frames to bake.
    #[getter]
    fn frames(&self) -> u32 {
        self.inner.settings().frames
    }

    /// The cloths' names, in file order.
    #[getter]
    fn cloths(&self) -> Vec<String> {
        self.inner.cloth_names().map(str::to_string).collect()
    }

    /// The colliders' names: the analytic ones (plane, sphere, capsule, box), then the meshes.
    #[getter]
    fn colliders(&self) -> Vec<String> {
        let analytic = self.inner.colliders().iter().map(|c| c.name.clone());
        analytic.chain(self.inner.mesh_colliders().iter().map(|m| m.name.clone())).collect()
    }

    /// For a variant of a `[wedge]` (or a scene with overrides, a wedge of one variant): its
    /// `index`, `name` and `values`; else `None`.
    #[getter]
    fn variant<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.inner.variant().map(|v| variant_dict(py, v)).transpose()
    }

    /// Builds the model as `weft validate` does and returns what it prints, as a dict (see
    /// docs/python.md); raises `WeftError` with the first rule the scene breaks.
    fn validate<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let model = py.detach(|| self.inner.build_model()).map_err(weft_error)?;
        crate::validate::describe(py, &self.inner, &model)
    }

    /// Writes the scene's text (overrides included) to `path`. A scene whose files (`mesh`,
    /// `pin_file`) are relative paths reads them from the folder of the file it is read from.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        std::fs::write(&path, &self.text)
            .map_err(|e| weft_error(format!("{}: cannot write: {e}", path.display())))
    }

    fn __repr__(&self) -> String {
        format!(
            "weft.Scene({:?}, cloths={:?}, colliders={:?}, frames={}, fps={})",
            self.inner.path().display().to_string(),
            self.cloths(),
            self.colliders(),
            self.frames(),
            self.fps()
        )
    }
}

/// A wedge variant as a dict: `index`, `name`, `values` (wedge key to value).
fn variant_dict<'py>(py: Python<'py>, v: &weft_io::Variant) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("index", v.index)?;
    d.set_item("name", &v.name)?;
    let values = PyDict::new(py);
    for (key, value) in &v.values {
        values.set_item(key, to_python(py, value)?)?;
    }
    d.set_item("values", values)?;
    Ok(d)
}

/// A scene given to a function: a `Scene`, a dict (a scene laid out as a file), or a path.
pub(crate) fn scene_arg(py: Python<'_>, scene: &Bound<'_, PyAny>) -> PyResult<Py<Scene>> {
    if let Ok(s) = scene.cast::<Scene>() {
        return Ok(s.clone().unbind());
    }
    if let Ok(d) = scene.cast::<PyDict>() {
        return Py::new(py, Scene::from_dict(d, None, None)?);
    }
    let path: PathBuf = scene.extract().map_err(|_| {
        weft_error("scene: give a weft.Scene, a dict laid out as a scene file, or the path of one")
    })?;
    Py::new(py, Scene::new(py, path, None, None)?)
}
