//! The main-thread queue: calls of `MAIN_THREAD` tools waiting for a thread
//! that pumps the registry (or a main thread waiting on their batch). This
//! module alone touches it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::batch::BatchInner;
use super::run::PendingRun;

/// One registry's queue of main-thread calls, oldest first.
#[derive(Default)]
pub struct MainQueue(Mutex<VecDeque<PendingRun>>);

fn of(run: &PendingRun, batch: &BatchInner) -> bool {
    std::ptr::eq(Arc::as_ptr(&run.batch), batch)
}

impl MainQueue {
    pub(crate) fn push(&self, run: PendingRun) {
        if let Ok(mut q) = self.0.lock() {
            q.push_back(run);
        }
    }

    /// The oldest call of any batch (for `pump`).
    pub(crate) fn pop(&self) -> Option<PendingRun> {
        self.0.lock().ok()?.pop_front()
    }

    /// The oldest call of `batch`.
    pub(crate) fn pop_of(&self, batch: &BatchInner) -> Option<PendingRun> {
        let mut q = self.0.lock().ok()?;
        let pos = q.iter().position(|r| of(r, batch))?;
        q.remove(pos)
    }

    pub(crate) fn has_of(&self, batch: &BatchInner) -> bool {
        self.0
            .lock()
            .map(|q| q.iter().any(|r| of(r, batch)))
            .unwrap_or(false)
    }

    /// Removes every call of `batch`, oldest first.
    pub(crate) fn drain_of(&self, batch: &BatchInner) -> VecDeque<PendingRun> {
        match self.0.lock() {
            Ok(mut q) => {
                let (mine, others) = q.drain(..).partition(|r| of(r, batch));
                *q = others;
                mine
            }
            Err(_) => VecDeque::new(),
        }
    }
}
