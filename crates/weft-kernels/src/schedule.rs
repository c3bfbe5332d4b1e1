//! Running a [`BatchPlan`](weft_core::colouring::BatchPlan): the order and the threads, and the
//! generic shell around the projection of any batched constraint kind ([`BatchedKind`]).
//!
//! One solver iteration over a constraint set is four stages, each one phase of the step's
//! team (see [`crate::team`]):
//!
//! 1. **blocks**, one work item per block; inside a block its colours one after another on one
//!    thread (the block's particles stay in that core's cache);
//! 2. **strands**, one work item per strand (a connected part of the constraints across blocks,
//!    see [`weft_core::colouring`]); inside a strand its colours one after another, on one
//!    thread, without a barrier between them;
//! 3. **boundary colours** (of the constraints across blocks in no strand), one phase each; each
//!    colour cut into work items of [`CHUNK_BATCHES`] batches; consecutive colours of at most one
//!    chunk each run one after another in one work item of one phase (the same order, without
//!    barriers between them at which the team's other threads would only wait);
//! 4. **the serial list**, one work item, lane by lane.
//!
//! The cut into work items depends only on the plan, never on the thread count, and the items of
//! a phase touch disjoint particles and disjoint multipliers, so the result is bit-identical for
//! any pool. Within an item the SIMD path runs two batches at a time (see [`X2`]) and a single
//! batch for an odd one out; the scalar path runs the same kernel body one lane at a time.

//!
//! # The generic shell
//!
//! A kind (distance, bending, tethers, any kind of the registry in `weft_core::kinds`) states its
//! projection once, as [`BatchedKind::project`] over any `Real` number type. Everything else is written
//! once here, for every kind: gathering a batch's particles into lanes and scattering the moved
//! ones back by the plan's write masks ([`run_batches`]: two batches at a time on the SIMD path,
//! one constraint at a time on the scalar path, the same function on both), picking the kind's
//! variant, the team phases of an iteration (`solve_phases`), a standalone solve for benches and
//! tests ([`solve`]) and the residual reduction ([`residual`]). The step runs the kinds of the
//! registry through `crate::stepper`.

use std::ops::{Deref, Range};

use rayon::prelude::*;
use weft_core::batches::BatchLanes;
use weft_core::colouring::{Block, Strand};
use weft_core::kinds::{BatchedKind, Input, Load, VARIANTS};
use weft_core::lanes::{LANES, Lanes, V3, X2, add3};
use weft_core::settings::TimeStep;
use wide::f32x8;

use crate::KernelPath;
use crate::records::{BatchGroup, Record, gather8, slot_writes};
use crate::shared::{Part, SharedSlice};
use crate::stats::Residual;
use crate::team::{self, Phase, Team};

pub use weft_core::colouring::CHUNK_BATCHES;

/// Read and write access to particle records, and to the displacements of the step, for the
/// work item that runs a kernel.
pub trait Access {
    /// Record `i`: `[x, y, z, w]` in m and 1/kg.
    fn load(&self, i: u32) -> Record;
    /// Moves particle `i` by the correction `delta` (`[dx, dy, dz, 0]`, m): record `i` becomes
    /// `r`, which the kernel computed as `x + delta` (so its bits are the kernel's), and `delta`
    /// is added to the particle's displacement of the step (see [`crate::integrate`]).
    fn store(&mut self, i: u32, r: Record, delta: Record);
}

/// Adds the correction `delta` (m) to a displacement record `d`, component by component.
#[inline(always)]
pub(crate) fn add_record(d: Record, delta: Record) -> Record {
    [d[0] + delta[0], d[1] + delta[1], d[2] + delta[2], d[3] + delta[3]]
}

/// Plain slices as [`Access`]: the positions (`[x, y, z, w]` records, m and 1/kg) and the
/// displacements of the step (`[dx, dy, dz, 0]`, m), one of each per particle.
impl Access for (&mut [Record], &mut [Record]) {
    #[inline(always)]
    fn load(&self, i: u32) -> Record {
        self.0[i as usize]
    }
    #[inline(always)]
    fn store(&mut self, i: u32, r: Record, delta: Record) {
        self.0[i as usize] = r;
        self.1[i as usize] = add_record(self.1[i as usize], delta);
    }
}

/// Access to the shared records and displacements by the work item of a [`solve_phases`] stage
/// that holds `phase`.
struct ItemAccess<'a, 'p> {
    records: SharedSlice<'a, Record>,
    displacement: SharedSlice<'a, Record>,
    phase: &'p Phase,
}

