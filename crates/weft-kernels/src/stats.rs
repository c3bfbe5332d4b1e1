//! Step statistics: degenerate lanes and constraint residuals.

/// `|C|` over a set of constraints: largest, sum and count (m), reduced in a fixed order.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Residual {
    /// Largest `|C|` in m.
    pub max_abs: f32,
    /// Sum of `|C|` in m.
    pub sum_abs: f64,
    /// Constraints counted.
    pub count: u64,
}

impl Residual {
    /// Counts one constraint with `|C| = value` (m).
    #[inline]
    pub fn add(&mut self, value: f32) {
        self.max_abs = self.max_abs.max(value);
        self.sum_abs += value as f64;
        self.count += 1;
    }

    /// Both sets together (`self` first, for a fixed summation order).
    pub fn merge(self, other: Residual) -> Residual {
        Residual {
            max_abs: self.max_abs.max(other.max_abs),
            sum_abs: self.sum_abs + other.sum_abs,
            count: self.count + other.count,
        }
    }

    /// Mean `|C|` in m (0 for an empty set).
    pub fn mean_abs(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.sum_abs / self.count as f64 }
    }
}

/// What one time step did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepStats {
    /// Constraint projections skipped as degenerate (particles too close or too far to give a
    /// direction), summed over the iterations of the step.
    pub degenerate: u64,
    /// Distance constraints left out at build because both their particles are pinned.
    pub dropped_at_build: usize,
    /// `|C|` of the distance constraints after the last iteration, when asked for.
    pub distance_residual: Option<Residual>,
}

impl StepStats {
    /// Accumulates the counters of another step (residual: the later one wins).
    pub fn accumulate(&mut self, later: &StepStats) {
        self.degenerate += later.degenerate;
        self.dropped_at_build = later.dropped_at_build;
        if later.distance_residual.is_some() {
            self.distance_residual = later.distance_residual;
        }
    }
}
