//! Distance constraints (stretch and shear): their lane-packed form and their projection.
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
//! where `Δx = x − x_prev` is the displacement over the step so far; `λ/h²` is the force in N.
//! A lane whose particles are closer than [`MIN_LENGTH`] or farther than [`MAX_LENGTH`] (or not
//! finite) has no usable direction: it gets `Δλ = 0` through a mask, moves nothing, and is
//! counted as degenerate. So does a lane whose correction `(w_a + w_b)·|Δλ|` would be longer than
//! [`MAX_LENGTH`] or not finite (extreme damping times an extreme relative velocity overflows the
//! numerator).
//!
//! The constraints of a cloth come from its edge sets (`ClothDesc::edge_sets`: stretch edges,
//! shear edges, with their materials; the scene's `edges`, `stretch_*`, `shear_*`, `warp_*`,
//! `weft_*` keys or a grid's or mesh's edges), checked by the builder, so the kind has no scene
//! keys of its own.

use wide::f32x8;

use crate::batches::{BatchLanes, Batches, Packed};
use crate::cloth::ClothContext;
use crate::error::BuildError;
use crate::kinds::{
    BatchedKind, Column, Figure, Input, KindInfo, LaneResidual, Load, Plot, Projected, SceneKeys, SummaryLine,
};
use crate::lanes::{Real, V3, dot3, sub3};
use crate::units::Compliance;

/// Shortest particle distance (m) from which a constraint direction is computed. Closer pairs are
/// degenerate: refused in a rest shape, skipped and counted at run time.
pub const MIN_LENGTH: f32 = 1e-6;

/// Longest particle distance (m) a kernel projects. Farther pairs (or a non-finite distance) are
/// degenerate and skipped and counted, which bounds every correction and keeps positions finite.
pub const MAX_LENGTH: f32 = 1e9;

/// Parameter column: rest length `L` in m (`> 0`).
pub const REST: usize = 0;
/// Parameter column: compliance `α` in m/N.
pub const COMPLIANCE: usize = 1;
/// Parameter column: XPBD damping `β` in N·s/m (stored empty when no constraint is damped).
pub const DAMPING: usize = 2;

/// Distance constraints packed in SIMD batches by colour: particles `a` (slot 0) and `b`
/// (slot 1), parameters [`REST`], [`COMPLIANCE`], [`DAMPING`], tag [`DistanceKind`].
pub type DistanceBatches = Batches<2, 3>;

/// Read-only lanes of [`DistanceBatches`], for kernels.
pub type DistanceLanes<'a> = BatchLanes<'a, 2, 3>;

/// The distance constraints (stretch and shear) as a batched kind: particle slots `[a, b]`,
/// parameter columns [`REST`], [`COMPLIANCE`], [`DAMPING`]; residual `|C|` in m, relative to `L`
/// (the strain).
#[derive(Debug, Clone, Copy, Default)]
pub struct Distance;

/// Variant flag of [`Distance`]: the compliance column is stored (some constraint is soft).
const SOFT: u8 = 1;
/// Variant flag of [`Distance`]: the damping column is stored (some constraint is damped; only
/// with [`SOFT`], since damping scales with compliance, `γ = α·β/h`).
const DAMPED: u8 = 2;

impl BatchedKind<2, 3> for Distance {
    const INFO: KindInfo = KindInfo {
        name: "distance",
        unit: "m",
        columns: &[
            Column {
                name: "distance_max_abs_c_m",
                value: Figure::MaxAbs,
                plot: Some(Plot { title: "Distance constraints: largest |C|", axis: "|C| (mm)", scale: 1e3 }),
            },
            Column { name: "distance_mean_abs_c_m", value: Figure::MeanAbs, plot: None },
            Column { name: "distance_max_strain", value: Figure::MaxRel, plot: None },
        ],
        summary: SummaryLine::AbsAndStrain,
        example: &[],
    };

    type Desc = ();

    fn describe<S: SceneKeys>(_keys: &mut S) -> Result<(), S::Error> {
        Ok(())
    }