impl Access for ItemAccess<'_, '_> {
    #[inline(always)]
    fn load(&self, i: u32) -> Record {
        // SAFETY: an `ItemAccess` exists only inside `solve_phases`, and is only given particle
        // indices from the lanes of the work item that holds `phase`. Every such index is below
        // the record count (`solve_phases`' caller guarantees that the lanes' `particle_count`
        // equals it). In stage 1 an item is one block, whose batches (by the plan invariant
        // checked at build) write only particles of that block and read only those and pinned
        // particles, which no batch writes. In stage 2 an item is a chunk of one colour, whose
        // lanes write particles that no other lane of the colour writes or reads. In stage 3
        // the serial list is a single work item. So no other item of this phase writes record
        // `i`.
        unsafe { self.records.load(self.phase, i) }
    }
    #[inline(always)]
    fn store(&mut self, i: u32, r: Record, delta: Record) {
        // SAFETY: as in `load`: `i` is in bounds (the displacements have one record per
        // particle too, `solve_phases`' caller guarantees it) and, in this phase, record `i` and
        // displacement `i` belong to this work item alone (no other item reads or writes them:
        // a kernel touches the displacement of exactly the particles it writes).
        unsafe {
            self.records.store(self.phase, i, r);
            let d = self.displacement.load(self.phase, i);
            self.displacement.store(self.phase, i, add_record(d, delta));
        }
    }
}

/// What the shell reads besides the records and `λ`: the kind's lanes, the positions at the start
/// of the step (for damping) and the time step.
#[derive(Clone, Copy)]
pub struct KernelInputs<'a, const K: usize, const P: usize> {
    /// The constraints, packed in batches.
    pub lanes: &'a BatchLanes<'a, K, P>,
    /// `[x, y, z, 0]` at the start of the step, one per particle (m).
    pub prev: &'a [Record],
    /// The time step and its derived factors.
    pub step: &'a TimeStep,
}

/// `[x, y, z]` of a record.
#[inline(always)]
fn xyz<R: Copy>(r: [R; 4]) -> V3<R> {
    [r[0], r[1], r[2]]
}

/// [`Load`] for the batches `b..b + G::BATCHES`, lane by lane.
struct GroupLoad<'a, const K: usize, const P: usize> {
    inputs: KernelInputs<'a, K, P>,
    b: usize,
}

impl<G: BatchGroup, const K: usize, const P: usize> Load<G> for GroupLoad<'_, K, P> {
    #[inline(always)]
    fn param(&self, column: usize) -> G {
        let col = self.inputs.lanes.param(column);
        if col.is_empty() { G::splat(0.0) } else { G::load(&col[self.b..self.b + G::BATCHES]) }
    }

    #[inline(always)]
    fn prev(&self, slot: usize) -> V3<G> {
        let ids = &self.inputs.lanes.particles(slot)[self.b..self.b + G::BATCHES];
        xyz(G::gather(|i| self.inputs.prev[i as usize], ids))
    }
}

/// [`Load`] for lane `k` of batch `b`, whose particles are `ids`.
struct LaneLoad<'a, const K: usize, const P: usize> {
    inputs: KernelInputs<'a, K, P>,
    b: usize,
    k: usize,
    ids: [u32; K],
}

impl<const K: usize, const P: usize> Load<f32> for LaneLoad<'_, K, P> {
    #[inline(always)]
    fn param(&self, column: usize) -> f32 {
        self.inputs.lanes.param(column).get(self.b).map_or(0.0, |l| l.0[self.k])
    }

    #[inline(always)]
    fn prev(&self, slot: usize) -> V3<f32> {
        xyz(self.inputs.prev[self.ids[slot] as usize])
    }
}

