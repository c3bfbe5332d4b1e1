//! # weft-reference — the XPBD time step, written to be read
//!
//! This crate is the executable specification of weft's time step. It does exactly what the
//! fast solver in `weft-kernels` does — same model, same order, same `f32` formulas — but plainly:
//! an array of particle records with [`glam::Vec3`], one constraint at a time, no SIMD, no
//! threads. It shares no code with the kernels, so when the property tests find the two agree they
//! have compared two different programs, not one program with itself.
//!
//! ## XPBD in one page
//!
//! Units are SI: m, kg, s. Each particle has a position `x` (m), a velocity `v` (m/s) and an
//! inverse mass `w = 1/m` (1/kg); `w = 0` marks a pinned particle, which no constraint can move.
//!
//! **Constraints.** A constraint is a function `C(x)` of some particle positions that is zero when
//! it is satisfied. For a distance constraint between particles `a` and `b` with rest length `L`:
//!
//! ```text
//! C = |x_b − x_a| − L                      (m)
//! ∇_b C = n,  ∇_a C = −n,  n = (x_b − x_a) / |x_b − x_a|
//! ```
//!
//! **Compliance.** Position-based dynamics (PBD) moves the particles straight onto `C = 0`, so a
//! material's softness depends on the time step and the iteration count. XPBD gives every
//! constraint a *compliance* `α`, the inverse of its stiffness, with real units (m/N for a
//! distance; `α = 0` is rigid), and a Lagrange multiplier `λ` accumulated over the iterations of
//! a time step `h`. With `α̃ = α/h²` the update is
//!
//! ```text
//! Δλ = (−C − α̃·λ) / (Σᵢ wᵢ·|∇Cᵢ|² + α̃)        λ += Δλ        xᵢ += wᵢ·∇Cᵢ·Δλ
//! ```
//!
//! For a distance constraint `|∇Cᵢ| = 1`, so the denominator is `w_a + w_b + α̃`.
//!
//! **Units of λ.** `α̃·λ` is subtracted from `C`, a length, and `α̃` is in (m/N)/s² = m/kg, so
//! `λ` is in kg·m. `λ/h²` is then the force the constraint applied during the step, in N: the
//! multiplier is an impulse times a time step. A stretched distance constraint has `λ < 0`.
//!
//! **Damping.** A constraint may also have a damping `β` (N·s/m). With `γ = α·β/h` (no unit) the
//! numerator loses `γ·∇C·(x − x_prev)`, the constraint's rate of change over the step, and the
//! denominator's mass term is scaled by `1 + γ`. `β = 0` gives `γ = 0`, plain XPBD.
//!
//! **One time step** of `h = 1/(fps·substeps)` seconds ([`ReferenceSolver::step`]):
//!
//! 1. every free particle: `v += h·g`, `x_prev = x`, `d = h·v`, `x += d` (pinned ones stay,
//!    `d = 0`); `d`, the displacement of the step, takes every later correction too;
//! 2. `λ = 0` for every constraint;
//! 3. `iterations` times, every constraint in solve order (colour by colour, then the serial
//!    list): compute `Δλ`, add it to `λ`, move the particles;
//! 4. every particle: `v = d/h` (`x − x_prev` without the rounding of `x`), then
//!    `v *= exp(−rate·h)` (global velocity damping).
//!
//! `h`, `1/h` and `1/h²` come from [`weft_core::TimeStep`], computed in `f64` and rounded once,
//! so that the numbers below come out exact.
//!
//! **Degenerate constraints.** When two particles of a distance constraint come closer than
//! [`MIN_LENGTH`](weft_core::kinds::distance::MIN_LENGTH) (1 µm), `n` is undefined; when they are
//! farther apart than [`MAX_LENGTH`](weft_core::kinds::distance::MAX_LENGTH) (10⁹ m, or at a
//! non-finite distance), a correction could overflow. Either way the projection is skipped
//! (`Δλ = 0`) and counted in [`ReferenceStepStats::degenerate`]. Finite input never produces a
//! non-finite position.
//!
//! ## The worked example
//!
//! One end pinned at 0, the other 1 kg at 2 m, rest length 1 m, `h = 0.1 s`, no gravity. With
//! `α = 0.01 m/N`, `α̃ = 0.01/0.1² = 1`, `C = 1`, so `Δλ = −1/(1 + 1) = −0.5` and the free end
//! moves to 1.5 m. A second iteration sees `−C − α̃λ = −0.5 + 0.5 = 0`: `Δλ = 0`, it stays. A rigid
//! constraint (`α = 0`) gives `Δλ = −1` and puts the end at 1 m.
//!
//! ```
//! use weft_core::builder::{ClothDesc, EdgeSet, ModelBuilder};
//! use weft_core::limits::Limits;
//! use weft_core::settings::SimSettings;
//! use weft_core::units::{Compliance, Elasticity};
//! use weft_reference::ReferenceSolver;
//!
//! let settings = SimSettings {
//!     fps: 10.0, substeps: 1, iterations: 2, gravity: [0.0; 3], ..Default::default()
//! };
//! let mut builder = ModelBuilder::new(settings, Limits::default()).unwrap();
//! builder.add_cloth(&ClothDesc {
//!     name: "seed".into(),
//!     positions: vec![[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]],
//!     edge_sets: vec![EdgeSet {
//!         edges: vec![[0, 1]],
//!         rest_lengths: Some(vec![1.0]),
//!         elasticity: Elasticity::Compliance(Compliance::new(0.01).unwrap()),
//!         ..EdgeSet::stretch()
//!     }],
//!     pins: vec![0],
//!     ..ClothDesc::default()   // 1 kg per particle
//! }).unwrap();
//! let model = builder.build().unwrap();
//!
//! let mut solver = ReferenceSolver::from_model(&model);
//! let stats = solver.step();
//! assert_eq!(solver.positions()[1], [1.5, 0.0, 0.0]); // m
//! assert_eq!(solver.lambdas(), vec![-0.5]);             // kg·m: −0.5 then +0
//! assert_eq!(solver.velocities()[1], [-5.0, 0.0, 0.0]); // (1.5 − 2) m / 0.1 s
//! assert_eq!(solver.residual().max, 0.5);               // |C| in m
//! assert_eq!(stats.degenerate, 0);
//! ```

mod aero;
mod bending;
mod collider;
mod distance;
mod mesh_collider;
mod particle;
mod seam;
mod self_collision;
mod solver;
pub mod surface_collision;
mod tether;
mod volume;

pub use solver::{ReferenceSolver, ReferenceStepStats, Residual};
