//! A cloth that lies unfolded, proven free of intersecting triangle pairs without looking for
//! them: what lets [`IntersectionCounter`](crate::intersections::IntersectionCounter) answer 0
//! for a sheet as generated, draped without folds or blowing in the wind, in time linear in its
//! triangles, where the pair search costs as much as a few time steps.
//!
//! # The certificate
//!
//! Seen along a coordinate axis (that coordinate dropped, which is exact), a cloth lies unfolded
//! when
//!
//! 1. every triangle keeps the same turning sense, none of them seen edge-on (the exact sign of
//!    its 2D orientation, the same for all, never zero);
//! 2. its boundary is one loop: taking each directed edge of a triangle with `+1` and its reverse
//!    with `−1`, the edges left over (the *net* boundary) each occur once and join into a single
//!    cycle through distinct particles ([`Outline::of`], which depends on the triangles alone);
//! 3. that loop, seen along the axis, is a simple polygon: two edges of it that are not
//!    consecutive have no point in common (exact 2D tests). Two consecutive ones then meet only
//!    at their shared corner: where the loop turns straight back at a corner `b` (from `a b` to
//!    `b c`), `c` lies on `a b` or `a` on `b c`, so the edge after `b c` or the one before
//!    `a b` meets the other, and these are not consecutive in a loop of four or more edges (a
//!    loop of three that turned back would have no area, while the triangles within it have
//!    some).
//!
//! Then no two triangles sharing no corner have a point in common, so the count is 0. Why: for
//! a point `q` of the plane off every projected edge, the number of projected triangles that
//! hold `q`, each counted with its turning sense, is the winding number of the projected net
//! boundary around `q` (the boundary of a sum of triangles is the sum of their boundaries).
//! With every sense the same and one simple loop, that number is 0 or 1: no such point lies in
//! two triangles, so no two projected triangles overlap in an open set. Two that share no
//! corner and touch without overlapping meet in a point `p` on an edge or at a corner of each.
//! Near `p`, the triangles across an edge of one of them (or around its corner) would overlap
//! the other, unless that edge is a boundary edge. But next to a boundary edge, on its far
//! side, the winding number is 0, so no triangle lies there either, unless the other is itself
//! bounded there by a boundary edge through `p`. Then two edges of the loop that share no
//! corner meet at `p`, against condition 3. (Triangles sharing no corner share no edge, and a
//! triangle with two corners at one projected point has no area, against condition 1.)
//! Projected triangles that do not meet come from triangles that do not meet, since the
//! projection of a common point would be one.
//!
//! The test reads each triangle once (in parallel, on the current rayon pool) and the loop's
//! edges in order of their lowest coordinate; it stops at the first triangle that turns the
//! other way, which on a folded cloth is soon. It decides nothing about a cloth that fails it:
//! the count then searches as before.

use rayon::prelude::*;

use crate::intersections::{orient_2d, project, segments_meet_2d};

/// A point in m.
type P = [f32; 3];

/// Heap an [`Outline`] holds per particle at most, in bytes: each particle is on its loop once
/// at most.
pub const BYTES_PER_PARTICLE: usize = std::mem::size_of::<u32>();

/// Triangles per parallel work item of the orientation pass.
const CHUNK: usize = 4096;

/// The most edges out of one particle read in full: more are sorted and bisected.
const SORTED: usize = 16;

/// Particles per parallel work item of the search for the net boundary.
const PARTICLES_PER_TASK: usize = 4096;

/// The net boundary of a set of triangles as one loop of particle indices (module docs,
/// condition 2), in the triangles' turning sense.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outline {
    /// The loop's particles in order; the last one joins the first.
    corners: Vec<u32>,
}

