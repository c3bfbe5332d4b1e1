//! Forks of a work item: an item of a phase (one that gathers, say) may cut its own work into
//! sub-items with [`Forks`], and the threads of its team that wait at the phase's barrier take
//! them instead of spinning.
//!
//! The item publishes its fork in the team's [`ForkSlot`], claims sub-items from the fork's
//! counter like any thread, waits until every sub-item is done, then takes the fork back and
//! waits until no thread looks at it before the fork goes. A waiting thread that finds a fork
//! counts itself as a user, claims sub-items until none is left, and leaves. Only the team's own
//! threads see its slot: forks of two teams sharing a pool never mix.
//!
//! One fork is out at a time: an item that finds the slot taken (another item's fork, or its
//! own from inside a sub-item) runs its sub-items itself, in order. Which thread runs which
//! sub-item varies; what each computes does not, as each writes its own chunk
//! ([`Forks::chunks_mut`]) or gives a value the item combines in sub-item order.
//!
//! A sub-item that panics on a waiting thread unwinds that thread (which poisons the team, see
//! `crate::team`); the item, waiting for it, sees the team poisoned and panics too, after the
//! fork is taken back. One that panics on the item's thread takes the fork back on its way out.

use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

use super::{back_off, pause};

/// Where a team publishes the fork of one of its items, in its shared state.
pub(super) struct ForkSlot {
    /// The fork out, or null.
    fork: AtomicPtr<Fork<'static>>,
    /// Threads that may be looking at the fork out.
    users: AtomicUsize,
}

/// A fork out: `run(i)` for every `i < items`, each claimed once from `next`; `done` counts
/// those finished.
struct Fork<'f> {
    run: &'f (dyn Fn(usize) + Sync),
    items: usize,
    next: AtomicUsize,
    done: AtomicUsize,
}

impl Fork<'_> {
    /// Claims and runs sub-items until none is left; how many it ran.
    fn work(&self) -> usize {
        let mut ran = 0;
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.items {
                return ran;
            }
            (self.run)(i);
            self.done.fetch_add(1, Ordering::Release);
            ran += 1;
        }
    }
}

/// Counts a thread out of a fork's users when dropped (also while unwinding).
struct Leave<'a>(&'a AtomicUsize);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Takes a fork back when dropped (also while unwinding): empties the slot, then waits until no
/// thread looks at the fork.
struct Retract<'a>(&'a ForkSlot);

impl Drop for Retract<'_> {
    fn drop(&mut self) {
        self.0.fork.store(ptr::null_mut(), Ordering::SeqCst);
        // No panic here (this may run while unwinding): a user ends its sub-item and leaves.
        let mut spins = 0;
        while self.0.users.load(Ordering::SeqCst) != 0 {
            back_off(&mut spins);
        }
    }
}

impl ForkSlot {
    /// An empty slot.
    pub(super) fn new() -> Self {
        ForkSlot { fork: AtomicPtr::new(ptr::null_mut()), users: AtomicUsize::new(0) }
    }

    /// Runs sub-items of the fork out, if there is one and any is left; whether it ran one.
    pub(super) fn help(&self) -> bool {
        if self.fork.load(Ordering::Relaxed).is_null() {
            return false;
        }
        self.users.fetch_add(1, Ordering::SeqCst);
        let _leave = Leave(&self.users);
        let fork = self.fork.load(Ordering::SeqCst);
        if fork.is_null() {
            return false;
        }
        // SAFETY: the fork was out after this thread counted itself a user (the loads and the
        // count are sequentially consistent with `Retract`'s store and wait), and the item
        // takes it back (`Retract`) and waits for every user to leave before the fork is
        // dropped; this thread leaves (`_leave`) after its last use. So the fork, and the
        // closure it lends (whose lifetime the slot's type erases), outlive this borrow.
        unsafe { &*fork }.work() > 0
    }
}

/// Where an item's sub-items run: on its team's waiting threads too ([`crate::team::Phase::forks`]),
/// or, outside a team, on the caller alone, in order ([`Forks::ALONE`]).
#[derive(Clone, Copy)]
pub(crate) struct Forks<'a> {
    /// The team's slot and its poisoned mark.
    team: Option<(&'a ForkSlot, &'a AtomicBool)>,
}

impl<'a> Forks<'a> {
    /// Outside a team: every sub-item runs on the caller, in order.
    pub(crate) const ALONE: Forks<'static> = Forks { team: None };

    /// The forks of a team with slot `slot` and poisoned mark `poisoned`.
    pub(super) fn of(slot: &'a ForkSlot, poisoned: &'a AtomicBool) -> Self {
        Forks { team: Some((slot, poisoned)) }
    }

    /// Runs `run(i)` for every `i < items`, each once, on this thread and on the team's threads
    /// waiting at a barrier (module docs); returns when all have run.
    ///
    /// # Panics
    /// If a sub-item panics, on any thread, or another thread of the team panicked.
    pub(crate) fn run(&self, items: usize, run: &(dyn Fn(usize) + Sync)) {
        let Some((slot, poisoned)) = self.team.filter(|_| items > 1) else {
            return (0..items).for_each(run);
        };
        let fork = Fork { run, items, next: AtomicUsize::new(0), done: AtomicUsize::new(0) };
        let erased = ptr::from_ref(&fork).cast::<Fork<'static>>().cast_mut();
        if slot.fork.compare_exchange(ptr::null_mut(), erased, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            // Another fork is out, or this runs inside one.
            return (0..items).for_each(run);
        }
        // Dropped before `fork` (declared after it), on return and while unwinding.
        let _retract = Retract(slot);
        fork.work();
        let mut spins = 0;
        while fork.done.load(Ordering::Acquire) < items {
            pause(poisoned, &mut spins);
        }
    }

    /// Runs `f(c, chunk)` for every chunk `c` of `slice` cut in chunks of `size` elements (the
    /// last one shorter), each once, as [`Forks::run`] does.
    ///
    /// # Panics
    /// As [`Forks::run`], or if `size` is 0.
    pub(crate) fn chunks_mut<T: Send>(
        &self,
        slice: &mut [T],
        size: usize,
        f: impl Fn(usize, &mut [T]) + Sync,
    ) {
        assert!(size > 0, "chunks of no element");
        let (len, base) = (slice.len(), Base(slice.as_mut_ptr()));
        self.run(len.div_ceil(size), &|c| {
            let start = c * size;
            let end = (start + size).min(len);
            // SAFETY: `run` hands each chunk index to one call alone, the chunks of distinct
            // indices are disjoint ranges within `slice` (in bounds: `start < len` for every
            // index below `len.div_ceil(size)`), and `slice` is borrowed mutably for the whole
            // of `run`; this borrow ends with the call.
            let chunk = unsafe { std::slice::from_raw_parts_mut(base.at(start), end - start) };
            f(c, chunk);
        });
    }
}

/// The start of a slice whose disjoint chunks sub-items write ([`Forks::chunks_mut`]).
struct Base<T>(*mut T);

impl<T> Base<T> {
    /// The address of element `i` (in bounds: the caller's).
    fn at(&self, i: usize) -> *mut T {
        self.0.wrapping_add(i)
    }
}

// SAFETY: a `Base` only makes the disjoint chunks of `Forks::chunks_mut`, each reached by one
// thread at a time, so sharing it across threads shares no element; `T: Send` because elements
// are written from other threads.
unsafe impl<T: Send> Sync for Base<T> {}
