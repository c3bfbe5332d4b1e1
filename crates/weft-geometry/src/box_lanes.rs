//! Boxes in lanes: a run of axis-aligned boxes (m) kept as six `f32` columns, so that one box is
//! tested against [`LANES`] of the run with a handful of SIMD comparisons instead of one box at a
//! time.
//!
//! A run is filled in the order its user reads it (for the count of intersecting pairs, each
//! cell's boxes in order of their lowest x), and every run is followed by [`LANES`] *empty*
//! boxes (lowest corner `+∞`, highest `−∞`) that meet nothing and start after every box, so that
//! a read of [`LANES`] boxes from any place in a run stays in bounds and never reports a box of
//! the next run.

use wide::f32x8;

use crate::Aabb;

/// Boxes tested at once.
pub(crate) const LANES: usize = 8;

/// Runs of boxes as columns: lowest x, y, z, then highest x, y, z (m). Kept from one use to the
/// next (its columns are cleared, not freed).
#[derive(Default)]
pub(crate) struct BoxLanes {
    columns: [Vec<f32>; 6],
}

impl BoxLanes {
    /// Empties the columns.
    pub(crate) fn clear(&mut self) {
        self.columns.iter_mut().for_each(Vec::clear);
    }

    /// Appends the run of `boxes`, then [`LANES`] empty boxes: a column at a time.
    pub(crate) fn push_run<'b>(&mut self, boxes: impl ExactSizeIterator<Item = &'b Aabb> + Clone) {
        for k in 0..3 {
            self.columns[k].extend(boxes.clone().map(|b| b.min[k]).chain([f32::INFINITY; LANES]));
            self.columns[3 + k].extend(boxes.clone().map(|b| b.max[k]).chain([f32::NEG_INFINITY; LANES]));
        }
    }

    /// Of the [`LANES`] boxes from index `at` (a box of a run, or its first empty box), which meet
    /// `b` (bit `i` for box `at + i`, touching counts, as [`Aabb::overlaps`]), and whether the
    /// last of them starts at or before `b`'s end along x. Where the run is in order of its boxes'
    /// lowest x, the boxes after these can meet `b` only if that is so; the empty boxes after a
    /// run never do.
    #[inline]
    pub(crate) fn meeting(&self, at: usize, b: &Aabb) -> (u32, bool) {
        let column = |k: usize| {
            let lanes: [f32; LANES] =
                self.columns[k][at..at + LANES].try_into().expect("a run ends in LANES empty boxes");
            f32x8::from(lanes)
        };
        let starts = column(0).simd_le(f32x8::splat(b.max[0]));
        let mut meet = starts & f32x8::splat(b.min[0]).simd_le(column(3));
        for k in 1..3 {
            meet = meet
                & column(k).simd_le(f32x8::splat(b.max[k]))
                & f32x8::splat(b.min[k]).simd_le(column(3 + k));
        }
        (meet.to_bitmask(), starts.to_bitmask() >> (LANES - 1) != 0)
    }

    /// How many of the boxes from index `at` to the end of its run meet `b` and pass `test`
    /// (given each one's index), for a run in order of its boxes' lowest x: read [`LANES`] at a
    /// time while they start at or before `b`'s end along x.
    #[inline]
    pub(crate) fn count_meeting(&self, mut at: usize, b: &Aabb, test: impl Fn(usize) -> bool) -> u64 {
        let mut count = 0;
        loop {
            let (bits, more) = self.meeting(at, b);
            count += indices(bits, at).filter(|&i| test(i)).count() as u64;
            if !more {
                return count;
            }
            at += LANES;
        }
    }
}

/// The indices `at + i` for the bits `i` set in `bits`, lowest first.
#[inline]
pub(crate) fn indices(bits: u32, at: usize) -> impl Iterator<Item = usize> {
    let mut bits = bits;
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            at + i
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_at(x: f32, y: f32) -> Aabb {
        Aabb::new([x, y, 0.0], [x + 1.0, y + 1.0, 1.0])
    }

    #[test]
    fn meeting_agrees_with_overlaps_and_stops_at_the_run_end() {
        // A run of 11 boxes in order of lowest x, some off along y; then a second run.
        let run: Vec<Aabb> =
            (0..11).map(|i| unit_at(i as f32 * 0.5, if i % 3 == 0 { 5.0 } else { 0.0 })).collect();
        let mut lanes = BoxLanes::default();
        lanes.push_run(run.iter());
        lanes.push_run([unit_at(0.0, 0.0)].iter());
        let probe = Aabb::new([1.0, 0.5, 0.5], [2.0, 0.7, 0.5]);
        let mut found = Vec::new();
        let mut at = 0;
        loop {
            let (bits, more) = lanes.meeting(at, &probe);
            found.extend(indices(bits, at));
            if !more {
                break;
            }
            at += LANES;
        }
        let expected: Vec<usize> = (0..run.len()).filter(|&i| run[i].overlaps(&probe)).collect();
        assert_eq!(found, expected);
        assert!(!expected.is_empty());
        // Read from the last box of the run: the run's empty boxes meet nothing.
        assert_eq!(lanes.meeting(10, &unit_at(5.0, 0.0)), (1, false));
        assert_eq!(lanes.columns.map(|c| c.len()), [11 + LANES + 1 + LANES; 6]);
    }

    #[test]
    fn indices_list_the_set_bits() {
        assert_eq!(indices(0b1010_0001, 4).collect::<Vec<_>>(), vec![4, 9, 11]);
        assert_eq!(indices(0, 4).count(), 0);
    }
}
