//! Self-collision (see `weft_core::self_collision`): particle–particle contacts with a thickness
//! and friction, projected by Jacobi iterations so that the result does not depend on the thread
//! count.
//!
//! **Neighbours.** A time step's neighbours of a free particle `i` are the taking-part particles
//! `j ≠ i` closer than `SEARCH_SCALE × d_ij` at the step's predicted positions and not excluded
//! at rest, ascending; the step's projections act on those closer than `d_ij`. A search in every
//! step would find them; the solver keeps three levels of supersets instead, each used only
//! while the motion guarantees that it yields exactly the contacts of that search, so the bits
//! do not depend on when the lists were made (a unit test steps falling sheets both ways and
//! compares every bit of every step; the reference solver searches every step):
//!
//! 1. **Lists, built with a search** (Verlet lists): each free particle's partners closer than
//!    [`LIST_SCALE`]` × d_ij` (about `2·d_ij`). Two team phases: the taking-part particles are
//!    entered in a `weft_geometry::Grid` (cells `LIST_SCALE × d_max` wide, counting-sorted by
//!    hashed cell, ascending index within a bucket; one item, `O(n)`), whose order of the
//!    particles numbers the *slots* that the later phases work through in chunks, so that a
//!    chunk's particles lie close together; then each slot's list, in parallel chunks: every
//!    particle of the 27 cells around its own (gathered once per cell) within
//!    `LIST_SCALE × d_ij`, ascending, less the pairs excluded at
//!    rest. The lists are **kept** from step to step while every taking-part particle is within
//!    [`REUSE_MARGIN`]` × d_min` m of where they were built, less a translation common to all (the
//!    middle of the last step's spread of displacements; a translation changes no distance), and
//!    keeps its pinned or free state: two particles are then at most `2·REUSE_MARGIN × d_ij`
//!    closer than at the build, so every pair now closer than `SEARCH_SCALE × d_ij` is in the
//!    lists. The check is one parallel pass after each prediction; its outcome is an OR over the
//!    chunks, the same for any thread count. The lists are built again when the check fails, in
//!    a stepper's first step, and when the stepper is given other self-collision data
//!    ([`SelfCollision::key`]).
//! 2. **Hot pairs**: the entries of the lists closer than [`HOT_SCALE`]` × d_ij` (`1.1·d_ij`) where
//!    they are picked, one pass over the lists (after each build, and at a step's prediction once
//!    some particle has moved more than [`REPICK_MARGIN`]` × d_min` since the last pick).
//! 3. **A projection** tests only the hot pairs while every particle is within [`HOT_MARGIN`]`×
//!    d_min` of where they were picked and within [`SWEEP_MARGIN`]` × d_min` of its prediction
//!    (checked in the projection's first phase, an OR over the chunks): every pair then closer
//!    than `d_ij` is a hot pair, and a neighbour of the step. Otherwise the projection is done
//!    again with the step's neighbours (the entries of the lists closer than `SEARCH_SCALE ×
//!    d_ij` at the predicted positions), and so are the step's later projections.
//!
//! The margins are a fraction of the smallest thickness `d_min` less `1/1000`, which covers the
//! `f32` rounding of the squared distances (relative, since the difference of two `f32`
//! coordinates is rounded relative to itself).
//!
//! **Projection** (after the other constraint kinds in every iteration; two team phases): for
//! each free particle `i` and each neighbour `j` (ascending) with `|x_i − x_j| < d_ij`:
//!
//! ```text
//! n    = (x_i − x_j)/|x_i − x_j|,  p = d_ij − |x_i − x_j|          (penetration, m)
//! Δp   = (x_i − x_prev,i) − (x_j − x_prev,j),  Δp_t = Δp − (Δp·n)·n (relative slip this step, m)
//! f    = Δp_t                  if |Δp_t| ≤ μ·p   (static: the slip is undone)
//!        Δp_t·μ·p/|Δp_t|        otherwise        (kinetic: at most μ·p of it)
//! Δx_i += w_i/(w_i + w_j) · (p·n − f)
//! ```
//!
//! then `x_i += ω/k · Δx_i` with `k` the active contacts and `ω` = `RELAXATION`. All
//! corrections are computed from the positions before the phase and applied in a second phase,
//! so the outcome is the same for any thread count. A pair closer than
//! [`MIN_LENGTH`] has no normal: it is skipped and counted as
//! degenerate.
//!
//! The distance tests (of a build's candidates, of a pick, of a projection's pairs) and the
//! contacts run eight pairs at a time on `f32x8` lanes, with the `f32` operations of the scalar
//! test and of [`particle_correction`] (the scalar body) in the same order, so every lane has
//! the scalar bits; both kernel paths run them. A particle's contacts are summed in ascending
//! partner order.

use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use weft_core::kinds::distance::MIN_LENGTH;
use weft_core::self_collision::{RELAXATION, SEARCH_SCALE, SelfCollision};
use weft_geometry::Grid;
use wide::f32x8;

use crate::lane::SIMD_WIDTH;
use crate::records::{Record, gather8};
use crate::shared::{Part, SharedSlice};
use crate::team::{self, Team};

/// How far a taking-part particle may move from where the neighbour lists were built, less a
/// translation common to all, before they are built again, in units of the smallest thickness
/// `d_min` of the model (so `REUSE_MARGIN × d_min` m): half the search margin,
/// `(SEARCH_SCALE − 1)/2`.
pub const REUSE_MARGIN: f32 = (SEARCH_SCALE - 1.0) / 2.0;

/// The built lists hold the pairs closer than `LIST_SCALE × d_ij` (dimensionless): the search
/// radius plus twice [`REUSE_MARGIN`], and `1/1000` of it more. Two particles that each moved at
/// most `REUSE_MARGIN × d_min ≤ REUSE_MARGIN × d_ij` since the build are at most
/// `2·REUSE_MARGIN × d_ij` closer, so every pair now closer than `SEARCH_SCALE × d_ij` is in the
/// lists. The `1/1000` covers the `f32` rounding of the squared distances: relative, a few parts
/// in `10⁷`, since the difference of two `f32` coordinates is rounded relative to itself.
pub const LIST_SCALE: f32 = (SEARCH_SCALE + 2.0 * REUSE_MARGIN) * 1.001;

/// The hot pairs are those closer than `HOT_SCALE × d_ij` (dimensionless) when picked out of the
/// built lists.
pub const HOT_SCALE: f32 = 1.1;

/// While no taking-part particle has moved more than `HOT_MARGIN × d_min` since the hot pairs
/// were picked, every pair closer than its thickness is a hot pair: two particles that each moved
/// at most that much are at most `(HOT_SCALE − 1) × d_ij` closer. Half of `HOT_SCALE − 1`, less
/// `1/1000` of it (the rounding, as for [`LIST_SCALE`]).
pub const HOT_MARGIN: f32 = (HOT_SCALE - 1.0) / 2.0 * 0.999;

