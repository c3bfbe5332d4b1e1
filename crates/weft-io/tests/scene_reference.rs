//! `docs/scene.md` is the scene reference, and this test holds it to the code.
//!
//! * **Keys.** For each table, the keys the scene types accept are read from the parser itself: a
//!   scene with an unknown key in that table is refused with serde's list of the keys it expected.
//!   The reference must list exactly those keys.
//! * **Defaults.** Each documented default is checked by parsing a small scene (a *context*) three
//!   ways: without the key, with the key set to the documented default, and with the key set to
//!   another value. The first two must read the same (settings, cloths, colliders); the third must
//!   not, so that the check cannot pass because the key is ignored. `required` is checked by
//!   leaving the key out of a context that has it: the scene must be refused, naming the key.
//!   `same as KEY` is checked like a value, with the other key's value in the context.
//!
//! The contexts (which shape a key needs, which key turns a constraint kind on, which key fixes
//! the substep count) are the only
//! knowledge of the keys in this file; the keys and their defaults come from the code and from the
//! reference. A batched constraint kind's keys take their context from the registry: the scene in
//! the fixed mode (some defaults differ baking to a tolerance) with the kind's example items
//! (`KindInfo::example`) but the key itself; a switch or a list of pairs without them (they would
//! turn the kind on, or need the list).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use weft_core::kinds::{KeyType, KindId};
use weft_core::limits::Limits;
use weft_io::parse_scene;

/// The tables of a scene, as `docs/scene.md` names them.
const TABLES: [&str; 8] = [
    "simulation",
    "simulation.wind",
    "cloth",
    "cloth.grid",
    "cloth.pin_box",
    "cloth.follow",
    "collider",
    "collider.keys",
];

/// One row of the reference.
#[derive(Debug, Clone)]
struct Row {
    key: String,
    default: String,
    line: usize,
}

fn reference_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/scene.md")
}

/// Every `<!-- scene-table: NAME -->` of the reference and the rows of the table after it.
fn read_reference(text: &str) -> BTreeMap<String, Vec<Row>> {
    let mut tables: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut in_rows = false;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("<!-- scene-table:").and_then(|l| l.strip_suffix("-->")) {
            let name = name.trim().to_string();
            assert!(TABLES.contains(&name.as_str()), "docs/scene.md:{}: unknown table '{name}'", i + 1);
            assert!(!tables.contains_key(&name), "docs/scene.md:{}: table '{name}' twice", i + 1);
            tables.insert(name.clone(), Vec::new());
            current = Some(name);
            in_rows = false;
            continue;
        }
        let Some(name) = &current else { continue };
        if !line.starts_with('|') {
            if in_rows {
                current = None;
            }
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 5, "docs/scene.md:{}: a row needs 5 cells: {line}", i + 1);
        if !in_rows {
            assert_eq!(cells, ["key", "type", "unit", "default", "meaning"], "docs/scene.md:{}", i + 1);
            in_rows = true;
            continue;
        }
        if cells[0].starts_with("---") {
            continue;
        }
        let key = cells[0]
            .strip_prefix('`')
            .and_then(|k| k.strip_suffix('`'))
            .unwrap_or_else(|| panic!("docs/scene.md:{}: the key cell is `key`: {}", i + 1, cells[0]));
        tables.get_mut(name).unwrap().push(Row {
            key: key.to_string(),
            default: cells[3].to_string(),
            line: i + 1,
        });
    }
    tables
}

/// A scene as item lists ("key = value"), one per table, rendered to TOML.
#[derive(Debug, Clone, Default)]
struct Scene {
    tables: BTreeMap<&'static str, Vec<String>>,
}

impl Scene {
    fn items(&mut self, table: &str) -> &mut Vec<String> {
        let name = TABLES.iter().find(|t| **t == table).unwrap();
        self.tables.entry(name).or_default()
    }

    fn set(mut self, table: &str, items: &[&str]) -> Self {
        *self.items(table) = items.iter().map(|s| s.to_string()).collect();
        self
    }

    fn add(mut self, table: &str, items: &[&str]) -> Self {
        self.items(table).extend(items.iter().map(|s| s.to_string()));
        self
    }

