//! `SharedSlice`: a mutable slice that the threads of a team (see `crate::team`) read and write
//! at disjoint places during a phase, and the [`Part`]s through which a phase reaches it in
//! safe code. This module and `crate::team` hold weft's only `unsafe` definitions; the modules
//! that still call the unsafe accessors are listed in the crate docs.
//!
//! # Safe phases
//!
//! A phase is safe code (`Team::for_each_chunk`) when each of its work items reaches each
//! shared array in one of these ways, a [`Part`] of the phase:
//!
//! * **reads it whole**, and no item writes it: a [`SharedSlice`] itself, or a plain `&[T]`
//!   (which nothing can write while it is borrowed);
//! * **writes its own chunk**: item `c` gets chunk `c` of a fixed size
//!   ([`SharedSlice::chunks_mut`]), its own element `c` ([`SharedSlice::each_mut`], one output
//!   per item), or, as the one item of a phase, the whole array ([`SharedSlice::whole_mut`]);
//!   [`SharedSlice::slice`] first narrows the array (a cloth's particles within the model's).
//!
//! The caller argues nothing: the team hands each item index to one thread per phase, so chunk
//! `c` goes to one item; before a thread claims an item it checks that its parts are those of
//! every other thread in the phase (the same arrays, cut the same way) and that no part
//! overlaps another unless both only read; a phase cannot start inside another; and a borrow
//! cannot outlive its item (see `crate::team`).
//!
//! # Phases that still need `unsafe`
//!
//! Writes scattered across an array by index (the lanes of a colour batch writing their
//! particles, a chunk of self-collision slots moving its slots' particles) are disjoint by an
//! invariant of the data that no type carries. Those phases reach such an array through the
//! unsafe accessors `write`, `load` and `store` (inside a phase, for an array that is not one of
//! its parts), each call stating the rule of its phase that makes it sound:
//!
//! * **reads** (`load`): no work item of the phase writes the element;
//! * **writes** (`write`, `store`): each work item writes only its own elements, which no other item of the phase
//!   reads or writes: in a batch plan, the particles of a block or of a colour's lanes (the plan
//!   invariant that `weft-core` checks when it builds a plan, see
//!   `weft_core::colouring::BatchPlan::assert_invariant`), and the multipliers `λ` of the
//!   batches an item runs.
//!
//! The parts of a phase count as its accesses: an unsafe access must not touch what a part
//! hands to another item. Every unsafe access takes the [`Phase`] a work item is handed, and
//! the borrow it returns lives no longer than that item, so nothing borrowed under the rules of
//! one phase is used in a later phase whose rules are different.
//!
//! Indices given to `load` and `store` are checked against the length once per solve (every
//! index of a constraint set is below its `particle_count`, which the solver asserts equals the
//! record count), not on every element access; debug builds check every one.

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
// through its unsafe methods and through phase parts (see `Part`), whose contracts rule out data
// races. `T: Send` because elements are written from other threads.
unsafe impl<T: Send> Send for SharedSlice<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SharedSlice<'_, T> {}

impl<'a, T> SharedSlice<'a, T> {
    /// Shares `slice` for the duration of the borrow.
    pub(crate) fn new(slice: &'a mut [T]) -> Self {
        SharedSlice { ptr: slice.as_mut_ptr(), len: slice.len(), _borrow: PhantomData }
    }

    /// The number of elements.
    pub(crate) fn len(&self) -> usize {
        self.len
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

impl<'a, T> SharedSlice<'a, T> {
    /// The elements `range` as a handle of their own, under the same borrow: the array a
    /// phase part covers when it is only part of a larger one.
    ///
    /// # Panics
    /// If `range` is not within the slice.
    pub(crate) fn slice(self, range: Range<usize>) -> Self {
        assert!(range.start <= range.end && range.end <= self.len, "range out of bounds");
        // In bounds (checked), so the new pointer stays inside the same allocation.
        SharedSlice { ptr: self.ptr.wrapping_add(range.start), len: range.len(), _borrow: PhantomData }
    }

    /// A phase part that hands work item `c` the elements `c·chunk..(c + 1)·chunk` (cut at the
    /// end; empty past it), mutably.
    pub(crate) fn chunks_mut(self, chunk: usize) -> ChunksMut<'a, T> {
        ChunksMut { slice: self, chunk }
    }

    /// A phase part that hands work item 0 every element, mutably (and the other items none):
    /// the part of a phase of one work item.
    #[allow(dead_code, reason = "for phases of one work item; only the tests have one so far")]
    pub(crate) fn whole_mut(self) -> ChunksMut<'a, T> {
        self.chunks_mut(usize::MAX)
    }

