//! `[wedge]`: a sweep of scene parameters into named variants.
//!
//! ```toml
//! [wedge]
//! "cloth.curtain.stretch_compliance" = [1e-6, 1e-4]
//! "cloth.curtain.bending_compliance" = [1e-3, 1e-1]
//! ```
//!
//! Each key is the path of one scene key: `simulation.KEY`, `cloth.NAME.KEY` (the `[[cloth]]`
//! whose `name` is `NAME`) or `collider.NAME.KEY` (the named `[[collider]]`, mesh colliders
//! included), and `KEY` may go on into an inline table (`cloth.flag.grid.size`). Each value is an
//! array of the values the key takes. The variants are the cartesian product of the arrays, the
//! first key varying slowest, numbered from 0 ([`Wedge::variant`]).
//!
//! Variant `I` is the scene text with each key's value replaced by (or, for a key the table does
//! not set, given) its value in variant `I`, read by [`parse_scene`] like any scene: every rule of
//! a scene applies to it. An error in a variant is mapped back to the scene file: to the wedge's
//! value when it lies in the text the variant changed, else to the line of the file, and it names
//! the variant (and the wedge key). The `[wedge]` table itself is ignored by [`parse_scene`]:
//! [`load_scene`](super::load_scene) reads the scene as written.
//!
//! The rules of the table itself (each checked when it is read, naming the key): a key that
//! names no table of the scene, no cloth or collider of that name, or a key the table does not
//! take; a value that is not an array, or an empty array; two keys that change the same text; more
//! than [`MAX_VARIANTS`] variants. The naming rule is [`Variant::name`].

use std::ops::Range;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};
use weft_core::limits::Limits;

use super::error::{SceneError, SceneRule, SourcePos};
use super::spans::{Source, one_line, position};
use super::{Scene, parse_scene, plain_toml_message, read_scene_text};

/// The most variants a wedge may make (the product of its array lengths).
pub const MAX_VARIANTS: usize = 100_000;

/// The longest variant name, in bytes: longer names are cut (the index keeps them apart).
pub const MAX_NAME_BYTES: usize = 200;

/// One variant of a wedge: its index, its name and the value of each wedge key.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// From 0 to the variant count − 1.
    pub index: usize,
    /// A file-safe name, the folder a sweep bakes it into: `w` and the index (zero-padded to 3
    /// digits, or to the digits of the last index), then `_SHORT=VALUE` for each key in the
    /// wedge's order. `SHORT` is the key's last part (`stretch_compliance`), or as many of its
    /// last parts as tell it from every other key of the wedge (`a.density`, `b.density`).
    /// `VALUE` is an integer or a boolean as written, a float as the shortest text that reads
    /// back to the same number (in exponent form, `1e-06`, below 1e-4 and from 1e16), a string's
    /// characters, an array's or a table's values joined by `,`. Any character other than
    /// letters, digits and `.` `,` `+` `-` `=` `_` becomes `-`, and a name is cut to
    /// [`MAX_NAME_BYTES`]. Example: `w002_stretch_compliance=1e-06_bending_compliance=0.1`.
    pub name: String,
    /// `(wedge key, value)` for each key of the wedge, in the wedge's order.
    pub values: Vec<(String, toml::Value)>,
}

/// A scene's `[wedge]` table, read and checked: the keys, their values and where each goes.
#[derive(Debug, Clone)]
pub struct Wedge {
    /// The scene as written.
    source: String,
    /// The file as messages show it.
    file: String,
    keys: Vec<WedgeKey>,
    /// The short name of each key (see [`Variant::name`]).
    shorts: Vec<String>,
    count: usize,
    /// Where the `[wedge]` table starts.
    table_at: usize,
}

/// One key of a wedge.
#[derive(Debug, Clone)]
struct WedgeKey {
    key: String,
    /// Where the key is written in the wedge.
    key_at: usize,
    values: Vec<WedgeValue>,
    target: Target,
}

/// One value of a wedge key: its text as written, where, and what it is.
#[derive(Debug, Clone)]
struct WedgeValue {
    text: String,
    at: usize,
    value: toml::Value,
}