impl Outline {
    /// The outline of `triangles` (indices of `particles` particles), or `None` when their net
    /// boundary is not one loop through distinct particles (none, several loops, an edge left
    /// over twice, or a particle on the boundary twice) or an index is out of range.
    ///
    /// Holds, while it runs, the triangles' directed edges grouped by their first corner (4 B
    /// per corner of a triangle and 8 B per particle); what it returns holds 4 B per particle of
    /// the loop at most.
    pub fn of(triangles: &[[u32; 3]], particles: usize) -> Option<Outline> {
        if triangles.iter().flatten().any(|&i| i as usize >= particles) {
            return None;
        }
        let edges = u32::try_from(3 * triangles.len()).ok()?;
        let out = OutEdges::new(triangles, particles, edges);
        // Each particle's one net edge out of it, if any, found in parallel over ranges of
        // particles; and how many there are.
        let mut next = vec![u32::MAX; particles];
        let boundary = next
            .par_chunks_mut(PARTICLES_PER_TASK)
            .enumerate()
            .map(|(task, next)| {
                let first = task * PARTICLES_PER_TASK;
                next.iter_mut().enumerate().try_fold(0, |found, (i, next)| {
                    *next = out.net_edge_from((first + i) as u32)?;
                    Some(found + (*next != u32::MAX) as usize)
                })
            })
            .try_reduce(|| 0, |a, b| Some(a + b))?;
        drop(out);
        // One walk from a boundary particle must come back to it after every boundary edge:
        // each particle has one edge out, so a walk that repeats a particle first repeats the
        // one it started from, and its length is the loop's.
        let first = next.iter().position(|&v| v != u32::MAX)?;
        let mut corners = Vec::with_capacity(boundary);
        let mut u = first as u32;
        loop {
            corners.push(u);
            u = next[u as usize];
            if u == u32::MAX || corners.len() > boundary {
                return None;
            }
            if u as usize == first {
                break;
            }
        }
        (corners.len() == boundary && boundary >= 3).then_some(Outline { corners })
    }

    /// The loop's particles in order (the last joins the first).
    pub fn corners(&self) -> &[u32] {
        &self.corners
    }

    /// True when `triangles` (whose outline this is) at `positions` (m) pass the certificate
    /// of the module docs along some coordinate axis: then no two of them that share no corner
    /// have a point in common. False decides nothing (and is the answer for a corner index out
    /// of range or a corner that is not finite).
    pub fn unfolded(&self, triangles: &[[u32; 3]], positions: &[P]) -> bool {
        let Some(first) = triangles.first() else { return true };
        let Some(points) = corners(*first, positions) else { return false };
        // Along the axis where the first triangle shows the most area, then the others where it
        // shows some.
        let normal = normal(points);
        let mut axes = [0, 1, 2];
        axes.sort_by(|&a, &b| normal[b].abs().total_cmp(&normal[a].abs()));
        axes.into_iter().any(|axis| {
            let sense = turning(points, axis);
            sense != 0 && same_sense(triangles, positions, axis, sense) && self.simple(positions, axis)
        })
    }

    /// Condition 3 along `axis`: no two edges of the loop at `positions` that are not consecutive
    /// meet there. Its corners are in range and finite (every triangle's were checked first).
    fn simple(&self, positions: &[P], axis: usize) -> bool {
        let n = self.corners.len();
        let at = |i: usize| project(positions[self.corners[i % n] as usize], axis);
        // Each edge against those whose boxes start within its own along the first coordinate.
        let mut edges: Vec<([f64; 2], [f64; 2], usize)> = (0..n)
            .map(|i| {
                let (a, b) = (at(i), at(i + 1));
                ([a[0].min(b[0]), a[1].min(b[1])], [a[0].max(b[0]), a[1].max(b[1])], i)
            })
            .collect();
        edges.sort_unstable_by(|e, f| e.0[0].total_cmp(&f.0[0]));
        edges.iter().enumerate().all(|(k, &(lo, hi, i))| {
            edges[k + 1..].iter().take_while(|f| f.0[0] <= hi[0]).all(|&(lo_j, hi_j, j)| {
                let consecutive = (i + 1) % n == j || (j + 1) % n == i;
                consecutive
                    || lo_j[1] > hi[1]
                    || lo[1] > hi_j[1]
                    || !segments_meet_2d(at(i), at(i + 1), at(j), at(j + 1))
            })
        })
    }
}

/// The triangles' directed edges grouped by their first corner: the ends of the edges out of
/// particle `u` are `ends[start[u]..start[u + 1]]`, sorted where there are more than [`SORTED`]
/// (searched by bisection: the centre of a fan of many triangles costs no more than its rim).
struct OutEdges {
    start: Vec<u32>,
    ends: Vec<u32>,
}

