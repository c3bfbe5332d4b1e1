//! One uniform grid for the spatial searches of weft: [`Grid`].
//!
//! It serves the broad phases of a time step (particle self-collision: points and the cells
//! around them; surface self-collision: boxes against boxes) and the binding of a render mesh
//! (boxes holding a point), so it is built for speed and reuse: `O(n)` builds, no allocation
//! once its buffers have grown, read-only queries that any number of threads may run at once,
//! and answers in an order fixed by the entries alone. (The count of intersecting triangle pairs
//! a bake measures sorts its triangles by cell instead, in memory fixed by their number: see
//! [`crate::intersections`].)
//!
//! # Cells
//!
//! A build cuts space into cubes of side `s` (m). A point `p` lies in the cell `c = ⌊p/s⌋`
//! along each axis, computed as `⌊(p as f64)·(1/s)⌋` and saturated to `i32` (a NaN coordinate
//! gives 0). The rule is monotone (`a ≤ b` gives `⌊a/s⌋ ≤ ⌊b/s⌋` after rounding), so two boxes
//! that share a point share a cell, and a box holds the cell of every point it holds. Two points
//! whose coordinates differ by at most `s·(1 − 2⁻²⁰)` along each axis lie in the same or
//! neighbouring cells: the `f64` rounding of a cell coordinate is below `2⁻²¹` cells short of the
//! saturation at `2³¹` cells from the origin (past it, cells merge, which only adds candidates;
//! the cells around one at an end of `i32` wrap around to the other end).
//!
//! # Entries and listings
//!
//! A build enters `n` entries, numbered `0..n` by the caller: points ([`Grid::build_points`]),
//! each listed in its cell, or boxes ([`Grid::build_boxes`]), each listed in every cell between
//! the cells of its two corners. A box spanning more than a given number of cells is *big*:
//! listed nowhere, it is part of every answer.
//! A box whose corners are reversed along some axis spans no cell and is listed nowhere.
//!
//! # Hashing and the counting sort
//!
//! A cell's *bucket* in a table of `T` buckets (a power of two, at least the listings) is
//! `(x + y·S_y + z·S_z) mod T`, with odd multipliers `S_y ≈ 0.7549·T` and `S_z ≈ 0.5698·T` (a
//! rank-1 lattice over the plastic number's fractions): cells next to each other along `x` get
//! buckets next to each other, so that the listings of nearby cells lie near each other in
//! memory, and a compact block of cells spreads over distinct buckets as far as the table allows.
//! A bucket may still hold listings of several cells; every query compares the cells themselves.
//!
//! The listings are counting-sorted by bucket, stably (an entry's listings in the order of its
//! cells, `x` slowest; ascending entry within a bucket): one pass over the entries to count, one
//! over the table to add up, one over the entries to place, `O(n + T)`. A table too large for a
//! cache is sorted in two such rounds, first by the bucket's top bits into 256 parts and then
//! each part by bucket, which gives the same order with far fewer cache misses. Every buffer is
//! kept from one build to the next, so a build no larger than an earlier one allocates nothing.
//!
//! # Queries and what they report
//!
//! Queries only read the grid, so any number of threads may run them at once. Each reports
//! every entry it stands for exactly once, in an order that depends on the entries and
//! the cell side alone (never on a thread count or on earlier builds):
//!
//! * [`Grid::near`]: the listings (by place, see [`Grid::entry_at`]) of the 27 cells around a
//!   cell, cell by cell (`x` slowest), ascending entry within a cell. Over point entries, this
//!   holds every point near enough (see *Cells*).
//! * [`Grid::for_each_in_box`] and [`Grid::in_box`]: the entries whose cells meet the cells of a
//!   box, each reported from the first cell it shares with the box (the lowest corner of the
//!   overlap of the two ranges of cells), then the big ones; [`Grid::in_box`] returns them
//!   ascending. A box spanning more cells than the grid has listings answers every entry, `0..n`.
//! * [`Grid::keep_in_box`]: those of [`Grid::for_each_in_box`] that a filter keeps, in its
//!   order, the filter's answers added up without a branch.
//! * [`Grid::for_each_at`]: the entries listed in the cell of a point, then the big ones.
//! * [`Grid::for_each_cell_of`]: for a caller's own loop over the listings ([`Grid::listings`],
//!   laid out by place): each cell of a box with the places of its bucket, where each listed
//!   entry whose cells meet the box's stands for that pair in one cell only
//!   ([`Listing::first_shared`]).
//!
//! What a user keeps of an answer it decides with an exact test of its own (a distance, a box
//! overlap), so its results never depend on the grid, only its cost does.