/// A projection uses the hot pairs while no particle has moved more than [`HOT_MARGIN`] since
/// they were picked nor more than `SWEEP_MARGIN × d_min` since the prediction: every pair then
/// closer than its thickness was closer than `SEARCH_SCALE × d_ij` at the prediction, a
/// neighbour of the step. Half the search margin, less `1/1000` of it.
pub const SWEEP_MARGIN: f32 = REUSE_MARGIN * 0.999;

/// The hot pairs are picked again at a step's prediction once some particle has moved more than
/// `REPICK_MARGIN × d_min` since they were picked, half of [`HOT_MARGIN`], so that the
/// projections of the step can keep to them.
pub const REPICK_MARGIN: f32 = HOT_MARGIN / 2.0;

/// Taking-part particles per work item of the search and projection phases.
pub const MEMBER_CHUNK: usize = 512;

/// Pairs of a chunk of slots, slot by slot: slot `k` of the chunk (particle `i`) has entries
/// `start[k]..start[k + 1]`, each with `i` (`owner`), a partner `j` (`partner`, ascending),
/// `d_ij` (`d`, m) and `μ_ij` (`mu`). After the last slot's entries come padding entries up to a
/// multiple of [`SIMD_WIDTH`], never close (`d = 0`).
#[derive(Debug, Default, Clone)]
struct Pairs {
    start: Vec<u32>,
    owner: Vec<u32>,
    partner: Vec<u32>,
    d: Vec<f32>,
    mu: Vec<f32>,
}

impl Pairs {
    /// No slot, no entry.
    fn clear(&mut self) {
        self.start.clear();
        self.owner.clear();
        self.partner.clear();
        self.d.clear();
        self.mu.clear();
        self.start.push(0);
    }

    /// Appends entry `e` of `other`.
    fn push_from(&mut self, other: &Pairs, e: usize) {
        self.owner.push(other.owner[e]);
        self.partner.push(other.partner[e]);
        self.d.push(other.d[e]);
        self.mu.push(other.mu[e]);
    }

    /// Ends the entries of the current slot.
    fn end_slot(&mut self) {
        self.start.push(self.partner.len() as u32);
    }

    /// Pads the entries to a multiple of [`SIMD_WIDTH`] after the last slot's.
    fn pad(&mut self) {
        if let Some(&i) = self.owner.first() {
            while !self.partner.len().is_multiple_of(SIMD_WIDTH) {
                self.owner.push(i);
                self.partner.push(i);
                self.d.push(0.0);
                self.mu.push(0.0);
            }
        }
    }

    /// Slot `k`'s entries.
    fn of(&self, k: usize) -> std::ops::Range<usize> {
        self.start[k] as usize..self.start[k + 1] as usize
    }

    /// The entries of `from` closer than `scale × d_ij` at the positions `x` (`bits` lends its
    /// buffer), slot by slot, padded.
    fn pick(&mut self, from: &Pairs, x: &[Record], scale: f32, bits: &mut Vec<u64>) {
        close_bits(from, x, scale * scale, bits);
        self.clear();
        for k in 0..from.start.len() - 1 {
            for_each_bit(bits, from.of(k), |e| self.push_from(from, e));
            self.end_slot();
        }
        self.pad();
    }
}

/// The lists of one chunk of slots.
#[derive(Debug, Default, Clone)]
struct ChunkLists {
    /// As built: each slot's partners closer than `LIST_SCALE × d_ij` at the positions of the
    /// build.
    built: Pairs,
    /// The hot pairs: each slot's partners of `built` closer than `HOT_SCALE × d_ij` when picked.
    hot: Pairs,
    /// This step's neighbours, when a projection needs them: each slot's partners of `built`
    /// closer than `SEARCH_SCALE × d_ij` at the predicted positions.
    near: Pairs,
    /// One bit per entry of a list (bit `e % 64` of word `e / 64`): those a pass found close.
    bits: Vec<u64>,
    /// Candidates of one cell during a build: slots.
    candidates: Vec<u32>,
}

/// Buffers of the self-collision, kept between steps: the grid, the lists, and the positions
/// they were built and picked at.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// The grid of the last build: the members (by their place in the member list) at the
    /// positions of the build.
    grid: Grid,
    /// The particle of each slot: the members in the grid's order of the last build.
    sorted: Vec<u32>,
    /// `[x, y, z, d]` of each slot (m) at the last build: position and thickness.
    sorted_x: Vec<Record>,
    lists: Vec<ChunkLists>,
    /// Each slot's position record (`[x, y, z, w]`) when the lists were built.
    built: Vec<Record>,
    /// Each slot's position when the hot pairs were picked.
    picked: Vec<Record>,
    /// Per chunk, the smallest and the largest displacement since the build along each axis
    /// (`[min x, min y, min z, max x, max y, max z]`, m) at the last step's prediction.
    spread: Vec<[f32; 6]>,
    /// The translation this step's check takes off every displacement (m): the middle of the
    /// last step's spread.
    shift: [f32; 3],
    /// Each particle's position at this step's prediction (members only).
    predicted: Vec<Record>,
    /// Each slot's correction in a projection.
    delta: Vec<Record>,
    /// The [`SelfCollision::key`] of the data the lists were built for.
    key: u64,
    /// Whether the lists are complete (a step that built them returned).
    valid: bool,
    /// Whether this step must build the lists whatever the motion.
    must_build: bool,
    /// Set in a step when some particle moved more than the reuse margin since the build.
    moved: AtomicBool,
    /// Set in a step when some particle moved more than the repick margin since the pick.
    stale: AtomicBool,
    /// Set in the projections of even (`[0]`) and odd (`[1]`) iterations when some particle
    /// moved past the hot or the sweep margin.
    wide: [AtomicBool; 2],
    /// Set in a step once its projections use `near`.
    exact: AtomicBool,
    /// How many times the lists were built, the hot pairs picked again without a build, and a
    /// projection done again with the step's neighbours.
    builds: AtomicU64,
    picks: AtomicU64,
    fallbacks: AtomicU64,
    /// Build the lists and use `near` in every step: the plain search of every step, which the
    /// tests compare against.
    fresh_every_step: bool,
}