    fn value(&self, table: &str, key: &str) -> Option<String> {
        self.tables.get(table)?.iter().find_map(|i| i.strip_prefix(&format!("{key} = ")).map(str::to_string))
    }

    /// Leaves `key` out of `table` (and the nested table of that name, if it is one).
    fn without(mut self, table: &str, key: &str) -> Self {
        if let Some(items) = self.tables.get_mut(table) {
            items.retain(|i| !i.starts_with(&format!("{key} = ")));
        }
        self.tables.remove(format!("{table}.{key}").as_str());
        self
    }

    fn with(self, table: &str, key: &str, value: &str) -> Self {
        let item = format!("{key} = {value}");
        self.without(table, key).add(table, &[&item])
    }

    fn toml(&self) -> String {
        let get = |t: &str| self.tables.get(t);
        let inline = |t: &str| get(t).map(|items| format!("{{ {} }}", items.join(", ")));
        let mut s = String::from("[simulation]\n");
        for i in get("simulation").into_iter().flatten() {
            s += &format!("{i}\n");
        }
        if let Some(w) = inline("simulation.wind") {
            s += &format!("wind = [{w}]\n");
        }
        if let Some(cloth) = get("cloth") {
            s += "\n[[cloth]]\n";
            for i in cloth {
                s += &format!("{i}\n");
            }
            if let Some(g) = inline("cloth.grid") {
                s += &format!("grid = {g}\n");
            }
            if let Some(b) = inline("cloth.pin_box") {
                s += &format!("pin_box = {b}\n");
            }
            if let Some(f) = inline("cloth.follow") {
                s += &format!("follow = [{f}]\n");
            }
        }
        if let Some(collider) = get("collider") {
            s += "\n[[collider]]\n";
            for i in collider {
                s += &format!("{i}\n");
            }
            if let Some(k) = inline("collider.keys") {
                s += &format!("keys = [{k}]\n");
            }
        }
        s
    }

    /// What the scene reads as: its settings, cloths and colliders, or the error.
    fn read(&self, dir: &Path) -> Result<String, String> {
        let scene = parse_scene(&self.toml(), &dir.join("scene.toml"), &Limits::default())
            .map_err(|e| e.to_string())?;
        Ok(format!(
            "{:?}\n{:?}\n{:?}\n{:?}",
            scene.settings(),
            scene.cloths(),
            scene.colliders(),
            scene.mesh_colliders()
        ))
    }
}

const QUAD_OBJ: &str = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n\
f 1/1 2/2 3/3\nf 1/1 3/3 4/4\n";

/// A folder with the files the contexts name: `quad.obj` and an OBJ sequence `seq_0001.obj` to
/// `seq_0003.obj`.
fn files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("quad.obj"), QUAD_OBJ).unwrap();
    for k in 1..=3 {
        let moved = QUAD_OBJ.replace("v 0 0 0", &format!("v 0 0 {k}"));
        std::fs::write(dir.path().join(format!("seq_{k:04}.obj")), moved).unwrap();
    }
    dir
}

