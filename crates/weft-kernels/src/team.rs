//! A team: every thread of the current rayon pool running one time step together, phase by
//! phase.
//!
//! A time step is a sequence of short phases (prediction, every colour of every iteration, the
//! velocity update), many of them tens of microseconds long on a medium-sized cloth. Waking a
//! sleeping thread costs more than that on virtual machines (an idle virtual CPU is halted; on
//! the 2-core machines weft is developed on, the first thread a broadcast reaches after 10 µs of
//! idleness starts 60 to 170 µs late, measured). So the step wakes the pool once, with
//! [`rayon::broadcast`], and keeps its threads busy: in each phase every thread claims work items
//! until none are left (below), then waits at a barrier (spinning briefly, then yielding) which
//! resets the counters for the next phase. On a pool of one thread the phases simply run in order
//! on the caller.
//!
//! # Which thread runs which item
//!
//! A phase's items are cut into as many contiguous ranges as the team has threads (at most
//! `RANGES`), and each thread claims the items of its own range first, in order, then those
//! left in the others' ranges, each range from a counter on a cache line of its own. Most phases
//! of a step cut the same data the same way (blocks, particle chunks), so a thread mostly works
//! on the same part of the cloth from phase to phase and from step to step, and finds it in its
//! own core's caches; a single counter for all (what the team had before) handed the items out in
//! arrival order, so that a chunk moved between the cores' caches at random: on the 2-core
//! machines weft is developed on, that made the garment's constraint phases 1.1–1.4× slower on
//! two threads and the 256² comparison grid's steps 1.5× slower (docs/performance.md, "Each
//! thread its own items"). Which thread runs an item still varies (a thread that finishes its
//! range takes the others' items), and what an item computes does not.
//!
//! An item may fork its own work (`fork`: `Phase::forks`): the threads waiting at a barrier
//! take the fork's sub-items, which each write their own chunk, so a phase of one item that
//! gathers need not leave the other threads idle.
//!
//! Which thread runs which item varies from run to run; what an item computes does not, because
//! the items of one phase touch disjoint data (see `crate::shared`) and every total a phase
//! produces is an integer sum or is gathered per item and combined in item order.
//!
//! # Phases, safe and unsafe
//!
//! A phase is one call of `Team::for_each_chunk` or `Team::for_each` by every thread of the
//! team, and every thread must make the same calls in the same order: the step's code is one
//! sequence of phases that depends only on the model and the options, never on the thread.
//! The team checks it: before it claims an item, every thread compares its phase's key (call
//! site, item count, and the parts of `Team::for_each_chunk`: each array's address, length,
//! chunk size and whether it is written) with the key of the first thread to start the phase,
//! and panics if they differ; and a phase started inside the work item of another panics.
//!
//! `Team::for_each_chunk` is how a phase reaches shared arrays in safe code: its parts (see
//! `crate::shared`) are arrays read whole by every item, and arrays cut into one mutable chunk
//! (or element) per item, the chunk of the item index that the team's counter handed to this
//! item alone. As every thread of the phase has the same parts (checked), parts that write do
//! not overlap others (checked), and a borrow ends with its item, no two items of a phase can
//! reach the same element unless both only read it. Writes scattered across an array by index
//! (a colour's lanes, the particles of a chunk of self-collision slots) still go through the
//! unsafe accessors of `crate::shared::SharedSlice`, whose callers argue from the rule of their
//! phase; the key check makes "every thread is in this phase" part of that argument only for
//! the call site and the item count, so such a caller also argues that every thread passes the
//! same data.
//!
//! A thread that panics marks the team as poisoned on its way out; the others, waiting for it at
//! a barrier, see the mark and panic too instead of waiting for ever, so the panic reaches the
//! caller of `run` (through [`rayon::broadcast`]) rather than hanging the process.

use std::cell::Cell;
use std::panic::Location;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::shared::{MAX_PARTS, PartKey, Parts};

