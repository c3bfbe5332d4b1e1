//! Colliders: rigid bodies the cloth cannot enter, static or moved by keyframed rigid transforms.
//!
//! A collider is a [`ColliderShape`] in its own frame (the *local* frame), placed in the world by a
//! rigid transform `x_world = R·x_local + c` (rotation `R`, position `c` in m). The transform is
//! constant (one [`RigidKey`]) or keyframed: keys at strictly increasing times (s, `≥ 0`),
//! positions interpolated linearly and rotations by spherical linear interpolation (slerp, the
//! shorter way round), held before the first key and after the last. The solvers sample it at the
//! start and at the end of every time step ([`Collider::placed`]); both use that one sampling, so
//! the fast path and the reference see the same `f32` poses.
//!
//! Each collider has a `thickness` (m, `≥ 0`): a particle is in contact when its signed distance
//! to the surface is below it, and the contact constraint `C = d − thickness ≥ 0` (compliance 0)
//! pushes it out along the surface normal. Friction is Coulomb's, with a static and a kinetic
//! coefficient (`≥ 0`, no unit), applied from the particle's tangential displacement relative to
//! the collider's own motion over the step (see `weft-kernels`' `collider` module).
//!
//! Shapes, in the local frame:
//!
//! | shape | parameters | surface |
//! |---|---|---|
//! | [`Plane`](ColliderShape::Plane) | unit `normal` | the plane through the origin with that normal; the side the normal points to is outside (infinite half-space) |
//! | [`Sphere`](ColliderShape::Sphere) | `radius > 0` (m) | centred on the origin |
//! | [`Capsule`](ColliderShape::Capsule) | `radius > 0`, `half_length ≥ 0` (m) | the points within `radius` of the segment from `(0, −half_length, 0)` to `(0, half_length, 0)` |
//! | [`Box`](ColliderShape::Box) | `half_extents > 0` (m) | the box from `−half_extents` to `half_extents` |

use crate::error::{BuildError, Location, Rule, widen};

/// The contact thickness a scene gets when it gives none, in m.
pub const DEFAULT_THICKNESS: f32 = 0.005;

/// Largest size (radius, half length, half extent) and coordinate of a collider, in m: far beyond
/// any scene, small enough that squares stay finite in `f32`.
pub const MAX_EXTENT: f32 = 1e9;

/// A collider's shape in its local frame (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ColliderShape {
    /// An infinite plane (a half-space: the side `normal` points to is outside).
    Plane {
        /// Unit normal in the local frame.
        normal: [f32; 3],
    },
    /// A sphere centred on the local origin.
    Sphere {
        /// Radius in m (`> 0`).
        radius: f32,
    },
    /// A capsule along the local y axis.
    Capsule {
        /// Radius in m (`> 0`).
        radius: f32,
        /// Half the distance between the centres of its two caps, in m (`≥ 0`).
        half_length: f32,
    },
    /// An oriented box centred on the local origin.
    Box {
        /// Half its size along the local x, y and z axes, in m (each `> 0`).
        half_extents: [f32; 3],
    },
}

impl ColliderShape {
    /// The shape's name as a scene spells it.
    pub fn name(&self) -> &'static str {
        match self {
            ColliderShape::Plane { .. } => "plane",
            ColliderShape::Sphere { .. } => "sphere",
            ColliderShape::Capsule { .. } => "capsule",
            ColliderShape::Box { .. } => "box",
        }
    }
}

/// A rigid transform at one moment: a position (m) and a rotation (unit quaternion).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RigidKey {
    /// Time in s from the start of the bake (`≥ 0`).
    pub time: f32,
    /// Where the local origin is, in m.
    pub position: [f32; 3],
    /// The rotation from local to world as a quaternion `[x, y, z, w]`; any non-zero length (it is
    /// normalised when the collider is added).
    pub rotation: [f32; 4],
}

impl RigidKey {
    /// A key at time 0 at `position`, not rotated.
    pub fn at(position: [f32; 3]) -> Self {
        RigidKey { time: 0.0, position, rotation: [0.0, 0.0, 0.0, 1.0] }
    }
}

/// Coulomb friction coefficients (no unit, each `≥ 0`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Friction {
    /// Static coefficient `μs`: a contact whose tangential displacement is within `μs` times its
    /// normal correction sticks.
    pub static_coefficient: f32,
    /// Kinetic coefficient `μk`: a sliding contact loses up to `μk` times its normal correction of
    /// tangential displacement.
    pub kinetic_coefficient: f32,
}

