//! Deterministic greedy graph colouring of constraints, and packing of each colour into SIMD
//! batches, block by block.
//!
//! Two constraints conflict when they move the same free particle. Constraints of one colour never
//! conflict, so a colour can be projected in any order, in parallel, or eight at a time in SIMD
//! lanes, with the same result: Gauss-Seidel between colours, order-free inside one.
//!
//! * **Blocks.** Particles are cut into blocks of [`BLOCK_PARTICLES`] consecutive indices (fewer
//!   in a small model whose threads share contact work, [`block_particles`]). A
//!   constraint whose free particles all lie in one block is *interior* to it. The interior
//!   constraints of different blocks never touch the same free particle, so blocks are solved in
//!   parallel, each one colour after colour on one thread, while its particles stay in that
//!   core's cache (every colour of a sweep would otherwise stream all positions from memory).
//!   The remaining *boundary* constraints are solved after the blocks. The cut depends only on
//!   the model, never on the thread count.
//! * **Strands.** The boundary constraints fall into connected parts: two constraints are in one
//!   part when a chain of boundary constraints, each sharing a free particle with the next, joins
//!   them. Where blocks are bands of a cloth, each cut between two bands is a part of its own.
//!   Parts share no free particle, so each is solved colour by colour on one thread, side by side
//!   with the others, without a barrier between its colours: a *strand*. A part whose colours
//!   would each be one work item anyway ([`CHUNK_BATCHES`] batches at most) and which needs no
//!   serial list becomes a strand; the rest (a part so large that its colours are worth cutting
//!   across threads, as where particles are numbered at random) is coloured as one set, and each
//!   of its colours split across threads. Strands change no result: first-fit colouring gives a
//!   part the same colours on its own as among the others (a constraint's colour depends only on
//!   the constraints before it that share its particles), and constraints of different parts
//!   commute, so every particle is written by the same constraints in the same order either way.
//! * **Colouring** is first-fit in input order: each constraint takes the lowest colour that none of
//!   its free particles has used yet (a 64-bit mask per particle). Pinned particles (inverse mass
//!   0) are never written, so they never cause a conflict. The blocks are coloured each on its
//!   own, side by side on the current rayon pool. The result depends only on the constraint list
//!   and the pins, never on hashing or threads.
//! * **Overflow**: an interior constraint that finds all [`MAX_COLOURS`] colours of its block
//!   taken becomes a boundary constraint; a boundary constraint that finds all colours taken goes
//!   to the *serial* list, solved last, one constraint at a time on one thread.
//! * **Packing**: each colour is cut into batches of [`LANES`] constraints. The last batch of a
//!   colour is padded by repeating its lane 0; padding lanes are computed (harmlessly, on valid
//!   data) and never written back or counted.
//!
//! [`BatchPlan::assert_invariant`] checks, for every build, what the parallel kernels rely on:
//! no two lanes of a colour write the same particle, a block writes only its own particles, and
//! padding lanes and pinned particles are never written.

use std::ops::Range;

use rayon::prelude::*;

use crate::digest::Digest;
use crate::lanes::{LANES, Lanes};

/// Most colours a constraint set uses (per block, and across blocks); constraints beyond them are
/// solved serially.
pub const MAX_COLOURS: usize = 64;

/// Batches per work item of a boundary colour (`weft_kernels::schedule` cuts each colour into
/// items of this many), and the most batches a colour of a strand may hold: a fixed number, so
/// the cut depends on the model, never on the thread count.
pub const CHUNK_BATCHES: usize = 64;

/// Particles per block: 4096 records of 16 bytes are 64 KiB, which stays in a core's L2 cache
/// together with the block's constraint data while its colours are solved.
pub const BLOCK_PARTICLES: u32 = 4096;

/// The fewest particles of a model with particle self-collision whose contacts are work for
/// several threads (half a block; see [`shares_contacts`]).
pub const SHARED_SELF_COLLISION: usize = BLOCK_PARTICLES as usize / 2;

/// The fewest particles of a block in a model whose threads share contact work
/// ([`block_particles`]).
pub const MIN_SHARED_BLOCK: u32 = 256;

