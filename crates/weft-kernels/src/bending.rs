//! The XPBD dihedral-angle bending constraint (see [`weft_core::bending`] for the maths and the
//! units): one kernel body for any [`Real`], a SIMD and a scalar instantiation, run colour by
//! colour by [`crate::schedule`] as the batched kind [`Bending`].
//!
//! For a hinge `[a, b, c, d]` (edge `a–b`, wings `c`, `d`), with `e = x_b − x_a`,
//! `n₁ = e × (x_c − x_a)`, `n₂ = (x_d − x_a) × e`:
//!
//! ```text
//! θ  = atan2(−(n₁·(x_d − x_a))·|e|, n₁·n₂)           C = θ − θ₀ wrapped into (−π, π]   (rad)
//! ∇_c = −|e|·n₁/|n₁|²    ∇_d = −|e|·n₂/|n₂|²
//! ∇_b = p_c·n₁/|n₁|² + p_d·n₂/|n₂|²                   p = (x − x_a)·e/|e|
//! ∇_a = (|e| − p_c)·n₁/|n₁|² + (|e| − p_d)·n₂/|n₂|²
//! Δλ  = (−C − α̃·λ − γ·Σ∇ᵢ·(xᵢ − xᵢ_prev)) / ((1 + γ)·Σwᵢ|∇ᵢ|² + α̃)      α̃ = α/h², γ = α·β/h
//! λ  += Δλ;   xᵢ += wᵢ·∇ᵢ·Δλ
//! ```
//!
//! `|∇_c|² = |e|²/|n₁|²` needs no dot product. [`atan2`] is a polynomial built from `+ − × ÷`,
//! `abs` and lane selects, the same operations for `f32` and `f32x8`, so the two instantiations
//! stay bit-identical (the standard library's `atan2` would differ from any vector one).
//!
//! **Degenerate lanes.** A lane is projected only when its edge is longer than
//! [`MIN_EDGE`] and at most [`MAX_SPAN`], each wing is higher than [`MIN_HEIGHT`] and at most
//! [`MAX_SPAN`] above the edge line (all compared squared: `|n|² > MIN_HEIGHT²·|e|²`), the
//! denominator is positive and finite and `Δλ` is finite. Any NaN fails these comparisons too.
//! Other lanes get `Δλ = 0` through a mask, move nothing, and are counted.

use weft_core::bending::{BendingLanes, COMPLIANCE, DAMPING, MAX_SPAN, MIN_EDGE, MIN_HEIGHT, REST_ANGLE};
use weft_core::lanes::Lanes;
use weft_core::settings::TimeStep;
use wide::f32x8;

use crate::KernelPath;
use crate::lane::{Real, SIMD_WIDTH, V3, add3, dot3, scale3, sub3};
use crate::records::{BatchGroup, Record, gather8};
use crate::schedule::{Access, BatchKernel, BatchedKind, KernelInputs, LaneResidual, run_batches};

/// `tan(π/8)`: above it, [`atan2`] reduces its argument by `π/4`.
const TAN_PI_8: f32 = 0.414_213_57;