/// Where a wedge key's value goes in the scene text.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    /// The key is set: its value's text is replaced.
    Replace(Range<usize>),
    /// The key is not set: `before`, the key, ` = ` and the value are inserted at `at`.
    Insert { at: usize, before: &'static str, key: String },
}

/// One change a variant makes to the scene text: the range of the original replaced, and the
/// range of the new text, with the wedge key and value behind it.
#[derive(Debug, Clone)]
struct Edit {
    original: Range<usize>,
    new: Range<usize>,
    key: usize,
    value_at: usize,
}

/// What makes a scene a variant: the variant, and how its text maps back to the scene file.
#[derive(Debug, Clone)]
pub(super) struct Applied {
    pub(super) variant: Variant,
    /// The scene as written.
    original: String,
    file: String,
    edits: Vec<Edit>,
    keys: Vec<String>,
}

/// The variants of the scene file at `path`, in order; empty when the scene has no `[wedge]`.
/// The file is read under `limits.max_scene_bytes`.
pub fn wedge_variants(path: &Path, limits: &Limits) -> Result<Vec<Variant>, SceneError> {
    let text = read_scene_text(path, limits.max_scene_bytes)?;
    Ok(Wedge::parse(&text, path)?.map(|w| w.variants().collect()).unwrap_or_default())
}

/// Reads the scene file at `path` as its wedge's variant `index` (see the [module docs](self)).
/// A scene without `[wedge]`, or an index out of range, is an error.
pub fn load_scene_variant(path: &Path, limits: &Limits, index: usize) -> Result<Scene, SceneError> {
    let text = read_scene_text(path, limits.max_scene_bytes)?;
    parse_scene_variant(&text, path, limits, index)
}

/// [`load_scene_variant`] from the scene's text; `path` names the file in messages, and the files
/// the scene names are read relative to its folder.
pub fn parse_scene_variant(
    text: &str,
    path: &Path,
    limits: &Limits,
    index: usize,
) -> Result<Scene, SceneError> {
    match Wedge::parse(text, path)? {
        Some(wedge) => wedge.scene(index, path, limits),
        None => Err(SceneError::Invalid {
            at: Source::new(path, text).pos(0),
            place: "wedge".to_string(),
            rule: Box::new(SceneRule::NoWedge { index }),
        }),
    }
}

/// The values of one `[wedge]` key's array, each read as TOML (its text kept for the variant
/// names and edits).
fn wedge_values(
    array: &toml::de::DeArray<'_>,
    text: &str,
    source: &Source,
    place: &str,
) -> Result<Vec<WedgeValue>, SceneError> {
    let mut values = Vec::with_capacity(array.len());
    for element in array.iter() {
        let span = element.span();
        let text = text[span.clone()].to_string();
        let value = read_value(&text).map_err(|message| SceneError::Toml {
            at: source.pos(span.start),
            message: format!("{place}: {message}"),
        })?;
        values.push(WedgeValue { text, at: span.start, value });
    }
    Ok(values)
}