/// The scene a key of `table` is checked in.
fn context(table: &str, key: &str) -> Scene {
    let explicit: &[&str] = &[
        "name = \"c\"",
        "positions = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]",
        "triangles = [[0, 1, 2], [1, 3, 2]]",
        "edges = [[0, 1], [1, 3], [3, 2], [2, 0]]",
        "pins = [0]",
    ];
    let base = Scene::default().set("simulation", &["fps = 10.0", "frames = 1"]).set("cloth", explicit);
    let grid = |s: Scene| {
        s.set("cloth", &["name = \"c\"", "pins = [0]"])
            .set("cloth.grid", &["resolution = [3, 3]", "size = [1.0, 1.0]"])
    };
    match table {
        // A scene that names neither `substeps` nor `iterations` bakes to a strain tolerance: the
        // default of each is the one of the fixed mode, where the other is given.
        "simulation" => match key {
            "substeps" => base.add("simulation", &["iterations = 8"]),
            "iterations" => base.add("simulation", &["substeps = 4"]),
            _ => base,
        },
        "simulation.wind" => base.set("simulation.wind", &["time = 0.0", "velocity = [1.0, 0.0, 0.0]"]),
        "cloth" if kind_key(key).is_some() => {
            let (kind, ty) = kind_key(key).unwrap();
            let on: Vec<&str> = match ty {
                KeyType::Switch | KeyType::Pairs => Vec::new(),
                KeyType::Number => kind
                    .info()
                    .example
                    .iter()
                    .copied()
                    .filter(|i| !i.starts_with(&format!("{key} =")))
                    .collect(),
            };
            base.add("simulation", &["substeps = 4"]).add("cloth", &on)
        }
        "cloth" => {
            let s = match key {
                "positions" | "shear" | "pin_corners" | "warp_compliance" | "warp_stiffness"
                | "weft_compliance" | "weft_stiffness" => grid(base),
                "object" | "non_manifold" | "cache_proxy" => {
                    base.set("cloth", &["name = \"c\"", "mesh = \"quad.obj\"", "pins = [0]"])
                }
                _ => base,
            };
            let on: &[&str] = match key {
                "pressure" => &["volume_compliance = 0.001"],
                "volume_compliance" => &["pressure = 1.5"],
                "drag" => &["lift = 0.5"],
                "lift" => &["drag = 0.5"],
                "self_thickness" | "self_friction" => &["self_collision = true", "self_thickness = 0.1"],
                "cache_proxy" => &["render_mesh = \"quad.obj\""],
                _ => &[],
            };
            s.add("cloth", on)
        }
        "cloth.grid" => grid(base),
        "cloth.pin_box" => base.set("cloth.pin_box", &["min = [-1.0, -1.0, -1.0]", "max = [2.0, 2.0, 2.0]"]),
        "cloth.follow" => base.set("cloth.follow", &["time = 0.0"]),
        "collider" => {
            let items: &[&str] = match key {
                "normal" => &["shape = \"plane\""],
                "half_length" => &["shape = \"capsule\"", "radius = 0.5", "half_length = 0.5"],
                "half_extents" => &["shape = \"box\"", "half_extents = [0.5, 0.5, 0.5]"],
                "mesh" | "object" | "animation" => &["shape = \"mesh\"", "mesh = \"quad.obj\""],
                "animation_first" | "animation_fps" | "animation_start" => {
                    &["shape = \"mesh\"", "mesh = \"quad.obj\"", "animation = \"seq_####.obj\""]
                }
                "kinetic_friction" => &["shape = \"sphere\"", "radius = 0.5", "static_friction = 0.3"],
                _ => &["shape = \"sphere\"", "radius = 0.5"],
            };
            base.set("collider", items)
        }
        "collider.keys" => base
            .set(
                "collider",
                &[
                    "shape = \"sphere\"",
                    "radius = 0.5",
                    "position = [0.5, 0.25, 0.0]",
                    "rotation = [0.0, 0.0, 0.38268343, 0.9238795]",
                ],
            )
            .set("collider.keys", &["time = 0.0"]),
        other => panic!("no context for table '{other}'"),
    }
}

/// The batched kind whose key `key` is, with the key's type.
fn kind_key(key: &str) -> Option<(KindId, KeyType)> {
    KindId::ALL.iter().find_map(|&k| k.keys().iter().find(|(name, _)| *name == key).map(|&(_, ty)| (k, ty)))
}

/// The keys the code accepts in `table`: from serde's message for an unknown key.
fn accepted_keys(table: &str, dir: &Path) -> BTreeSet<String> {
    let scene = context(table, "").add(table, &["zz_not_a_key = 1"]);
    let error = scene.read(dir).expect_err("an unknown key is refused");
    let (_, expected) = error
        .split_once("unknown field `zz_not_a_key`, expected")
        .unwrap_or_else(|| panic!("{table}: no list of keys in: {error}"));
    let keys: BTreeSet<String> = expected.split('`').skip(1).step_by(2).map(str::to_string).collect();
    assert!(!keys.is_empty(), "{table}: no keys in: {error}");
    keys
}

/// Another value than `value`, of the same type.
fn probe(value: &str) -> String {
    let value = value.trim();
    if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
        let mut parts: Vec<String> = inner.split(',').map(|p| p.trim().to_string()).collect();
        parts[0] = probe(&parts[0]);
        return format!("[{}]", parts.join(", "));
    }
    match value {
        "true" => return "false".into(),
        "false" => return "true".into(),
        "\"xy\"" => return "\"xz\"".into(),
        "\"error\"" => return "\"skip\"".into(),
        _ => {}
    }
    if let Ok(i) = value.parse::<i64>() {
        return (i + 1).to_string();
    }
    if let Ok(f) = value.parse::<f64>() {
        return format!("{:?}", f * 2.0 + 0.25);
    }
    panic!("no other value known for {value}: add one to `probe`")
}