/// A collider as a scene describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ColliderDesc {
    /// Name, for messages.
    pub name: String,
    /// The shape in its local frame.
    pub shape: ColliderShape,
    /// One key (static) or several at strictly increasing times (animated).
    pub keys: Vec<RigidKey>,
    /// Contact thickness in m (`≥ 0`): the distance from the surface the cloth is kept at.
    pub thickness: f32,
    /// Friction coefficients.
    pub friction: Friction,
}

impl Default for ColliderDesc {
    /// A static plane `y = 0` facing up, no thickness, no friction.
    fn default() -> Self {
        ColliderDesc {
            name: String::new(),
            shape: ColliderShape::Plane { normal: [0.0, 1.0, 0.0] },
            keys: vec![RigidKey::at([0.0; 3])],
            thickness: 0.0,
            friction: Friction::default(),
        }
    }
}

/// A broken collider rule: the scene key (`"radius"`, `"keys"`, ...), the list element if the
/// problem is one, and the rule.
#[derive(Debug, Clone, PartialEq)]
pub struct ColliderError {
    /// The key as a scene spells it.
    pub field: &'static str,
    /// The element of a list key (`keys[2]`), if the problem is one element.
    pub index: Option<usize>,
    /// The rule broken.
    pub rule: Rule,
}

impl ColliderDesc {
    /// Checks every rule: finite numbers; sizes positive (a capsule's half length may be 0) and at
    /// most [`MAX_EXTENT`]; a non-zero plane normal and key rotations; thickness and friction
    /// `≥ 0`; at least one key; key times `≥ 0` and strictly increasing; positions within
    /// [`MAX_EXTENT`].
    pub fn validate(&self) -> Result<(), ColliderError> {
        let fail = |field, index, rule| Err(ColliderError { field, index, rule });
        let finite = |field: &'static str, index, values: &[f32]| match values.iter().find(|v| !v.is_finite())
        {
            Some(v) => fail(field, index, Rule::NotFinite { value: v.to_string() }),
            None => Ok(()),
        };
        let size = |field: &'static str, v: f32| {
            finite(field, None, &[v])?;
            if v <= 0.0 {
                return fail(field, None, Rule::NotPositive { value: widen(v) });
            }
            if v > MAX_EXTENT {
                return fail(field, None, too_large(v));
            }
            Ok(())
        };
        match self.shape {
            ColliderShape::Plane { normal } => {
                finite("normal", None, &normal)?;
                nonzero("normal", None, &normal).map_err(|rule| ColliderError {
                    field: "normal",
                    index: None,
                    rule,
                })?;
            }
            ColliderShape::Sphere { radius } => size("radius", radius)?,
            ColliderShape::Capsule { radius, half_length } => {
                size("radius", radius)?;
                finite("half_length", None, &[half_length])?;
                if half_length < 0.0 {
                    return fail("half_length", None, Rule::Negative { value: widen(half_length) });
                }
                if half_length > MAX_EXTENT {
                    return fail("half_length", None, too_large(half_length));
                }
            }
            ColliderShape::Box { half_extents } => {
                for h in half_extents {
                    size("half_extents", h)?;
                }
            }
        }
        validate_contact(&self.keys, self.thickness, self.friction)
    }
}

/// The rules every collider shares: thickness and friction finite and `≥ 0`; at least one key;
/// key times `≥ 0` and strictly increasing; positions within [`MAX_EXTENT`]; non-zero rotations.
pub(crate) fn validate_contact(
    keys: &[RigidKey],
    thickness: f32,
    friction: Friction,
) -> Result<(), ColliderError> {
    let fail = |field, index, rule| Err(ColliderError { field, index, rule });
    for (field, v) in [
        ("thickness", thickness),
        ("static_friction", friction.static_coefficient),
        ("kinetic_friction", friction.kinetic_coefficient),
    ] {
        if !v.is_finite() {
            return fail(field, None, Rule::NotFinite { value: v.to_string() });
        }
        if v < 0.0 {
            return fail(field, None, Rule::Negative { value: widen(v) });
        }
    }
    if thickness > MAX_EXTENT {
        return fail("thickness", None, too_large(thickness));
    }
    validate_keys(keys)
}