impl OutEdges {
    /// The edges of `triangles` (`edges` of them) over `particles` particles.
    fn new(triangles: &[[u32; 3]], particles: usize, edges: u32) -> OutEdges {
        let mut start = vec![0u32; particles + 1];
        for t in triangles {
            for &u in t {
                start[u as usize + 1] += 1;
            }
        }
        for u in 0..particles {
            start[u + 1] += start[u];
        }
        // Filled with `start[u]` as particle `u`'s cursor, which ends at `start[u + 1]`; then
        // moved back one place.
        let mut ends = vec![0u32; edges as usize];
        for t in triangles {
            for k in 0..3 {
                let u = t[k] as usize;
                ends[start[u] as usize] = t[(k + 1) % 3];
                start[u] += 1;
            }
        }
        start.copy_within(0..particles, 1);
        start[0] = 0;
        for u in 0..particles {
            let ends = &mut ends[start[u] as usize..start[u + 1] as usize];
            if ends.len() > SORTED {
                ends.sort_unstable();
            }
        }
        OutEdges { start, ends }
    }

    /// The ends of the edges out of particle `u`.
    fn from(&self, u: u32) -> &[u32] {
        let u = u as usize;
        &self.ends[self.start[u] as usize..self.start[u + 1] as usize]
    }

    /// The end of the one net edge out of `u` (`u32::MAX` if none); `None` if more than one
    /// leaves it or one is left over more than once.
    fn net_edge_from(&self, u: u32) -> Option<u32> {
        let ends = self.from(u);
        let mut net = u32::MAX;
        for (k, &v) in ends.iter().enumerate() {
            // Each end once, where it first occurs.
            let seen = match ends.len() > SORTED {
                true => k > 0 && ends[k - 1] == v,
                false => ends[..k].contains(&v),
            };
            if seen {
                continue;
            }
            let (forward, back) = (occurrences(ends, v), occurrences(self.from(v), u));
            match forward as i64 - back as i64 {
                1 if net == u32::MAX => net = v,
                -1..=0 => {}
                _ => return None,
            }
        }
        Some(net)
    }
}

/// How many times `x` occurs in the ends of the edges out of a particle.
fn occurrences(ends: &[u32], x: u32) -> usize {
    match ends.len() > SORTED {
        true => ends[ends.partition_point(|&w| w < x)..].iter().take_while(|&&w| w == x).count(),
        false => ends.iter().filter(|&&w| w == x).count(),
    }
}

/// The corners of `t` at `positions`, if in range and finite.
fn corners(t: [u32; 3], positions: &[P]) -> Option<[P; 3]> {
    let p = [*positions.get(t[0] as usize)?, *positions.get(t[1] as usize)?, *positions.get(t[2] as usize)?];
    p.iter().flatten().all(|v| v.is_finite()).then_some(p)
}

/// An approximate normal of the triangle (only which axis it favours is used).
fn normal(p: [P; 3]) -> [f64; 3] {
    let d = |a: P, b: P| [b[0] as f64 - a[0] as f64, b[1] as f64 - a[1] as f64, b[2] as f64 - a[2] as f64];
    let (e, f) = (d(p[0], p[1]), d(p[0], p[2]));
    [e[1] * f[2] - e[2] * f[1], e[2] * f[0] - e[0] * f[2], e[0] * f[1] - e[1] * f[0]]
}

/// The exact turning sense of the triangle seen along `axis`: `1`, `-1`, or `0` edge-on.
fn turning(p: [P; 3], axis: usize) -> i32 {
    let q = p.map(|v| project(v, axis));
    orient_2d(q[0], q[1], q[2])
}