/// Blocks a model whose threads share contact work is cut into at least, while they hold
/// [`MIN_SHARED_BLOCK`] particles or more ([`block_particles`]).
pub const SHARED_BLOCKS: u32 = 4;

/// Whether a model of `particles` particles has contact work for several threads, whatever its
/// blocks: surface self-collision (`surface_contacts`; its search is cut into fixed chunks), or
/// particle self-collision (`particle_contacts`) on at least [`SHARED_SELF_COLLISION`] particles.
/// Such a model bakes on every CPU by default (`weft_bake::fitted_threads`, where the measurements
/// behind the rule are) and is cut into smaller blocks ([`block_particles`]).
pub fn shares_contacts(particles: usize, particle_contacts: bool, surface_contacts: bool) -> bool {
    surface_contacts || (particle_contacts && particles >= SHARED_SELF_COLLISION)
}

/// Particles per block of a model of `particles` particles: [`BLOCK_PARTICLES`], except in a
/// model whose threads share contact work (`shared`, [`shares_contacts`]) and that has fewer than
/// [`SHARED_BLOCKS`] such blocks: then a [`SHARED_BLOCKS`]th of its particles, rounded up to 128,
/// and no fewer than [`MIN_SHARED_BLOCK`]. A block is one work item, and such a model runs on
/// every CPU: the 64² sheet and the garment of the examples, one block each at
/// [`BLOCK_PARTICLES`], solved their constraints on one thread while the others waited
/// (docs/performance.md, "Threads for self-colliding cloth"). The cut depends on the model alone,
/// never on the thread count.
///
/// ```
/// use weft_core::colouring::block_particles;
/// assert_eq!(block_particles(4096, false), 4096);
/// assert_eq!(block_particles(4096, true), 1024);
/// assert_eq!(block_particles(1388, true), 384);
/// assert_eq!(block_particles(960, true), 256);
/// assert_eq!(block_particles(8192, true), 2048);
/// assert_eq!(block_particles(1 << 20, true), 4096);
/// ```
pub fn block_particles(particles: usize, shared: bool) -> u32 {
    if !shared {
        return BLOCK_PARTICLES;
    }
    let share = particles.div_ceil(SHARED_BLOCKS as usize).next_multiple_of(128);
    share.clamp(MIN_SHARED_BLOCK as usize, BLOCK_PARTICLES as usize) as u32
}

/// Constraints grouped by colour.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Colouring {
    /// Constraint indices, colour after colour, input order inside a colour.
    pub order: Vec<u32>,
    /// `order[colour_starts[c]..colour_starts[c + 1]]` is colour `c`.
    pub colour_starts: Vec<usize>,
    /// Constraints that found no free colour, in input order.
    pub serial: Vec<u32>,
}

impl Colouring {
    /// Number of colours.
    pub fn colour_count(&self) -> usize {
        self.colour_starts.len().saturating_sub(1)
    }

    /// Constraints in each colour.
    pub fn colour_sizes(&self) -> Vec<usize> {
        self.colour_starts.windows(2).map(|w| w[1] - w[0]).collect()
    }
}

/// Colours `constraints` (each the `K` particles it moves) first-fit in input order.
///
/// `free[p]` says whether particle `p` can move; only free particles conflict.
///
/// ```
/// use weft_core::colouring::colour;
/// // A chain 0-1-2-3 with particle 0 pinned: edges (0,1) and (2,3) share no free particle.
/// let c = colour(&[[0, 1], [1, 2], [2, 3]], &[false, true, true, true]);
/// assert_eq!(c.order, vec![0, 2, 1]);
/// assert_eq!(c.colour_sizes(), vec![2, 1]);
/// ```
pub fn colour<const K: usize>(constraints: &[[u32; K]], free: &[bool]) -> Colouring {
    let all: Vec<u32> = (0..constraints.len() as u32).collect();
    colour_subset(&all, constraints, free, &mut vec![0u64; free.len()], 0)
}

