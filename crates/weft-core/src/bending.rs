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
//! The gradients (Bridson, Marino and Fedkiw 2003, "Simulation of clothing with folds and
//! wrinkles"; Tamstorf and Grinspun 2013, "Discrete bending forces and their Jacobians"), with
//! `ê = e/|e|`:
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
//! do when the denominator or `Δλ` would not be finite.
//!
//! # Lanes
//!
//! Particle slots `[a, b, c, d]`; parameter columns [`REST_ANGLE`], [`COMPLIANCE`], [`DAMPING`]
//! (a column whose values are all zero, such as the rest angles of a flat sheet, is stored
//! empty); tag 0.

use crate::batches::{BatchLanes, Batches, Packed};
use crate::cloth::ClothContext;
use crate::distance;
use crate::error::{BuildError, Rule, widen};
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

/// Longest edge and highest wing (m) a kernel projects: the distance constraints'
/// [`MAX_LENGTH`](distance::MAX_LENGTH), 10⁹ m. It keeps `|n|²` (up to `MAX_SPAN⁴` = 10³⁶ m⁴)
/// finite in `f32`.
pub const MAX_SPAN: f32 = distance::MAX_LENGTH;

/// Bending constraints in SIMD batches: particle slots `[a, b, c, d]` (edge `a–b`, wings `c`, `d`).
pub type BendingBatches = Batches<4, 3>;

/// Read-only lanes of [`BendingBatches`], for kernels.
pub type BendingLanes<'a> = BatchLanes<'a, 4, 3>;