    /// A phase part that hands work item `c` element `c`, mutably: one output per item.
    pub(crate) fn each_mut(self) -> EachMut<'a, T> {
        EachMut { slice: self }
    }

    /// What this handle covers, for the team's checks, handed out in chunks of `chunk`
    /// elements.
    fn part_key(&self, chunk: usize, writes: bool) -> PartKey {
        let size = std::mem::size_of::<T>();
        PartKey {
            start: self.ptr as usize,
            bytes: self.len * size,
            chunk: chunk.saturating_mul(size),
            writes,
        }
    }
}

/// The elements of chunk `c` of `chunk` elements of a slice of `len`: `start..end`, cut at the
/// end, empty past it.
#[inline(always)]
fn chunk_bounds(c: usize, chunk: usize, len: usize) -> (usize, usize) {
    let start = c.saturating_mul(chunk).min(len);
    (start, start.saturating_add(chunk).min(len))
}

/// What a part of a phase covers (see [`Part`]): the bytes `start..start + bytes`, handed to
/// work item `c` as its chunk `c` of `chunk` bytes if the part `writes`, read by every item
/// otherwise. The team compares the keys of every thread's phase and rejects parts that
/// overlap (see `crate::team`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct PartKey {
    /// The address of the first byte.
    pub(crate) start: usize,
    /// The length in bytes.
    pub(crate) bytes: usize,
    /// The bytes of one item's chunk (saturated), for a part that writes.
    pub(crate) chunk: usize,
    /// Whether the items get mutable borrows.
    pub(crate) writes: bool,
}

impl PartKey {
    /// Whether the two parts share a byte.
    pub(crate) fn overlaps(&self, other: &PartKey) -> bool {
        self.bytes > 0
            && other.bytes > 0
            && self.start < other.start + other.bytes
            && other.start < self.start + self.bytes
    }
}

/// One array as the work items of a phase reach it (see `Team::for_each_chunk`): read whole by
/// every item (a [`SharedSlice`], or a plain `&[T]`), cut into one mutable chunk per item
/// ([`ChunksMut`], [`SharedSlice::whole_mut`]), or one mutable element per item ([`EachMut`]).
///
/// # Safety
/// [`key`](Part::key) covers every element that [`get`](Part::get) can borrow: for a part that
/// writes, `get(c)` borrows only elements within chunk `c` of the key (bytes
/// `start + c·chunk..start + (c + 1)·chunk`); for a part that reads, `get` borrows nothing
/// mutably.
pub(crate) unsafe trait Part: Copy {
    /// What a work item gets: `&[T]`, `&mut [T]` or `&mut T`, for the duration `'p` of the item.
    type Out<'p>;

    /// What the part covers, for the team's checks.
    fn key(&self) -> PartKey;

    /// The borrow of work item `c`.
    ///
    /// # Safety
    /// For all of `'p`, which ends before the array's borrow does: if the part writes, nothing
    /// else reads or writes chunk `c`; if it reads, nothing writes any element of the key.
    unsafe fn get<'p>(self, c: usize) -> Self::Out<'p>;
}

/// A whole array that every work item of the phase reads; nothing writes it during the phase.
// SAFETY: the key covers the whole slice and `get` borrows it shared.
unsafe impl<T: Sync + 'static> Part for SharedSlice<'_, T> {
    type Out<'p> = &'p [T];

    fn key(&self) -> PartKey {
        self.part_key(self.len, false)
    }

    #[inline(always)]
    unsafe fn get<'p>(self, _c: usize) -> &'p [T] {
        // SAFETY: the pointer and length come from a live `&mut [T]` that outlives `'p` (the
        // caller's guarantee), and nothing writes any element during `'p`; elements are read
        // from several threads at once, which `T: Sync` allows.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// A plain shared slice, read by every work item: nothing can write it while it is borrowed.
// SAFETY: `get` borrows nothing mutably (it hands out the slice itself).
unsafe impl<'a, T: Sync> Part for &'a [T] {
    type Out<'p> = &'a [T];

    fn key(&self) -> PartKey {
        let bytes = std::mem::size_of_val(*self);
        PartKey { start: self.as_ptr() as usize, bytes, chunk: bytes, writes: false }
    }

    #[inline(always)]
    unsafe fn get<'p>(self, _c: usize) -> Self::Out<'p> {
        self
    }
}

/// A [`SharedSlice`] cut into one mutable chunk per work item (see
/// [`SharedSlice::chunks_mut`]).
pub(crate) struct ChunksMut<'a, T> {
    slice: SharedSlice<'a, T>,
    chunk: usize,
}

impl<T> Clone for ChunksMut<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ChunksMut<'_, T> {}

// SAFETY: `get(c)` borrows elements `c·chunk..(c + 1)·chunk` (cut at the end), which are chunk
// `c` of the key: same start, chunks of `chunk` elements.
unsafe impl<T: Send + 'static> Part for ChunksMut<'_, T> {
    type Out<'p> = &'p mut [T];