/// Colours the constraints `subset` (indices into `constraints`, in the order given). `used` is
/// a scratch mask per particle from `first` on (every free particle of the subset lies there),
/// all zero on entry and left all zero on return.
fn colour_subset<const K: usize>(
    subset: &[u32],
    constraints: &[[u32; K]],
    free: &[bool],
    used: &mut [u64],
    first: u32,
) -> Colouring {
    let mut colour_of = vec![u8::MAX; subset.len()];
    let mut counts = [0usize; MAX_COLOURS];
    let mut serial = Vec::new();
    let moved = |i: u32| {
        constraints[i as usize].into_iter().filter(|&p| free[p as usize]).map(|p| (p - first) as usize)
    };
    for (j, &i) in subset.iter().enumerate() {
        let taken = moved(i).fold(0u64, |m, p| m | used[p]);
        let c = (!taken).trailing_zeros() as usize;
        if c >= MAX_COLOURS {
            serial.push(i);
            continue;
        }
        colour_of[j] = c as u8;
        counts[c] += 1;
        for p in moved(i) {
            used[p] |= 1 << c;
        }
    }
    for &i in subset {
        for p in moved(i) {
            used[p] = 0;
        }
    }
    let colours = counts.iter().rposition(|&n| n > 0).map_or(0, |c| c + 1);
    let mut colour_starts = Vec::with_capacity(colours + 1);
    let mut start = 0;
    colour_starts.push(0);
    for &n in &counts[..colours] {
        start += n;
        colour_starts.push(start);
    }
    let mut next = colour_starts.clone();
    let mut order = vec![0u32; start];
    for (j, &c) in colour_of.iter().enumerate() {
        if c != u8::MAX {
            order[next[c as usize]] = subset[j];
            next[c as usize] += 1;
        }
    }
    Colouring { order, colour_starts, serial }
}

/// A block of a [`BatchPlan`]: a range of particles and the colours of its interior constraints.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Block {
    /// The particles of the block; its batches write no other particle.
    pub particles: Range<u32>,
    /// Batch range of each of the block's colours, in solve order.
    pub colours: Vec<Range<usize>>,
}

impl Block {
    /// All batches of the block.
    pub fn batches(&self) -> Range<usize> {
        match (self.colours.first(), self.colours.last()) {
            (Some(a), Some(b)) => a.start..b.end,
            _ => 0..0,
        }
    }
}

/// One connected part of the boundary constraints, solved colour by colour on one thread (module
/// docs, "Strands"). Strands share no free particle.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Strand {
    /// Batch range of each of the strand's colours, in solve order.
    pub colours: Vec<Range<usize>>,
}

/// Constraints cut into SIMD batches, in solve order: the blocks (in parallel, each colour by
/// colour), the strands (in parallel, each colour by colour), then the boundary colours (each
/// split across threads), then the serial list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BatchPlan {
    /// Constraint index of each lane. Padding lanes repeat lane 0 of their batch.
    pub lanes: Vec<Lanes<u32>>,
    /// Active (non-padding) lanes per batch, `1..=LANES`.
    pub active: Vec<u8>,
    /// Per batch, which particle slots may be written: bit `slot·LANES + lane` is set when that
    /// lane is active and that particle is free. Up to 4 slots per constraint.
    pub writes: Vec<u32>,
    /// Stage 1: the blocks with interior constraints, batches in order from batch 0.
    pub blocks: Vec<Block>,
    /// Stage 2: the strands of the boundary constraints, after the blocks' batches.
    pub strands: Vec<Strand>,
    /// Stage 3: batch range of each colour of the boundary constraints in no strand.
    pub colours: Vec<Range<usize>>,
    /// Stage 4: batches of the serial (overflow) list, solved lane by lane, in order, on one
    /// thread.
    pub serial: Range<usize>,
}

impl Digest for BatchPlan {
    fn digest<H: std::hash::Hasher>(&self, h: &mut H) {
        let BatchPlan { lanes, active, writes, blocks, strands, colours, serial } = self;
        lanes.digest(h);
        active.digest(h);
        writes.digest(h);
        blocks.len().digest(h);
        for Block { particles, colours } in blocks {
            particles.digest(h);
            colours.digest(h);
        }
        strands.len().digest(h);
        for Strand { colours } in strands {
            colours.digest(h);
        }
        colours.digest(h);
        serial.digest(h);
    }
}

