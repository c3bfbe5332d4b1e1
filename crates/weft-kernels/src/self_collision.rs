//! Self-collision (see `weft_core::self_collision`): particle–particle contacts with a thickness
//! and friction, found through a spatial hash grid rebuilt each time step, projected by Jacobi
//! iterations so that the result does not depend on the thread count.
//!
//! **Search** (once per time step, after the prediction; three team phases):
//!
//! 1. every taking-part particle gets the bucket of its grid cell (cell size
//!    `SEARCH_SCALE × d_max`, bucket = a hash of the cell's integer coordinates modulo a
//!    power-of-two table of at least twice the particle count), in parallel chunks;
//! 2. the particles are counting-sorted by bucket, ascending index within a bucket (one item:
//!    `O(n)`), giving sorted cell lists;
//! 3. each particle's neighbour list, in parallel chunks: every particle of the 27 cells around
//!    its own that is within `SEARCH_SCALE × d_ij`, not excluded at rest, not pinned together
//!    with it; sorted ascending.
//!
//! **Projection** (after the other constraint kinds in every iteration; two team phases): for
//! each free particle `i` and each neighbour `j` (ascending) with `|x_i − x_j| < d_ij`:
//!
//! ```text
//! n    = (x_i − x_j)/|x_i − x_j|,  p = d_ij − |x_i − x_j|          (penetration, m)
//! Δp   = (x_i − x_prev,i) − (x_j − x_prev,j),  Δp_t = Δp − (Δp·n)·n (relative slip this step, m)
//! f    = Δp_t                  if |Δp_t| ≤ μ·p   (static: the slip is undone)
//!        Δp_t·μ·p/|Δp_t|        otherwise        (kinetic: at most μ·p of it)
//! Δx_i += w_i/(w_i + w_j) · (p·n − f)
//! ```
//!
//! then `x_i += ω/k · Δx_i` with `k` the active contacts and `ω` = `RELAXATION`. All
//! corrections are computed from the positions before the phase and applied in a second phase,
//! so the outcome is the same for any thread count. A pair closer than
//! [`MIN_LENGTH`] has no normal: it is skipped and counted as
//! degenerate. The body is scalar (a contact list per particle does not fill SIMD lanes without a
//! gather per neighbour), so both kernel paths run it and give the same bits.

use weft_core::distance::MIN_LENGTH;
use weft_core::self_collision::{RELAXATION, SEARCH_SCALE, SelfCollision};

use crate::records::Record;
use crate::shared::SharedSlice;
use crate::team::{self, Team};

/// Taking-part particles per work item of the search and projection phases.
pub const MEMBER_CHUNK: usize = 512;

/// Neighbour lists of one chunk of members: member `k` of the chunk has
/// `list[start[k]..start[k + 1]]`.
#[derive(Debug, Default, Clone)]
struct ChunkLists {
    start: Vec<u32>,
    list: Vec<u32>,
}

/// Buffers of the self-collision of a step, kept between steps.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    buckets: Vec<u32>,
    bucket_start: Vec<u32>,
    /// The next free place of each bucket during the counting sort.
    next: Vec<u32>,
    sorted: Vec<u32>,
    lists: Vec<ChunkLists>,
    delta: Vec<Record>,
}

impl Scratch {
    /// Sizes the buffers for `sc` (empty when no particle takes part); allocates only when the
    /// member count changed since the last call.
    pub(crate) fn fit(&mut self, sc: &SelfCollision) {
        let m = sc.members().len();
        if self.buckets.len() == m && self.lists.len() == m.div_ceil(MEMBER_CHUNK) {
            return;
        }
        let table = if m == 0 { 0 } else { (2 * m).next_power_of_two() };
        *self = Scratch {
            buckets: vec![0; m],
            bucket_start: vec![0; if m == 0 { 0 } else { table + 1 }],
            next: vec![0; table],
            sorted: vec![0; m],
            lists: vec![ChunkLists::default(); m.div_ceil(MEMBER_CHUNK)],
            delta: vec![[0.0; 4]; m],
        };
    }

