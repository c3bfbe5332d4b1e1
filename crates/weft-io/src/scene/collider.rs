//! `[[collider]]` tables: rigid shapes the cloth cannot enter (see `weft_core::collider`), and
//! triangle meshes, static or animated (see `weft_core::mesh_collider`). The keys are documented
//! in the repository's `docs/scene.md`.

use serde::Deserialize;
use toml::Spanned;
use weft_core::collider::{
    ColliderDesc, ColliderError, ColliderShape, DEFAULT_THICKNESS, Friction, RigidKey, validate_keys,
};
use weft_core::limits::Limits;
use weft_core::mesh_collider::MeshColliderDesc;

use super::error::{SceneError, SceneRule, SourcePos};
use super::raw::{Fixed, OneOrList, SpannedList};
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
    pub(super) mesh: Option<Spanned<String>>,
    pub(super) object: Option<Spanned<OneOrList<String>>>,
    pub(super) animation: Option<Spanned<String>>,
    pub(super) animation_first: Option<Spanned<i64>>,
    pub(super) animation_fps: Option<Spanned<f64>>,
    pub(super) animation_start: Option<Spanned<f64>>,
    position: Option<Spanned<Fixed<f64, 3>>>,
    rotation: Option<Spanned<Fixed<f64, 4>>>,
    keys: Option<SpannedList<RawKey>>,
    thickness: Option<Spanned<f64>>,
    friction: Option<Spanned<f64>>,
    static_friction: Option<Spanned<f64>>,
    kinetic_friction: Option<Spanned<f64>>,
}

/// `shape = "plane" | "sphere" | "capsule" | "box" | "mesh"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ShapeName {
    Plane,
    Sphere,
    Capsule,
    Box,
    Mesh,
}

/// One `{ time, position, rotation }` of a collider's `keys` or a cloth's `follow`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawKey {
    time: Spanned<f64>,
    position: Option<Spanned<Fixed<f64, 3>>>,
    rotation: Option<Spanned<Fixed<f64, 4>>>,
}

/// A number that must be finite and fit an `f32`.
pub(super) fn number(v: f64) -> Result<f32, SceneRule> {
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

/// The colliders of a scene, with where each is for the errors of the model builder.
#[derive(Debug, Default)]
pub(super) struct Colliders {
    /// Analytic colliders, in file order.
    pub(super) analytic: Vec<ColliderDesc>,
    /// Mesh colliders, in file order.
    pub(super) meshes: Vec<MeshColliderDesc>,
    /// For each analytic collider: where its table starts and how messages name it.
    pub(super) analytic_places: Vec<(usize, String)>,
    /// For each mesh collider: where its `mesh` key is and how messages name it.
    pub(super) mesh_places: Vec<(usize, String)>,
}

/// How messages name one collider, and its errors.
pub(super) struct Place<'s> {
    pub(super) source: &'s Source,
    /// `collider 'NAME'` or `collider #N`.
    pub(super) shown: String,
}

impl Place<'_> {
    /// An error at byte `at` of the scene file.
    pub(super) fn fail(&self, place: &str, at: usize, rule: SceneRule) -> SceneError {
        SceneError::Invalid {
            at: self.source.pos(at),
            place: format!("{}: {place}", self.shown),
            rule: Box::new(rule),
        }
    }

    /// An error on line `line` of another file (an OBJ file).
    pub(super) fn fail_in(&self, file: &str, line: usize, place: &str, rule: SceneRule) -> SceneError {
        SceneError::Invalid {
            at: SourcePos { file: file.to_string(), line, column: 1 },
            place: format!("{}: {place}", self.shown),
            rule: Box::new(rule),
        }
    }
}

/// Where each element of a list of keys is: the key, its `position`, its `rotation`.
pub(super) type KeySpans = Vec<(usize, Option<usize>, Option<usize>)>;

/// Converts a list of `{ time, position, rotation }` keys (`keys` of a collider, `follow` of a
/// cloth) whose missing positions and rotations default to `position` and `rotation`. Errors are
/// made by `fail(place, at, rule)` with `place` = `KEY[i].FIELD`.
pub(super) fn rigid_keys(
    key: &str,
    list: &[Spanned<RawKey>],
    position: [f32; 3],
    rotation: [f32; 4],
    fail: &dyn Fn(&str, usize, SceneRule) -> SceneError,
) -> Result<(Vec<RigidKey>, KeySpans), SceneError> {
    let mut keys = Vec::with_capacity(list.len());
    let mut spans = Vec::with_capacity(list.len());
    for (i, k) in list.iter().enumerate() {
        let place = |field: &str| format!("{key}[{i}].{field}");
        let raw = k.get_ref();
        let time = number(*raw.time.get_ref()).map_err(|r| fail(&place("time"), raw.time.span().start, r))?;
        let p = match &raw.position {
            Some(p) => numbers(p.get_ref()).map_err(|r| fail(&place("position"), p.span().start, r))?,
            None => position,
        };
        let q = match &raw.rotation {
            Some(q) => numbers(q.get_ref()).map_err(|r| fail(&place("rotation"), q.span().start, r))?,
            None => rotation,
        };
        keys.push(RigidKey { time, position: p, rotation: q });
        spans.push((
            raw.time.span().start,
            raw.position.as_ref().map(|p| p.span().start),
            raw.rotation.as_ref().map(|q| q.span().start),
        ));
    }
    Ok((keys, spans))
}