/// `atan2(y, x)` in rad, in `[−π, π]`, for any [`Real`], from correctly rounded operations only.
///
/// `t = min(|x|, |y|)/max(|x|, |y|)` is reduced to `|z| ≤ tan(π/8)` (`z = (t − 1)/(t + 1)` and
/// `+π/4` above `tan(π/8)`, in one division), `atan z` is the minimax polynomial of Cephes'
/// `atanf` (relative error below 2·10⁻⁷), and the octant is restored by selects. The result is
/// within a few `f32` ulp of the true angle. `atan2(0, 0)` and any NaN input give NaN; an
/// infinite input gives a finite angle or NaN.
///
/// ```
/// use weft_kernels::bending::atan2;
/// for (y, x) in [(1.0f32, 2.0f32), (-3.0, 0.5), (0.2, -1.0), (-1.0, -1.0), (0.0, -2.0), (5.0, 0.0)] {
///     assert!((atan2(y, x) - y.atan2(x)).abs() <= 4e-7, "{y} {x}");
/// }
/// assert!(atan2(0.0f32, 0.0).is_nan());
/// ```
#[inline(always)]
pub fn atan2<R: Real>(y: R, x: R) -> R {
    let zero = R::splat(0.0);
    let (ax, ay) = (x.abs(), y.abs());
    let steep = ay.gt(ax);
    let (num, den) = (R::select(steep, ax, ay), R::select(steep, ay, ax));
    let reduce = num.gt(den * R::splat(TAN_PI_8));
    let z = R::select(reduce, num - den, num) / R::select(reduce, num + den, den);
    let z2 = z * z;
    let p = ((R::splat(8.053_744_5e-2) * z2 - R::splat(1.387_768_6e-1)) * z2 + R::splat(1.997_771_1e-1)) * z2
        - R::splat(3.333_295e-1);
    let r = p * z2 * z + z + R::select(reduce, R::splat(std::f32::consts::FRAC_PI_4), zero);
    let r = R::select(steep, R::splat(std::f32::consts::FRAC_PI_2) - r, r);
    let r = R::select(zero.gt(x), R::splat(std::f32::consts::PI) - r, r);
    R::select(zero.gt(y), -r, r)
}

