//! Seams: pairs of particles of a cloth sewn together, as panels of a garment are. A seam pulls
//! its two particles onto each other (rest length 0), rigidly or with a compliance, so a garment
//! can be made of flat panels whose edges meet where they are stitched.
//!
//! ```text
//! C   = |x_b − x_a|                      (m; rest length 0)
//! n   = (x_b − x_a) / |x_b − x_a|        ∇C_b = n, ∇C_a = −n
//! α̃   = α / h²                           (α in m/N)
//! Δλ  = (−C − α̃·λ) / (w_a + w_b + α̃)    (kg·m)
//! λ  += Δλ;   x_a −= w_a·Δλ·n;   x_b += w_b·Δλ·n
//! ```
//!
//! `λ/h²` is the seam's pull in N. A seam whose particles are closer than the distance
//! constraints' [`MIN_LENGTH`] is closed: it has no direction and nothing to do, so it moves
//! nothing and keeps its `λ` (it is not degenerate). One whose particles are farther apart than
//! [`MAX_LENGTH`](MAX_DISTANCE), or at a non-finite distance, is degenerate: skipped through a
//! mask and counted.
//!
//! **Scene keys** (`[[cloth]]`): `seams = [[a, b], ...]`, particle indices of the cloth (the
//! panels' matching edge vertices, in order), and `seam_compliance` (m/N, default 0: rigid) or
//! `seam_stiffness` (N/m). A seam joins two different particles, each pair once (in either
//! order), and at least one of them free; the material needs `seams`.
//!
//! Lanes: particle slots `[a, b]`; parameter column [`COMPLIANCE`] (stored empty when every
//! seam is rigid).

use wide::f32x8;

use crate::batches::{BatchLanes, Batches, Packed};
use crate::cloth::ClothContext;
use crate::error::{BuildError, Rule};
use crate::kinds::distance::{MAX_LENGTH as MAX_DISTANCE, MIN_LENGTH};
use crate::kinds::{
    BatchedKind, Column, Figure, Input, KindInfo, LaneResidual, Load, Plot, Projected, SceneKeys, SummaryLine,
};
use crate::lanes::{Real, V3, dot3, scale3, sub3};
use crate::units::Elasticity;

/// Parameter column: compliance `α` in m/N.
pub const COMPLIANCE: usize = 0;

/// Seams in SIMD batches: particle slots `[a, b]`.
pub type SeamBatches = Batches<2, 1>;

/// Read-only lanes of [`SeamBatches`], for kernels.
pub type SeamLanes<'a> = BatchLanes<'a, 2, 1>;

/// Key (and field in errors) of the list of seams.
const SEAMS_FIELD: &str = "seams";
/// Key of the seam compliance (and the field naming the material in errors).
const ELASTICITY_FIELD: &str = "seam_compliance";
/// Key of the seam stiffness, the material's other name.
const STIFFNESS_FIELD: &str = "seam_stiffness";

/// The seams of a cloth, as a scene states them.
#[derive(Debug, Clone, PartialEq)]
pub struct SeamDesc {
    /// The sewn pairs, indices local to the cloth.
    pub pairs: Vec<[u32; 2]>,
    /// Compliance in m/N, or stiffness in N/m.
    pub elasticity: Elasticity,
}

/// The seams as a batched kind: particle slots `[a, b]`, parameter column [`COMPLIANCE`];
/// residual: the gap `|x_b − x_a|` left in a seam, in m.
#[derive(Debug, Clone, Copy, Default)]
pub struct Seam;

/// Variant flag of [`Seam`]: the compliance column is stored (some seam is soft).
const SOFT: u8 = 1;

impl BatchedKind<2, 1> for Seam {
    const INFO: KindInfo = KindInfo {
        name: "seams",
        unit: "m apart",
        columns: &[Column {
            name: "seam_max_gap_m",
            value: Figure::MaxAbs,
            plot: Some(Plot { title: "Seams: largest gap", axis: "gap (mm)", scale: 1e3 }),
        }],
        summary: SummaryLine::Abs,
        example: &["seams = [[0, 4], [1, 3]]", "seam_compliance = 1e-4"],
    };