/// Projects the batches `b..b + G::BATCHES` (of one colour) with SIMD lanes, in variant `V` of
/// `T`: gathers every slot's records, projects, stores `λ`, scatters the slots `T` moves where
/// the write masks allow. Returns the degenerate active lanes.
#[inline(always)]
fn simd<T: BatchedKind<K, P>, G: BatchGroup, const K: usize, const P: usize, const V: u8>(
    inputs: KernelInputs<'_, K, P>,
    b: usize,
    lambda: &mut [Lanes<f32>],
    access: &mut impl Access,
) -> u32 {
    let batches = b..b + G::BATCHES;
    let ids: [&[Lanes<u32>]; K] = std::array::from_fn(|s| &inputs.lanes.particles(s)[batches.clone()]);
    let records = ids.map(|i| G::gather(|p| access.load(p), i));
    let (x, w) = (records.map(xyz), records.map(|r| r[3]));
    let load = GroupLoad { inputs, b };
    let out = T::project::<G, _, V>(Input { x, w, lambda: G::load(lambda), step: inputs.step, load });
    out.lambda.store(lambda);
    let plan = inputs.lanes.plan();
    let writes = &plan.writes[batches.clone()];
    for s in 0..K {
        if !T::MOVES[s] {
            debug_assert!(writes.iter().all(|&m| slot_writes(m, s) == 0), "slot {s} is never written");
            continue;
        }
        let (p, d) = (add3(x[s], out.delta[s]), out.delta[s]);
        G::scatter(|i, r, m| access.store(i, r, m), ids[s], writes, s, [p[0], p[1], p[2], w[s]], d);
    }
    G::degenerate(out.valid, &plan.active[batches])
}

/// Projects the active lanes of batch `b` one after another with the scalar instantiation of
/// variant `V` of `T`, storing the slots it moves where the write mask allows. Returns the
/// degenerate lanes.
#[inline(always)]
fn scalar<T: BatchedKind<K, P>, const K: usize, const P: usize, const V: u8>(
    inputs: KernelInputs<'_, K, P>,
    b: usize,
    lambda: &mut Lanes<f32>,
    access: &mut impl Access,
) -> u32 {
    let plan = inputs.lanes.plan();
    let writes = plan.writes[b];
    let mut degenerate = 0;
    for k in 0..plan.active[b] as usize {
        let ids: [u32; K] = std::array::from_fn(|s| inputs.lanes.particles(s)[b].0[k]);
        let records = ids.map(|i| access.load(i));
        let (x, w) = (records.map(xyz), records.map(|r| r[3]));
        let load = LaneLoad { inputs, b, k, ids };
        let out = T::project::<f32, _, V>(Input { x, w, lambda: lambda.0[k], step: inputs.step, load });
        lambda.0[k] = out.lambda;
        for s in 0..K {
            if T::MOVES[s] && writes & (1 << (s * LANES + k)) != 0 {
                let (p, d) = (add3(x[s], out.delta[s]), out.delta[s]);
                access.store(ids[s], [p[0], p[1], p[2], w[s]], [d[0], d[1], d[2], 0.0]);
            }
        }
        degenerate += u32::from(!out.valid);
    }
    degenerate
}

/// Runs the batches `first..first + lambda.len()` (one colour, or part of one) on this thread in
/// variant `V` of `T`: on the SIMD path two batches at a time and an odd last one alone, on the
/// scalar path one lane at a time. Returns the degenerate projections.
#[inline(always)]
fn run_variant<T: BatchedKind<K, P>, const K: usize, const P: usize, const V: u8>(
    inputs: KernelInputs<'_, K, P>,
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
                degenerate += simd::<T, X2, K, P, V>(inputs, first + i, &mut lambda[i..i + 2], access) as u64;
                i += 2;
            }
            if i < lambda.len() {
                degenerate +=
                    simd::<T, f32x8, K, P, V>(inputs, first + i, &mut lambda[i..i + 1], access) as u64;
            }
        }
        KernelPath::Scalar => {
            for (i, lam) in lambda.iter_mut().enumerate() {
                degenerate += scalar::<T, K, P, V>(inputs, first + i, lam, access) as u64;
            }
        }
    }
    degenerate
}

/// Runs the batches `first..first + lambda.len()` (one colour, or part of one) of kind `T` on
/// this thread, in the variant the kind picks for its lanes
/// ([`BatchedKind::variant`]). Returns the degenerate projections.
#[inline(always)]
pub fn run_batches<T: BatchedKind<K, P>, const K: usize, const P: usize>(
    inputs: KernelInputs<'_, K, P>,
    path: KernelPath,
    first: usize,
    lambda: &mut [Lanes<f32>],
    access: &mut impl Access,
) -> u64 {
    const { assert!(VARIANTS == 4) };
    match T::variant(inputs.lanes) {
        0 => run_variant::<T, K, P, 0>(inputs, path, first, lambda, access),
        1 => run_variant::<T, K, P, 1>(inputs, path, first, lambda, access),
        2 => run_variant::<T, K, P, 2>(inputs, path, first, lambda, access),
        3 => run_variant::<T, K, P, 3>(inputs, path, first, lambda, access),
        v => panic!("variant {v} of {} is not below VARIANTS", T::INFO.name),
    }
}

