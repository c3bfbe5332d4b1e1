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
//! **Projecting.** Inside its bound (`C ≤ 0`) a lane is inactive through a mask, not a branch, and
//! moves nothing. After a projection the particle is never inside its bound:
//! `C' = α̃(C − w·λ)/(w + α̃) ≥ 0` (up to rounding), since `λ ≤ 0`. A lane whose particle and pin
//! are closer than the distance constraints' [`MIN_LENGTH`] or farther than their
//! [`MAX_LENGTH`](MAX_DISTANCE) (or at a non-finite distance) is degenerate: skipped through the
//! same mask and counted.
//!
//! **Scene keys** (`[[cloth]]`): `tether_scale`, `tether_compliance` or `tether_stiffness`, and
//! `tethers = true | false`. Any of the first three turns tethers on; baking to a strain tolerance,
//! a pinned cloth has them unless `tethers = false` (the default scale is then
//! [`TetherDesc::tolerance_scale`], else 1; the default material rigid).
//!
//! Lanes: particle slots `[particle, pin]` (the pin slot is never written); parameter columns
//! [`MAX_LENGTH`], [`COMPLIANCE`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use wide::f32x8;

use crate::batches::{BatchLanes, Batches, Packed};
use crate::cloth::ClothContext;
use crate::error::{BuildError, Rule, widen};
use crate::kinds::distance::{MAX_LENGTH as MAX_DISTANCE, MIN_LENGTH};
use crate::kinds::{
    BatchedKind, Column, Figure, Input, KindInfo, LaneResidual, Load, Plot, Projected, SceneKeys, SummaryLine,
};
use crate::lanes::{Real, V3, dot3, scale3, sub3};
use crate::units::Elasticity;

/// Parameter column: the longest allowed distance `L` in m.
pub const MAX_LENGTH: usize = 0;
/// Parameter column: compliance `α` in m/N.
pub const COMPLIANCE: usize = 1;

/// Tethers in SIMD batches: particle slots `[particle, pin]`.
pub type TetherBatches = Batches<2, 2>;

/// Read-only lanes of [`TetherBatches`], for kernels.
pub type TetherLanes<'a> = BatchLanes<'a, 2, 2>;

/// The tethers as a batched kind: particle slots `[particle, pin]`, parameter columns
/// [`MAX_LENGTH`] and [`COMPLIANCE`]; residual: how far beyond its bound a particle is, in m, and
/// relative to the bound.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tether;

/// Variant flag of [`Tether`]: the compliance column is stored (some tether is soft).
const SOFT: u8 = 1;

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

/// Key of the tether scale (and the field naming it in errors).
const SCALE_FIELD: &str = "tether_scale";
/// Key of the tether compliance (and the field naming the material in errors).
const ELASTICITY_FIELD: &str = "tether_compliance";
/// Key of the tether stiffness, the material's other name.
const STIFFNESS_FIELD: &str = "tether_stiffness";
/// Key of the switch.
const SWITCH_FIELD: &str = "tethers";

impl BatchedKind<2, 2> for Tether {
    const INFO: KindInfo = KindInfo {
        name: "tethers",
        unit: "m beyond bound",
        columns: &[Column {
            name: "tether_max_excess_m",
            value: Figure::MaxAbs,
            plot: Some(Plot { title: "Tethers: largest excess", axis: "excess (mm)", scale: 1e3 }),
        }],
        summary: SummaryLine::Abs,
        example: &["tether_scale = 1.5", "tether_compliance = 0.001"],
    };

    const MOVES: [bool; 2] = [true, false];

    type Desc = Option<TetherDesc>;

    fn describe<S: SceneKeys>(keys: &mut S) -> Result<Option<TetherDesc>, S::Error> {
        let scale = keys.number(SCALE_FIELD)?;
        let material_key = if keys.given(ELASTICITY_FIELD) { ELASTICITY_FIELD } else { STIFFNESS_FIELD };
        let elasticity = keys.material(ELASTICITY_FIELD, STIFFNESS_FIELD)?;
        let keyed = scale.is_some() || elasticity.is_some();
        let on = match keys.switch(SWITCH_FIELD) {
            Some(false) if keyed => {
                let second = if scale.is_some() { SCALE_FIELD } else { material_key };
                return Err(keys.conflict(SWITCH_FIELD, "tethers = false", second));
            }
            Some(on) => on || keyed,
            // Baking to a tolerance, a pinned cloth is tethered by default: long-range limits make
            // a hanging cloth converge with far fewer substeps (docs/physics.md).
            None => keyed || (keys.tolerance().is_some() && keys.has_pins()),
        };
        let default_scale = keys.tolerance().map_or(1.0, TetherDesc::tolerance_scale);
        Ok(on.then(|| TetherDesc {
            scale: scale.unwrap_or(default_scale),
            elasticity: elasticity.unwrap_or(Elasticity::RIGID),
        }))
    }

