//! Heap memory measured: [`Counting`], a global allocator that forwards to the system's and
//! counts the bytes in use and their peak, and the memory rows of `weft bench`.
//!
//! The `weft` binary installs [`Counting`] (one atomic add per allocation and per free: a bake
//! allocates nothing per time step, so it costs nothing measurable). A program that does not
//! install it reads zeros, and the rows say the peak was not measured.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};

use weft_bake::{BakeOptions, CheckpointPolicy};

use crate::scenes::comparison_grid;

/// Bytes allocated and not yet freed.
static IN_USE: AtomicUsize = AtomicUsize::new(0);
/// The most of [`IN_USE`] since the last [`reset_peak`].
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting the bytes in use and their peak (install it with
/// `#[global_allocator]`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

impl Counting {
    fn grew(bytes: usize) {
        let now = IN_USE.fetch_add(bytes, Ordering::Relaxed) + bytes;
        PEAK.fetch_max(now, Ordering::Relaxed);
    }

    fn shrank(bytes: usize) {
        IN_USE.fetch_sub(bytes, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments, so `System`'s guarantees
// are this allocator's; the counting touches only two atomics and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees for `alloc`, passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            Self::grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees for `alloc_zeroed`, passed on unchanged.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            Self::grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's guarantees for `dealloc` (`ptr` came from this allocator, that is
        // from `System`, with `layout`), passed on unchanged.
        unsafe { System.dealloc(ptr, layout) };
        Self::shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's guarantees for `realloc`, passed on unchanged.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // The difference only: a block that moves is copied and freed within the call.
            match new_size.checked_sub(layout.size()) {
                Some(more) => Self::grew(more),
                None => Self::shrank(layout.size() - new_size),
            }
        }
        p
    }
}

/// Heap bytes in use now (0 unless [`Counting`] is the global allocator).
pub fn in_use() -> usize {
    IN_USE.load(Ordering::Relaxed)
}

/// Starts a new peak at the bytes in use now; returns them.
pub fn reset_peak() -> usize {
    let now = in_use();
    PEAK.store(now, Ordering::Relaxed);
    now
}

/// The most heap bytes in use since the last [`reset_peak`].
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Writes one row per grid size: the heap a 30-frame bake of the comparison grid takes at its
/// peak beyond what was in use before it (the model included: it is cloned inside the
/// measure), in bytes per particle, against the heap part of the estimate `weft validate`
/// prints ([`weft_bake::memory::bake_heap_bytes`]: its peak less the process and the scene, which
/// a bake of a model built in code does not hold).
pub(crate) fn memory_rows(sizes: &[u32], out: &mut String) -> anyhow::Result<()> {
    let scratch = std::env::temp_dir().join(format!("weft-bench-memory-{}", std::process::id()));
    let result = (|| -> anyhow::Result<()> {
        for &n in sizes {
            let model = comparison_grid(n, 30)?;
            let particles = model.particles().len() as f64;
            let options = BakeOptions {
                checkpoints: CheckpointPolicy::Never,
                threads: Some(1),
                ..BakeOptions::new(scratch.join(n.to_string()))
            };
            let before = reset_peak();
            let mut baked = model.clone();
            weft_bake::bake_model(&mut baked, &options)?;
            let measured = peak().saturating_sub(before);
            drop(baked);
            let guess = weft_bake::memory::bake_heap_bytes(&model, 1);
            if measured == 0 {
                writeln!(
                    out,
                    "  {n}×{n} grid: peak not measured (the counting allocator is not installed); \
                     estimated {:.0} B per particle",
                    guess as f64 / particles
                )?;
            } else {
                writeln!(
                    out,
                    "  {n}×{n} grid ({} particles), 30 frames baked to PC2 on 1 thread: peak heap {:.1} MiB, \
                     {:.0} B per particle; weft validate's estimate of it {:.0} B per particle ({:.2}× the peak)",
                    model.particles().len(),
                    measured as f64 / (1 << 20) as f64,
                    measured as f64 / particles,
                    guess as f64 / particles,
                    guess as f64 / measured as f64
                )?;
            }
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    result
}