/// One parallel stage of a plan.
enum Stage<'p> {
    /// Stage 1: one work item per block.
    Blocks(&'p [Block]),
    /// Stage 2: one work item per strand.
    Strands(&'p [Strand]),
    /// Stage 3: one boundary colour, one work item per chunk.
    Colour(Range<usize>),
    /// Stage 3: consecutive boundary colours of one chunk each, one after another in one work
    /// item: the order the colours would run in as phases of their own, without a barrier
    /// between them that the team's other threads would only wait at.
    Small(&'p [Range<usize>]),
}

impl<'p> Stage<'p> {
    /// The boundary colours as stages: each colour of more than one chunk a stage of its own,
    /// each run of consecutive one-chunk colours one [`Stage::Small`].
    fn colours(colours: &'p [Range<usize>]) -> impl Iterator<Item = Stage<'p>> + 'p {
        let small = |c: &Range<usize>| c.len() <= CHUNK_BATCHES;
        let mut at = 0;
        std::iter::from_fn(move || {
            let first = colours.get(at)?;
            if !small(first) {
                at += 1;
                return Some(Stage::Colour(first.clone()));
            }
            let run = colours[at..].iter().take_while(|c| small(c)).count();
            at += run;
            Some(Stage::Small(&colours[at - run..at]))
        })
    }
}

impl Stage<'_> {
    /// Work items in the stage.
    fn items(&self) -> usize {
        match self {
            Stage::Blocks(blocks) => blocks.len(),
            Stage::Strands(strands) => strands.len(),
            Stage::Colour(range) => range.len().div_ceil(CHUNK_BATCHES),
            Stage::Small(colours) => colours.iter().any(|c| !c.is_empty()) as usize,
        }
    }

    /// The batch ranges of work item `i`, in the order they run.
    fn item(&self, i: usize) -> impl Iterator<Item = Range<usize>> + '_ {
        let (colours, chunk): (&[Range<usize>], _) = match self {
            Stage::Blocks(blocks) => (&blocks[i].colours, None),
            Stage::Strands(strands) => (&strands[i].colours, None),
            Stage::Colour(range) => {
                let start = range.start + i * CHUNK_BATCHES;
                (&[], Some(start..(start + CHUNK_BATCHES).min(range.end)))
            }
            Stage::Small(colours) => (colours, None),
        };
        colours.iter().cloned().chain(chunk)
    }
}

/// The shared arrays one iteration of a batched kind works on.
#[derive(Clone, Copy)]
pub(crate) struct SolveArrays<'a, X> {
    /// The kind's multipliers, one element per batch.
    pub(crate) lambdas: SharedSlice<'a, Lanes<f32>>,
    /// `[x, y, z, w]` records.
    pub(crate) records: SharedSlice<'a, Record>,
    /// `[dx, dy, dz, 0]` displacements of the step (m), moved with the records.
    pub(crate) displacement: SharedSlice<'a, Record>,
    /// `[x, y, z, 0]` at the start of the step, read whole by every work item (a team phase's
    /// read part: the step's `SharedSlice`, which no phase of a batched kind writes, or a plain
    /// slice).
    pub(crate) prev: X,
}

/// One solver iteration of the kind `T` as phases of `team`: blocks, strands, boundary colours,
/// serial list.
/// Every thread of the team calls it; each returns the degenerate projections of the work items
/// it ran.
///
/// The caller guarantees that every particle index of the lanes is below the length of
/// `arrays.records`, `arrays.displacement` and `arrays.prev` (the lanes' `particle_count` equals
/// all three), that `arrays.lambdas` has one element per batch, and that during the call no
/// other code touches the records, the displacements or the multipliers, and nothing writes
/// `arrays.prev`.
pub(crate) fn solve_phases<T: BatchedKind<K, P>, const K: usize, const P: usize, X>(
    team: &Team<'_>,
    lanes: &BatchLanes<'_, K, P>,
    arrays: SolveArrays<'_, X>,
    step: &TimeStep,
    path: KernelPath,
) -> u64
where
    X: Part,
    for<'p> X::Out<'p>: Deref<Target = [Record]>,
{
    let plan = lanes.plan();
    if plan.is_empty() {
        return 0;
    }
    let mut degenerate = 0;
    let mut run = |phase: &Phase, prev: &[Record], range: Range<usize>, path: KernelPath| {
        // SAFETY: each work item is run exactly once per phase (claimed from the team's
        // counter) and the batch ranges of a phase's items are disjoint, so this item alone
        // touches these multipliers in this phase.
        let lambda = unsafe { arrays.lambdas.write(phase, range.clone()) };
        let mut access = ItemAccess { records: arrays.records, displacement: arrays.displacement, phase };
        let inputs = KernelInputs { lanes, prev, step };
        degenerate += run_batches::<T, K, P>(inputs, path, range.start, lambda, &mut access);
    };
    let stages = [Stage::Blocks(&plan.blocks), Stage::Strands(&plan.strands)];
    let stages = stages.into_iter().chain(Stage::colours(&plan.colours));
    for stage in stages.filter(|s| s.items() > 0) {
        team.for_each_chunk(stage.items(), (arrays.prev,), |phase, i, (prev,)| {
            stage.item(i).for_each(|range| run(phase, &prev, range, path))
        });
    }
    // Stage 4: the serial list, one constraint after another (its lanes may share particles,
    // so always the scalar path), as one work item.
    if !plan.serial.is_empty() {
        team.for_each_chunk(1, (arrays.prev,), |phase, _, (prev,)| {
            for b in plan.serial.clone() {
                run(phase, &prev, b..b + 1, KernelPath::Scalar);
            }
        });
    }
    degenerate
}

