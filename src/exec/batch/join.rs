//! Caller-runs: a batch starts on the thread that runs it, and pool workers
//! join in only when some of its calls are still waiting to start after
//! `JOIN_AFTER` (its calls are slow, or one blocks its thread). Trivially
//! fast batches then cost no thread hand-off at all, and slow ones still fan
//! out to their limit within about `JOIN_AFTER`.
//!
//! The moment to join is a timer (see `timers`): nothing polls the batches.
//! The batch cancels it when its last result is in, so a batch that needed
//! no help leaves nothing behind. An executed batch arms it only before a
//! call that may hold its thread: arming wakes the timer thread, and then
//! the timer wakes it once more at its deadline (cancelled or not), two
//! context switches that cost more than a batch of quick calls itself. Its
//! thread checks the clock between calls instead while every call so far
//! was of a tool known to be quick (`ToolStats::is_quick`).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::BatchInner;
use crate::registry::Tool;
use crate::runtime::timers;

/// How long a batch's own thread works alone before helpers are called in.
/// A trivial call costs about 1 us, so a batch that needs no help is done by
/// then; a 20 ms tool delays its siblings by at most about this.
pub(crate) const JOIN_AFTER: Duration = Duration::from_micros(50);

impl BatchInner {
    /// Calls in helpers if calls are still waiting to start `delay` from
    /// now. With `hold`, the timer keeps the batch alive until then (a
    /// submitted batch: the host may free its handle at once); without, it
    /// does not (an executed one: its caller holds it, and must see it freed
    /// when it returns).
    pub(crate) fn join_after(self: &Arc<Self>, delay: Duration, hold: bool) {
        let timer = if hold {
            let held = self.clone();
            timers::after(delay, move || held.call_helpers())
        } else {
            let weak: Weak<BatchInner> = Arc::downgrade(self);
            timers::after(delay, move || {
                if let Some(batch) = weak.upgrade() {
                    batch.call_helpers();
                }
            })
        };
        self.keep_join_timer(timer);
    }

    /// An executed batch: its own thread watches for the moment to call in
    /// helpers (`before_caller_call`) instead of a timer armed now.
    pub(crate) fn watch_from_caller(&self) {
        self.drivers.caller_watch.store(true, Ordering::Relaxed);
    }

    /// Before the batch's own thread starts a call of `tool`, while it
    /// watches for the moment to join (`watch_from_caller`) and calls are
    /// still unclaimed: past `JOIN_AFTER` it calls helpers in now; before
    /// that, it arms the join timer for the rest of `JOIN_AFTER` unless the
    /// call cannot hold the thread long (`quick`: a tool known to be quick,
    /// approved or needing no approval, not serial). A quick tool's call
    /// that turns slow holds its siblings until it returns; the next one
    /// then finds `JOIN_AFTER` passed.
    pub(super) fn before_caller_call(self: &Arc<Self>, tool: &Tool, quick: bool) {
        if !self.drivers.caller_watch.load(Ordering::Relaxed) || !self.has_unclaimed() {
            return;
        }
        let Some(began) = self.drivers.began else {
            return;
        };
        let elapsed = began.elapsed();
        if elapsed >= JOIN_AFTER {
            self.drivers.caller_watch.store(false, Ordering::Relaxed);
            self.call_helpers();
        } else if !(quick && tool.stats.is_quick()) {
            self.drivers.caller_watch.store(false, Ordering::Relaxed);
            self.join_after(JOIN_AFTER - elapsed, false);
        }
    }
}