mod fork;

pub(crate) use fork::Forks;

/// What the threads of a team share. Every phase touches the barrier's counters and the key's
/// state; they share one cache line with the first words of the key, which hold the whole key of
/// a phase without parts. The work counters of the ranges (module docs) have a line each.
#[repr(C, align(64))]
struct Shared {
    arrived: AtomicUsize,
    generation: AtomicUsize,
    threads: usize,
    /// Set by a thread of the team that panicked.
    poisoned: AtomicBool,
    /// The key of the phase the team is in.
    key: KeySlot,
    /// Where an item's fork is published for the threads waiting at a barrier.
    forks: fork::ForkSlot,
    /// Per range of a phase's items, how many of its items have been claimed (module docs,
    /// "Which thread runs which item"); the first `threads`, at most [`RANGES`], are used.
    claimed: [Claimed; RANGES],
}

// The key's state and a phase's first two words are in `Shared`'s first cache line.
const _: () = assert!(std::mem::offset_of!(Shared, key) + 3 * std::mem::size_of::<usize>() <= 64);

/// Words in a phase's key: call site, items, then four per part.
const KEY_WORDS: usize = 2 + 4 * MAX_PARTS;

/// The key of the current phase, written by the first thread to start it and compared by the
/// others: `state` is [`EMPTY`] until a thread starts the phase, [`WRITING`] while it writes
/// `words`, then [`READY`] plus the number of words; the barrier empties it.
#[repr(C)]
struct KeySlot {
    state: AtomicUsize,
    words: [AtomicUsize; KEY_WORDS],
}

/// The most ranges a phase's items are cut into: one per thread of a team of up to this many.
const RANGES: usize = 64;

/// A counter of claimed items on a cache line of its own, so that threads claiming from their
/// own ranges do not share one.
#[repr(align(64))]
struct Claimed(AtomicUsize);

const EMPTY: usize = 0;
const WRITING: usize = 1;
const READY: usize = 2;

/// The first words of a phase's key (module docs): its call site and item count.
fn plain_key(items: usize, site: &Location<'_>) -> [usize; 2] {
    [(site.line() as usize) << 16 ^ site.column() as usize, items]
}

/// The words of a phase's key: `head` ([`plain_key`]), then the address, length, chunk size
/// and whether it writes of each part.
fn key_words(head: [usize; 2], parts: &[PartKey]) -> impl Iterator<Item = usize> + '_ {
    let part = |p: &PartKey| [p.start, p.bytes, p.chunk, p.writes as usize];
    head.into_iter().chain(parts.iter().flat_map(part))
}

/// Checks the parts of a phase.
///
/// # Panics
/// If a part that writes overlaps another part.
fn assert_parts_disjoint(parts: &[PartKey]) {
    for (n, part) in parts.iter().enumerate() {
        for other in &parts[..n] {
            let conflict = (part.writes || other.writes) && part.overlaps(other);
            assert!(!conflict, "parts of a phase overlap, and one of them writes");
        }
    }
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
    /// The range of each phase's items this thread claims from first.
    range: usize,
    /// Whether this thread is inside a phase, or left one by a panic.
    in_phase: Cell<bool>,
}

/// The proof that code runs inside one phase of a team, handed to each work item by
/// [`Team::for_each_chunk`].
///
/// Shared data is reached through a phase (see `crate::shared::SharedSlice`): a borrow taken
/// with `&Phase` lives no longer than the work item that was given it, so no borrow of shared
/// data outlives the phase whose rules made it sound. Only this module makes one.
pub(crate) struct Phase {
    /// The team's shared state, for [`Phase::forks`].
    shared: *const Shared,
}

