//! [`SceneKeys`]: a cloth's keys in a scene file, as a constraint kind reads them.
//!
//! A batched kind's keys are listed once, in its registry line ([`crate::kinds`]); the scene
//! reader (`weft-io`) accepts exactly those, records where each is, and hands them to the kind's
//! [`BatchedKind::describe`](crate::kinds::BatchedKind::describe) through this trait. The kind
//! says what its keys mean — which turn it on, their defaults, which may not go together — and the
//! reader turns every refusal into one error line naming the file, line and key.

use crate::settings::StrainTolerance;
use crate::units::Elasticity;

/// The keys of one `[[cloth]]` table, for a constraint kind's description.
pub trait SceneKeys {
    /// A refusal, naming the file, line and key.
    type Error;

    /// Whether `key` is given.
    fn given(&self, key: &'static str) -> bool;

    /// The number `key` as an `f32`, if given (refused when it does not fit one).
    fn number(&mut self, key: &'static str) -> Result<Option<f32>, Self::Error>;

    /// The switch `key`, if given.
    fn switch(&mut self, key: &'static str) -> Option<bool>;

    /// The list of particle pairs `key` (`[[a, b], ...]`, indices in the cloth), if given
    /// (refused when an index is not a whole number from 0 to 2³²−1). Each pair's place is kept,
    /// so a builder error at `key[i]` names its line.
    fn pairs(&mut self, key: &'static str) -> Result<Option<Vec<[u32; 2]>>, Self::Error>;

    /// A material given as a compliance (key `compliance`) or a stiffness (key `stiffness`), if
    /// either is (refused when both are, or the value is not a valid one).
    fn material(
        &mut self,
        compliance: &'static str,
        stiffness: &'static str,
    ) -> Result<Option<Elasticity>, Self::Error>;

    /// The refusal of `key` because it needs `needs` (a sentence: what else must be given).
    fn needs(&self, key: &'static str, needs: &'static str) -> Self::Error;

    /// The refusal of `key` because `first` and `second` do not go together.
    fn conflict(&self, key: &'static str, first: &'static str, second: &'static str) -> Self::Error;

    /// The strain tolerance the scene is baked to, if any.
    fn tolerance(&self) -> Option<&StrainTolerance>;

    /// Whether the cloth has pinned particles.
    fn has_pins(&self) -> bool;
}