impl BatchPlan {
    /// Splits `constraints` into blocks of `block_particles` particles and the boundary into
    /// strands, colours them and packs the colours into batches; `free` as for [`colour`].
    ///
    /// # Panics
    /// If `K > 4` (the write mask has room for four particles per constraint), if a particle index
    /// is out of range for `free`, or if the packing breaks its invariant (see
    /// [`BatchPlan::assert_invariant`]), which would be a bug here.
    pub fn build<const K: usize>(constraints: &[[u32; K]], free: &[bool], block_particles: u32) -> BatchPlan {
        Self::build_with(constraints, free, block_particles, true)
    }

    /// [`BatchPlan::build`], with strands or without them (every boundary constraint then in
    /// the boundary colours: what the tests hold the strands against).
    fn build_with<const K: usize>(
        constraints: &[[u32; K]],
        free: &[bool],
        block_particles: u32,
        strands: bool,
    ) -> BatchPlan {
        assert!(K <= 4, "write masks hold four particles per constraint");
        assert!(block_particles > 0);
        let block_count = (free.len() as u32).div_ceil(block_particles) as usize;
        // Interior constraints per block, and the boundary ones, in input order.
        let mut interior: Vec<Vec<u32>> = vec![Vec::new(); block_count];
        let mut boundary = Vec::new();
        for (i, particles) in constraints.iter().enumerate() {
            let mut blocks = particles.iter().filter(|&&p| free[p as usize]).map(|&p| p / block_particles);
            match blocks.next() {
                Some(first) if blocks.all(|b| b == first) => interior[first as usize].push(i as u32),
                _ => boundary.push(i as u32),
            }
        }
        // Blocks share no free particle: each is coloured on its own, with a mask for its own
        // particles, in parallel on the current rayon pool (the same colouring for any pool).
        // Each block's list is freed once coloured, so the two are held together one block at
        // a time per thread, as they were one after another.
        let colourings: Vec<Colouring> = interior
            .into_par_iter()
            .enumerate()
            .map(|(k, subset)| {
                let first = k as u32 * block_particles;
                let len = (free.len() as u32 - first).min(block_particles);
                colour_subset(&subset, constraints, free, &mut vec![0u64; len as usize], first)
            })
            .collect();
        let mut plan = BatchPlan::default();
        for (k, c) in colourings.into_iter().enumerate() {
            boundary.extend_from_slice(&c.serial);
            if c.order.is_empty() {
                continue;
            }
            let colours = (0..c.colour_count())
                .map(|j| {
                    plan.push_run(&c.order[c.colour_starts[j]..c.colour_starts[j + 1]], constraints, free)
                })
                .collect();
            let first = k as u32 * block_particles;
            let particles = first..(first + block_particles).min(free.len() as u32);
            plan.blocks.push(Block { particles, colours });
        }
        boundary.sort_unstable();
        let mut used = vec![0u64; free.len()];
        let rest = match strands {
            true => plan.push_strands(&boundary, constraints, free, &mut used),
            false => boundary,
        };
        let c = colour_subset(&rest, constraints, free, &mut used, 0);
        for j in 0..c.colour_count() {
            let range =
                plan.push_run(&c.order[c.colour_starts[j]..c.colour_starts[j + 1]], constraints, free);
            plan.colours.push(range);
        }
        plan.serial = plan.push_run(&c.serial, constraints, free);
        plan.assert_invariant(constraints, free);
        plan
    }

    /// Appends a strand for each connected part of `boundary` (ascending) whose colours each fit
    /// one work item and which needs no serial list (module docs, "Strands"); returns the
    /// constraints of the other parts, ascending. `used` as for `colour_subset`, over every
    /// particle.
    fn push_strands<const K: usize>(
        &mut self,
        boundary: &[u32],
        constraints: &[[u32; K]],
        free: &[bool],
        used: &mut [u64],
    ) -> Vec<u32> {
        let mut rest = Vec::new();
        for part in parts(boundary, constraints, free) {
            let c = colour_subset(&part, constraints, free, used, 0);
            let fits = c.colour_sizes().iter().all(|&n| n.div_ceil(LANES) <= CHUNK_BATCHES);
            if !c.serial.is_empty() || !fits {
                rest.extend_from_slice(&part);
                continue;
            }
            let colours = (0..c.colour_count())
                .map(|j| {
                    self.push_run(&c.order[c.colour_starts[j]..c.colour_starts[j + 1]], constraints, free)
                })
                .collect();
            self.strands.push(Strand { colours });
        }
        rest.sort_unstable();
        rest
    }

