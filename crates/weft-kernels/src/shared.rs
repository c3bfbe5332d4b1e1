//! The one place with `unsafe` in weft: data shared by the threads that solve one stage of a
//! batch plan.
//!
//! Inside one stage of a plan (see `crate::schedule`), the plan guarantees (and checks when it is
//! built, see `weft_core::colouring::BatchPlan::assert_invariant`) that work items touch disjoint
//! particle records, except for records nobody writes (pinned particles), which many may read;
//! and every work item owns a distinct range of multipliers `λ`, claimed exactly once. Threads
//! therefore never race on an element. [`SharedSlice`] lets them reach the elements through a raw
//! pointer; every use states which of these facts makes it sound. Indices are checked once per
//! solve (every index of a constraint set is below its `particle_count`, which the solver asserts
//! equals the record count), not on every access.

use std::marker::PhantomData;
use std::ops::Range;

/// A `&mut [T]` that several threads may read and write at disjoint places. Copies share the same
/// borrow (a copy keeps the pointer in a register in the hot loop).
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

// SAFETY: `SharedSlice` is a mutable borrow split across threads; it only hands out access
// through its unsafe methods, whose contracts rule out data races. `T: Send` because elements are
// written from other threads.
unsafe impl<T: Send> Send for SharedSlice<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SharedSlice<'_, T> {}

impl<'a, T> SharedSlice<'a, T> {
    /// Shares `slice` for the duration of the borrow.
    pub(crate) fn new(slice: &'a mut [T]) -> Self {
        SharedSlice { ptr: slice.as_mut_ptr(), len: slice.len(), _borrow: PhantomData }
    }

    /// All elements, shared.
    ///
    /// # Safety
    /// No thread writes any element while the returned borrow lives.
    #[inline]
    pub(crate) unsafe fn as_slice(&self) -> &'a [T] {
        // SAFETY: the pointer and length come from a live `&'a mut [T]`; the caller guarantees
        // that nothing writes through any copy of this handle while the borrow lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The elements `range`, mutably.
    ///
    /// # Panics
    /// If `range` is not within the slice.
    ///
    /// # Safety
    /// No other thread accesses any element of `range` while the returned borrow lives.
    #[inline]
    pub(crate) unsafe fn range_mut(&self, range: Range<usize>) -> &'a mut [T] {
        assert!(range.start <= range.end && range.end <= self.len, "range out of bounds");
        // SAFETY: in bounds (checked); the caller guarantees exclusive access for the lifetime.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(range.start), range.end - range.start) }
    }
}

impl<'a, T: Copy> SharedSlice<'a, T> {
    /// Reads element `i`.
    ///
    /// # Safety
    /// `i < len`, and no other thread writes element `i` during this call.
    #[inline(always)]
    pub(crate) unsafe fn load(&self, i: u32) -> T {
        debug_assert!((i as usize) < self.len);
        // SAFETY: the caller guarantees `i` is in bounds and that no write races this read.
        unsafe { self.ptr.add(i as usize).read() }
    }

    /// Writes element `i`.
    ///
    /// # Safety
    /// `i < len`, and no other thread reads or writes element `i` during this call.
    #[inline(always)]
    pub(crate) unsafe fn store(&self, i: u32, value: T) {
        debug_assert!((i as usize) < self.len);
        // SAFETY: the caller guarantees `i` is in bounds and exclusive access to element `i`.
        unsafe { self.ptr.add(i as usize).write(value) }
    }
}
