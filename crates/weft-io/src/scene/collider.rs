//! `[[collider]]` tables: rigid shapes the cloth cannot enter (see `weft_core::collider`).
//!
//! ```toml
//! [[collider]]
//! name = "ball"
//! shape = "sphere"
//! radius = 0.3                       # m
//! position = [0.0, 0.5, 0.0]         # m
//! thickness = 0.01                   # m
//! friction = 0.4                     # static and kinetic
//!
//! [[collider]]
//! name = "arm"
//! shape = "capsule"
//! radius = 0.1
//! half_length = 0.5
//! keys = [
//!   { time = 0.0, rotation = [0.0, 0.0, 0.0, 1.0] },
//!   { time = 1.0, rotation = [0.0, 0.7071068, 0.0, 0.7071068] },   # a quarter turn about y
//! ]
//! ```
//!
//! | key | type | unit | default | meaning |
//! |---|---|---|---|---|
//! | `name` | string | — | `collider #N` | for messages |
//! | `shape` | string | — | required | `"plane"`, `"sphere"`, `"capsule"` or `"box"` |
//! | `normal` | `[x, y, z]` | — | `[0, 1, 0]` | plane: the local normal (any non-zero length); outside is the side it points to |
//! | `radius` | float | m | required | sphere, capsule (`> 0`) |
//! | `half_length` | float | m | required | capsule: half the distance between its cap centres, along local y (`≥ 0`) |
//! | `half_extents` | `[x, y, z]` | m | required | box: half its size along local x, y, z (each `> 0`) |
//! | `position` | `[x, y, z]` | m | `[0, 0, 0]` | where the local origin is (and the default of each key's) |
//! | `rotation` | `[x, y, z, w]` | — | `[0, 0, 0, 1]` | local-to-world rotation as a quaternion of any non-zero length (and the default of each key's) |
//! | `keys` | list of `{ time, position, rotation }` | s, m, — | one key at `position`, `rotation` | an animated transform: times `≥ 0`, strictly increasing; positions interpolated linearly, rotations by slerp (the shorter way: key turns under 180°), held before the first key and after the last |
//! | `thickness` | float | m | `0.005` | the distance from the surface the cloth is kept at (`≥ 0`) |
//! | `friction` | float | — | `0` | both Coulomb coefficients at once (`≥ 0`); exclusive with the two below |
//! | `static_friction` | float | — | `0` | static coefficient `μs` (`≥ 0`) |
//! | `kinetic_friction` | float | — | `static_friction` | kinetic coefficient `μk` (`≥ 0`) |

use serde::Deserialize;
use toml::Spanned;
use weft_core::collider::{ColliderDesc, ColliderShape, DEFAULT_THICKNESS, Friction, RigidKey};

use super::error::{SceneError, SceneRule};
use super::raw::{Fixed, SpannedList};
use super::spans::{Source, one_line};

/// One `[[collider]]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCollider {
    name: Option<Spanned<String>>,
    shape: Spanned<ShapeName>,
    normal: Option<Spanned<Fixed<f64, 3>>>,
    radius: Option<Spanned<f64>>,
    half_length: Option<Spanned<f64>>,
    half_extents: Option<Spanned<Fixed<f64, 3>>>,
    position: Option<Spanned<Fixed<f64, 3>>>,
    rotation: Option<Spanned<Fixed<f64, 4>>>,
    keys: Option<SpannedList<RawKey>>,
    thickness: Option<Spanned<f64>>,
    friction: Option<Spanned<f64>>,
    static_friction: Option<Spanned<f64>>,
    kinetic_friction: Option<Spanned<f64>>,
}

/// `shape = "plane" | "sphere" | "capsule" | "box"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ShapeName {
    Plane,
    Sphere,
    Capsule,
    Box,
}

/// One `{ time, position, rotation }` of `keys`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKey {
    time: Spanned<f64>,
    position: Option<Spanned<Fixed<f64, 3>>>,
    rotation: Option<Spanned<Fixed<f64, 4>>>,
}

/// Where a key's `time` is.
fn key_time_at(k: &Spanned<RawKey>) -> usize {
    k.get_ref().time.span().start
}

/// A number that must be finite and fit an `f32`.
fn number(v: f64) -> Result<f32, SceneRule> {
    if !v.is_finite() {
        return Err(SceneRule::Model(weft_core::Rule::NotFinite { value: v.to_string() }));
    }
    let f = v as f32;
    if f.is_finite() && (f != 0.0 || v == 0.0) { Ok(f) } else { Err(SceneRule::NotF32 { value: v }) }
}

fn numbers<const N: usize>(v: &Fixed<f64, N>) -> Result<[f32; N], SceneRule> {
    let mut out = [0.0; N];
    for (slot, &x) in out.iter_mut().zip(&v.0) {
        *slot = number(x)?;
    }
    Ok(out)
}

