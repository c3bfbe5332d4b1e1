//! Simulation settings (`[simulation]` of a scene) and the derived time step.

use crate::error::{BuildError, Location, Rule};

/// Most frames one bake may have: `frames + 1` samples must fit a PC2 header's `i32`.
pub const MAX_FRAMES: u32 = i32::MAX as u32 - 1;

/// Scene-wide simulation settings, in SI units.
#[derive(Debug, Clone, PartialEq)]
pub struct SimSettings {
    /// Frames per second of the cache, in 1/s (`> 0`).
    pub fps: f64,
    /// Frames to bake (`≥ 1`); a cache holds `frames + 1` samples, sample 0 being the initial state.
    pub frames: u32,
    /// XPBD time steps per frame (`≥ 1`). With a [`tolerance`](Self::tolerance), the count the
    /// next frame is stepped with: a bake sets it frame by frame ([`crate::Model::set_substeps`]),
    /// starting from [`StrainTolerance::min_substeps`].
    pub substeps: u32,
    /// Solver iterations per time step (`≥ 1`).
    pub iterations: u32,
    /// Gravity in m/s².
    pub gravity: [f32; 3],
    /// Global velocity damping rate in 1/s (`≥ 0`): after each time step `v ← v·exp(−rate·h)`.
    pub velocity_damping: f32,
    /// Wind velocity keys (m/s at a time in s), interpolated linearly and held constant before
    /// the first key and after the last; empty means still air. Times increase strictly.
    pub wind: Vec<WindKey>,
    /// Density of the air in kg/m³ (`≥ 0`), for the drag and lift of cloths with aerodynamics.
    pub air_density: f32,
    /// `None`: every frame takes `substeps` time steps. `Some`: a bake chooses the count of each
    /// frame so that its largest stretch stays within a tolerance (see [`StrainTolerance`]).
    pub tolerance: Option<StrainTolerance>,
}

/// Baking to a tolerance: the substep count of each frame is chosen, between `min_substeps` and
/// `max_substeps`, so that the largest stretch of a stretch edge after the frame,
/// `|x_a − x_b|/L − 1` (`weft_geometry::stretch::max_stretch`), is at most `max_strain`.
///
/// How a bake chooses (weft-bake): a frame starts at the count the previous frame ended with
/// (the first at `min_substeps`); a frame that ends over the tolerance is stepped again from its
/// start with twice the count (at most `max_substeps`); after a frame that ends below
/// `max_strain ×` [`RELAX_BELOW`](StrainTolerance::RELAX_BELOW), the next one tries half the
/// count, and after one that ends below `max_strain ×`
/// [`EASE_BELOW`](StrainTolerance::EASE_BELOW) three quarters of it, rounded up (either at least
/// `min_substeps`). The choice depends on the state and the settings only, so a bake stays
/// deterministic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StrainTolerance {
    /// The largest stretch allowed at the end of a frame, dimensionless (`> 0`, finite; 0.02 is
    /// 2 % longer than at rest).
    pub max_strain: f32,
    /// Fewest time steps per frame (`≥ 1`).
    pub min_substeps: u32,
    /// Most time steps per frame (`≥ min_substeps`); a frame still over the tolerance at this
    /// count is kept as it is (and reported).
    pub max_substeps: u32,
}

impl StrainTolerance {
    /// A frame that ends below `max_strain × RELAX_BELOW` lets the next frame try half the count.
    pub const RELAX_BELOW: f32 = 0.25;

    /// A frame that ends below `max_strain × EASE_BELOW` (and not below
    /// [`RELAX_BELOW`](StrainTolerance::RELAX_BELOW)) lets the next frame try three quarters of
    /// the count: with a stretch that grows about as the square of the step, three quarters of
    /// the count ends below `max_strain × 0.5 × (4/3)² ≈ 0.89 max_strain`.
    pub const EASE_BELOW: f32 = 0.5;

    /// Solver iterations per time step of a scene in this mode that does not name `iterations`:
    /// more, smaller steps converge better than more iterations per step.
    pub const DEFAULT_ITERATIONS: u32 = 1;

    /// Solver iterations per time step of a scene in this mode that does not name `iterations`
    /// and has a cloth with surface self-collision: its contact search, once per step, costs
    /// several iterations' worth, so more iterations per step reach the tolerance in less time
    /// (docs/performance.md, "Iterations for self-colliding cloth").
    pub const SURFACE_ITERATIONS: u32 = 4;
}