/// Where a key rule broken in element `index` of a key list is (`None`: not in an element), and
/// the place to show, `KEY[i].FIELD`.
pub(super) fn key_error_at(key: &str, spans: &KeySpans, e: &ColliderError) -> Option<(String, usize)> {
    let i = e.index?;
    let (time, position, rotation) = *spans.get(i)?;
    match e.field {
        "keys" => Some((format!("{key}[{i}].time"), time)),
        "position" => position.map(|at| (format!("{key}[{i}].position"), at)),
        "rotation" => rotation.map(|at| (format!("{key}[{i}].rotation"), at)),
        _ => None,
    }
}

/// Checks a cloth's `follow` keys (default position the origin, no rotation), pointing an error
/// at the element that breaks a rule.
pub(super) fn follow_keys(
    list: &[Spanned<RawKey>],
    list_at: usize,
    fail: &dyn Fn(&str, usize, SceneRule) -> SceneError,
) -> Result<Vec<RigidKey>, SceneError> {
    if list.is_empty() {
        return Err(fail("follow", list_at, SceneRule::EmptyList { key: "follow" }));
    }
    let (keys, spans) = rigid_keys("follow", list, [0.0; 3], [0.0, 0.0, 0.0, 1.0], fail)?;
    validate_keys(&keys).map_err(|e| {
        let (place, at) = key_error_at("follow", &spans, &e).unwrap_or(("follow".to_string(), list_at));
        fail(&place, at, SceneRule::Model(e.rule))
    })?;
    Ok(keys)
}

/// Converts the `[[collider]]` tables, checking every rule of [`ColliderDesc::validate`] and
/// [`MeshColliderDesc::validate`] and pointing an error at the key (or key element, or file line)
/// that breaks it. Mesh files are read relative to the scene's folder under `limits`; `fps` (the
/// simulation's) is the default `animation_fps`. An error comes with where its collider's table
/// starts in the scene text (so that the scene's first error in file order can be told).
pub(super) fn convert(
    raw: Vec<Spanned<RawCollider>>,
    source: &Source,
    limits: &Limits,
    fps: f64,
) -> Result<Colliders, (usize, SceneError)> {
    let mut out = Colliders::default();
    // Every name so far, and where it is.
    let mut names: Vec<(String, usize)> = Vec::new();
    for (ordinal, c) in raw.into_iter().enumerate() {
        let table = c.span().start;
        convert_one(ordinal, c, &mut names, &mut out, source, limits, fps).map_err(|e| (table, e))?;
    }
    Ok(out)
}

/// Converts collider `ordinal` into `out`, its name added to `names` (every name so far, and
/// where it is).
fn convert_one(
    ordinal: usize,
    c: Spanned<RawCollider>,
    names: &mut Vec<(String, usize)>,
    out: &mut Colliders,
    source: &Source,
    limits: &Limits,
    fps: f64,
) -> Result<(), SceneError> {
    let table = c.span().start;
    let raw = c.into_inner();
    let name =
        raw.name.as_ref().map(|n| n.get_ref().clone()).unwrap_or_else(|| format!("collider #{ordinal}"));
    let shown = match &raw.name {
        Some(n) => format!("collider '{}'", one_line(n.get_ref())),
        None => format!("collider #{ordinal}"),
    };
    let place = Place { source, shown };
    let name_at = raw.name.as_ref().map_or(table, |n| n.span().start);
    if let Some((_, first)) = names.iter().find(|(n, _)| *n == name) {
        let rule = SceneRule::DuplicateCollider { name: one_line(&name), line: source.pos(*first).line };
        return Err(place.fail("name", name_at, rule));
    }
    names.push((name.clone(), name_at));
    if *raw.shape.get_ref() == ShapeName::Mesh {
        let at = raw.mesh.as_ref().map_or(table, |m| m.span().start);
        let desc = mesh(name, &raw, &place, limits, fps)?;
        out.meshes.push(desc);
        out.mesh_places.push((at, place.shown));
    } else {
        out.analytic.push(one(name, &raw, &place)?);
        out.analytic_places.push((table, place.shown));
    }
    Ok(())
}