impl Scratch {
    /// Sizes the buffers for `sc` (empty when no particle takes part), allocating only when the
    /// member count changed, and prepares a step: the lists are built again in it when they
    /// belong to other data (another [`SelfCollision::key`]) or are not complete (or the tests
    /// ask for it); else when the motion asks for it (module docs).
    pub(crate) fn fit(&mut self, sc: &SelfCollision) {
        let (m, n) = (sc.members().len(), sc.thickness().len());
        if self.sorted.len() != m || self.predicted.len() != n || self.lists.len() != m.div_ceil(MEMBER_CHUNK)
        {
            *self = Scratch {
                sorted: vec![0; m],
                sorted_x: vec![[0.0; 4]; m],
                lists: vec![ChunkLists::default(); m.div_ceil(MEMBER_CHUNK)],
                built: vec![[0.0; 4]; m],
                picked: vec![[0.0; 4]; m],
                spread: vec![[0.0; 6]; m.div_ceil(MEMBER_CHUNK)],
                predicted: vec![[0.0; 4]; n],
                delta: vec![[0.0; 4]; m],
                builds: AtomicU64::new(self.builds.load(Ordering::Relaxed)),
                picks: AtomicU64::new(self.picks.load(Ordering::Relaxed)),
                fallbacks: AtomicU64::new(self.fallbacks.load(Ordering::Relaxed)),
                fresh_every_step: self.fresh_every_step,
                ..Scratch::default()
            };
        }
        if self.key != sc.key() {
            self.key = sc.key();
            self.valid = false;
        }
        self.must_build = !self.valid || self.fresh_every_step;
        // The middle of the displacements at the last prediction (zero after a build).
        let (lo, hi) = self.spread.iter().fold(([f32::MAX; 3], [f32::MIN; 3]), |(lo, hi), s| {
            (std::array::from_fn(|k| lo[k].min(s[k])), std::array::from_fn(|k| hi[k].max(s[k + 3])))
        });
        self.shift = std::array::from_fn(|k| 0.5 * lo[k] + 0.5 * hi[k]);
        if !self.shift.iter().all(|t| t.is_finite()) {
            self.shift = [0.0; 3];
        }
        // Complete again once the step returns (`Scratch::finish`).
        self.valid = false;
        *self.moved.get_mut() = false;
        *self.stale.get_mut() = false;
        self.wide.iter_mut().for_each(|w| *w.get_mut() = false);
        *self.exact.get_mut() = self.fresh_every_step;
    }

    /// Marks the lists complete: called when a step prepared by [`Scratch::fit`] returned.
    pub(crate) fn finish(&mut self) {
        self.valid = true;
    }

    /// Builds the lists and projects with the neighbours of the step in every step when `on`:
    /// the plain search of every step (slower; the same bits).
    #[cfg(test)]
    pub(crate) fn set_fresh_every_step(&mut self, on: bool) {
        self.fresh_every_step = on;
    }

    /// How many times the lists were built, the hot pairs picked again without a build, and a
    /// projection done again with the step's neighbours.
    #[cfg(test)]
    pub(crate) fn counts(&self) -> [u64; 3] {
        [&self.builds, &self.picks, &self.fallbacks].map(|a| a.load(Ordering::Relaxed))
    }

    /// The buffers shared by a team.
    pub(crate) fn share(&mut self) -> SharedScratch<'_> {
        SharedScratch {
            grid: SharedSlice::new(std::slice::from_mut(&mut self.grid)),
            sorted: SharedSlice::new(&mut self.sorted),
            sorted_x: SharedSlice::new(&mut self.sorted_x),
            lists: SharedSlice::new(&mut self.lists),
            built: SharedSlice::new(&mut self.built),
            picked: SharedSlice::new(&mut self.picked),
            spread: SharedSlice::new(&mut self.spread),
            shift: self.shift,
            predicted: SharedSlice::new(&mut self.predicted),
            delta: SharedSlice::new(&mut self.delta),
            must_build: self.must_build,
            fresh: self.fresh_every_step,
            moved: &self.moved,
            stale: &self.stale,
            wide: &self.wide,
            exact: &self.exact,
            builds: &self.builds,
            picks: &self.picks,
            fallbacks: &self.fallbacks,
        }
    }
}

/// [`Scratch`] shared by the threads of a team.
#[derive(Clone, Copy)]
pub(crate) struct SharedScratch<'a> {
    grid: SharedSlice<'a, Grid>,
    sorted: SharedSlice<'a, u32>,
    sorted_x: SharedSlice<'a, Record>,
    lists: SharedSlice<'a, ChunkLists>,
    built: SharedSlice<'a, Record>,
    picked: SharedSlice<'a, Record>,
    spread: SharedSlice<'a, [f32; 6]>,
    shift: [f32; 3],
    predicted: SharedSlice<'a, Record>,
    delta: SharedSlice<'a, Record>,
    must_build: bool,
    fresh: bool,
    moved: &'a AtomicBool,
    stale: &'a AtomicBool,
    wide: &'a [AtomicBool; 2],
    exact: &'a AtomicBool,
    builds: &'a AtomicU64,
    picks: &'a AtomicU64,
    fallbacks: &'a AtomicU64,
}

#[inline]
fn sub(a: &Record, b: &Record) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline]
fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Whether `|a − b|² ≤ limit` (false for a NaN distance).
#[inline]
fn within(a: &Record, b: &Record, limit: f32) -> bool {
    let r = sub(a, b);
    dot(r, r) <= limit
}

/// The range of slots of chunk `c`.
fn chunk(c: usize, m: usize) -> std::ops::Range<usize> {
    c * MEMBER_CHUNK..((c + 1) * MEMBER_CHUNK).min(m)
}

/// `|a − b|²` of eight pairs of records, lane by lane: the same `f32` operations, in the same
/// order, as `dot(sub(a, b), sub(a, b))`, so each lane has the bits of the scalar value.
#[inline(always)]
fn distance2_8(a: [f32x8; 4], b: [f32x8; 4]) -> f32x8 {
    let r = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
}

/// Sets `bits` (one per entry of `pairs`, padding included) to which entries are close at the
/// positions `x`: `|x_owner − x_partner|² < scale2 × d²`, on [`SIMD_WIDTH`] lanes with the bits
/// of the scalar `dot(r, r) < scale2 * (d * d)`.
fn close_bits(pairs: &Pairs, x: &[Record], scale2: f32, bits: &mut Vec<u64>) {
    let n = pairs.partner.len();
    debug_assert!(n.is_multiple_of(SIMD_WIDTH));
    bits.clear();
    bits.resize(n.div_ceil(64), 0);
    let load = |i: u32| x[i as usize];
    let scale2 = f32x8::splat(scale2);
    let groups = pairs.owner.chunks_exact(SIMD_WIDTH).zip(pairs.partner.chunks_exact(SIMD_WIDTH));
    for (g, ((a, b), d)) in groups.zip(pairs.d.chunks_exact(SIMD_WIDTH)).enumerate() {
        let (a, b, d): (&[u32; 8], &[u32; 8], &[f32; 8]) =
            (a.try_into().unwrap(), b.try_into().unwrap(), d.try_into().unwrap());
        let d = f32x8::new(*d);
        let r2 = distance2_8(gather8(load, a), gather8(load, b));
        let close = r2.simd_lt(scale2 * (d * d)).to_bitmask() as u64;
        bits[g / 8] |= close << (8 * (g % 8));
    }
}

/// Calls `f(e)` for every set bit `e` of `bits` in `range`, ascending.
#[inline]
fn for_each_bit(bits: &[u64], range: std::ops::Range<usize>, mut f: impl FnMut(usize)) {
    if range.is_empty() {
        return;
    }
    let (first, last) = (range.start / 64, (range.end - 1) / 64);
    for (w, &word) in bits.iter().enumerate().take(last + 1).skip(first) {
        let mut word = word;
        if w == first {
            word &= u64::MAX << (range.start % 64);
        }
        if w == last && !range.end.is_multiple_of(64) {
            word &= u64::MAX >> (64 - range.end % 64);
        }
        while word != 0 {
            f(w * 64 + word.trailing_zeros() as usize);
            word &= word - 1;
        }
    }
}

