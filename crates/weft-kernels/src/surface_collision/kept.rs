//! The candidate pairs kept between steps ([`Kept`]) and the proof that a kept pair is too far
//! for a contact in a step ([`Kept::far_apart`]).

use weft_core::surface_collision::{SEARCH_REACH, SurfaceCollision};
use weft_geometry::proximity::{self, PairKind};

use super::{Pair, particles};
use crate::records::Record;

/// How much farther than a step's search the kept candidate pairs reach, as a multiple of the
/// mean edge: half of it is how far a particle may move, relative to the cloths' common drift,
/// before they are found again.
pub const KEEP_MARGIN: f32 = 0.5;

/// What the kept candidate pairs were found for: every pair whose boxes at `anchor` (each the
/// features' positions, the first grown by the search pad plus the margin) meet. While every
/// particle's positions at a step's start and prediction, less the drift since, are within half
/// the margin of its anchor, every pair the step's own broad phase would find is among them.
/// The pairs themselves are held by the search's chunks (`super::search::Chunk`), each the pairs
/// of its share of the features.
#[derive(Debug, Default)]
pub(super) struct Kept {
    pub(super) anchor: Vec<Record>,
    /// The sum of the shifts of the steps since the anchor, this step's excluded (m).
    pub(super) drift: [f64; 3],
    /// The data they were found for (`SurfaceCollision::key`); 0: none.
    pub(super) key: u64,
}

impl Kept {
    /// Whether the kept pairs hold every pair whose boxes meet, grown by at most the search pad,
    /// in a step from `prev` to `now` less `shift` (m).
    pub(super) fn covers(
        &self,
        sc: &SurfaceCollision,
        prev: &[Record],
        now: &[Record],
        shift: [f32; 3],
    ) -> bool {
        if self.key == 0 || self.key != sc.key() || self.anchor.len() != prev.len() {
            return false;
        }
        let reach = 0.5 * KEEP_MARGIN * sc.mean_edge() * 0.99 - 1e-6;
        let c = self.drift.map(|d| d as f32);
        let near = |x: Record, shift: [f32; 3], a: Record| {
            (0..3).all(|k| (x[k] - shift[k] - c[k] - a[k]).abs() <= reach)
        };
        sc.vertices().iter().all(|&i| {
            let (i, a) = (i as usize, self.anchor[i as usize]);
            near(prev[i], [0.0; 3], a) && near(now[i], shift, a)
        })
    }

    /// A lower bound of the distance between the features of `pair` at the anchor (m):
    /// `weft_geometry::proximity::separation`, rounded down to `f32`.
    pub(super) fn floor(&self, sc: &SurfaceCollision, pair: Pair) -> f32 {
        let points = particles(sc, pair).map(|i| {
            let a = self.anchor[i as usize];
            [a[0], a[1], a[2]].map(f64::from)
        });
        let d = proximity::separation(pair.0, points);
        let f = d as f32;
        if f as f64 > d { f.next_down() } else { f }
    }

    /// Each particle's wander in a step from `prev` to `now` (m, into `wander`): how far it is
    /// at `prev` from its anchor less the drift, and how far it moves to `now`. Returns the
    /// slack of [`Kept::far_apart`] that covers their rounding (m).
    pub(super) fn wander(
        &self,
        sc: &SurfaceCollision,
        prev: &[Record],
        now: &[Record],
        wander: &mut Vec<[f32; 2]>,
    ) -> f32 {
        wander.resize(prev.len(), [0.0; 2]);
        let c = self.drift.map(|d| d as f32);
        let mut most = c.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        for &i in sc.vertices() {
            let (x, y, a) = (prev[i as usize], now[i as usize], self.anchor[i as usize]);
            let off = [0, 1, 2].map(|k| x[k] - c[k] - a[k]);
            let step = [0, 1, 2].map(|k| y[k] - x[k]);
            wander[i as usize] = [length(off), length(step)];
            most = (0..3).fold(most, |m, k| m.max(x[k].abs()).max(y[k].abs()).max(a[k].abs()));
        }
        // The rounding of the differences and lengths above, four particles' worth, with room.
        64.0 * f32::EPSILON * (most + sc.search_pad())
    }
}

/// Whether `pair`, whose features were at least `floor` apart at the anchor (m), provably makes
/// no contact in the step whose [`Kept::wander`] is `wander` (with `slack`): each point has
/// since moved at most its wander from there (less the common drift, which moves every point
/// alike, so leaves distances as they are), and the distance at the step's start less the
/// motion of the step is what the contact test compares with the search's reach
/// (`SurfaceCollision::vertex_triangle_contact`), at most `SEARCH_REACH` times the largest
/// thickness.
pub(super) fn far_apart(
    sc: &SurfaceCollision,
    pair: Pair,
    floor: f32,
    wander: &[[f32; 2]],
    slack: f32,
) -> bool {
    let [off, step] = pair_wander(sc, pair, wander);
    floor - (off + step) > SEARCH_REACH * sc.max_thickness() + slack
}

/// Whether the guard may pass over `pair` (floor and wander as in [`far_apart`], the wander of
/// the step the guard checks): its features stay farther apart than the guard's gap throughout
/// the step, by a margin that each step of `weft_geometry::proximity::may_touch`'s conservative
/// advancement crosses at least 1/100 of, so that its answer, within its
/// `MAX_ADVANCES` (200) steps, is no. Passing over it is then the same answer without the
/// closest points.
pub(super) fn apart_through_step(
    sc: &SurfaceCollision,
    pair: Pair,
    floor: f32,
    wander: &[[f32; 2]],
    slack: f32,
) -> bool {
    const { assert!(proximity::MAX_ADVANCES >= 200) };
    let [off, step] = pair_wander(sc, pair, wander);
    // The distance through the step is at least `floor − off − step`; advancement moves on by
    // that less the gap over the relative motion, which is at most `step` (1 % for rounding).
    let margin = floor - (off + step) - sc.guard_gap() - slack;
    margin > 0.0 && 100.0 * margin >= 1.01 * step + slack
}

/// The most the points of each feature of `pair` are from their anchor (less the drift) at the
/// step's start, summed over the two features, and the same for their motion in the step (m).
fn pair_wander(sc: &SurfaceCollision, pair: Pair, wander: &[[f32; 2]]) -> [f32; 2] {
    let p = particles(sc, pair);
    let split = if pair.0 == PairKind::VertexTriangle { 1 } else { 2 };
    let most = |ids: &[u32], j: usize| ids.iter().fold(0.0f32, |m, &i| m.max(wander[i as usize][j]));
    let (a, b) = p.split_at(split);
    [most(a, 0) + most(b, 0), most(a, 1) + most(b, 1)]
}

/// The length of `v` (m).
fn length(v: [f32; 3]) -> f32 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}
