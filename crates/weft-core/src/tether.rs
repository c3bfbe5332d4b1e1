//! Tethers (long-range attachments): for every free particle, a unilateral constraint to its
//! nearest pin by geodesic rest distance along the mesh, active only when the particle is farther
//! from that pin than `tether_scale ×` that distance. They stop the rubber-band sag of long cloth
//! at few iterations: a Gauss-Seidel sweep carries a correction only one edge per colour, so a
//! hanging strip of `n` edges sags until `n` iterations have passed, while a tether pulls its
//! particle back onto its bound in one projection.
//!
//! ```text
//! L   = scale · g                 g: shortest path from the pin to the particle along the
//!                                 cloth's distance constraints, summing rest lengths (m)
//! C   = |x − x_pin| − L           (m), projected only when C > 0
//! ∇C  = n = (x − x_pin)/|x − x_pin|
//! Δλ  = (−C − α̃λ) / (w + α̃),  α̃ = α/h²   then λ ← min(λ + Δλ, 0): a tether only pulls
//! x  += w·Δλ·n                    the pin (w = 0) never moves
//! ```
//!
//! Compliance `α` in m/N, `λ` in kg·m (`λ/h²` is the tether's pull in N, `≤ 0`).
//!
//! At rest every particle is within its bound: the straight distance to the pin is at most the
//! path length `g`, and `scale ≥ 1`. A scale below 1 would make the tether fight the cloth's own
//! rest shape, so it is refused.
//!
//! **Building.** A multi-source Dijkstra from every pinned particle over the cloth's distance
//! constraints (stretch and shear; weights = rest lengths, summed in `f64`) gives each particle
//! its geodesic distance and nearest pin; ties (the same distance from two pins) go to the pin
//! with the lower index, so the result depends only on the cloth. A free particle that no pin
//! reaches (a piece of the cloth with no pin) gets no tether. Tethers asked of a cloth without
//! any pin are an error: nothing could be built.
//!
//! Lanes: particle slots `[particle, pin]` (the pin slot is never written); parameter columns
//! [`MAX_LENGTH`], [`COMPLIANCE`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::batches::{BatchLanes, Batches, Packed};
use crate::cloth::ClothContext;
use crate::error::{BuildError, Rule, widen};
use crate::units::Elasticity;

/// Parameter column: the longest allowed distance `L` in m.
pub const MAX_LENGTH: usize = 0;
/// Parameter column: compliance `α` in m/N.
pub const COMPLIANCE: usize = 1;

/// Tethers in SIMD batches: particle slots `[particle, pin]`.
pub type TetherBatches = Batches<2, 2>;

/// Read-only lanes of [`TetherBatches`], for kernels.
pub type TetherLanes<'a> = BatchLanes<'a, 2, 2>;

/// Tethers of a cloth, as a scene states them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TetherDesc {
    /// A tether allows `scale ×` the geodesic rest distance to the pin (`≥ 1`).
    pub scale: f32,
    /// Compliance in m/N, or stiffness in N/m.
    pub elasticity: Elasticity,
}

impl TetherDesc {
    /// The scale of the tethers a pinned cloth gets by default when it is baked to a strain
    /// `tolerance`: `1 + max_strain/2`. A tether at `1 + max_strain` would let the whole path from
    /// the pin use the tolerance, and the edges nearest the pin then end over it (measured on the
    /// flag of `weft demo`: 2.3 % after the last frame at a 2 % tolerance); half of it keeps them
    /// within (1.1 %).
    pub fn tolerance_scale(tolerance: &crate::settings::StrainTolerance) -> f32 {
        1.0 + tolerance.max_strain / 2.0
    }
}

/// Field naming the tether scale in errors.
const SCALE_FIELD: &str = "tether_scale";
/// Field naming the tether material in errors.
const ELASTICITY_FIELD: &str = "tether_compliance";