    /// The cloth's stretch and shear constraints, as the builder checked them (module docs).
    fn build(_desc: &(), ctx: &ClothContext<'_>) -> Result<Vec<Packed<2, 3>>, BuildError> {
        let global = |c: &DistanceConstraint| DistanceConstraint {
            particles: c.particles.map(|p| p + ctx.offset),
            ..*c
        };
        Ok(ctx.distance.iter().map(|c| global(c).packed()).collect())
    }

    fn variant(lanes: &DistanceLanes<'_>) -> u8 {
        match (lanes.param(COMPLIANCE).is_empty(), lanes.param(DAMPING).is_empty()) {
            (true, _) => 0,
            (false, true) => SOFT,
            (false, false) => SOFT | DAMPED,
        }
    }

    #[inline(always)]
    fn project<R: Real, L: Load<R>, const V: u8>(input: Input<'_, R, 2, L>) -> Projected<R, 2> {
        let Input { x: [xa, xb], w: [wa, wb], lambda, step, load } = input;
        let compliance = if V & SOFT != 0 { load.param(COMPLIANCE) } else { R::splat(0.0) };
        let alpha_tilde = compliance * R::splat(step.inv_h2);
        let damping = (V & DAMPED != 0).then(|| Damping {
            gamma: compliance * load.param(DAMPING) * R::splat(step.inv_h),
            dxa: sub3(xa, load.prev(0)),
            dxb: sub3(xb, load.prev(1)),
        });
        let d = distance_delta(xa, xb, wa, wb, load.param(REST), alpha_tilde, lambda, damping);
        let (da, db) = corrections(xa, xb, wa, wb, &d);
        Projected { lambda: lambda + d.dlambda, delta: [da, db], valid: d.valid }
    }

    fn residual([xa, xb]: [V3<f32x8>; 2], param: &dyn Fn(usize) -> f32x8) -> LaneResidual {
        let d = sub3(xb, xa);
        let rest = param(REST);
        let c = (dot3(d, d).sqrt() - rest).abs();
        LaneResidual { abs: c, rel: c / rest, counted: u8::MAX }
    }
}

/// What a distance constraint stands for in the cloth; they share one kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DistanceKind {
    /// Along the cloth's threads (structural edges).
    Stretch = 0,
    /// Across the threads (diagonals).
    Shear = 1,
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

impl DistanceConstraint {
    /// The constraint as batch lanes store it.
    pub fn packed(&self) -> Packed<2, 3> {
        let mut params = [0.0; 3];
        params[REST] = self.rest_length;
        params[COMPLIANCE] = self.compliance.get();
        params[DAMPING] = self.damping;
        Packed { particles: self.particles, params, tag: self.kind as u8 }
    }

    /// The constraint a batch lane holds (as [`DistanceBatches::solve_order`] yields them).
    ///
    /// # Panics
    /// If the compliance is not a valid [`Compliance`] (lanes built from constraints never are).
    pub fn from_packed(p: &Packed<2, 3>) -> Self {
        DistanceConstraint {
            particles: p.particles,
            rest_length: p.params[REST],
            compliance: Compliance::new(p.params[COMPLIANCE]).expect("lanes hold validated compliances"),
            damping: p.params[DAMPING],
            kind: if p.tag == DistanceKind::Shear as u8 {
                DistanceKind::Shear
            } else {
                DistanceKind::Stretch
            },
        }
    }
}

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
/// use weft_core::kinds::distance::distance_delta;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_and_unpacks() {
        let c = DistanceConstraint {
            particles: [3, 7],
            rest_length: 0.5,
            compliance: Compliance::new(1e-3).unwrap(),
            damping: 0.25,
            kind: DistanceKind::Shear,
        };
        assert_eq!(DistanceConstraint::from_packed(&c.packed()), c);
        let d = DistanceBatches::new(&[c.packed()], &[true; 8]);
        let (p, lambda) = d.solve_order().next().unwrap();
        assert_eq!((DistanceConstraint::from_packed(&p), lambda), (c, 0.0));
    }
}