/// `a × b`.
#[inline(always)]
fn cross3<R: Real>(a: V3<R>, b: V3<R>) -> V3<R> {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// The angle, gradients and validity of a hinge `[a, b, c, d]` (positions in m).
#[derive(Clone, Copy, Debug)]
pub struct Hinge<R: Real> {
    /// The signed dihedral angle `θ` in rad.
    pub theta: R,
    /// `∇θ` at `a, b, c, d`, in rad/m.
    pub grad: [V3<R>; 4],
    /// `|∇θ|²` at `a, b, c, d`, in rad²/m².
    pub grad2: [R; 4],
    /// Lanes whose edge and wings are within the module docs' bounds (the gradient is usable).
    pub valid: R::Mask,
}

/// The hinge's angle and gradients (module docs), for one constraint or one per lane.
#[inline(always)]
pub fn hinge<R: Real>(x: [V3<R>; 4]) -> Hinge<R> {
    let one = R::splat(1.0);
    let [xa, xb, xc, xd] = x;
    let (e, u, v) = (sub3(xb, xa), sub3(xc, xa), sub3(xd, xa));
    let (n1, n2) = (cross3(e, u), cross3(v, e));
    let (e2, n1sq, n2sq) = (dot3(e, e), dot3(n1, n1), dot3(n2, n2));
    // √ and the three reciprocals are independent: the core overlaps them.
    let len = e2.sqrt();
    let inv_e2 = one / e2;
    let (s1, s2) = (one / n1sq, one / n2sq);
    let theta = atan2(-(dot3(n1, v) * len), dot3(n1, n2));
    let (min_h2, max2) = (R::splat(MIN_HEIGHT * MIN_HEIGHT), R::splat(MAX_SPAN * MAX_SPAN));
    let wing_ok = |nsq: R| R::and(nsq.gt(min_h2 * e2), nsq.le(max2 * e2));
    let edge_ok = R::and(e2.gt(R::splat(MIN_EDGE * MIN_EDGE)), e2.le(max2));
    let valid = R::and(edge_ok, R::and(wing_ok(n1sq), wing_ok(n2sq)));
    let (q1, q2) = (scale3(n1, s1), scale3(n2, s2));
    // With t = (x − x_a)·e/|e|² (no 1/|e| needed): p = t·|e| and |e| − p = (1 − t)·|e|.
    let (tc, td) = (dot3(u, e) * inv_e2, dot3(v, e) * inv_e2);
    let gb = add3(scale3(q1, tc * len), scale3(q2, td * len));
    let ga = add3(scale3(q1, (one - tc) * len), scale3(q2, (one - td) * len));
    let (gc, gd) = (scale3(q1, -len), scale3(q2, -len));
    Hinge { theta, grad: [ga, gb, gc, gd], grad2: [dot3(ga, ga), dot3(gb, gb), e2 * s1, e2 * s2], valid }
}

/// `θ − θ₀` wrapped into `(−π, π]` (rad).
#[inline(always)]
pub fn wrap_angle<R: Real>(theta: R, rest: R) -> R {
    let (pi, tau) = (R::splat(std::f32::consts::PI), R::splat(std::f32::consts::TAU));
    let d = theta - rest;
    let d = R::select(d.gt(pi), d - tau, d);
    R::select(d.le(-pi), d + tau, d)
}

/// Constraint damping inputs of one projection.
#[derive(Clone, Copy, Debug)]
pub struct Damping<R> {
    /// `γ = α·β/h` (dimensionless).
    pub gamma: R,
    /// `x − x_prev` of `a, b, c, d`, in m.
    pub dx: [V3<R>; 4],
}

/// The outcome of one projection.
#[derive(Clone, Copy, Debug)]
pub struct BendingDelta<R: Real> {
    /// `Δλ` in kg·m²/rad (0 in degenerate lanes).
    pub dlambda: R,
    /// `C` in rad before the projection.
    pub c: R,
    /// The hinge's gradients (rad/m); 0 in degenerate lanes.
    pub grad: [V3<R>; 4],
    /// Lanes that were projected (not degenerate).
    pub valid: R::Mask,
}

/// The XPBD bending projection (module docs), for one constraint or one per lane: positions
/// `x` (m) and inverse masses `w` (1/kg) of `a, b, c, d`, the rest angle (rad), `α̃`
/// (rad²/(kg·m²)) and `λ` (kg·m²/rad).
///
/// ```
/// use weft_kernels::bending::bending_delta;
/// // A right-angled hinge whose rest shape is flat; rigid, only the wing d free (1 kg).
/// let x = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.5, 0.0, -1.0f32]];
/// let d = bending_delta(x, [0.0, 0.0, 0.0, 1.0], 0.0, 0.0, 0.0, None);
/// assert!((d.c - std::f32::consts::FRAC_PI_2).abs() < 1e-6);
/// // Δλ = −C/(w_d·|∇_d|²) with |∇_d| = 1/height = 1 rad/m.
/// assert!((d.dlambda + std::f32::consts::FRAC_PI_2).abs() < 1e-6);
/// ```
#[inline(always)]
pub fn bending_delta<R: Real>(
    x: [V3<R>; 4],
    w: [R; 4],
    rest: R,
    alpha_tilde: R,
    lambda: R,
    damping: Option<Damping<R>>,
) -> BendingDelta<R> {
    let h = hinge(x);
    let c = wrap_angle(h.theta, rest);
    let mass = (w[0] * h.grad2[0] + w[1] * h.grad2[1]) + (w[2] * h.grad2[2] + w[3] * h.grad2[3]);
    let (num, den) = match damping {
        None => (-c - alpha_tilde * lambda, mass + alpha_tilde),
        Some(g) => {
            let g = &g;
            let rate = (dot3(h.grad[0], g.dx[0]) + dot3(h.grad[1], g.dx[1]))
                + (dot3(h.grad[2], g.dx[2]) + dot3(h.grad[3], g.dx[3]));
            (-c - alpha_tilde * lambda - g.gamma * rate, (R::splat(1.0) + g.gamma) * mass + alpha_tilde)
        }
    };
    let dlambda = num / den;
    let finite = R::splat(f32::MAX);
    let solvable = R::and(R::and(den.gt(R::splat(0.0)), den.le(finite)), dlambda.abs().le(finite));
    let valid = R::and(h.valid, solvable);
    let zero = R::splat(0.0);
    // A degenerate lane's gradient may be infinite or NaN: zero it, so that `∇·Δλ` is 0 too.
    let grad = h.grad.map(|g| g.map(|g| R::select(valid, g, zero)));
    BendingDelta { dlambda: R::select(valid, dlambda, zero), c, grad, valid }
}

/// The corrections `wᵢ·∇ᵢ·Δλ` (m) for `a, b, c, d`; the moved positions are `xᵢ + correction`.
#[inline(always)]
fn corrections<R: Real>(w: [R; 4], d: &BendingDelta<R>) -> [V3<R>; 4] {
    std::array::from_fn(|i| scale3(d.grad[i], w[i] * d.dlambda))
}

fn xyz<R: Copy>(r: [R; 4]) -> V3<R> {
    [r[0], r[1], r[2]]
}

/// The bending kernel with what it needs besides the records and `λ`: the lanes, the previous
/// positions (for damping) and the time step. `DAMPED` selects the variant with constraint
/// damping (its extra gathers of previous positions are skipped when no constraint is damped).
struct BendingKernel<'a, const DAMPED: bool> {
    lanes: &'a BendingLanes<'a>,
    prev: &'a [Record],
    step: &'a TimeStep,
}

