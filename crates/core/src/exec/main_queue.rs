//! The main-thread queue: calls of `MAIN_THREAD` tools waiting for a thread
//! that pumps the registry (or a main thread waiting on their batch), and
//! which threads are main threads. This module alone touches it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::waiting::Waiting;

/// A call waiting for a main thread.
pub(crate) type MainRun = Box<dyn Waiting>;

/// One registry's queue of main-thread calls, oldest first, and its main
/// threads.
#[derive(Default)]
pub(crate) struct MainQueue {
    queue: Mutex<VecDeque<MainRun>>,
    /// Threads that ever pumped (see `thread_token`): each counts as a main
    /// thread. `any_pumped` keeps the lock off the path of hosts that never pump.
    pumped: Mutex<Vec<u64>>,
    any_pumped: AtomicBool,
}

thread_local! {
    static TOKEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A number naming the calling thread, never reused; `None` once the thread's
/// locals are gone (a thread-exit destructor calling into capstan).
fn thread_token() -> Option<u64> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    TOKEN
        .try_with(|t| {
            if t.get() == 0 {
                t.set(NEXT.fetch_add(1, Ordering::Relaxed));
            }
            t.get()
        })
        .ok()
}

/// Whether `run` belongs to the batch whose key is `batch`.
fn of(run: &MainRun, batch: usize) -> bool {
    run.batch_key() == batch
}

impl MainQueue {
    pub(crate) fn push(&self, run: MainRun) {
        if let Ok(mut q) = self.queue.lock() {
            q.push_back(run);
        }
    }

    /// The oldest call of any batch (for `pump`).
    pub(crate) fn pop(&self) -> Option<MainRun> {
        self.queue.lock().ok()?.pop_front()
    }

    /// The oldest call of `batch` (its key).
    pub(crate) fn pop_of(&self, batch: usize) -> Option<MainRun> {
        let mut q = self.queue.lock().ok()?;
        let pos = q.iter().position(|r| of(r, batch))?;
        q.remove(pos)
    }

    pub(crate) fn has_of(&self, batch: usize) -> bool {
        self.queue
            .lock()
            .map(|q| q.iter().any(|r| of(r, batch)))
            .unwrap_or(false)
    }

    /// Removes every call of `batch`, oldest first.
    pub(crate) fn drain_of(&self, batch: usize) -> VecDeque<MainRun> {
        match self.queue.lock() {
            Ok(mut q) => {
                let (mine, others) = q.drain(..).partition(|r| of(r, batch));
                *q = others;
                mine
            }
            Err(_) => VecDeque::new(),
        }
    }

    /// True on a thread that ever called `pump` on this registry: its main
    /// thread (there may be several).
    pub(crate) fn is_pump_thread(&self) -> bool {
        if !self.any_pumped.load(Ordering::Acquire) {
            return false;
        }
        let Some(me) = thread_token() else {
            return false;
        };
        self.pumped.lock().map(|t| t.contains(&me)).unwrap_or(false)
    }

    /// Records the calling thread as a main thread of this registry.
    pub(crate) fn mark_pump_thread(&self) {
        let Some(me) = thread_token() else {
            return;
        };
        if let Ok(mut t) = self.pumped.lock() {
            if !t.contains(&me) {
                t.push(me);
            }
        }
        self.any_pumped.store(true, Ordering::Release);
    }
}