/// The search of the module docs, as team phases that every thread calls: a check of the motion
/// (one phase) that keeps the lists and the hot pairs, or picks the hot pairs again (one more
/// phase), or builds the lists again (two more phases). `records` are the positions after the
/// prediction; the caller guarantees that nothing writes them during the call and that no other
/// code touches the scratch.
pub(crate) fn search_phases(
    team: &Team<'_>,
    sc: &SelfCollision,
    s: SharedScratch<'_>,
    records: SharedSlice<'_, Record>,
) {
    if sc.members().is_empty() {
        return;
    }
    if !s.must_build {
        check_phase(team, sc, s, records);
        // Every thread reads the same flags: the phase's barrier orders every store before it.
        if !s.moved.load(Ordering::Relaxed) {
            if s.stale.load(Ordering::Relaxed) {
                repick_phase(team, sc, s, records);
            }
            return;
        }
    }
    sort_phase(team, sc, s, records);
    list_phase(team, sc, s, records);
}

/// The check of the motion since the build and the pick (module docs), one phase over the
/// chunks: sets `moved` when some taking-part particle moved past the reuse margin (less the
/// common translation) or changed its pinned or free state, and `stale` when one moved past the
/// repick margin since the pick; records each particle's predicted position and each chunk's
/// spread of displacements.
fn check_phase(team: &Team<'_>, sc: &SelfCollision, s: SharedScratch<'_>, records: SharedSlice<'_, Record>) {
    let m = sc.members().len();
    let d_min = sc.min_thickness();
    let (reuse, repick) = ((REUSE_MARGIN * d_min).powi(2), (REPICK_MARGIN * d_min).powi(2));
    let parts = (records, s.sorted, s.built, s.picked, s.spread.each_mut());
    team.for_each_chunk(m.div_ceil(MEMBER_CHUNK), parts, |phase, c, (x, sorted, built, picked, spread)| {
        let range = chunk(c, m);
        let (mut moved, mut stale, t) = (false, false, s.shift);
        *spread = [f32::MAX, f32::MAX, f32::MAX, f32::MIN, f32::MIN, f32::MIN];
        for ((&i, b), q) in sorted[range.clone()].iter().zip(&built[range.clone()]).zip(&picked[range]) {
            let p = x[i as usize];
            // SAFETY: `predicted` is no part of this phase, and `i` is the particle of one slot
            // of chunk `c` only (`sorted` holds each member once), so only the work item that
            // claimed `c` writes element `i` in it; nothing reads it in this phase.
            unsafe { s.predicted.store(phase, i, p) };
            // The displacement since the build, less the common translation (a NaN distance is
            // not within).
            let u = sub(&p, b);
            for k in 0..3 {
                (spread[k], spread[k + 3]) = (spread[k].min(u[k]), spread[k + 3].max(u[k]));
            }
            let e = [u[0] - t[0], u[1] - t[1], u[2] - t[2]];
            moved |= dot(e, e).partial_cmp(&reuse).is_none_or(|o| o.is_gt()) || (p[3] > 0.0) != (b[3] > 0.0);
            stale |= !within(&p, q, repick);
        }
        // The flags end set whatever the order the chunks ran in.
        if moved {
            s.moved.store(true, Ordering::Relaxed);
        }
        if stale {
            s.stale.store(true, Ordering::Relaxed);
        }
    });
}

/// Picks the hot pairs again out of the kept lists at the predicted positions, one phase over
/// the chunks.
fn repick_phase(team: &Team<'_>, sc: &SelfCollision, s: SharedScratch<'_>, records: SharedSlice<'_, Record>) {
    let m = sc.members().len();
    let parts = (records, s.sorted, s.lists.each_mut(), s.picked.slice(0..m).chunks_mut(MEMBER_CHUNK));
    team.for_each_chunk(m.div_ceil(MEMBER_CHUNK), parts, |_, c, (x, sorted, l, picked)| {
        let range = chunk(c, m);
        for (q, &i) in picked.iter_mut().zip(&sorted[range]) {
            *q = x[i as usize];
        }
        if c == 0 {
            s.picks.fetch_add(1, Ordering::Relaxed);
        }
        l.hot.pick(&l.built, x, HOT_SCALE, &mut l.bits);
    });
}

/// The first phase of a build, one work item: the members entered in the grid at the predicted
/// positions, and the slots numbered in the grid's order, with each slot's position and
/// thickness.
fn sort_phase(team: &Team<'_>, sc: &SelfCollision, s: SharedScratch<'_>, records: SharedSlice<'_, Record>) {
    let (members, thickness) = (sc.members(), sc.thickness());
    let m = members.len();
    let side = (LIST_SCALE * sc.max_thickness()) as f64;
    let parts =
        (s.grid.each_mut(), s.sorted.slice(0..m).whole_mut(), s.sorted_x.slice(0..m).whole_mut(), records);
    team.for_each_chunk(1, parts, |_, _, (grid, sorted, sorted_x, x)| {
        grid.build_points(side, m, |k| {
            let p = x[members[k] as usize];
            [p[0], p[1], p[2]]
        });
        for (slot, (i, out)) in sorted.iter_mut().zip(sorted_x.iter_mut()).enumerate() {
            *i = members[grid.entry_at(slot) as usize];
            let p = &x[*i as usize];
            *out = [p[0], p[1], p[2], thickness[*i as usize]];
        }
        s.builds.fetch_add(1, Ordering::Relaxed);
    });
}

/// The second phase of a build, over the chunks: each slot's list at the predicted positions,
/// the hot pairs picked out of them (and the step's neighbours, when every step searches), and
/// the positions of the build and the pick.
fn list_phase(team: &Team<'_>, sc: &SelfCollision, s: SharedScratch<'_>, records: SharedSlice<'_, Record>) {
    let m = sc.members().len();
    let n = MEMBER_CHUNK;
    let parts = (
        s.grid,
        s.sorted,
        s.sorted_x,
        records,
        s.lists.each_mut(),
        s.built.slice(0..m).chunks_mut(n),
        s.picked.slice(0..m).chunks_mut(n),
        s.spread.each_mut(),
    );
    team.for_each_chunk(
        m.div_ceil(n),
        parts,
        |phase, c, (grid, sorted, sorted_x, x, l, built, picked, spread)| {
            let (range, grid) = (chunk(c, m), &grid[0]);
            *spread = [0.0; 6];
            for ((&i, b), q) in sorted[range.clone()].iter().zip(built).zip(picked) {
                let p = x[i as usize];
                (*b, *q) = (p, p);
                // SAFETY: `predicted` is no part of this phase, and `i` is the particle of one slot
                // of chunk `c` only (`sorted` holds each member once), so only the work item that
                // claimed `c` writes element `i` in it; nothing reads it in this phase.
                unsafe { s.predicted.store(phase, i, p) };
            }
            build_lists(sc, (grid, sorted, sorted_x), range, x, l);
            l.hot.pick(&l.built, x, HOT_SCALE, &mut l.bits);
            if s.fresh {
                l.near.pick(&l.built, x, SEARCH_SCALE, &mut l.bits);
            }
        },
    );
}

