//! How much work the machine's threads can do together at the moment it is asked: the yardstick
//! the table's thread ratios are read against.
//!
//! On the shared 2-core machines these figures come from, the same binary's two-thread steps
//! have measured 0.72× to 1.85× its one-thread steps from one run to the next, minutes apart
//! (docs/performance.md, "Two cores that are not always two"). A ratio of two threads to one
//! means little without knowing what the machine gave at the time, so the table probes it before
//! and after each section that runs on several threads, two ways:
//!
//! * **apart**: every thread runs the same fixed arithmetic in registers, independent of the
//!   others (nothing shared, no waiting);
//! * **in lockstep**: the same arithmetic cut into [`SLICES`] slices of about 10 µs, every
//!   thread waiting after each slice until all have done it, spinning briefly and then yielding,
//!   as the threads of a time step wait at each of its phases.
//!
//! Each reports how many times one thread's work the threads did in the same time: about the
//! thread count on real cores that nobody else is using. A section whose probes read far less
//! was measured while the cores were partly someone else's (apart), or while threads that wait
//! for each other were held up (in lockstep), and its thread ratios say that, not something about
//! weft. What the probes do not see is the memory side (caches and bandwidth shared with other
//! tenants): their work stays in registers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use weft_kernels::team::back_off;

/// Rounds of arithmetic per thread in a probe (eight multiply–add chains of eight lanes each):
/// about 10 ms of one core.
pub const ROUNDS: u32 = 800_000;

/// Probes per [`capacity`]: each times one thread, then every thread.
pub const PROBES: usize = 3;

/// One thread's share of a probe: eight independent chains of multiply and add over eight lanes
/// each, in registers (the kind of arithmetic a constraint sweep does most), `rounds` times;
/// returns a value that depends on all of it, so that none of it can be left out.
fn work(seed: f32, rounds: u32) -> f32 {
    let mut acc = [[seed; 8]; 8];
    let step: [f32; 8] = std::array::from_fn(|k| 1e-3 * (k as f32 + seed));
    for _ in 0..rounds {
        for chain in acc.iter_mut() {
            for (v, s) in chain.iter_mut().zip(step) {
                *v = *v * 0.999_999 + s;
            }
        }
        acc = std::hint::black_box(acc);
    }
    acc.iter().flatten().sum()
}

/// Seconds for `threads` threads to each do [`work`] of `rounds` rounds in all, cut into
/// `slices` slices; with `lockstep`, every thread waits after each slice until all have done it,
/// as the threads of a time step wait at each phase ([`back_off`]).
fn seconds(threads: usize, rounds: u32, slices: u32, lockstep: bool) -> f64 {
    let done = AtomicUsize::new(0);
    let start = Instant::now();
    std::thread::scope(|s| {
        for i in 0..threads {
            let done = &done;
            s.spawn(move || {
                for slice in 1..=slices as usize {
                    std::hint::black_box(work(i as f32, rounds / slices));
                    if lockstep {
                        done.fetch_add(1, Ordering::AcqRel);
                        let mut spins = 0u32;
                        while done.load(Ordering::Acquire) < slice * threads {
                            back_off(&mut spins);
                        }
                    }
                }
            });
        }
    });
    start.elapsed().as_secs_f64()
}

/// How many times one thread's work `threads` threads did together, when one thread took
/// `one` seconds for its share and the `threads` threads `all` seconds for theirs.
fn ratio(threads: usize, one: f64, all: f64) -> f64 {
    threads as f64 * one / all
}

/// What a probe of the machine found: how many times one thread's work its threads did
/// together (dimensionless; about the thread count on real, idle cores).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Capacity {
    /// The median of the probes.
    pub median: f64,
    /// The least of the probes.
    pub least: f64,
    /// The most of the probes.
    pub most: f64,
}

/// Slices of a probe in lockstep: a wait about every 10 µs, as often as a small cloth's time
/// step waits at a phase.
pub const SLICES: u32 = 1_000;

/// Probes the machine with `threads` threads ([`PROBES`] times, one thread then all, each
/// about 10 ms of arithmetic per thread; module docs): apart (no thread waits for another) if
/// not `lockstep`, else in lockstep ([`SLICES`] slices, all threads waiting for each other
/// after each).
pub fn capacity(threads: usize, lockstep: bool) -> Capacity {
    let slices = if lockstep { SLICES } else { 1 };
    let probe = || seconds(threads, ROUNDS, slices, lockstep);
    summarise((0..PROBES).map(|_| ratio(threads, seconds(1, ROUNDS, slices, lockstep), probe())).collect())
}

/// The median, least and most of `ratios` (at least one).
fn summarise(mut ratios: Vec<f64>) -> Capacity {
    ratios.sort_by(f64::total_cmp);
    Capacity { median: ratios[ratios.len() / 2], least: ratios[0], most: ratios[ratios.len() - 1] }
}

impl std::fmt::Display for Capacity {
    /// `1.95× (1.90–1.98)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.2}× ({:.2}–{:.2})", self.median, self.least, self.most)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_is_the_work_of_all_threads_over_one_in_the_same_time() {
        assert_eq!(ratio(2, 1.0, 1.0), 2.0, "two threads in one thread's time: twice the work");
        assert_eq!(ratio(2, 1.0, 2.0), 1.0, "two threads in twice the time: no gain");
        assert_eq!(ratio(4, 0.5, 1.0), 2.0);
    }

    #[test]
    fn a_capacity_is_the_median_and_the_range_of_its_probes() {
        let c = summarise(vec![1.9, 1.1, 2.0]);
        assert_eq!(c, Capacity { median: 1.9, least: 1.1, most: 2.0 });
        assert_eq!(c.to_string(), "1.90× (1.10–2.00)");
    }

    #[test]
    fn the_work_depends_on_every_round_and_seed() {
        assert_ne!(work(0.0, 10), work(0.0, 11));
        assert_ne!(work(0.0, 10), work(1.0, 10));
        assert!(work(1.0, 1000).is_finite());
    }
}
