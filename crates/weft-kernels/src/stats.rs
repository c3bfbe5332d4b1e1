//! Step statistics per constraint kind (one [`KindStats`] per kind of the registry,
//! `weft_core::kinds`): degenerate lanes and residuals.

use weft_core::kinds::{Figure, PerKind};

/// `|C|` over a set of constraints after the last iteration: largest, sum and count, in the
/// kind's unit (m for distances and tethers, rad for bending, m³ for volume), and the same
/// relative to the constraint's scale where it has one (`|C|/L` for distances, `|C|/(p·V₀)` for
/// volume; 0 elsewhere). Reduced in a fixed order.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Residual {
    /// Largest `|C|`.
    pub max_abs: f32,
    /// Sum of `|C|`.
    pub sum_abs: f64,
    /// Largest `|C|` relative to the constraint's scale (dimensionless).
    pub max_rel: f32,
    /// Sum of the relative `|C|`.
    pub sum_rel: f64,
    /// Constraints counted.
    pub count: u64,
}

impl Residual {
    /// Counts one constraint with `|C| = value` and relative value `relative`.
    #[inline]
    pub fn add(&mut self, value: f32, relative: f32) {
        self.max_abs = self.max_abs.max(value);
        self.sum_abs += value as f64;
        self.max_rel = self.max_rel.max(relative);
        self.sum_rel += relative as f64;
        self.count += 1;
    }

    /// Both sets together (`self` first, for a fixed summation order).
    pub fn merge(self, other: Residual) -> Residual {
        Residual {
            max_abs: self.max_abs.max(other.max_abs),
            sum_abs: self.sum_abs + other.sum_abs,
            max_rel: self.max_rel.max(other.max_rel),
            sum_rel: self.sum_rel + other.sum_rel,
            count: self.count + other.count,
        }
    }

    /// Mean `|C|` (0 for an empty set).
    pub fn mean_abs(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.sum_abs / self.count as f64 }
    }

    /// Mean relative `|C|` (0 for an empty set).
    pub fn mean_rel(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.sum_rel / self.count as f64 }
    }

    /// One figure of the residual, as a kind's `stats.csv` column holds it.
    pub fn figure(&self, figure: Figure) -> f64 {
        match figure {
            Figure::MaxAbs => self.max_abs as f64,
            Figure::MeanAbs => self.mean_abs(),
            Figure::MaxRel => self.max_rel as f64,
        }
    }
}

/// What one time step did to one constraint kind.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct KindStats {
    /// Projections skipped as degenerate (no usable gradient), summed over the iterations.
    pub degenerate: u64,
    /// `|C|` after the last iteration, when asked for.
    pub residual: Option<Residual>,
}

impl KindStats {
    fn accumulate(&mut self, later: &KindStats) {
        self.degenerate += later.degenerate;
        if later.residual.is_some() {
            self.residual = later.residual;
        }
    }
}

/// What one time step did, per constraint kind (in registry order: the order the step solves
/// them) and with the contacts.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepStats {
    /// Each constraint kind: its degenerate projections and its residual (in the kind's unit:
    /// m for distances, relative = strain; rad for bending; m beyond the bound for tethers; m³
    /// for volume, relative to the target volume; particle self-collision has no residual, and
    /// its degenerate contacts are two particles closer than 1 µm, with no normal).
    pub kinds: PerKind<KindStats>,
    /// Surface self-collision: contacts, pushes and the guard's work, summed over the steps
    /// accumulated.
    pub surface: crate::surface_collision::SurfaceStats,
    /// Contacts with colliders.
    pub colliders: ColliderStats,
    /// Predictions and velocity rebuilds that would have overflowed `f32` and were not taken
    /// (the particle kept its state; see `crate::integrate`), summed over the steps
    /// accumulated.
    pub held: u64,
    /// Distance constraints left out at build because both their particles are pinned.
    pub dropped_at_build: usize,
}

/// What one time step did with the colliders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ColliderStats {
    /// Free particles deeper in a collider than half its thickness after the step (see
    /// `crate::collider`), when asked for (with the residuals); `Some(0)` for a scene without
    /// colliders.
    pub deep: Option<u64>,
    /// Particles the swept check moved back to where their path entered an analytic collider
    /// (see `crate::collider`), summed over the steps accumulated.
    pub swept: u64,
}

impl StepStats {
    /// Degenerate projections of every kind.
    pub fn degenerate(&self) -> u64 {
        self.kinds.iter().map(|(_, k)| k.degenerate).sum()
    }

    /// Accumulates the counters of another step (residuals: the later one wins).
    pub fn accumulate(&mut self, later: &StepStats) {
        for (kind, stats) in later.kinds.iter() {
            self.kinds[kind].accumulate(stats);
        }
        if later.colliders.deep.is_some() {
            self.colliders.deep = later.colliders.deep;
        }
        self.colliders.swept += later.colliders.swept;
        self.held += later.held;
        let (s, l) = (&mut self.surface, &later.surface);
        s.contacts += l.contacts;
        s.pushes += l.pushes;
        s.reverted += l.reverted;
        s.unresolved += l.unresolved;
        s.rebuilds += l.rebuilds;
        self.dropped_at_build = later.dropped_at_build;
    }
}