/// `sweeps` solver iterations of the kind `T` over all its constraints, each as [`crate::schedule`]
/// orders it (blocks, strands, boundary colours, serial list), in one team of the current rayon pool, as
/// a time step runs its iterations (the pool is woken once). `prev` are the positions at the
/// start of the step (m; read by damped kernels); every correction is also added to
/// `displacement` (`[dx, dy, dz, 0]` per particle, m), as in a step. Returns the degenerate
/// projections. The benches time this.
///
/// # Panics
/// If `positions`, `displacement` or `prev` do not hold exactly the lanes' particle count, or
/// `lambda` is not one element per batch.
#[allow(clippy::too_many_arguments)]
pub fn solve<T: BatchedKind<K, P>, const K: usize, const P: usize>(
    _kind: T,
    lanes: &BatchLanes<'_, K, P>,
    lambda: &mut [Lanes<f32>],
    positions: &mut [Record],
    displacement: &mut [Record],
    prev: &[Record],
    step: &TimeStep,
    path: KernelPath,
    sweeps: usize,
) -> u64 {
    assert_eq!(positions.len(), lanes.particle_count(), "positions belong to another model");
    assert_eq!(prev.len(), lanes.particle_count(), "previous positions belong to another model");
    assert_eq!(displacement.len(), lanes.particle_count(), "displacements belong to another model");
    assert_eq!(lambda.len(), lanes.batch_count(), "one λ per batch");
    let arrays = SolveArrays {
        lambdas: SharedSlice::new(lambda),
        records: SharedSlice::new(positions),
        displacement: SharedSlice::new(displacement),
        prev,
    };
    team::run(
        |team| (0..sweeps).map(|_| solve_phases::<T, K, P, _>(team, lanes, arrays, step, path)).sum(),
        |a, b| a + b,
    )
}

/// `|C|` over all constraints of the kind `T`, now: largest, sum and count, in the kind's unit and
/// relative to each constraint's scale, reduced in a fixed order (chunks of [`CHUNK_BATCHES`]
/// in parallel, merged in chunk order).
///
/// # Panics
/// If `positions` does not hold exactly the lanes' particle count.
pub fn residual<T: BatchedKind<K, P>, const K: usize, const P: usize>(
    _kind: T,
    lanes: &BatchLanes<'_, K, P>,
    positions: &[Record],
) -> Residual {
    assert_eq!(positions.len(), lanes.particle_count(), "positions belong to another model");
    let batches = lanes.batch_count();
    let per_chunk: Vec<Residual> = (0..batches.div_ceil(CHUNK_BATCHES))
        .into_par_iter()
        .map(|c| {
            let mut r = Residual::default();
            for b in c * CHUNK_BATCHES..((c + 1) * CHUNK_BATCHES).min(batches) {
                let x = std::array::from_fn(|s| {
                    xyz(gather8(|i| positions[i as usize], &lanes.particles(s)[b].0))
                });
                let param = |c: usize| lanes.param(c).get(b).map_or(f32x8::splat(0.0), |l| f32x8::new(l.0));
                let lane = T::residual(x, &param);
                let (abs, rel) = (lane.abs.to_array(), lane.rel.to_array());
                for k in 0..lanes.plan().active[b] as usize {
                    if lane.counted & (1 << k) != 0 {
                        r.add(abs[k], rel[k]);
                    }
                }
            }
            r
        })
        .collect();
    per_chunk.into_iter().fold(Residual::default(), Residual::merge)
}
