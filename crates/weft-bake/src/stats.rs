//! The statistics file of a bake, `stats.csv`: its header, its rows, the quality measure behind
//! its last columns, and how often the costly columns are measured ([`StatsLevel`]).
//!
//! Two of a frame's measures cost as much as several time steps: the residual pass (every
//! constraint evaluated once more after the frame's last time step, and the particles deep in a
//! mesh collider counted) and the count of intersecting triangle pairs (a grid over every
//! triangle and an exact test of every close pair; several hundred ns per triangle, more than a
//! whole frame of a cloth stepped 5 times). They make the *full measure* of a frame. The largest
//! stretch (one pass over the stretch edges, a few per cent of a frame) and the substep counts are
//! in every row.

use std::sync::{Arc, LazyLock};

use weft_core::Model;
use weft_core::kinds::{Figure, KindId};

use crate::report::FrameStats;

/// How much a bake measures for `stats.csv` (`weft bake --stats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatsLevel {
    /// The full measure after every frame.
    Full,
    /// The full measure after the first frame, the last frame, and each frame that ends at least
    /// [`LIGHT_SWEEPS`] constraint sweeps (time steps × iterations) after the last fully
    /// measured one; the other rows leave those columns empty. Its cost stays within a few per
    /// cent of the steps' whatever the substep count.
    #[default]
    Light,
    /// No full measure: the residual, deep-particle and intersecting-pair columns are empty.
    Off,
}

impl StatsLevel {
    /// The level's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            StatsLevel::Full => "full",
            StatsLevel::Light => "light",
            StatsLevel::Off => "off",
        }
    }
}

/// The constraint sweeps (time steps × iterations) after which [`StatsLevel::Light`] measures a
/// frame fully again: about 20 times what the full measure costs on a cloth with bending (a
/// sweep over stretch, shear and bending constraints costs about a tenth of the count of
/// intersecting pairs), so the measure adds about 5 % to the steps. A frame of 5 time steps × 1
/// iteration is measured every 48 frames; a frame of 256 is measured every frame.
pub const LIGHT_SWEEPS: u64 = 240;

/// Which frames a bake measures fully: the [`StatsLevel`], and the sweeps stepped since the last
/// fully measured frame (kept in a checkpoint, so a resumed bake measures the same frames).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cadence {
    level: StatsLevel,
    since: u64,
}

impl Cadence {
    /// A bake's cadence from its start; `since` is what a checkpoint recorded when resuming.
    pub fn new(level: StatsLevel, since: u64) -> Self {
        Cadence { level, since }
    }

    /// Whether frame `frame` of `frames`, stepped with `sweeps` sweeps, is measured fully.
    pub fn due(&self, frame: u32, frames: u32, sweeps: u64) -> bool {
        match self.level {
            StatsLevel::Full => true,
            StatsLevel::Off => false,
            StatsLevel::Light => frame == 1 || frame == frames || self.since + sweeps >= LIGHT_SWEEPS,
        }
    }

    /// Records a frame stepped with `sweeps` sweeps, measured fully or not.
    pub fn record(&mut self, measured: bool, sweeps: u64) {
        self.since = if measured { 0 } else { self.since.saturating_add(sweeps) };
    }

    /// The sweeps stepped since the last fully measured frame (what a checkpoint records).
    pub fn since(&self) -> u64 {
        self.since
    }
}

/// Name of the per-frame statistics file in the output directory.
pub const STATS_FILE: &str = "stats.csv";

/// Header line of [`STATS_FILE`].
///
/// Per frame: its number, its time in s, the time steps it kept (`substeps`: the scene's, or, baking
/// to a strain tolerance, the count chosen for it), the degenerate projections of all its time
/// steps, then, after its last time step, the residual columns of each constraint kind in registry
/// order (`weft_core::kinds`; each kind's [`KindInfo::columns`](weft_core::kinds::KindInfo::columns)): for the distance constraints the
/// largest and mean `|C|` (m) and the largest strain `|C|/L`; for bending the largest and mean
/// `|C|` (rad); for tethers the largest excess beyond a bound (m); for volume the largest
/// `|V − p·V₀| / (p·V₀)`. A kind the scene does not have reads 0.
/// Then the quality of the cloth after the frame ([`weft_geometry::intersections`], [`weft_geometry::stretch`]): the intersecting
/// non-adjacent triangle pairs (within each cloth and between cloths), and the largest stretch of
/// a stretch edge, `|x_a − x_b|/L − 1` (0.01 = 1 % longer than at rest; 0 if none is longer).
/// Then the free particles deeper in a collider than half its thickness after the frame
/// ([`weft_kernels::collider`]; 0 without colliders), and the surface self-collision's contacts,
/// particles moved back and pairs left over the frame.
///
/// The residual columns, the intersecting pairs and the deep particles are empty in the rows of
/// frames not measured fully ([`StatsLevel`]).
pub static STATS_HEADER: LazyLock<String> = LazyLock::new(|| {
    let kinds = KindId::ALL.iter().flat_map(|k| k.info().columns).map(|c| c.name);
    let columns: Vec<&str> = ["frame", "time_s", "substeps", "degenerate"]
        .into_iter()
        .chain(kinds)
        .chain(QUALITY_COLUMNS)
        .collect();
    columns.join(",")
});