/// Builds the lists of the slots `slots` (a chunk) at the positions `x` into `out.built`: each
/// free particle's partners closer than `LIST_SCALE × d_ij`, not excluded, ascending. The grid
/// holds the members of the build; `sorted` and `sorted_x` are each slot's particle and its
/// `[x, y, z, d]`.
fn build_lists(
    sc: &SelfCollision,
    (grid, sorted, sorted_x): (&Grid, &[u32], &[Record]),
    slots: std::ops::Range<usize>,
    x: &[Record],
    out: &mut ChunkLists,
) {
    let ChunkLists { built: lists, candidates, .. } = out;
    lists.clear();
    // The candidates of the last cell: the particles of one cell follow each other in slots.
    let mut candidates_of = None;
    for slot in slots {
        let i = sorted[slot];
        if x[i as usize][3] > 0.0 {
            let cell = grid.cell_at(slot);
            if candidates_of != Some(cell) {
                candidates.clear();
                grid.near(cell, |place| candidates.push(place as u32));
                candidates_of = Some(cell);
            }
            let begin = lists.partner.len();
            close_candidates(sc, i, &x[i as usize], (candidates, sorted, sorted_x), &mut lists.partner);
            keep_partners(sc, i, begin, lists);
        }
        lists.end_slot();
    }
    lists.pad();
}

/// Appends to `partners` the particles of the slots `candidates` (other than `i`, at `xi`) within
/// `LIST_SCALE × d_ij`: eight candidates at a time (the last group padded with its last
/// candidate, the extra lanes ignored).
fn close_candidates(
    sc: &SelfCollision,
    i: u32,
    xi: &Record,
    (candidates, sorted, sorted_x): (&[u32], &[u32], &[Record]),
    partners: &mut Vec<u32>,
) {
    let scale2 = f32x8::splat(LIST_SCALE * LIST_SCALE);
    let di = sc.thickness()[i as usize];
    let own = gather8(|_| *xi, &[0; SIMD_WIDTH]);
    for group in candidates.chunks(SIMD_WIDTH) {
        let slots: [u32; SIMD_WIDTH] = std::array::from_fn(|k| group[k.min(group.len() - 1)]);
        let other = gather8(|p| sorted_x[p as usize], &slots);
        let d = f32x8::splat(di).max(other[3]);
        let close = distance2_8(own, other).simd_lt(scale2 * (d * d)).to_bitmask();
        for_each_bit(&[close as u64], 0..group.len(), |k| {
            let j = sorted[slots[k] as usize];
            if j != i {
                partners.push(j);
            }
        });
    }
}

/// Sorts the partners of `i` (the entries of `lists` from `begin` on) ascending, takes out the
/// pairs excluded at rest (a merge of two ascending lists) and completes their entries.
fn keep_partners(sc: &SelfCollision, i: u32, begin: usize, lists: &mut Pairs) {
    let (thickness, friction) = (sc.thickness(), sc.friction());
    lists.partner[begin..].sort_unstable();
    let (excluded, mut e, mut kept) = (sc.excluded(i as usize), 0, begin);
    for r in begin..lists.partner.len() {
        let j = lists.partner[r];
        while e < excluded.len() && excluded[e] < j {
            e += 1;
        }
        if excluded.get(e) != Some(&j) {
            lists.partner[kept] = j;
            kept += 1;
        }
    }
    lists.partner.truncate(kept);
    let di = thickness[i as usize];
    for &j in &lists.partner[begin..] {
        let j = j as usize;
        lists.owner.push(i);
        lists.d.push(di.max(thickness[j]));
        lists.mu.push(friction[i as usize].max(friction[j]));
    }
}

/// What the contact of particles `i` and `j` does to `i`.
enum Pair {
    /// Not in contact.
    Apart,
    /// In contact but closer than [`MIN_LENGTH`]: no normal.
    Degenerate,
    /// The correction of `i` in m, before the division by its active contacts.
    Push([f32; 3]),
}

/// The contact of `i` with `j` (module docs). `x` and `prev` are `[x, y, z, w]` and
/// `[x, y, z, 0]` records in m.
#[inline]
fn pair_correction(sc: &SelfCollision, i: usize, j: usize, x: &[Record], prev: &[Record]) -> Pair {
    let (xi, pi, xj, pj) = (&x[i], &prev[i], &x[j], &prev[j]);
    let (thickness, friction) = (sc.thickness(), sc.friction());
    let d = thickness[i].max(thickness[j]);
    let r = sub(xi, xj);
    let r2 = dot(r, r);
    // The common case, a neighbour not in contact, needs no square root (and a NaN distance
    // is never in contact).
    if r2.partial_cmp(&(d * d)) != Some(std::cmp::Ordering::Less) {
        return Pair::Apart;
    }
    let dist = r2.sqrt();
    // Written so that NaN distances count as neither in contact nor usable.
    let (in_contact, has_normal) = (dist < d, dist > MIN_LENGTH);
    if !in_contact {
        return Pair::Apart;
    }
    if !has_normal {
        return Pair::Degenerate;
    }
    let inv = 1.0 / dist;
    let n = [r[0] * inv, r[1] * inv, r[2] * inv];
    let pen = d - dist;
    let (si, sj) = (sub(xi, pi), sub(xj, pj));
    let dp = [si[0] - sj[0], si[1] - sj[1], si[2] - sj[2]];
    let dn = dot(dp, n);
    let dt = [dp[0] - n[0] * dn, dp[1] - n[1] * dn, dp[2] - n[2] * dn];
    let slip = dot(dt, dt).sqrt();
    let limit = friction[i].max(friction[j]) * pen;
    let f = if slip > limit { limit / slip } else { 1.0 };
    let share = xi[3] / (xi[3] + xj[3]);
    Pair::Push([0, 1, 2].map(|k| (n[k] * pen - dt[k] * f) * share))
}

/// The contacts of the eight entries `entries` of `pairs` on lanes, as [`pair_correction`]
/// computes each (the same `f32` operations in the same order, so every lane has the scalar
/// bits): the corrections of the owners (m), and the bits of the lanes whose pair pushes and of
/// those in contact without a normal. Only the lanes of `lanes` count.
#[inline(always)]
fn contacts8(
    pairs: &Pairs,
    entries: &[usize; 8],
    (x, prev): (&[Record], &[Record]),
    lanes: u32,
) -> ([f32x8; 3], u32, u32) {
    let (owner, partner) = (entries.map(|e| pairs.owner[e]), entries.map(|e| pairs.partner[e]));
    let (xi, xj) = (gather8(|i| x[i as usize], &owner), gather8(|i| x[i as usize], &partner));
    let (pi, pj) = (gather8(|i| prev[i as usize], &owner), gather8(|i| prev[i as usize], &partner));
    let (d, mu) = (f32x8::new(entries.map(|e| pairs.d[e])), f32x8::new(entries.map(|e| pairs.mu[e])));
    let r = [xi[0] - xj[0], xi[1] - xj[1], xi[2] - xj[2]];
    let r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    let near = r2.simd_lt(d * d);
    let dist = r2.sqrt();
    let in_contact = near & dist.simd_lt(d);
    let has_normal = dist.simd_gt(f32x8::splat(MIN_LENGTH));
    let inv = f32x8::ONE / dist;
    let n = [r[0] * inv, r[1] * inv, r[2] * inv];
    let pen = d - dist;
    let si = [xi[0] - pi[0], xi[1] - pi[1], xi[2] - pi[2]];
    let sj = [xj[0] - pj[0], xj[1] - pj[1], xj[2] - pj[2]];
    let dp = [si[0] - sj[0], si[1] - sj[1], si[2] - sj[2]];
    let dn = dp[0] * n[0] + dp[1] * n[1] + dp[2] * n[2];
    let dt = [dp[0] - n[0] * dn, dp[1] - n[1] * dn, dp[2] - n[2] * dn];
    let slip = (dt[0] * dt[0] + dt[1] * dt[1] + dt[2] * dt[2]).sqrt();
    let limit = mu * pen;
    let f = slip.simd_gt(limit).select(limit / slip, f32x8::ONE);
    let share = xi[3] / (xi[3] + xj[3]);
    let push = [0, 1, 2].map(|k| (n[k] * pen - dt[k] * f) * share);
    let (contact, normal) = (in_contact.to_bitmask() & lanes, has_normal.to_bitmask());
    (push, contact & normal, contact & !normal)
}

