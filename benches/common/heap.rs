//! A global allocator that counts, per thread, the bytes allocated and not
//! freed, and their peak: the heap figure of `benches/limits.rs` and the heap
//! bound of `tests/limits.rs`. Each user installs it with
//! `#[global_allocator] static ALLOCATOR: Counting = Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

pub struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn account(delta: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        account(layout.size() as isize);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        account(-(layout.size() as isize));
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        account(new_size as isize - layout.size() as isize);
        System.realloc(ptr, layout, new_size)
    }
}

/// Starts a peak measurement on this thread; returns the base to pass to
/// `peak_since`.
pub fn mark() -> isize {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    base
}

/// Peak heap held on this thread since `mark` returned `base`, in bytes.
pub fn peak_since(base: isize) -> isize {
    PEAK.with(Cell::get) - base
}