/// What every collider has: its transform, thickness and friction, and where their keys are.
struct Common {
    keys: Vec<RigidKey>,
    key_spans: KeySpans,
    thickness: f32,
    friction: Friction,
}

impl RawCollider {
    /// Where an optional key's value starts.
    fn at<T>(v: &Option<Spanned<T>>) -> Option<usize> {
        v.as_ref().map(|v| v.span().start)
    }

    /// Refuses the keys of other shapes: each `(key, present at, needs, fits this shape)`.
    fn refuse_others(&self, place: &Place<'_>) -> Result<(), SceneError> {
        let kind = *self.shape.get_ref();
        let mesh = kind == ShapeName::Mesh;
        let dims: [(&'static str, Option<usize>, &'static str, bool); 10] = [
            ("normal", Self::at(&self.normal), "shape = \"plane\"", kind == ShapeName::Plane),
            (
                "radius",
                Self::at(&self.radius),
                "shape = \"sphere\" or \"capsule\"",
                matches!(kind, ShapeName::Sphere | ShapeName::Capsule),
            ),
            ("half_length", Self::at(&self.half_length), "shape = \"capsule\"", kind == ShapeName::Capsule),
            ("half_extents", Self::at(&self.half_extents), "shape = \"box\"", kind == ShapeName::Box),
            ("mesh", Self::at(&self.mesh), "shape = \"mesh\"", mesh),
            ("object", Self::at(&self.object), "shape = \"mesh\"", mesh),
            ("animation", Self::at(&self.animation), "shape = \"mesh\"", mesh),
            ("animation_first", Self::at(&self.animation_first), "shape = \"mesh\"", mesh),
            ("animation_fps", Self::at(&self.animation_fps), "shape = \"mesh\"", mesh),
            ("animation_start", Self::at(&self.animation_start), "shape = \"mesh\"", mesh),
        ];
        // The first such key in the file.
        let refused = dims
            .into_iter()
            .filter_map(|(key, at, needs, fits)| if fits { None } else { Some((key, at?, needs)) })
            .min_by_key(|&(_, at, _)| at);
        match refused {
            Some((key, at, needs)) => Err(place.fail(key, at, SceneRule::Needs { key, needs })),
            None => Ok(()),
        }
    }

