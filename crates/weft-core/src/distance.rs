//! Distance constraints (stretch and shear) and their lane-packed form.
//!
//! A distance constraint keeps two particles at a rest length `L`:
//! `C(x₀, x₁) = |x₁ − x₀| − L` (m), gradient `∇C₁ = −∇C₀ = n = (x₁ − x₀)/|x₁ − x₀|`,
//! compliance `α` in m/N, damping `β` in N·s/m, multiplier `λ` in kg·m (`λ/h²` is the force in N).

use std::ops::Range;

use crate::colouring::{BLOCK_PARTICLES, BatchPlan};
use crate::lanes::{LANES, Lanes};
use crate::units::Compliance;

/// Shortest particle distance (m) from which a constraint direction is computed. Closer pairs are
/// degenerate: refused in a rest shape, skipped and counted at run time.
pub const MIN_LENGTH: f32 = 1e-6;

/// Longest particle distance (m) a kernel projects. Farther pairs (or a non-finite distance) are
/// degenerate and skipped and counted, which bounds every correction and keeps positions finite.
pub const MAX_LENGTH: f32 = 1e9;

/// What a distance constraint stands for in the cloth; they share one kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DistanceKind {
    /// Along the cloth's threads (structural edges).
    Stretch,
    /// Across the threads (diagonals).
    Shear,
}

/// One distance constraint, as a builder states it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DistanceConstraint {
    /// The two particles (global indices).
    pub particles: [u32; 2],
    /// Rest length in m (`> 0`).
    pub rest_length: f32,
    /// Compliance `α` in m/N.
    pub compliance: Compliance,
    /// XPBD constraint damping `β` in N·s/m (`≥ 0`; `0` = none).
    pub damping: f32,
    /// Stretch or shear.
    pub kind: DistanceKind,
}

/// Distance constraints packed into SIMD batches by colour, with their multipliers `λ`.
///
/// Lane `k` of batch `b` is one constraint in every array. Fields are private: the batch plan's
/// invariant (no particle written twice inside a colour) is what makes the parallel solve sound,
/// so it is only ever built by [`DistanceBatches::new`], which checks it.
#[derive(Debug, Clone, PartialEq)]
pub struct DistanceBatches {
    data: LaneData,
    lambda: Vec<Lanes<f32>>,
}

/// The read-only part of a [`DistanceBatches`]: everything but `λ`.
#[derive(Debug, Clone, PartialEq)]
struct LaneData {
    plan: BatchPlan,
    a: Vec<Lanes<u32>>,
    b: Vec<Lanes<u32>>,
    rest: Vec<Lanes<f32>>,
    compliance: Vec<Lanes<f32>>,
    damping: Vec<Lanes<f32>>,
    kind: Vec<Lanes<u8>>,
    particle_count: usize,
}

/// Read-only lanes of a [`DistanceBatches`], for kernels.
///
/// Only [`DistanceBatches`] makes one, so a kernel may rely on the batch plan's invariant (no
/// particle written twice inside a colour) and on every particle index being below
/// [`particle_count`](DistanceLanes::particle_count).
#[derive(Debug, Clone, Copy)]
pub struct DistanceLanes<'a>(&'a LaneData);

impl<'a> DistanceLanes<'a> {
    /// First particle of each lane.
    #[inline]
    pub fn a(&self) -> &'a [Lanes<u32>] {
        &self.0.a
    }
    /// Second particle of each lane.
    #[inline]
    pub fn b(&self) -> &'a [Lanes<u32>] {
        &self.0.b
    }
    /// Rest lengths in m.
    #[inline]
    pub fn rest(&self) -> &'a [Lanes<f32>] {
        &self.0.rest
    }
    /// Compliances in m/N.
    #[inline]
    pub fn compliance(&self) -> &'a [Lanes<f32>] {
        &self.0.compliance
    }
    /// Damping `β` in N·s/m; empty when no constraint is damped.
    #[inline]
    pub fn damping(&self) -> &'a [Lanes<f32>] {
        &self.0.damping
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