    fn build(desc: &Option<TetherDesc>, ctx: &ClothContext<'_>) -> Result<Vec<Packed<2, 2>>, BuildError> {
        desc.as_ref().map_or(Ok(Vec::new()), |d| build(d, ctx))
    }

    fn variant(lanes: &TetherLanes<'_>) -> u8 {
        if lanes.param(COMPLIANCE).is_empty() { 0 } else { SOFT }
    }

    #[inline(always)]
    fn project<R: Real, L: Load<R>, const V: u8>(input: Input<'_, R, 2, L>) -> Projected<R, 2> {
        let Input { x: [xp, xq], w: [wp, wq], lambda, step, load } = input;
        let alpha_tilde =
            if V & SOFT != 0 { load.param(COMPLIANCE) * R::splat(step.inv_h2) } else { R::splat(0.0) };
        let t = tether_delta(xp, xq, wp, wq, load.param(MAX_LENGTH), alpha_tilde, lambda);
        let dp = scale3(sub3(xp, xq), wp * t.dlambda_per_length);
        Projected { lambda: t.lambda, delta: [dp, [R::splat(0.0); 3]], valid: t.valid }
    }

    fn residual([xp, xq]: [V3<f32x8>; 2], param: &dyn Fn(usize) -> f32x8) -> LaneResidual {
        let d = sub3(xp, xq);
        let bound = param(MAX_LENGTH);
        let excess = (dot3(d, d).sqrt() - bound).max(f32x8::splat(0.0));
        LaneResidual { abs: excess, rel: excess / bound, counted: u8::MAX }
    }
}

/// The outcome of one tether projection.
#[derive(Clone, Copy, Debug)]
pub struct TetherDelta<R: Real> {
    /// `λ` after the projection (kg·m, `≤ 0`); unchanged in inactive and degenerate lanes.
    pub lambda: R,
    /// `(λ' − λ)/|d|` in kg (0 in inactive and degenerate lanes): the particle moves by
    /// `w·(λ' − λ)/|d|·d`.
    pub dlambda_per_length: R,
    /// The constraint value `C = |d| − L` in m before the projection.
    pub c: R,
    /// Lanes whose distance is usable (not degenerate).
    pub valid: R::Mask,
}

/// The tether projection (module docs), for one constraint or one per lane. `xp`, `wp`: the
/// particle; `xq`, `wq`: its pin; `bound`: `L` (m); `alpha_tilde`: `α/h²` (1/kg); `lambda` in kg·m.
///
/// ```
/// use weft_core::kinds::tether::tether_delta;
/// // A 1 kg particle 3 m from its pin with a 2 m rigid tether is pulled back to 2 m.
/// let t = tether_delta::<f32>([3.0, 0.0, 0.0], [0.0; 3], 1.0, 0.0, 2.0, 0.0, 0.0);
/// assert_eq!((t.lambda, 3.0 + t.dlambda_per_length * 3.0), (-1.0, 2.0));
/// // Inside its bound it does nothing.
/// let t = tether_delta::<f32>([1.0, 0.0, 0.0], [0.0; 3], 1.0, 0.0, 2.0, 0.0, 0.0);
/// assert_eq!((t.lambda, t.dlambda_per_length), (0.0, 0.0));
/// ```
#[inline(always)]
pub fn tether_delta<R: Real>(
    xp: V3<R>,
    xq: V3<R>,
    wp: R,
    wq: R,
    bound: R,
    alpha_tilde: R,
    lambda: R,
) -> TetherDelta<R> {
    let (zero, one) = (R::splat(0.0), R::splat(1.0));
    let d = sub3(xp, xq);
    let len2 = dot3(d, d);
    let len = len2.sqrt();
    let inv_len2 = one / len2;
    let den = wp + wq + alpha_tilde;
    let valid = R::and(R::and(len.gt(R::splat(MIN_LENGTH)), len.le(R::splat(MAX_DISTANCE))), den.gt(zero));
    let c = len - bound;
    let active = R::and(valid, c.gt(zero));
    let dlambda = (-c - alpha_tilde * lambda) * (one / den);
    let sum = lambda + dlambda;
    let clamped = R::select(sum.gt(zero), zero, sum);
    let next = R::select(active, clamped, lambda);
    let step = next - lambda;
    // Selected rather than multiplied: `len·(1/len²)` is NaN for a zero distance.
    let dlambda_per_length = R::select(active, step * (len * inv_len2), zero);
    TetherDelta { lambda: next, dlambda_per_length, c, valid }
}