    type Desc = Option<SeamDesc>;

    fn describe<S: SceneKeys>(keys: &mut S) -> Result<Option<SeamDesc>, S::Error> {
        let pairs = keys.pairs(SEAMS_FIELD)?;
        let material_key = if keys.given(ELASTICITY_FIELD) { ELASTICITY_FIELD } else { STIFFNESS_FIELD };
        let elasticity = keys.material(ELASTICITY_FIELD, STIFFNESS_FIELD)?;
        match (pairs, elasticity) {
            (None, None) => Ok(None),
            (None, Some(_)) => Err(keys.needs(material_key, "`seams`: the pairs of particles it sews")),
            (Some(pairs), elasticity) => {
                Ok(Some(SeamDesc { pairs, elasticity: elasticity.unwrap_or(Elasticity::RIGID) }))
            }
        }
    }

    fn build(desc: &Option<SeamDesc>, ctx: &ClothContext<'_>) -> Result<Vec<Packed<2, 1>>, BuildError> {
        desc.as_ref().map_or(Ok(Vec::new()), |d| build(d, ctx))
    }

    fn variant(lanes: &SeamLanes<'_>) -> u8 {
        if lanes.param(COMPLIANCE).is_empty() { 0 } else { SOFT }
    }

    #[inline(always)]
    fn project<R: Real, L: Load<R>, const V: u8>(input: Input<'_, R, 2, L>) -> Projected<R, 2> {
        let Input { x: [xa, xb], w: [wa, wb], lambda, step, load } = input;
        let alpha_tilde =
            if V & SOFT != 0 { load.param(COMPLIANCE) * R::splat(step.inv_h2) } else { R::splat(0.0) };
        let s = seam_delta(xa, xb, wa, wb, alpha_tilde, lambda);
        let d = sub3(xb, xa);
        let (sa, sb) = (wa * s.dlambda_per_length, wb * s.dlambda_per_length);
        let da = [-(d[0] * sa), -(d[1] * sa), -(d[2] * sa)];
        Projected { lambda: lambda + s.dlambda, delta: [da, scale3(d, sb)], valid: s.valid }
    }

    fn residual([xa, xb]: [V3<f32x8>; 2], _param: &dyn Fn(usize) -> f32x8) -> LaneResidual {
        let d = sub3(xb, xa);
        LaneResidual { abs: dot3(d, d).sqrt(), rel: f32x8::splat(0.0), counted: u8::MAX }
    }
}

/// The outcome of one seam projection.
#[derive(Clone, Copy, Debug)]
pub struct SeamDelta<R: Real> {
    /// `Δλ` in kg·m (0 in closed and degenerate lanes).
    pub dlambda: R,
    /// `Δλ/|d|` in kg (0 in closed and degenerate lanes): the corrections are `∓w·(Δλ/|d|)·d`.
    pub dlambda_per_length: R,
    /// Lanes that are not degenerate (closed seams are not degenerate).
    pub valid: R::Mask,
}

/// The seam projection (module docs), for one seam or one per lane: positions (m) and inverse
/// masses (1/kg) of `a` and `b`, `α̃ = α/h²` (1/kg) and `λ` (kg·m).
///
/// ```
/// use weft_core::kinds::seam::seam_delta;
/// // A rigid seam between a pinned particle at 0 and a 1 kg one at 2 m closes in one projection.
/// let s = seam_delta::<f32>([0.0; 3], [2.0, 0.0, 0.0], 0.0, 1.0, 0.0, 0.0);
/// assert_eq!((s.dlambda, 2.0 + s.dlambda_per_length * 2.0), (-2.0, 0.0));
/// ```
#[inline(always)]
pub fn seam_delta<R: Real>(xa: V3<R>, xb: V3<R>, wa: R, wb: R, alpha_tilde: R, lambda: R) -> SeamDelta<R> {
    let (zero, one) = (R::splat(0.0), R::splat(1.0));
    let d = sub3(xb, xa);
    let len2 = dot3(d, d);
    let len = len2.sqrt();
    let inv_len2 = one / len2;
    let den = wa + wb + alpha_tilde;
    let valid = R::and(len.le(R::splat(MAX_DISTANCE)), den.gt(zero));
    let open = R::and(valid, len.gt(R::splat(MIN_LENGTH)));
    let dlambda = (-len - alpha_tilde * lambda) * (one / den);
    SeamDelta {
        dlambda: R::select(open, dlambda, zero),
        // Selected rather than multiplied: `len·(1/len²)` is NaN for a closed seam.
        dlambda_per_length: R::select(open, dlambda * (len * inv_len2), zero),
        valid,
    }
}