use crate::aabb::Aabb;

/// A cell's integer coordinates along `x`, `y`, `z` (module docs).
pub type Cell = [i32; 3];

/// Bits of a listing's tag that hold the entry; the three above say along which axes the
/// entry's cells start in the listing's cell.
const ID_BITS: u32 = 29;

/// The most entries one build takes.
pub const MAX_ENTRIES: usize = 1 << ID_BITS;

/// The smallest hash table, in buckets.
const MIN_TABLE: usize = 16;

/// Tables of at most this many buckets are sorted in one pass (module docs).
const DIRECT_TABLE: usize = 1 << 15;

/// A larger table is sorted in `2^PART_BITS` parts.
const PART_BITS: u32 = 8;

/// A range of cells that holds none.
const NO_CELLS: [Cell; 2] = [[1; 3], [0; 3]];

/// Bucket multipliers, as fractions of the table (module docs).
const STRIDES: [f64; 2] = [0.754_877_666_246_692_7, 0.569_840_290_998_053_3];

/// The hash of cells into a table of buckets (module docs).
#[derive(Debug, Clone, Copy, Default)]
struct Table {
    /// Buckets less one (the table is a power of two).
    mask: u32,
    /// Multipliers of `y` and `z`.
    strides: [u32; 2],
}

impl Table {
    /// A table of `buckets` buckets, a power of two.
    fn new(buckets: usize) -> Table {
        Table { mask: buckets as u32 - 1, strides: STRIDES.map(|f| (f * buckets as f64) as u32 | 1) }
    }

    #[inline]
    fn bucket(self, c: Cell) -> usize {
        let [sy, sz] = self.strides;
        ((c[0] as u32)
            .wrapping_add((c[1] as u32).wrapping_mul(sy))
            .wrapping_add((c[2] as u32).wrapping_mul(sz))
            & self.mask) as usize
    }
}

/// One entry listed in one cell ([`Grid::listings`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Listing {
    cell: Cell,
    /// The entry (low [`ID_BITS`] bits) and, above, bit `k` set when the entry's cells start
    /// at this cell along axis `k`.
    tag: u32,
}

impl Listing {
    fn id(self) -> u32 {
        self.tag & ((1 << ID_BITS) - 1)
    }

    /// The entry listed.
    #[inline]
    pub fn entry(self) -> u32 {
        self.id()
    }

    /// The cell it is listed in.
    #[inline]
    pub fn cell(self) -> Cell {
        self.cell
    }

    /// Bit `k` set when the entry's cells start at this cell along axis `k`.
    #[inline]
    pub fn starts(self) -> u32 {
        self.tag >> ID_BITS
    }

    /// Whether this listing stands for its entry's pair with a box, at `cell` whose bits
    /// `starts` say along which axes the box's cells start there ([`Grid::for_each_cell_of`]):
    /// the listing is of `cell`, and along each axis the entry's cells or the box's start there,
    /// so that `cell` is the first cell the two share (the lowest corner of the overlap of their
    /// two ranges of cells).
    #[inline]
    pub fn first_shared(self, cell: Cell, starts: u32) -> bool {
        self.cell == cell && (self.starts() | starts) == 0b111
    }
}

