//! Bending: XPBD dihedral-angle constraints between the two triangles of each interior edge.
//!
//! # The constraint
//!
//! An interior edge `a–b` is shared by triangle `(a, b, c)` and triangle `(b, a, d)`; `c` and `d`
//! are its *wings*. With unnormalised normals
//!
//! ```text
//! e  = x_b − x_a                 n₁ = e × (x_c − x_a)        n₂ = (x_d − x_a) × e
//! θ  = atan2((n₁ × n₂)·ê, n₁·n₂) = atan2(−(n₁·(x_d − x_a))·|e|, n₁·n₂)      ∈ [−π, π]
//! C  = θ − θ₀, wrapped into (−π, π]                                         (rad)
//! ```
//!
//! `θ` is the signed angle between the two triangles' normals: `0` for a flat pair (whatever the
//! stored winding of the triangles: the labels `a, b, c, d` alone fix the normals), `±π` for a
//! pair folded shut, positive when the wing `d` turns away from `n₁`'s side. (The second form of
//! `θ` uses `(n₁ × n₂) = −[e, x_c − x_a, x_d − x_a]·e`.) There is no `acos`, so nothing breaks
//! near `0` or `π`; at `C = ±π` the constraint is at its unstable top, where either direction is
//! a valid correction. `θ₀` is the same angle in the input mesh ([`dihedral_angle`]), so a
//! pleated or curved rest shape is kept and a flat one stays flat.
//!
//! The gradients of the dihedral angle, with `ê = e/|e|`:
//!
//! ```text
//! ∇_c θ = −|e|·n₁/|n₁|²                     ∇_d θ = −|e|·n₂/|n₂|²
//! ∇_a θ = (|e| − (x_c − x_a)·ê)·n₁/|n₁|² + (|e| − (x_d − x_a)·ê)·n₂/|n₂|²
//! ∇_b θ = ((x_c − x_a)·ê)·n₁/|n₁|² + ((x_d − x_a)·ê)·n₂/|n₂|²
//! ```
//!
//! They sum to zero (a rigid translation does not change the angle), and `|∇_c θ| = 1/h_c`, where
//! `h_c = |n₁|/|e|` is the height of the wing `c` above the edge line.
//!
//! # Units
//!
//! `C` in rad; compliance `α` in rad²/J = rad²/(N·m) (stiffness `k = 1/α` in N·m/rad²); `α̃ = α/h²`
//! in rad²/(kg·m²), the unit of `w·|∇C|²`; the multiplier `λ` in kg·m²/rad, so that `λ/h²` is the
//! bending moment about the edge in N·m (per radian of gradient: `λ/h²·∇C` is a force in N);
//! damping `β` in N·m·s/rad², so that `γ = α·β/h` has no unit. The XPBD update is the one of
//! docs/physics.md: `Δλ = (−C − α̃λ − γ∇C·(x − x_prev)) / ((1 + γ)Σwᵢ|∇Cᵢ|² + α̃)`,
//! `xᵢ += wᵢ∇CᵢΔλ`.
//!
//! # Degenerate hinges
//!
//! A hinge has a usable gradient when its edge is longer than [`MIN_EDGE`] and at most
//! [`MAX_SPAN`], and each wing stands more than [`MIN_HEIGHT`] and at most [`MAX_SPAN`] off the
//! edge line; then every gradient is below `1/MIN_HEIGHT` per wing. In the rest shape a hinge that
//! breaks this is refused (a zero-area triangle, coincident edge ends, a span beyond what `f32`
//! projects). At run time the kernels skip it through a mask (`Δλ = 0`) and count it, as they
//! do when the denominator or `Δλ` would not be finite, and when the free corners cannot turn
//! the hinge: `Σ wᵢ|∇ᵢ|²` at most [`IMMOVABLE`] times `max wᵢ · Σ |∇ᵢ|²` (a hinge folded flat
//! with its wings and one edge end on one line, all pinned but the other end, whose gradient is
//! 0 in exact arithmetic: two forms of the gradients round it to 0 or to a residue a millionth of
//! the others, and a projection by that residue would move the free corner by `C` over it).
//!
//! # Projecting
//!
//! With `e = x_b − x_a`, `n₁ = e × (x_c − x_a)`, `n₂ = (x_d − x_a) × e`, the gradients above are
//! computed as `∇_c = −|e|·n₁/|n₁|²`, `∇_d = −|e|·n₂/|n₂|²`, `∇_b = p_c·n₁/|n₁|² + p_d·n₂/|n₂|²`
//! and `∇_a = (|e| − p_c)·n₁/|n₁|² + (|e| − p_d)·n₂/|n₂|²` with `p = (x − x_a)·e/|e|`; and
//! `|∇_c|² = |e|²/|n₁|²` needs no dot product. [`atan2`] is a polynomial built from `+ − × ÷`,
//! `abs` and lane selects, the same operations for `f32` and `f32x8`, so the SIMD path and its
//! scalar twin stay bit-identical (the standard library's `atan2` would differ from any vector
//! one).
//!
//! # Scene keys
//!
//! `bending_compliance` (rad²/(N·m)) or `bending_stiffness` (N·m/rad²) turns bending on;
//! `bending_damping` (N·m·s/rad², default 0) needs one of them.
//!
//! # Lanes
//!
//! Particle slots `[a, b, c, d]`; parameter columns [`REST_ANGLE`], [`COMPLIANCE`], [`DAMPING`]
//! (a column whose values are all zero, such as the rest angles of a flat sheet, is stored
//! empty); tag 0.

