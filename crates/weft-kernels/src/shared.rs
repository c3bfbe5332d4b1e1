//! `SharedSlice`: a mutable slice that the threads of a team (see `crate::team`) read and write
//! at disjoint places during a phase. This module holds weft's only `unsafe` definitions; the
//! modules that call them are listed in the crate docs.
//!
//! Every access goes through a [`Phase`], the token a work item is handed by
//! `Team::for_each`, and the borrow it returns lives no longer than that work item. A caller
//! therefore states, at each access, why the rules of *this* phase make it sound, and nothing
//! it borrowed can be used in a later phase whose rules are different. The rules are of two
//! kinds:
//!
//! * **reads**: no work item of the phase writes the slice (e.g. the previous positions during
//!   the constraint phases, written only by the prediction phase);
//! * **writes**: each work item writes only its own elements, which no other item of the phase
//!   reads or writes: a chunk of particles claimed once per phase, or, in a batch plan, the
//!   particles of a block or of a colour's lanes (the plan invariant that `weft-core` checks
//!   when it builds a plan, see `weft_core::colouring::BatchPlan::assert_invariant`), and the
//!   multipliers `λ` of the batches an item runs.
//!
//! Indices are checked against the length once per solve (every index of a constraint set is
//! below its `particle_count`, which the solver asserts equals the record count), not on every
//! element access; debug builds check every one.

use std::marker::PhantomData;
use std::ops::Range;

use crate::team::Phase;

/// A `&mut [T]` that the threads of a team reach at disjoint places, phase by phase. Copies
/// share the same borrow (a copy keeps the pointer in a register in the hot loop).
pub(crate) struct SharedSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> Clone for SharedSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SharedSlice<'_, T> {}

// SAFETY: `SharedSlice` is a mutable borrow split across threads; it hands out access only
// through its unsafe methods, whose contracts rule out data races. `T: Send` because elements
// are written from other threads.
unsafe impl<T: Send> Send for SharedSlice<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SharedSlice<'_, T> {}

impl<'a, T> SharedSlice<'a, T> {
    /// Shares `slice` for the duration of the borrow.
    pub(crate) fn new(slice: &'a mut [T]) -> Self {
        SharedSlice { ptr: slice.as_mut_ptr(), len: slice.len(), _borrow: PhantomData }
    }

    /// Shares `slice` for reading only.
    ///
    /// # Safety
    /// Nothing ever writes through the handle or its copies (`write` and `store` are never
    /// called on them).
    pub(crate) unsafe fn read_only(slice: &'a [T]) -> Self
    where
        T: Sync,
    {
        SharedSlice { ptr: slice.as_ptr().cast_mut(), len: slice.len(), _borrow: PhantomData }
    }

    /// The number of elements.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// All elements, shared, for the work item that holds `phase`.
    ///
    /// # Safety
    /// No work item of this phase writes any element.
    #[inline]
    pub(crate) unsafe fn read<'p>(&self, _phase: &'p Phase) -> &'p [T]
    where
        'a: 'p,
    {
        // SAFETY: the pointer and length come from a live `&'a mut [T]` (and `'a` outlives the
        // returned borrow); the caller guarantees that nothing writes through any copy of this
        // handle while the work item that holds `phase` runs, which the borrow cannot outlive.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The elements `range`, mutably, for the work item that holds `phase`.
    ///
    /// # Panics
    /// If `range` is not within the slice.
    ///
    /// # Safety
    /// No other work item of this phase reads or writes any element of `range`.
    #[inline]
    #[allow(clippy::mut_from_ref)] // disjoint `&mut` parts from shared handles: the contract above
    pub(crate) unsafe fn write<'p>(&self, _phase: &'p Phase, range: Range<usize>) -> &'p mut [T]
    where
        'a: 'p,
    {
        assert!(range.start <= range.end && range.end <= self.len, "range out of bounds");
        // SAFETY: in bounds (checked); the caller guarantees that no other work item touches
        // these elements while this one runs, which the borrow cannot outlive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(range.start), range.end - range.start) }
    }
}

impl<T: Copy> SharedSlice<'_, T> {
    /// Reads element `i`, for the work item that holds `phase`.
    ///
    /// # Safety
    /// `i < len`, and no other work item of this phase writes element `i`.
    #[inline(always)]
    pub(crate) unsafe fn load(&self, _phase: &Phase, i: u32) -> T {
        debug_assert!((i as usize) < self.len);
        // SAFETY: the caller guarantees `i` is in bounds and that no write races this read.
        unsafe { self.ptr.add(i as usize).read() }
    }

    /// Writes element `i`, for the work item that holds `phase`.
    ///
    /// # Safety
    /// `i < len`, and no other work item of this phase reads or writes element `i`.
    #[inline(always)]
    pub(crate) unsafe fn store(&self, _phase: &Phase, i: u32, value: T) {
        debug_assert!((i as usize) < self.len);
        // SAFETY: the caller guarantees `i` is in bounds and exclusive access to element `i`.
        unsafe { self.ptr.add(i as usize).write(value) }
    }
}
