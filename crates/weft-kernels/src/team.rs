//! A team: every thread of the current rayon pool running one time step together, phase by
//! phase.
//!
//! A time step is a sequence of short phases (prediction, every colour of every iteration, the
//! velocity update), many of them tens of microseconds long on a medium-sized cloth. Waking a
//! sleeping thread costs more than that on virtual machines (an idle virtual CPU is halted; on
//! the 2-core machines weft is developed on, the first thread a broadcast reaches after 10 µs of
//! idleness starts 60 to 170 µs late, measured). So the step wakes the pool once, with
//! [`rayon::broadcast`], and keeps its threads busy: in each phase every thread claims work items
//! from one shared counter until none are left, then waits at a barrier (spinning briefly, then
//! yielding) which resets the counter for the next phase. On a pool of one thread the phases
//! simply run in order on the caller.
//!
//! Which thread runs which item varies from run to run; what an item computes does not, because
//! the items of one phase touch disjoint data (see `crate::shared`) and every total a phase
//! produces is an integer sum or is gathered per item and combined in item order.
//!
//! A thread that panics marks the team as poisoned on its way out; the others, waiting for it at
//! a barrier, see the mark and panic too instead of waiting for ever, so the panic reaches the
//! caller of `run` (through [`rayon::broadcast`]) rather than hanging the process.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What the threads of a team share.
struct Shared {
    threads: usize,
    next: AtomicUsize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    /// Set by a thread of the team that panicked.
    poisoned: AtomicBool,
}

/// Marks the team as poisoned when dropped during a panic of its thread.
struct PoisonOnUnwind<'a>(&'a Shared);

impl Drop for PoisonOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poisoned.store(true, Ordering::Release);
        }
    }
}

/// One thread's handle on its team.
pub(crate) struct Team<'a> {
    shared: &'a Shared,
}

/// The proof that code runs inside one phase of a team, handed to each work item by
/// [`Team::for_each`].
///
/// Shared data is reached through a phase (see `crate::shared::SharedSlice`): a borrow taken
/// with `&Phase` lives no longer than the work item that was given it, so no borrow of shared
/// data outlives the phase whose rules made it sound. Only this module makes one.
pub(crate) struct Phase {
    _private: (),
}

impl Team<'_> {
    /// One phase: runs `f(phase, i)` for every `i < items`, each exactly once, spread over the
    /// team's threads; returns when every thread has finished the phase.
    pub(crate) fn for_each(&self, items: usize, mut f: impl FnMut(&Phase, usize)) {
        let phase = Phase { _private: () };
        loop {
            let i = self.shared.next.fetch_add(1, Ordering::Relaxed);
            if i >= items {
                break;
            }
            f(&phase, i);
        }
        self.barrier();
    }

    /// Waits until every thread of the team has arrived, then resets the work counter. Writes
    /// made by any thread before the barrier are visible to all after it.
    fn barrier(&self) {
        let s = self.shared;
        if s.threads == 1 {
            s.next.store(0, Ordering::Relaxed);
            return;
        }
        let generation = s.generation.load(Ordering::Acquire);
        if s.arrived.fetch_add(1, Ordering::AcqRel) + 1 == s.threads {
            s.arrived.store(0, Ordering::Relaxed);
            s.next.store(0, Ordering::Relaxed);
            s.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while s.generation.load(Ordering::Acquire) == generation {
            if s.poisoned.load(Ordering::Acquire) {
                panic!("another thread of this team panicked");
            }
            if spins < 1 << 10 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Runs `f` on every thread of the current rayon pool as one team (on the caller alone for a
/// pool of one thread) and folds the threads' results with `merge` (in no particular order, so
/// `merge` must not depend on it: integer sums, say).
///
/// On a pool of one thread nothing is allocated; a larger pool is woken with
/// [`rayon::broadcast`], which allocates its jobs and their results.
pub(crate) fn run<R: Send>(f: impl Fn(&Team<'_>) -> R + Sync, merge: impl FnMut(R, R) -> R) -> R {
    let threads = rayon::current_num_threads();
    let shared = Shared {
        threads,
        next: AtomicUsize::new(0),
        arrived: AtomicUsize::new(0),
        generation: AtomicUsize::new(0),
        poisoned: AtomicBool::new(false),
    };
    if threads == 1 {
        return f(&Team { shared: &shared });
    }
    let results = rayon::broadcast(|_| {
        let _guard = PoisonOnUnwind(&shared);
        f(&Team { shared: &shared })
    });
    results.into_iter().reduce(merge).expect("a pool has at least one thread")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn every_item_runs_once_per_phase_on_any_pool() {
        for threads in [1, 2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let hits: Vec<AtomicU64> = (0..1000).map(|_| AtomicU64::new(0)).collect();
            let seen = pool.install(|| {
                run(
                    |team| {
                        let mut mine = 0;
                        for phase in 0..20 {
                            team.for_each(1000, |_, i| {
                                // Phase p must see every item of phase p − 1 done.
                                assert_eq!(hits[i].load(Ordering::Relaxed), phase);
                                hits[i].fetch_add(1, Ordering::Relaxed);
                                mine += 1;
                            });
                        }
                        (1u64, mine)
                    },
                    |a, b| (a.0 + b.0, a.1 + b.1),
                )
            });
            assert_eq!(seen, (threads as u64, 20 * 1000));
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 20));
        }
    }

    #[test]
    fn a_panic_in_one_thread_reaches_the_caller_instead_of_hanging() {
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.install(|| {
                    run(
                        |team| {
                            for _ in 0..3 {
                                team.for_each(10, |_, i| assert_ne!(i, 7, "item 7 fails"));
                            }
                        },
                        |(), ()| (),
                    )
                })
            }));
            assert!(result.is_err(), "{threads} threads");
        }
    }
}
