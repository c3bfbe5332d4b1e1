//! [`BatchedKind`]: what a constraint kind solved in colour batches states about itself, and the
//! data a projection reads and returns.
//!
//! A batched kind is a constraint over a fixed number `K` of particles with `P` parameters,
//! packed lane by lane in [`Batches<K, P>`](crate::batches::Batches). The kind writes its
//! projection once, generic over [`Real`]: the solver's generic shell (`weft-kernels`'
//! `schedule`) gathers the particles of eight constraints (or sixteen, two batches in flight)
//! into lanes, calls [`BatchedKind::project`], and scatters the moved particles back by the batch
//! plan's write masks; its scalar twin calls the same function on one constraint at a time, so
//! the two give the same bits. Everything around the maths — colours, blocks, threads, `λ`
//! storage, residual reduction, statistics — is written once, for every kind.
//!
//! A projection sees the constraint's particles (positions `x` in m and inverse masses `w` in
//! 1/kg, slot by slot), its `λ` before the projection, the time step, and, on demand through
//! [`Load`], its parameter columns and the positions of its particles at the start of the step
//! (for damping). It returns `λ` after the projection, the correction of each slot (m) and which
//! lanes were projected: a lane that was not (no usable gradient) moves nothing and is counted as
//! degenerate.

use wide::f32x8;

use crate::batches::{BatchLanes, Packed};
use crate::cloth::ClothContext;
use crate::error::BuildError;
use crate::kinds::{KindInfo, Registered, SceneKeys};
use crate::lanes::{Real, V3};
use crate::settings::TimeStep;

/// What one projection reads besides the positions, inverse masses and `λ`: the constraint's
/// parameters and the positions at the start of the step, loaded only when the kind asks (a
/// variant that never asks never loads them).
pub trait Load<R> {
    /// Parameter column `column` (`< P`) of the constraint, in the kind's unit; 0 where the
    /// column is stored empty (every value zero).
    fn param(&self, column: usize) -> R;
    /// The position of particle slot `slot` (`< K`) at the start of the time step (m).
    fn prev(&self, slot: usize) -> V3<R>;
}

/// The input of one projection: one constraint, or one per lane.
#[derive(Clone, Copy)]
pub struct Input<'a, R, const K: usize, L> {
    /// Positions of the constraint's particles, slot by slot (m).
    pub x: [V3<R>; K],
    /// Their inverse masses (1/kg; 0 for a pinned particle).
    pub w: [R; K],
    /// `λ` before the projection, in the kind's unit.
    pub lambda: R,
    /// The time step and its derived factors.
    pub step: &'a TimeStep,
    /// Parameters and previous positions, on demand.
    pub load: L,
}

/// The outcome of one projection.
#[derive(Clone, Copy, Debug)]
pub struct Projected<R: Real, const K: usize> {
    /// `λ` after the projection (unchanged in lanes not projected).
    pub lambda: R,
    /// The correction of each slot (m): the particle moves to `x + delta` where its batch's write
    /// mask allows. Lanes not projected hold 0; slots the kind never moves
    /// ([`BatchedKind::MOVES`]) are never read.
    pub delta: [V3<R>; K],
    /// Lanes that were projected; the others are degenerate (counted, moved nothing).
    pub valid: R::Mask,
}

/// `|C|` of the lanes of one batch, as [`BatchedKind::residual`] reads it.
#[derive(Clone, Copy, Debug)]
pub struct LaneResidual {
    /// `|C|` of each lane, in the kind's unit.
    pub abs: f32x8,
    /// `|C|` relative to the constraint's scale (0 where it has none).
    pub rel: f32x8,
    /// Lanes that count (bit `k` for lane `k`); the driver also drops inactive lanes.
    pub counted: u8,
}

/// A constraint kind solved in colour batches: `K` particles and `P` parameters per constraint.
/// Implemented by a unit type per kind, registered once in [`crate::kinds`]; see
/// `docs/architecture.md` ("Adding a constraint kind") for the recipe.
pub trait BatchedKind<const K: usize, const P: usize>:
    Registered + Copy + Default + std::fmt::Debug + Send + Sync + 'static
{
    /// What the output says of the kind: its name, residual unit, `stats.csv` columns and plots.
    const INFO: KindInfo;

    /// The slots the kind may move. A slot it never moves (a tether's pin) is not scattered back;
    /// the batch plan never lets a lane write a pinned particle either.
    const MOVES: [bool; K] = [true; K];

    /// The kind in a cloth, as a scene states it ([`ClothDesc::kinds`](crate::ClothDesc::kinds)):
    /// `Option<…Desc>` for a kind a cloth may have, `()` for one made from other descriptions.
    type Desc: Clone + std::fmt::Debug + PartialEq + Default;

    /// The kind's description from a cloth's scene keys (its registry line lists them), or the
    /// refusal of one of them.
    fn describe<S: SceneKeys>(keys: &mut S) -> Result<Self::Desc, S::Error>;

    /// The constraints `desc` asks of the cloth `ctx` is adding (global particle indices), or the
    /// rule it breaks. Constraints whose particles are all pinned are left out.
    fn build(desc: &Self::Desc, ctx: &ClothContext<'_>) -> Result<Vec<Packed<K, P>>, BuildError>;

    /// The variant of [`BatchedKind::project`] that fits these lanes, below [`VARIANTS`]: a kind
    /// with an optional parameter column (a damping stored empty when no constraint is damped,
    /// say) picks the variant that never loads it. Kinds with one variant keep the default, 0.
    fn variant(_lanes: &BatchLanes<'_, K, P>) -> u8 {
        0
    }

    /// The projection of one constraint, or of one per lane, in variant `V` (module docs).
    fn project<R: Real, L: Load<R>, const V: u8>(input: Input<'_, R, K, L>) -> Projected<R, K>;

    /// `|C|` of eight constraints at positions `x` (m), with their parameter columns `param`
    /// (0 where a column is stored empty).
    fn residual(x: [V3<f32x8>; K], param: &dyn Fn(usize) -> f32x8) -> LaneResidual;
}

/// How many variants [`BatchedKind::variant`] may pick from (`0..VARIANTS`).
pub const VARIANTS: u8 = 4;