/// The rules of a list of rigid keys (a collider's or a pin path's): at least one; times finite,
/// `≥ 0` and strictly increasing; positions finite and within [`MAX_EXTENT`]; rotations finite
/// and non-zero.
pub fn validate_keys(keys: &[RigidKey]) -> Result<(), ColliderError> {
    let fail = |field, index, rule| Err(ColliderError { field, index, rule });
    let finite = |field: &'static str, index, values: &[f32]| match values.iter().find(|v| !v.is_finite()) {
        Some(v) => fail(field, index, Rule::NotFinite { value: v.to_string() }),
        None => Ok(()),
    };
    if keys.is_empty() {
        return fail("keys", None, Rule::Zero);
    }
    for (i, key) in keys.iter().enumerate() {
        let index = (keys.len() > 1).then_some(i);
        finite("keys", index, &[key.time])?;
        finite("position", index, &key.position)?;
        finite("rotation", index, &key.rotation)?;
        if key.time < 0.0 {
            return fail("keys", index, Rule::Negative { value: widen(key.time) });
        }
        if let Some(&p) = key.position.iter().find(|p| p.abs() > MAX_EXTENT) {
            return fail("position", index, too_large(p));
        }
        nonzero("rotation", index, &key.rotation).map_err(|rule| ColliderError {
            field: "rotation",
            index,
            rule,
        })?;
        if i > 0 && key.time <= keys[i - 1].time {
            return fail("keys", index, Rule::KeysOutOfOrder { time: key.time, previous: keys[i - 1].time });
        }
    }
    Ok(())
}

fn too_large(v: f32) -> Rule {
    Rule::TooLarge {
        what: "collider size or coordinate (m)",
        requested: v.abs().min(u64::MAX as f32) as u64,
        limit: MAX_EXTENT as u64,
        hint: "colliders are limited to 1e9 m",
    }
}

/// Refuses a vector whose length is zero (or too small to normalise in `f64`).
fn nonzero(what: &'static str, _index: Option<usize>, v: &[f32]) -> Result<(), Rule> {
    let len2: f64 = v.iter().map(|&c| c as f64 * c as f64).sum();
    if len2 > 1e-30 { Ok(()) } else { Err(Rule::ZeroVector { what }) }
}

/// A validated collider of a model.
#[derive(Debug, Clone, PartialEq)]
pub struct Collider {
    /// Name, for messages.
    pub name: String,
    /// The shape (a plane's normal normalised).
    pub shape: ColliderShape,
    /// Keys with normalised rotations.
    pub keys: Vec<RigidKey>,
    /// Contact thickness in m.
    pub thickness: f32,
    /// Friction coefficients.
    pub friction: Friction,
}

/// A rigid pose in `f64`: rotation matrix (local to world, row-major) and position (m).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pose {
    rotation: [[f64; 3]; 3],
    position: [f64; 3],
}

/// A collider placed for one time step: its pose at the end of the step, and how to carry a point
/// of the body from the end of the step back to where it was at the start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placed {
    /// The shape in its local frame.
    pub shape: ColliderShape,
    /// Rotation local → world at the end of the step, row-major: `x_world = R·x_local + c`.
    pub rotation: [[f32; 3]; 3],
    /// Position `c` of the local origin at the end of the step, in m.
    pub position: [f32; 3],
    /// `M = R₀·R₁ᵀ` (row-major): the body point at `x` at the end of the step was at
    /// `M·(x − c₁) + c₀` at its start.
    pub carry: [[f32; 3]; 3],
    /// Position `c₀` of the local origin at the start of the step, in m.
    pub prev_position: [f32; 3],
    /// Whether the collider moves during this step (`false`: `carry` is the identity and
    /// `prev_position == position`).
    pub moving: bool,
    /// Contact thickness in m.
    pub thickness: f32,
    /// Friction coefficients.
    pub friction: Friction,
}

impl Collider {
    /// A validated collider from its description (rotations and a plane's normal normalised).
    pub fn new(desc: &ColliderDesc) -> Result<Self, ColliderError> {
        desc.validate()?;
        let shape = match desc.shape {
            ColliderShape::Plane { normal } => ColliderShape::Plane { normal: normalised(normal) },
            other => other,
        };
        let keys = normalised_keys(&desc.keys);
        Ok(Collider {
            name: desc.name.clone(),
            shape,
            keys,
            thickness: desc.thickness,
            friction: desc.friction,
        })
    }

