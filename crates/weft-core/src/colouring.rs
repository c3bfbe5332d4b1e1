//! Deterministic greedy graph colouring of constraints, and packing of each colour into SIMD
//! batches.
//!
//! Two constraints conflict when they move the same free particle. Constraints of one colour never
//! conflict, so a colour can be projected in any order, in parallel, or eight at a time in SIMD
//! lanes, with the same result: Gauss-Seidel between colours, order-free inside one.
//!
//! * **Colouring** is first-fit in input order: each constraint takes the lowest colour that none of
//!   its free particles has used yet (a 64-bit mask per particle). Pinned particles (inverse mass
//!   0) are never written, so they never cause a conflict. The result depends only on the
//!   constraint list and the pins, never on hashing or threads.
//! * **Overflow**: a constraint that finds all [`MAX_COLOURS`] colours taken (a particle with a
//!   huge number of constraints) goes to the *serial* list, solved after the colours, one
//!   constraint at a time on one thread.
//! * **Packing**: each colour is cut into batches of [`LANES`] constraints. The last batch of a
//!   colour is padded by repeating its lane 0; padding lanes are computed (harmlessly, on valid
//!   data) and never written back or counted. [`BatchPlan::assert_invariant`] checks, for every
//!   build, that no two lanes of a colour write the same particle and that padding and pinned
//!   particles are never written.

use std::ops::Range;

use crate::lanes::{LANES, Lanes};

/// Most colours a constraint set uses; constraints beyond them are solved serially.
pub const MAX_COLOURS: usize = 64;

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
    let mut used = vec![0u64; free.len()];
    let mut colour_of = vec![u8::MAX; constraints.len()];
    let mut counts = [0usize; MAX_COLOURS];
    let mut serial = Vec::new();
    for (i, particles) in constraints.iter().enumerate() {
        let taken = particles.iter().filter(|&&p| free[p as usize]).fold(0u64, |m, &p| m | used[p as usize]);
        let c = (!taken).trailing_zeros() as usize;
        if c >= MAX_COLOURS {
            serial.push(i as u32);
            continue;
        }
        colour_of[i] = c as u8;
        counts[c] += 1;
        for &p in particles.iter().filter(|&&p| free[p as usize]) {
            used[p as usize] |= 1 << c;
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
    for (i, &c) in colour_of.iter().enumerate() {
        if c != u8::MAX {
            order[next[c as usize]] = i as u32;
            next[c as usize] += 1;
        }
    }
    Colouring { order, colour_starts, serial }
}

/// A colouring cut into SIMD batches: which constraint sits in which lane.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BatchPlan {
    /// Constraint index of each lane. Padding lanes repeat lane 0 of their batch.
    pub lanes: Vec<Lanes<u32>>,
    /// Active (non-padding) lanes per batch, `1..=LANES`.
    pub active: Vec<u8>,
    /// Per batch, which particle slots may be written: bit `slot·LANES + lane` is set when that
    /// lane is active and that particle is free. Up to 4 slots per constraint.
    pub writes: Vec<u32>,
    /// Batch range of each colour.
    pub colours: Vec<Range<usize>>,
    /// Batches of the serial (overflow) list: solved lane by lane, in order, on one thread.
    pub serial: Range<usize>,
}

