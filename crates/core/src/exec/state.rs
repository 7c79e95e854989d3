//! The executor's state of one registry: its batches that may still run, its
//! main-thread queue and its approver. Kept in the registry's extension slot
//! (the registry holds it without knowing its type) and told of `close`
//! through it: the executor depends on the registry, never the reverse.

use std::sync::{Arc, Mutex, RwLock, Weak};

use super::approval::Approver;
use super::main_queue::MainQueue;
use crate::error::Error;
use crate::registry::{replace_hook, take_hook, Extension, Registry};

/// A batch as the registry's state sees it: something to end when the
/// registry closes or is freed (`batch::BatchInner` is the one kind).
pub(crate) trait Tracked: Send + Sync {
    /// Cancels the batch and ends every running call as cancelled too.
    fn abort(&self, reason: &str);
    /// Ends the host's use of every call of the batch (see `release_calls`).
    fn release_calls(&self);
}

#[derive(Default)]
pub(crate) struct ExecState {
    pub(crate) main: MainQueue,
    pub(crate) approver: RwLock<Option<Approver>>,
    /// Batches that may still be running, for `close`.
    batches: Mutex<Vec<Weak<dyn Tracked>>>,
    /// The registry's journal (`set_journal`), and its tool list as last
    /// hashed (see `batch::journaled`).
    pub(crate) journal: super::journal::Slot,
}

impl Extension for ExecState {
    /// Ends every call in flight as cancelled, then drops the approver (once
    /// its last invocation returns): after the cancellations were reported.
    fn on_close(&self) {
        for batch in self.batches() {
            batch.abort(crate::check::CLOSED_TEXT);
        }
        drop(take_hook(&self.approver));
    }
}

impl ExecState {
    /// The executor's state of `registry`, made on first use.
    pub(crate) fn of(registry: &Registry) -> Arc<ExecState> {
        // Only the executor fills the slot, so it always holds an ExecState;
        // if it ever did not, a detached state still runs calls correctly
        // (`close` would then not cancel them, only refuse to start them).
        registry.extension(ExecState::default).unwrap_or_default()
    }

    pub(crate) fn track(&self, batch: Weak<dyn Tracked>) {
        if let Ok(mut list) = self.batches.lock() {
            if list.len() >= 64 && list.len() == list.capacity() {
                list.retain(|b| b.strong_count() > 0);
            }
            list.push(batch);
        }
    }

    pub(crate) fn batches(&self) -> Vec<Arc<dyn Tracked>> {
        match self.batches.lock() {
            Ok(list) => list.iter().filter_map(Weak::upgrade).collect(),
            Err(_) => Vec::new(),
        }
    }

    pub(crate) fn forget_batches(&self) {
        if let Ok(mut list) = self.batches.lock() {
            list.clear();
        }
    }

    pub(crate) fn approver(&self) -> Option<Approver> {
        self.approver.read().ok().and_then(|a| a.clone())
    }
}

impl Registry {
    /// Sets (or with `None` removes) the approver: it receives every call of a
    /// tool flagged `REQUIRES_APPROVAL` that the batch did not pre-approve.
    /// Without one, such calls are `denied`. The replaced approver is dropped
    /// once its last invocation returned (see `set_event_hook`).
    pub fn set_approver(&self, approver: Option<Approver>) -> Result<(), Error> {
        let state = ExecState::of(self);
        replace_hook(self, &state.approver, approver, |_| {})
    }
}
