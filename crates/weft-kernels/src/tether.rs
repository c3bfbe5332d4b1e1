//! The kernel of the unilateral tether constraint (see `weft_core::tether`): one body for any
//! [`Real`], a SIMD and a scalar instantiation, run by [`crate::schedule`].
//!
//! For a particle `p` (slot 0, inverse mass `w` in 1/kg) and its pin `q` (slot 1, never written)
//! with bound `L` (m):
//!
//! ```text
//! d   = x_p − x_q,  C = |d| − L            (m)
//! α̃   = α / h²                              (α in m/N)
//! Δλ  = (−C − α̃·λ) / (w_p + w_q + α̃)       where C > 0, else 0
//! λ'  = min(λ + Δλ, 0)                      a tether only pulls: λ stays ≤ 0 (kg·m)
//! x_p += w_p·(λ' − λ)·d/|d|
//! ```
//!
//! Inside its bound (`C ≤ 0`) a lane is inactive through a mask, not a branch, and moves nothing.
//! After a projection the particle is never inside its bound: `C' = α̃(C − w·λ)/(w + α̃) ≥ 0` (up
//! to rounding), since `λ ≤ 0`. A lane whose particle and pin are closer than
//! [`MIN_LENGTH`] or farther than [`MAX_LENGTH`] (or at a non-finite distance) is degenerate:
//! skipped through the same mask and counted.

use weft_core::distance::{MAX_LENGTH, MIN_LENGTH};
use weft_core::lanes::Lanes;
use weft_core::settings::TimeStep;
use weft_core::tether::{COMPLIANCE, MAX_LENGTH as BOUND, TetherLanes};
use wide::f32x8;

use crate::KernelPath;
use crate::lane::{Real, V3, add3, dot3, sub3};
use crate::records::{BatchGroup, Record, gather8, slot_writes};
use crate::schedule::{Access, BatchKernel, BatchedKind, KernelInputs, LaneResidual, run_batches};

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
/// particle; `xq`, `wq`: its pin.
///
/// ```
/// use weft_kernels::tether::tether_delta;
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
    let valid = R::and(R::and(len.gt(R::splat(MIN_LENGTH)), len.le(R::splat(MAX_LENGTH))), den.gt(zero));
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

fn xyz<R: Copy>(r: [R; 4]) -> V3<R> {
    [r[0], r[1], r[2]]
}

/// The correction `w_p·(Δλ/|d|)·d` of the particle (m); it moves to `x_p + correction`.
#[inline(always)]
fn correction<R: Real>(xp: V3<R>, xq: V3<R>, wp: R, t: &TetherDelta<R>) -> V3<R> {
    let s = wp * t.dlambda_per_length;
    let d = sub3(xp, xq);
    [d[0] * s, d[1] * s, d[2] * s]
}

/// The tether kernel with the lanes and the time step. `SOFT` selects the variant that loads
/// compliances (the column is stored empty when every tether is rigid).
struct TetherKernel<'a, const SOFT: bool> {
    lanes: &'a TetherLanes<'a>,
    step: &'a TimeStep,
}

