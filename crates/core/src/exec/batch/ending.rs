//! How a batch ends early: its deadline, cancellation, the registry's close.

use std::sync::atomic::{fence, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::BatchInner;
use crate::call::Outcome;
use crate::exec::cell::CallCell;
use crate::runtime::pool;
use crate::runtime::timers::{self, TimerSlot};

/// How long main-thread calls of a batch without a deadline wait for a pump
/// (docs/limits.md).
pub(crate) const PUMP_WAIT_MS: u32 = 60_000;

impl BatchInner {
    /// Arms the batch's deadline, if it has one.
    pub(crate) fn arm_deadline(self: &Arc<Self>) {
        if self.rules.deadline_ms == 0 || self.is_done() {
            return;
        }
        // On the timer thread: running calls see the cancellation at once,
        // even with every pool thread busy (possibly with them); the results,
        // which run host code, are delivered on a pool thread (here when
        // every pool thread is busy: they may all wait for them).
        self.arm(
            self.rules.deadline_ms,
            &self.ending.deadline_timer,
            |batch| {
                let expiring = batch.begin_deadline();
                pool::spawn_or_run_here(move || batch.expire_deadline(expiring));
            },
        );
    }

    /// Runs `fire` on the timer thread `ms` after now, with the batch if it
    /// still exists, kept in `slot` (the last delivery cancels it under the
    /// slot's lock). `fire` must run no host code: it hands that to the pool.
    fn arm(
        self: &Arc<Self>,
        ms: u32,
        slot: &TimerSlot,
        fire: impl FnOnce(Arc<Self>) + Send + 'static,
    ) {
        let weak = Arc::downgrade(self);
        let timer = timers::after(Duration::from_millis(u64::from(ms)), move || {
            if let Some(batch) = weak.upgrade() {
                fire(batch);
            }
        });
        slot.keep(timer, || self.is_done());
    }

    pub(crate) fn deadline_ms(&self) -> u32 {
        self.rules.deadline_ms
    }

    pub(crate) fn deadline_passed(&self) -> bool {
        self.ending.deadline_passed.load(Ordering::SeqCst)
    }

    /// The result text of a call that could not start before the deadline.
    pub(crate) fn late_start_text(&self, tool: &str) -> String {
        format!(
            "Tool \"{tool}\" timed out: the batch deadline of {} ms passed while it waited \
             to start (for a free worker or an earlier call of a serial tool); it was not run.",
            self.rules.deadline_ms
        )
    }

    /// Without a deadline, bounds how long this batch's main-thread calls
    /// wait for a pump (issue 49: a host that never pumps otherwise waited
    /// for ever, with no message). Re-armed by each call queued: the calls
    /// still queued `PUMP_WAIT_MS` after the last one was are ended as timed
    /// out, saying what to do. A deadline replaces this bound.
    pub(super) fn arm_pump_wait(self: &Arc<Self>) {
        if self.rules.deadline_ms != 0 || self.is_done() {
            return;
        }
        self.arm(
            self.rules.pump_wait_ms,
            &self.ending.pump_wait_timer,
            |batch| {
                pool::spawn_or_run_here(move || {
                    let ms = batch.rules.pump_wait_ms;
                    batch.end_waiting_for_pump(|tool| {
                        format!(
                        "Tool \"{tool}\" timed out: it waited {ms} ms for the host's main thread \
                         to call capstan_registry_pump, and no thread did; it was not run. (A \
                         main-thread tool runs only inside capstan_registry_pump; \
                         capstan_exec_options.deadline_ms sets another bound on the wait.)"
                    )
                    })
                });
            },
        );
    }

    /// Ends this batch's calls still waiting for a main thread, as timed out.
    pub(super) fn expire_waiting_for_pump(&self) {
        let ms = self.rules.deadline_ms;
        self.end_waiting_for_pump(|tool| {
            format!(
                "Tool \"{tool}\" timed out: the batch deadline of {ms} ms passed while it \
                 waited for the host's main thread to call capstan_registry_pump; it was not run."
            )
        });
    }

    /// Ends this batch's calls still waiting for a main thread as timed out,
    /// each with `text(tool)`.
    fn end_waiting_for_pump(&self, text: impl Fn(&str) -> String) {
        for run in self.exec.main.drain_of(self.key()) {
            let why = text(run.tool_name());
            run.end_unrun(Outcome::Timeout, why);
        }
    }

    /// The deadline passed (the timer thread's part, no host code): no call
    /// starts any more, and the running calls it claims (returned) see the
    /// cancellation.
    fn begin_deadline(&self) -> Vec<Arc<CallCell>> {
        self.ending.deadline_passed.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        self.slots
            .iter()
            .filter_map(|slot| slot.cell.get().and_then(Weak::upgrade))
            .filter(|cell| cell.begin_expire())
            .collect()
    }

    /// The deadline passed: every call without a result ends `timeout`, with
    /// a text saying what it was waiting for. `expiring`: the running calls
    /// `begin_deadline` claimed.
    pub(crate) fn expire_deadline(&self, expiring: Vec<Arc<CallCell>>) {
        let ms = self.rules.deadline_ms;
        self.expire_waiting_for_pump();
        for approval in self.slots.iter().map(|s| &s.approval) {
            if let Some(cell) = approval.get().and_then(Weak::upgrade) {
                cell.expire(ms);
            }
        }
        for cell in expiring {
            let text = format!(
                "Tool \"{}\" did not finish within the batch deadline of {ms} ms and was \
                 cancelled.",
                cell.name()
            );
            cell.end_expire(text);
        }
        loop {
            let i = self.drivers.next.fetch_add(1, Ordering::SeqCst);
            if i >= self.slots.len() {
                break;
            }
            if let Some(req) = self.slots[i].call.lock().ok().and_then(|mut c| c.take()) {
                let text = self.late_start_text(&req.name);
                self.deliver_early(i, &req, Outcome::Timeout, text);
            }
        }
    }

    /// Ends this batch's calls still waiting for a main thread, as cancelled
    /// (each runs here, sees the cancellation and reports it; no tool runs).
    /// Both sides of the race call it: `cancel` after setting the flag, the
    /// queuing after its push (`queue_main`), so no call is left queued.
    pub(super) fn cancel_waiting_for_pump(&self) {
        for run in self.exec.main.drain_of(self.key()) {
            run.run_here();
        }
    }

    /// Stops calls that have not started; running calls see `is_cancelled`.
    pub(crate) fn cancel(&self) {
        self.ending.cancelled.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        self.cancel_waiting_for_pump();
        for approval in self.slots.iter().map(|s| &s.approval) {
            if let Some(cell) = approval.get().and_then(Weak::upgrade) {
                cell.cancel();
            }
        }
        // Calls no worker has taken yet: report them now, on this thread.
        loop {
            let i = self.drivers.next.fetch_add(1, Ordering::SeqCst);
            if i >= self.slots.len() {
                break;
            }
            if let Some(req) = self.slots[i].call.lock().ok().and_then(|mut c| c.take()) {
                let text = "Cancelled before it started.".to_string();
                self.deliver_early(i, &req, Outcome::Cancelled, text);
            }
        }
    }

    /// Releases every call's handle (see `release_calls`).
    pub(crate) fn release_calls(&self) {
        for cell in self.slots.iter().map(|s| &s.cell) {
            if let Some(cell) = cell.get().and_then(Weak::upgrade) {
                cell.release();
            }
        }
    }

    /// Cancels the batch and ends every running call as cancelled too.
    pub(crate) fn abort(&self, reason: &str) {
        // Before the cancellation shows: a callback that sees it claims its
        // call's result as cancelled (`Call::is_cancelled`) before the loop
        // below reaches that call, so its own completion is refused.
        self.ending.closing.store(true, Ordering::SeqCst);
        self.cancel();
        for cell in self.slots.iter().map(|s| &s.cell) {
            if let Some(cell) = cell.get().and_then(Weak::upgrade) {
                cell.cancel(reason);
            }
        }
    }
}
