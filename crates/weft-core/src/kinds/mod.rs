//! The constraint kinds, listed once.
//!
//! [`constraint_kinds!`](crate::constraint_kinds) is the registry: every kind of constraint weft
//! solves, in the order a solver iteration projects them. Everything that exists once per kind is
//! made from it, so a kind that is registered is everywhere and one that is not is nowhere:
//!
//! * here: [`KindId`], [`PerKind`] (one value per kind: the step's statistics, say), the cloth's
//!   descriptions of the batched kinds ([`KindDescs`], read from the keys the registry lists),
//!   the model's constraint sets ([`KindSets`], visited with [`SetVisitor`]), the builder's lists
//!   and the layout report ([`SetReports`]);
//! * in `weft-kernels`, the step's batched sets, their `λ` reset, their solve and their residuals;
//!   in `weft-reference`, the twins the reference step projects; in `weft-io`, the scene keys; in
//!   the output, the `stats.csv` columns, the report's plots, `weft validate` and the summary
//!   (from each kind's [`KindInfo`]).
//!
//! Two groups of kinds:
//!
//! * **batched** kinds, constraints over a fixed number `K` of particles with `P` parameters:
//!   [`distance`] (stretch and shear), [`bending`] (dihedral angles), [`tether`] (long-range
//!   attachments), [`seam`] (particles sewn together). Each is one module here implementing [`BatchedKind`] — its description, its
//!   rules, its scene keys' meaning, its projection written once for SIMD lanes and one
//!   constraint — and a twin in `weft-reference`; the rest is generic.
//! * **phased** kinds, which do not fit fixed-size batches: [`volume`](crate::volume) (one
//!   global constraint per closed cloth) and [`self_collision`](crate::self_collision) (particle
//!   contacts). Each has team phases of its own in one stage of the step; the registry gives
//!   them their place in the statistics and the output.
//!
//! `docs/architecture.md` ("Adding a constraint kind") is the recipe.

pub mod batched;
pub mod info;
pub mod keys;

pub mod bending;
pub mod distance;
pub mod seam;
pub mod tether;

use std::ops::{Index, IndexMut};

pub use batched::{BatchedKind, Input, LaneResidual, Load, Projected, VARIANTS};
pub use info::{Column, Figure, KindInfo, Plot, SummaryLine};
pub use keys::SceneKeys;

use crate::batches::{Batches, Packed};
use crate::cloth::ClothContext;
use crate::error::BuildError;
use crate::model::SetReport;

/// The registry of constraint kinds (module docs): calls the macro `$callback` with the list.
///
/// Batched kinds, each `FIELD: Type in module [K, P] { scene keys }`: `FIELD` names its set in
/// [`KindSets`] (and everywhere else a per-kind field is made), `Type` is its [`BatchedKind`] in
/// `weft_core::kinds::module`, `K` and `P` its particles and parameters per constraint, and the
/// keys (each `name: f64`, `name: bool` or `name: pairs`, see [`KeyType`]) are the `[[cloth]]`
/// keys its [`describe`](BatchedKind::describe) reads. Phased kinds, each `FIELD: Id = INFO`:
/// their [`KindInfo`].
///
/// ```
/// // A callback sees the kinds in registry order.
/// macro_rules! batched_fields {
///     (
///         batched { $(
///             $field:ident : $kind:ident in $module:ident [$k:literal, $p:literal]
///             { $($key:ident : $ty:ident),* $(,)? }
///         ),* $(,)? }
///         phased { $($pfield:ident : $pid:ident = $pinfo:path),* $(,)? }
///     ) => {
///         [$(stringify!($field)),*]
///     };
/// }
/// assert_eq!(weft_core::constraint_kinds!(batched_fields)[..3], ["distance", "bending", "tethers"]);
/// ```
#[macro_export]
macro_rules! constraint_kinds {
    ($callback:ident) => {
        $callback! {
            batched {
                distance: Distance in distance [2, 3] {},
                bending: Bending in bending [4, 3] {
                    bending_compliance: f64, bending_stiffness: f64, bending_damping: f64
                },
                tethers: Tether in tether [2, 2] {
                    tether_compliance: f64, tether_stiffness: f64, tether_scale: f64, tethers: bool
                },
                seams: Seam in seam [2, 1] { seam_compliance: f64, seam_stiffness: f64, seams: pairs },
            }
            phased {
                volume: Volume = $crate::volume::INFO,
                self_collision: SelfCollision = $crate::self_collision::INFO,
            }
        }
    };
}

/// What the registry gives a batched kind: its [`KindId`].
pub trait Registered {
    /// The kind's place in the registry.
    const ID: KindId;
}