/// The columns of [`STATS_FILE`] after the constraint kinds' (see [`STATS_HEADER`]).
const QUALITY_COLUMNS: [&str; 6] = [
    "intersecting_triangle_pairs",
    "max_stretch",
    "collider_deep_particles",
    "surface_contacts",
    "surface_reverted",
    "surface_unresolved",
];

/// What the quality columns of [`STATS_FILE`] measure: every cloth's triangles (model indices) and
/// stretch edges with their rest lengths, gathered once per bake, and the buffers of the
/// measure, kept from frame to frame.
pub struct Quality {
    stretch: Arc<StretchEdges>,
    positions: Vec<[f32; 3]>,
    intersections: weft_geometry::intersections::IntersectionCounter,
}

impl Quality {
    /// The measure of `model`'s cloths (their triangles and stretch edges as built). Its lists
    /// are sized up front: grown by doubling, they would leave what they outgrew in the heap.
    pub fn new(model: &Model) -> Self {
        let mut triangles = Vec::with_capacity(model.cloths().iter().map(|c| c.triangles.len()).sum());
        for c in model.cloths() {
            let offset = c.particles.start as u32;
            triangles.extend(c.triangles.iter().map(|t| t.map(|i| i + offset)));
        }
        let intersections = weft_geometry::intersections::IntersectionCounter::new(triangles);
        Quality { stretch: Arc::new(StretchEdges::new(model)), positions: Vec::new(), intersections }
    }

    /// The stretch edges the measure reads, shared (a bake's writer measures the largest
    /// stretch in line, where the solver takes every core; see `crate::output`).
    pub(crate) fn stretch_edges(&self) -> Arc<StretchEdges> {
        Arc::clone(&self.stretch)
    }

    /// Triangles measured, over every cloth.
    pub fn triangle_count(&self) -> usize {
        self.intersections.triangles().len()
    }

    /// The largest stretch `|x_a − x_b|/L − 1` of a stretch edge of the model now (0 if none is
    /// longer than at rest), dimensionless: what a bake to a strain tolerance holds to
    /// `max_strain`.
    pub fn max_stretch(&mut self, model: &Model) -> f32 {
        copy_positions(model, &mut self.positions);
        self.stretch(&self.positions)
    }

    /// The largest stretch `|x_a − x_b|/L − 1` of a stretch edge at `positions` (m, one per
    /// particle of the model the measure was made for; 0 if none is longer than at rest).
    pub fn stretch(&self, positions: &[[f32; 3]]) -> f32 {
        self.stretch.max_stretch(positions)
    }

    /// The intersecting pairs of non-adjacent triangles at `positions` (m, one per particle of
    /// the model the measure was made for).
    pub fn intersections(&mut self, positions: &[[f32; 3]]) -> u64 {
        self.intersections.count(positions)
    }

    /// `(intersecting pairs of non-adjacent triangles, largest stretch |x_a − x_b|/L − 1 of a
    /// stretch edge)` of the model now (the model the measure was made for).
    pub fn measure(&mut self, model: &Model) -> (u64, f32) {
        copy_positions(model, &mut self.positions);
        (self.intersections.count(&self.positions), self.stretch(&self.positions))
    }
}

/// Every cloth's stretch edges (model indices, in the distance constraints' solve order) and
/// their rest lengths (m): what the largest stretch of a row is measured over.
#[derive(Debug)]
pub(crate) struct StretchEdges {
    edges: Vec<[u32; 2]>,
    rest: Vec<f32>,
}

impl StretchEdges {
    /// The stretch edges of `model` as built. The lists are sized up front (see [`Quality::new`]).
    fn new(model: &Model) -> Self {
        let stretch = model.report().stretch;
        let (mut edges, mut rest) = (Vec::with_capacity(stretch), Vec::with_capacity(stretch));
        for (packed, _) in model.sets().distance.solve_order() {
            let c = weft_core::kinds::distance::DistanceConstraint::from_packed(&packed);
            if c.kind == weft_core::kinds::distance::DistanceKind::Stretch {
                edges.push(c.particles);
                rest.push(c.rest_length);
            }
        }
        StretchEdges { edges, rest }
    }

    /// The largest stretch `|x_a − x_b|/L − 1` of an edge at `positions` (m; 0 if none is longer
    /// than at rest), in parallel on the current pool (the same value for any pool).
    pub(crate) fn max_stretch(&self, positions: &[[f32; 3]]) -> f32 {
        weft_geometry::stretch::max_stretch(positions, &self.edges, &self.rest)
    }
}

/// Copies `model`'s particle positions (m) into `buffer`: what the measures read, and what a bake
/// hands its writer after each frame.
pub(crate) fn copy_positions(model: &Model, buffer: &mut Vec<[f32; 3]>) {
    buffer.clear();
    buffer.extend(model.particles().positions().iter().map(|p| [p[0], p[1], p[2]]));
}