impl Wedge {
    /// Reads the `[wedge]` table of a scene's text (`Ok(None)` without one) and checks it: each
    /// key names a scene key, each value is a non-empty array whose every value the scene format
    /// takes for that key (its type; the rules of the model are checked per variant).
    pub fn parse(text: &str, path: &Path) -> Result<Option<Wedge>, SceneError> {
        let source = Source::new(path, text);
        let toml_error = |e: toml::de::Error| SceneError::Toml {
            at: source.pos(e.span().map_or(0, |s| s.start)),
            message: plain_toml_message(e.message()),
        };
        // The scene's own TOML errors first, as `parse_scene` reports them.
        toml::from_str::<super::raw::RawScene>(text).map_err(toml_error)?;
        let root = DeTable::parse(text).map_err(toml_error)?;
        let Some(table) = root.get_ref().get("wedge") else { return Ok(None) };
        let invalid = |at: usize, place: String, rule: SceneRule| SceneError::Invalid {
            at: source.pos(at),
            place: one_line(&place),
            rule: Box::new(rule),
        };
        let table_at = table.span().start;
        let DeValue::Table(entries) = table.get_ref() else {
            return Err(invalid(table_at, "wedge".into(), SceneRule::WedgeNotTable));
        };

        let mut leaves = Vec::new();
        flatten(entries, text, "", &mut leaves);
        leaves.sort_by_key(|(_, key_at, _)| *key_at);
        if leaves.is_empty() {
            return Err(invalid(table_at, "wedge".into(), SceneRule::WedgeEmpty));
        }
        let mut keys = Vec::with_capacity(leaves.len());
        let mut count: usize = 1;
        for (key, key_at, value) in leaves {
            let place = format!("wedge.\"{key}\"");
            let DeValue::Array(array) = value.get_ref() else {
                return Err(invalid(value.span().start, place, SceneRule::WedgeNotArray));
            };
            if array.is_empty() {
                return Err(invalid(value.span().start, place, SceneRule::WedgeEmptySweep));
            }
            let target =
                target(root.get_ref(), text, &key).map_err(|rule| invalid(key_at, place.clone(), rule))?;
            let values = wedge_values(array, text, &source, &place)?;
            count = count.checked_mul(values.len()).filter(|&n| n <= MAX_VARIANTS).ok_or_else(|| {
                invalid(value.span().start, place.clone(), SceneRule::WedgeTooLarge { limit: MAX_VARIANTS })
            })?;
            keys.push(WedgeKey { key, key_at, values, target });
        }
        check_overlaps(&keys).map_err(|(k, other)| {
            invalid(keys[k].key_at, format!("wedge.\"{}\"", keys[k].key), SceneRule::WedgeOverlap { other })
        })?;
        let shorts = short_names(&keys);
        let wedge = Wedge {
            source: text.to_string(),
            file: one_line(&path.display().to_string()),
            keys,
            shorts,
            count,
            table_at,
        };
        wedge.check_each_value(&source)?;
        Ok(Some(wedge))
    }

    /// Each value of each key, alone, must fit the scene format (its type, a key the table takes):
    /// the first that does not is refused at its place in the `[wedge]` table.
    fn check_each_value(&self, source: &Source) -> Result<(), SceneError> {
        for (k, key) in self.keys.iter().enumerate() {
            for v in 0..key.values.len() {
                let (variant_text, edits) = self.apply(&[(k, v)]);
                if let Err(e) = toml::from_str::<super::raw::RawScene>(&variant_text) {
                    let at = e.span().map_or(0, |s| s.start);
                    let message = plain_toml_message(e.message());
                    return Err(match edits.iter().find(|edit| edit.new.contains(&at)) {
                        Some(edit) => SceneError::Toml {
                            at: source.pos(edit.value_at),
                            message: format!("wedge \"{}\" = {}: {message}", key.key, key.values[v].text),
                        },
                        None => SceneError::Toml { at: source.pos(original_offset(&edits, at)), message },
                    });
                }
            }
        }
        Ok(())
    }

    /// The number of variants: the product of the arrays' lengths (at least 1).
    pub fn len(&self) -> usize {
        self.count
    }