    /// The buffers shared by a team.
    pub(crate) fn share(&mut self) -> SharedScratch<'_> {
        SharedScratch {
            buckets: SharedSlice::new(&mut self.buckets),
            bucket_start: SharedSlice::new(&mut self.bucket_start),
            next: SharedSlice::new(&mut self.next),
            sorted: SharedSlice::new(&mut self.sorted),
            lists: SharedSlice::new(&mut self.lists),
            delta: SharedSlice::new(&mut self.delta),
        }
    }
}

/// [`Scratch`] shared by the threads of a team.
#[derive(Clone, Copy)]
pub(crate) struct SharedScratch<'a> {
    buckets: SharedSlice<'a, u32>,
    bucket_start: SharedSlice<'a, u32>,
    next: SharedSlice<'a, u32>,
    sorted: SharedSlice<'a, u32>,
    lists: SharedSlice<'a, ChunkLists>,
    delta: SharedSlice<'a, Record>,
}

/// The grid's cell coordinates of `p` for cells of `1/inv_cell` m (saturating; NaN gives 0).
#[inline]
fn cell_of(p: &Record, inv_cell: f32) -> [i32; 3] {
    [0, 1, 2].map(|k| (p[k] * inv_cell).floor() as i32)
}

/// The bucket of a cell in a table of `mask + 1` buckets.
#[inline]
fn bucket_of(c: [i32; 3], mask: u32) -> u32 {
    ((c[0] as u32).wrapping_mul(73_856_093)
        ^ (c[1] as u32).wrapping_mul(19_349_663)
        ^ (c[2] as u32).wrapping_mul(83_492_791))
        & mask
}

fn sub(a: &Record, b: &Record) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// The range of members of chunk `c`.
fn chunk(c: usize, m: usize) -> std::ops::Range<usize> {
    c * MEMBER_CHUNK..((c + 1) * MEMBER_CHUNK).min(m)
}