/// Condition 1 along `axis`: every triangle is in range, finite and turns `sense` there.
fn same_sense(triangles: &[[u32; 3]], positions: &[P], axis: usize, sense: i32) -> bool {
    triangles
        .par_chunks(CHUNK)
        .all(|chunk| chunk.iter().all(|&t| corners(t, positions).is_some_and(|p| turning(p, axis) == sense)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intersections::intersecting_pairs;
    use crate::intersections::tests::{brute_force as brute, grid_triangles, rng};

    /// A `nx × ny` grid of unit cells in the `z = 0` plane, two triangles a cell.
    fn grid(nx: u32, ny: u32) -> (Vec<P>, Vec<[u32; 3]>) {
        let p = (0..=ny).flat_map(|j| (0..=nx).map(move |i| [i as f32, j as f32, 0.0])).collect();
        (p, grid_triangles(nx + 1, ny + 1))
    }

    fn unfolded(p: &[P], t: &[[u32; 3]]) -> bool {
        Outline::of(t, p.len()).is_some_and(|o| o.unfolded(t, p))
    }

    #[test]
    fn a_grid_is_unfolded_along_its_normal_whatever_its_tilt() {
        let (p, t) = grid(5, 4);
        assert_eq!(Outline::of(&t, p.len()).map(|o| o.corners().len()), Some(18));
        assert!(unfolded(&p, &t));
        // Tilted and bent, it is seen along another axis.
        let bent: Vec<P> = p.iter().map(|v| [v[0], 0.3 * v[1] + 0.05 * v[0] * v[0], v[1]]).collect();
        assert!(unfolded(&bent, &t));
        assert_eq!(brute(&bent, &t), 0);
    }

    #[test]
    fn a_flipped_triangle_inside_fails_it() {
        // An inner particle pushed past its neighbours in the plane: the loop is still simple,
        // but triangles turn the other way and overlap others.
        let (mut p, t) = grid(4, 4);
        p[6] = [2.6, 2.7, 0.0];
        assert!(brute(&p, &t) > 0);
        assert!(!unfolded(&p, &t));
    }

    #[test]
    fn a_strip_coiled_over_itself_in_its_plane_fails_it() {
        // A flat strip wound once and a half round: every triangle turns the same way, but its
        // loop crosses itself and the strip overlaps itself.
        let (segments, mut p, mut t) = (24u32, Vec::new(), Vec::new());
        for k in 0..=segments {
            let a = 3.0 * std::f32::consts::PI * k as f32 / segments as f32;
            p.push([a.cos() * 1.0, a.sin() * 1.0, 0.0]);
            p.push([a.cos() * 1.5, a.sin() * 1.5, 0.0]);
        }
        for k in 0..segments {
            let (i0, o0, i1, o1) = (2 * k, 2 * k + 1, 2 * k + 2, 2 * k + 3);
            t.push([i0, o0, o1]);
            t.push([i0, o1, i1]);
        }
        assert!(brute(&p, &t) > 0);
        assert!(Outline::of(&t, p.len()).is_some());
        assert!(!unfolded(&p, &t));
    }

    #[test]
    fn two_sheets_are_two_loops() {
        let (p, t) = grid(2, 2);
        let n = p.len() as u32;
        let p2: Vec<P> = p.iter().chain(&p).copied().collect();
        let t2: Vec<[u32; 3]> = t.iter().copied().chain(t.iter().map(|c| c.map(|i| i + n))).collect();
        assert!(brute(&p2, &t2) > 0);
        assert_eq!(Outline::of(&t2, p2.len()), None);
    }

    #[test]
    fn a_loop_left_over_twice_fails_it() {
        // A second sheet over the first, its inner particles its own and its rim the first's,
        // both in one plane: the net boundary is the rim twice, and the sheets overlap.
        let (mut p, t) = grid(4, 4);
        let n = p.len() as u32;
        let inner = |i: u32| ((1..4).contains(&(i % 5)) && (1..4).contains(&(i / 5))).then_some(i);
        let copies: Vec<P> = (0..n).filter_map(inner).map(|i| p[i as usize]).collect();
        p.extend(copies);
        let copy = |i: u32| match inner(i) {
            Some(i) => n + (0..i).filter_map(inner).count() as u32,
            None => i,
        };
        let t2: Vec<[u32; 3]> = t.iter().copied().chain(t.iter().map(|c| c.map(copy))).collect();
        assert!(brute(&p, &t2) > 0);
        assert_eq!(Outline::of(&t2, p.len()), None);
    }

    #[test]
    fn a_particle_twice_on_the_loop_fails_it() {
        // A slit from the middle of the bottom side: the particles on its two lips are
        // separate but lie at the same points, so the sheet touches itself along the slit.
        let (p, mut t) = grid(4, 2);
        let mut p2 = p.clone();
        // Particles 2 at (2, 0) and 7 at (2, 1) split for the cell right of the slit.
        let split = [(2u32, p2.len() as u32), (7, p2.len() as u32 + 1)];
        p2.push(p[2]);
        p2.push(p[7]);
        for c in t.iter_mut() {
            if c.iter().all(|&i| (2.0..=3.0).contains(&p[i as usize][0]) && p[i as usize][1] <= 1.0) {
                for i in c.iter_mut() {
                    if let Some(&(_, to)) = split.iter().find(|(from, _)| from == i) {
                        *i = to;
                    }
                }
            }
        }
        assert!(brute(&p2, &t) > 0);
        assert!(!unfolded(&p2, &t));
    }

    #[test]
    fn the_count_agrees_where_the_certificate_holds() {
        // Bumps of growing height on a jittered grid: low ones pass, high ones fold.
        let (p, t) = grid(6, 6);
        let mut passed = 0;
        for h in 0..12 {
            let q: Vec<P> = p
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let w = (i as f32 * 2.3).sin() * 0.02 * h as f32;
                    [
                        v[0] + w * 3.0,
                        v[1] - w,
                        h as f32 * 0.2 * ((v[0] - 3.0).powi(2) + (v[1] - 3.0).powi(2)).sqrt().cos(),
                    ]
                })
                .collect();
            let b = brute(&q, &t);
            if unfolded(&q, &t) {
                passed += 1;
                assert_eq!(b, 0, "certified at height {h}");
            }
            assert_eq!(intersecting_pairs(&q, &t), b);
        }
        assert!(passed >= 3, "{passed}");
    }

    #[test]
    fn a_fan_of_many_triangles_is_one_loop() {
        // A disc of 2,000 triangles round one centre particle (its edges sorted and bisected),
        // and the same disc with a slice missing.
        let n = 2000u32;
        let mut p = vec![[0.0f32; 3]];
        p.extend((0..n).map(|k| {
            let a = std::f32::consts::TAU * k as f32 / n as f32;
            [a.cos(), a.sin(), 0.0]
        }));
        let t: Vec<[u32; 3]> = (0..n).map(|k| [0, 1 + k, 1 + (k + 1) % n]).collect();
        assert_eq!(Outline::of(&t, p.len()).map(|o| o.corners().len()), Some(n as usize));
        assert!(unfolded(&p, &t));
        assert_eq!(Outline::of(&t[1..], p.len()).map(|o| o.corners().len()), Some(n as usize + 1));
        // The centre twice in one triangle's place: an edge left over twice.
        let mut twice = t.clone();
        twice.push([0, 1, 2]);
        assert_eq!(Outline::of(&twice, p.len()), None);
    }

    #[test]
    fn out_of_range_or_not_finite_fails_it() {
        let (mut p, t) = grid(2, 2);
        assert!(!unfolded(&p[..5], &t));
        p[4][2] = f32::NAN;
        assert!(!unfolded(&p, &t));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Where the certificate holds, testing every pair finds none: grids whose particles are
        /// pushed about within their plane (where any overlap seen along the normal is a real
        /// one), snapped to a lattice of quarter cells (corners landing on edges and on each
        /// other), or lifted a little off it, with a triangle turned over now and then.
        #[test]
        fn certified_grids_have_no_intersecting_pair(
            n in 2u32..7,
            m in 2u32..7,
            push in 0.0f32..1.5,
            snap in proptest::bool::ANY,
            lift in proptest::prop_oneof![proptest::strategy::Just(0.0f32), 0.0f32..0.5],
            turned in proptest::option::of(proptest::num::u32::ANY),
            seed in proptest::num::u32::ANY,
        ) {
            let mut rnd = rng(seed | 1);
            let (p, mut t) = grid(n, m);
            let p: Vec<P> = p
                .iter()
                .map(|v| {
                    let q = [v[0] + push * rnd(), v[1] + push * rnd(), lift * rnd()];
                    if snap { q.map(|c| (c * 4.0).round() / 4.0) } else { q }
                })
                .collect();
            if let Some(k) = turned {
                let k = k as usize % t.len();
                t[k].swap(1, 2);
            }
            let b = brute(&p, &t);
            if unfolded(&p, &t) {
                proptest::prop_assert_eq!(b, 0);
            }
            proptest::prop_assert_eq!(intersecting_pairs(&p, &t), b);
        }
    }
}