/// Checks one row of the reference; returns a problem, if any.
fn check(table: &str, row: &Row, dir: &Path) -> Result<(), String> {
    let key = row.key.as_str();
    let at = format!("docs/scene.md:{}: {table}.{key}", row.line);
    let full = context(table, key);
    let absent = full.clone().without(table, key);
    let read_absent = absent.read(dir);
    let default = row.default.as_str();
    if default.starts_with("required") {
        full.read(dir).map_err(|e| format!("{at}: the context does not read: {e}"))?;
        return match read_absent {
            Err(e) if e.contains(key) => Ok(()),
            Err(e) => Err(format!("{at}: documented as required; left out, the error does not name it: {e}")),
            Ok(_) => Err(format!("{at}: documented as required, but a scene without it reads")),
        };
    }
    let read_absent = read_absent.map_err(|e| format!("{at}: documented as optional, but left out: {e}"))?;
    let value = if default == "none" {
        return Ok(());
    } else if let Some(reference) = default.strip_prefix("same as `").and_then(|d| d.strip_suffix('`')) {
        let (t, k) = match reference.rsplit_once('.') {
            Some((t, k)) => (t, k),
            None => (table, reference),
        };
        full.value(t, k).ok_or_else(|| format!("{at}: the context has no {t}.{k} to be the same as"))?
    } else if let Some(v) = default.strip_prefix('`').and_then(|d| d.strip_suffix('`')) {
        v.to_string()
    } else {
        return Err(format!(
            "{at}: the default column is `required...`, a value in backticks, same as `KEY`, or none: {default}"
        ));
    };
    match absent.clone().with(table, key, &value).read(dir) {
        Ok(read) if read == read_absent => {}
        Ok(_) => {
            return Err(format!("{at}: documented default {default}, but {key} = {value} reads differently"));
        }
        Err(e) => {
            return Err(format!("{at}: documented default {default}, but {key} = {value} is refused: {e}"));
        }
    }
    let other = probe(&value);
    match absent.with(table, key, &other).read(dir) {
        Ok(read) if read == read_absent => {
            Err(format!("{at}: {key} = {other} reads like the default: the check would prove nothing"))
        }
        _ => Ok(()),
    }
}

#[test]
fn every_key_is_in_the_reference_with_the_code_default() {
    let text = std::fs::read_to_string(reference_path()).unwrap();
    let reference = read_reference(&text);
    let dir = files();
    let mut problems = Vec::new();
    for table in TABLES {
        let Some(rows) = reference.get(table) else {
            problems.push(format!("docs/scene.md: no table <!-- scene-table: {table} -->"));
            continue;
        };
        let documented: BTreeSet<String> = rows.iter().map(|r| r.key.clone()).collect();
        if documented.len() != rows.len() {
            problems.push(format!("docs/scene.md: {table}: a key is documented twice"));
        }
        let accepted = accepted_keys(table, dir.path());
        for missing in accepted.difference(&documented) {
            problems
                .push(format!("docs/scene.md: {table}: the key `{missing}` is accepted but not documented"));
        }
        for extra in documented.difference(&accepted) {
            problems
                .push(format!("docs/scene.md: {table}: the key `{extra}` is documented but not accepted"));
        }
        for row in rows {
            if accepted.contains(&row.key)
                && let Err(p) = check(table, row, dir.path())
            {
                problems.push(p);
            }
        }
    }
    assert!(problems.is_empty(), "the scene reference and the code disagree:\n{}", problems.join("\n"));
}

#[test]
fn the_reference_parser_reads_a_table() {
    let text = "x\n<!-- scene-table: simulation -->\n| key | type | unit | default | meaning |\n\
|---|---|---|---|---|\n| `fps` | float | 1/s | required | frames |\n\nafter\n";
    let tables = read_reference(text);
    let rows = &tables["simulation"];
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].key.as_str(), rows[0].default.as_str(), rows[0].line), ("fps", "required", 5));
}