    /// Appends the constraints `run` as batches (the last one padded); returns their range.
    fn push_run<const K: usize>(
        &mut self,
        run: &[u32],
        constraints: &[[u32; K]],
        free: &[bool],
    ) -> Range<usize> {
        let first = self.lanes.len();
        for chunk in run.chunks(LANES) {
            let mut lanes = Lanes([chunk[0]; LANES]);
            let mut writes = 0u32;
            for (k, &c) in chunk.iter().enumerate() {
                lanes.0[k] = c;
                for (slot, &p) in constraints[c as usize].iter().enumerate() {
                    if free[p as usize] {
                        writes |= 1 << (slot * LANES + k);
                    }
                }
            }
            self.lanes.push(lanes);
            self.active.push(chunk.len() as u8);
            self.writes.push(writes);
        }
        first..self.lanes.len()
    }

    /// The colours in solve order: each block's, each strand's, then the boundary ones (not the
    /// serial list).
    pub fn all_colours(&self) -> impl Iterator<Item = &Range<usize>> {
        let strands = self.strands.iter().flat_map(|s| &s.colours);
        self.blocks.iter().flat_map(|b| &b.colours).chain(strands).chain(&self.colours)
    }

    /// Number of batches, serial ones included.
    pub fn len(&self) -> usize {
        self.lanes.len()
    }

    /// True when there are no batches.
    pub fn is_empty(&self) -> bool {
        self.lanes.is_empty()
    }

    /// Padding lanes in all batches.
    pub fn padding_lanes(&self) -> usize {
        self.active.iter().map(|&a| LANES - a as usize).sum()
    }

    /// Checks the packing invariant that the parallel kernels rely on for memory safety:
    /// the blocks, the strands, the boundary colours and the serial list tile the batch list in
    /// that order; inside one colour no particle is written by two lanes; a block's batches
    /// write only particles of the block, and blocks do not overlap; no particle is written by
    /// two strands; a padding lane or a pinned particle is never written; every batch has at
    /// least one active lane.
    ///
    /// # Panics
    /// When the invariant does not hold.
    pub fn assert_invariant<const K: usize>(&self, constraints: &[[u32; K]], free: &[bool]) {
        assert_eq!(self.lanes.len(), self.active.len());
        assert_eq!(self.lanes.len(), self.writes.len());
        let mut expected_start = 0;
        for r in self.all_colours().chain(std::iter::once(&self.serial)) {
            assert_eq!(r.start, expected_start, "stages tile the batch list");
            expected_start = r.end;
        }
        assert_eq!(expected_start, self.lanes.len(), "stages cover every batch");
        let mut previous_end = 0;
        for block in &self.blocks {
            assert!(block.particles.start >= previous_end, "blocks do not overlap");
            assert!(block.particles.end as usize <= free.len());
            previous_end = block.particles.end;
        }
        // Each colour with the block or strand it belongs to (the stages tile the list, checked
        // above, so a block's colours hold exactly its batches), the boundary colours with none.
        let in_blocks = self.blocks.iter().flat_map(|k| k.colours.iter().map(move |r| (Some(k), None, r)));
        let in_strands = self
            .strands
            .iter()
            .enumerate()
            .flat_map(|(s, k)| k.colours.iter().map(move |r| (None, Some(s), r)));
        let colours = in_blocks.chain(in_strands).chain(self.colours.iter().map(|r| (None, None, r)));
        let mut stamp = vec![usize::MAX; free.len()];
        let mut strand_of = vec![usize::MAX; free.len()];
        for (colour, (block, strand, range)) in colours.enumerate() {
            for b in range.clone() {
                let active = self.active[b] as usize;
                assert!((1..=LANES).contains(&active), "batch {b} has {active} active lanes");
                for k in 0..LANES {
                    for (slot, &p) in constraints[self.lanes[b].0[k] as usize].iter().enumerate() {
                        let written = self.writes[b] & (1 << (slot * LANES + k)) != 0;
                        assert_eq!(
                            written,
                            k < active && free[p as usize],
                            "batch {b} lane {k} slot {slot}: write mask"
                        );
                        if written {
                            assert_ne!(
                                stamp[p as usize], colour,
                                "particle {p} written twice in colour {colour}"
                            );
                            stamp[p as usize] = colour;
                            if let Some(block) = block {
                                assert!(
                                    block.particles.contains(&p),
                                    "batch {b} writes particle {p} outside its block"
                                );
                            }
                            if let Some(strand) = strand {
                                let other = std::mem::replace(&mut strand_of[p as usize], strand);
                                assert!(
                                    other == usize::MAX || other == strand,
                                    "particle {p} written by strands {other} and {strand}"
                                );
                            }
                        }
                    }
                }
            }
        }
        for b in self.serial.clone() {
            for k in self.active[b] as usize..LANES {
                for slot in 0..K {
                    assert_eq!(self.writes[b] & (1 << (slot * LANES + k)), 0, "serial padding lane written");
                }
            }
        }
    }
}