use wide::f32x8;

use crate::batches::{BatchLanes, Batches, Packed};
use crate::cloth::ClothContext;
use crate::error::{BuildError, Rule, widen};
use crate::kinds::distance;
use crate::kinds::{
    BatchedKind, Column, Figure, Input, KindInfo, LaneResidual, Load, Plot, Projected, SceneKeys, SummaryLine,
};
use crate::lanes::{Real, V3, add3, dot3, scale3, sub3};
use crate::topology::triangle_area;
use crate::units::Elasticity;

/// Parameter column: rest dihedral angle `θ₀` in rad, in `[−π, π]`.
pub const REST_ANGLE: usize = 0;
/// Parameter column: compliance `α` in rad²/(N·m).
pub const COMPLIANCE: usize = 1;
/// Parameter column: XPBD damping `β` in N·m·s/rad² (stored empty when no constraint is damped).
pub const DAMPING: usize = 2;

/// Shortest edge `|x_b − x_a|` (m) from which a hinge's axis is computed: the distance
/// constraints' [`MIN_LENGTH`](distance::MIN_LENGTH), 1 µm.
pub const MIN_EDGE: f32 = distance::MIN_LENGTH;

/// Smallest height (m) of a wing above the edge line, `|n|/|e|`, for which a hinge is projected:
/// 1 µm. The gradient at a wing is `1/height`, so it stays below 10⁶ rad/m; a lower wing (a
/// triangle collapsing onto the edge) has no usable normal.
pub const MIN_HEIGHT: f32 = 1e-6;

/// The share of `max wᵢ · Σ |∇ᵢ|²` (the most the corners could weigh) at or below which
/// `Σ wᵢ|∇ᵢ|²` leaves a hinge unprojected: its free corners' gradients are at most a millionth
/// of the hinge's (module docs, "Degenerate hinges").
pub const IMMOVABLE: f32 = 1e-12;

/// Longest edge and highest wing (m) a kernel projects: the distance constraints'
/// [`MAX_LENGTH`](distance::MAX_LENGTH), 10⁹ m. It keeps `|n|²` (up to `MAX_SPAN⁴` = 10³⁶ m⁴)
/// finite in `f32`.
pub const MAX_SPAN: f32 = distance::MAX_LENGTH;

/// Bending constraints in SIMD batches: particle slots `[a, b, c, d]` (edge `a–b`, wings `c`, `d`).
pub type BendingBatches = Batches<4, 3>;

/// Read-only lanes of [`BendingBatches`], for kernels.
pub type BendingLanes<'a> = BatchLanes<'a, 4, 3>;