/// A uniform grid of point or box entries, hashed and counting-sorted (module docs). Build it
/// with [`Grid::build_points`] or [`Grid::build_boxes`]; the buffers are kept between builds.
#[derive(Debug, Clone, Default)]
pub struct Grid {
    /// `1/s`, s the cell side in m.
    inv_side: f64,
    /// Entries of the last build.
    entries: usize,
    /// The hash of cells into buckets.
    table: Table,
    /// Bucket `b` holds `listings[start[b]..start[b + 1]]`.
    start: Vec<u32>,
    listings: Vec<Listing>,
    /// The big entries, ascending.
    big: Vec<u32>,
    /// Each entry's cells during a build ([`NO_CELLS`] for a big one).
    ranges: Vec<[Cell; 2]>,
    /// The listings by part during the sort of a large table.
    spare: Vec<Listing>,
}

/// The cells in the range `r` (inclusive corners), `None` past `u64`.
fn cells_in(r: &[Cell; 2]) -> Option<u64> {
    (0..3).try_fold(1u64, |n, k| n.checked_mul((r[1][k] as i64 - r[0][k] as i64 + 1).max(0) as u64))
}

/// Calls `f` for every cell of `r`, `x` slowest.
#[inline]
fn for_cells(r: &[Cell; 2], mut f: impl FnMut(Cell)) {
    for x in r[0][0]..=r[1][0] {
        for y in r[0][1]..=r[1][1] {
            for z in r[0][2]..=r[1][2] {
                f([x, y, z]);
            }
        }
    }
}

/// Listings in a fixed order, for the counting sort.
trait Listed {
    /// Calls `f` with every listing, in order.
    fn each(&self, f: impl FnMut(Listing));
}

/// The listings of each entry's cells, in entry order, each entry's cells `x` slowest.
impl Listed for [[Cell; 2]] {
    #[inline]
    fn each(&self, mut f: impl FnMut(Listing)) {
        for (k, r) in self.iter().enumerate() {
            for_cells(r, |c| {
                let starts = (0..3).fold(0, |bits, a| bits | ((c[a] == r[0][a]) as u32) << a);
                f(Listing { cell: c, tag: k as u32 | starts << ID_BITS });
            });
        }
    }
}

impl Listed for [Listing] {
    #[inline]
    fn each(&self, f: impl FnMut(Listing)) {
        self.iter().copied().for_each(f);
    }
}

/// Counting-sorts `listed` (stable) by bucket into `out`: the buckets are those from `first`
/// on, one per element of `start` but the last, and their listings take the places from
/// `base` on. `start` is zero on entry; on return `start[i]` is the first place of bucket
/// `first + i`, and its last element the place after the last listing.
fn place(
    table: Table,
    (first, base): (usize, u32),
    start: &mut [u32],
    listed: &(impl Listed + ?Sized),
    out: &mut [Listing],
) {
    listed.each(|l| start[table.bucket(l.cell) - first + 1] += 1);
    start[0] = base;
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    listed.each(|l| {
        let i = table.bucket(l.cell) - first;
        out[start[i] as usize] = l;
        start[i] += 1;
    });
    // Each bucket's cursor ended at the next one's first place.
    let last = start.len() - 1;
    start.copy_within(0..last, 1);
    start[0] = base;
}

impl Grid {
    /// The cell of point `p` (m) in the last build's cells.
    #[inline]
    pub fn cell_of(&self, p: [f32; 3]) -> Cell {
        p.map(|c| (c as f64 * self.inv_side).floor() as i32)
    }

    /// The cells of box `b`: those of its two corners.
    #[inline]
    fn range_of(&self, b: &Aabb) -> [Cell; 2] {
        [self.cell_of(b.min), self.cell_of(b.max)]
    }

    #[inline]
    fn bucket(&self, c: Cell) -> usize {
        self.table.bucket(c)
    }

    /// The listings of bucket `b`, with the place of the first.
    #[inline]
    fn bucket_listings(&self, b: usize) -> (usize, &[Listing]) {
        let (from, to) = (self.start[b] as usize, self.start[b + 1] as usize);
        (from, &self.listings[from..to])
    }

    /// Enters `n` points, point `k` at `point(k)` (m), in cells of side `side` (m, `> 0`).
    ///
    /// # Panics
    /// If `n` exceeds [`MAX_ENTRIES`].
    pub fn build_points(&mut self, side: f64, n: usize, point: impl Fn(usize) -> [f32; 3]) {
        self.begin(side, n);
        for k in 0..n {
            let c = self.cell_of(point(k));
            self.ranges.push([c, c]);
        }
        self.sort(n as u64);
    }