impl Default for StrainTolerance {
    /// 2 % strain, between 4 and 128 substeps per frame.
    fn default() -> Self {
        StrainTolerance { max_strain: 0.02, min_substeps: 4, max_substeps: 128 }
    }
}

/// The wind at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindKey {
    /// Time in s from the start of the bake (`≥ 0`).
    pub time: f32,
    /// Wind velocity in m/s.
    pub velocity: [f32; 3],
}

/// Density of air at sea level and 20 °C, in kg/m³.
pub const AIR_DENSITY: f32 = 1.2;

impl Default for SimSettings {
    /// 60 fps, 1 frame, 4 substeps, 8 iterations, Earth gravity along −y, no damping, still air
    /// of density [`AIR_DENSITY`], no strain tolerance (a fixed substep count).
    fn default() -> Self {
        SimSettings {
            fps: 60.0,
            frames: 1,
            substeps: 4,
            iterations: 8,
            gravity: [0.0, -9.81, 0.0],
            velocity_damping: 0.0,
            wind: Vec::new(),
            air_density: AIR_DENSITY,
            tolerance: None,
        }
    }
}

impl SimSettings {
    /// Checks every rule: finite numbers, `fps > 0`, `frames, substeps, iterations ≥ 1`,
    /// `velocity_damping ≥ 0`, and a time step `h = 1/(fps·substeps)` that is positive in `f32`;
    /// with a [`tolerance`](Self::tolerance), `max_strain > 0`, `1 ≤ min_substeps ≤
    /// max_substeps`, `substeps` between them, and `h` positive in `f32` for every count between.
    pub fn validate(&self) -> Result<(), BuildError> {
        let err = |field, rule| Err(BuildError::new(Location::setting(field), rule));
        if !self.fps.is_finite() {
            return err("fps", Rule::NotFinite { value: self.fps.to_string() });
        }
        if self.fps <= 0.0 {
            return err("fps", Rule::NotPositive { value: self.fps });
        }
        if self.frames == 0 {
            return err("frames", Rule::Zero);
        }
        if self.frames > MAX_FRAMES {
            return err(
                "frames",
                Rule::TooLarge {
                    what: "frames",
                    requested: self.frames as u64,
                    limit: MAX_FRAMES as u64,
                    hint: "a PC2 cache counts its samples in an i32",
                },
            );
        }
        if let Some(t) = &self.tolerance {
            self.validate_tolerance(t)?;
        }
        if self.substeps == 0 {
            return err("substeps", Rule::Zero);
        }
        if self.iterations == 0 {
            return err("iterations", Rule::Zero);
        }
        self.validate_forces()?;
        check_time_step(self.fps, self.substeps, self.velocity_damping).or_else(|rule| err("fps", rule))
    }

    /// The rules of a strain tolerance (see [`SimSettings::validate`]).
    fn validate_tolerance(&self, t: &StrainTolerance) -> Result<(), BuildError> {
        let err = |field, rule| Err(BuildError::new(Location::setting(field), rule));
        if !t.max_strain.is_finite() {
            return err("max_strain", Rule::NotFinite { value: t.max_strain.to_string() });
        }
        if t.max_strain <= 0.0 {
            return err("max_strain", Rule::NotPositive { value: crate::error::widen(t.max_strain) });
        }
        if t.min_substeps == 0 {
            return err("min_substeps", Rule::Zero);
        }
        if t.max_substeps == 0 {
            return err("max_substeps", Rule::Zero);
        }
        if t.min_substeps > t.max_substeps {
            return err(
                "min_substeps",
                Rule::CountOrder {
                    value: t.min_substeps as u64,
                    relation: "more than",
                    other: "max_substeps",
                    limit: t.max_substeps as u64,
                },
            );
        }
        if !(t.min_substeps..=t.max_substeps).contains(&self.substeps) {
            return err(
                "substeps",
                Rule::OutsideRange {
                    value: self.substeps as u64,
                    min: t.min_substeps as u64,
                    max: t.max_substeps as u64,
                },
            );
        }
        // h is monotonic in the count: both ends representable means every count between is.
        // The longest step is out of range for an fps too small (or large), the shortest for
        // too many substeps.
        for (field, substeps) in [("fps", t.min_substeps), ("max_substeps", t.max_substeps)] {
            check_time_step(self.fps, substeps, self.velocity_damping).or_else(|rule| err(field, rule))?;
        }
        Ok(())
    }

