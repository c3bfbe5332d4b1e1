//! The scene file as TOML spells it: every key, with the source span of every value and of every
//! list element, before any rule of the model is applied.
//!
//! Numbers are read wide (`f64`, `i64`) so that the conversion step can say "`-1` is not a particle
//! index" or "`1e39` does not fit a 32-bit float" with the cloth, key and element, instead of a
//! generic type error. Unknown keys are refused everywhere (`deny_unknown_fields`).

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use toml::Spanned;

/// A whole scene file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScene {
    pub(super) simulation: Spanned<RawSimulation>,
    #[serde(default)]
    pub(super) cloth: Vec<Spanned<RawCloth>>,
    #[serde(default)]
    pub(super) collider: Vec<Spanned<super::collider::RawCollider>>,
    /// A sweep of parameters, read by `super::wedge` (a scene read as written ignores it).
    #[serde(default, rename = "wedge")]
    pub(super) _wedge: Option<IgnoredAny>,
}

/// The `[simulation]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSimulation {
    pub(super) fps: Spanned<f64>,
    pub(super) frames: Spanned<i64>,
    pub(super) substeps: Option<Spanned<i64>>,
    pub(super) iterations: Option<Spanned<i64>>,
    pub(super) gravity: Option<Spanned<Fixed<f64, 3>>>,
    pub(super) velocity_damping: Option<Spanned<f64>>,
    pub(super) wind: Option<Spanned<Vec<Spanned<WindItem>>>>,
    pub(super) air_density: Option<Spanned<f64>>,
    pub(super) max_strain: Option<Spanned<f64>>,
    pub(super) min_substeps: Option<Spanned<i64>>,
    pub(super) max_substeps: Option<Spanned<i64>>,
}

/// An element of `wind`: a number (of a constant `[x, y, z]`) or a `{ time, velocity }` key.
#[derive(Debug)]
pub(super) enum WindItem {
    Number(f64),
    Key(RawWindKey),
}

/// One `{ time = 0.0, velocity = [x, y, z] }` of `wind`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWindKey {
    pub(super) time: Spanned<f64>,
    pub(super) velocity: Spanned<Fixed<f64, 3>>,
}