    /// Enters `n` boxes, box `k` being `bounds(k)` (m), in cells of side `side` (m, `> 0`); a box
    /// spanning more than `max_cells` cells is big (module docs).
    ///
    /// # Panics
    /// If `n` exceeds [`MAX_ENTRIES`], or the listings `u32::MAX`.
    pub fn build_boxes(&mut self, side: f64, max_cells: u64, n: usize, bounds: impl Fn(usize) -> Aabb) {
        self.begin(side, n);
        let mut listed = 0u64;
        for k in 0..n {
            let r = self.range_of(&bounds(k));
            match cells_in(&r) {
                Some(cells) if cells <= max_cells => {
                    listed += cells;
                    self.ranges.push(r);
                }
                _ => {
                    self.big.push(k as u32);
                    self.ranges.push(NO_CELLS);
                }
            }
        }
        self.sort(listed);
    }

    /// Empties the grid for `n` entries in cells of side `side`.
    fn begin(&mut self, side: f64, n: usize) {
        assert!(n <= MAX_ENTRIES, "{n} entries: a grid takes at most {MAX_ENTRIES}");
        debug_assert!(side > 0.0, "a cell side of {side} m");
        self.inv_side = 1.0 / side;
        self.entries = n;
        self.big.clear();
        self.ranges.clear();
        self.ranges.reserve_exact(n);
    }

    /// Sizes the table for `listed` listings and counting-sorts the listings of `ranges` by
    /// bucket: in one pass for a table that fits a cache, else first by the top [`PART_BITS`]
    /// bits of the bucket, then part by part (the same order, with fewer cache misses).
    fn sort(&mut self, listed: u64) {
        let listed = u32::try_from(listed).expect("a grid holds at most u32::MAX listings");
        let buckets = (listed as usize).next_power_of_two().max(MIN_TABLE);
        let table = Table::new(buckets);
        self.table = table;
        // Grown to the size asked, not doubled: a build a little larger than the last would
        // otherwise hold twice the buffers it needs for the rest of a bake.
        self.start.clear();
        self.start.reserve_exact(buckets + 1);
        self.start.resize(buckets + 1, 0);
        self.listings.clear();
        self.listings.reserve_exact(listed as usize);
        self.listings.resize(listed as usize, Listing::default());
        if buckets <= DIRECT_TABLE {
            place(table, (0, 0), &mut self.start, &self.ranges[..], &mut self.listings);
            return;
        }
        let shift = buckets.trailing_zeros() - PART_BITS;
        let mut parts = [0u32; (1 << PART_BITS) + 1];
        for r in &self.ranges {
            for_cells(r, |c| parts[(table.bucket(c) >> shift) + 1] += 1);
        }
        for p in 1..parts.len() {
            parts[p] += parts[p - 1];
        }
        let spare = &mut self.spare;
        spare.clear();
        spare.reserve_exact(listed as usize);
        spare.resize(listed as usize, Listing::default());
        let mut next = parts;
        self.ranges[..].each(|l| {
            let p = table.bucket(l.cell) >> shift;
            spare[next[p] as usize] = l;
            next[p] += 1;
        });
        for p in 0..1 << PART_BITS {
            let own = &spare[parts[p] as usize..parts[p + 1] as usize];
            let start = &mut self.start[p << shift..=(p + 1) << shift];
            place(table, (p << shift, parts[p]), start, own, &mut self.listings);
        }
    }

    /// Entries of the last build.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Listings of the last build: each point once, each box once per cell (big ones none).
    pub fn listing_count(&self) -> usize {
        self.listings.len()
    }

    /// The entry of the listing at `place` (`0..listing_count()`): listings are stored bucket by
    /// bucket, so over points the places order the entries by bucket, nearby cells together.
    #[inline]
    pub fn entry_at(&self, place: usize) -> u32 {
        self.listings[place].id()
    }

    /// The cell of the listing at `place`.
    #[inline]
    pub fn cell_at(&self, place: usize) -> Cell {
        self.listings[place].cell
    }

