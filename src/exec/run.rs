//! Running one call: what runs a tool (`Handler`), the path from a
//! validated call to its callback, and the per-worker tool cache that keeps
//! the registry's lock off that path.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{fence, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::batch::BatchInner;
use super::cell::{Call, CallCell};
use crate::call::{Outcome, ToolResult};
use crate::observe::{Event, EventKind};
use crate::registry::{Runnable, Shared, Tool};
use crate::runtime::{pool, timers};

/// What runs a tool. A C host's callback, a Rust closure, a binding's trampoline.
///
/// `invoke` must complete the call exactly once, now or later, from any thread
/// (`Call::complete`, `Call::fail`). Dropping the handler is the tool's
/// "destroy": it happens once, after the tool is gone and its calls are done.
pub trait Handler: Send + Sync + 'static {
    fn invoke(&self, call: Call);
}

impl<F> Handler for F
where
    F: Fn(Call) + Send + Sync + 'static,
{
    fn invoke(&self, call: Call) {
        self(call)
    }
}

/// The registry keeps a tool's handler for the executor without knowing it.
impl Runnable for Box<dyn Handler> {}

/// Everything needed to register a tool (`Registry::register`).
pub type ToolDef = crate::registry::ToolDef<Box<dyn Handler>>;

/// A worker's last tool, reused while the registry has not changed: most
/// batches call few tools, and the registry's lock is shared by all workers.
#[derive(Default)]
pub(crate) struct ToolCache {
    generation: u64,
    tool: Option<Arc<Tool>>,
}

impl ToolCache {
    pub(crate) fn get(&mut self, registry: &Shared, name: &str) -> Option<&Arc<Tool>> {
        let generation = registry.generation();
        let hit = self.generation == generation
            && self.tool.as_ref().is_some_and(|t| t.meta.name == name);
        if !hit {
            self.tool = Some(registry.get(name)?);
            self.generation = generation;
        }
        self.tool.as_ref()
    }
}

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
    /// `run_call`). With `wait`, returns only once the call is done (a
    /// deferred completion, a timeout or a cancellation).
    pub(crate) fn run(self, wait: bool) {
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
        run_call(&batch, ready, wait, None);
    }
}

/// Runs a call of `batch` on this thread (see `PendingRun::run`): the
/// dispatch step's end, where the tool's callback runs; the call completes
/// (`CallCell::finish`) from there, now or later.
/// `driver`: `Some(end)` when this thread drives the batch (it claims calls
/// in a loop) and has claimed the calls up to `end` with this one.
/// Returns false if the call timed out in its callback and another worker
/// took over the batch: a driver must then stop starting calls.
pub(crate) fn run_call(
    batch: &Arc<BatchInner>,
    call: Ready<'_>,
    wait: bool,
    driver: Option<usize>,
) -> bool {
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
            return true;
        }
        // Only an `exec::ToolDef` registers (`Runnable`), so every tool has one.
        let Some(handler) = tool.handler::<Box<dyn Handler>>() else {
            let text = format!("Tool \"{name}\" has no handler.");
            tool.stats.finished(Outcome::ToolError, 0, false);
            batch.deliver(index, ToolResult::new(id, name, Outcome::ToolError, text));
            return true;
        };
        tool.enter();
        let claimed_to = driver.unwrap_or(index + 1);
        let cell = CallCell::new(id, name, arguments, tool, batch.clone(), index, claimed_to);
        if driver.is_none() {
            cell.run_off_batch();
        }
        let _ = batch.cells[index].set(Arc::downgrade(&cell));
        fence(Ordering::SeqCst);
        if batch.is_cancelled() {
            cell.cancel("Cancelled before it started.");
            tool.leave();
            return true;
        }
        if batch.deadline_passed() {
            // It waited past the batch's deadline (for a serial turn or a worker).
            let _ = cell.finish(Outcome::Timeout, batch.late_start_text(cell.name()));
            tool.leave();
            return true;
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
        tool.stats.started();
        batch.registry.observer.emit(Event {
            kind: EventKind::Started,
            tool: call_name(&cell),
            id: call_id(&cell),
            index,
            outcome: None,
            duration_us: 0,
            progress: None,
        });
        let call = Call { cell: cell.clone() };
        batch.registry.run_callback(|| {
            if catch_unwind(AssertUnwindSafe(|| handler.invoke(call))).is_err() {
                let _ = cell.finish(
                    Outcome::ToolError,
                    format!("Tool \"{}\" panicked.", cell.name()),
                );
                cell.release(); // the host code that held it is gone
            }
        });
        let keep_going = cell.callback_returned();
        if wait {
            batch.wait_until(None, || cell.is_done());
        }
        tool.leave();
        keep_going
    }
}