impl<'de> Deserialize<'de> for WindItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ItemVisitor;

        impl<'de> Visitor<'de> for ItemVisitor {
            type Value = WindItem;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number (wind = [x, y, z]) or a key { time = ..., velocity = [x, y, z] }")
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<WindItem, E> {
                Ok(WindItem::Number(v as f64))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<WindItem, E> {
                Ok(WindItem::Number(v as f64))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<WindItem, E> {
                Ok(WindItem::Number(v))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<WindItem, A::Error> {
                RawWindKey::deserialize(de::value::MapAccessDeserializer::new(map)).map(WindItem::Key)
            }
        }

        deserializer.deserialize_any(ItemVisitor)
    }
}

/// A list whose elements each keep their span.
pub(super) type SpannedList<T> = Spanned<Vec<Spanned<T>>>;

/// The raw type of a batched kind's key of a registry line's type (see
/// `weft_core::kinds::KeyType`).
macro_rules! raw_value {
    (f64) => { Spanned<f64> };
    (bool) => { Spanned<bool> };
    (pairs) => { SpannedList<Fixed<i64, 2>> };
}

/// Makes [`RawCloth`] with the keys of the batched constraint kinds from the registry
/// (`weft_core::constraint_kinds!`), where the keys of bending and tethers always stood.
macro_rules! raw_cloth {
    (
        batched { $(
            $field:ident : $kind:ident in $module:ident [$k:literal, $p:literal]
            { $($key:ident : $ty:ident),* $(,)? }
        ),* $(,)? }
        phased { $($pfield:ident : $pid:ident = $pinfo:path),* $(,)? }
    ) => {
        /// One `[[cloth]]` table.
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub(super) struct RawCloth {
            pub(super) name: Spanned<String>,
            pub(super) positions: Option<SpannedList<Fixed<f64, 3>>>,
            pub(super) grid: Option<Spanned<RawGrid>>,
            pub(super) velocities: Option<SpannedList<Fixed<f64, 3>>>,
            pub(super) particle_mass: Option<Spanned<f64>>,
            pub(super) density: Option<Spanned<f64>>,
            pub(super) triangles: Option<SpannedList<Fixed<i64, 3>>>,
            pub(super) edges: Option<SpannedList<Fixed<i64, 2>>>,
            pub(super) rest_lengths: Option<SpannedList<f64>>,
            pub(super) stretch_compliance: Option<Spanned<f64>>,
            pub(super) stretch_stiffness: Option<Spanned<f64>>,
            pub(super) stretch_damping: Option<Spanned<f64>>,
            pub(super) shear: Option<Spanned<bool>>,
            pub(super) shear_edges: Option<SpannedList<Fixed<i64, 2>>>,
            pub(super) shear_compliance: Option<Spanned<f64>>,
            pub(super) shear_stiffness: Option<Spanned<f64>>,
            pub(super) shear_damping: Option<Spanned<f64>>,
            pub(super) pins: Option<SpannedList<i64>>,
            pub(super) pin_corners: Option<SpannedList<Corner>>,
            pub(super) mesh: Option<Spanned<String>>,
            pub(super) object: Option<Spanned<OneOrList<String>>>,
            pub(super) non_manifold: Option<Spanned<NonManifoldPolicy>>,
            pub(super) pin_box: Option<Spanned<OneOrList<RawBox>>>,
            pub(super) pin_file: Option<Spanned<String>>,
            pub(super) warp_compliance: Option<Spanned<f64>>,
            pub(super) warp_stiffness: Option<Spanned<f64>>,
            pub(super) weft_compliance: Option<Spanned<f64>>,
            pub(super) weft_stiffness: Option<Spanned<f64>>,
            $($(pub(super) $key: Option<raw_value!($ty)>,)*)*
            pub(super) pressure: Option<Spanned<f64>>,
            pub(super) volume_compliance: Option<Spanned<f64>>,
            pub(super) volume_stiffness: Option<Spanned<f64>>,
            pub(super) drag: Option<Spanned<f64>>,
            pub(super) lift: Option<Spanned<f64>>,
            pub(super) self_collision: Option<Spanned<RawSelfCollision>>,
            pub(super) self_thickness: Option<Spanned<f64>>,
            pub(super) self_friction: Option<Spanned<f64>>,
            pub(super) follow: Option<Spanned<RawFollow>>,
            pub(super) render_mesh: Option<Spanned<String>>,
            pub(super) cache_proxy: Option<Spanned<bool>>,
        }

        impl RawCloth {
            /// The value of a batched kind's key, taken out of the table (`None` if it is not
            /// given, or not a key of a batched kind).
            pub(super) fn take_kind_key(&mut self, key: &str) -> Option<KindValue> {
                match key {
                    $($(stringify!($key) => self.$key.take().map(KindValue::from),)*)*
                    _ => None,
                }
            }

            /// Whether a batched kind's key is given.
            pub(super) fn has_kind_key(&self, key: &str) -> bool {
                match key {
                    $($(stringify!($key) => self.$key.is_some(),)*)*
                    _ => false,
                }
            }
        }
    };
}

weft_core::constraint_kinds!(raw_cloth);

/// The value of a batched constraint kind's key.
#[derive(Debug)]
pub(super) enum KindValue {
    /// A number.
    Number(Spanned<f64>),
    /// A switch.
    Switch(Spanned<bool>),
    /// A list of particle pairs.
    Pairs(SpannedList<Fixed<i64, 2>>),
}

impl From<Spanned<f64>> for KindValue {
    fn from(v: Spanned<f64>) -> Self {
        KindValue::Number(v)
    }
}

impl From<Spanned<bool>> for KindValue {
    fn from(v: Spanned<bool>) -> Self {
        KindValue::Switch(v)
    }
}

impl From<SpannedList<Fixed<i64, 2>>> for KindValue {
    fn from(v: SpannedList<Fixed<i64, 2>>) -> Self {
        KindValue::Pairs(v)
    }
}

/// `follow = "collider"` or `follow = [{ time, position, rotation }, ...]`.
#[derive(Debug)]
pub(super) enum RawFollow {
    Collider(String),
    Keys(Vec<Spanned<super::collider::RawKey>>),
}

impl<'de> Deserialize<'de> for RawFollow {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FollowVisitor;

        impl<'de> Visitor<'de> for FollowVisitor {
            type Value = RawFollow;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a collider's name, or keys [{ time = 0.0, position = [x, y, z], rotation = [x, y, z, w] }, ...]",
                )
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawFollow, E> {
                Ok(RawFollow::Collider(v.to_string()))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawFollow, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = seq.next_element()? {
                    keys.push(key);
                }
                Ok(RawFollow::Keys(keys))
            }
        }

        deserializer.deserialize_any(FollowVisitor)
    }
}