    /// Gravity, velocity damping, air density and the wind's keys (see
    /// [`SimSettings::validate`]).
    fn validate_forces(&self) -> Result<(), BuildError> {
        let err = |field, rule| Err(BuildError::new(Location::setting(field), rule));
        if let Some(g) = self.gravity.iter().find(|g| !g.is_finite()) {
            return err("gravity", Rule::NotFinite { value: g.to_string() });
        }
        if !self.velocity_damping.is_finite() {
            return err("velocity_damping", Rule::NotFinite { value: self.velocity_damping.to_string() });
        }
        if self.velocity_damping < 0.0 {
            return err(
                "velocity_damping",
                Rule::Negative { value: crate::error::widen(self.velocity_damping) },
            );
        }
        if !self.air_density.is_finite() {
            return err("air_density", Rule::NotFinite { value: self.air_density.to_string() });
        }
        if self.air_density < 0.0 {
            return err("air_density", Rule::Negative { value: crate::error::widen(self.air_density) });
        }
        for (i, key) in self.wind.iter().enumerate() {
            let at =
                |rule| Err(BuildError::new(Location { cloth: None, field: "wind", index: Some(i) }, rule));
            if let Some(v) = std::iter::once(key.time).chain(key.velocity).find(|v| !v.is_finite()) {
                return at(Rule::NotFinite { value: v.to_string() });
            }
            if key.time < 0.0 {
                return at(Rule::Negative { value: crate::error::widen(key.time) });
            }
            if i > 0 && key.time <= self.wind[i - 1].time {
                return at(Rule::KeysOutOfOrder { time: key.time, previous: self.wind[i - 1].time });
            }
        }
        Ok(())
    }

    /// The XPBD time step `h = 1/(fps·substeps)` and its derived factors.
    pub fn time_step(&self) -> TimeStep {
        TimeStep::new(1.0 / (self.fps * self.substeps as f64), self.velocity_damping)
    }

    /// Most time steps one frame may take: `max_substeps` with a tolerance, else `substeps`.
    pub fn most_substeps(&self) -> u32 {
        self.tolerance.map_or(self.substeps, |t| t.max_substeps)
    }
}

/// Whether `fps·substeps` gives a step `h` such that `h` and `1/h²` are finite and positive in
/// `f32`.
fn check_time_step(fps: f64, substeps: u32, velocity_damping: f32) -> Result<(), Rule> {
    let h = TimeStep::new(1.0 / (fps * substeps as f64), velocity_damping);
    if h.h > 0.0 && h.h.is_finite() && h.inv_h2.is_finite() && h.inv_h2 > 0.0 {
        Ok(())
    } else {
        // fps·substeps so large (or small) that h or 1/h² leaves f32.
        Err(Rule::TimeStepOutOfRange { fps, substeps, h: h.h64 })
    }
}

/// One XPBD time step `h` and the factors the solver derives from it once per step.
///
/// The factors are computed in `f64` and rounded once to `f32`, so that for the worked example
/// (`α = 0.01 m/N`, `h = 0.1 s`) `α̃ = α·(1/h²)` is exactly `1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeStep {
    /// The step in s.
    pub h: f32,
    /// `1/h` in 1/s.
    pub inv_h: f32,
    /// `1/h²` in 1/s²: multiplies a compliance into `α̃`.
    pub inv_h2: f32,
    /// `h` in s, unrounded.
    pub h64: f64,
    /// Velocity scale after the step: `exp(−velocity_damping·h)`.
    pub velocity_scale: f32,
}