impl BatchPlan {
    /// Packs a colouring of `constraints` into batches; `free` as for [`colour`].
    ///
    /// # Panics
    /// If `K > 4` (the write mask has room for four particles per constraint), or if the packing
    /// breaks its invariant (see [`BatchPlan::assert_invariant`]), which would be a bug here.
    pub fn pack<const K: usize>(colouring: &Colouring, constraints: &[[u32; K]], free: &[bool]) -> BatchPlan {
        assert!(K <= 4, "write masks hold four particles per constraint");
        let mut plan = BatchPlan::default();
        let push_run = |plan: &mut BatchPlan, run: &[u32]| -> Range<usize> {
            let first = plan.lanes.len();
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
                plan.lanes.push(lanes);
                plan.active.push(chunk.len() as u8);
                plan.writes.push(writes);
            }
            first..plan.lanes.len()
        };
        for c in 0..colouring.colour_count() {
            let run = &colouring.order[colouring.colour_starts[c]..colouring.colour_starts[c + 1]];
            let range = push_run(&mut plan, run);
            plan.colours.push(range);
        }
        plan.serial = push_run(&mut plan, &colouring.serial);
        plan.assert_invariant(constraints, free);
        plan
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
    /// inside one colour no particle is written by two lanes; a padding lane or a pinned particle
    /// is never written; every batch has at least one active lane; the colours and the serial list
    /// tile the batch list.
    ///
    /// # Panics
    /// When the invariant does not hold.
    pub fn assert_invariant<const K: usize>(&self, constraints: &[[u32; K]], free: &[bool]) {
        assert_eq!(self.lanes.len(), self.active.len());
        assert_eq!(self.lanes.len(), self.writes.len());
        let mut expected_start = 0;
        for r in self.colours.iter().chain(std::iter::once(&self.serial)) {
            assert_eq!(r.start, expected_start, "colours tile the batch list");
            expected_start = r.end;
        }
        assert_eq!(expected_start, self.lanes.len(), "colours and serial list cover every batch");
        let mut stamp = vec![usize::MAX; free.len()];
        for (colour, range) in self.colours.iter().enumerate() {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: u32) -> Vec<[u32; 2]> {
        (0..n - 1).map(|i| [i, i + 1]).collect()
    }

    #[test]
    fn chain_needs_two_colours() {
        let edges = chain(20);
        let free = vec![true; 20];
        let c = colour(&edges, &free);
        assert_eq!(c.colour_count(), 2);
        assert_eq!(c.colour_sizes(), vec![10, 9]);
        let plan = BatchPlan::pack(&c, &edges, &free);
        assert_eq!(plan.colours, vec![0..2, 2..4]);
        assert_eq!(plan.active, vec![8, 2, 8, 1]);
        assert_eq!(plan.padding_lanes(), 6 + 7);
        // Padding repeats lane 0 but is never written.
        assert_eq!(plan.lanes[1].0[2], plan.lanes[1].0[0]);
        assert_eq!(plan.writes[1], 0b11 | (0b11 << 8));
    }

    #[test]
    fn pins_never_block() {
        // A star around pinned particle 0: every edge shares only the pin, so one colour.
        let edges: Vec<[u32; 2]> = (1..30).map(|i| [0, i]).collect();
        let mut free = vec![true; 30];
        free[0] = false;
        let c = colour(&edges, &free);
        assert_eq!(c.colour_count(), 1);
        let plan = BatchPlan::pack(&c, &edges, &free);
        assert!(plan.writes.iter().all(|w| w & 0xff == 0), "pin slot never written");
    }

    #[test]
    fn free_star_overflows_to_serial() {
        let n = MAX_COLOURS as u32 + 10;
        let edges: Vec<[u32; 2]> = (1..=n).map(|i| [0, i]).collect();
        let free = vec![true; n as usize + 1];
        let c = colour(&edges, &free);
        assert_eq!(c.colour_count(), MAX_COLOURS);
        assert_eq!(c.serial.len(), 10);
        let plan = BatchPlan::pack(&c, &edges, &free);
        assert_eq!(plan.serial, MAX_COLOURS..MAX_COLOURS + 2);
    }

    #[test]
    fn colouring_is_a_function_of_input() {
        let edges = chain(100);
        let free = vec![true; 100];
        assert_eq!(colour(&edges, &free), colour(&edges, &free));
    }

    #[test]
    #[should_panic(expected = "written twice")]
    fn invariant_catches_shared_particle() {
        let edges = [[0u32, 1], [1, 2]];
        let free = [true; 3];
        let bad = Colouring { order: vec![0, 1], colour_starts: vec![0, 2], serial: vec![] };
        BatchPlan::pack(&bad, &edges, &free);
    }
}