/// Key of the bending compliance (and the field naming the material in errors).
const ELASTICITY_FIELD: &str = "bending_compliance";
/// Key of the bending stiffness, the material's other name.
const STIFFNESS_FIELD: &str = "bending_stiffness";
/// Key of the bending damping (and the field naming it in errors).
const DAMPING_FIELD: &str = "bending_damping";

/// The bending constraints as a batched kind: particle slots `[a, b, c, d]` (hinge edge `a–b`,
/// wings `c` and `d`), parameter columns [`REST_ANGLE`], [`COMPLIANCE`], [`DAMPING`]; residual
/// `|C|` in rad (no relative value: an angle has no scale of its own). Degenerate hinges (no
/// usable angle, see the module docs) are left out of the residual.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bending;

/// Variant flag of [`Bending`]: the damping column is stored (some hinge is damped).
const DAMPED: u8 = 1;

impl BatchedKind<4, 3> for Bending {
    const INFO: KindInfo = KindInfo {
        name: "bending",
        unit: "rad",
        columns: &[
            Column {
                name: "bending_max_abs_c_rad",
                value: Figure::MaxAbs,
                plot: Some(Plot { title: "Bending constraints: largest |C|", axis: "|C| (rad)", scale: 1.0 }),
            },
            Column { name: "bending_mean_abs_c_rad", value: Figure::MeanAbs, plot: None },
        ],
        summary: SummaryLine::Abs,
        example: &["bending_compliance = 1.0"],
    };

    type Desc = Option<BendingDesc>;

    fn describe<S: SceneKeys>(keys: &mut S) -> Result<Option<BendingDesc>, S::Error> {
        let elasticity = keys.material(ELASTICITY_FIELD, STIFFNESS_FIELD)?;
        let damping = keys.number(DAMPING_FIELD)?;
        match (elasticity, damping) {
            (None, None) => Ok(None),
            (None, Some(_)) => Err(keys.needs(
                DAMPING_FIELD,
                "`bending_compliance` or `bending_stiffness`: it damps the bending material",
            )),
            (Some(elasticity), damping) => {
                Ok(Some(BendingDesc { elasticity, damping: damping.unwrap_or(0.0) }))
            }
        }
    }

    fn build(desc: &Option<BendingDesc>, ctx: &ClothContext<'_>) -> Result<Vec<Packed<4, 3>>, BuildError> {
        desc.as_ref().map_or(Ok(Vec::new()), |d| build(d, ctx))
    }

    fn variant(lanes: &BendingLanes<'_>) -> u8 {
        if lanes.param(DAMPING).is_empty() { 0 } else { DAMPED }
    }

    #[inline(always)]
    fn project<R: Real, L: Load<R>, const V: u8>(input: Input<'_, R, 4, L>) -> Projected<R, 4> {
        let Input { x, w, lambda, step, load } = input;
        let compliance = load.param(COMPLIANCE);
        let alpha_tilde = compliance * R::splat(step.inv_h2);
        let damping = (V & DAMPED != 0).then(|| Damping {
            gamma: compliance * load.param(DAMPING) * R::splat(step.inv_h),
            dx: std::array::from_fn(|s| sub3(x[s], load.prev(s))),
        });
        let d = bending_delta(x, w, load.param(REST_ANGLE), alpha_tilde, lambda, damping);
        Projected { lambda: lambda + d.dlambda, delta: corrections(w, &d), valid: d.valid }
    }

    fn residual(x: [V3<f32x8>; 4], param: &dyn Fn(usize) -> f32x8) -> LaneResidual {
        let h = hinge(x);
        let c = wrap_angle(h.theta, param(REST_ANGLE)).abs();
        LaneResidual { abs: c, rel: f32x8::splat(0.0), counted: h.valid.to_bitmask() as u8 }
    }
}

/// Bending of a cloth, as a scene states it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BendingDesc {
    /// Compliance in rad²/(N·m), or stiffness in N·m/rad².
    pub elasticity: Elasticity,
    /// XPBD damping `β` in N·m·s/rad² (`≥ 0`).
    pub damping: f32,
}

