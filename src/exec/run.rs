//! Running one call: the path from a validated call to its callback, and the
//! per-worker tool cache that keeps the registry's lock off that path.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{fence, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::batch::BatchInner;
use super::cell::{Call, CallCell};
use super::pool;
use crate::call::{Outcome, ToolResult};
use crate::observe::{Event, EventKind};
use crate::registry::{Shared, Tool};

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

/// A validated call, ready to run.
pub struct PendingRun {
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

    /// Sends an approved call where it runs: the main-thread queue or the pool.
    pub(crate) fn dispatch(self) {
        if self.tool.meta.flags.main_thread() {
            let batch = self.batch.clone();
            batch.queue_main(self);
        } else {
            pool::spawn_urgent(move || {
                self.run(true);
            });
        }
    }

    /// Runs the tool on this thread. With `wait`, returns only once the call
    /// is done (a deferred completion, a timeout or a cancellation). Returns
    /// false if the call timed out in its callback and another worker took
    /// over the batch: a worker must then stop taking calls.
    pub(crate) fn run(self, wait: bool) -> bool {
        let PendingRun {
            batch,
            index,
            id,
            name,
            tool,
            arguments,
        } = self;
        run_call(&batch, index, id, name, &tool, arguments, wait)
    }
}

/// Runs call `index` of `batch` on this thread (see `PendingRun::run`).
pub(crate) fn run_call(
    batch: &Arc<BatchInner>,
    index: usize,
    id: String,
    name: String,
    tool: &Arc<Tool>,
    arguments: Value,
    wait: bool,
) -> bool {
    {
        if batch.is_cancelled() {
            let text = "Cancelled before it started.".to_string();
            tool.stats.finished(Outcome::Cancelled, 0, false);
            batch.deliver(index, ToolResult::new(id, name, Outcome::Cancelled, text));
            return true;
        }
        tool.enter();
        let cell = CallCell::new(id, name, arguments, tool, batch.clone(), index);
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
            let timer = pool::after(Duration::from_millis(u64::from(timeout_ms)), move || {
                if let Some(cell) = weak.upgrade() {
                    let text = format!(
                        "Tool \"{}\" timed out after {timeout_ms} ms and was cancelled.",
                        cell.name()
                    );
                    cell.expire(text);
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
        });
        let call = Call { cell: cell.clone() };
        batch.registry.run_callback(|| {
            if catch_unwind(AssertUnwindSafe(|| tool.handler.invoke(call))).is_err() {
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