impl Phase {
    /// Where this work item's sub-items run: on its thread and on the team's threads waiting at
    /// a barrier (see the `fork` module).
    pub(crate) fn forks(&self) -> Forks<'_> {
        // SAFETY: a `Phase` is made by `Team::phase` from its team's shared state and lives no
        // longer than the phase; the state lives in `run` until every thread of the team has
        // left the team, so after every phase.
        let shared = unsafe { &*self.shared };
        if shared.threads == 1 { Forks::ALONE } else { Forks::of(&shared.forks, &shared.poisoned) }
    }
}

impl Shared {
    /// How many ranges a phase's items are cut into: one per thread, at most [`RANGES`].
    fn ranges(&self) -> usize {
        self.threads.min(RANGES)
    }
}

impl<'a> Team<'a> {
    fn new(shared: &'a Shared, thread: usize) -> Self {
        Team { shared, range: thread % shared.ranges(), in_phase: Cell::new(false) }
    }

    /// One phase over `parts` (see `crate::shared`): runs `f(phase, i, borrows)` for every
    /// `i < items`, each exactly once, spread over the team's threads, with `borrows` the
    /// tuple of what item `i` gets of each part (the whole array of a part that reads, chunk
    /// `i` of one that writes); returns when every thread has finished the phase.
    ///
    /// ```ignore
    /// // Prediction of particle chunk `c` (its positions and velocities), from the forces.
    /// let parts = (positions.chunks_mut(CHUNK), velocities.chunks_mut(CHUNK), forces);
    /// team.for_each_chunk(len.div_ceil(CHUNK), parts, |_, c, (x, v, f)| predict(x, v, f, c));
    /// ```
    ///
    /// # Panics
    /// If a part that writes overlaps another part, another thread of the team is in a
    /// different phase or has other parts (module docs), or this thread is inside a phase
    /// already.
    #[track_caller]
    pub(crate) fn for_each_chunk<P: Parts>(
        &self,
        items: usize,
        parts: P,
        mut f: impl for<'p> FnMut(&'p Phase, usize, P::Out<'p>),
    ) {
        let (mut keys, mut n) = ([PartKey::default(); MAX_PARTS], 0);
        parts.for_each_key(|key| {
            keys[n] = key;
            n += 1;
        });
        self.phase(plain_key(items, Location::caller()), &keys[..n], items, |phase, i| {
            // SAFETY: the team hands item `i` to this call alone in this phase, and every
            // thread that claims an item of the phase has the same parts (`phase` checked the
            // keys before claiming), so chunk `i` of a part that writes is borrowed by this
            // item alone; parts that write overlap no other part (checked in `agree`), so
            // nothing writes what a part that reads lends. The borrows cannot outlive `f`'s
            // call (`f` takes them for any `'p`), which ends before this thread leaves the
            // phase, no phase can start inside it (`phase` checks), and `parts` keeps the
            // arrays' borrows alive until then.
            let borrows = unsafe { parts.get(i) };
            f(phase, i, borrows);
        });
    }

    /// Runs the phase with key `head` and `parts` (module docs): checks it against the team,
    /// claims items until none is left, waits for the team. This thread stays marked as in the
    /// phase if anything in it panics, so that no later phase starts on it (were the panic
    /// caught) out of step with the team.
    fn phase(&self, head: [usize; 2], parts: &[PartKey], items: usize, mut f: impl FnMut(&Phase, usize)) {
        let inside = self.in_phase.replace(true);
        assert!(!inside, "a team phase cannot start inside another, nor after one that panicked");
        self.agree(head, parts);
        let phase = Phase { shared: self.shared };
        let ranges = self.shared.ranges();
        for r in (self.range..ranges).chain(0..self.range) {
            let (start, end) = (r * items / ranges, (r + 1) * items / ranges);
            let claimed = &self.shared.claimed[r].0;
            // An empty or used-up range is passed over without taking its counter's cache line
            // (a counter only grows within a phase), which matters where threads outnumber items.
            if claimed.load(Ordering::Relaxed) >= end - start {
                continue;
            }
            loop {
                let i = start + claimed.fetch_add(1, Ordering::Relaxed);
                if i >= end {
                    break;
                }
                f(&phase, i);
            }
        }
        self.barrier();
        self.in_phase.set(false);
    }