/// The nearest pin of each particle of a cloth and its geodesic distance (m), by a multi-source
/// Dijkstra over `edges` (local indices, rest lengths in m). `None` for a particle no pin reaches.
/// Ties go to the pin with the lower index.
///
/// ```
/// use weft_core::tether::nearest_pins;
/// // A chain 0–1–2–3–4 with unit edges, pinned at both ends: 2 is as far from 0 as from 4.
/// let edges: Vec<([u32; 2], f32)> = (0..4).map(|i| ([i, i + 1], 1.0)).collect();
/// let near = nearest_pins(5, &edges, &[true, false, false, false, true]);
/// assert_eq!(near[1], Some((0, 1.0)));
/// assert_eq!(near[2], Some((0, 2.0)));
/// assert_eq!(near[3], Some((4, 1.0)));
/// ```
pub fn nearest_pins(particles: usize, edges: &[([u32; 2], f32)], pinned: &[bool]) -> Vec<Option<(u32, f64)>> {
    // Adjacency as a compressed list, neighbours in edge order (deterministic).
    let mut start = vec![0usize; particles + 1];
    for &([a, b], _) in edges {
        start[a as usize + 1] += 1;
        start[b as usize + 1] += 1;
    }
    for i in 0..particles {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut neighbours = vec![(0u32, 0f64); start[particles]];
    for &([a, b], rest) in edges {
        neighbours[fill[a as usize]] = (b, rest as f64);
        fill[a as usize] += 1;
        neighbours[fill[b as usize]] = (a, rest as f64);
        fill[b as usize] += 1;
    }
    // Labels (distance, pin) compared lexicographically; the heap pops the smallest label, then
    // the lowest particle index. Distances are non-negative, so a popped label is final.
    let mut best: Vec<Option<(f64, u32)>> = vec![None; particles];
    let mut heap = BinaryHeap::new();
    for (p, _) in pinned.iter().enumerate().filter(|(_, pinned)| **pinned) {
        best[p] = Some((0.0, p as u32));
        heap.push(Reverse((Ordered(0.0), p as u32, p as u32)));
    }
    while let Some(Reverse((Ordered(d), pin, p))) = heap.pop() {
        if best[p as usize] != Some((d, pin)) {
            continue; // a stale entry
        }
        for &(q, rest) in &neighbours[start[p as usize]..start[p as usize + 1]] {
            let label = (d + rest, pin);
            let better = match best[q as usize] {
                None => true,
                Some((dq, pq)) => label.0 < dq || (label.0 == dq && pin < pq),
            };
            if better {
                best[q as usize] = Some(label);
                heap.push(Reverse((Ordered(label.0), pin, q)));
            }
        }
    }
    best.into_iter().map(|b| b.map(|(d, pin)| (pin, d))).collect()
}

/// A finite, non-negative `f64` with a total order (for the heap).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ordered(f64);

impl Eq for Ordered {}

impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The tethers of one cloth (global particle indices), or the rule it breaks.
pub(crate) fn build(ctx: &ClothContext<'_>) -> Result<Vec<Packed<2, 2>>, BuildError> {
    let Some(desc) = ctx.desc.tethers else { return Ok(Vec::new()) };
    let scale = desc.scale;
    if !scale.is_finite() {
        return Err(ctx.error(SCALE_FIELD, None, Rule::NotFinite { value: scale.to_string() }));
    }
    if scale < 1.0 {
        return Err(ctx.error(
            SCALE_FIELD,
            None,
            Rule::BelowMinimum {
                value: widen(scale),
                min: 1.0,
                why: "a tether shorter than the rest path along the cloth would fight the cloth",
            },
        ));
    }
    let compliance = desc.elasticity.compliance().get();
    if !(compliance * ctx.time_step.inv_h2).is_finite() {
        return Err(ctx.error(
            ELASTICITY_FIELD,
            None,
            Rule::TooLargeForTimeStep { value: compliance, h: ctx.time_step.h64, what: "α/h²" },
        ));
    }
    if !ctx.pinned.contains(&true) {
        return Err(ctx.error(
            SCALE_FIELD,
            None,
            Rule::MissingPrerequisite { feature: "tethers", needs: "pinned particles to attach to" },
        ));
    }
    let edges: Vec<([u32; 2], f32)> = ctx.distance.iter().map(|c| (c.particles, c.rest_length)).collect();
    let nearest = nearest_pins(ctx.pinned.len(), &edges, ctx.pinned);
    let mut tethers = Vec::new();
    for (p, near) in nearest.into_iter().enumerate() {
        let Some((pin, geodesic)) = near else { continue };
        if ctx.pinned[p] {
            continue;
        }
        let max_length = (scale as f64 * geodesic) as f32;
        if !max_length.is_finite() {
            return Err(ctx.error(
                SCALE_FIELD,
                None,
                Rule::NotFinite { value: format!("{scale} × {geodesic} m (the tether of particle {p})") },
            ));
        }
        let mut params = [0.0; 2];
        params[MAX_LENGTH] = max_length;
        params[COMPLIANCE] = compliance;
        tethers.push(Packed { particles: [p as u32 + ctx.offset, pin + ctx.offset], params, tag: 0 });
    }
    Ok(tethers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_to_the_lower_pin_whatever_the_edge_order() {
        // A square 0–1–2–3–0 pinned at 0 and 2: particles 1 and 3 are 1 m from both.
        let mut edges: Vec<([u32; 2], f32)> =
            vec![([0, 1], 1.0), ([1, 2], 1.0), ([2, 3], 1.0), ([3, 0], 1.0)];
        let pinned = [true, false, true, false];
        let a = nearest_pins(4, &edges, &pinned);
        edges.reverse();
        let b = nearest_pins(4, &edges, &pinned);
        assert_eq!(a, b);
        assert_eq!(a[1], Some((0, 1.0)));
        assert_eq!(a[3], Some((0, 1.0)));
        assert_eq!(a[2], Some((2, 0.0)));
    }

    #[test]
    fn geodesic_not_euclidean_and_unreached_pieces() {
        // 0 – 1 – 2 around a corner (3–4 m legs), and a separate piece 3 – 4 with no pin.
        let edges = vec![([0, 1], 3.0), ([1, 2], 4.0), ([3, 4], 1.0)];
        let near = nearest_pins(5, &edges, &[true, false, false, false, false]);
        assert_eq!(near[2], Some((0, 7.0)));
        assert_eq!((near[3], near[4]), (None, None));
    }
}