/// One bending constraint, as a builder states it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BendingConstraint {
    /// `[a, b, c, d]`: the edge `a–b`, the wing `c` of triangle `(a, b, c)` and the wing `d` of
    /// triangle `(b, a, d)` (global indices).
    pub particles: [u32; 4],
    /// Rest angle `θ₀` in rad, in `[−π, π]`.
    pub rest_angle: f32,
    /// Compliance `α` in rad²/(N·m) (`≥ 0`).
    pub compliance: f32,
    /// XPBD damping `β` in N·m·s/rad² (`≥ 0`).
    pub damping: f32,
}

impl BendingConstraint {
    /// The constraint as batch lanes store it.
    pub fn packed(&self) -> Packed<4, 3> {
        let mut params = [0.0; 3];
        params[REST_ANGLE] = self.rest_angle;
        params[COMPLIANCE] = self.compliance;
        params[DAMPING] = self.damping;
        Packed { particles: self.particles, params, tag: 0 }
    }

    /// The constraint a batch lane holds (as [`BendingBatches::solve_order`] yields them).
    pub fn from_packed(p: &Packed<4, 3>) -> Self {
        BendingConstraint {
            particles: p.particles,
            rest_angle: p.params[REST_ANGLE],
            compliance: p.params[COMPLIANCE],
            damping: p.params[DAMPING],
        }
    }
}

/// The signed dihedral angle `θ` (rad, in `[−π, π]`) at the edge `a–b` between the triangles
/// `(a, b, c)` and `(b, a, d)`, by the formula of the module docs, computed in `f64` from the
/// `f32` positions (m). The kernels and the reference evaluate the same formula in `f32`; this is
/// the rest angle `θ₀` they are built with, so in the rest shape their `C` is `0` up to the
/// rounding of `f32`.
///
/// A hinge without normals (a wing on the edge line) has no angle; this returns `±0` or `±π`
/// then, and the builder refuses such a hinge before it asks.
///
/// ```
/// use weft_core::kinds::bending::dihedral_angle;
/// let (a, b) = ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0]);
/// // Flat: the wings on opposite sides of the edge, in one plane.
/// assert_eq!(dihedral_angle(a, b, [0.5, 1.0, 0.0], [0.5, -1.0, 0.0]), 0.0);
/// // A right angle: wing d turned up, out of the plane.
/// let right = dihedral_angle(a, b, [0.5, 1.0, 0.0], [0.5, 0.0, 1.0]);
/// assert!((right.abs() - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
/// // Folded shut: both wings on the same side.
/// let shut = dihedral_angle(a, b, [0.5, 1.0, 0.0], [0.5, 1.0, 0.0]);
/// assert_eq!(shut.abs(), std::f64::consts::PI);
/// ```
pub fn dihedral_angle(a: [f32; 3], b: [f32; 3], c: [f32; 3], d: [f32; 3]) -> f64 {
    let g = Hinge64::new(a, b, c, d);
    let y = -dot(g.n1, g.v) * g.e2.sqrt();
    let x = dot(g.n1, g.n2);
    y.atan2(x)
}

/// What is wrong with a hinge in the rest shape.
#[derive(Debug, Clone, Copy, PartialEq)]
enum HingeProblem {
    /// The edge is not longer than [`MIN_EDGE`] (m).
    ShortEdge(f64),
    /// The edge is longer than [`MAX_SPAN`] (m).
    LongEdge(f64),
    /// Wing 0 (`c`) or 1 (`d`) is not higher than [`MIN_HEIGHT`] above the edge line.
    Flat(usize),
    /// Wing 0 (`c`) or 1 (`d`) stands higher than [`MAX_SPAN`] (m) above the edge line.
    High(usize, f64),
}

/// The vectors of a hinge in `f64`.
struct Hinge64 {
    e2: f64,
    v: [f64; 3],
    n1: [f64; 3],
    n2: [f64; 3],
}