    /// Publishes the phase's key (`head` and `parts`) if this thread is the first to start the
    /// phase, after checking its parts; or checks that it equals the published one (whose parts
    /// were checked).
    ///
    /// # Panics
    /// If the keys differ, or a part that writes overlaps another part.
    fn agree(&self, head: [usize; 2], parts: &[PartKey]) {
        let s = self.shared;
        if s.threads == 1 {
            assert_parts_disjoint(parts);
            return;
        }
        let (slot, len) = (&s.key, 2 + 4 * parts.len());
        match slot.state.compare_exchange(EMPTY, WRITING, Ordering::Acquire, Ordering::Acquire) {
            Ok(_) => {
                // A panic here leaves the state `WRITING`: the others see the team poisoned.
                assert_parts_disjoint(parts);
                for (w, v) in slot.words.iter().zip(key_words(head, parts)) {
                    // A phase that repeats finds its words there already: not writing them
                    // keeps their cache lines shared by every thread.
                    if w.load(Ordering::Relaxed) != v {
                        w.store(v, Ordering::Relaxed);
                    }
                }
                slot.state.store(READY + len, Ordering::Release);
            }
            Err(mut state) => {
                let mut spins = 0;
                while state == WRITING {
                    self.pause(&mut spins);
                    state = slot.state.load(Ordering::Acquire);
                }
                let mut words = slot.words.iter().map(|w| w.load(Ordering::Relaxed));
                let same = state - READY == len && key_words(head, parts).all(|v| words.next() == Some(v));
                assert!(same, "the threads of a team disagree on a phase");
            }
        }
    }

    /// One round of waiting for another thread: spins briefly, then yields.
    ///
    /// # Panics
    /// If another thread of the team panicked.
    fn pause(&self, spins: &mut u32) {
        pause(&self.shared.poisoned, spins);
    }