/// The nearest pin of each particle of a cloth and its geodesic distance (m), by a multi-source
/// Dijkstra over `edges` (local indices, rest lengths in m). `None` for a particle no pin reaches.
/// Ties go to the pin with the lower index.
///
/// ```
/// use weft_core::kinds::tether::nearest_pins;
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
fn build(desc: &TetherDesc, ctx: &ClothContext<'_>) -> Result<Vec<Packed<2, 2>>, BuildError> {
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

    /// `x_p + w_p·(Δλ/|d|)·d`: the position the kernels store.
    fn corrected(xp: V3<f32>, xq: V3<f32>, wp: f32, t: &TetherDelta<f32>) -> V3<f32> {
        crate::lanes::add3(xp, scale3(sub3(xp, xq), wp * t.dlambda_per_length))
    }

    #[test]
    fn compliant_tether_never_overshoots_and_only_pulls() {
        let (wp, alpha_tilde) = (2.0f32, 0.5f32);
        let mut x = [5.0f32, 0.0, 0.0];
        let mut lambda = 0.0f32;
        for _ in 0..20 {
            let t = tether_delta::<f32>(x, [0.0; 3], wp, 0.0, 4.0, alpha_tilde, lambda);
            assert!(t.lambda <= 0.0);
            lambda = t.lambda;
            x = corrected(x, [0.0; 3], wp, &t);
            assert!(x[0] >= 4.0, "pulled inside its bound: {}", x[0]);
        }
        // Moved inside from outside, the accumulated pull relaxes back toward 0, never below.
        let t = tether_delta::<f32>([3.0, 0.0, 0.0], [0.0; 3], wp, 0.0, 4.0, alpha_tilde, lambda);
        assert_eq!((t.lambda, t.dlambda_per_length), (lambda, 0.0), "inside: untouched");
    }

    #[test]
    fn degenerate_lanes_are_masked() {
        for x in [[0.0f32; 3], [3e9, 0.0, 0.0], [f32::NAN, 0.0, 0.0]] {
            let t = tether_delta::<f32>(x, [0.0; 3], 1.0, 0.0, 1e-7, 0.0, -0.25);
            assert!(!t.valid);
            assert_eq!((t.lambda, t.dlambda_per_length), (-0.25, 0.0));
        }
    }

    #[test]
    fn simd_lanes_match_scalar_bits() {
        let xs: [[f32; 3]; 8] = std::array::from_fn(|k| [k as f32 * 0.7 - 1.0, 0.3 * k as f32, 1.1]);
        let bound = [0.5f32, 1.0, 2.0, 0.1, 3.0, 0.2, 1.5, 0.01];
        let lambda = [0.0f32, -0.1, -1.0, 0.0, -0.5, 0.0, -2.0, 0.0];
        let lane = |i: usize| f32x8::new(std::array::from_fn(|k| xs[k][i]));
        let t = tether_delta::<f32x8>(
            [lane(0), lane(1), lane(2)],
            [f32x8::splat(0.0); 3],
            f32x8::splat(0.7),
            f32x8::splat(0.0),
            f32x8::new(bound),
            f32x8::splat(0.3),
            f32x8::new(lambda),
        );
        for k in 0..8 {
            let s = tether_delta::<f32>(xs[k], [0.0; 3], 0.7, 0.0, bound[k], 0.3, lambda[k]);
            assert_eq!(t.lambda.to_array()[k].to_bits(), s.lambda.to_bits(), "lane {k}");
            assert_eq!(t.dlambda_per_length.to_array()[k].to_bits(), s.dlambda_per_length.to_bits());
        }
    }
}