/// The contact correction of particle `i` (module docs): the sum of its active contacts'
/// corrections in m and how many were active and how many degenerate, over `neighbours` in the
/// order given. `x` and `prev` are `[x, y, z, w]` and `[x, y, z, 0]` records in m.
pub fn particle_correction(
    sc: &SelfCollision,
    i: usize,
    neighbours: &[u32],
    x: &[Record],
    prev: &[Record],
) -> ([f32; 3], u32, u32) {
    let mut acc = [0.0f32; 3];
    let (mut active, mut degenerate) = (0u32, 0u32);
    for &j in neighbours {
        match pair_correction(sc, i, j as usize, x, prev) {
            Pair::Apart => {}
            Pair::Degenerate => degenerate += 1,
            Pair::Push(dx) => {
                for k in 0..3 {
                    acc[k] += dx[k];
                }
                active += 1;
            }
        }
    }
    (acc, active, degenerate)
}

/// Adds the contacts of the entries `entries` of `pairs` (only the lanes of `lanes` count) to the
/// sums `[Σx, Σy, Σz, active]` of their slots `slots` in `out`, lane by lane; returns the
/// degenerate contacts.
#[inline(always)]
fn add_contacts8(
    pairs: &Pairs,
    (entries, slots, lanes): (&[usize; 8], &[u32; 8], u32),
    (x, prev): (&[Record], &[Record]),
    out: &mut [Record],
) -> u64 {
    let (push, pushes, bad) = contacts8(pairs, entries, (x, prev), lanes);
    let push = push.map(f32x8::to_array);
    for_each_bit(&[pushes as u64], 0..SIMD_WIDTH, |k| {
        let sum = &mut out[slots[k] as usize];
        *sum = [sum[0] + push[0][k], sum[1] + push[1][k], sum[2] + push[2][k], sum[3] + 1.0];
    });
    bad.count_ones() as u64
}

/// The corrections of a chunk's slots from the contacts among `pairs` (module docs) at the
/// positions `x` (`prev`: at the start of the step), into `out` (`[Δx, Δy, Δz, 1]`, m, or zero
/// without contact); returns the degenerate contacts. `bits` lends its buffer.
fn correct_chunk(
    pairs: &Pairs,
    (x, prev): (&[Record], &[Record]),
    bits: &mut Vec<u64>,
    out: &mut [Record],
) -> u64 {
    // The pairs closer than `d_ij`, eight at a time.
    close_bits(pairs, x, 1.0, bits);
    // Their corrections, eight at a time in entry order, summed into each slot's
    // `[Σx, Σy, Σz, active]`: in partner order for each slot.
    out.fill([0.0; 4]);
    let (mut entries, mut slots, mut n, mut degenerate) = ([0usize; 8], [0u32; 8], 0, 0);
    for k in 0..out.len() {
        for_each_bit(bits, pairs.of(k), |e| {
            (entries[n], slots[n]) = (e, k as u32);
            n += 1;
            if n == SIMD_WIDTH {
                degenerate += add_contacts8(pairs, (&entries, &slots, u8::MAX as u32), (x, prev), out);
                n = 0;
            }
        });
    }
    if n > 0 {
        // The extra lanes repeat the last entry and do not count.
        let (e, k) = (entries[n - 1], slots[n - 1]);
        entries[n..].fill(e);
        slots[n..].fill(k);
        degenerate += add_contacts8(pairs, (&entries, &slots, (1 << n) - 1), (x, prev), out);
    }
    for delta in out.iter_mut() {
        if delta[3] > 0.0 {
            let scale = RELAXATION / delta[3];
            *delta = [delta[0] * scale, delta[1] * scale, delta[2] * scale, 1.0];
        }
    }
    degenerate
}