impl<const SOFT: bool> BatchKernel for TetherKernel<'_, SOFT> {
    #[inline(always)]
    fn simd<G: BatchGroup>(&self, b: usize, lambda: &mut [Lanes<f32>], access: &mut impl Access) -> u32 {
        let lanes = self.lanes;
        let batches = b..b + G::BATCHES;
        let (ip, iq) = (&lanes.particles(0)[batches.clone()], &lanes.particles(1)[batches.clone()]);
        let [xp, yp, zp, wp] = G::gather(|i| access.load(i), ip);
        let [xq, yq, zq, wq] = G::gather(|i| access.load(i), iq);
        let alpha_tilde = if SOFT {
            G::load(&lanes.param(COMPLIANCE)[batches.clone()]) * G::splat(self.step.inv_h2)
        } else {
            G::splat(0.0)
        };
        let bound = G::load(&lanes.param(BOUND)[batches.clone()]);
        let t = tether_delta([xp, yp, zp], [xq, yq, zq], wp, wq, bound, alpha_tilde, G::load(lambda));
        t.lambda.store(lambda);
        let dp = correction([xp, yp, zp], [xq, yq, zq], wp, &t);
        let np = add3([xp, yp, zp], dp);
        let plan = lanes.plan();
        let writes = &plan.writes[batches.clone()];
        debug_assert!(writes.iter().all(|&w| slot_writes(w, 1) == 0), "a tether never writes its pin");
        G::scatter(|i, r, m| access.store(i, r, m), ip, writes, 0, [np[0], np[1], np[2], wp], dp);
        G::degenerate(t.valid, &plan.active[batches])
    }

    #[inline(always)]
    fn scalar(&self, b: usize, lambda: &mut Lanes<f32>, access: &mut impl Access) -> u32 {
        let lanes = self.lanes;
        let writes = lanes.plan().writes[b];
        debug_assert_eq!(slot_writes(writes, 1), 0, "a tether never writes its pin");
        let mut degenerate = 0;
        for k in 0..lanes.plan().active[b] as usize {
            let (ip, iq) = (lanes.particles(0)[b].0[k], lanes.particles(1)[b].0[k]);
            let (rp, rq) = (access.load(ip), access.load(iq));
            let alpha_tilde = if SOFT { lanes.param(COMPLIANCE)[b].0[k] * self.step.inv_h2 } else { 0.0 };
            let bound = lanes.param(BOUND)[b].0[k];
            let t = tether_delta(xyz(rp), xyz(rq), rp[3], rq[3], bound, alpha_tilde, lambda.0[k]);
            lambda.0[k] = t.lambda;
            if writes & (1 << k) != 0 {
                let dp = correction(xyz(rp), xyz(rq), rp[3], &t);
                let np = add3(xyz(rp), dp);
                access.store(ip, [np[0], np[1], np[2], rp[3]], [dp[0], dp[1], dp[2], 0.0]);
            }
            degenerate += u32::from(!t.valid);
        }
        degenerate
    }
}

/// The tethers as a batched kind: particle slots `[particle, pin]`, parameter columns
/// [`BOUND`] and [`COMPLIANCE`]; residual: how far beyond its bound a particle is, in m, and
/// relative to the bound.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tether;

impl BatchedKind<2, 2> for Tether {
    #[inline(always)]
    fn project(
        &self,
        inputs: KernelInputs<'_, 2, 2>,
        path: KernelPath,
        first: usize,
        lambda: &mut [Lanes<f32>],
        access: &mut impl Access,
    ) -> u64 {
        let KernelInputs { lanes, step, .. } = inputs;
        if lanes.param(COMPLIANCE).is_empty() {
            run_batches(&TetherKernel::<false> { lanes, step }, path, first, lambda, access)
        } else {
            run_batches(&TetherKernel::<true> { lanes, step }, path, first, lambda, access)
        }
    }

    fn residual_lanes(&self, lanes: &TetherLanes<'_>, positions: &[Record], b: usize) -> LaneResidual {
        let pp = gather8(|i| positions[i as usize], &lanes.particles(0)[b].0);
        let pq = gather8(|i| positions[i as usize], &lanes.particles(1)[b].0);
        let d = sub3(xyz(pp), xyz(pq));
        let bound = f32x8::new(lanes.param(BOUND)[b].0);
        let excess = (dot3(d, d).sqrt() - bound).max(f32x8::splat(0.0));
        LaneResidual { abs: excess, rel: excess / bound, counted: u8::MAX }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x_p + w_p·(Δλ/|d|)·d`: the position the kernels store.
    fn corrected(xp: V3<f32>, xq: V3<f32>, wp: f32, t: &TetherDelta<f32>) -> V3<f32> {
        add3(xp, correction(xp, xq, wp, t))
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