    /// Never true: a wedge has at least one variant. (For the `len` convention.)
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The wedge keys, in the wedge's order (the first varies slowest).
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.keys.iter().map(|k| k.key.as_str())
    }

    /// Variant `index`; an index out of range is an error naming the count.
    pub fn variant(&self, index: usize) -> Result<Variant, SceneError> {
        if index >= self.count {
            return Err(SceneError::Invalid {
                at: position(&self.file, &self.source, self.table_at),
                place: "wedge".to_string(),
                rule: Box::new(SceneRule::WedgeIndex { index, count: self.count }),
            });
        }
        let choice = self.choice(index);
        let width = (self.count - 1).to_string().len().max(3);
        let mut name = format!("w{index:0width$}");
        for (k, &v) in choice.iter().enumerate() {
            name.push('_');
            name.push_str(&self.shorts[k]);
            name.push('=');
            name.push_str(&value_name(&self.keys[k].values[v].value));
        }
        let mut name: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || ".,+-=_".contains(c) { c } else { '-' })
            .collect();
        name.truncate(MAX_NAME_BYTES);
        let values = choice
            .iter()
            .enumerate()
            .map(|(k, &v)| (self.keys[k].key.clone(), self.keys[k].values[v].value.clone()))
            .collect();
        Ok(Variant { index, name, values })
    }

    /// Every variant, in order.
    pub fn variants(&self) -> impl Iterator<Item = Variant> + '_ {
        (0..self.count).filter_map(|i| self.variant(i).ok())
    }

    /// Variant `index` as a scene, read under `limits` (`path` as for [`parse_scene`]).
    pub fn scene(&self, index: usize, path: &Path, limits: &Limits) -> Result<Scene, SceneError> {
        let variant = self.variant(index)?;
        let choice: Vec<(usize, usize)> = self.choice(index).into_iter().enumerate().collect();
        let (text, edits) = self.apply(&choice);
        let applied = Applied {
            variant,
            original: self.source.clone(),
            file: self.file.clone(),
            edits,
            keys: self.keys.iter().map(|k| k.key.clone()).collect(),
        };
        let mut scene = parse_scene(&text, path, limits).map_err(|e| applied.relocate(e, &text))?;
        scene.variant = Some(Box::new(applied));
        Ok(scene)
    }

    /// The value index of each key in variant `index` (the first key varies slowest).
    fn choice(&self, index: usize) -> Vec<usize> {
        let mut rest = index;
        let mut choice = vec![0; self.keys.len()];
        for (k, key) in self.keys.iter().enumerate().rev() {
            choice[k] = rest % key.values.len();
            rest /= key.values.len();
        }
        choice
    }

    /// The scene text with `(key, value)` applied for each pair, and the edits made.
    fn apply(&self, choice: &[(usize, usize)]) -> (String, Vec<Edit>) {
        // (start, end) in the original, the text, key, value.
        let mut changes: Vec<(Range<usize>, String, usize, usize)> = choice
            .iter()
            .map(|&(k, v)| {
                let key = &self.keys[k];
                let value = &key.values[v];
                match &key.target {
                    Target::Replace(range) => (range.clone(), value.text.clone(), k, value.at),
                    Target::Insert { at, before, key: name } => {
                        (*at..*at, format!("{before}{name} = {}", value.text), k, value.at)
                    }
                }
            })
            .collect();
        changes.sort_by_key(|(range, _, k, _)| (range.start, *k));
        let mut text = String::with_capacity(self.source.len() + 64);
        let mut edits = Vec::with_capacity(changes.len());
        let mut done = 0;
        for (range, new, key, value_at) in changes {
            text.push_str(&self.source[done..range.start]);
            let start = text.len();
            text.push_str(&new);
            edits.push(Edit { original: range.clone(), new: start..text.len(), key, value_at });
            done = range.end;
        }
        text.push_str(&self.source[done..]);
        (text, edits)
    }
}

impl Applied {
    /// `error`, found in the variant's `text`, as an error of the scene file: its position mapped
    /// back (to the wedge's value when it lies in text the variant changed), the variant named.
    pub(super) fn relocate(&self, error: SceneError, text: &str) -> SceneError {
        let mut key = None;
        let mut map = |at: SourcePos| -> SourcePos {
            if at.file != self.file {
                return at;
            }
            let offset = offset_of(text, at.line, at.column);
            match self.edits.iter().find(|e| e.new.contains(&offset)) {
                Some(edit) => {
                    key = Some(edit.key);
                    position(&self.file, &self.original, edit.value_at)
                }
                None => position(&self.file, &self.original, original_offset(&self.edits, offset)),
            }
        };
        let (error, key) = match error {
            SceneError::Invalid { at, place, rule } => {
                (SceneError::Invalid { at: map(at), place, rule }, key)
            }
            SceneError::Toml { at, message } => (SceneError::Toml { at: map(at), message }, key),
            other => (other, None),
        };
        let mut named = format!("variant {}", self.variant.name);
        if let Some(k) = key {
            named.push_str(&format!(", wedge key \"{}\"", one_line(&self.keys[k])));
        }
        match error {
            SceneError::Invalid { at, place, rule } => {
                SceneError::Invalid { at, place: format!("{named}: {place}"), rule }
            }
            SceneError::Toml { at, message } => {
                SceneError::Toml { at, message: format!("{named}: {message}") }
            }
            other => other,
        }
    }
}

