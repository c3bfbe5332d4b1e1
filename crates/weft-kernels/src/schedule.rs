//! Running a [`BatchPlan`]: the order and the threads, for any constraint kind.
//!
//! One solver iteration over a constraint set is three stages, each one phase of the step's
//! team (see [`crate::team`]):
//!
//! 1. **blocks**, one work item per block; inside a block its colours one after another on one
//!    thread (the block's particles stay in that core's cache);
//! 2. **boundary colours**, one phase each; each colour cut into work items of
//!    [`CHUNK_BATCHES`] batches;
//! 3. **the serial list**, one work item, lane by lane.
//!
//! The cut into work items depends only on the plan, never on the thread count, and the items of
//! a phase touch disjoint particles and disjoint multipliers, so the result is bit-identical for
//! any pool. Within an item the SIMD path runs two batches at a time (see [`X2`]) and a single
//! batch for an odd one out; the scalar path runs the same kernel body one lane at a time.

use std::ops::Range;

use weft_core::colouring::{BatchPlan, Block};
use weft_core::lanes::Lanes;
use wide::f32x8;

use crate::KernelPath;
use crate::lane::X2;
use crate::records::{BatchGroup, Record};
use crate::shared::SharedSlice;
use crate::team::Team;

/// Batches per work item of a boundary colour: a fixed number, so the split depends on the scene,
/// never on the thread count.
pub const CHUNK_BATCHES: usize = 64;

/// Read and write access to particle records for one work item.
pub(crate) trait Access {
    /// Record `i`.
    fn load(&self, i: u32) -> Record;
    /// Overwrites record `i`.
    fn store(&mut self, i: u32, r: Record);
}

impl Access for &mut [Record] {
    #[inline(always)]
    fn load(&self, i: u32) -> Record {
        self[i as usize]
    }
    #[inline(always)]
    fn store(&mut self, i: u32, r: Record) {
        self[i as usize] = r;
    }
}

/// Access to the shared records by the thread running one work item of a stage.
struct ItemAccess<'a>(SharedSlice<'a, Record>);

impl Access for ItemAccess<'_> {
    #[inline(always)]
    fn load(&self, i: u32) -> Record {
        // SAFETY: an `ItemAccess` exists only inside `solve_plan`, and is only given particle
        // indices from the lanes of the work item its thread runs. Every such index is below the
        // record count (`solve_plan`'s caller asserts that the lanes' `particle_count` equals
        // it). In stage 1 an item is one block, whose batches (by the plan invariant checked at
        // build) write only particles of that block and read only those and pinned particles,
        // which no batch writes. In stage 2 an item is a chunk of one colour, whose lanes write
        // particles that no other lane of the colour writes or reads. In stage 3 the serial list
        // is a single work item. Each stage is a team phase, ended by a barrier, and no other
        // code touches the records meanwhile. So no other thread writes record `i` while this
        // one reads it.
        unsafe { self.0.load(i) }
    }
    #[inline(always)]
    fn store(&mut self, i: u32, r: Record) {
        // SAFETY: as in `load`: `i` is in bounds and, in this stage, record `i` belongs to this
        // work item alone (no other item reads or writes it).
        unsafe { self.0.store(i, r) }
    }
}

/// The kernel of one constraint kind over lane-packed batches, with everything it needs besides
/// the particle records and its multipliers `λ`.
pub(crate) trait BatchKernel: Sync {
    /// Projects the batches `b..b + G::BATCHES` (of one colour) with SIMD lanes. Returns the
    /// degenerate active lanes.
    fn simd<G: BatchGroup>(&self, b: usize, lambda: &mut [Lanes<f32>], access: &mut impl Access) -> u32;
    /// Projects the active lanes of batch `b` one after another with the scalar instantiation.
    /// Returns the degenerate lanes.
    fn scalar(&self, b: usize, lambda: &mut Lanes<f32>, access: &mut impl Access) -> u32;
}

/// Runs the batches `first..first + lambda.len()` (one colour, or part of one) on this thread.
#[inline(always)]
fn run_batches<K: BatchKernel>(
    kernel: &K,
    path: KernelPath,
    first: usize,
    lambda: &mut [Lanes<f32>],
    access: &mut impl Access,
) -> u64 {
    let mut degenerate = 0u64;
    match path {
        KernelPath::Simd => {
            // Two batches in flight hide the latency of √ and ÷; an odd last batch goes alone.
            let mut i = 0;
            while i + 2 <= lambda.len() {
                degenerate += kernel.simd::<X2>(first + i, &mut lambda[i..i + 2], access) as u64;
                i += 2;
            }
            if i < lambda.len() {
                degenerate += kernel.simd::<f32x8>(first + i, &mut lambda[i..i + 1], access) as u64;
            }
        }
        KernelPath::Scalar => {
            for (i, lam) in lambda.iter_mut().enumerate() {
                degenerate += kernel.scalar(first + i, lam, access) as u64;
            }
        }
    }
    degenerate
}

