//! The statistics file of a bake, `stats.csv`: its header, its rows, and the quality measure
//! behind its last columns.

use weft_core::Model;

use crate::report::FrameStats;

/// Name of the per-frame statistics file in the output directory.
pub const STATS_FILE: &str = "stats.csv";

/// Header line of [`STATS_FILE`].
///
/// Per frame: its number, its time in s, the time steps it kept (`substeps`: the scene's, or, baking
/// to a strain tolerance, the count chosen for it), the degenerate projections of all its time
/// steps, then, after its last time step,
/// for the distance constraints the largest and mean `|C|` (m) and the largest strain `|C|/L`;
/// for bending the largest and mean `|C|` (rad); for tethers the largest excess beyond a bound
/// (m); for volume the largest `|V − p·V₀| / (p·V₀)`. A kind the scene does not have reads 0.
/// Then the quality of the cloth after the frame ([`weft_core::quality`]): the intersecting
/// non-adjacent triangle pairs (within each cloth and between cloths), and the largest stretch of
/// a stretch edge, `|x_a − x_b|/L − 1` (0.01 = 1 % longer than at rest; 0 if none is longer).
/// Last, the free particles deeper in a collider than half its thickness after the frame
/// ([`weft_kernels::collider`]; 0 without colliders).
pub const STATS_HEADER: &str = "frame,time_s,substeps,degenerate,distance_max_abs_c_m,distance_mean_abs_c_m,\
distance_max_strain,bending_max_abs_c_rad,bending_mean_abs_c_rad,tether_max_excess_m,volume_max_rel_error,\
intersecting_triangle_pairs,max_stretch,collider_deep_particles";

/// What the quality columns of [`STATS_FILE`] measure: every cloth's triangles (model indices) and
/// stretch edges with their rest lengths, gathered once per bake, and the buffers of the
/// measure, kept from frame to frame.
pub struct Quality {
    triangles: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    rest: Vec<f32>,
    positions: Vec<[f32; 3]>,
    intersections: weft_core::quality::IntersectionCounter,
}

impl Quality {
    /// The measure of `model`'s cloths (their triangles and stretch edges as built).
    pub fn new(model: &Model) -> Self {
        let mut triangles = Vec::new();
        for c in model.cloths() {
            let offset = c.particles.start as u32;
            triangles.extend(c.triangles.iter().map(|t| t.map(|i| i + offset)));
        }
        let (mut edges, mut rest) = (Vec::new(), Vec::new());
        for (packed, _) in model.distance().solve_order() {
            let c = weft_core::distance::DistanceConstraint::from_packed(&packed);
            if c.kind == weft_core::distance::DistanceKind::Stretch {
                edges.push(c.particles);
                rest.push(c.rest_length);
            }
        }
        Quality { triangles, edges, rest, positions: Vec::new(), intersections: Default::default() }
    }

    /// Triangles measured, over every cloth.
    pub fn triangle_count(&self) -> usize {
        self.triangles.len()
    }

    /// The largest stretch `|x_a − x_b|/L − 1` of a stretch edge of the model now (0 if none is
    /// longer than at rest), dimensionless: what a bake to a strain tolerance holds to
    /// `max_strain`.
    pub fn max_stretch(&mut self, model: &Model) -> f32 {
        self.positions.clear();
        self.positions.extend(model.particles().positions().iter().map(|p| [p[0], p[1], p[2]]));
        weft_core::quality::max_stretch(&self.positions, &self.edges, &self.rest)
    }

    /// The intersecting pairs of non-adjacent triangles at `positions` (m, one per particle of
    /// the model the measure was made for).
    pub fn intersections(&mut self, positions: &[[f32; 3]]) -> u64 {
        self.intersections.count(positions, &self.triangles)
    }

    /// `(intersecting pairs of non-adjacent triangles, largest stretch |x_a − x_b|/L − 1 of a
    /// stretch edge)` of the model now (the model the measure was made for).
    pub fn measure(&mut self, model: &Model) -> (u64, f32) {
        self.positions.clear();
        self.positions.extend(model.particles().positions().iter().map(|p| [p[0], p[1], p[2]]));
        (
            self.intersections.count(&self.positions, &self.triangles),
            weft_core::quality::max_stretch(&self.positions, &self.edges, &self.rest),
        )
    }
}

/// One row of [`STATS_FILE`], with its line break. Numbers are written in Rust's shortest
/// round-trip form, so the file is a function of the simulation only.
pub fn stats_row(f: &FrameStats) -> String {
    let r = |k: &weft_kernels::KindStats| k.residual.unwrap_or_default();
    let (d, b, t, v) = (r(&f.step.distance), r(&f.step.bending), r(&f.step.tethers), r(&f.step.volume));
    format!(
        "{},{:?},{},{},{:?},{:?},{:?},{:?},{:?},{:?},{:?},{},{:?},{}\n",
        f.frame,
        f.time,
        f.substeps,
        f.step.degenerate(),
        d.max_abs,
        d.mean_abs(),
        d.max_rel,
        b.max_abs,
        b.mean_abs(),
        t.max_abs,
        v.max_rel,
        f.intersections,
        f.max_stretch,
        f.step.colliders.deep.unwrap_or(0)
    )
}

/// The whole text of [`STATS_FILE`] for these frames: [`STATS_HEADER`], then one
/// [`stats_row`] per frame.
pub fn stats_csv(per_frame: &[FrameStats]) -> String {
    let mut s = format!("{STATS_HEADER}\n");
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
        let mut step = StepStats {
            distance: weft_kernels::KindStats { degenerate: 2, residual: Some(residual) },
            ..StepStats::default()
        };
        step.bending.degenerate = 1;
        let rows =
            [FrameStats { frame: 1, time: 0.1, substeps: 16, step, intersections: 4, max_stretch: 0.125 }];
        assert_eq!(
            stats_csv(&rows),
            format!("{STATS_HEADER}\n1,0.1,16,3,0.5,0.25,0.25,0.0,0.0,0.0,0.0,4,0.125,0\n")
        );
    }
}