/// The byte offset of a 1-based line and character column in `text`.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    text[start..].char_indices().nth(column.saturating_sub(1)).map_or(text.len(), |(i, _)| start + i)
}

/// The offset in the original text of `offset` in a variant's text outside its edits.
fn original_offset(edits: &[Edit], offset: usize) -> usize {
    let mut shift: isize = 0;
    for edit in edits {
        if edit.new.end <= offset {
            shift = edit.original.end as isize - edit.new.end as isize;
        }
    }
    (offset as isize + shift).max(0) as usize
}

/// The leaves of the wedge table, `(key, where the key is, value)`: a table inside it (written
/// as a dotted key, `cloth.curtain.density = [...]`) continues the key.
fn flatten<'a, 'i>(
    table: &'a DeTable<'i>,
    text: &str,
    prefix: &str,
    out: &mut Vec<(String, usize, &'a Spanned<DeValue<'i>>)>,
) {
    for (key, value) in table.iter() {
        let full = if prefix.is_empty() {
            key.get_ref().to_string()
        } else {
            format!("{prefix}.{key}", key = key.get_ref())
        };
        match value.get_ref() {
            DeValue::Table(inner) if !text[value.span()].starts_with('{') => flatten(inner, text, &full, out),
            _ => out.push((full, key.span().start, value)),
        }
    }
}

/// A value as a `toml::Value`, from its text.
fn read_value(text: &str) -> Result<toml::Value, String> {
    let mut table: toml::Table =
        toml::from_str(&format!("v = {text}")).map_err(|e| plain_toml_message(e.message()))?;
    table.remove("v").ok_or_else(|| "no value".to_string())
}

/// Where wedge key `key` goes in the scene `root` (whose text is `text`).
fn target(root: &DeTable<'_>, text: &str, key: &str) -> Result<Target, SceneRule> {
    let not_table = || SceneRule::WedgeTable { key: key.to_string() };
    let (kind, rest) = key.split_once('.').ok_or_else(not_table)?;
    let (mut table, mut inline, place, rest) = match kind {
        "simulation" => {
            let Some(simulation) = root.get("simulation") else { return Err(not_table()) };
            let DeValue::Table(t) = simulation.get_ref() else { return Err(not_table()) };
            (t, text[simulation.span()].starts_with('{'), "[simulation]".to_string(), rest)
        }
        "cloth" | "collider" => named_table(root, text, kind, rest)?,
        _ => return Err(not_table()),
    };
    let parts: Vec<&str> = rest.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(not_table());
    }
    let (last, parents) = parts.split_last().ok_or_else(not_table)?;
    for part in parents {
        let value = table
            .get(*part)
            .ok_or_else(|| SceneRule::WedgeNoTable { place: place.clone(), table: part.to_string() })?;
        match value.get_ref() {
            DeValue::Table(t) if text[value.span()].starts_with('{') => {
                table = t;
                inline = true;
            }
            _ => return Err(SceneRule::WedgeNoTable { place: place.clone(), table: part.to_string() }),
        }
    }
    key_target(table, inline, text, last)
}