impl<const DAMPED: bool> BendingKernel<'_, DAMPED> {
    /// Parameter `column` of batches `b..b + G::BATCHES` (0 where the column is stored empty).
    #[inline(always)]
    fn param<G: BatchGroup>(&self, column: usize, b: usize) -> G {
        let col = self.lanes.param(column);
        if col.is_empty() { G::splat(0.0) } else { G::load(&col[b..b + G::BATCHES]) }
    }

    /// Parameter `column` of lane `k` of batch `b` (0 where the column is stored empty).
    #[inline(always)]
    fn param1(&self, column: usize, b: usize, k: usize) -> f32 {
        self.lanes.param(column).get(b).map_or(0.0, |l| l.0[k])
    }
}

impl<const DAMPED: bool> BatchKernel for BendingKernel<'_, DAMPED> {
    #[inline(always)]
    fn simd<G: BatchGroup>(&self, b: usize, lambda: &mut [Lanes<f32>], access: &mut impl Access) -> u32 {
        let (lanes, step) = (self.lanes, self.step);
        let batches = b..b + G::BATCHES;
        let ids: [&[Lanes<u32>]; 4] = std::array::from_fn(|s| &lanes.particles(s)[batches.clone()]);
        let records = ids.map(|i| G::gather(|p| access.load(p), i));
        let x = records.map(xyz);
        let w = records.map(|r| r[3]);
        let compliance = self.param::<G>(COMPLIANCE, b);
        let alpha_tilde = compliance * G::splat(step.inv_h2);
        let damping = DAMPED.then(|| Damping {
            gamma: compliance * self.param::<G>(DAMPING, b) * G::splat(step.inv_h),
            dx: std::array::from_fn(|s| sub3(x[s], xyz(G::gather(|p| self.prev[p as usize], ids[s])))),
        });
        let lam = G::load(lambda);
        let d = bending_delta(x, w, self.param::<G>(REST_ANGLE, b), alpha_tilde, lam, damping);
        (lam + d.dlambda).store(lambda);
        let deltas = corrections(w, &d);
        let plan = lanes.plan();
        let writes = &plan.writes[batches.clone()];
        for (s, (dx, w)) in deltas.into_iter().zip(w).enumerate() {
            let p = add3(x[s], dx);
            G::scatter(|i, r, m| access.store(i, r, m), ids[s], writes, s, [p[0], p[1], p[2], w], dx);
        }
        G::degenerate(d.valid, &plan.active[batches])
    }

    #[inline(always)]
    fn scalar(&self, b: usize, lambda: &mut Lanes<f32>, access: &mut impl Access) -> u32 {
        let (lanes, step) = (self.lanes, self.step);
        let writes = lanes.plan().writes[b];
        let mut degenerate = 0;
        for k in 0..lanes.plan().active[b] as usize {
            let ids: [u32; 4] = std::array::from_fn(|s| lanes.particles(s)[b].0[k]);
            let records = ids.map(|i| access.load(i));
            let x = records.map(xyz);
            let w = records.map(|r| r[3]);
            let compliance = self.param1(COMPLIANCE, b, k);
            let alpha_tilde = compliance * step.inv_h2;
            let damping = DAMPED.then(|| Damping {
                gamma: compliance * self.param1(DAMPING, b, k) * step.inv_h,
                dx: std::array::from_fn(|s| sub3(x[s], xyz(self.prev[ids[s] as usize]))),
            });
            let d = bending_delta(x, w, self.param1(REST_ANGLE, b, k), alpha_tilde, lambda.0[k], damping);
            lambda.0[k] += d.dlambda;
            let deltas = corrections(w, &d);
            for s in 0..4 {
                if writes & (1 << (s * SIMD_WIDTH + k)) != 0 {
                    let (p, dx) = (add3(x[s], deltas[s]), deltas[s]);
                    access.store(ids[s], [p[0], p[1], p[2], w[s]], [dx[0], dx[1], dx[2], 0.0]);
                }
            }
            degenerate += u32::from(!d.valid);
        }
        degenerate
    }
}