    /// Waits until every thread of the team has arrived, then resets the work counter. Writes
    /// made by any thread before the barrier are visible to all after it.
    fn barrier(&self) {
        let s = self.shared;
        if s.threads == 1 {
            s.claimed[0].0.store(0, Ordering::Relaxed);
            return;
        }
        let generation = s.generation.load(Ordering::Acquire);
        if s.arrived.fetch_add(1, Ordering::AcqRel) + 1 == s.threads {
            // Every thread has checked its key: the next phase's first thread writes its own.
            s.key.state.store(EMPTY, Ordering::Relaxed);
            s.arrived.store(0, Ordering::Relaxed);
            for claimed in &s.claimed[..s.ranges()] {
                claimed.0.store(0, Ordering::Relaxed);
            }
            s.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while s.generation.load(Ordering::Acquire) == generation {
            // A thread waiting here takes the sub-items of an item's fork (`fork`).
            if s.forks.help() {
                spins = 0;
            } else {
                self.pause(&mut spins);
            }
        }
    }
}

/// One round of waiting for another thread of a team whose poisoned mark is `poisoned`: spins
/// briefly (the first 1,024 rounds of a wait, counted in `spins`), then yields.
///
/// # Panics
/// If another thread of the team panicked.
fn pause(poisoned: &AtomicBool, spins: &mut u32) {
    if poisoned.load(Ordering::Acquire) {
        panic!("another thread of this team panicked");
    }
    back_off(spins);
}

/// One round of waiting that cannot fail, as a team's threads wait: spins briefly (the first
/// 1,024 rounds of a wait, counted in `spins`, which starts at 0), then yields the core. Public
/// so that `weft bench`'s probe of the machine waits the same way.
pub fn back_off(spins: &mut u32) {
    if *spins < 1 << 10 {
        std::hint::spin_loop();
        *spins += 1;
    } else {
        std::thread::yield_now();
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
        claimed: [const { Claimed(AtomicUsize::new(0)) }; RANGES],
        arrived: AtomicUsize::new(0),
        generation: AtomicUsize::new(0),
        threads,
        poisoned: AtomicBool::new(false),
        key: KeySlot { state: AtomicUsize::new(EMPTY), words: [const { AtomicUsize::new(0) }; KEY_WORDS] },
        forks: fork::ForkSlot::new(),
    };
    if threads == 1 {
        return f(&Team::new(&shared, 0));
    }
    let results = rayon::broadcast(|context| {
        let _guard = PoisonOnUnwind(&shared);
        f(&Team::new(&shared, context.index()))
    });
    results.into_iter().reduce(merge).expect("a pool has at least one thread")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::SharedSlice;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn every_item_runs_once_per_phase_on_any_pool() {
        // More threads than ranges too, and fewer items than threads (empty ranges).
        for threads in [1, 2, 3, 8, RANGES + 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for items in [1, 2, 5, 1000] {
                let hits: Vec<AtomicU64> = (0..items).map(|_| AtomicU64::new(0)).collect();
                let seen = pool.install(|| {
                    run(
                        |team| {
                            let mut mine = 0;
                            for phase in 0..20 {
                                team.for_each_chunk(items, (), |_, i, ()| {
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
                assert_eq!(seen, (threads as u64, 20 * items as u64), "{threads} threads, {items} items");
                assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 20));
            }
        }
    }

    /// A team of `threads` in which a phase of `items` items each forks `subs` sub-items, each
    /// counting its own calls; the counts after `rounds` such phases.
    fn forked_counts(threads: usize, items: usize, subs: usize, rounds: usize) -> Vec<u64> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let hits: Vec<AtomicU64> = (0..items * subs).map(|_| AtomicU64::new(0)).collect();
        pool.install(|| {
            run(
                |team| {
                    for _ in 0..rounds {
                        team.for_each_chunk(items, (), |phase, i, ()| {
                            phase
                                .forks()
                                .run(subs, &|k| _ = hits[i * subs + k].fetch_add(1, Ordering::Relaxed));
                        });
                    }
                },
                |(), ()| (),
            )
        });
        hits.iter().map(|h| h.load(Ordering::Relaxed)).collect()
    }

    /// Every sub-item of every fork runs once, whether one item forks at a time or several do at
    /// once (those that find a fork out run theirs alone).
    #[test]
    fn every_sub_item_runs_once_on_any_pool() {
        for threads in [1, 2, 3, 8] {
            for items in [1, 3] {
                let counts = forked_counts(threads, items, 37, 20);
                assert!(counts.iter().all(|&c| c == 20), "{threads} threads, {items} items: {counts:?}");
            }
        }
    }

    /// The thread without an item takes sub-items of the item's fork: sub-item 0 waits for
    /// sub-item 1 to start (were the sub-items left to the item, sub-item 1 would start only
    /// after sub-item 0 gave up waiting, on the item's thread).
    #[test]
    fn a_waiting_thread_takes_the_sub_items_of_a_fork() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let threads = pool.install(|| {
            run(
                |team| {
                    let ran_on = [AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX)];
                    team.for_each_chunk(1, (), |phase, _, ()| {
                        phase.forks().run(2, &|k| {
                            let here = rayon::current_thread_index().unwrap() as u64;
                            ran_on[k].store(here, Ordering::Release);
                            let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
                            while k == 0 && ran_on[1].load(Ordering::Acquire) == u64::MAX {
                                assert!(std::time::Instant::now() < until, "sub-item 1 never started");
                            }
                        });
                    });
                    ran_on.map(|r| r.load(Ordering::Acquire))
                },
                // Each thread's own marks: those of the thread that took the item.
                |a, b| if a[0] == u64::MAX { b } else { a },
            )
        });
        assert_ne!(threads[0], threads[1], "both sub-items ran on one thread");
    }

    /// A sub-item that panics, on whichever thread runs it, reaches the caller instead of hanging
    /// the team.
    #[test]
    fn a_panic_in_a_sub_item_reaches_the_caller_instead_of_hanging() {
        for threads in [1, 2, 3] {
            for bad in [0, 5, 9] {
                let failed = panics(threads, |team| {
                    team.for_each_chunk(1, (), |phase, _, ()| {
                        phase.forks().run(10, &|k| assert_ne!(k, bad, "sub-item {bad} fails"));
                    });
                    team.for_each_chunk(4, (), |_, _, ()| {});
                });
                assert!(failed, "{threads} threads, sub-item {bad}");
            }
        }
    }

    /// Two teams on one pool (two callers stepping at once, as tests on the global pool do) each
    /// take only their own forks, and neither waits for the other for ever.
    #[test]
    fn teams_sharing_a_pool_keep_their_forks_apart() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        std::thread::scope(|scope| {
            let callers: Vec<_> = (0..2)
                .map(|_| {
                    scope.spawn(|| {
                        let hits: Vec<AtomicU64> = (0..64).map(|_| AtomicU64::new(0)).collect();
                        for _ in 0..200 {
                            pool.install(|| {
                                run(
                                    |team| {
                                        team.for_each_chunk(1, (), |phase, _, ()| {
                                            phase
                                                .forks()
                                                .run(64, &|k| _ = hits[k].fetch_add(1, Ordering::Relaxed));
                                        });
                                        team.for_each_chunk(16, (), |_, _, ()| {});
                                    },
                                    |(), ()| (),
                                )
                            });
                        }
                        hits.iter().all(|h| h.load(Ordering::Relaxed) == 200)
                    })
                })
                .collect();
            for caller in callers {
                assert!(caller.join().unwrap(), "a sub-item ran other than once per fork");
            }
        });
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
                                team.for_each_chunk(10, (), |_, i, ()| assert_ne!(i, 7, "item 7 fails"));
                            }
                        },
                        |(), ()| (),
                    )
                })
            }));
            assert!(result.is_err(), "{threads} threads");
        }
    }

    /// Runs `f` as a team on a pool of `threads`; whether it panicked.
    fn panics(threads: usize, f: impl Fn(&Team<'_>) + Sync) -> bool {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| run(|team| f(team), |(), ()| ()))
        }));
        result.is_err()
    }

    #[test]
    fn chunk_phases_hand_every_element_to_one_item() {
        for threads in [1, 2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let input: Vec<u32> = (0..1000).collect();
            let (mut a, mut b, mut sums, mut total) =
                (vec![0u32; 1000], vec![0u32; 500], vec![0u32; 8], [0u32; 1]);
            pool.install(|| {
                let (a, b, sums, total) = (
                    SharedSlice::new(&mut a),
                    SharedSlice::new(&mut b),
                    SharedSlice::new(&mut sums),
                    SharedSlice::new(&mut total),
                );
                let (input, inner) = (&input[..], a.slice(100..900));
                run(
                    |team| {
                        // `a`'s middle in 8 chunks of 100, `b` in 10 chunks of 50 (8 items: 2 left).
                        let parts = (inner.chunks_mut(100), b.chunks_mut(50), sums.each_mut(), input);
                        team.for_each_chunk(8, parts, |_, c, (a, b, sum, input)| {
                            for (k, x) in a.iter_mut().enumerate() {
                                *x = input[100 + 100 * c + k] + 1;
                            }
                            b.fill(c as u32);
                            *sum = a.len() as u32;
                        });
                        // The whole of `a`, read by every item; the one item owns `total`.
                        team.for_each_chunk(1, (total.whole_mut(), a), |_, _, (t, a)| {
                            t[0] = a.iter().sum();
                        });
                    },
                    |(), ()| (),
                )
            });
            let expected: Vec<u32> =
                (0..1000).map(|i| if (100..900).contains(&i) { i + 1 } else { 0 }).collect();
            assert_eq!(a, expected, "{threads} threads");
            let chunk_of = |i: u32| if i < 400 { i / 50 } else { 0 };
            assert_eq!(b, (0..500).map(chunk_of).collect::<Vec<_>>(), "8 items, 10 chunks");
            assert_eq!(sums, [100, 100, 100, 100, 100, 100, 100, 100]);
            assert_eq!(total[0], expected.iter().sum::<u32>());
        }
    }

    #[test]
    fn parts_that_overlap_a_written_part_are_refused() {
        let mut data = vec![0u32; 100];
        let s = SharedSlice::new(&mut data);
        for threads in [1, 2] {
            // Written twice, written and read, written and read in part.
            assert!(panics(threads, |team| team.for_each_chunk(
                1,
                (s.chunks_mut(10), s.each_mut()),
                |_, _, _| ()
            )));
            assert!(panics(threads, |team| team.for_each_chunk(1, (s.chunks_mut(10), s), |_, _, _| ())));
            assert!(panics(threads, |team| team.for_each_chunk(
                1,
                (s.slice(50..60), s.whole_mut()),
                |_, _, _| ()
            )));
            // Read twice, or written in disjoint parts: fine.
            assert!(!panics(threads, |team| team.for_each_chunk(1, (s, s), |_, _, _| ())));
            let halves = (s.slice(0..50).chunks_mut(10), s.slice(50..100).chunks_mut(10));
            assert!(!panics(threads, |team| team.for_each_chunk(5, halves, |_, _, _| ())));
        }
    }

    #[test]
    fn a_phase_inside_a_phase_is_refused() {
        let mut data = vec![0u32; 100];
        let s = SharedSlice::new(&mut data);
        for threads in [1, 2] {
            assert!(panics(threads, |team| {
                team.for_each_chunk(10, (s.chunks_mut(10),), |_, _, _| {
                    team.for_each_chunk(10, (s.chunks_mut(10),), |_, _, _| ());
                });
            }));
            assert!(panics(threads, |team| team.for_each_chunk(2, (), |_, _, ()| team.for_each_chunk(
                2,
                (),
                |_, _, ()| ()
            ))));
            // A phase that panicked, the panic caught: the thread cannot go on to the next.
            assert!(panics(threads, |team| {
                let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    team.for_each_chunk(2, (), |_, i, ()| assert_ne!(i, 1, "item 1 fails"));
                }));
                assert!(caught.is_err());
                team.for_each_chunk(10, (s.chunks_mut(10),), |_, _, (x,)| x.fill(1));
            }));
        }
    }

    #[test]
    fn threads_that_disagree_on_a_phase_panic() {
        let mut data = vec![0u32; 1000];
        let s = SharedSlice::new(&mut data);
        for threads in [2, 3] {
            // Each thread cuts the array its own way: chunks of 10, 11, 12 elements.
            let ids = AtomicUsize::new(0);
            assert!(panics(threads, |team| {
                let id = ids.fetch_add(1, Ordering::Relaxed);
                let chunk = 10 + id;
                // Hold every thread until all have an id, so that all reach the phase.
                while ids.load(Ordering::Relaxed) < threads {
                    std::hint::spin_loop();
                }
                team.for_each_chunk(100, (s.chunks_mut(chunk),), |_, _, (x,)| x.fill(1));
            }));
            // A plain phase with another item count.
            let ids = AtomicUsize::new(0);
            assert!(panics(threads, |team| {
                let id = ids.fetch_add(1, Ordering::Relaxed);
                while ids.load(Ordering::Relaxed) < threads {
                    std::hint::spin_loop();
                }
                team.for_each_chunk(10 + id, (), |_, _, ()| ());
            }));
        }
    }
}