/// One row of [`STATS_FILE`], with its line break. Numbers are written in Rust's shortest
/// round-trip form, so the file is a function of the simulation only.
pub fn stats_row(f: &FrameStats) -> String {
    // An empty field for a frame not measured fully.
    fn field<T: std::fmt::Debug>(value: Option<T>) -> String {
        value.map_or_else(String::new, |v| format!("{v:?}"))
    }
    let mut row = format!("{},{:?},{},{}", f.frame, f.time, f.substeps, f.step.degenerate());
    for (kind, stats) in f.step.kinds.iter() {
        for column in kind.info().columns {
            row.push(',');
            row.push_str(&match (column.value, stats.residual) {
                (_, None) => String::new(),
                (Figure::MaxAbs, Some(r)) => field(Some(r.max_abs)),
                (Figure::MeanAbs, Some(r)) => field(Some(r.mean_abs())),
                (Figure::MaxRel, Some(r)) => field(Some(r.max_rel)),
            });
        }
    }
    let s = &f.step.surface;
    let quality = format!(
        ",{},{:?},{},{},{},{}\n",
        field(f.intersections),
        f.max_stretch,
        field(f.step.colliders.deep),
        s.contacts,
        s.reverted,
        s.unresolved
    );
    row + &quality
}

/// The whole text of [`STATS_FILE`] for these frames: [`STATS_HEADER`], then one
/// [`stats_row`] per frame.
pub fn stats_csv(per_frame: &[FrameStats]) -> String {
    let mut s = format!("{}\n", *STATS_HEADER);
    for f in per_frame {
        s.push_str(&stats_row(f));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_kernels::{Residual, StepStats};

    #[test]
    fn stats_rows_are_exact() {
        let residual = Residual { max_abs: 0.5, sum_abs: 0.75, max_rel: 0.25, sum_rel: 0.5, count: 3 };
        let mut step = StepStats::default();
        step.kinds[KindId::Distance] = weft_kernels::KindStats { degenerate: 2, residual: Some(residual) };
        step.kinds[KindId::Bending].degenerate = 1;
        let rows = [FrameStats {
            frame: 1,
            time: 0.1,
            substeps: 16,
            step,
            intersections: Some(4),
            max_stretch: 0.125,
        }];
        // Kinds the frame measured and the scene lacks read 0; what it did not measure is empty.
        for kind in KindId::ALL.iter().filter(|&&k| k != KindId::Distance) {
            step.kinds[*kind].residual = Some(Residual::default());
        }
        step.colliders.deep = Some(0);
        let measured = FrameStats { frame: 2, step, ..rows[0] };
        let unmeasured = FrameStats { frame: 3, step: StepStats::default(), intersections: None, ..rows[0] };
        // The kinds' columns after distance's three: empty (not measured) or 0.0.
        let others = KindId::ALL.iter().flat_map(|k| k.info().columns).count() - 3;
        let (empty, zero) = (",".repeat(others), ",0.0".repeat(others));
        assert_eq!(
            stats_csv(&[rows[0], measured, unmeasured]),
            format!(
                "{}\n1,0.1,16,3,0.5,0.25,0.25{empty},4,0.125,,0,0,0\n\
                 2,0.1,16,3,0.5,0.25,0.25{zero},4,0.125,0,0,0,0\n\
                 3,0.1,16,0,,,{empty},,0.125,,0,0,0\n",
                *STATS_HEADER
            )
        );
    }

    #[test]
    fn the_header_lists_the_kinds_columns_in_registry_order() {
        let header: Vec<&str> = STATS_HEADER.split(',').collect();
        assert_eq!(header[..4], ["frame", "time_s", "substeps", "degenerate"]);
        assert_eq!(header[header.len() - QUALITY_COLUMNS.len()..], QUALITY_COLUMNS);
        let kinds: Vec<&str> = KindId::ALL.iter().flat_map(|k| k.info().columns).map(|c| c.name).collect();
        assert_eq!(header[4..header.len() - QUALITY_COLUMNS.len()], kinds);
        // The distance constraints' columns come first, as they always have.
        assert_eq!(kinds[..3], ["distance_max_abs_c_m", "distance_mean_abs_c_m", "distance_max_strain"]);
        let mut unique = header.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), header.len(), "column names are unique");
    }

    #[test]
    fn light_statistics_measure_every_light_sweeps() {
        let mut cadence = Cadence::new(StatsLevel::Light, 0);
        let measured: Vec<u32> = (1..=100)
            .filter(|&frame| {
                let due = cadence.due(frame, 100, 5);
                cadence.record(due, 5);
                due
            })
            .collect();
        assert_eq!(measured, [1, 49, 97, 100]);
        let (full, off) = (Cadence::new(StatsLevel::Full, 0), Cadence::new(StatsLevel::Off, 0));
        assert!((1..=100).all(|f| full.due(f, 100, 1) && !off.due(f, 100, 1_000)));
        // Many sweeps per frame: every frame.
        let big = Cadence::new(StatsLevel::Light, 0);
        assert!(big.due(2, 100, LIGHT_SWEEPS));
    }
}