/// The bending constraints as a batched kind: particle slots `[a, b, c, d]` (hinge edge `a–b`,
/// wings `c` and `d`), parameter columns [`REST_ANGLE`], [`COMPLIANCE`], [`DAMPING`]; residual
/// `|C|` in rad (no relative value: an angle has no scale of its own). Degenerate hinges (no
/// usable angle, see the module docs) are left out of the residual.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bending;

impl BatchedKind<4, 3> for Bending {
    #[inline(always)]
    fn project(
        &self,
        inputs: KernelInputs<'_, 4, 3>,
        path: KernelPath,
        first: usize,
        lambda: &mut [Lanes<f32>],
        access: &mut impl Access,
    ) -> u64 {
        let KernelInputs { lanes, prev, step } = inputs;
        if lanes.param(DAMPING).is_empty() {
            run_batches(&BendingKernel::<false> { lanes, prev, step }, path, first, lambda, access)
        } else {
            run_batches(&BendingKernel::<true> { lanes, prev, step }, path, first, lambda, access)
        }
    }

    fn residual_lanes(&self, lanes: &BendingLanes<'_>, positions: &[Record], b: usize) -> LaneResidual {
        let x: [V3<f32x8>; 4] =
            std::array::from_fn(|s| xyz(gather8(|i| positions[i as usize], &lanes.particles(s)[b].0)));
        let h = hinge(x);
        let rest = lanes.param(REST_ANGLE).get(b).map_or(f32x8::splat(0.0), |l| f32x8::new(l.0));
        let c = wrap_angle(h.theta, rest).abs();
        LaneResidual { abs: c, rel: f32x8::splat(0.0), counted: h.valid.to_bitmask() as u8 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `xᵢ + wᵢ·∇ᵢ·Δλ`: the positions the kernels store.
    fn corrected(x: [V3<f32>; 4], w: [f32; 4], d: &BendingDelta<f32>) -> [V3<f32>; 4] {
        let deltas = corrections(w, d);
        std::array::from_fn(|i| add3(x[i], deltas[i]))
    }

    /// A deterministic stream of numbers in `[−1, 1)` (xorshift).
    struct Noise(u64);

    impl Noise {
        fn next(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        }

        fn point(&mut self, scale: f32) -> [f32; 3] {
            [self.next() * scale, self.next() * scale, self.next() * scale]
        }
    }

    /// A random hinge: edge along x with noise, wings on random sides at random heights.
    fn random_hinge(n: &mut Noise) -> [V3<f32>; 4] {
        let a = n.point(0.3);
        let b = add3([1.0, 0.0, 0.0], n.point(0.3));
        let c = add3([0.5, 0.8, 0.0], n.point(0.6));
        let d = add3([0.5, -0.8, 0.0], n.point(0.6));
        [a, b, c, d]
    }

    #[test]
    fn atan2_agrees_with_the_standard_library_everywhere() {
        let mut worst = 0.0f64;
        let mut n = Noise(7);
        for i in 0..200_000 {
            let scale = 10f32.powi(i % 9 - 4);
            let (y, x) = (n.next() * scale, n.next() * scale);
            let ours = atan2(y, x) as f64;
            let exact = (y as f64).atan2(x as f64);
            worst = worst.max((ours - exact).abs());
        }
        // Few ulp of π (2.4e-7): the polynomial (≤ 2e-7 relative) plus the octant's rounding.
        assert!(worst <= 4.8e-7, "worst error {worst:e} rad");
        for (y, x) in [(0.0f32, 1.0f32), (0.0, -1.0), (1.0, 0.0), (-1.0, 0.0), (1e-30, -1.0), (-1e-30, -1.0)]
        {
            assert!((atan2(y, x) as f64 - (y as f64).atan2(x as f64)).abs() <= 2.4e-7, "{y} {x}");
        }
        assert!(atan2(f32::NAN, 1.0).is_nan() && atan2(0.0f32, 0.0).is_nan());
    }

    #[test]
    fn atan2_lanes_match_the_scalar_bit_for_bit() {
        let mut n = Noise(11);
        for _ in 0..2000 {
            let (y, x): ([f32; 8], [f32; 8]) =
                (std::array::from_fn(|_| n.next() * 3.0), std::array::from_fn(|_| n.next() * 3.0));
            let lanes = atan2(f32x8::new(y), f32x8::new(x)).to_array();
            for k in 0..8 {
                assert_eq!(lanes[k].to_bits(), atan2(y[k], x[k]).to_bits());
            }
        }
    }

    /// The closed-form gradient against central differences of the angle (in f64 through the
    /// core's `dihedral_angle`), on random hinges; and the gradients sum to zero.
    #[test]
    fn gradient_matches_finite_differences() {
        let mut n = Noise(3);
        for _ in 0..500 {
            let x = random_hinge(&mut n);
            let h = hinge(x);
            assert!(h.valid);
            let angle = |x: [V3<f32>; 4]| weft_core::bending::dihedral_angle(x[0], x[1], x[2], x[3]);
            assert!((h.theta as f64 - angle(x)).abs() <= 1e-6, "θ {} vs {}", h.theta, angle(x));
            let step = 1e-3f32;
            for i in 0..4 {
                for k in 0..3 {
                    let (mut up, mut down) = (x, x);
                    up[i][k] += step;
                    down[i][k] -= step;
                    let h2 = (up[i][k] as f64 - down[i][k] as f64) / 2.0;
                    let fd = (angle(up) - angle(down)) / (2.0 * h2);
                    let g = h.grad[i][k] as f64;
                    // Central differences are exact to O(step²·θ''') ~ 1e-6 here.
                    assert!((fd - g).abs() <= 1e-3 * (1.0 + g.abs()), "∂θ/∂x[{i}][{k}]: {g} vs {fd}");
                }
            }
            for k in 0..3 {
                let sum: f32 = (0..4).map(|i| h.grad[i][k]).sum();
                let scale: f32 = (0..4).map(|i| h.grad[i][k].abs()).sum();
                assert!(sum.abs() <= 1e-6 * scale, "Σ∇ = {sum}");
            }
            for i in 0..4 {
                assert!((h.grad2[i] - dot3(h.grad[i], h.grad[i])).abs() <= 1e-5 * h.grad2[i]);
            }
        }
    }

    /// In the rest shape the kernel's `C` is 0 up to `f32` rounding: the rest angle is the f64
    /// value of the same formula.
    #[test]
    fn rest_shape_has_zero_c_within_rounding() {
        let mut n = Noise(5);
        let mut worst = 0.0f32;
        for _ in 0..10_000 {
            let x = random_hinge(&mut n);
            let rest = weft_core::bending::dihedral_angle(x[0], x[1], x[2], x[3]) as f32;
            let d = bending_delta(x, [1.0; 4], rest, 0.0, 0.0, None);
            worst = worst.max(d.c.abs());
        }
        // Measured: 4.8e-7 rad (two ulp of π) over these 10 000 hinges.
        assert!(worst <= 1e-6, "|C| at rest up to {worst:e} rad");
    }

    #[test]
    fn wrap_keeps_c_in_the_half_open_interval() {
        let pi = std::f32::consts::PI;
        let c = wrap_angle(pi - 0.1, -pi + 0.1);
        assert!((c + 0.2).abs() < 1e-6, "{c}");
        let c = wrap_angle(-pi + 0.1, pi - 0.1);
        assert!((c - 0.2).abs() < 1e-6, "{c}");
        assert_eq!(wrap_angle(0.5f32, 0.25), 0.25);
        assert!(wrap_angle(pi, 0.0) <= pi && wrap_angle(-pi, 0.0) > -pi);
    }

    #[test]
    fn degenerate_hinges_are_masked() {
        let [a, b, c, d] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.5, -1.0, 0.5f32]];
        let ok = bending_delta([a, b, c, d], [1.0; 4], 0.0, 0.0, 0.0, None);
        assert!(ok.valid && ok.dlambda != 0.0);
        for x in [
            [a, b, [0.5, 0.0, 0.0], d],               // wing c on the edge line
            [a, b, c, [3.0, 0.0, 0.0]],               // wing d on the extended edge line
            [a, [1e-7, 0.0, 0.0], c, d],              // coincident edge ends
            [a, b, [0.5, 5e-7, 0.0], d],              // a wing lower than MIN_HEIGHT
            [a, b, c, [0.5, -1.0, f32::NAN]],         // not finite
            [a, b, c, [0.5, -2e9, 0.0]],              // a wing beyond MAX_SPAN
            [a, [f32::INFINITY, 0.0, 0.0], c, d],     // not finite
            [[0.0; 3], [0.0; 3], [0.0; 3], [0.0; 3]], // nothing at all
        ] {
            let d = bending_delta(x, [1.0; 4], 0.0, 0.0, 0.0, None);
            assert!(!d.valid && d.dlambda == 0.0, "{x:?}");
            let moved = corrected(x, [1.0; 4], &d);
            for (p, q) in moved.iter().zip(&x) {
                for k in 0..3 {
                    assert!(p[k] == q[k] || (p[k].is_nan() && q[k].is_nan()), "{x:?} moved");
                }
            }
        }
        // Pinned everywhere: the denominator is 0, nothing to solve.
        assert!(!bending_delta([a, b, c, d], [0.0; 4], 0.0, 0.0, 0.0, None).valid);
        // Infinite inverse mass: the denominator is not finite.
        assert!(!bending_delta([a, b, c, d], [f32::MAX; 4], 0.0, 0.0, 0.0, None).valid);
    }

    /// Repeated projections of a rigid hinge with all four particles free converge on `C = 0`,
    /// and each one keeps the centre of mass (the gradients sum to zero).
    #[test]
    fn projections_reach_the_rest_angle_and_keep_the_centre_of_mass() {
        let mut n = Noise(9);
        let w = [1.0, 2.0, 0.5, 1.5];
        let centre = |p: &[V3<f32>; 4], k: usize| (0..4).map(|i| p[i][k] / w[i]).sum::<f32>();
        for _ in 0..200 {
            let mut x = random_hinge(&mut n);
            let rest = 0.3 * n.next();
            let first = bending_delta(x, w, rest, 0.0, 0.0, None).c;
            for _ in 0..30 {
                let d = bending_delta(x, w, rest, 0.0, 0.0, None);
                let moved = corrected(x, w, &d);
                for k in 0..3 {
                    assert!((centre(&moved, k) - centre(&x, k)).abs() <= 1e-5, "centre of mass moved");
                }
                x = moved;
            }
            let last = bending_delta(x, w, rest, 0.0, 0.0, None).c;
            assert!(last.abs() <= 1e-5, "C {first} → {last}");
        }
    }
}