impl Hinge64 {
    fn new(a: [f32; 3], b: [f32; 3], c: [f32; 3], d: [f32; 3]) -> Self {
        let sub = |p: [f32; 3], q: [f32; 3]| [0, 1, 2].map(|i| p[i] as f64 - q[i] as f64);
        let (e, u, v) = (sub(b, a), sub(c, a), sub(d, a));
        Hinge64 { e2: dot(e, e), v, n1: cross(e, u), n2: cross(v, e) }
    }

    /// The first rule of the module docs' "degenerate hinges" the hinge breaks, if any.
    fn problem(&self) -> Option<HingeProblem> {
        let edge = self.e2.sqrt();
        if edge.partial_cmp(&(MIN_EDGE as f64)) != Some(std::cmp::Ordering::Greater) {
            return Some(HingeProblem::ShortEdge(edge));
        }
        if edge > MAX_SPAN as f64 {
            return Some(HingeProblem::LongEdge(edge));
        }
        for (wing, n) in [self.n1, self.n2].into_iter().enumerate() {
            let height = dot(n, n).sqrt() / edge;
            if height.partial_cmp(&(MIN_HEIGHT as f64)) != Some(std::cmp::Ordering::Greater) {
                return Some(HingeProblem::Flat(wing));
            }
            if height > MAX_SPAN as f64 {
                return Some(HingeProblem::High(wing, height));
            }
        }
        None
    }
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// The bending constraints of one cloth (global particle indices), or the rule it breaks.
///
/// One constraint per interior edge of the cloth's triangles (edges of more than two triangles,
/// where the scene lets them through, are not interior and get none), oriented so that
/// `(a, b, c)` follows the winding of the edge's first triangle. Checks: the material (`α/h²`
/// and `α·β/h` finite, `β` finite and `≥ 0`); triangles to bend; every hinge usable in the rest
/// shape (module docs). A hinge whose four particles are all pinned can never move and is left
/// out. So is an edge whose two triangles share their third corner too (a triangle doubled back
/// onto itself): its two faces always coincide, so it has no dihedral angle to keep.
fn build(desc: &BendingDesc, ctx: &ClothContext<'_>) -> Result<Vec<Packed<4, 3>>, BuildError> {
    let step = ctx.time_step;
    let alpha = desc.elasticity.compliance().get();
    if !(alpha * step.inv_h2).is_finite() {
        return Err(ctx.error(
            ELASTICITY_FIELD,
            None,
            Rule::TooLargeForTimeStep { value: alpha, h: step.h64, what: "α/h²" },
        ));
    }
    let beta = desc.damping;
    if !beta.is_finite() {
        return Err(ctx.error(DAMPING_FIELD, None, Rule::NotFinite { value: beta.to_string() }));
    }
    if beta < 0.0 {
        return Err(ctx.error(DAMPING_FIELD, None, Rule::Negative { value: widen(beta) }));
    }
    if !(alpha * beta * step.inv_h).is_finite() {
        return Err(ctx.error(
            DAMPING_FIELD,
            None,
            Rule::TooLargeForTimeStep { value: beta, h: step.h64, what: "α·β/h" },
        ));
    }
    let triangles = &ctx.desc.triangles;
    if triangles.is_empty() {
        return Err(ctx.error(
            "triangles",
            None,
            Rule::MissingPrerequisite { feature: "bending", needs: "triangles" },
        ));
    }
    let positions = &ctx.desc.positions;
    let mut constraints = Vec::with_capacity(ctx.topology.interior.len());
    for hinge in &ctx.topology.interior {
        let [t0, t1] = hinge.triangles.map(|t| t as usize);
        let [c, d] = hinge.opposite;
        if c == d {
            continue;
        }
        // (a, b, c) in the winding of triangle t0: a is the corner that c follows.
        let tri = triangles[t0];
        let k = tri.iter().position(|&p| p == c).expect("the opposite vertex is a corner");
        let (a, b) = (tri[(k + 1) % 3], tri[(k + 2) % 3]);
        let particles = [a, b, c, d];
        if particles.iter().all(|&p| ctx.pinned[p as usize]) {
            continue;
        }
        let [xa, xb, xc, xd] = particles.map(|p| positions[p as usize]);
        if let Some(problem) = Hinge64::new(xa, xb, xc, xd).problem() {
            return Err(hinge_error(ctx, problem, particles, [t0, t1]));
        }
        let rest_angle = dihedral_angle(xa, xb, xc, xd) as f32;
        constraints.push(
            BendingConstraint {
                particles: particles.map(|p| p + ctx.offset),
                rest_angle,
                compliance: alpha,
                damping: beta,
            }
            .packed(),
        );
    }
    Ok(constraints)
}

/// The error of a hinge `[a, b, c, d]` of triangles `[t0, t1]` whose rest shape has `problem`,
/// at the triangle concerned.
fn hinge_error(
    ctx: &ClothContext<'_>,
    problem: HingeProblem,
    [a, b, c, d]: [u32; 4],
    [t0, t1]: [usize; 2],
) -> BuildError {
    let triangles = &ctx.desc.triangles;
    let positions = &ctx.desc.positions;
    let (wing, t) = match problem {
        HingeProblem::Flat(w) | HingeProblem::High(w, _) => (w, [t0, t1][w]),
        _ => (0, t0),
    };
    let corner = [c, d][wing];
    let rule = match problem {
        HingeProblem::ShortEdge(edge) => {
            Rule::CoincidentParticles { a, b, distance: edge as f32, min: MIN_EDGE }
        }
        HingeProblem::LongEdge(edge) => Rule::TooFarApart { a, b, distance: edge as f32, max: MAX_SPAN },
        HingeProblem::Flat(_) => {
            let [p, q, r] = triangles[t];
            let area = triangle_area(positions[p as usize], positions[q as usize], positions[r as usize]);
            Rule::ZeroAreaTriangle { a: p, b: q, c: r, area: area as f32, used_for: "bending" }
        }
        HingeProblem::High(_, height) => {
            Rule::TooFarApart { a, b: corner, distance: height as f32, max: MAX_SPAN }
        }
    };
    ctx.error("triangles", Some(t), rule)
}

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
/// use weft_core::kinds::bending::atan2;
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
/// use weft_core::kinds::bending::bending_delta;
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
    let heaviest = w[0].max(w[1]).max(w[2].max(w[3]));
    let weight = (h.grad2[0] + h.grad2[1]) + (h.grad2[2] + h.grad2[3]);
    let solvable = R::and(solvable, mass.gt(R::splat(IMMOVABLE) * heaviest * weight));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{ClothDesc, ModelBuilder};
    use crate::limits::Limits;
    use crate::settings::SimSettings;
    use crate::units::{Compliance, Stiffness};

