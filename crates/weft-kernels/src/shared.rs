//! The one place with `unsafe` in weft: particle records shared by the threads that solve one
//! colour.
//!
//! Inside one colour, the batch plan guarantees (and checks when it is built, see
//! `weft_core::colouring::BatchPlan::assert_invariant`) that every particle is written by at most
//! one lane, that pinned particles and padding lanes are never written, and therefore that a
//! record written by one lane is read by no other lane. Threads given disjoint batch ranges of one
//! colour therefore touch disjoint records, except for records nobody writes (pinned particles),
//! which many may read. [`SharedRecords`] lets them do that through a raw pointer. Indices are
//! checked once per solve (every index of a `DistanceLanes` is below its `particle_count`, which
//! the solver asserts equals the record count), not on every access.

use std::marker::PhantomData;

use crate::records::Record;

/// A `&mut [Record]` that several threads may read and write at disjoint indices. Copies share
/// the same borrow (a copy keeps the pointer in a register in the hot loop).
#[derive(Clone, Copy)]
pub(crate) struct SharedRecords<'a> {
    ptr: *mut Record,
    len: usize,
    _borrow: PhantomData<&'a mut [Record]>,
}

// SAFETY: `SharedRecords` is a mutable borrow split across threads; `Record` is plain `f32` data.
// Data-race freedom is the contract of `load` and `store` (unsafe fns), not of sending the handle.
unsafe impl Send for SharedRecords<'_> {}
// SAFETY: as above; shared access only happens through the unsafe `load`/`store`.
unsafe impl Sync for SharedRecords<'_> {}

impl<'a> SharedRecords<'a> {
    /// Shares `records` for the duration of the borrow.
    pub(crate) fn new(records: &'a mut [Record]) -> Self {
        SharedRecords { ptr: records.as_mut_ptr(), len: records.len(), _borrow: PhantomData }
    }

    /// Reads record `i`.
    ///
    /// # Safety
    /// `i < len`, and no other thread writes record `i` during this call.
    #[inline(always)]
    pub(crate) unsafe fn load(&self, i: u32) -> Record {
        debug_assert!((i as usize) < self.len);
        // SAFETY: the caller guarantees `i` is in bounds and that no write races this read.
        unsafe { self.ptr.add(i as usize).read() }
    }

    /// Writes record `i`.
    ///
    /// # Safety
    /// `i < len`, and no other thread reads or writes record `i` during this call.
    #[inline(always)]
    pub(crate) unsafe fn store(&self, i: u32, record: Record) {
        debug_assert!((i as usize) < self.len);
        // SAFETY: the caller guarantees `i` is in bounds and exclusive access to record `i`.
        unsafe { self.ptr.add(i as usize).write(record) }
    }
}
