//! Running one call: the path from a validated call to its callback
//! (`run_call`), and the call as it waits elsewhere (`PendingRun`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{fence, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{BatchInner, Origin};
use crate::call::{Outcome, ToolResult};
use crate::exec::cell::{Call, CallCell};
use crate::exec::handler::Handler;
use crate::exec::waiting::Waiting;
use crate::observe::{Event, EventKind};
use crate::registry::Tool;
use crate::runtime::{pool, timers};

/// A validated call on the thread that admitted it, its tool lent by that
/// thread's cache (no reference count touched on the way to the callback).
pub(crate) struct Ready<'t> {
    pub(crate) index: usize,
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) tool: &'t Arc<Tool>,
    pub(crate) arguments: Value,
}

impl Ready<'_> {
    /// The call as it waits elsewhere (for approval, a main thread, a worker).
    pub(crate) fn pending(self, batch: &Arc<BatchInner>) -> PendingRun {
        PendingRun {
            batch: batch.clone(),
            index: self.index,
            id: self.id,
            name: self.name,
            tool: self.tool.clone(),
            arguments: self.arguments,
        }
    }
}

/// A validated call waiting to run away from the thread that admitted it.
pub(crate) struct PendingRun {
    pub(crate) batch: Arc<BatchInner>,
    pub(crate) index: usize,
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) tool: Arc<Tool>,
    pub(crate) arguments: Value,
}

fn call_name(cell: &CallCell) -> &str {
    cell.name()
}

fn call_id(cell: &CallCell) -> &str {
    cell.id()
}

impl PendingRun {
    /// Ends the call without running it (denied, cancelled before start).
    pub(crate) fn finish_unrun(self, outcome: Outcome, text: String) {
        self.tool.stats.finished(outcome, 0, false);
        let result = ToolResult::new(self.id, self.name, outcome, text);
        self.batch.deliver(self.index, result);
    }

    /// Runs the tool on this thread, which does not drive the batch (see
    /// `run_call`). With `hold`, the call holds its tool (a serial tool's
    /// turn) until it is done, not just until its callback returns; this
    /// thread never waits for it.
    pub(crate) fn run(self, hold: bool) {
        let PendingRun {
            batch,
            index,
            id,
            name,
            tool,
            arguments,
        } = self;
        let ready = Ready {
            index,
            id,
            name,
            tool: &tool,
            arguments,
        };
        let hold = if hold { Hold::Park } else { Hold::No };
        run_call(&batch, ready, hold, None);
    }
}

/// The queues below the batch (main thread, approval) hold the call as this.
impl Waiting for PendingRun {
    fn batch_key(&self) -> usize {
        self.batch.key()
    }

    fn tool_name(&self) -> &str {
        &self.name
    }

    fn run_here(self: Box<Self>) {
        self.run(false);
    }

    fn approved(self: Box<Self>) {
        let batch = self.batch.clone();
        batch.dispatch_pending(*self, Origin::Decision);
    }

    fn end_unrun(self: Box<Self>, outcome: Outcome, text: String) {
        self.finish_unrun(outcome, text);
    }
}

/// What the thread that ran a call's callback does when the callback
/// returned with the call still open (the tool completes it later).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hold {
    /// Goes on at once; the call holds nothing (an inline start, a pump).
    No,
    /// Waits until the call is done: the caller of `execute`, a host
    /// thread that waits for the whole batch anyway.
    Wait,
    /// Goes on at once, free (a pool thread): the call holds its tool and
    /// its driver's place in the batch's limit until it is done, and its
    /// completion resumes the driver (see `park`).
    Park,
}

/// What a driver does after starting a call.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Starts its next call.
    Go,
    /// Stops: it was stuck in a timed-out callback and replaced.
    Stop,
    /// Stops: its call is open and the call's completion resumes the driver.
    Parked,
}

/// The thread running a call drives its batch (it claims calls in a loop),
/// as `origin`, and has claimed the calls up to `claimed_to` with this one.
#[derive(Clone, Copy)]
pub(crate) struct Driver {
    pub(crate) claimed_to: usize,
    pub(crate) origin: Origin,
}