/// The `[[cloth]]` or `[[collider]]` (`kind`) whose name the key `rest` goes on from (the longest,
/// since names may hold dots): the table, whether it is written inline, its place in messages,
/// and the rest of the key after the name.
fn named_table<'t, 'k>(
    root: &'t DeTable<'_>,
    text: &str,
    kind: &str,
    rest: &'k str,
) -> Result<(&'t DeTable<'t>, bool, String, &'k str), SceneRule> {
    // Each table, and whether it is written inline.
    let tables: Vec<(&DeTable<'_>, bool)> = match root.get(kind).map(|v| v.get_ref()) {
        Some(DeValue::Array(a)) => a
            .iter()
            .filter_map(|t| match t.get_ref() {
                DeValue::Table(table) => Some((table, text[t.span()].starts_with('{'))),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let found = tables
        .iter()
        .filter_map(|&(t, inline)| {
            let name = t.get("name")?.get_ref().as_str()?;
            let after = rest.strip_prefix(name)?.strip_prefix('.')?;
            Some((name, t, inline, after))
        })
        .max_by_key(|(name, ..)| name.len());
    if let Some((name, t, inline, after)) = found {
        return Ok((t, inline, format!("{kind} '{name}'"), after));
    }
    let names: Vec<&str> =
        tables.iter().filter_map(|(t, _)| t.get("name").and_then(|n| n.get_ref().as_str())).collect();
    Err(SceneRule::WedgeNoName {
        kind: if kind == "cloth" { "[[cloth]]" } else { "[[collider]]" },
        name: rest.split('.').next().unwrap_or_default().to_string(),
        names: names.join(", "),
    })
}

/// Where key `last` of `table` (written inline or not) is edited: its value, replaced whole, or,
/// not set, inserted after the first key of the table written with a plain value.
fn key_target(table: &DeTable<'_>, inline: bool, text: &str, last: &str) -> Result<Target, SceneRule> {
    if let Some(value) = table.get(last) {
        let span = value.span();
        let written = &text[span.clone()];
        let whole = match value.get_ref() {
            DeValue::Table(_) => written.starts_with('{'),
            DeValue::Array(a) => !a.iter().any(|e| e.get_ref().is_table() && text[e.span()].starts_with('[')),
            _ => true,
        };
        if !whole {
            return Err(SceneRule::WedgeNotInline { key: last.to_string() });
        }
        return Ok(Target::Replace(span));
    }
    let anchor = table
        .iter()
        .filter(|(_, v)| match v.get_ref() {
            DeValue::Table(_) => inline,
            DeValue::Array(a) => !a.iter().any(|e| e.get_ref().is_table() && text[e.span()].starts_with('[')),
            _ => true,
        })
        .min_by_key(|(k, _)| k.span().start)
        .ok_or_else(|| SceneRule::WedgeNotInline { key: last.to_string() })?;
    let key_text = if last.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        last.to_string()
    } else {
        toml::Value::String(last.to_string()).to_string()
    };
    Ok(Target::Insert { at: anchor.1.span().end, before: if inline { ", " } else { "\n" }, key: key_text })
}

/// The first key whose target overlaps another's, with that other key.
fn check_overlaps(keys: &[WedgeKey]) -> Result<(), (usize, String)> {
    for (i, a) in keys.iter().enumerate() {
        for b in &keys[..i] {
            let clash = match (&a.target, &b.target) {
                (Target::Replace(x), Target::Replace(y)) => x.start < y.end && y.start < x.end,
                (Target::Insert { at, .. }, Target::Replace(r))
                | (Target::Replace(r), Target::Insert { at, .. }) => r.start < *at && *at < r.end,
                (Target::Insert { at: x, key: kx, .. }, Target::Insert { at: y, key: ky, .. }) => {
                    x == y && kx == ky
                }
            };
            if clash {
                return Err((i, b.key.clone()));
            }
        }
    }
    Ok(())
}

/// Each key's short name: as many of its last parts as tell it from every other key.
fn short_names(keys: &[WedgeKey]) -> Vec<String> {
    let parts: Vec<Vec<&str>> = keys.iter().map(|k| k.key.split('.').collect()).collect();
    let suffix = |p: &[&str], n: usize| p[p.len().saturating_sub(n)..].join(".");
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            (1..=p.len())
                .map(|n| suffix(p, n))
                .find(|s| {
                    parts
                        .iter()
                        .enumerate()
                        .all(|(j, q)| j == i || suffix(q, s.matches('.').count() + 1) != *s)
                })
                .unwrap_or_else(|| p.join("."))
        })
        .collect()
}

/// A value as it shows in a variant name (see [`Variant::name`]).
fn value_name(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => float_name(*f),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Array(a) => a.iter().map(value_name).collect::<Vec<_>>().join(","),
        toml::Value::Table(t) => t.values().map(value_name).collect::<Vec<_>>().join(","),
    }
}