/// Converts the `[[collider]]` tables, checking every rule of [`ColliderDesc::validate`] and
/// pointing an error at the key (or key element) that breaks it.
pub(super) fn convert(
    raw: Vec<Spanned<RawCollider>>,
    source: &Source,
) -> Result<Vec<ColliderDesc>, SceneError> {
    raw.into_iter().enumerate().map(|(i, c)| one(i, c, source)).collect()
}

fn one(ordinal: usize, raw: Spanned<RawCollider>, source: &Source) -> Result<ColliderDesc, SceneError> {
    let table = raw.span().start;
    let raw = raw.into_inner();
    let name =
        raw.name.as_ref().map(|n| n.get_ref().clone()).unwrap_or_else(|| format!("collider #{ordinal}"));
    let shown = match &raw.name {
        Some(n) => format!("collider '{}'", one_line(n.get_ref())),
        None => format!("collider #{ordinal}"),
    };
    let fail = |place: &str, at: usize, rule: SceneRule| SceneError::Invalid {
        at: source.pos(at),
        place: format!("{shown}: {place}"),
        rule: Box::new(rule),
    };
    let scalar = |key: &str, v: &Spanned<f64>| number(*v.get_ref()).map_err(|r| fail(key, v.span().start, r));
    let start = |v: &Option<Spanned<f64>>| v.as_ref().map(|v| v.span().start);

    // The shape and its dimensions; a dimension of another shape is an error.
    let shape_at = raw.shape.span().start;
    let kind = *raw.shape.get_ref();
    let dims: [(&'static str, Option<usize>, &'static str, bool); 4] = [
        (
            "normal",
            raw.normal.as_ref().map(|v| v.span().start),
            "shape = \"plane\"",
            kind == ShapeName::Plane,
        ),
        (
            "radius",
            start(&raw.radius),
            "shape = \"sphere\" or \"capsule\"",
            matches!(kind, ShapeName::Sphere | ShapeName::Capsule),
        ),
        ("half_length", start(&raw.half_length), "shape = \"capsule\"", kind == ShapeName::Capsule),
        (
            "half_extents",
            raw.half_extents.as_ref().map(|v| v.span().start),
            "shape = \"box\"",
            kind == ShapeName::Box,
        ),
    ];
    for (key, at, needs, fits) in dims {
        if let (Some(at), false) = (at, fits) {
            return Err(fail(key, at, SceneRule::Needs { key, needs }));
        }
    }
    fn required<'v>(
        v: &'v Option<Spanned<f64>>,
        needs: &'static str,
        fail: impl Fn(&str, usize, SceneRule) -> SceneError,
        shape_at: usize,
    ) -> Result<&'v Spanned<f64>, SceneError> {
        v.as_ref().ok_or_else(|| fail("shape", shape_at, SceneRule::Needs { key: "shape", needs }))
    }
    let shape = match kind {
        ShapeName::Plane => {
            let normal = match &raw.normal {
                Some(n) => numbers(n.get_ref()).map_err(|r| fail("normal", n.span().start, r))?,
                None => [0.0, 1.0, 0.0],
            };
            ColliderShape::Plane { normal }
        }
        ShapeName::Sphere => {
            let radius =
                scalar("radius", required(&raw.radius, "`radius` (m) for a sphere", fail, shape_at)?)?;
            ColliderShape::Sphere { radius }
        }
        ShapeName::Capsule => {
            let radius =
                scalar("radius", required(&raw.radius, "`radius` (m) for a capsule", fail, shape_at)?)?;
            let half_length = scalar(
                "half_length",
                required(&raw.half_length, "`half_length` (m) for a capsule", fail, shape_at)?,
            )?;
            ColliderShape::Capsule { radius, half_length }
        }
        ShapeName::Box => match &raw.half_extents {
            Some(e) => ColliderShape::Box {
                half_extents: numbers(e.get_ref()).map_err(|r| fail("half_extents", e.span().start, r))?,
            },
            None => {
                let needs = "`half_extents` = [x, y, z] (m) for a box";
                return Err(fail("shape", shape_at, SceneRule::Needs { key: "shape", needs }));
            }
        },
    };

    // The transform: one key from `position` and `rotation`, or `keys` defaulting to them.
    let position = match &raw.position {
        Some(p) => numbers(p.get_ref()).map_err(|r| fail("position", p.span().start, r))?,
        None => [0.0; 3],
    };
    let rotation = match &raw.rotation {
        Some(q) => numbers(q.get_ref()).map_err(|r| fail("rotation", q.span().start, r))?,
        None => [0.0, 0.0, 0.0, 1.0],
    };
    let keys_at = raw.keys.as_ref().map(|k| k.span().start);
    let mut keys = Vec::new();
    let mut key_spans = Vec::new();
    match &raw.keys {
        None => keys.push(RigidKey { time: 0.0, position, rotation }),
        Some(list) => {
            if list.get_ref().is_empty() {
                return Err(fail("keys", list.span().start, SceneRule::EmptyList { key: "keys" }));
            }
            for (i, k) in list.get_ref().iter().enumerate() {
                let place = |key: &str| format!("keys[{i}].{key}");
                let k_at = key_time_at(k);
                let key = k.get_ref();
                let time = number(*key.time.get_ref())
                    .map_err(|r| fail(&place("time"), key.time.span().start, r))?;
                let p = match &key.position {
                    Some(p) => {
                        numbers(p.get_ref()).map_err(|r| fail(&place("position"), p.span().start, r))?
                    }
                    None => position,
                };
                let q = match &key.rotation {
                    Some(q) => {
                        numbers(q.get_ref()).map_err(|r| fail(&place("rotation"), q.span().start, r))?
                    }
                    None => rotation,
                };
                keys.push(RigidKey { time, position: p, rotation: q });
                key_spans.push((
                    k_at,
                    key.position.as_ref().map(|p| p.span().start),
                    key.rotation.as_ref().map(|q| q.span().start),
                ));
            }
        }
    }

    let thickness = match &raw.thickness {
        Some(t) => scalar("thickness", t)?,
        None => DEFAULT_THICKNESS,
    };
    if let (Some(f), Some(other)) =
        (&raw.friction, raw.static_friction.as_ref().or(raw.kinetic_friction.as_ref()))
    {
        let (key, at) = if f.span().start > other.span().start {
            ("friction", f.span().start)
        } else {
            (
                if raw.static_friction.is_some() { "static_friction" } else { "kinetic_friction" },
                other.span().start,
            )
        };
        let second = if key == "friction" {
            if raw.static_friction.is_some() { "static_friction" } else { "kinetic_friction" }
        } else {
            key
        };
        return Err(fail(key, at, SceneRule::Conflict { first: "friction", second }));
    }
    let friction = match (&raw.friction, &raw.static_friction, &raw.kinetic_friction) {
        (Some(f), _, _) => {
            let mu = scalar("friction", f)?;
            Friction { static_coefficient: mu, kinetic_coefficient: mu }
        }
        (None, s, k) => {
            let mu_s = s.as_ref().map(|s| scalar("static_friction", s)).transpose()?.unwrap_or(0.0);
            let mu_k = k.as_ref().map(|k| scalar("kinetic_friction", k)).transpose()?.unwrap_or(mu_s);
            Friction { static_coefficient: mu_s, kinetic_coefficient: mu_k }
        }
    };

    let desc = ColliderDesc { name, shape, keys, thickness, friction };
    desc.validate().map_err(|e| {
        // Point at the key, or the key element, that breaks the rule.
        let key_elem = |i: usize| key_spans.get(i).copied();
        let at = match (e.field, e.index) {
            ("keys", Some(i)) => key_elem(i).map(|k| k.0),
            ("keys", None) => keys_at,
            ("position", Some(i)) => {
                key_elem(i).and_then(|k| k.1).or(raw.position.as_ref().map(|p| p.span().start))
            }
            ("rotation", Some(i)) => {
                key_elem(i).and_then(|k| k.2).or(raw.rotation.as_ref().map(|q| q.span().start))
            }
            ("position", None) => raw.position.as_ref().map(|p| p.span().start),
            ("rotation", None) => raw.rotation.as_ref().map(|q| q.span().start),
            ("normal", _) => raw.normal.as_ref().map(|n| n.span().start),
            ("radius", _) => start(&raw.radius),
            ("half_length", _) => start(&raw.half_length),
            ("half_extents", _) => raw.half_extents.as_ref().map(|v| v.span().start),
            ("thickness", _) => start(&raw.thickness),
            ("static_friction", _) => start(&raw.static_friction).or(start(&raw.friction)),
            ("kinetic_friction", _) => {
                start(&raw.kinetic_friction).or(start(&raw.friction)).or(start(&raw.static_friction))
            }
            _ => None,
        }
        .unwrap_or(table);
        let place = match e.index {
            Some(i) if e.field == "keys" => format!("keys[{i}].time"),
            Some(i) => format!("keys[{i}].{}", e.field),
            // `friction` sets both coefficients: name the key the file has.
            None if matches!(e.field, "static_friction" | "kinetic_friction") && raw.friction.is_some() => {
                "friction".to_string()
            }
            None => e.field.to_string(),
        };
        fail(&place, at, SceneRule::Model(e.rule))
    })?;
    Ok(desc)
}
