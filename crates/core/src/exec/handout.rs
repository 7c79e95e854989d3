//! Calls handed out to a host that runs them itself (a host batch, see
//! `host`): the run step puts a `HOST_RUN` tool's checked call here instead
//! of invoking its callback, while the handout is open on the thread that
//! opened it. Anything else (a call approved later, from another thread)
//! runs its tool's callback as every call does.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::thread::ThreadId;

use super::cell::Call;

/// One batch's handed-out calls, by the batch's index.
pub(crate) struct Handout {
    open: AtomicBool,
    thread: ThreadId,
    calls: Mutex<Vec<(usize, Call)>>,
}

impl Handout {
    /// Open on the calling thread.
    pub(crate) fn new() -> Handout {
        Handout {
            open: AtomicBool::new(true),
            thread: std::thread::current().id(),
            calls: Mutex::new(Vec::new()),
        }
    }

    /// Keeps `call` for the host, or gives it back: the handout is closed,
    /// or this is not the thread that opened it.
    pub(crate) fn take(&self, index: usize, call: Call) -> Result<(), Call> {
        if !self.open.load(Ordering::SeqCst) || std::thread::current().id() != self.thread {
            return Err(call);
        }
        match self.calls.lock() {
            Ok(mut calls) => {
                calls.push((index, call));
                Ok(())
            }
            Err(_) => Err(call),
        }
    }

    /// Closes the handout and returns its calls, in the order they came.
    pub(crate) fn close(&self) -> Vec<(usize, Call)> {
        self.open.store(false, Ordering::SeqCst);
        self.calls
            .lock()
            .map(|mut c| std::mem::take(&mut *c))
            .unwrap_or_default()
    }
}