/// The connected parts of the constraints `subset` (indices into `constraints`, ascending): two
/// share a part when a chain of them, each sharing a free particle with the next, joins them.
/// Each part in ascending order, the parts in the order of their first constraint; the
/// constraints with no free particle (which write nothing) make one part.
fn parts<const K: usize>(subset: &[u32], constraints: &[[u32; K]], free: &[bool]) -> Vec<Vec<u32>> {
    // Union–find over the particles, each root the largest index of its set (halving paths).
    let mut parent: Vec<u32> = (0..free.len() as u32).collect();
    let find = |parent: &mut [u32], mut x: u32| {
        while parent[x as usize] != x {
            let up = parent[parent[x as usize] as usize];
            parent[x as usize] = up;
            x = up;
        }
        x
    };
    let moved = |i: u32| constraints[i as usize].into_iter().filter(|&p| free[p as usize]);
    for &i in subset {
        let mut particles = moved(i);
        let Some(first) = particles.next() else { continue };
        for p in particles {
            let (a, b) = (find(&mut parent, first), find(&mut parent, p));
            parent[a.min(b) as usize] = a.max(b);
        }
    }
    // Each root's part, numbered in the order parts first appear.
    let mut part_of = vec![u32::MAX; free.len()];
    let mut parts: Vec<Vec<u32>> = Vec::new();
    let mut unmoved = None;
    for &i in subset {
        let Some(p) = moved(i).next() else {
            let part = *unmoved.get_or_insert_with(|| {
                parts.push(Vec::new());
                parts.len() - 1
            });
            parts[part].push(i);
            continue;
        };
        let root = find(&mut parent, p) as usize;
        if part_of[root] == u32::MAX {
            part_of[root] = parts.len() as u32;
            parts.push(Vec::new());
        }
        parts[part_of[root] as usize].push(i);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: u32) -> Vec<[u32; 2]> {
        (0..n - 1).map(|i| [i, i + 1]).collect()
    }

    fn one_block<const K: usize>(constraints: &[[u32; K]], free: &[bool]) -> BatchPlan {
        BatchPlan::build(constraints, free, u32::MAX)
    }

    #[test]
    fn chain_needs_two_colours() {
        let edges = chain(20);
        let free = vec![true; 20];
        let c = colour(&edges, &free);
        assert_eq!(c.colour_count(), 2);
        assert_eq!(c.colour_sizes(), vec![10, 9]);
        let plan = one_block(&edges, &free);
        assert_eq!(plan.blocks.len(), 1);
        assert_eq!(plan.blocks[0].colours, vec![0..2, 2..4]);
        assert!(plan.colours.is_empty());
        assert_eq!(plan.active, vec![8, 2, 8, 1]);
        assert_eq!(plan.padding_lanes(), 6 + 7);
        // Padding repeats lane 0 but is never written.
        assert_eq!(plan.lanes[1].0[2], plan.lanes[1].0[0]);
        assert_eq!(plan.writes[1], 0b11 | (0b11 << 8));
    }

    #[test]
    fn blocks_keep_their_interiors_and_share_the_boundary() {
        // A chain of 20 in blocks of 8: edges (7,8) and (15,16) cross blocks.
        let edges = chain(20);
        let free = vec![true; 20];
        let plan = BatchPlan::build(&edges, &free, 8);
        assert_eq!(plan.blocks.len(), 3);
        assert_eq!(plan.blocks[1].particles, 8..16);
        assert_eq!(plan.blocks[2].particles, 16..20);
        // Two cuts, apart: a strand each, and no boundary colour.
        assert!(plan.colours.is_empty());
        let strands: Vec<Vec<u32>> =
            plan.strands.iter().map(|s| constraints_in(&plan, s.colours.iter().cloned())).collect();
        assert_eq!(strands, vec![vec![7], vec![15]]);
    }

    /// The constraints of the batch ranges `ranges`, in order.
    fn constraints_in(plan: &BatchPlan, ranges: impl Iterator<Item = Range<usize>>) -> Vec<u32> {
        ranges.flatten().flat_map(|b| plan.lanes[b].0[..plan.active[b] as usize].to_vec()).collect()
    }

    /// The constraints that write each particle, in solve order: what a Gauss–Seidel sweep's
    /// result depends on (each constraint reads its particles as their earlier writers left
    /// them).
    fn writers<const K: usize>(plan: &BatchPlan, constraints: &[[u32; K]], free: &[bool]) -> Vec<Vec<u32>> {
        let mut writers = vec![Vec::new(); free.len()];
        for b in 0..plan.len() {
            for &c in &plan.lanes[b].0[..plan.active[b] as usize] {
                for &p in constraints[c as usize].iter().filter(|&&p| free[p as usize]) {
                    writers[p as usize].push(c);
                }
            }
        }
        writers
    }

    #[test]
    fn a_part_whose_colours_are_large_stays_in_the_boundary_colours() {
        // Blocks of one particle: every edge of the chain crosses blocks, and the chain is one
        // part, whose two colours hold more than a work item each.
        let n = (2 * CHUNK_BATCHES * LANES + 40) as u32;
        let (edges, free) = (chain(n), vec![true; n as usize]);
        let plan = BatchPlan::build(&edges, &free, 1);
        assert!(plan.strands.is_empty());
        assert_eq!(plan.colours.len(), 2);
        // Cut into blocks of 64, the same chain is 2·CHUNK_BATCHES·LANES/64 + 1 cuts apart.
        let plan = BatchPlan::build(&edges, &free, 64);
        assert_eq!(plan.strands.len(), (n as usize - 1) / 64);
        assert!(plan.colours.is_empty());
    }

    #[test]
    fn particles_have_the_same_writers_with_strands_as_without() {
        // A grid of 24 × 20 (edges along both axes and one diagonal), cut into blocks of 64
        // (bands of a few rows: a strand per cut), some particles pinned; and the same grid
        // numbered at random (one large part, which stays in the boundary colours).
        let (w, h) = (24u32, 20u32);
        let at = |i: u32, j: u32| j * w + i;
        let mut edges = Vec::new();
        for j in 0..h {
            for i in 0..w {
                if i + 1 < w {
                    edges.push([at(i, j), at(i + 1, j)]);
                }
                if j + 1 < h {
                    edges.push([at(i, j), at(i, j + 1)]);
                }
                if i + 1 < w && j + 1 < h {
                    edges.push([at(i, j), at(i + 1, j + 1)]);
                }
            }
        }
        let free: Vec<bool> = (0..w * h).map(|p| p % 37 != 5).collect();
        let mut shuffled: Vec<u32> = (0..w * h).collect();
        let mut seed = 12345u64;
        for k in (1..shuffled.len()).rev() {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(k, (seed >> 33) as usize % (k + 1));
        }
        let renumbered: Vec<[u32; 2]> = edges.iter().map(|e| e.map(|p| shuffled[p as usize])).collect();
        for (edges, block) in [(&edges, 64), (&edges, 100), (&renumbered, 64), (&edges, u32::MAX)] {
            let with = BatchPlan::build(edges, &free, block);
            let without = BatchPlan::build_with(edges, &free, block, false);
            assert_eq!(writers(&with, edges, &free), writers(&without, edges, &free), "blocks of {block}");
            assert!(without.strands.is_empty());
        }
        assert!(BatchPlan::build(&edges, &free, 64).strands.len() >= 3, "bands make strands");
    }

    #[test]
    #[should_panic(expected = "written by strands")]
    fn invariant_catches_two_strands_writing_a_particle() {
        let edges = [[0u32, 1], [1, 2]];
        let free = [true; 3];
        let mut plan = BatchPlan::default();
        for e in 0..2 {
            let run = plan.push_run(&[e], &edges, &free);
            plan.strands.push(Strand { colours: vec![run] });
        }
        plan.serial = 2..2;
        plan.assert_invariant(&edges, &free);
    }

    #[test]
    fn pins_never_block() {
        // A star around pinned particle 0: every edge shares only the pin, so one colour.
        let edges: Vec<[u32; 2]> = (1..30).map(|i| [0, i]).collect();
        let mut free = vec![true; 30];
        free[0] = false;
        let c = colour(&edges, &free);
        assert_eq!(c.colour_count(), 1);
        let plan = one_block(&edges, &free);
        assert!(plan.writes.iter().all(|w| w & 0xff == 0), "pin slot never written");
        // In blocks of 10 the pin sits in block 0, but a constraint is interior to the block of
        // its free particle: the pin is only read.
        let plan = BatchPlan::build(&edges, &free, 10);
        assert!(plan.colours.is_empty(), "no boundary constraints");
        assert_eq!(plan.blocks.len(), 3);
    }

    #[test]
    fn free_star_overflows_to_serial() {
        let n = MAX_COLOURS as u32 + 10;
        let edges: Vec<[u32; 2]> = (1..=n).map(|i| [0, i]).collect();
        let free = vec![true; n as usize + 1];
        let c = colour(&edges, &free);
        assert_eq!(c.colour_count(), MAX_COLOURS);
        assert_eq!(c.serial.len(), 10);
        let plan = one_block(&edges, &free);
        assert_eq!(plan.blocks[0].colours.len(), MAX_COLOURS);
        // The block's overflow is coloured again across blocks: one part, a strand.
        assert_eq!(plan.strands.len(), 1);
        assert_eq!(plan.strands[0].colours.len(), 10, "block overflow is coloured again");
        assert!(plan.colours.is_empty() && plan.serial.is_empty());
    }

    #[test]
    fn colouring_is_a_function_of_input() {
        let edges = chain(100);
        let free = vec![true; 100];
        assert_eq!(colour(&edges, &free), colour(&edges, &free));
        assert_eq!(BatchPlan::build(&edges, &free, 16), BatchPlan::build(&edges, &free, 16));
    }

    #[test]
    fn the_plan_is_the_same_on_any_pool() {
        // Blocks are coloured in parallel: a pool of one thread and one of three agree, with
        // pins, a short last block and boundary edges.
        let (n, edges) = (100u32, chain(100));
        let free: Vec<bool> = (0..n).map(|p| p % 7 != 3).collect();
        let on = |threads| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| BatchPlan::build(&edges, &free, 16))
        };
        assert_eq!(on(1), on(3));
    }

    #[test]
    #[should_panic(expected = "written twice")]
    fn invariant_catches_shared_particle() {
        let edges = [[0u32, 1], [1, 2]];
        let free = [true; 3];
        let mut plan = BatchPlan::default();
        let run = plan.push_run(&[0, 1], &edges, &free);
        plan.colours.push(run);
        plan.serial = 1..1;
        plan.assert_invariant(&edges, &free);
    }

    #[test]
    #[should_panic(expected = "outside its block")]
    fn invariant_catches_a_block_writing_outside() {
        let edges = [[0u32, 5]];
        let free = [true; 6];
        let mut plan = BatchPlan::default();
        let run = plan.push_run(&[0], &edges, &free);
        plan.blocks.push(Block { particles: 0..3, colours: vec![run] });
        plan.serial = 1..1;
        plan.assert_invariant(&edges, &free);
    }
}