    /// Calls `f` with the place of every listing in the 27 cells around `cell` (its own
    /// included): cell by cell, `x` slowest, ascending entry within a cell.
    pub fn near(&self, cell: Cell, mut f: impl FnMut(usize)) {
        for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    let around =
                        [cell[0].wrapping_add(dx), cell[1].wrapping_add(dy), cell[2].wrapping_add(dz)];
                    let (from, listings) = self.bucket_listings(self.bucket(around));
                    for (k, l) in listings.iter().enumerate() {
                        if l.cell == around {
                            f(from + k);
                        }
                    }
                }
            }
        }
    }

    /// Calls `f` with every entry whose cells meet those of box `b` (module docs): from the
    /// first cell each shares with `b`, cells `x` slowest, ascending within a cell; then the big
    /// entries, ascending. A box spanning more cells than there are listings gives `0..n`.
    pub fn for_each_in_box(&self, b: &Aabb, mut f: impl FnMut(u32)) {
        let q = self.range_of(b);
        if cells_in(&q).is_none_or(|cells| cells > self.listings.len() as u64) {
            (0..self.entries as u32).for_each(f);
            return;
        }
        for_cells(&q, |c| {
            // Which axes start at `c` for the query: an entry's first shared cell is `c` when,
            // along each axis, the query or the entry starts there.
            let at_start =
                (c[0] == q[0][0]) as u32 | ((c[1] == q[0][1]) as u32) << 1 | ((c[2] == q[0][2]) as u32) << 2;
            for l in self.bucket_listings(self.bucket(c)).1 {
                if l.cell == c && (at_start | l.starts()) == 0b111 {
                    f(l.id());
                }
            }
        });
        self.big.iter().copied().for_each(f);
    }

    /// Appends to `out` (not cleared) the entries of [`Grid::for_each_in_box`] for which `keep`
    /// is true, in the same order. `keep` is asked about every listing in the buckets of the
    /// box's cells, also those not reported there (listings of other cells hashed to the same
    /// bucket, and entries reported from another cell), and its answer is added up without a
    /// branch on it: a filter whose answers no branch predictor could guess (a box test, say)
    /// costs no mispredicted branches. So `keep` should be cheap, defined for every entry
    /// `0..entries()`, without side effects, and itself free of short-circuits (`&`, not `&&`).
    pub fn keep_in_box(&self, b: &Aabb, out: &mut Vec<u32>, keep: impl Fn(u32) -> bool) {
        let q = self.range_of(b);
        if cells_in(&q).is_none_or(|cells| cells > self.listings.len() as u64) {
            out.extend((0..self.entries as u32).filter(|&k| keep(k)));
            return;
        }
        for_cells(&q, |c| {
            // As in `for_each_in_box`.
            let at_start =
                (c[0] == q[0][0]) as u32 | ((c[1] == q[0][1]) as u32) << 1 | ((c[2] == q[0][2]) as u32) << 2;
            let listings = self.bucket_listings(self.bucket(c)).1;
            let base = out.len();
            out.resize(base + listings.len(), 0);
            let slots = &mut out[base..];
            let mut kept = 0;
            for l in listings {
                let id = l.id();
                let here = (l.cell[0] == c[0]) & (l.cell[1] == c[1]) & (l.cell[2] == c[2]);
                // Written in any case, and kept by moving past it.
                slots[kept] = id;
                kept += (here & ((at_start | l.starts()) == 0b111) & keep(id)) as usize;
            }
            out.truncate(base + kept);
        });
        out.extend(self.big.iter().copied().filter(|&k| keep(k)));
    }

    /// The entries of [`Grid::for_each_in_box`], ascending, into `out` (cleared first).
    pub fn in_box(&self, b: &Aabb, out: &mut Vec<u32>) {
        out.clear();
        self.for_each_in_box(b, |k| out.push(k));
        out.sort_unstable();
    }

    /// Calls `f` with every entry listed in the cell of point `p` (m), ascending, then with the
    /// big entries, ascending.
    pub fn for_each_at(&self, p: [f32; 3], mut f: impl FnMut(u32)) {
        let c = self.cell_of(p);
        for l in self.bucket_listings(self.bucket(c)).1 {
            if l.cell == c {
                f(l.id());
            }
        }
        self.big.iter().copied().for_each(&mut f);
    }

    /// Every listing, by place (bucket by bucket, ascending entry within a bucket), for a caller
    /// that lays out data of its own by place (see [`Grid::for_each_cell_of`]).
    pub fn listings(&self) -> &[Listing] {
        &self.listings
    }

    /// Calls `f(cell, starts, places)` for every cell of box `b`, `x` slowest: `starts` has bit
    /// `k` set when `b`'s cells start at `cell` along axis `k`, and `places` are those (into
    /// [`Grid::listings`]) of the cell's bucket, where the cell's listings lie among those of
    /// the other cells hashed there. The listing at a place stands for its entry's pair with
    /// `b` when [`Listing::first_shared`] says so, and then only there: over the cells of `b`,
    /// every listed entry whose cells meet `b`'s is stood for exactly once. Returns `false`,
    /// calling nothing, for a box spanning more cells than there are listings (it meets every
    /// entry, as [`Grid::for_each_in_box`] answers).
    pub fn for_each_cell_of(&self, b: &Aabb, mut f: impl FnMut(Cell, u32, std::ops::Range<usize>)) -> bool {
        let q = self.range_of(b);
        if cells_in(&q).is_none_or(|cells| cells > self.listings.len() as u64) {
            return false;
        }
        for_cells(&q, |c| {
            let starts = (0..3).fold(0, |bits, a| bits | ((c[a] == q[0][a]) as u32) << a);
            let bucket = self.bucket(c);
            f(c, starts, self.start[bucket] as usize..self.start[bucket + 1] as usize);
        });
        true
    }

    /// The big entries of the last build (spanning more cells than a build allows), ascending:
    /// listed in no cell, each is part of every answer.
    pub fn big(&self) -> &[u32] {
        &self.big
    }

    /// Buckets of the table.
    #[cfg(test)]
    fn bucket_count(&self) -> usize {
        self.start.len().saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator in `-0.5..0.5`.
    fn rng(mut seed: u32) -> impl FnMut() -> f32 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as f32 / u32::MAX as f32 - 0.5
        }
    }

    fn distance2(a: [f32; 3], b: [f32; 3]) -> f32 {
        (0..3).map(|k| (a[k] - b[k]) * (a[k] - b[k])).sum()
    }

    #[test]
    fn near_holds_every_close_point_once() {
        let mut r = rng(7);
        let points: Vec<[f32; 3]> = (0..2000).map(|_| [r() * 3.0, r() * 0.2, r() * 3.0]).collect();
        let mut grid = Grid::default();
        let side = 0.1;
        grid.build_points(side, points.len(), |k| points[k]);
        assert_eq!((grid.entries(), grid.listing_count()), (2000, 2000));
        let mut found = Vec::new();
        for (i, &p) in points.iter().enumerate() {
            found.clear();
            grid.near(grid.cell_of(p), |place| found.push(grid.entry_at(place)));
            let mut unique = found.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), found.len(), "a point reported twice");
            for (j, &q) in points.iter().enumerate() {
                if distance2(p, q) <= (side * side) as f32 * 0.999 {
                    assert!(found.contains(&(j as u32)), "{i} misses {j}");
                }
            }
        }
        // The places list every point once.
        let mut all: Vec<u32> = (0..grid.listing_count()).map(|k| grid.entry_at(k)).collect();
        all.sort_unstable();
        assert!(all.iter().copied().eq(0..2000));
    }

    /// Boxes of a crumpled sheet with a few long ones across it.
    fn boxes(seed: u32, n: usize) -> Vec<Aabb> {
        let mut r = rng(seed);
        (0..n)
            .map(|k| {
                let c = [r() * 2.0, r() * 0.3, r() * 2.0];
                let size = if k % 97 == 3 { 3.0 } else { 0.05 + 0.05 * r() };
                Aabb::around([c, [c[0] + size * r().abs(), c[1] + 0.05, c[2] + size * r().abs()]])
            })
            .collect()
    }

    #[test]
    fn box_queries_report_every_meeting_box_once_ascending() {
        let (b, q) = (boxes(3, 600), boxes(11, 300));
        let mut grid = Grid::default();
        grid.build_boxes(0.08, 64, b.len(), |k| b[k]);
        let mut found = Vec::new();
        for query in &q {
            grid.in_box(query, &mut found);
            assert!(found.windows(2).all(|w| w[0] < w[1]), "ascending, without repeats");
            for (k, other) in b.iter().enumerate() {
                if other.overlaps(query) {
                    assert!(found.binary_search(&(k as u32)).is_ok(), "{k} missed");
                }
            }
            let mut visited = Vec::new();
            grid.for_each_in_box(query, |k| visited.push(k));
            // The same entries in the same order, less those `keep` refuses.
            let mut kept = vec![7];
            grid.keep_in_box(query, &mut kept, |k| k % 3 != 0);
            let filtered: Vec<u32> = visited.iter().copied().filter(|k| k % 3 != 0).collect();
            assert_eq!(kept[1..], filtered[..], "appended, in the order of for_each_in_box");
            visited.sort_unstable();
            assert_eq!(visited, found);
        }
        // A box wider than the grid's listings: every entry.
        grid.in_box(&Aabb::new([-1e6; 3], [1e6; 3]), &mut found);
        assert!(found.iter().copied().eq(0..600));
        // A point: the boxes that hold it among those reported.
        for p in [[0.1, 0.0, 0.2], [-0.7, 0.1, 0.4]] {
            let mut at = Vec::new();
            grid.for_each_at(p, |k| at.push(k));
            for (k, other) in b.iter().enumerate() {
                if other.overlaps(&Aabb::new(p, p)) {
                    assert!(at.contains(&(k as u32)), "{k} holds {p:?}");
                }
            }
        }
    }

    /// Over the cells of each box, `first_shared` stands for each pair of it with a listed
    /// entry whose ranges of cells meet exactly once, and for no other; big entries are in none.
    #[test]
    fn listings_stand_for_every_entry_whose_cells_meet_once() {
        let b = boxes(5, 1500);
        let mut grid = Grid::default();
        grid.build_boxes(0.08, 64, b.len(), |k| b[k]);
        assert!(!grid.big().is_empty(), "the long boxes are big");
        let listings = grid.listings();
        let mut found = Vec::new();
        for (i, bi) in b.iter().enumerate() {
            assert!(grid.for_each_cell_of(bi, |cell, starts, places| {
                for l in &listings[places] {
                    if l.first_shared(cell, starts) && l.entry() > i as u32 {
                        found.push([i as u32, l.entry()]);
                    }
                }
            }));
        }
        let count = found.len();
        found.sort_unstable();
        found.dedup();
        assert_eq!(found.len(), count, "a pair stood for twice");
        let range = |k: usize| [grid.cell_of(b[k].min), grid.cell_of(b[k].max)];
        let meet = |p: [Cell; 2], q: [Cell; 2]| (0..3).all(|a| p[0][a] <= q[1][a] && q[0][a] <= p[1][a]);
        let mut want = Vec::new();
        for i in 0..b.len() {
            for j in i + 1..b.len() {
                if grid.big().binary_search(&(j as u32)).is_err() && meet(range(i), range(j)) {
                    want.push([i as u32, j as u32]);
                }
            }
        }
        assert!(want.len() > 1000, "{} pairs: a test of many", want.len());
        assert_eq!(found, want);
        assert!(!grid.for_each_cell_of(&Aabb::new([-1e6; 3], [1e6; 3]), |_, _, _| panic!("no cell")));
    }

    #[test]
    fn odd_coordinates_neither_panic_nor_lose_entries() {
        let b = [
            Aabb::new([f32::NAN; 3], [1.0; 3]),
            Aabb::new([-f32::INFINITY, 0.0, 0.0], [f32::INFINITY, 0.0, 0.0]),
            Aabb::new([1e30; 3], [1e30; 3]),
            Aabb::new([2.0; 3], [1.0; 3]),
            Aabb::new([0.0; 3], [0.5; 3]),
        ];
        let mut grid = Grid::default();
        grid.build_boxes(0.25, 64, b.len(), |k| b[k]);
        let mut found = Vec::new();
        for q in [b[1], Aabb::new([1e30; 3], [1e30; 3]), Aabb::new([0.2; 3], [0.3; 3])] {
            grid.in_box(&q, &mut found);
            assert!(found.windows(2).all(|w| w[0] < w[1]));
            assert!(found.contains(&1), "the infinite box is big, so in every answer");
            for (k, other) in b.iter().enumerate() {
                if other.overlaps(&q) {
                    assert!(found.contains(&(k as u32)), "{k} meets {q:?}");
                }
            }
        }
        assert!(!found.contains(&3), "a reversed box is listed nowhere");
        grid.build_points(1e-3, 3, |k| [[f32::NAN; 3], [1e30; 3], [-1e30; 3]][k]);
        let mut near = Vec::new();
        grid.near(grid.cell_of([1e30; 3]), |k| near.push(grid.entry_at(k)));
        // The cells saturate at the ends of `i32` and wrap around there.
        assert_eq!(near, [1, 2]);
    }

    /// Every listing sits in its cell's bucket, ascending entry within a bucket, and every cell
    /// of every listed entry is listed.
    fn check_layout(grid: &Grid, cells_of: impl Fn(u32) -> Vec<Cell>) {
        let mut listed = Vec::new();
        for b in 0..grid.bucket_count() {
            let (from, listings) = grid.bucket_listings(b);
            assert_eq!(from, grid.start[b] as usize);
            for (k, l) in listings.iter().enumerate() {
                assert_eq!(grid.bucket(l.cell), b);
                assert!(k == 0 || listings[k - 1].id() <= l.id(), "ascending within bucket {b}");
                listed.push((l.id(), l.cell));
            }
        }
        listed.sort_unstable();
        let mut want: Vec<(u32, Cell)> =
            (0..grid.entries() as u32).flat_map(|k| cells_of(k).into_iter().map(move |c| (k, c))).collect();
        want.sort_unstable();
        assert!(listed == want);
    }

    #[test]
    fn large_tables_are_sorted_in_parts_to_the_same_layout() {
        let mut r = rng(17);
        let points: Vec<[f32; 3]> = (0..100_000).map(|_| [r() * 20.0, r() * 20.0, r()]).collect();
        let mut grid = Grid::default();
        grid.build_points(0.05, points.len(), |k| points[k]);
        assert!(grid.bucket_count() > DIRECT_TABLE);
        check_layout(&grid, |k| vec![grid.cell_of(points[k as usize])]);
        let small = &points[..5000];
        grid.build_points(0.05, small.len(), |k| small[k]);
        assert!(grid.bucket_count() <= DIRECT_TABLE);
        check_layout(&grid, |k| vec![grid.cell_of(points[k as usize])]);
        let b = boxes(21, 40_000);
        grid.build_boxes(0.02, 64, b.len(), |k| b[k]);
        assert!(grid.bucket_count() > DIRECT_TABLE);
        check_layout(&grid, |k| {
            let mut cells = Vec::new();
            let r = grid.range_of(&b[k as usize]);
            if cells_in(&r).is_some_and(|n| n <= 64) {
                for_cells(&r, |c| cells.push(c));
            }
            cells
        });
    }

    #[test]
    fn a_build_no_larger_than_the_last_keeps_its_buffers() {
        let b = boxes(9, 500);
        let mut grid = Grid::default();
        grid.build_boxes(0.1, 64, b.len(), |k| b[k]);
        let capacity = (grid.listings.capacity(), grid.start.capacity(), grid.ranges.capacity());
        let pointer = grid.listings.as_ptr();
        grid.build_boxes(0.1, 64, 400, |k| b[k]);
        assert_eq!((grid.listings.capacity(), grid.start.capacity(), grid.ranges.capacity()), capacity);
        assert_eq!(grid.listings.as_ptr(), pointer);
    }
}