/// `self_collision = true | false | "particles" | "triangles"` (`true` is `"particles"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RawSelfCollision {
    Off,
    Particles,
    Triangles,
}

impl<'de> Deserialize<'de> for RawSelfCollision {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ModeVisitor;

        impl Visitor<'_> for ModeVisitor {
            type Value = RawSelfCollision;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("true, false, \"particles\" or \"triangles\"")
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawSelfCollision, E> {
                Ok(if v { RawSelfCollision::Particles } else { RawSelfCollision::Off })
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawSelfCollision, E> {
                match v {
                    "particles" => Ok(RawSelfCollision::Particles),
                    "triangles" => Ok(RawSelfCollision::Triangles),
                    _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
                }
            }
        }

        deserializer.deserialize_any(ModeVisitor)
    }
}

/// `non_manifold = "error" | "skip"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum NonManifoldPolicy {
    Error,
    Skip,
}

/// `pin_box = { min = [x, y, z], max = [x, y, z] }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBox {
    pub(super) min: Spanned<Fixed<f64, 3>>,
    pub(super) max: Spanned<Fixed<f64, 3>>,
}

/// A value given once (`object = "shirt"`, `pin_box = { ... }`) or as a list of them, each list
/// element keeping its span.
#[derive(Debug)]
pub(super) enum OneOrList<T> {
    One(T),
    List(Vec<Spanned<T>>),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrList<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OneOrListVisitor<T>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for OneOrListVisitor<T> {
            type Value = OneOrList<T>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a value or an array of them")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                T::deserialize(de::value::StrDeserializer::new(v)).map(OneOrList::One)
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(OneOrList::One)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Spanned<T>>()? {
                    items.push(item);
                }
                Ok(OneOrList::List(items))
            }
        }

        deserializer.deserialize_any(OneOrListVisitor(PhantomData))
    }
}

/// `grid = { ... }` (or a `[cloth.grid]` table).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGrid {
    pub(super) resolution: Spanned<Fixed<i64, 2>>,
    pub(super) size: Spanned<Fixed<f64, 2>>,
    pub(super) origin: Option<Spanned<Fixed<f64, 3>>>,
    pub(super) plane: Option<Spanned<Plane>>,
}

/// `plane = "xy" | "xz" | "yz"`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Plane {
    Xy,
    Xz,
    Yz,
}

/// A grid corner for `pin_corners`: left/right is low/high `U`, bottom/top is low/high `V`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Corner {
    BottomLeft,
    BottomRight,
    TopLeft,
    TopRight,
}

/// An array of exactly `N` elements.
///
/// serde's own `[T; N]` takes the first `N` elements of a longer TOML array and silently drops the
/// rest (`edges = [[0, 1, 2]]` would read as `[0, 1]`); this type refuses any other length.
#[derive(Debug, Clone, Copy)]
pub(super) struct Fixed<T, const N: usize>(pub(super) [T; N]);

impl<'de, T: Deserialize<'de> + Copy + Default, const N: usize> Deserialize<'de> for Fixed<T, N> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FixedVisitor<T, const N: usize>(PhantomData<T>);

        impl<'de, T: Deserialize<'de> + Copy + Default, const N: usize> Visitor<'de> for FixedVisitor<T, N> {
            type Value = Fixed<T, N>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an array of exactly {N} elements")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = [T::default(); N];
                for (i, slot) in out.iter_mut().enumerate() {
                    *slot = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(i, &self))?;
                }
                let mut len = N;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    len += 1;
                }
                if len != N {
                    return Err(de::Error::invalid_length(len, &self));
                }
                Ok(Fixed(out))
            }
        }

        deserializer.deserialize_seq(FixedVisitor::<T, N>(PhantomData))
    }
}