    /// Whether it has more than one key.
    pub fn is_animated(&self) -> bool {
        self.keys.len() > 1
    }

    /// The pose at time `t` (s) (see [`pose_at`]).
    fn pose(&self, t: f64) -> Pose {
        pose_at(&self.keys, t)
    }

    /// The collider for the time step from `t0` to `t1` (s).
    pub fn placed(&self, t0: f64, t1: f64) -> Placed {
        let end = self.pose(t1);
        let start = if self.is_animated() { self.pose(t0) } else { end };
        let carry = std::array::from_fn(|i| {
            std::array::from_fn(|j| (0..3).map(|k| start.rotation[i][k] * end.rotation[j][k]).sum::<f64>())
        });
        let f32s = |m: [[f64; 3]; 3]| m.map(|r| r.map(|v| v as f32));
        let moving = start != end;
        Placed {
            shape: self.shape,
            rotation: f32s(end.rotation),
            position: end.position.map(|v| v as f32),
            carry: if moving { f32s(carry) } else { [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]] },
            prev_position: start.position.map(|v| v as f32),
            moving,
            thickness: self.thickness,
            friction: self.friction,
        }
    }
}

/// The pose of `keys` (normalised rotations, at least one key) at time `t` (s): positions
/// interpolated linearly and rotations by slerp between the keys around `t`, held before the first
/// key and after the last.
pub(crate) fn pose_at(keys: &[RigidKey], t: f64) -> Pose {
    let (a, b, s) = match keys.iter().position(|k| k.time as f64 > t) {
        None => (keys.len() - 1, keys.len() - 1, 0.0),
        Some(0) => (0, 0, 0.0),
        Some(i) => {
            let (t0, t1) = (keys[i - 1].time as f64, keys[i].time as f64);
            (i - 1, i, (t - t0) / (t1 - t0))
        }
    };
    let (ka, kb) = (&keys[a], &keys[b]);
    let position = std::array::from_fn(|i| {
        let (p0, p1) = (ka.position[i] as f64, kb.position[i] as f64);
        p0 + (p1 - p0) * s
    });
    let q = slerp(ka.rotation.map(f64::from), kb.rotation.map(f64::from), s);
    Pose { rotation: matrix(q), position }
}

impl Pose {
    /// `R·l + c`: a local point in the world, in m.
    pub(crate) fn apply(&self, l: [f64; 3]) -> [f64; 3] {
        std::array::from_fn(|i| (0..3).map(|k| self.rotation[i][k] * l[k]).sum::<f64>() + self.position[i])
    }

    /// `Rᵀ·(x − c)`: a world point in the local frame.
    pub(crate) fn apply_inverse(&self, x: [f64; 3]) -> [f64; 3] {
        let d: [f64; 3] = std::array::from_fn(|i| x[i] - self.position[i]);
        std::array::from_fn(|i| (0..3).map(|k| self.rotation[k][i] * d[k]).sum::<f64>())
    }
}

/// Keys with their rotations normalised (in `f64`, rounded back to `f32`).
pub(crate) fn normalised_keys(keys: &[RigidKey]) -> Vec<RigidKey> {
    keys.iter().map(|k| RigidKey { rotation: normalised4(k.rotation), ..*k }).collect()
}

fn normalised(v: [f32; 3]) -> [f32; 3] {
    let v = v.map(f64::from);
    let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    v.map(|c| (c / len) as f32)
}

fn normalised4(v: [f32; 4]) -> [f32; 4] {
    let v = v.map(f64::from);
    let len = v.iter().map(|c| c * c).sum::<f64>().sqrt();
    v.map(|c| (c / len) as f32)
}

/// Spherical linear interpolation of unit quaternions `[x, y, z, w]`, the shorter way round.
pub(crate) fn slerp(a: [f64; 4], b: [f64; 4], s: f64) -> [f64; 4] {
    let mut dot: f64 = (0..4).map(|i| a[i] * b[i]).sum();
    let b = if dot < 0.0 {
        dot = -dot;
        b.map(|c| -c)
    } else {
        b
    };
    let (wa, wb) = if dot > 0.9999 {
        (1.0 - s, s)
    } else {
        let theta = dot.min(1.0).acos();
        let sin = theta.sin();
        (((1.0 - s) * theta).sin() / sin, (s * theta).sin() / sin)
    };
    let q: [f64; 4] = std::array::from_fn(|i| wa * a[i] + wb * b[i]);
    let len = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    q.map(|c| c / len)
}

