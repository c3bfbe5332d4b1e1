//! [`Batches`]: the constraints of one kind packed by a [`BatchPlan`], with their multipliers `λ`.
//!
//! Every constraint kind that is solved in colour batches (distance, bending, tethers) is a
//! `Batches<K, P>`: `K` particles and `P` parameters per constraint, stored lane by lane
//! (`Lanes<T>` of 8), plus a small tag per lane (what the constraint stands for, for statistics)
//! and `λ`. A parameter column whose values are all zero (an unused damping, say) is stored empty,
//! so a kernel can pick a cheaper variant and skip loading it.
//!
//! Fields are private: the plan's invariant (no particle written twice inside a colour, a block
//! writes only its own particles) is what makes the parallel solve sound, so a `Batches` is only
//! ever built by [`Batches::new`], which checks it, and kernels only see it through the read-only
//! [`BatchLanes`].

use std::ops::Range;

use rayon::prelude::*;

use crate::colouring::{BLOCK_PARTICLES, BatchPlan};
use crate::digest::Digest;
use crate::lanes::{LANES, Lanes};

/// One constraint as a builder states it: its particles, parameters and tag.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Packed<const K: usize, const P: usize> {
    /// The particles it moves (global indices).
    pub particles: [u32; K],
    /// Its parameters, in the kind's column order.
    pub params: [f32; P],
    /// What it stands for (kind-specific, e.g. stretch or shear).
    pub tag: u8,
}

/// Constraints of one kind in SIMD batches, with `λ`.
#[derive(Debug, Clone, PartialEq)]
pub struct Batches<const K: usize, const P: usize> {
    data: BatchData<K, P>,
    lambda: Vec<Lanes<f32>>,
}

/// Everything of a [`Batches`] but `λ`.
#[derive(Debug, Clone, PartialEq)]
struct BatchData<const K: usize, const P: usize> {
    plan: BatchPlan,
    particles: [Vec<Lanes<u32>>; K],
    params: [Vec<Lanes<f32>>; P],
    tags: Vec<Lanes<u8>>,
    particle_count: usize,
}

/// The read-only lanes of a [`Batches`], for kernels. Only a `Batches` makes one, so a kernel
/// may rely on the plan's invariant and on every particle index being below
/// [`particle_count`](BatchLanes::particle_count).
#[derive(Debug, Clone, Copy)]
pub struct BatchLanes<'a, const K: usize, const P: usize>(&'a BatchData<K, P>);

impl<'a, const K: usize, const P: usize> BatchLanes<'a, K, P> {
    /// Particle `slot` (`< K`) of each lane.
    #[inline]
    pub fn particles(&self, slot: usize) -> &'a [Lanes<u32>] {
        &self.0.particles[slot]
    }

    /// Parameter column `column` (`< P`); empty when every value is zero.
    #[inline]
    pub fn param(&self, column: usize) -> &'a [Lanes<f32>] {
        &self.0.params[column]
    }

    /// Tags of each lane.
    #[inline]
    pub fn tags(&self) -> &'a [Lanes<u8>] {
        &self.0.tags
    }

    /// The batch plan: stages, colours, active lanes and write masks.
    #[inline]
    pub fn plan(&self) -> &'a BatchPlan {
        &self.0.plan
    }

    /// Every particle index in these lanes is below this count.
    #[inline]
    pub fn particle_count(&self) -> usize {
        self.0.particle_count
    }

    /// Number of batches.
    #[inline]
    pub fn batch_count(&self) -> usize {
        self.0.plan.len()
    }
}

impl<const K: usize, const P: usize> Digest for Batches<K, P> {
    fn digest<H: std::hash::Hasher>(&self, h: &mut H) {
        let Batches { data, lambda } = self;
        let BatchData { plan, particles, params, tags, particle_count } = data;
        plan.digest(h);
        particles.iter().for_each(|slot| slot.digest(h));
        params.iter().for_each(|column| column.digest(h));
        tags.digest(h);
        particle_count.digest(h);
        lambda.digest(h);
    }
}

impl<const K: usize, const P: usize> Batches<K, P> {
    /// Colours and packs `constraints` in blocks of [`BLOCK_PARTICLES`]; `free[p]` says whether
    /// particle `p` can move. All `λ` start at 0.
    ///
    /// Constraints whose particles are all pinned must already be left out (they can never
    /// move); every index must be below `free.len()`.
    pub fn new(constraints: &[Packed<K, P>], free: &[bool]) -> Self {
        Self::in_blocks(constraints, free, BLOCK_PARTICLES)
    }

    /// [`Batches::new`] in blocks of `block_particles` particles (see
    /// `crate::colouring::block_particles`).
    pub fn in_blocks(constraints: &[Packed<K, P>], free: &[bool], block_particles: u32) -> Self {
        let sets: Vec<[u32; K]> = constraints.iter().map(|c| c.particles).collect();
        let plan = BatchPlan::build(&sets, free, block_particles);
        // Freed before the lanes are filled: the build's peak holds no list twice.
        drop(sets);
        let column = |i: usize| -> Vec<Lanes<f32>> {
            if constraints.par_iter().all(|c| c.params[i] == 0.0) {
                return Vec::new();
            }
            gather(&plan, constraints, |c| c.params[i])
        };
        let data = BatchData {
            particles: std::array::from_fn(|slot| gather(&plan, constraints, |c| c.particles[slot])),
            params: std::array::from_fn(column),
            tags: gather(&plan, constraints, |c| c.tag),
            particle_count: free.len(),
            plan,
        };
        Batches { lambda: vec![Lanes::splat(0.0); data.plan.len()], data }
    }