    /// The transform (one key from `position` and `rotation`, or `keys` defaulting to them), the
    /// thickness and the friction.
    fn common(&self, place: &Place<'_>) -> Result<Common, SceneError> {
        let fail = |p: &str, at: usize, rule: SceneRule| place.fail(p, at, rule);
        let scalar =
            |key: &str, v: &Spanned<f64>| number(*v.get_ref()).map_err(|r| fail(key, v.span().start, r));
        let position = match &self.position {
            Some(p) => numbers(p.get_ref()).map_err(|r| fail("position", p.span().start, r))?,
            None => [0.0; 3],
        };
        let rotation = match &self.rotation {
            Some(q) => numbers(q.get_ref()).map_err(|r| fail("rotation", q.span().start, r))?,
            None => [0.0, 0.0, 0.0, 1.0],
        };
        let (keys, key_spans) = match &self.keys {
            None => (vec![RigidKey { time: 0.0, position, rotation }], Vec::new()),
            Some(list) => {
                if list.get_ref().is_empty() {
                    return Err(fail("keys", list.span().start, SceneRule::EmptyList { key: "keys" }));
                }
                rigid_keys("keys", list.get_ref(), position, rotation, &fail)?
            }
        };

        let thickness = match &self.thickness {
            Some(t) => scalar("thickness", t)?,
            None => DEFAULT_THICKNESS,
        };
        if let (Some(f), Some(other)) =
            (&self.friction, self.static_friction.as_ref().or(self.kinetic_friction.as_ref()))
        {
            let (key, at) = if f.span().start > other.span().start {
                ("friction", f.span().start)
            } else {
                (
                    if self.static_friction.is_some() { "static_friction" } else { "kinetic_friction" },
                    other.span().start,
                )
            };
            let second = if key == "friction" {
                if self.static_friction.is_some() { "static_friction" } else { "kinetic_friction" }
            } else {
                key
            };
            return Err(fail(key, at, SceneRule::Conflict { first: "friction", second }));
        }
        let friction = match (&self.friction, &self.static_friction, &self.kinetic_friction) {
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
        Ok(Common { keys, key_spans, thickness, friction })
    }

    /// Where a broken rule of the transform, thickness or friction is, and the place to show;
    /// `None` for a field that is not one of them.
    fn common_error_at(&self, key_spans: &KeySpans, e: &ColliderError) -> Option<(String, usize)> {
        if let Some(found) = key_error_at("keys", key_spans, e) {
            return Some(found);
        }
        let at = |v: &Option<Spanned<f64>>| Self::at(v);
        let found = match e.field {
            "keys" => Self::at(&self.keys),
            "position" => Self::at(&self.position),
            "rotation" => Self::at(&self.rotation),
            "thickness" => at(&self.thickness),
            "static_friction" => at(&self.static_friction).or(at(&self.friction)),
            "kinetic_friction" => {
                at(&self.kinetic_friction).or(at(&self.friction)).or(at(&self.static_friction))
            }
            _ => return None,
        };
        // `friction` sets both coefficients: name the key the file has.
        let shown = if matches!(e.field, "static_friction" | "kinetic_friction") && self.friction.is_some() {
            "friction".to_string()
        } else {
            e.field.to_string()
        };
        Some((shown, found.unwrap_or(self.shape.span().start)))
    }
}

/// An analytic collider (plane, sphere, capsule, box).
fn one(name: String, raw: &RawCollider, place: &Place<'_>) -> Result<ColliderDesc, SceneError> {
    let fail = |p: &str, at: usize, rule: SceneRule| place.fail(p, at, rule);
    let scalar = |key: &str, v: &Spanned<f64>| number(*v.get_ref()).map_err(|r| fail(key, v.span().start, r));
    let start = |v: &Option<Spanned<f64>>| v.as_ref().map(|v| v.span().start);

    // The shape and its dimensions; a dimension of another shape is an error.
    let shape_at = raw.shape.span().start;
    raw.refuse_others(place)?;
    fn required<'v>(
        v: &'v Option<Spanned<f64>>,
        needs: &'static str,
        place: &Place<'_>,
        shape_at: usize,
    ) -> Result<&'v Spanned<f64>, SceneError> {
        v.as_ref().ok_or_else(|| place.fail("shape", shape_at, SceneRule::Needs { key: "shape", needs }))
    }
    let shape = match *raw.shape.get_ref() {
        ShapeName::Plane => {
            let normal = match &raw.normal {
                Some(n) => numbers(n.get_ref()).map_err(|r| fail("normal", n.span().start, r))?,
                None => [0.0, 1.0, 0.0],
            };
            ColliderShape::Plane { normal }
        }
        ShapeName::Sphere => {
            let radius =
                scalar("radius", required(&raw.radius, "`radius` (m) for a sphere", place, shape_at)?)?;
            ColliderShape::Sphere { radius }
        }
        ShapeName::Capsule => {
            let radius =
                scalar("radius", required(&raw.radius, "`radius` (m) for a capsule", place, shape_at)?)?;
            let half_length = scalar(
                "half_length",
                required(&raw.half_length, "`half_length` (m) for a capsule", place, shape_at)?,
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
        ShapeName::Mesh => unreachable!("mesh colliders are converted by `mesh`"),
    };

    let Common { keys, key_spans, thickness, friction } = raw.common(place)?;
    let desc = ColliderDesc { name, shape, keys, thickness, friction };
    desc.validate().map_err(|e| {
        // Point at the key, or the key element, that breaks the rule.
        let (shown, at) = raw.common_error_at(&key_spans, &e).unwrap_or_else(|| {
            let at = match e.field {
                "normal" => raw.normal.as_ref().map(|n| n.span().start),
                "radius" => start(&raw.radius),
                "half_length" => start(&raw.half_length),
                "half_extents" => raw.half_extents.as_ref().map(|v| v.span().start),
                _ => None,
            };
            (e.field.to_string(), at.unwrap_or(shape_at))
        });
        fail(&shown, at, SceneRule::Model(e.rule))
    })?;
    Ok(desc)
}

/// A mesh collider: see [`super::mesh_collider`].
fn mesh(
    name: String,
    raw: &RawCollider,
    place: &Place<'_>,
    limits: &Limits,
    fps: f64,
) -> Result<MeshColliderDesc, SceneError> {
    raw.refuse_others(place)?;
    let Some(mesh) = &raw.mesh else {
        let needs = "`mesh` = \"file.obj\" (a Wavefront OBJ file) for a mesh";
        return Err(place.fail("shape", raw.shape.span().start, SceneRule::Needs { key: "shape", needs }));
    };
    let (frames, origin) = super::mesh_collider::read(mesh, raw, place, limits, fps)?;
    let Common { keys, key_spans, thickness, friction } = raw.common(place)?;
    let desc = MeshColliderDesc {
        name,
        triangles: frames.triangles,
        frames: frames.frames,
        frame_start: frames.frame_start,
        frame_interval: frames.frame_interval,
        keys,
        thickness,
        friction,
    };
    desc.validate().map_err(|e| match raw.common_error_at(&key_spans, &e) {
        Some((shown, at)) => place.fail(&shown, at, SceneRule::Model(e.rule)),
        None => origin.error(&desc, raw, place, e),
    })?;
    Ok(desc)
}