    fn key(&self) -> PartKey {
        self.slice.part_key(self.chunk, true)
    }

    #[inline(always)]
    unsafe fn get<'p>(self, c: usize) -> &'p mut [T] {
        let (start, end) = chunk_bounds(c, self.chunk, self.slice.len);
        // SAFETY: `start <= end <= len`, so the elements are inside the live `&mut [T]` the
        // handle was made from, which outlives `'p`; nothing else reads or writes them during
        // `'p` (the caller's guarantee), and they may be written from another thread than the
        // one that lent them, which `T: Send` allows.
        unsafe { std::slice::from_raw_parts_mut(self.slice.ptr.add(start), end - start) }
    }
}

/// A [`SharedSlice`] of one element per work item (see [`SharedSlice::each_mut`]).
pub(crate) struct EachMut<'a, T> {
    slice: SharedSlice<'a, T>,
}

impl<T> Clone for EachMut<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for EachMut<'_, T> {}

// SAFETY: `get(c)` borrows element `c`, which is chunk `c` of the key (chunks of one element).
unsafe impl<T: Send + 'static> Part for EachMut<'_, T> {
    type Out<'p> = &'p mut T;

    fn key(&self) -> PartKey {
        self.slice.part_key(1, true)
    }

    /// # Panics
    /// If the slice has no element `c`.
    #[inline(always)]
    unsafe fn get<'p>(self, c: usize) -> &'p mut T {
        assert!(c < self.slice.len, "one element per work item");
        // SAFETY: `c < len` (checked), so the element is inside the live `&mut [T]` the handle
        // was made from, which outlives `'p`; nothing else reads or writes it during `'p` (the
        // caller's guarantee), and `T: Send` lets another thread write it.
        unsafe { &mut *self.slice.ptr.add(c) }
    }
}

/// The parts of a phase: a tuple of one to [`MAX_PARTS`] [`Part`]s, each work item getting the
/// tuple of their borrows.
///
/// # Safety
/// [`for_each_key`](Parts::for_each_key) reports the key of every part, and
/// [`get`](Parts::get) is the tuple of the parts' own `get`.
pub(crate) unsafe trait Parts: Copy {
    /// The borrows of one work item, one per part.
    type Out<'p>;

    /// Calls `f` with the key of each part, in order.
    fn for_each_key(&self, f: impl FnMut(PartKey));

    /// The borrows of work item `c`.
    ///
    /// # Safety
    /// As [`Part::get`], for every part.
    unsafe fn get<'p>(self, c: usize) -> Self::Out<'p>;
}

/// The most parts a phase can have.
pub(crate) const MAX_PARTS: usize = 10;

macro_rules! parts_of_tuple {
    ($($p:ident $i:tt),+) => {
        // SAFETY: the keys are the parts' keys, and `get` is the tuple of their `get`.
        unsafe impl<$($p: Part),+> Parts for ($($p,)+) {
            type Out<'p> = ($($p::Out<'p>,)+);

            fn for_each_key(&self, mut f: impl FnMut(PartKey)) {
                $(f(self.$i.key());)+
            }

            #[inline(always)]
            unsafe fn get<'p>(self, c: usize) -> Self::Out<'p> {
                // SAFETY: the caller's guarantee for the tuple is this guarantee for each part.
                unsafe { ($(self.$i.get(c),)+) }
            }
        }
    };
}

// SAFETY: no part: no key, nothing borrowed.
unsafe impl Parts for () {
    type Out<'p> = ();

    fn for_each_key(&self, _f: impl FnMut(PartKey)) {}

    #[inline(always)]
    unsafe fn get<'p>(self, _c: usize) -> Self::Out<'p> {}
}

parts_of_tuple!(A 0);
parts_of_tuple!(A 0, B 1);
parts_of_tuple!(A 0, B 1, C 2);
parts_of_tuple!(A 0, B 1, C 2, D 3);
parts_of_tuple!(A 0, B 1, C 2, D 3, E 4);
parts_of_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);
parts_of_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
parts_of_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
parts_of_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
parts_of_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);

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
