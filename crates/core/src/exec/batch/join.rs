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
//!
//! A submitted batch no one waits for starts the same way on one pool
//! worker, its lead, when it has more than one worker: the lead calls the
//! others in at once before a call not known quick, and otherwise when
//! calls still wait `JOIN_AFTER` after it began. Two quick calls submitted
//! a frame then wake one pool thread, not two.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::{BatchInner, Origin};
use crate::registry::Tool;
use crate::runtime::{pool, timers};

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
    /// helpers (`before_watched_call`) instead of a timer armed now.
    pub(crate) fn watch_from_caller(&self) {
        self.drivers.watching.store(true, Ordering::Relaxed);
    }

    /// A submitted batch no one will wait for: it starts on one pool worker
    /// (`Origin::Lead`), which calls the others in before a call that is not
    /// known quick, or when calls still wait after `JOIN_AFTER`. A batch of
    /// quick calls then wakes one thread, not one per call up to its limit.
    pub(crate) fn start_on_lead(self: &Arc<Self>) {
        self.drivers.watching.store(true, Ordering::Relaxed);
        let batch = self.clone();
        pool::spawn(move || {
            if let Some(began) = batch.drivers.began {
                let ns = u64::try_from(began.elapsed().as_nanos()).unwrap_or(u64::MAX);
                batch.drivers.watch_from_ns.store(ns, Ordering::Relaxed);
            }
            batch.drive_from(Origin::Lead, true, 0..0)
        });
    }

    /// Before the watching thread (the caller of `execute`, or a submitted
    /// batch's lead; any other `origin` returns at once) starts a call of
    /// `tool`, while calls are still unclaimed: `JOIN_AFTER` after it began,
    /// it calls helpers in. Before that, a call that may hold the thread
    /// (`may_wait`: for approval, a serial turn or a pump; or its tool is not
    /// known quick) has helpers called in now by a lead (a submitted batch
    /// starts at once), and the join timer armed for the rest of
    /// `JOIN_AFTER` by a caller. A quick tool's call that turns slow holds
    /// its siblings until it returns; the next one then finds `JOIN_AFTER`
    /// passed.
    pub(super) fn before_watched_call(
        self: &Arc<Self>,
        tool: &Tool,
        may_wait: bool,
        origin: Origin,
    ) {
        let watcher = matches!(origin, Origin::Caller | Origin::Lead);
        if !watcher || !self.drivers.watching.load(Ordering::Relaxed) || !self.has_unclaimed() {
            return;
        }
        let Some(began) = self.drivers.began else {
            return;
        };
        let from = Duration::from_nanos(self.drivers.watch_from_ns.load(Ordering::Relaxed));
        let elapsed = began.elapsed().saturating_sub(from);
        if elapsed < JOIN_AFTER && !may_wait && tool.stats.is_quick() {
            return;
        }
        self.drivers.watching.store(false, Ordering::Relaxed);
        if elapsed >= JOIN_AFTER || origin == Origin::Lead {
            self.call_helpers();
        } else {
            self.join_after(JOIN_AFTER - elapsed, false);
        }
    }
}
