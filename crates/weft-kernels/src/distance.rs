//! The XPBD distance constraint: one kernel body, a SIMD and a scalar instantiation, and the
//! per-colour drivers.
//!
//! For particles `a`, `b` with inverse masses `w_a`, `w_b` (1/kg) and rest length `L` (m):
//!
//! ```text
//! C   = |x_b − x_a| − L                      (m)
//! n   = (x_b − x_a) / |x_b − x_a|            ∇C_b = n, ∇C_a = −n
//! α̃   = α / h²                               (α in m/N, so α̃ in 1/kg, like w)
//! γ   = α·β / h                               (β in N·s/m; dimensionless)
//! Δλ  = (−C − α̃·λ − γ·n·(Δx_b − Δx_a)) / ((1 + γ)(w_a + w_b) + α̃)     (kg·m)
//! λ  += Δλ;   x_a −= w_a·Δλ·n;   x_b += w_b·Δλ·n
//! ```
//!
//! where `Δx = x − x_prev` is the displacement over the step so far. A lane whose particles are
//! closer than [`MIN_LENGTH`] or farther than [`MAX_LENGTH`] (or not finite) has no usable
//! direction: it gets `Δλ = 0` through a mask, moves nothing, and is counted as degenerate. So
//! does a lane whose correction `(w_a + w_b)·|Δλ|` would be longer than [`MAX_LENGTH`] or not
//! finite (extreme damping times an extreme relative velocity overflows the numerator).
//!
//! [`distance_delta`] is that maths for any [`Real`]; the kernel's `simd` method runs it on eight
//! lanes and its `scalar` method on one constraint at a time, over the same lane-packed data.
//! [`Distance`] is the kind [`crate::schedule`] runs.

use weft_core::distance::{COMPLIANCE, DAMPING, DistanceLanes, MAX_LENGTH, MIN_LENGTH, REST};
use weft_core::lanes::Lanes;
use weft_core::settings::TimeStep;
use wide::f32x8;

use crate::KernelPath;
use crate::lane::{Real, SIMD_WIDTH, V3, add3, dot3, sub3};
use crate::records::BatchGroup;
use crate::records::{Record, gather8};
use crate::schedule::{Access, BatchKernel, BatchedKind, KernelInputs, LaneResidual, run_batches};

/// Constraint damping inputs of one projection.
#[derive(Clone, Copy, Debug)]
pub struct Damping<R> {
    /// `γ = α·β/h` (dimensionless).
    pub gamma: R,
    /// `x_a − x_a_prev` in m.
    pub dxa: V3<R>,
    /// `x_b − x_b_prev` in m.
    pub dxb: V3<R>,
}

/// The outcome of one projection.
#[derive(Clone, Copy, Debug)]
pub struct DistanceDelta<R: Real> {
    /// `Δλ` in kg·m (0 in degenerate lanes).
    pub dlambda: R,
    /// `Δλ/|d|` in kg (0 in degenerate lanes): the corrections are `∓w·(Δλ/|d|)·d`, which is
    /// `∓w·Δλ·n` without forming `n`.
    pub dlambda_per_length: R,
    /// The constraint value `C` in m before the projection.
    pub c: R,
    /// Lanes that were projected (not degenerate).
    pub valid: R::Mask,
}