/// The seams of one cloth (global particle indices), or the rule a pair breaks.
fn build(desc: &SeamDesc, ctx: &ClothContext<'_>) -> Result<Vec<Packed<2, 1>>, BuildError> {
    let compliance = desc.elasticity.compliance().get();
    if !(compliance * ctx.time_step.inv_h2).is_finite() {
        return Err(ctx.error(
            ELASTICITY_FIELD,
            None,
            Rule::TooLargeForTimeStep { value: compliance, h: ctx.time_step.h64, what: "α/h²" },
        ));
    }
    let n = ctx.pinned.len();
    let mut first = std::collections::HashMap::new();
    let mut seams = Vec::with_capacity(desc.pairs.len());
    for (i, &[a, b]) in desc.pairs.iter().enumerate() {
        for p in [a, b] {
            if p as usize >= n {
                return Err(ctx.error(
                    SEAMS_FIELD,
                    Some(i),
                    Rule::IndexOutOfRange { index: p as u64, len: n },
                ));
            }
        }
        if a == b {
            return Err(ctx.error(SEAMS_FIELD, Some(i), Rule::SelfEdge { particle: a }));
        }
        if let Some(&earlier) = first.get(&[a.min(b), a.max(b)]) {
            let rule = Rule::DuplicateEdge { a, b, field: SEAMS_FIELD, first: earlier };
            return Err(ctx.error(SEAMS_FIELD, Some(i), rule));
        }
        first.insert([a.min(b), a.max(b)], i);
        if ctx.pinned[a as usize] && ctx.pinned[b as usize] {
            continue; // two pins: the seam can never move either
        }
        let mut params = [0.0; 1];
        params[COMPLIANCE] = compliance;
        seams.push(Packed { particles: [a + ctx.offset, b + ctx.offset], params, tag: 0 });
    }
    Ok(seams)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::KindDescs;
    use crate::limits::Limits;
    use crate::settings::SimSettings;
    use crate::units::Compliance;
    use crate::{ClothDesc, ModelBuilder};

    /// Two unit squares side by side, 0.5 m apart, their facing edges sewn by `pairs`.
    fn panels(pairs: Vec<[u32; 2]>) -> ClothDesc {
        let square = |x: f32| [[x, 0.0, 0.0], [x + 1.0, 0.0, 0.0], [x, 1.0, 0.0], [x + 1.0, 1.0, 0.0]];
        let mut positions = square(0.0).to_vec();
        positions.extend(square(1.5));
        ClothDesc {
            name: "panels".into(),
            positions,
            triangles: vec![[0, 1, 2], [1, 3, 2], [4, 5, 6], [5, 7, 6]],
            kinds: KindDescs {
                seams: Some(SeamDesc { pairs, elasticity: Elasticity::RIGID }),
                ..KindDescs::default()
            },
            ..ClothDesc::default()
        }
    }

    fn build(cloth: &ClothDesc) -> Result<crate::Model, BuildError> {
        let mut b = ModelBuilder::new(SimSettings::default(), Limits::default()).unwrap();
        b.add_cloth(cloth)?;
        b.build()
    }

    #[test]
    fn a_rigid_seam_closes_in_one_projection_and_keeps_the_centre_of_mass() {
        let (xa, xb) = ([1.0f32, 0.0, 0.0], [1.5f32, 0.25, 0.0]);
        let s = seam_delta::<f32>(xa, xb, 1.0, 1.0, 0.0, 0.0);
        let d = sub3(xb, xa);
        let (na, nb) = (
            crate::lanes::add3(xa, scale3(d, -s.dlambda_per_length)),
            crate::lanes::add3(xb, scale3(d, s.dlambda_per_length)),
        );
        let gap = sub3(nb, na);
        assert!(dot3(gap, gap).sqrt() < 1e-6, "closed: {na:?} {nb:?}");
        assert!(
            (na[0] + nb[0] - 2.5).abs() < 1e-6 && (na[1] + nb[1] - 0.25).abs() < 1e-6,
            "the middle stays"
        );
        assert!((s.dlambda + 0.559_017 / 2.0).abs() < 1e-5, "Δλ = −|d|/(w_a + w_b): {}", s.dlambda);
    }

    #[test]
    fn a_soft_seam_closes_part_of_the_way_and_a_closed_one_does_nothing() {
        // α̃ = 1 against w_a + w_b = 2: a third of the gap closes.
        let s = seam_delta::<f32>([0.0; 3], [0.3, 0.0, 0.0], 1.0, 1.0, 1.0, 0.0);
        assert!((s.dlambda + 0.1).abs() < 1e-7);
        let closed = seam_delta::<f32>([0.0; 3], [1e-7, 0.0, 0.0], 1.0, 1.0, 0.0, -0.5);
        assert!(closed.valid && closed.dlambda == 0.0 && closed.dlambda_per_length == 0.0);
        for far in [[3e9f32, 0.0, 0.0], [f32::NAN, 0.0, 0.0]] {
            assert!(!seam_delta::<f32>([0.0; 3], far, 1.0, 1.0, 0.0, 0.0).valid);
        }
    }

    #[test]
    fn simd_lanes_match_scalar_bits() {
        let xs: [[f32; 3]; 8] =
            std::array::from_fn(|k| [k as f32 * 0.3 - 1.0, 0.1 * k as f32, 1e-7 * k as f32]);
        let lane = |i: usize| f32x8::new(std::array::from_fn(|k| xs[k][i]));
        let lambda = [0.0f32, -0.1, -1.0, 0.0, -0.5, 0.0, -2.0, 0.0];
        let s = seam_delta::<f32x8>(
            [f32x8::splat(0.0); 3],
            [lane(0), lane(1), lane(2)],
            f32x8::splat(0.5),
            f32x8::splat(2.0),
            f32x8::splat(0.25),
            f32x8::new(lambda),
        );
        for k in 0..8 {
            let t = seam_delta::<f32>([0.0; 3], xs[k], 0.5, 2.0, 0.25, lambda[k]);
            assert_eq!(s.dlambda.to_array()[k].to_bits(), t.dlambda.to_bits(), "lane {k}");
            assert_eq!(s.dlambda_per_length.to_array()[k].to_bits(), t.dlambda_per_length.to_bits());
        }
    }

    #[test]
    fn seams_are_built_in_order_and_bad_pairs_are_refused() {
        let m = build(&panels(vec![[1, 4], [3, 6]])).unwrap();
        assert_eq!(m.sets().seams.len(), 2);
        assert_eq!(m.report().sets.seams.constraints, 2);
        let refused = |pairs: Vec<[u32; 2]>| build(&panels(pairs)).unwrap_err();
        let e = refused(vec![[1, 4], [3, 8]]);
        assert_eq!((e.location.field, e.location.index), ("seams", Some(1)));
        assert_eq!(e.rule, Rule::IndexOutOfRange { index: 8, len: 8 });
        assert_eq!(refused(vec![[2, 2]]).rule, Rule::SelfEdge { particle: 2 });
        assert_eq!(
            refused(vec![[1, 4], [4, 1]]).rule,
            Rule::DuplicateEdge { a: 4, b: 1, field: "seams", first: 0 }
        );
        let mut soft = panels(vec![[1, 4]]);
        let huge = Elasticity::Compliance(Compliance::new(f32::MAX).unwrap());
        soft.kinds.seams.as_mut().unwrap().elasticity = huge;
        assert_eq!(build(&soft).unwrap_err().location.field, "seam_compliance");
        let mut pinned = panels(vec![[1, 4]]);
        pinned.pins = vec![1, 4];
        assert_eq!(build(&pinned).unwrap().sets().seams.len(), 0, "two pins: left out");
    }
}