/// Runs a call of `batch` on this thread (see `PendingRun::run`): the
/// dispatch step's end, where the tool's callback runs; the call completes
/// (`CallCell::finish`) from there, now or later; `hold` says what this
/// thread does if later.
/// `Next::Stop` if the call timed out in its callback and another worker
/// took over the batch: a driver must then stop starting calls.
pub(crate) fn run_call(
    batch: &Arc<BatchInner>,
    call: Ready<'_>,
    hold: Hold,
    driver: Option<Driver>,
) -> Next {
    let Ready {
        index,
        id,
        name,
        tool,
        arguments,
    } = call;
    {
        if batch.is_cancelled() {
            let text = "Cancelled before it started.".to_string();
            tool.stats.finished(Outcome::Cancelled, 0, false);
            batch.deliver(index, ToolResult::new(id, name, Outcome::Cancelled, text));
            return Next::Go;
        }
        // Only an `exec::ToolDef` registers (`Runnable`), so every tool has one.
        let Some(handler) = tool.handler::<Box<dyn Handler>>() else {
            let text = format!("Tool \"{name}\" has no handler.");
            tool.stats.finished(Outcome::ToolError, 0, false);
            batch.deliver(index, ToolResult::new(id, name, Outcome::ToolError, text));
            return Next::Go;
        };
        tool.enter();
        let claimed_to = driver.map_or(index + 1, |d| d.claimed_to);
        let cell = CallCell::new(id, name, arguments, tool, batch.clone(), index, claimed_to);
        if driver.is_none() {
            cell.run_off_batch();
        }
        let _ = batch.slots[index].cell.set(Arc::downgrade(&cell));
        fence(Ordering::SeqCst);
        if batch.is_cancelled() {
            cell.cancel("Cancelled before it started.");
            tool.leave();
            return Next::Go;
        }
        if batch.deadline_passed() {
            // It waited past the batch's deadline (for a serial turn or a worker).
            let _ = cell.finish(Outcome::Timeout, batch.late_start_text(cell.name()));
            tool.leave();
            return Next::Go;
        }
        let timeout_ms = batch.timeout_for(tool);
        if timeout_ms > 0 {
            let weak = Arc::downgrade(&cell);
            // On the timer thread: the callback sees the cancellation at
            // once, even with every pool thread busy; the result, which runs
            // host code, is delivered on a pool thread, or here when every
            // pool thread is busy (they may all wait for such results).
            let timer = timers::after(Duration::from_millis(u64::from(timeout_ms)), move || {
                let Some(cell) = weak.upgrade() else { return };
                if cell.begin_expire() {
                    pool::spawn_or_run_here(move || {
                        let text = format!(
                            "Tool \"{}\" timed out after {timeout_ms} ms and was cancelled.",
                            cell.name()
                        );
                        cell.end_expire(text);
                    });
                }
            });
            cell.set_timer(timer);
        }
        if let Err(text) = batch.journal_started(index, cell.id()) {
            let _ = cell.finish(Outcome::ToolError, text);
            tool.leave();
            return Next::Go;
        }
        tool.stats.started();
        batch.registry.observer.emit(Event {
            kind: EventKind::Started,
            tool: call_name(&cell),
            id: call_id(&cell),
            index,
            outcome: None,
            duration_us: 0,
            progress: None,
            log: None,
        });
        let mut call = Some(Call { cell: cell.clone() });
        if let (Some(handout), true) = (batch.handout.get(), tool.meta.flags.host_run()) {
            // The host runs it: it returns like a callback that completes later.
            call = call.and_then(|c| handout.take(index, c).err());
        }
        let mark = cell.mark_callback();
        batch.registry.run_callback(|| {
            let Some(call) = call else { return };
            if catch_unwind(AssertUnwindSafe(|| handler.invoke(call))).is_err() {
                let _ = cell.finish(
                    Outcome::ToolError,
                    format!("Tool \"{}\" panicked.", cell.name()),
                );
                cell.release(); // the host code that held it is gone
            }
        });
        drop(mark);
        let keep_going = cell.callback_returned();
        cell.note_if_deferred();
        match hold {
            Hold::Wait => {
                batch.wait_until(None, || cell.is_done());
            }
            Hold::Park if !cell.is_done() => {
                let resume = driver.map(|d| (d.origin, index + 1..d.claimed_to));
                if batch.park(index, Some((tool.clone(), cell.clone())), resume) {
                    return Next::Parked;
                }
            }
            _ => {}
        }
        tool.leave();
        if keep_going {
            Next::Go
        } else {
            Next::Stop
        }
    }
}
