//! Caller-runs: a batch starts on the thread that runs it, and pool workers
//! join in only when some of its calls are still waiting to start after
//! `JOIN_AFTER` (its calls are slow, or one blocks its thread). Trivially
//! fast batches then cost no thread hand-off at all, and slow ones still fan
//! out to their limit within about `JOIN_AFTER`.
//!
//! The moment to join is a timer (see `timers`): nothing polls the batches.
//! The batch cancels it when its last result is in, so a batch that needed
//! no help leaves nothing behind.

use std::sync::{Arc, Weak};
use std::time::Duration;

use super::batch::BatchInner;
use crate::runtime::timers;

/// How long a batch's own thread works alone before helpers are called in.
/// A trivial call costs about 1 us, so a batch that needs no help is done by
/// then; a 20 ms tool delays its siblings by at most about this.
pub(crate) const JOIN_AFTER: Duration = Duration::from_micros(50);

/// Calls in helpers for `batch` if it still has calls waiting to start
/// `JOIN_AFTER` from now. With `hold`, the timer keeps the batch alive until
/// then (a submitted batch: the host may free its handle at once); without,
/// it does not (an executed one: its caller holds it, and must see it freed
/// when it returns).
pub(crate) fn watch(batch: &Arc<BatchInner>, hold: bool) {
    let timer = if hold {
        let held = batch.clone();
        timers::after(JOIN_AFTER, move || held.call_helpers())
    } else {
        let weak: Weak<BatchInner> = Arc::downgrade(batch);
        timers::after(JOIN_AFTER, move || {
            if let Some(batch) = weak.upgrade() {
                batch.call_helpers();
            }
        })
    };
    batch.keep_join_timer(timer);
}
