//! The main-thread queue: calls of `MAIN_THREAD` tools waiting for a thread
//! that pumps the registry (or a main thread waiting on their batch), and
//! which threads are main threads. This module alone touches it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::batch::BatchInner;
use super::run::PendingRun;
use super::state::ExecState;
use crate::registry::Registry;

/// One registry's queue of main-thread calls, oldest first, and its main
/// threads.
#[derive(Default)]
pub(crate) struct MainQueue {
    queue: Mutex<VecDeque<PendingRun>>,
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

fn of(run: &PendingRun, batch: &BatchInner) -> bool {
    std::ptr::eq(Arc::as_ptr(&run.batch), batch)
}

impl MainQueue {
    pub(crate) fn push(&self, run: PendingRun) {
        if let Ok(mut q) = self.queue.lock() {
            q.push_back(run);
        }
    }

    /// The oldest call of any batch (for `pump`).
    fn pop(&self) -> Option<PendingRun> {
        self.queue.lock().ok()?.pop_front()
    }

    /// The oldest call of `batch`.
    pub(crate) fn pop_of(&self, batch: &BatchInner) -> Option<PendingRun> {
        let mut q = self.queue.lock().ok()?;
        let pos = q.iter().position(|r| of(r, batch))?;
        q.remove(pos)
    }

    pub(crate) fn has_of(&self, batch: &BatchInner) -> bool {
        self.queue
            .lock()
            .map(|q| q.iter().any(|r| of(r, batch)))
            .unwrap_or(false)
    }

    /// Removes every call of `batch`, oldest first.
    pub(crate) fn drain_of(&self, batch: &BatchInner) -> VecDeque<PendingRun> {
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
    fn mark_pump_thread(&self) {
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

/// Runs main-thread tool calls queued on `registry`, on this thread, for about
/// `budget` (at least one call if any is queued). Returns how many ran.
pub fn pump(registry: &Registry, budget: Duration) -> usize {
    let state = ExecState::of(registry);
    let main = &state.main;
    main.mark_pump_thread();
    let deadline = Instant::now() + budget;
    let mut ran = 0;
    while let Some(run) = main.pop() {
        run.run(false);
        ran += 1;
        if Instant::now() >= deadline {
            break;
        }
    }
    ran
}