/// The shortest text that reads back to `f`, in exponent form (`1e-06`, `2.5e+16`) below 1e-4
/// and from 1e16.
fn float_name(f: f64) -> String {
    if !f.is_finite() {
        return f.to_string().to_lowercase();
    }
    let exp = format!("{f:e}");
    let (mantissa, power) = exp.split_once('e').unwrap_or((&exp, "0"));
    let power: i32 = power.parse().unwrap_or(0);
    if f == 0.0 || (-4..16).contains(&power) {
        format!("{f}")
    } else {
        let sign = if power < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", power.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CURTAIN: &str = r#"[simulation]
fps = 60.0
frames = 2

[wedge]
"cloth.curtain.stretch_compliance" = [1e-6, 1e-4]
"cloth.curtain.bending_compliance" = [1e-3, 0.1, 10.0]

[[cloth]]
name = "curtain"
grid = { resolution = [5, 5], size = [1.0, 1.0] }
density = 0.2
stretch_compliance = 1e-5
pin_corners = ["top-left", "top-right"]
"#;

    fn wedge(text: &str) -> Result<Option<Wedge>, SceneError> {
        Wedge::parse(text, Path::new("w.toml"))
    }

    fn error(text: &str) -> String {
        let e = wedge(text).expect_err("the wedge should be refused").to_string();
        assert!(!e.contains('\n'), "{e}");
        e
    }

    #[test]
    fn variants_are_the_product_first_key_slowest_with_file_safe_names() {
        let w = wedge(CURTAIN).unwrap().unwrap();
        assert_eq!(w.len(), 6);
        let names: Vec<String> = w.variants().map(|v| v.name).collect();
        assert_eq!(names[0], "w000_stretch_compliance=1e-06_bending_compliance=0.001");
        assert_eq!(names[1], "w001_stretch_compliance=1e-06_bending_compliance=0.1");
        assert_eq!(names[2], "w002_stretch_compliance=1e-06_bending_compliance=10");
        assert_eq!(names[5], "w005_stretch_compliance=0.0001_bending_compliance=10");
        let v = w.variant(4).unwrap();
        assert_eq!(v.values[0], ("cloth.curtain.stretch_compliance".to_string(), toml::Value::Float(1e-4)));
        assert_eq!(v.values[1].1, toml::Value::Float(0.1));
        let e = w.variant(6).unwrap_err().to_string();
        assert!(e.starts_with("w.toml:5:1: wedge: "), "{e}");
        assert!(e.contains("variant 6") && e.contains("6 variants"), "{e}");
    }

    #[test]
    fn a_variant_replaces_and_adds_keys_and_keeps_every_line() {
        let w = wedge(CURTAIN).unwrap().unwrap();
        let scene = w.scene(3, Path::new("w.toml"), &Limits::default()).unwrap();
        assert_eq!(scene.variant().unwrap().index, 3);
        assert!(scene.text().contains("stretch_compliance = 1e-4\n"), "{}", scene.text());
        assert!(scene.text().contains("name = \"curtain\"\nbending_compliance = 1e-3\n"), "{}", scene.text());
        // A variant that breaks a rule of the model: named, at the wedge's value.
        let bad = CURTAIN.replace("[1e-6, 1e-4]", "[1e-6, -1.0]");
        let w = wedge(&bad).unwrap().unwrap();
        let e = w.scene(3, Path::new("w.toml"), &Limits::default()).unwrap_err().to_string();
        assert!(e.starts_with("w.toml:6:45: variant w003_stretch_compliance=-1_bending_compliance=0.001, wedge key \"cloth.curtain.stretch_compliance\": cloth 'curtain': stretch_compliance: "), "{e}");
        // An error elsewhere keeps its line in the file, after a key was added above it.
        let bad = CURTAIN.replace("density = 0.2", "density = -0.2");
        let e = wedge(&bad).unwrap().unwrap().scene(0, Path::new("w.toml"), &Limits::default());
        let e = e.and_then(|s| s.build_model().map(|_| s)).unwrap_err().to_string();
        assert!(e.starts_with("w.toml:12:11: variant w000_"), "{e}");
    }

    #[test]
    fn the_table_rules_name_the_key() {
        let with = |from: &str, to: &str| CURTAIN.replacen(from, to, 1);
        let e = error(&with("\"cloth.curtain.stretch_compliance\"", "\"cloth.curtain.strech_compliance\""));
        assert!(
            e.starts_with("w.toml:6:38: wedge \"cloth.curtain.strech_compliance\" = 1e-6: unknown field"),
            "{e}"
        );
        let e = error(&with("\"cloth.curtain.stretch_compliance\"", "\"cloth.nosuch.density\""));
        assert!(
            e.starts_with("w.toml:6:1: wedge.\"cloth.nosuch.density\": no [[cloth]] is named 'nosuch'"),
            "{e}"
        );
        assert!(e.contains("curtain"), "{e}");
        let e = error(&with("\"cloth.curtain.stretch_compliance\"", "\"simulaton.fps\""));
        assert!(e.contains("wedge.\"simulaton.fps\": ") && e.contains("simulation.KEY"), "{e}");
        let e = error(&with("[1e-6, 1e-4]", "1e-6"));
        assert!(e.starts_with("w.toml:6:38: ") && e.contains("array"), "{e}");
        let e = error(&with("[1e-6, 1e-4]", "[]"));
        assert!(e.starts_with("w.toml:6:38: ") && e.contains("empty"), "{e}");
        let e = error(&with("[1e-6, 1e-4]", "[1e-6, \"soft\"]"));
        assert!(e.starts_with("w.toml:6:45: wedge \"cloth.curtain.stretch_compliance\" = \"soft\": "), "{e}");
        let e = error("[simulation]\nfps = 1.0\nframes = 1\n[wedge]\n");
        assert!(e.starts_with("w.toml:4:1: wedge: ") && e.contains("no key"), "{e}");
    }

    #[test]
    fn dotted_keys_inline_tables_and_duplicate_short_names() {
        let text = r#"[simulation]
fps = 60.0
frames = 2

[wedge]
cloth.a.density = [0.1, 0.2]
"cloth.b.density" = [0.3]
"cloth.b.grid.origin" = [[0.0, 1.0, 0.0]]

[[cloth]]
name = "a"
grid = { resolution = [3, 3], size = [1.0, 1.0] }
density = 0.2

[[cloth]]
name = "b"
grid = { resolution = [3, 3], size = [1.0, 1.0] }
"#;
        let w = wedge(text).unwrap().unwrap();
        assert_eq!(
            w.keys().collect::<Vec<_>>(),
            ["cloth.a.density", "cloth.b.density", "cloth.b.grid.origin"]
        );
        assert_eq!(w.variant(1).unwrap().name, "w001_a.density=0.2_b.density=0.3_origin=0,1,0");
        let scene = w.scene(1, Path::new("w.toml"), &Limits::default()).unwrap();
        assert!(
            scene.text().contains("grid = { resolution = [3, 3], origin = [0.0, 1.0, 0.0], size"),
            "{}",
            scene.text()
        );
        let model = scene.build_model().unwrap();
        assert_eq!(model.cloths().len(), 2);
    }

    #[test]
    fn a_key_is_added_to_a_table_written_inline() {
        let text = "simulation = { fps = 30.0, frames = 1 }\n\
                    cloth = [{ name = \"c\", grid = { resolution = [3, 3], size = [1.0, 1.0] }, density = 0.2 }]\n\
                    [wedge]\n\"cloth.c.bending_compliance\" = [0.5]\n\"simulation.substeps\" = [3]\n";
        let w = wedge(text).unwrap().unwrap();
        let scene = w.scene(0, Path::new("w.toml"), &Limits::default()).unwrap();
        assert!(
            scene.text().starts_with("simulation = { fps = 30.0, substeps = 3, frames = 1 }\n"),
            "{}",
            scene.text()
        );
        assert!(scene.text().contains("{ name = \"c\", bending_compliance = 0.5, grid"), "{}", scene.text());
        assert_eq!(scene.settings().substeps, 3);
        scene.build_model().unwrap();
    }

    #[test]
    fn floats_are_named_as_short_as_they_read_back() {
        assert_eq!(float_name(1e-6), "1e-06");
        assert_eq!(float_name(1.5e-7), "1.5e-07");
        assert_eq!(float_name(1e-4), "0.0001");
        assert_eq!(float_name(0.1), "0.1");
        assert_eq!(float_name(250.0), "250");
        assert_eq!(float_name(2.5e16), "2.5e+16");
        assert_eq!(float_name(0.0), "0");
    }
}