/// Field naming the bending material in errors (`bending_stiffness` is its alias).
const ELASTICITY_FIELD: &str = "bending_compliance";
/// Field naming the bending damping in errors.
const DAMPING_FIELD: &str = "bending_damping";

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
/// use weft_core::bending::dihedral_angle;
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
pub(crate) fn build(ctx: &ClothContext<'_>) -> Result<Vec<Packed<4, 3>>, BuildError> {
    let Some(desc) = ctx.desc.bending else { return Ok(Vec::new()) };
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
        let geometry = Hinge64::new(xa, xb, xc, xd);
        if let Some(problem) = geometry.problem() {
            let (wing, t) = match problem {
                HingeProblem::Flat(w) | HingeProblem::High(w, _) => (w, [t0, t1][w]),
                _ => (0, t0),
            };
            let corner = [c, d][wing];
            let rule = match problem {
                HingeProblem::ShortEdge(edge) => {
                    Rule::CoincidentParticles { a, b, distance: edge as f32, min: MIN_EDGE }
                }
                HingeProblem::LongEdge(edge) => {
                    Rule::TooFarApart { a, b, distance: edge as f32, max: MAX_SPAN }
                }
                HingeProblem::Flat(_) => {
                    let [p, q, r] = triangles[t];
                    let area =
                        triangle_area(positions[p as usize], positions[q as usize], positions[r as usize]);
                    Rule::ZeroAreaTriangle { a: p, b: q, c: r, area: area as f32, used_for: "bending" }
                }
                HingeProblem::High(_, height) => {
                    Rule::TooFarApart { a, b: corner, distance: height as f32, max: MAX_SPAN }
                }
            };
            return Err(ctx.error("triangles", Some(t), rule));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{ClothDesc, ModelBuilder};
    use crate::limits::Limits;
    use crate::settings::SimSettings;
    use crate::units::{Compliance, Stiffness};

    /// Two triangles `(0, 1, 2)` and `(1, 0, 3)` sharing the edge 0–1 along x; wing 3 lifted by
    /// `lift` m out of the plane.
    fn hinge(lift: f32) -> ClothDesc {
        ClothDesc {
            name: "hinge".into(),
            positions: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.5, -1.0, lift]],
            triangles: vec![[0, 1, 2], [1, 0, 3]],
            bending: Some(BendingDesc {
                elasticity: Elasticity::Compliance(Compliance::new(1e-3).unwrap()),
                damping: 0.0,
            }),
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
        let m = build(&hinge(1.0)).unwrap();
        let all: Vec<_> = m.bending().solve_order().collect();
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
        let mut d = hinge(1.0);
        d.triangles = vec![[1, 0, 2], [1, 0, 3]];
        let m = build(&d).unwrap();
        let c = BendingConstraint::from_packed(&m.bending().solve_order().next().unwrap().0);
        assert_eq!(c.particles, [1, 0, 2, 3]);
        let flipped = build(&hinge(1.0)).unwrap();
        let f = BendingConstraint::from_packed(&flipped.bending().solve_order().next().unwrap().0);
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
        d.bending = hinge(0.0).bending;
        let m = build(&d).unwrap();
        // One constraint per edge shared by two triangles.
        let interior = crate::topology::MeshTopology::new(&d.triangles).interior.len();
        assert_eq!(m.bending().len(), interior);
        assert!(!m.bending().has_param(REST_ANGLE), "flat: every rest angle is 0");
        // Pin the whole bottom-left cell and its neighbours: hinges wholly inside are dropped.
        d.pins = vec![0, 1, 4, 5];
        let pinned = build(&d).unwrap();
        assert_eq!(pinned.bending().len(), interior - 1, "only the diagonal 0–5 is all pinned");
    }

    #[test]
    fn each_rule_names_its_place() {
        // A zero-area wing.
        let mut d = hinge(0.0);
        d.positions[3] = [2.0, 0.0, 0.0];
        let e = build(&d).unwrap_err();
        assert_eq!((e.location.field, e.location.index), ("triangles", Some(1)));
        assert!(
            matches!(e.rule, Rule::ZeroAreaTriangle { a: 1, b: 0, c: 3, used_for: "bending", .. }),
            "{e}"
        );
        // Lower than MIN_HEIGHT is as good as flat.
        let mut d = hinge(0.0);
        d.positions[2] = [0.5, 5e-7, 0.0];
        let e = build(&d).unwrap_err();
        assert_eq!(e.location.index, Some(0));
        assert!(matches!(e.rule, Rule::ZeroAreaTriangle { a: 0, b: 1, c: 2, .. }), "{e}");
        // Coincident edge ends.
        let mut d = hinge(0.0);
        d.positions[1] = [1e-7, 0.0, 0.0];
        assert!(matches!(build(&d).unwrap_err().rule, Rule::CoincidentParticles { a: 0, b: 1, .. }));
        // No triangles.
        let d = ClothDesc { triangles: vec![], ..hinge(0.0) };
        let e = build(&d).unwrap_err();
        assert!(matches!(e.rule, Rule::MissingPrerequisite { feature: "bending", .. }), "{e}");
        // The material.
        let mut d = hinge(0.0);
        d.bending.as_mut().unwrap().damping = -1.0;
        assert_eq!(build(&d).unwrap_err().location.field, "bending_damping");
        d.bending.as_mut().unwrap().damping = f32::NAN;
        assert!(matches!(build(&d).unwrap_err().rule, Rule::NotFinite { .. }));
        let mut d = hinge(0.0);
        d.bending.as_mut().unwrap().elasticity = Elasticity::Compliance(Compliance::new(f32::MAX).unwrap());
        let e = build(&d).unwrap_err();
        assert_eq!(e.location.field, "bending_compliance");
        assert!(matches!(e.rule, Rule::TooLargeForTimeStep { what: "α/h²", .. }));
        let mut d = hinge(0.0);
        d.bending = Some(BendingDesc {
            elasticity: Elasticity::Stiffness(Stiffness::new(1e-30).unwrap()),
            damping: 1e30,
        });
        assert!(matches!(build(&d).unwrap_err().rule, Rule::TooLargeForTimeStep { what: "α·β/h", .. }));
    }

    #[test]
    fn a_single_triangle_or_a_doubled_one_has_nothing_to_bend() {
        let mut d = hinge(0.0);
        d.triangles.truncate(1);
        assert!(build(&d).unwrap().bending().is_empty());
        let mut d = hinge(0.0);
        d.triangles = vec![[0, 1, 2], [1, 0, 2]];
        assert!(build(&d).unwrap().bending().is_empty());
    }
}