/// The XPBD distance projection (module docs), for one constraint or one per lane.
///
/// The corrections move along `d` by `w·Δλ/|d|`, so `n = d/|d|` is never formed, and `1/|d|` is
/// taken as `|d|·(1/|d|²)` so that neither reciprocal waits for the square root.
///
/// ```
/// use weft_kernels::distance::distance_delta;
/// // The worked example (docs/physics.md): pinned a at 0, 1 kg b at 2 m, L = 1 m, α̃ = 1.
/// let d = distance_delta::<f32>([0.0; 3], [2.0, 0.0, 0.0], 0.0, 1.0, 1.0, 1.0, 0.0, None);
/// assert_eq!(d.dlambda, -0.5);
/// assert_eq!(2.0 + 1.0 * d.dlambda_per_length * 2.0, 1.5);
/// ```
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn distance_delta<R: Real>(
    xa: V3<R>,
    xb: V3<R>,
    wa: R,
    wb: R,
    rest: R,
    alpha_tilde: R,
    lambda: R,
    damping: Option<Damping<R>>,
) -> DistanceDelta<R> {
    let one = R::splat(1.0);
    let d = sub3(xb, xa);
    let len2 = dot3(d, d);
    // √ and the two reciprocals do not depend on each other: the core runs them side by side.
    let len = len2.sqrt();
    let inv_len2 = one / len2;
    let w = wa + wb;
    let valid = R::and(len.gt(R::splat(MIN_LENGTH)), len.le(R::splat(MAX_LENGTH)));
    let c = len - rest;
    let (num, den) = match damping {
        None => (-c - alpha_tilde * lambda, w + alpha_tilde),
        Some(g) => (
            -c - alpha_tilde * lambda - g.gamma * (dot3(d, sub3(g.dxb, g.dxa)) * (len * inv_len2)),
            (one + g.gamma) * w + alpha_tilde,
        ),
    };
    let inv_den = one / den;
    let valid = R::and(valid, den.gt(R::splat(0.0)));
    let dlambda = num * inv_den;
    // A correction longer than the longest projectable distance, or not finite (NaN fails `≤`).
    let valid = R::and(valid, (w * dlambda).abs().le(R::splat(MAX_LENGTH)));
    let zero = R::splat(0.0);
    DistanceDelta {
        dlambda: R::select(valid, dlambda, zero),
        dlambda_per_length: R::select(valid, dlambda * (len * inv_len2), zero),
        c,
        valid,
    }
}

/// The corrections `−w_a·Δλ·n` and `+w_b·Δλ·n` (m), computed as `∓d·(w·Δλ/|d|)`; the moved
/// positions are `x + correction` (the same bits as `x ∓ d·(w·Δλ/|d|)`).
#[inline(always)]
fn corrections<R: Real>(xa: V3<R>, xb: V3<R>, wa: R, wb: R, d: &DistanceDelta<R>) -> (V3<R>, V3<R>) {
    let (sa, sb) = (wa * d.dlambda_per_length, wb * d.dlambda_per_length);
    let dir = sub3(xb, xa);
    ([-(dir[0] * sa), -(dir[1] * sa), -(dir[2] * sa)], [dir[0] * sb, dir[1] * sb, dir[2] * sb])
}

fn xyz<R: Copy>(r: [R; 4]) -> V3<R> {
    [r[0], r[1], r[2]]
}

/// The distance kernel with what it needs besides the records and `λ`: the lanes, the previous
/// positions (for damping) and the time step. `SOFT` selects the variant that loads compliances
/// (the column is stored empty when every constraint is rigid); `DAMPED` the variant with
/// constraint damping (its extra gather of previous positions is skipped when no constraint is
/// damped). Damping scales with compliance (`γ = α·β/h`), so it exists only when `SOFT`.
struct DistanceKernel<'a, const SOFT: bool, const DAMPED: bool> {
    lanes: &'a DistanceLanes<'a>,
    prev: &'a [Record],
    step: &'a TimeStep,
}