    /// Number of constraints (active lanes).
    pub fn len(&self) -> usize {
        self.count(0..self.data.plan.len())
    }

    /// True when there are no constraints.
    pub fn is_empty(&self) -> bool {
        self.data.plan.is_empty()
    }

    /// The batch plan (blocks, colours, serial list, lane-to-constraint map).
    pub fn plan(&self) -> &BatchPlan {
        &self.data.plan
    }

    /// True when parameter column `column` holds a non-zero value.
    pub fn has_param(&self, column: usize) -> bool {
        !self.data.params[column].is_empty()
    }

    /// Read-only lanes for a kernel.
    pub fn lanes(&self) -> BatchLanes<'_, K, P> {
        BatchLanes(&self.data)
    }

    /// Read-only lanes and the mutable multipliers `λ`, for a kernel.
    pub fn lanes_and_lambda_mut(&mut self) -> (BatchLanes<'_, K, P>, &mut [Lanes<f32>]) {
        (BatchLanes(&self.data), &mut self.lambda)
    }

    /// The multipliers `λ` per batch lane; padding lanes hold no meaning.
    pub fn lambda(&self) -> &[Lanes<f32>] {
        &self.lambda
    }

    /// Sets every `λ` to zero (the start of each XPBD time step).
    pub fn reset_lambda(&mut self) {
        self.lambda.fill(Lanes::splat(0.0));
    }

    /// The constraints in the order the solver projects them (blocks, strands, boundary colours,
    /// serial list; batch by batch, lane by lane), each with its current `λ`.
    pub fn solve_order(&self) -> impl Iterator<Item = (Packed<K, P>, f32)> + '_ {
        let d = &self.data;
        (0..d.plan.len()).flat_map(move |b| {
            (0..d.plan.active[b] as usize).map(move |k| {
                let packed = Packed {
                    particles: std::array::from_fn(|slot| d.particles[slot][b].0[k]),
                    params: std::array::from_fn(|i| d.params[i].get(b).map_or(0.0, |l| l.0[k])),
                    tag: d.tags[b].0[k],
                };
                (packed, self.lambda[b].0[k])
            })
        })
    }

    /// Constraints in the batch range `r`.
    fn count(&self, r: Range<usize>) -> usize {
        r.map(|b| self.data.plan.active[b] as usize).sum()
    }

    /// Blocks with interior constraints (solved in parallel, each on one thread).
    pub fn block_count(&self) -> usize {
        self.data.plan.blocks.len()
    }

    /// Constraints interior to a block.
    pub fn interior_len(&self) -> usize {
        self.data.plan.blocks.iter().map(|b| self.count(b.batches())).sum()
    }

    /// The most colours any block needs.
    pub fn block_colours(&self) -> usize {
        self.data.plan.blocks.iter().map(|b| b.colours.len()).max().unwrap_or(0)
    }

    /// Constraints in each strand (crossing blocks; see [`crate::colouring`]).
    pub fn strand_sizes(&self) -> Vec<usize> {
        self.data.plan.strands.iter().map(|s| s.colours.iter().map(|r| self.count(r.clone())).sum()).collect()
    }

    /// Constraints in each boundary colour (those crossing blocks, in no strand).
    pub fn boundary_colour_sizes(&self) -> Vec<usize> {
        self.data.plan.colours.iter().map(|r| self.count(r.clone())).collect()
    }

    /// Constraints solved serially (the overflow of the colouring).
    pub fn serial_len(&self) -> usize {
        self.count(self.data.plan.serial.clone())
    }

    /// Fraction of SIMD lanes holding a real constraint, in `[0, 1]`.
    pub fn batch_fill(&self) -> f64 {
        if self.data.plan.is_empty() {
            return 1.0;
        }
        self.len() as f64 / (self.data.plan.len() * LANES) as f64
    }
}

impl<const K: usize, const P: usize> Default for Batches<K, P> {
    /// No constraints.
    fn default() -> Self {
        Batches::new(&[], &[])
    }
}

/// One column of `plan`'s batches, `f` of each lane's constraint, gathered in parallel on the
/// current rayon pool (an indexed collect: the same order for any pool).
fn gather<T: Copy + Send, const K: usize, const P: usize>(
    plan: &BatchPlan,
    constraints: &[Packed<K, P>],
    f: impl Fn(&Packed<K, P>) -> T + Sync,
) -> Vec<Lanes<T>> {
    plan.lanes.par_iter().map(|l| Lanes(l.0.map(|c| f(&constraints[c as usize])))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(a: u32, b: u32, rest: f32) -> Packed<2, 2> {
        Packed { particles: [a, b], params: [rest, 0.0], tag: (a % 2) as u8 }
    }

    #[test]
    fn packs_orders_and_drops_zero_columns() {
        let cons: Vec<_> = (0..10).map(|i| c(i, i + 1, i as f32)).collect();
        let free = vec![true; 11];
        let d = Batches::new(&cons, &free);
        assert_eq!(d.len(), 10);
        assert_eq!((d.block_count(), d.block_colours(), d.interior_len()), (1, 2, 10));
        assert!(d.boundary_colour_sizes().is_empty());
        assert!(d.has_param(0) && !d.has_param(1), "an all-zero column is stored empty");
        let order: Vec<_> = d.solve_order().map(|(c, _)| (c.particles[0], c.params[0], c.tag)).collect();
        assert_eq!(order[..3], [(0, 0.0, 0), (2, 2.0, 0), (4, 4.0, 0)]);
        assert_eq!(order[5], (1, 1.0, 1));
        assert_eq!(d.batch_fill(), 10.0 / 16.0);
        assert!(Batches::<2, 2>::default().is_empty());
    }
}