impl TimeStep {
    /// The factors for a step of `h` seconds and a damping rate in 1/s.
    pub fn new(h: f64, velocity_damping: f32) -> Self {
        TimeStep {
            h: h as f32,
            inv_h: (1.0 / h) as f32,
            inv_h2: (1.0 / (h * h)) as f32,
            h64: h,
            velocity_scale: (-(velocity_damping as f64) * h).exp() as f32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_time_step_is_exact() {
        let s = SimSettings { fps: 10.0, substeps: 1, ..SimSettings::default() };
        let t = s.time_step();
        assert_eq!(t.h, 0.1);
        assert_eq!(t.inv_h2, 100.0);
        assert_eq!(0.01f32 * t.inv_h2, 1.0);
        assert_eq!(t.velocity_scale, 1.0);
    }

    #[test]
    fn rejects_bad_settings() {
        let base = SimSettings::default();
        for (s, field) in [
            (SimSettings { fps: 0.0, ..base.clone() }, "fps"),
            (SimSettings { fps: -1.0, ..base.clone() }, "fps"),
            (SimSettings { fps: f64::NAN, ..base.clone() }, "fps"),
            (SimSettings { fps: 1e300, ..base.clone() }, "fps"),
            (SimSettings { substeps: 0, ..base.clone() }, "substeps"),
            (SimSettings { iterations: 0, ..base.clone() }, "iterations"),
            (SimSettings { frames: 0, ..base.clone() }, "frames"),
            (SimSettings { gravity: [0.0, f32::INFINITY, 0.0], ..base.clone() }, "gravity"),
            (SimSettings { velocity_damping: -1.0, ..base.clone() }, "velocity_damping"),
            (SimSettings { air_density: -1.0, ..base.clone() }, "air_density"),
            (
                SimSettings {
                    wind: vec![
                        WindKey { time: 1.0, velocity: [0.0; 3] },
                        WindKey { time: 1.0, velocity: [1.0; 3] },
                    ],
                    ..base.clone()
                },
                "wind",
            ),
        ] {
            let e = s.validate().unwrap_err();
            assert_eq!(e.location.field, field, "{e}");
        }
        assert!(base.validate().is_ok());
    }

    #[test]
    fn rejects_bad_tolerances() {
        let tol = StrainTolerance::default();
        let base = SimSettings { tolerance: Some(tol), ..SimSettings::default() };
        assert!(base.validate().is_ok());
        let with = |t: StrainTolerance| SimSettings { tolerance: Some(t), ..base.clone() };
        for (s, field, shown) in [
            (with(StrainTolerance { max_strain: 0.0, ..tol }), "max_strain", "must be greater than zero"),
            (with(StrainTolerance { max_strain: -0.1, ..tol }), "max_strain", "must be greater than zero"),
            (with(StrainTolerance { max_strain: f32::NAN, ..tol }), "max_strain", "NaN is not a finite"),
            (with(StrainTolerance { max_strain: f32::INFINITY, ..tol }), "max_strain", "inf is not a finite"),
            (with(StrainTolerance { min_substeps: 0, ..tol }), "min_substeps", "at least 1"),
            (with(StrainTolerance { max_substeps: 0, ..tol }), "max_substeps", "at least 1"),
            (
                with(StrainTolerance { min_substeps: 8, max_substeps: 4, ..tol }),
                "min_substeps",
                "8 is more than max_substeps = 4",
            ),
            (SimSettings { substeps: 200, ..base.clone() }, "substeps", "200 is outside 4..=128"),
            (
                SimSettings { fps: 1e15, ..with(StrainTolerance { max_substeps: u32::MAX, ..tol }) },
                "max_substeps",
                "outside what the solver can represent",
            ),
        ] {
            let e = s.validate().unwrap_err();
            assert_eq!(e.location.field, field, "{e}");
            assert!(e.to_string().contains(shown), "{e}");
        }
    }

    #[test]
    fn a_model_changes_its_substep_count_within_its_tolerance() {
        let tol = StrainTolerance { max_strain: 0.02, min_substeps: 2, max_substeps: 16 };
        let settings = SimSettings { substeps: 2, tolerance: Some(tol), ..SimSettings::default() };
        let mut builder = crate::ModelBuilder::new(settings, crate::limits::Limits::default()).unwrap();
        let particle =
            crate::ClothDesc { name: "p".into(), positions: vec![[0.0, 1.0, 0.0]], ..Default::default() };
        builder.add_cloth(&particle).unwrap();
        let mut model = builder.build().unwrap();
        model.set_substeps(16).unwrap();
        assert_eq!(model.settings().substeps, 16);
        assert_eq!(model.settings().time_step().h64, 1.0 / (60.0 * 16.0));
        let e = model.set_substeps(17).unwrap_err();
        assert_eq!(e.location.field, "substeps");
        assert_eq!(model.settings().substeps, 16, "unchanged");
    }
}
