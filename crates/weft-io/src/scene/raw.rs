//! The scene file as TOML spells it: every key, with the source span of every value and of every
//! list element, before any rule of the model is applied.
//!
//! Numbers are read wide (`f64`, `i64`) so that the conversion step can say "`-1` is not a particle
//! index" or "`1e39` does not fit a 32-bit float" with the cloth, key and element, instead of a
//! generic type error. Unknown keys are refused everywhere (`deny_unknown_fields`).

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use toml::Spanned;

/// A whole scene file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScene {
    pub(super) simulation: Spanned<RawSimulation>,
    #[serde(default)]
    pub(super) cloth: Vec<Spanned<RawCloth>>,
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
}

/// A list whose elements each keep their span.
pub(super) type SpannedList<T> = Spanned<Vec<Spanned<T>>>;

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
