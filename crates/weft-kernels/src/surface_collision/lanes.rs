//! The broad phase of a rebuild of the kept pairs ([`super::search`]), eight candidates at a
//! time: [`Lanes`], the listings of a grid of features' boxes laid out side by side by place,
//! and the query of one first feature over them ([`Lanes::near`]).
//!
//! # Why half-grown boxes find every pair once
//!
//! A pair is kept when the first feature's box grown by the reach meets the second's
//! (`FeatureBoxes::meet`, in `f32`). The grid lists every second feature's box grown by **half**
//! the reach and a little more ([`half_grown`]), and the first feature asks for the cells of its
//! own box grown the same way: two such boxes share a point whenever the exact test keeps the
//! pair, so a cell, and each listing stands for its pair from the first cell the two share only
//! (`weft_geometry::grid::Listing::first_shared`). So each pair the test keeps is found exactly
//! once, by the first feature, without a query box grown by the whole reach walking every
//! listing of its cells' buckets one at a time; and the test itself, on eight listings at once,
//! is the exact one, so the pairs are those of a query.

use weft_core::surface_collision::SurfaceCollision;
use weft_geometry::grid::Cell;
use weft_geometry::{Aabb, Grid};
use wide::{f32x8, i32x8};

use crate::team::Forks;

/// Listings tested at once.
const LANES: usize = 8;

/// Where a listing's start bits begin in its tag (`Lanes::ints[TAG]`); its feature is below.
const START_SHIFT: u32 = 29;

/// The tag's lane among [`Lanes::ints`], and the feature's first particle's.
const TAG: usize = 3;
const ENDS: usize = 4;

/// `b` grown by half of `reach` (m) and a little more, so that two features whose boxes meet
/// with the first grown by `reach` (in `f32`) have grown boxes that share a point, and so a cell
/// of a grid: the exact test rounds `b.min − reach` and `b.max + reach`, and the grown boxes
/// their own coordinates, each by at most `2⁻²⁴` of the largest magnitude `M` of a coordinate
/// of its box and the reach (or by `2⁻¹⁵⁰` among subnormals), which the extra
/// `(M + reach)·2⁻²¹ + f32::MIN_POSITIVE` on each box covers more than four times. A box with a
/// coordinate of infinite size is infinite (a big entry of the grid, tested against all).
pub(super) fn half_grown(b: &Aabb, reach: f32) -> Aabb {
    let most = b.min.iter().chain(&b.max).fold(0.0f32, |m, c| m.max(c.abs()));
    b.grown(0.5 * reach + (most + reach) * (1.0 / (1 << 21) as f32) + f32::MIN_POSITIVE)
}

/// The first feature of a query: its particles, its box grown by the reach and by half of it
/// ([`half_grown`]), and the least second feature it pairs with.
#[derive(Debug, Clone, Copy)]
pub(super) struct First {
    pub ends: [u32; 2],
    pub grown: Aabb,
    pub half: Aabb,
    pub from: u32,
}

/// The listings of a rebuild's edges' grid (their boxes [`half_grown`]) side by side, by place (`Grid::listings`), each with what the test of a
/// pair needs of its feature, padded by [`LANES`] for whole loads.
#[derive(Debug, Default)]
pub(crate) struct Lanes {
    /// The listing's cell along each axis; its edge (low bits) and start bits (from
    /// [`START_SHIFT`]: `Listing::starts`); the edge's two particles (their bits, compared for
    /// equality only).
    ints: [Vec<i32>; 6],
    /// The edge's box (m): its least corner, then its greatest.
    floats: [Vec<f32>; 6],
}

impl Lanes {
    /// The lanes of `grid`'s listings, edges with `particles` and `boxes`, lane by lane on
    /// `forks`.
    pub(super) fn fill(&mut self, grid: &Grid, (particles, boxes): (&[[u32; 2]], &[Aabb]), forks: Forks<'_>) {
        let listings = grid.listings();
        let n = listings.len() + LANES;
        forks.chunks_mut(&mut self.ints, 1, |k, lane| {
            let lane = &mut lane[0];
            lane.clear();
            // Sized once (extended, then padded, it would double).
            lane.reserve_exact(n);
            lane.extend(listings.iter().map(|l| match k {
                0..TAG => l.cell()[k],
                TAG => (l.entry() | l.starts() << START_SHIFT) as i32,
                _ => particles[l.entry() as usize][k - ENDS] as i32,
            }));
            lane.resize(n, 0);
        });
        forks.chunks_mut(&mut self.floats, 1, |k, lane| {
            let lane = &mut lane[0];
            lane.clear();
            lane.reserve_exact(n);
            lane.extend(listings.iter().map(|l| {
                let b = &boxes[l.entry() as usize];
                if k < 3 { b.min[k] } else { b.max[k - 3] }
            }));
            lane.resize(n, 0.0);
        });
    }