/// The search of the module docs, as three phases of a team that every thread calls. `records`
/// are the positions after the prediction; the caller guarantees that nothing writes them during
/// the call and that no other code touches the scratch.
pub(crate) fn search_phases(
    team: &Team<'_>,
    sc: &SelfCollision,
    s: SharedScratch<'_>,
    records: SharedSlice<'_, Record>,
) {
    let members = sc.members();
    let m = members.len();
    if m == 0 {
        return;
    }
    let inv_cell = 1.0 / (SEARCH_SCALE * sc.max_thickness());
    let mask = ((2 * m).next_power_of_two() - 1) as u32;
    let chunks = m.div_ceil(MEMBER_CHUNK);
    team.for_each(chunks, |phase, c| {
        let range = chunk(c, m);
        // SAFETY: chunk `c` is claimed by one work item in this phase and the chunks are
        // disjoint; nothing writes the positions.
        let (out, x) = unsafe { (s.buckets.write(phase, range.clone()), records.read(phase)) };
        for (b, &i) in out.iter_mut().zip(&members[range]) {
            *b = bucket_of(cell_of(&x[i as usize], inv_cell), mask);
        }
    });
    team.for_each(1, |phase, _| {
        // SAFETY: a single work item in this phase; nothing else touches these buffers.
        let (buckets, start, next, sorted) = unsafe {
            (
                s.buckets.read(phase),
                s.bucket_start.write(phase, 0..mask as usize + 2),
                s.next.write(phase, 0..mask as usize + 1),
                s.sorted.write(phase, 0..m),
            )
        };
        start.fill(0);
        for &b in buckets {
            start[b as usize + 1] += 1;
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        next.copy_from_slice(&start[..start.len() - 1]);
        for (k, &b) in buckets.iter().enumerate() {
            sorted[next[b as usize] as usize] = members[k];
            next[b as usize] += 1;
        }
    });
    let (thickness, scale2) = (sc.thickness(), SEARCH_SCALE * SEARCH_SCALE);
    team.for_each(chunks, |phase, c| {
        let range = chunk(c, m);
        // SAFETY: the sort has finished (the previous phase); in this phase nothing writes the
        // sorted lists or the positions, and chunk `c`'s neighbour list is written only by the
        // work item that claimed `c`.
        let (start, sorted, x, out) = unsafe {
            (
                s.bucket_start.read(phase),
                s.sorted.read(phase),
                records.read(phase),
                &mut s.lists.write(phase, c..c + 1)[0],
            )
        };
        out.start.clear();
        out.list.clear();
        out.start.push(0);
        for &i in &members[range] {
            let xi = &x[i as usize];
            let begin = out.list.len();
            if xi[3] > 0.0 {
                let ci = cell_of(xi, inv_cell);
                let mut cells = [0u32; 27];
                for (k, cell) in cells.iter_mut().enumerate() {
                    let d = [k as i32 / 9 - 1, k as i32 / 3 % 3 - 1, k as i32 % 3 - 1];
                    let cj = [ci[0].wrapping_add(d[0]), ci[1].wrapping_add(d[1]), ci[2].wrapping_add(d[2])];
                    *cell = bucket_of(cj, mask);
                }
                cells.sort_unstable();
                let mut previous = None;
                for &b in &cells {
                    if previous == Some(b) {
                        continue;
                    }
                    previous = Some(b);
                    for &j in &sorted[start[b as usize] as usize..start[b as usize + 1] as usize] {
                        if j == i {
                            continue;
                        }
                        let d = thickness[i as usize].max(thickness[j as usize]);
                        let r = sub(xi, &x[j as usize]);
                        if dot(r, r) < scale2 * (d * d) && !sc.is_excluded(i as usize, j) {
                            out.list.push(j);
                        }
                    }
                }
                out.list[begin..].sort_unstable();
            }
            out.start.push(out.list.len() as u32);
        }
    });
}

/// The contact correction of particle `i` (module docs): the sum of its active contacts'
/// corrections in m and how many were active and how many degenerate. `x` and `prev` are
/// `[x, y, z, w]` and `[x, y, z, 0]` records in m.
pub fn particle_correction(
    sc: &SelfCollision,
    i: usize,
    neighbours: &[u32],
    x: &[Record],
    prev: &[Record],
) -> ([f32; 3], u32, u32) {
    let (xi, pi) = (&x[i], &prev[i]);
    let wi = xi[3];
    let (thickness, friction) = (sc.thickness(), sc.friction());
    let mut acc = [0.0f32; 3];
    let (mut active, mut degenerate) = (0u32, 0u32);
    for &j in neighbours {
        let j = j as usize;
        let (xj, pj) = (&x[j], &prev[j]);
        let d = thickness[i].max(thickness[j]);
        let r = sub(xi, xj);
        let r2 = dot(r, r);
        // The common case, a neighbour not in contact, needs no square root.
        let near = r2 < d * d;
        if !near {
            continue;
        }
        let dist = r2.sqrt();
        // Written so that NaN distances count as neither in contact nor usable.
        let (in_contact, has_normal) = (dist < d, dist > MIN_LENGTH);
        if !in_contact {
            continue;
        }
        if !has_normal {
            degenerate += 1;
            continue;
        }
        let inv = 1.0 / dist;
        let n = [r[0] * inv, r[1] * inv, r[2] * inv];
        let pen = d - dist;
        let (si, sj) = (sub(xi, pi), sub(xj, pj));
        let dp = [si[0] - sj[0], si[1] - sj[1], si[2] - sj[2]];
        let dn = dot(dp, n);
        let dt = [dp[0] - n[0] * dn, dp[1] - n[1] * dn, dp[2] - n[2] * dn];
        let slip = dot(dt, dt).sqrt();
        let limit = friction[i].max(friction[j]) * pen;
        let f = if slip > limit { limit / slip } else { 1.0 };
        let share = wi / (wi + xj[3]);
        for k in 0..3 {
            acc[k] += (n[k] * pen - dt[k] * f) * share;
        }
        active += 1;
    }
    (acc, active, degenerate)
}

/// One projection of every contact (module docs) as two phases of a team that every thread
/// calls; returns this thread's degenerate contacts. `records` are the positions, `displacement`
/// the displacements of the step (`[dx, dy, dz, 0]`, m; each correction is added to them too),
/// `prev` the positions at the start of the step; the caller guarantees that `displacement` has
/// one record per particle, that no other code touches `records`, `displacement` or the scratch
/// during the call, and nothing writes `prev`.
pub(crate) fn solve_phases(
    team: &Team<'_>,
    sc: &SelfCollision,
    s: SharedScratch<'_>,
    records: SharedSlice<'_, Record>,
    displacement: SharedSlice<'_, Record>,
    prev: SharedSlice<'_, Record>,
) -> u64 {
    let members = sc.members();
    let m = members.len();
    if m == 0 {
        return 0;
    }
    let chunks = m.div_ceil(MEMBER_CHUNK);
    let mut degenerate = 0u64;
    team.for_each(chunks, |phase, c| {
        let range = chunk(c, m);
        // SAFETY: in this phase nothing writes the positions, the previous positions or the
        // neighbour lists (the corrections go to `delta`), and chunk `c` of `delta` is written
        // only by the work item that claimed `c`.
        let (x, prev, lists, out) = unsafe {
            (records.read(phase), prev.read(phase), s.lists.read(phase), s.delta.write(phase, range.clone()))
        };
        let l = &lists[c];
        for (k, (&i, delta)) in members[range].iter().zip(out).enumerate() {
            let nb = &l.list[l.start[k] as usize..l.start[k + 1] as usize];
            let (acc, active, bad) = particle_correction(sc, i as usize, nb, x, prev);
            degenerate += bad as u64;
            *delta = if active > 0 {
                let scale = RELAXATION / active as f32;
                [acc[0] * scale, acc[1] * scale, acc[2] * scale, 1.0]
            } else {
                [0.0; 4]
            };
        }
    });
    team.for_each(chunks, |phase, c| {
        let range = chunk(c, m);
        // SAFETY: the corrections are complete (the previous phase) and not written in this
        // one.
        let delta = unsafe { s.delta.read(phase) };
        for (&i, dx) in members[range.clone()].iter().zip(&delta[range]) {
            if dx[3] != 0.0 {
                // SAFETY: `i` is a member of chunk `c` only (members are distinct), claimed by
                // one work item in this phase; no other item reads or writes record `i` or
                // displacement `i` (both arrays hold one record per particle).
                unsafe {
                    let r = records.load(phase, i);
                    records.store(phase, i, [r[0] + dx[0], r[1] + dx[1], r[2] + dx[2], r[3]]);
                    let d = displacement.load(phase, i);
                    displacement.store(phase, i, [d[0] + dx[0], d[1] + dx[1], d[2] + dx[2], d[3]]);
                }
            }
        }
    });
    degenerate
}

/// Finds the contacts of `positions` and projects them `sweeps` times, in one team of the current
/// rayon pool, as a time step does after its prediction (the benches and tests use it). `prev`
/// are the positions at the start of the step. Returns the degenerate contacts.
///
/// # Panics
/// If `positions` or `prev` do not hold one record per particle of the model `sc` belongs to.
pub fn solve(sc: &SelfCollision, positions: &mut [Record], prev: &[Record], sweeps: usize) -> u64 {
    assert_eq!(positions.len(), sc.thickness().len(), "positions belong to another model");
    assert_eq!(prev.len(), sc.thickness().len(), "previous positions belong to another model");
    let mut scratch = Scratch::default();
    scratch.fit(sc);
    let s = scratch.share();
    let mut moved = vec![[0.0; 4]; positions.len()];
    let displacement = SharedSlice::new(&mut moved);
    let records = SharedSlice::new(positions);
    // SAFETY: the phases only read the previous positions.
    let prev = unsafe { SharedSlice::read_only(prev) };
    team::run(
        |team| {
            search_phases(team, sc, s, records);
            (0..sweeps).map(|_| solve_phases(team, sc, s, records, displacement, prev)).sum::<u64>()
        },
        |a, b| a + b,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::builder::{ClothDesc, ModelBuilder};
    use weft_core::limits::Limits;
    use weft_core::self_collision::SelfCollisionDesc;
    use weft_core::{Model, SimSettings};

    fn model(positions: Vec<[f32; 3]>, pins: Vec<u32>, thickness: f32, friction: f32) -> Model {
        let mut b = ModelBuilder::new(SimSettings::default(), Limits::default()).unwrap();
        b.add_cloth(&ClothDesc {
            name: "c".into(),
            positions,
            pins,
            self_collision: Some(SelfCollisionDesc { thickness, friction }),
            ..ClothDesc::default()
        })
        .unwrap();
        b.build().unwrap()
    }

    fn records(m: &Model) -> Vec<Record> {
        m.particles().positions().to_vec()
    }

    #[test]
    fn a_free_particle_is_pushed_out_of_a_pinned_one() {
        // Rest distance 0.5 m > 0.1 m: a contact once the free particle is moved to 0.04 m.
        let m = model(vec![[0.0; 3], [0.5, 0.0, 0.0]], vec![0], 0.1, 0.0);
        let mut x = records(&m);
        x[1][0] = 0.04;
        let prev = x.clone();
        assert_eq!(solve(m.self_collision(), &mut x, &prev, 1), 0);
        assert_eq!(x[0], [0.0, 0.0, 0.0, 0.0], "the pin stays");
        // The whole 6 cm correction goes to the free particle (share w/(w + 0) = 1).
        assert!((x[1][0] - 0.1).abs() < 1e-7, "{:?}", x[1]);
        assert_eq!(x[1][3], 1.0, "lane 3 keeps the inverse mass");
    }

    #[test]
    fn friction_undoes_a_slip_smaller_than_mu_times_the_penetration() {
        // The free particle came 1 cm sideways, to (0.01, 0.08): 1.9 cm inside the 10 cm
        // thickness around the pin at 0, along n ≈ (0.124, 0.992). Without friction the push
        // along n only adds to its sideways offset (0.01 + 0.019·0.124 ≈ 0.0124 m); with ample
        // friction the slip's tangential part (≈ 0.0098 m) is undone and it ends near x ≈ 0.0026.
        let run = |mu: f32| {
            let m = model(vec![[0.0; 3], [0.0, 0.5, 0.0]], vec![0], 0.1, mu);
            let mut x = records(&m);
            let mut prev = x.clone();
            x[1] = [0.01, 0.08, 0.0, 1.0];
            prev[1] = [0.0, 0.08, 0.0, 0.0];
            solve(m.self_collision(), &mut x, &prev, 1);
            x[1]
        };
        let (free, stuck) = (run(0.0), run(10.0));
        assert!(free[0] > 0.012, "{free:?}");
        assert!(stuck[0] < 0.003, "{stuck:?}");
        // Without friction it ends on the thickness sphere (1e-6 m: f32 rounding of a few
        // operations); the friction correction runs along the tangent plane, so never inside it.
        let d = |x: Record| (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt();
        assert!((d(free) - 0.1).abs() < 1e-6, "{free:?}");
        assert!(d(stuck) >= 0.1, "{stuck:?}");
    }

    #[test]
    fn the_same_bits_for_any_pool() {
        let mut seed = 12345u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        let positions: Vec<[f32; 3]> = (0..3000).map(|_| [rnd(), rnd() * 0.5, rnd()]).collect();
        let m = model(positions, vec![0, 7], 0.03, 0.2);
        let prev = records(&m);
        let mut runs = Vec::new();
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut x = prev.clone();
            for r in &mut x {
                r[1] *= 0.9; // squeeze: many contacts
            }
            pool.install(|| solve(m.self_collision(), &mut x, &prev, 4));
            runs.push(x.iter().flat_map(|r| r.map(f32::to_bits)).collect::<Vec<u32>>());
        }
        assert_ne!(runs[0], prev.iter().flat_map(|r| r.map(f32::to_bits)).collect::<Vec<u32>>());
        assert!(runs[1] == runs[0] && runs[2] == runs[0]);
    }
}