/// One projection of every contact (module docs), that of iteration `iteration` of the step, as
/// two phases of a team that every thread calls (three when the hot pairs do not do); returns
/// this thread's degenerate contacts. `records` are the positions, `displacement` the
/// displacements of the step (`[dx, dy, dz, 0]`, m; each correction is added to them too),
/// `prev` the positions at the start of the step; the caller guarantees that `displacement` has
/// one record per particle, that no other code touches `records`, `displacement` or the scratch
/// during the call, and nothing writes `prev`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_phases<X>(
    team: &Team<'_>,
    sc: &SelfCollision,
    s: SharedScratch<'_>,
    records: SharedSlice<'_, Record>,
    displacement: SharedSlice<'_, Record>,
    prev: X,
    iteration: usize,
) -> u64
where
    X: Part,
    for<'p> X::Out<'p>: Deref<Target = [Record]>,
{
    let members = sc.members();
    let m = members.len();
    if m == 0 {
        return 0;
    }
    let chunks = m.div_ceil(MEMBER_CHUNK);
    let d_min = sc.min_thickness();
    let (hot, sweep) = ((HOT_MARGIN * d_min).powi(2), (SWEEP_MARGIN * d_min).powi(2));
    let (wide, next) = (&s.wide[iteration % 2], &s.wide[(iteration + 1) % 2]);
    // Every thread reads the same flag: set before a barrier this step, or before the step.
    let mut exact = s.exact.load(Ordering::Relaxed);
    let mut degenerate = 0u64;
    if !exact {
        let out = s.delta.slice(0..m).chunks_mut(MEMBER_CHUNK);
        let parts = (records, prev, s.sorted, s.picked, s.predicted, s.lists.each_mut(), out);
        team.for_each_chunk(chunks, parts, |_, c, (x, prev, sorted, picked, predicted, l, out)| {
            let (range, prev) = (chunk(c, m), &*prev);
            if c == 0 {
                // The flag of the next iteration, which every thread read before the last barrier.
                next.store(false, Ordering::Relaxed);
            }
            // The hot pairs hold every contact of the step's neighbours while every particle
            // stayed near where they were picked and where it was predicted; else the
            // projection is done again below.
            let near = sorted[range.clone()].iter().zip(&picked[range]).all(|(&i, q)| {
                let p = &x[i as usize];
                within(p, q, hot) && within(p, &predicted[i as usize], sweep)
            });
            if !near {
                wide.store(true, Ordering::Relaxed);
            }
            degenerate += correct_chunk(&l.hot, (x, prev), &mut l.bits, out);
        });
        // Every thread reads the same flag: the phase's barrier orders every store before it.
        if wide.load(Ordering::Relaxed) {
            (exact, degenerate) = (true, 0);
            s.exact.store(true, Ordering::Relaxed);
            // The step's neighbours, for this projection and the step's later ones.
            team.for_each_chunk(chunks, (s.predicted, s.lists.each_mut()), |_, c, (predicted, l)| {
                l.near.pick(&l.built, predicted, SEARCH_SCALE, &mut l.bits);
                if c == 0 {
                    s.fallbacks.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    }
    if exact {
        let parts = (records, prev, s.lists.each_mut(), s.delta.slice(0..m).chunks_mut(MEMBER_CHUNK));
        team.for_each_chunk(chunks, parts, |_, _, (x, prev, l, out)| {
            let prev = &*prev;
            degenerate += correct_chunk(&l.near, (x, prev), &mut l.bits, out);
        });
    }
    team.for_each_chunk(chunks, (s.delta, s.sorted), |phase, c, (delta, sorted)| {
        let range = chunk(c, m);
        for (&i, dx) in sorted[range.clone()].iter().zip(&delta[range]) {
            if dx[3] != 0.0 {
                // SAFETY: `i` is the particle of one slot of chunk `c` only (`sorted` holds
                // each member once), claimed by one work item in this phase; no other item
                // reads or writes record `i` or displacement `i` (both arrays hold one record
                // per particle).
                unsafe {
                    let r = records.load(phase, i);
                    records.store(phase, i, [r[0] + dx[0], r[1] + dx[1], r[2] + dx[2], r[3]]);
                    let d = displacement.load(phase, i);
                    displacement.store(phase, i, [d[0] + dx[0], d[1] + dx[1], d[2] + dx[2], d[3]]);
                }
            }
        }
    });
    degenerate
}

/// Finds the contacts of `positions` and projects them `sweeps` times, in one team of the current
/// rayon pool, as a time step does after its prediction (the benches and tests use it). `prev`
/// are the positions at the start of the step. Returns the degenerate contacts.
///
/// # Panics
/// If `positions` or `prev` do not hold one record per particle of the model `sc` belongs to.
pub fn solve(sc: &SelfCollision, positions: &mut [Record], prev: &[Record], sweeps: usize) -> u64 {
    assert_eq!(positions.len(), sc.thickness().len(), "positions belong to another model");
    assert_eq!(prev.len(), sc.thickness().len(), "previous positions belong to another model");
    let mut scratch = Scratch::default();
    scratch.fit(sc);
    let s = scratch.share();
    let mut moved = vec![[0.0; 4]; positions.len()];
    let displacement = SharedSlice::new(&mut moved);
    let records = SharedSlice::new(positions);
    team::run(
        |team| {
            search_phases(team, sc, s, records);
            (0..sweeps).map(|k| solve_phases(team, sc, s, records, displacement, prev, k)).sum::<u64>()
        },
        |a, b| a + b,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::builder::{ClothDesc, ModelBuilder};
    use weft_core::limits::Limits;
    use weft_core::self_collision::SelfCollisionDesc;
    use weft_core::{Model, SimSettings};

    fn model(positions: Vec<[f32; 3]>, pins: Vec<u32>, thickness: f32, friction: f32) -> Model {
        let mut b = ModelBuilder::new(SimSettings::default(), Limits::default()).unwrap();
        b.add_cloth(&ClothDesc {
            name: "c".into(),
            positions,
            pins,
            self_collision: Some(SelfCollisionDesc { thickness, friction }),
            ..ClothDesc::default()
        })
        .unwrap();
        b.build().unwrap()
    }

    fn records(m: &Model) -> Vec<Record> {
        m.particles().positions().to_vec()
    }

    #[test]
    fn a_free_particle_is_pushed_out_of_a_pinned_one() {
        // Rest distance 0.5 m > 0.1 m: a contact once the free particle is moved to 0.04 m.
        let m = model(vec![[0.0; 3], [0.5, 0.0, 0.0]], vec![0], 0.1, 0.0);
        let mut x = records(&m);
        x[1][0] = 0.04;
        let prev = x.clone();
        assert_eq!(solve(m.self_collision(), &mut x, &prev, 1), 0);
        assert_eq!(x[0], [0.0, 0.0, 0.0, 0.0], "the pin stays");
        // The whole 6 cm correction goes to the free particle (share w/(w + 0) = 1).
        assert!((x[1][0] - 0.1).abs() < 1e-7, "{:?}", x[1]);
        assert_eq!(x[1][3], 1.0, "lane 3 keeps the inverse mass");
    }

    #[test]
    fn friction_undoes_a_slip_smaller_than_mu_times_the_penetration() {
        // The free particle came 1 cm sideways, to (0.01, 0.08): 1.9 cm inside the 10 cm
        // thickness around the pin at 0, along n ≈ (0.124, 0.992). Without friction the push
        // along n only adds to its sideways offset (0.01 + 0.019·0.124 ≈ 0.0124 m); with ample
        // friction the slip's tangential part (≈ 0.0098 m) is undone and it ends near x ≈ 0.0026.
        let run = |mu: f32| {
            let m = model(vec![[0.0; 3], [0.0, 0.5, 0.0]], vec![0], 0.1, mu);
            let mut x = records(&m);
            let mut prev = x.clone();
            x[1] = [0.01, 0.08, 0.0, 1.0];
            prev[1] = [0.0, 0.08, 0.0, 0.0];
            solve(m.self_collision(), &mut x, &prev, 1);
            x[1]
        };
        let (free, stuck) = (run(0.0), run(10.0));
        assert!(free[0] > 0.012, "{free:?}");
        assert!(stuck[0] < 0.003, "{stuck:?}");
        // Without friction it ends on the thickness sphere (1e-6 m: f32 rounding of a few
        // operations); the friction correction runs along the tangent plane, so never inside it.
        let d = |x: Record| (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt();
        assert!((d(free) - 0.1).abs() < 1e-6, "{free:?}");
        assert!(d(stuck) >= 0.1, "{stuck:?}");
    }

    /// Three 12 × 12 sheets 4 cm apart, each with its own thickness (2, 3 and 2.5 cm; their
    /// spacing is 2.7 cm): the lowest pinned, the two above thrown down onto it and sideways, so
    /// that they land, stack and slide. Without `self_collision` they fall through each other.
    fn three_sheets(self_collision: bool) -> Model {
        use weft_core::grid::{GridDesc, GridPlane};
        use weft_core::{MassSpec, units::Elasticity};
        let settings = SimSettings { fps: 60.0, substeps: 4, iterations: 4, ..SimSettings::default() };
        let mut b = ModelBuilder::new(settings, Limits::default()).unwrap();
        let layers = [(0.02, [0.0; 3]), (0.03, [0.3, -0.6, 0.0]), (0.025, [-0.2, -1.2, 0.1])];
        for (k, (thickness, v)) in layers.into_iter().enumerate() {
            let origin = [0.0, 0.04 * k as f32, 0.0];
            let grid = GridDesc { resolution: [12, 12], size: [0.3, 0.3], origin, plane: GridPlane::XZ };
            let mut cloth = grid.generate(&Limits::default()).unwrap().into_cloth(
                format!("sheet{k}"),
                MassSpec::Density(0.2),
                Elasticity::RIGID,
                Elasticity::RIGID,
            );
            if k == 0 {
                cloth.pins = (0..144).collect();
            }
            cloth.velocities = Some(vec![v; 144]);
            cloth.self_collision = self_collision.then_some(SelfCollisionDesc { thickness, friction: 0.3 });
            b.add_cloth(&cloth).unwrap();
        }
        b.build().unwrap()
    }

    fn bits(m: &Model) -> Vec<u32> {
        let p = m.particles();
        p.positions().iter().chain(p.velocities()).flat_map(|r| r.map(f32::to_bits)).collect()
    }

    #[test]
    fn kept_lists_give_the_bits_of_a_search_in_every_step() {
        use crate::{StepOptions, Stepper};
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let (mut kept, mut fresh) = (three_sheets(true), three_sheets(true));
            let (mut a, mut b) = (Stepper::new(StepOptions::default()), Stepper::new(StepOptions::default()));
            b.contacts_mut().set_fresh_every_step(true);
            let steps = 120;
            for step in 0..steps {
                let (sa, sb) = pool.install(|| (a.step(&mut kept), b.step(&mut fresh)));
                assert_eq!(sa, sb, "step {step} on {threads} threads");
                assert!(bits(&kept) == bits(&fresh), "step {step} on {threads} threads");
            }
            let [built, picked, redone] = a.contacts_mut().counts();
            assert_eq!(b.contacts_mut().counts(), [steps, 0, 0]);
            // Built at the start, again as the sheets fall and slide, but far from every step;
            // the hot pairs picked again in between, and some projections done again.
            assert!((3..steps / 3).contains(&built), "{built} builds in {steps} steps");
            assert!(picked > 0 && redone > 0, "{picked} picks, {redone} projections done again");
            // The contacts did something: without them the sheets pass through each other.
            let mut apart = three_sheets(false);
            let mut alone = Stepper::new(StepOptions::default());
            pool.install(|| (0..steps).for_each(|_| _ = alone.step(&mut apart)));
            assert!(bits(&apart) != bits(&kept));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        /// Random clouds swirling, converging and jumping: the kept lists give the bits of a
        /// search in every step, whatever the motion.
        #[test]
        fn kept_lists_give_the_bits_of_a_search_under_random_motion(
            points in proptest::collection::vec(
                ([-0.2f32..0.2, -0.2f32..0.2, -0.2f32..0.2], [-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0]),
                20..200,
            ),
            thickness in 0.01f32..0.06,
            friction in 0.0f32..0.6,
            cube_root_speed in 0.0f32..1.3,
            spin in -10.0f32..10.0,
            substeps in 1u32..6,
        ) {
            use crate::{StepOptions, Stepper};
            use weft_core::self_collision::SelfCollisionDesc;
            // Slow clouds (lists kept for many steps) as often as fast ones (built every step).
            let speed = cube_root_speed.powi(3);
            let build = || {
                let settings = SimSettings {
                    fps: 60.0,
                    substeps,
                    iterations: 2,
                    gravity: [0.0; 3],
                    ..SimSettings::default()
                };
                let mut b = ModelBuilder::new(settings, Limits::default()).unwrap();
                // A swirl about the y axis on top of each particle's own velocity.
                let velocities = points
                    .iter()
                    .map(|(p, v)| [speed * v[0] - spin * p[2], speed * v[1], speed * v[2] + spin * p[0]])
                    .collect();
                b.add_cloth(&ClothDesc {
                    name: "c".into(),
                    positions: points.iter().map(|(p, _)| *p).collect(),
                    velocities: Some(velocities),
                    self_collision: Some(SelfCollisionDesc { thickness, friction }),
                    ..ClothDesc::default()
                })
                .unwrap();
                b.build().unwrap()
            };
            let (mut kept, mut fresh) = (build(), build());
            let (mut a, mut b) = (Stepper::new(StepOptions::default()), Stepper::new(StepOptions::default()));
            b.contacts_mut().set_fresh_every_step(true);
            for step in 0..30 {
                let (sa, sb) = (a.step(&mut kept), b.step(&mut fresh));
                proptest::prop_assert_eq!(sa, sb, "step {}", step);
                proptest::prop_assert!(bits(&kept) == bits(&fresh), "step {}", step);
            }
        }
    }

    #[test]
    fn a_stepper_moved_to_other_data_builds_its_lists_again() {
        use crate::{StepOptions, Stepper};
        // Two models with the same particles and members but other thicknesses: a stepper that
        // stepped the first keeps no list for the second.
        let thick = |d: f32| {
            let mut b = ModelBuilder::new(SimSettings::default(), Limits::default()).unwrap();
            let positions = (0..40).map(|k| [0.011 * k as f32, 0.0, 0.0]).collect();
            let velocities = Some((0..40).map(|k| [0.0, if k % 2 == 0 { 0.1 } else { -0.1 }, 0.0]).collect());
            let sc = Some(SelfCollisionDesc { thickness: d, friction: 0.0 });
            b.add_cloth(&ClothDesc {
                name: "c".into(),
                positions,
                velocities,
                self_collision: sc,
                ..ClothDesc::default()
            })
            .unwrap();
            b.build().unwrap()
        };
        let (mut first, mut second, mut alone) = (thick(0.01), thick(0.05), thick(0.05));
        let mut moved = Stepper::new(StepOptions::default());
        moved.step(&mut first);
        assert_eq!(moved.contacts_mut().counts()[0], 1);
        let mut own = Stepper::new(StepOptions::default());
        for _ in 0..3 {
            moved.step(&mut second);
            own.step(&mut alone);
            assert!(bits(&second) == bits(&alone));
        }
        assert_eq!(moved.contacts_mut().counts()[0], 2, "built again for the second model, then kept");
    }

    #[test]
    fn the_same_bits_for_any_pool() {
        let mut seed = 12345u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        let positions: Vec<[f32; 3]> = (0..3000).map(|_| [rnd(), rnd() * 0.5, rnd()]).collect();
        let m = model(positions, vec![0, 7], 0.03, 0.2);
        let prev = records(&m);
        let mut runs = Vec::new();
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut x = prev.clone();
            for r in &mut x {
                r[1] *= 0.9; // squeeze: many contacts
            }
            pool.install(|| solve(m.self_collision(), &mut x, &prev, 4));
            runs.push(x.iter().flat_map(|r| r.map(f32::to_bits)).collect::<Vec<u32>>());
        }
        assert_ne!(runs[0], prev.iter().flat_map(|r| r.map(f32::to_bits)).collect::<Vec<u32>>());
        assert!(runs[1] == runs[0] && runs[2] == runs[0]);
    }
}