impl DistanceBatches {
    /// Colours and packs `constraints`; `free[p]` says whether particle `p` can move.
    ///
    /// Constraints whose particles are all pinned must already be left out (they can never
    /// move); indices must be valid for `free`. All `λ` start at 0.
    pub fn new(constraints: &[DistanceConstraint], free: &[bool]) -> Self {
        let pairs: Vec<[u32; 2]> = constraints.iter().map(|c| c.particles).collect();
        let plan = BatchPlan::build(&pairs, free, BLOCK_PARTICLES);
        let lane = |f: &dyn Fn(&DistanceConstraint) -> f32| -> Vec<Lanes<f32>> {
            plan.lanes.iter().map(|l| Lanes(l.0.map(|c| f(&constraints[c as usize])))).collect()
        };
        let damped = constraints.iter().any(|c| c.damping != 0.0);
        let data = LaneData {
            a: plan.lanes.iter().map(|l| Lanes(l.0.map(|c| constraints[c as usize].particles[0]))).collect(),
            b: plan.lanes.iter().map(|l| Lanes(l.0.map(|c| constraints[c as usize].particles[1]))).collect(),
            rest: lane(&|c| c.rest_length),
            compliance: lane(&|c| c.compliance.get()),
            damping: if damped { lane(&|c| c.damping) } else { Vec::new() },
            kind: plan.lanes.iter().map(|l| Lanes(l.0.map(|c| constraints[c as usize].kind as u8))).collect(),
            particle_count: free.len(),
            plan,
        };
        DistanceBatches { lambda: vec![Lanes::splat(0.0); data.plan.len()], data }
    }

    /// Number of constraints (active lanes).
    pub fn len(&self) -> usize {
        self.data.plan.active.iter().map(|&a| a as usize).sum()
    }

    /// True when there are no constraints.
    pub fn is_empty(&self) -> bool {
        self.data.plan.is_empty()
    }

    /// The batch plan (colours, serial list, lane-to-constraint map).
    pub fn plan(&self) -> &BatchPlan {
        &self.data.plan
    }

    /// True when some constraint has damping `β > 0`.
    pub fn is_damped(&self) -> bool {
        !self.data.damping.is_empty()
    }

    /// Read-only lanes for a kernel.
    pub fn lanes(&self) -> DistanceLanes<'_> {
        DistanceLanes(&self.data)
    }

    /// Read-only lanes and the mutable multipliers `λ` (kg·m), for a kernel.
    pub fn lanes_and_lambda_mut(&mut self) -> (DistanceLanes<'_>, &mut [Lanes<f32>]) {
        (DistanceLanes(&self.data), &mut self.lambda)
    }

    /// The multipliers `λ` (kg·m) per batch lane; padding lanes hold no meaning.
    pub fn lambda(&self) -> &[Lanes<f32>] {
        &self.lambda
    }

    /// Sets every `λ` to zero (the start of each XPBD time step).
    pub fn reset_lambda(&mut self) {
        self.lambda.fill(Lanes::splat(0.0));
    }

    /// The constraints in the order the solver projects them: colour by colour, batch by batch,
    /// lane by lane, then the serial list; each with its current `λ` (kg·m).
    pub fn solve_order(&self) -> impl Iterator<Item = (DistanceConstraint, f32)> + '_ {
        (0..self.data.plan.len()).flat_map(move |b| {
            (0..self.data.plan.active[b] as usize).map(move |k| {
                let kind = if self.data.kind[b].0[k] == DistanceKind::Stretch as u8 {
                    DistanceKind::Stretch
                } else {
                    DistanceKind::Shear
                };
                let c = DistanceConstraint {
                    particles: [self.data.a[b].0[k], self.data.b[b].0[k]],
                    rest_length: self.data.rest[b].0[k],
                    compliance: Compliance::new(self.data.compliance[b].0[k]).expect("validated at build"),
                    damping: self.data.damping.get(b).map_or(0.0, |d| d.0[k]),
                    kind,
                };
                (c, self.lambda[b].0[k])
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

    /// Constraints in each boundary colour (those crossing blocks).
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

#[cfg(test)]
mod tests {
    use super::*;

    fn c(a: u32, b: u32) -> DistanceConstraint {
        DistanceConstraint {
            particles: [a, b],
            rest_length: 1.0,
            compliance: Compliance::RIGID,
            damping: 0.0,
            kind: DistanceKind::Stretch,
        }
    }

    #[test]
    fn packs_and_orders() {
        let cons: Vec<_> = (0..10).map(|i| c(i, i + 1)).collect();
        let free = vec![true; 11];
        let d = DistanceBatches::new(&cons, &free);
        assert_eq!(d.len(), 10);
        assert_eq!((d.block_count(), d.block_colours(), d.interior_len()), (1, 2, 10));
        assert!(d.boundary_colour_sizes().is_empty());
        assert!(!d.is_damped());
        let order: Vec<_> = d.solve_order().map(|(c, _)| c.particles[0]).collect();
        assert_eq!(order, vec![0, 2, 4, 6, 8, 1, 3, 5, 7, 9]);
        assert_eq!(d.batch_fill(), 10.0 / 16.0);
    }
}
