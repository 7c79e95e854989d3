//! A call left open holds no thread. When a tool's callback returns with
//! its call still open (the tool completes it later, from another thread or
//! an event loop; the MCP server makes such a call a task), the pool thread
//! that ran it goes back to the pool at once. What that thread used to keep
//! while it waited, the open call keeps instead: its own state (its timeout
//! still fires when the host let go of it), its tool (whose destroy waits
//! for its calls in flight, and a serial tool's turn) and its driver's place
//! in the batch's limit. The call's delivery hands them back: the
//! driver resumes on a pool thread with the calls it had claimed. So the
//! pool's thread cap counts callbacks running, not calls open.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::{BatchInner, Origin};
use crate::exec::cell::CallCell;
use crate::registry::Tool;
use crate::runtime::pool;

type Then = Box<dyn FnOnce() + Send>;

/// What waits for a slot's result: the parked driver, if any.
#[derive(Default)]
pub(super) struct Parked {
    then: Mutex<Option<Then>>,
    /// `then` was set: a delivery takes the lock only then (none for the
    /// calls their callback completed).
    set: AtomicBool,
}

impl Parked {
    /// The slot's result was handed over (`delivered` is set): runs what
    /// waited for it, on this thread.
    pub(super) fn resume(&self) {
        if self.set.load(Ordering::SeqCst) {
            if let Some(then) = self.take() {
                then();
            }
        }
    }

    fn take(&self) -> Option<Then> {
        self.then.lock().ok().and_then(|mut t| t.take())
    }
}

impl BatchInner {
    /// Parks the thread that ran call `index`, whose callback returned with
    /// the call open: until the call's result is handed over, the batch
    /// holds the call and its tool (`open`) and, with `driver` (the driver's
    /// origin and the calls it had claimed after this one), the driver's
    /// place in the limit. The delivery then releases the tool and resumes
    /// the driver on a pool thread. False if the result was handed over
    /// already: the thread goes on as if the call had completed before its
    /// callback returned.
    pub(super) fn park(
        self: &Arc<Self>,
        index: usize,
        open: Option<(Arc<Tool>, Arc<CallCell>)>,
        driver: Option<(Origin, Range<usize>)>,
    ) -> bool {
        let slot = &self.slots[index];
        let lead = matches!(driver, Some((Origin::Lead, _)));
        // Weak: the call holds its batch until it has its result.
        let batch = Arc::downgrade(self);
        let then: Then = Box::new(move || {
            if let Some((tool, _cell)) = open {
                tool.leave();
            }
            if let (Some((_, rest)), Some(batch)) = (driver, batch.upgrade()) {
                batch.resume_driver(rest);
            }
        });
        match slot.parked.then.lock() {
            Ok(mut t) => *t = Some(then),
            Err(_) => return false,
        }
        slot.parked.set.store(true, Ordering::SeqCst);
        // The delivery sets `delivered`, then reads `set`; this sets `set`,
        // then reads `delivered`: one of the two sees the other, and the one
        // that takes `then` runs it (here: by going on).
        if slot.delivered.load(Ordering::SeqCst) && slot.parked.take().is_some() {
            return false;
        }
        // A lead that has not called helpers in yet does it now: its call
        // was not quick after all.
        if lead && self.drivers.watching.swap(false, Ordering::Relaxed) {
            self.call_helpers();
        }
        true
    }

    /// The call a driver was parked on has its result: the driver goes on
    /// with the calls `rest` it had claimed, then with the batch's others,
    /// on a pool thread; or ends here if none is left to start.
    fn resume_driver(self: &Arc<Self>, rest: Range<usize>) {
        if rest.is_empty() && !self.has_unclaimed() {
            self.drivers.driving.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        let batch = self.clone();
        pool::spawn_urgent(move || batch.go_on(Origin::Worker, rest));
    }
}
