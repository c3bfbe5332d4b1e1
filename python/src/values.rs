//! Python values to TOML and back: a scene given as a dict becomes scene text, an override
//! becomes a `[wedge]` value, and `summary.toml` becomes a dict.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::weft_error;

/// `value` (a bool, int, float, str, list, tuple or dict with str keys, or anything with
/// `tolist()` or `__float__`, as numpy's arrays and scalars have) as a TOML value; `at` names
/// it in an error (`cloth[0].positions`).
pub(crate) fn to_toml(value: &Bound<'_, PyAny>, at: &str) -> PyResult<toml::Value> {
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(toml::Value::Boolean(b.is_true()));
    }
    if value.is_instance_of::<PyInt>() {
        let i: i64 = value
            .extract()
            .map_err(|_| weft_error(format!("{at}: {value} does not fit a 64-bit integer")))?;
        return Ok(toml::Value::Integer(i));
    }
    if let Ok(f) = value.cast::<PyFloat>() {
        return Ok(toml::Value::Float(f.value()));
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(toml::Value::String(s.extract::<String>()?));
    }
    if let Ok(d) = value.cast::<PyDict>() {
        let mut table = toml::Table::new();
        for (k, v) in d.iter() {
            let key: String =
                k.extract().map_err(|_| weft_error(format!("{at}: the key {k} is not a string")))?;
            let inner = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
            table.insert(key, to_toml(&v, &inner)?);
        }
        return Ok(toml::Value::Table(table));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, item) in value.try_iter()?.enumerate() {
            items.push(to_toml(&item?, &format!("{at}[{i}]"))?);
        }
        return Ok(toml::Value::Array(items));
    }
    if value.hasattr("tolist")? {
        return to_toml(&value.call_method0("tolist")?, at);
    }
    if value.hasattr("__index__")? {
        return to_toml(&value.call_method0("__index__")?, at);
    }
    if value.hasattr("__float__")? {
        return to_toml(&value.call_method0("__float__")?, at);
    }
    let type_name = value.get_type().name()?;
    Err(weft_error(format!(
        "{at}: a {type_name} cannot be a scene value: give a bool, number, string, list or dict"
    )))
}

/// A TOML value as Python: booleans, integers, floats and strings as such, arrays as lists,
/// tables as dicts, dates as their text.
pub(crate) fn to_python<'py>(py: Python<'py>, value: &toml::Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        toml::Value::Boolean(b) => PyBool::new(py, *b).to_owned().into_any(),
        toml::Value::Integer(i) => i.into_pyobject(py)?.into_any(),
        toml::Value::Float(f) => f.into_pyobject(py)?.into_any(),
        toml::Value::String(s) => s.into_pyobject(py)?.into_any(),
        toml::Value::Datetime(d) => d.to_string().into_pyobject(py)?.into_any(),
        toml::Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        toml::Value::Table(table) => table_to_python(py, table)?.into_any(),
    })
}

/// A TOML table as a dict.
pub(crate) fn table_to_python<'py>(py: Python<'py>, table: &toml::Table) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (k, v) in table {
        dict.set_item(k, to_python(py, v)?)?;
    }
    Ok(dict)
}

/// Scene text for a scene given as a table: its plain keys first, then each table as `[name]`
/// and each list of tables as `[[name]]` (`[[cloth]]`, `[[collider]]`), every value inside them
/// written on one line (inline tables), as `[wedge]` keys need to override them.
pub(crate) fn scene_text(table: &toml::Table) -> String {
    let mut text = String::new();
    let mut sections = String::new();
    for (key, value) in table {
        match value {
            toml::Value::Table(inner) => {
                sections.push_str(&format!("\n[{}]\n", key_text(key)));
                sections.push_str(&lines(inner));
            }
            toml::Value::Array(items) if !items.is_empty() && items.iter().all(toml::Value::is_table) => {
                for item in items.iter().filter_map(toml::Value::as_table) {
                    sections.push_str(&format!("\n[[{}]]\n", key_text(key)));
                    sections.push_str(&lines(item));
                }
            }
            _ => text.push_str(&format!("{} = {}\n", key_text(key), inline(value))),
        }
    }
    text + sections.trim_start_matches('\n')
}

/// `key = value` lines of a table, each value inline.
fn lines(table: &toml::Table) -> String {
    table.iter().map(|(k, v)| format!("{} = {}\n", key_text(k), inline(v))).collect()
}

/// A value as TOML on one line (tables inline).
pub(crate) fn inline(value: &toml::Value) -> String {
    match value {
        toml::Value::Table(t) => {
            let items: Vec<String> =
                t.iter().map(|(k, v)| format!("{} = {}", key_text(k), inline(v))).collect();
            if items.is_empty() { "{}".to_string() } else { format!("{{ {} }}", items.join(", ")) }
        }
        toml::Value::Array(items) => {
            format!("[{}]", items.iter().map(inline).collect::<Vec<_>>().join(", "))
        }
        other => other.to_string(),
    }
}

/// A key as TOML writes it: bare when it can be, else quoted.
pub(crate) fn key_text(key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        key.to_string()
    } else {
        toml::Value::String(key.to_string()).to_string()
    }
}