/// The rotation matrix (row-major) of a unit quaternion `[x, y, z, w]`.
fn matrix(q: [f64; 4]) -> [[f64; 3]; 3] {
    let [x, y, z, w] = q;
    [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)],
        [2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)],
        [2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)],
    ]
}

/// A builder error for collider number `ordinal` (the scene reader checks colliders itself and
/// names the key; this is for colliders added through the API).
pub(crate) fn build_error(ordinal: usize, e: ColliderError) -> BuildError {
    BuildError::new(Location { cloth: None, field: "collider", index: Some(ordinal) }, e.rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sphere() -> ColliderDesc {
        ColliderDesc { shape: ColliderShape::Sphere { radius: 1.0 }, ..ColliderDesc::default() }
    }

    #[test]
    fn bad_colliders_name_their_key() {
        let field = |d: ColliderDesc| d.validate().unwrap_err().field;
        assert_eq!(
            field(ColliderDesc { shape: ColliderShape::Sphere { radius: 0.0 }, ..sphere() }),
            "radius"
        );
        assert_eq!(field(ColliderDesc { thickness: -0.1, ..sphere() }), "thickness");
        let f = Friction { static_coefficient: 0.1, kinetic_coefficient: -1.0 };
        assert_eq!(field(ColliderDesc { friction: f, ..sphere() }), "kinetic_friction");
        let keys = vec![RigidKey { time: 1.0, ..RigidKey::at([0.0; 3]) }, RigidKey::at([1.0; 3])];
        let e = ColliderDesc { keys, ..sphere() }.validate().unwrap_err();
        assert_eq!((e.field, e.index), ("keys", Some(1)));
        assert!(matches!(e.rule, Rule::KeysOutOfOrder { .. }));
        let keys = vec![RigidKey { rotation: [0.0; 4], ..RigidKey::at([0.0; 3]) }];
        assert_eq!(field(ColliderDesc { keys, ..sphere() }), "rotation");
        let plane = ColliderDesc { shape: ColliderShape::Plane { normal: [0.0; 3] }, ..sphere() };
        assert_eq!(field(plane), "normal");
        let boxed = ColliderShape::Box { half_extents: [1.0, f32::NAN, 1.0] };
        assert_eq!(field(ColliderDesc { shape: boxed, ..sphere() }), "half_extents");
        assert!(sphere().validate().is_ok());
    }

    #[test]
    fn poses_interpolate_and_hold() {
        let half = std::f32::consts::FRAC_1_SQRT_2;
        let keys = vec![
            RigidKey { time: 1.0, ..RigidKey::at([0.0; 3]) },
            RigidKey { time: 2.0, position: [2.0, 0.0, 0.0], rotation: [0.0, half, 0.0, half] },
        ];
        let c = Collider::new(&ColliderDesc { keys, ..sphere() }).unwrap();
        assert_eq!(c.pose(0.0).position, [0.0; 3], "held before the first key");
        assert_eq!(c.pose(5.0).position, [2.0, 0.0, 0.0], "held after the last");
        let mid = c.pose(1.5);
        assert!((mid.position[0] - 1.0).abs() < 1e-12);
        // Half of a quarter turn about y: 45° (within the f32 rounding of the key's quaternion).
        let angle = mid.rotation[0][2].atan2(mid.rotation[0][0]);
        assert!((angle - std::f64::consts::FRAC_PI_4).abs() < 1e-6, "{angle}");
        // The carry map takes the end pose's body point back to the start pose's.
        let p = c.placed(1.0, 1.5);
        assert!(p.moving);
        let x = [1.0f32, 0.0, 0.0]; // c₁ + R₁·(x_local): x_local = R₁ᵀ(x − c₁)
        let back: Vec<f32> = (0..3)
            .map(|i| (0..3).map(|k| p.carry[i][k] * (x[k] - p.position[k])).sum::<f32>() + p.prev_position[i])
            .collect();
        // At t = 1 the body is at the origin, unrotated: the local point is R₁ᵀ(x − c₁) = 0.
        assert!(back.iter().all(|v| v.abs() < 1e-6), "{back:?}");
        let still = Collider::new(&sphere()).unwrap().placed(0.0, 1.0);
        assert!(!still.moving);
    }
}