    /// Two triangles `(0, 1, 2)` and `(1, 0, 3)` sharing the edge 0–1 along x; wing 3 lifted by
    /// `lift` m out of the plane.
    fn hinge_cloth(lift: f32) -> ClothDesc {
        ClothDesc {
            name: "hinge".into(),
            positions: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.5, -1.0, lift]],
            triangles: vec![[0, 1, 2], [1, 0, 3]],
            kinds: crate::kinds::KindDescs {
                bending: Some(BendingDesc {
                    elasticity: Elasticity::Compliance(Compliance::new(1e-3).unwrap()),
                    damping: 0.0,
                }),
                ..Default::default()
            },
            ..ClothDesc::default()
        }
    }

    fn build(desc: &ClothDesc) -> Result<crate::Model, BuildError> {
        let settings = SimSettings { fps: 10.0, substeps: 1, ..SimSettings::default() };
        let mut b = ModelBuilder::new(settings, Limits::default())?;
        b.add_cloth(desc)?;
        b.build()
    }

    #[test]
    fn one_constraint_per_interior_edge_with_its_rest_angle() {
        let m = build(&hinge_cloth(1.0)).unwrap();
        let all: Vec<_> = m.sets().bending.solve_order().collect();
        assert_eq!(all.len(), 1);
        let (p, lambda) = all[0];
        let c = BendingConstraint::from_packed(&p);
        assert_eq!((c.particles, lambda, p.tag), ([0, 1, 2, 3], 0.0, 0));
        // Wing 3 at (0.5, −1, 1): turned 45° out of the plane towards n₁ = +z, so θ₀ = −π/4.
        let expected = dihedral_angle([0.0; 3], [1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.5, -1.0, 1.0]);
        assert!((expected + std::f64::consts::FRAC_PI_4).abs() < 1e-12, "{expected}");
        assert_eq!(c.rest_angle, expected as f32);
        assert_eq!((c.compliance, c.damping), (1e-3, 0.0));
        assert_eq!(BendingConstraint::from_packed(&c.packed()), c);
    }

    #[test]
    fn orientation_follows_the_first_triangle() {
        // The same hinge with triangle 0 wound the other way: (a, b) swap, the angle changes sign.
        let mut d = hinge_cloth(1.0);
        d.triangles = vec![[1, 0, 2], [1, 0, 3]];
        let m = build(&d).unwrap();
        let c = BendingConstraint::from_packed(&m.sets().bending.solve_order().next().unwrap().0);
        assert_eq!(c.particles, [1, 0, 2, 3]);
        let flipped = build(&hinge_cloth(1.0)).unwrap();
        let f = BendingConstraint::from_packed(&flipped.sets().bending.solve_order().next().unwrap().0);
        assert_eq!(c.rest_angle, -f.rest_angle);
    }

    #[test]
    fn flat_and_folded_rest_shapes() {
        let a = [0.0, 0.0, 0.0];
        let b = [1.0, 0.0, 0.0];
        assert_eq!(dihedral_angle(a, b, [0.3, 1.0, 0.0], [0.9, -2.0, 0.0]), 0.0);
        let up = dihedral_angle(a, b, [0.5, 1.0, 0.0], [0.5, -1.0, 1e-3]);
        let down = dihedral_angle(a, b, [0.5, 1.0, 0.0], [0.5, -1.0, -1e-3]);
        assert!(up != 0.0 && up == -down, "{up} {down}");
        let pi = std::f64::consts::PI;
        let nearly_shut = dihedral_angle(a, b, [0.5, 1.0, 0.0], [0.5, 1.0, 1e-3]);
        assert!(pi - nearly_shut.abs() < 2e-3, "{nearly_shut}");
    }

    #[test]
    fn a_flat_grid_has_zero_rest_angles_and_drops_pinned_hinges() {
        let g = crate::grid::GridDesc {
            resolution: [4, 3],
            size: [1.0, 1.0],
            origin: [0.0; 3],
            plane: crate::grid::GridPlane::XZ,
        };
        let mut d = g.generate(&Limits::default()).unwrap().into_cloth(
            "sheet",
            crate::MassSpec::ParticleMass(1.0),
            Elasticity::RIGID,
            Elasticity::RIGID,
        );
        d.kinds.bending = hinge_cloth(0.0).kinds.bending;
        let m = build(&d).unwrap();
        // One constraint per edge shared by two triangles.
        let interior = crate::topology::MeshTopology::new(&d.triangles).interior.len();
        assert_eq!(m.sets().bending.len(), interior);
        assert!(!m.sets().bending.has_param(REST_ANGLE), "flat: every rest angle is 0");
        // Pin the whole bottom-left cell and its neighbours: hinges wholly inside are dropped.
        d.pins = vec![0, 1, 4, 5];
        let pinned = build(&d).unwrap();
        assert_eq!(pinned.sets().bending.len(), interior - 1, "only the diagonal 0–5 is all pinned");
    }

    #[test]
    fn each_rule_names_its_place() {
        // A zero-area wing.
        let mut d = hinge_cloth(0.0);
        d.positions[3] = [2.0, 0.0, 0.0];
        let e = build(&d).unwrap_err();
        assert_eq!((e.location.field, e.location.index), ("triangles", Some(1)));
        assert!(
            matches!(e.rule, Rule::ZeroAreaTriangle { a: 1, b: 0, c: 3, used_for: "bending", .. }),
            "{e}"
        );
        // Lower than MIN_HEIGHT is as good as flat.
        let mut d = hinge_cloth(0.0);
        d.positions[2] = [0.5, 5e-7, 0.0];
        let e = build(&d).unwrap_err();
        assert_eq!(e.location.index, Some(0));
        assert!(matches!(e.rule, Rule::ZeroAreaTriangle { a: 0, b: 1, c: 2, .. }), "{e}");
        // Coincident edge ends.
        let mut d = hinge_cloth(0.0);
        d.positions[1] = [1e-7, 0.0, 0.0];
        assert!(matches!(build(&d).unwrap_err().rule, Rule::CoincidentParticles { a: 0, b: 1, .. }));
        // No triangles.
        let d = ClothDesc { triangles: vec![], ..hinge_cloth(0.0) };
        let e = build(&d).unwrap_err();
        assert!(matches!(e.rule, Rule::MissingPrerequisite { feature: "bending", .. }), "{e}");
        // The material.
        let mut d = hinge_cloth(0.0);
        d.kinds.bending.as_mut().unwrap().damping = -1.0;
        assert_eq!(build(&d).unwrap_err().location.field, "bending_damping");
        d.kinds.bending.as_mut().unwrap().damping = f32::NAN;
        assert!(matches!(build(&d).unwrap_err().rule, Rule::NotFinite { .. }));
        let mut d = hinge_cloth(0.0);
        d.kinds.bending.as_mut().unwrap().elasticity =
            Elasticity::Compliance(Compliance::new(f32::MAX).unwrap());
        let e = build(&d).unwrap_err();
        assert_eq!(e.location.field, "bending_compliance");
        assert!(matches!(e.rule, Rule::TooLargeForTimeStep { what: "α/h²", .. }));
        let mut d = hinge_cloth(0.0);
        d.kinds.bending = Some(BendingDesc {
            elasticity: Elasticity::Stiffness(Stiffness::new(1e-30).unwrap()),
            damping: 1e30,
        });
        assert!(matches!(build(&d).unwrap_err().rule, Rule::TooLargeForTimeStep { what: "α·β/h", .. }));
    }

    #[test]
    fn a_single_triangle_or_a_doubled_one_has_nothing_to_bend() {
        let mut d = hinge_cloth(0.0);
        d.triangles.truncate(1);
        assert!(build(&d).unwrap().sets().bending.is_empty());
        let mut d = hinge_cloth(0.0);
        d.triangles = vec![[0, 1, 2], [1, 0, 2]];
        assert!(build(&d).unwrap().sets().bending.is_empty());
    }

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
            let angle = |x: [V3<f32>; 4]| dihedral_angle(x[0], x[1], x[2], x[3]);
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
            let rest = dihedral_angle(x[0], x[1], x[2], x[3]) as f32;
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

    /// A hinge folded flat, its wings and the end `a` on one line, all pinned but the end `b`:
    /// `∇_b` is 0 in exact arithmetic, so `b` cannot turn it, and it is skipped (the fuzz finding
    /// `immovable-flat-hinge`); with a wing free too it is projected.
    #[test]
    fn an_immovable_hinge_is_masked() {
        let x = [[0.75, 0.0, 0.02], [1.25, 0.25, 0.03], [0.5, 0.0, 0.02], [0.0, 0.0, 0.02f32]];
        let d = bending_delta(x, [0.0, 0.1, 0.0, 0.0], 0.0, 0.0, 0.0, None);
        assert!(!d.valid && d.dlambda == 0.0);
        let lanes = bending_delta(
            x.map(|p| p.map(f32x8::splat)),
            [0.0, 0.1, 0.0, 0.0].map(f32x8::splat),
            f32x8::splat(0.0),
            f32x8::splat(0.0),
            f32x8::splat(0.0),
            None,
        );
        assert_eq!(lanes.valid.to_bitmask(), 0);
        assert!(bending_delta(x, [0.0, 0.1, 0.1, 0.0], 0.0, 0.0, 0.0, None).valid);
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