impl<const SOFT: bool, const DAMPED: bool> BatchKernel for DistanceKernel<'_, SOFT, DAMPED> {
    #[inline(always)]
    fn simd<G: BatchGroup>(&self, b: usize, lambda: &mut [Lanes<f32>], access: &mut impl Access) -> u32 {
        let (lanes, step) = (self.lanes, self.step);
        let batches = b..b + G::BATCHES;
        let (ia, ib) = (&lanes.particles(0)[batches.clone()], &lanes.particles(1)[batches.clone()]);
        let [xa, ya, za, wa] = G::gather(|i| access.load(i), ia);
        let [xb, yb, zb, wb] = G::gather(|i| access.load(i), ib);
        let compliance =
            if SOFT { G::load(&lanes.param(COMPLIANCE)[batches.clone()]) } else { G::splat(0.0) };
        let alpha_tilde = compliance * G::splat(step.inv_h2);
        let damping = DAMPED.then(|| {
            let (pa, pb) =
                (G::gather(|i| self.prev[i as usize], ia), G::gather(|i| self.prev[i as usize], ib));
            let beta = G::load(&lanes.param(DAMPING)[batches.clone()]);
            Damping {
                gamma: compliance * beta * G::splat(step.inv_h),
                dxa: sub3([xa, ya, za], xyz(pa)),
                dxb: sub3([xb, yb, zb], xyz(pb)),
            }
        });
        let lam = G::load(lambda);
        let rest = G::load(&lanes.param(REST)[batches.clone()]);
        let d = distance_delta([xa, ya, za], [xb, yb, zb], wa, wb, rest, alpha_tilde, lam, damping);
        (lam + d.dlambda).store(lambda);
        let (da, db) = corrections([xa, ya, za], [xb, yb, zb], wa, wb, &d);
        let (na, nb) = (add3([xa, ya, za], da), add3([xb, yb, zb], db));
        let plan = lanes.plan();
        let writes = &plan.writes[batches.clone()];
        G::scatter(|i, r, m| access.store(i, r, m), ia, writes, 0, [na[0], na[1], na[2], wa], da);
        G::scatter(|i, r, m| access.store(i, r, m), ib, writes, 1, [nb[0], nb[1], nb[2], wb], db);
        G::degenerate(d.valid, &plan.active[batches])
    }

    #[inline(always)]
    fn scalar(&self, b: usize, lambda: &mut Lanes<f32>, access: &mut impl Access) -> u32 {
        let (lanes, step) = (self.lanes, self.step);
        let writes = lanes.plan().writes[b];
        let mut degenerate = 0;
        for k in 0..lanes.plan().active[b] as usize {
            let (ia, ib) = (lanes.particles(0)[b].0[k], lanes.particles(1)[b].0[k]);
            let (ra, rb) = (access.load(ia), access.load(ib));
            let (xa, xb, wa, wb) = (xyz(ra), xyz(rb), ra[3], rb[3]);
            let compliance = if SOFT { lanes.param(COMPLIANCE)[b].0[k] } else { 0.0 };
            let alpha_tilde = compliance * step.inv_h2;
            let damping = DAMPED.then(|| Damping {
                gamma: compliance * lanes.param(DAMPING)[b].0[k] * step.inv_h,
                dxa: sub3(xa, xyz(self.prev[ia as usize])),
                dxb: sub3(xb, xyz(self.prev[ib as usize])),
            });
            let rest = lanes.param(REST)[b].0[k];
            let d = distance_delta(xa, xb, wa, wb, rest, alpha_tilde, lambda.0[k], damping);
            lambda.0[k] += d.dlambda;
            let (da, db) = corrections(xa, xb, wa, wb, &d);
            let (na, nb) = (add3(xa, da), add3(xb, db));
            if writes & (1 << k) != 0 {
                access.store(ia, [na[0], na[1], na[2], wa], [da[0], da[1], da[2], 0.0]);
            }
            if writes & (1 << (SIMD_WIDTH + k)) != 0 {
                access.store(ib, [nb[0], nb[1], nb[2], wb], [db[0], db[1], db[2], 0.0]);
            }
            degenerate += u32::from(!d.valid);
        }
        degenerate
    }
}

/// The distance constraints (stretch and shear) as a batched kind: particle slots `[a, b]`,
/// parameter columns [`REST`], [`COMPLIANCE`], [`DAMPING`]; residual `|C|` in m, relative to
/// `L` (the strain).
#[derive(Debug, Clone, Copy, Default)]
pub struct Distance;

impl BatchedKind<2, 3> for Distance {
    #[inline(always)]
    fn project(
        &self,
        inputs: KernelInputs<'_, 2, 3>,
        path: KernelPath,
        first: usize,
        lambda: &mut [Lanes<f32>],
        access: &mut impl Access,
    ) -> u64 {
        let KernelInputs { lanes, prev, step } = inputs;
        match (!lanes.param(COMPLIANCE).is_empty(), !lanes.param(DAMPING).is_empty()) {
            (false, _) => run_batches(
                &DistanceKernel::<false, false> { lanes, prev, step },
                path,
                first,
                lambda,
                access,
            ),
            (true, false) => {
                run_batches(&DistanceKernel::<true, false> { lanes, prev, step }, path, first, lambda, access)
            }
            (true, true) => {
                run_batches(&DistanceKernel::<true, true> { lanes, prev, step }, path, first, lambda, access)
            }
        }
    }

    fn residual_lanes(&self, lanes: &DistanceLanes<'_>, positions: &[Record], b: usize) -> LaneResidual {
        let pa = gather8(|i| positions[i as usize], &lanes.particles(0)[b].0);
        let pb = gather8(|i| positions[i as usize], &lanes.particles(1)[b].0);
        let d = sub3(xyz(pb), xyz(pa));
        let rest = f32x8::new(lanes.param(REST)[b].0);
        let c = (dot3(d, d).sqrt() - rest).abs();
        LaneResidual { abs: c, rel: c / rest, counted: u8::MAX }
    }
}