/// Visits the batched sets of a model, in registry order, with their kinds' types.
pub trait SetVisitor<'a> {
    /// Visits the set of `kind`.
    fn visit<T: BatchedKind<K, P>, const K: usize, const P: usize>(
        &mut self,
        kind: T,
        set: &'a Batches<K, P>,
    );
}

/// Visits the batched sets of a model mutably, in registry order, with their kinds' types.
pub trait SetVisitorMut<'a> {
    /// Visits the set of `kind`.
    fn visit<T: BatchedKind<K, P>, const K: usize, const P: usize>(
        &mut self,
        kind: T,
        set: &'a mut Batches<K, P>,
    );
}

/// The type of a key of a batched kind, from its registry line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyType {
    /// A number (`f64` in the registry line), read with [`SceneKeys::number`] or
    /// [`SceneKeys::material`].
    Number,
    /// A switch (`bool`), read with [`SceneKeys::switch`].
    Switch,
    /// A list of particle pairs (`pairs`: `[[a, b], ...]`, indices in the cloth), read with
    /// [`SceneKeys::pairs`].
    Pairs,
}

/// The [`KeyType`] of a registry line's key type.
macro_rules! key_type {
    (f64) => {
        KeyType::Number
    };
    (bool) => {
        KeyType::Switch
    };
    (pairs) => {
        KeyType::Pairs
    };
}