    /// Fills `near` (cleared first) with the edges `f ≥ first.from` of `grid` (whose lanes these
    /// are; `particles` and `boxes` theirs) that share no particle with `first` and whose boxes
    /// meet `first.grown`: those listed in the cells of `first.half` that stand for their pair
    /// with it there, then such big ones (in no particular order; a run's sort fixes it).
    pub(super) fn near(
        &self,
        grid: &Grid,
        first: &First,
        (particles, boxes): (&[[u32; 2]], &[Aabb]),
        near: &mut Vec<u32>,
    ) {
        let keeps = |f: u32| {
            let b = particles[f as usize];
            f >= first.from
                && !b.iter().any(|p| first.ends.contains(p))
                && first.grown.overlaps(&boxes[f as usize])
        };
        near.clear();
        let feature = |t: &i32| *t as u32 & ((1 << START_SHIFT) - 1);
        let listed = grid.for_each_cell_of(&first.half, |cell, starts, places| {
            // A bucket lists its features ascending: those from `first.from` on.
            let from =
                places.start + self.ints[TAG][places.clone()].partition_point(|t| feature(t) < first.from);
            for j in (from..places.end).step_by(LANES) {
                let mut bits = self.pairs(first, (cell, starts), j, places.end);
                while bits != 0 {
                    near.push(feature(&self.ints[TAG][j + bits.trailing_zeros() as usize]));
                    bits &= bits - 1;
                }
            }
        });
        if listed {
            near.extend(grid.big().iter().copied().filter(|&f| keeps(f)));
        } else {
            // A box of more cells than the grid lists meets every feature's.
            near.extend((0..particles.len() as u32).filter(|&f| keeps(f)));
        }
    }

    /// Of the listings `j..j + LANES` (those before `end`), as bits, those that stand for their
    /// feature's pair with `first` at `cell` (where `first`'s cells start along the axes
    /// `starts`), whose feature is from `first.from` on, shares no particle with it, and has a
    /// box that meets `first.grown`.
    #[inline]
    fn pairs(&self, first: &First, (cell, starts): (Cell, u32), j: usize, end: usize) -> u32 {
        let ints = |k: usize| {
            i32x8::from(<[i32; LANES]>::try_from(&self.ints[k][j..j + LANES]).expect("whole lanes"))
        };
        let floats = |k: usize| {
            f32x8::from(<[f32; LANES]>::try_from(&self.floats[k][j..j + LANES]).expect("whole lanes"))
        };
        let mut stands = i32x8::splat(-1);
        for (k, &c) in cell.iter().enumerate() {
            stands &= ints(k).simd_eq(i32x8::splat(c));
        }
        // The start bits (the tag's top three, the sign bit among them) with `starts` cover all
        // three axes; the feature (the low bits, below 2^29) is from `first.from` on.
        let tag = ints(TAG);
        let all_starts = i32x8::splat((0b111u32 << START_SHIFT) as i32);
        stands &= ((tag | i32x8::splat((starts << START_SHIFT) as i32)) & all_starts).simd_eq(all_starts);
        stands &= (tag & i32x8::splat((1 << START_SHIFT) - 1)).simd_gt(i32x8::splat(first.from as i32 - 1));
        let mut shared = i32x8::splat(0);
        for k in 0..2 {
            let b = ints(ENDS + k);
            shared |=
                b.simd_eq(i32x8::splat(first.ends[0] as i32)) | b.simd_eq(i32x8::splat(first.ends[1] as i32));
        }
        let mut meet = f32x8::splat(0.0).simd_eq(f32x8::splat(0.0));
        for k in 0..3 {
            meet &= f32x8::splat(first.grown.min[k]).simd_le(floats(3 + k));
            meet &= floats(k).simd_le(f32x8::splat(first.grown.max[k]));
        }
        let whole = if end - j >= LANES { u32::MAX } else { (1 << (end - j)) - 1 };
        (stands & !shared).to_bitmask() & meet.to_bitmask() & whole
    }
}

/// The first feature of a rebuild's query of edge `e` (paired with the edges after it), with the
/// edges' `boxes` and the reach `pad` (m).
pub(super) fn first_edge(sc: &SurfaceCollision, boxes: &[Aabb], pad: f32, e: usize) -> First {
    let b = &boxes[e];
    First { ends: sc.edges()[e], grown: b.grown(pad), half: half_grown(b, pad), from: e as u32 + 1 }
}