/// One parallel stage of a plan.
enum Stage<'p> {
    /// Stage 1: one work item per block.
    Blocks(&'p [Block]),
    /// Stage 2: one boundary colour, one work item per chunk.
    Colour(Range<usize>),
}

impl Stage<'_> {
    /// Work items in the stage.
    fn items(&self) -> usize {
        match self {
            Stage::Blocks(blocks) => blocks.len(),
            Stage::Colour(range) => range.len().div_ceil(CHUNK_BATCHES),
        }
    }

    /// The batch ranges of work item `i`, in the order they run.
    fn item(&self, i: usize) -> impl Iterator<Item = Range<usize>> + '_ {
        let (block, chunk) = match self {
            Stage::Blocks(blocks) => (Some(&blocks[i]), None),
            Stage::Colour(range) => {
                let start = range.start + i * CHUNK_BATCHES;
                (None, Some(start..(start + CHUNK_BATCHES).min(range.end)))
            }
        };
        block.into_iter().flat_map(|b| b.colours.iter().cloned()).chain(chunk)
    }
}

/// `sweeps` solver iterations of one constraint set in one team of the current rayon pool (woken
/// once, as a time step runs its iterations): `phases` runs one sweep as team phases over the
/// set's multipliers and the particle records and returns its thread's degenerate projections;
/// the result is their sum over every sweep and thread. The public `solve` of each kind (the
/// benches time them) is this with its own phases.
pub(crate) fn sweep_in_team(
    lambda: &mut [Lanes<f32>],
    positions: &mut [Record],
    sweeps: usize,
    phases: impl Fn(&Team<'_>, SharedSlice<'_, Lanes<f32>>, SharedSlice<'_, Record>) -> u64 + Sync,
) -> u64 {
    let (lambdas, records) = (SharedSlice::new(lambda), SharedSlice::new(positions));
    crate::team::run(|team| (0..sweeps).map(|_| phases(team, lambdas, records)).sum::<u64>()).iter().sum()
}

/// One solver iteration of `kernel` over `plan` as phases of `team`: blocks, boundary colours,
/// serial list. Every thread of the team calls it; each returns the degenerate projections of
/// the work items it ran.
///
/// The caller guarantees that every particle index of the plan's batches is below the length of
/// `records`, and that `lambdas` has one element per batch of `plan`; during the call no other
/// code touches `records` or `lambdas`.
pub(crate) fn solve_plan<K: BatchKernel>(
    team: &Team<'_>,
    kernel: &K,
    plan: &BatchPlan,
    lambdas: SharedSlice<'_, Lanes<f32>>,
    records: SharedSlice<'_, Record>,
    path: KernelPath,
) -> u64 {
    let mut degenerate = 0;
    let mut access = ItemAccess(records);
    let mut run = |range: Range<usize>, access: &mut ItemAccess<'_>| {
        // SAFETY: each work item is run exactly once per phase (claimed from the team's
        // counter) and the batch ranges of a phase's items are disjoint, so this thread alone
        // touches these multipliers until the phase's barrier.
        let lambda = unsafe { lambdas.range_mut(range.clone()) };
        degenerate += run_batches(kernel, path, range.start, lambda, access);
    };
    let stages = std::iter::once(Stage::Blocks(&plan.blocks))
        .chain(plan.colours.iter().map(|c| Stage::Colour(c.clone())));
    for stage in stages.filter(|s| s.items() > 0) {
        team.for_each(stage.items(), |i| stage.item(i).for_each(|range| run(range, &mut access)));
    }
    // Stage 3: the serial list, one constraint after another, as one work item.
    if !plan.serial.is_empty() {
        team.for_each(1, |_| {
            for b in plan.serial.clone() {
                // SAFETY: the serial list is one work item: this thread alone runs it, and
                // touches these multipliers, until the phase's barrier.
                let lambda = unsafe { lambdas.range_mut(b..b + 1) };
                degenerate += kernel.scalar(b, &mut lambda[0], &mut access) as u64;
            }
        });
    }
    degenerate
}