/// The items the registry makes in this crate (module docs).
macro_rules! registry_items {
    (
        batched { $(
            $field:ident : $kind:ident in $module:ident [$k:literal, $p:literal]
            { $($key:ident : $ty:ident),* $(,)? }
        ),* $(,)? }
        phased { $($pfield:ident : $pid:ident = $pinfo:path),* $(,)? }
    ) => {
        /// A constraint kind, in registry order (module docs).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum KindId {
            $(
                #[doc = concat!("`", stringify!($field), "`: [`", stringify!($module), "::", stringify!($kind), "`].")]
                $kind,
            )*
            $(
                #[doc = concat!("`", stringify!($pfield), "`, a phased kind.")]
                $pid,
            )*
        }

        impl KindId {
            /// Every kind, in registry order.
            pub const ALL: &'static [KindId] = &[$(KindId::$kind,)* $(KindId::$pid,)*];

            /// The number of kinds.
            pub const COUNT: usize = KindId::ALL.len();

            /// What the output says of the kind.
            pub const fn info(self) -> &'static KindInfo {
                match self {
                    $(KindId::$kind => &<$module::$kind as BatchedKind<$k, $p>>::INFO,)*
                    $(KindId::$pid => &$pinfo,)*
                }
            }

            /// The `[[cloth]]` keys of the kind, as its registry line lists them (none for a
            /// phased kind: its keys are read by the scene reader itself).
            pub const fn keys(self) -> &'static [(&'static str, KeyType)] {
                match self {
                    $(KindId::$kind => &[$((stringify!($key), key_type!($ty))),*],)*
                    $(KindId::$pid => &[],)*
                }
            }

            /// The names of [`KindId::keys`].
            pub const fn key_names(self) -> &'static [&'static str] {
                match self {
                    $(KindId::$kind => &[$(stringify!($key)),*],)*
                    $(KindId::$pid => &[],)*
                }
            }

            /// Whether it is solved in colour batches.
            pub const fn is_batched(self) -> bool {
                match self {
                    $(KindId::$kind => true,)*
                    $(KindId::$pid => false,)*
                }
            }

            /// Its place in [`KindId::ALL`].
            pub const fn index(self) -> usize {
                self as usize
            }
        }

        $(impl Registered for $module::$kind {
            const ID: KindId = KindId::$kind;
        })*

        /// The batched kinds of one cloth, as its scene describes them.
        #[derive(Debug, Clone, PartialEq, Default)]
        pub struct KindDescs {
            $(
                #[doc = concat!("[`", stringify!($module), "::", stringify!($kind), "`].")]
                pub $field: <$module::$kind as BatchedKind<$k, $p>>::Desc,
            )*
        }

        impl KindDescs {
            /// Every batched kind's description from a cloth's keys, in registry order.
            pub fn describe<S: SceneKeys>(keys: &mut S) -> Result<KindDescs, S::Error> {
                Ok(KindDescs { $($field: <$module::$kind as BatchedKind<$k, $p>>::describe(keys)?,)* })
            }
        }

        /// The model's batched constraint sets, one per kind.
        #[derive(Debug, Clone, PartialEq, Default)]
        pub struct KindSets {
            $(
                #[doc = concat!("[`", stringify!($module), "::", stringify!($kind), "`] constraints.")]
                pub $field: Batches<$k, $p>,
            )*
        }

        impl crate::digest::Digest for KindSets {
            fn digest<H: std::hash::Hasher>(&self, h: &mut H) {
                let KindSets { $($field,)* } = self;
                $(crate::digest::Digest::digest($field, h);)*
            }
        }

        impl KindSets {
            /// Visits every set, in registry order.
            pub fn visit<'a>(&'a self, visitor: &mut impl SetVisitor<'a>) {
                $(visitor.visit($module::$kind, &self.$field);)*
            }

            /// Visits every set mutably, in registry order.
            pub fn visit_mut<'a>(&'a mut self, visitor: &mut impl SetVisitorMut<'a>) {
                $(visitor.visit($module::$kind, &mut self.$field);)*
            }

            /// The constraints of every set.
            pub fn len(&self) -> usize {
                0 $(+ self.$field.len())*
            }

            /// True when no set holds a constraint.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// The layout of every set.
            pub fn reports(&self) -> SetReports {
                SetReports { $($field: SetReport::of(&self.$field),)* }
            }
        }

        /// The layout of every batched set ([`SetReport`]), one field per kind.
        #[derive(Debug, Clone, PartialEq, Default)]
        pub struct SetReports {
            $(
                #[doc = concat!("[`", stringify!($module), "::", stringify!($kind), "`].")]
                pub $field: SetReport,
            )*
        }

        impl SetReports {
            /// Every set's layout with its kind, in registry order.
            pub fn iter(&self) -> impl Iterator<Item = (KindId, &SetReport)> {
                [$((KindId::$kind, &self.$field)),*].into_iter()
            }
        }

        /// The batched constraints a builder has gathered, one list per kind.
        #[derive(Debug, Clone, PartialEq, Default)]
        pub(crate) struct PackedSets {
            $(pub(crate) $field: Vec<Packed<$k, $p>>,)*
        }

        impl PackedSets {
            /// The constraints `descs` ask of the cloth `ctx` is adding, kind by kind.
            pub(crate) fn build(descs: &KindDescs, ctx: &ClothContext<'_>) -> Result<PackedSets, BuildError> {
                Ok(PackedSets {
                    $($field: <$module::$kind as BatchedKind<$k, $p>>::build(&descs.$field, ctx)?,)*
                })
            }

            /// The constraints of every list.
            pub(crate) fn len(&self) -> usize {
                0 $(+ self.$field.len())*
            }

            /// Appends every list of `other` to this one's: an empty list takes `other`'s as it
            /// is, without a copy (so that a scene of one cloth never holds its constraints twice).
            pub(crate) fn append(&mut self, mut other: PackedSets) {
                $(
                    if self.$field.is_empty() {
                        self.$field = std::mem::take(&mut other.$field);
                    } else {
                        self.$field.append(&mut other.$field);
                    }
                )*
            }

            /// Colours and packs every list in blocks of `block_particles` particles; `free[p]`
            /// says whether particle `p` can move. Each list is freed as soon as its batches are
            /// built, not after the last kind's.
            pub(crate) fn into_sets(self, free: &[bool], block_particles: u32) -> KindSets {
                let PackedSets { $($field),* } = self;
                KindSets {
                    $($field: {
                        let batches = Batches::in_blocks(&$field, free, block_particles);
                        drop($field);
                        batches
                    },)*
                }
            }
        }
    };
}

crate::constraint_kinds!(registry_items);

/// One value per constraint kind, indexed by [`KindId`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PerKind<T>(pub [T; KindId::COUNT]);

impl<T> PerKind<T> {
    /// The value of each kind from `f`.
    pub fn from_fn(mut f: impl FnMut(KindId) -> T) -> Self {
        PerKind(std::array::from_fn(|i| f(KindId::ALL[i])))
    }

    /// Every kind with its value, in registry order.
    pub fn iter(&self) -> impl Iterator<Item = (KindId, &T)> {
        KindId::ALL.iter().copied().zip(self.0.iter())
    }
}

impl<T: Default> Default for PerKind<T> {
    fn default() -> Self {
        PerKind::from_fn(|_| T::default())
    }
}

impl<T> Index<KindId> for PerKind<T> {
    type Output = T;
    fn index(&self, kind: KindId) -> &T {
        &self.0[kind.index()]
    }
}

impl<T> IndexMut<KindId> for PerKind<T> {
    fn index_mut(&mut self, kind: KindId) -> &mut T {
        &mut self.0[kind.index()]
    }
}
