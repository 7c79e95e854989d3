//! Execution: batches of calls on the pool or the caller's thread, limits,
//! timeouts, cancellation, and delivery of every call's one result.

mod approval;
mod batch;
mod cell;
mod join;
mod main_queue;
pub mod pool;
mod run;

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

pub use approval::{Approval, Approver};
pub use batch::{live_batches, BatchInner, Sink};
pub use cell::{live_calls, Call};
pub use main_queue::MainQueue;
pub use pool::live_timers;
pub use run::PendingRun;

use crate::call::{CallRequest, ToolResult};
use crate::registry::{Registry, Shared};

/// Default cap on calls of one batch running at once.
pub const DEFAULT_LIMIT: usize = 8;

/// How to run a batch.
#[derive(Clone, Debug)]
pub struct ExecOptions {
    /// Run calls at the same time (default true). False means one by one, in order.
    pub parallel: bool,
    /// At most this many calls of the batch run at once (0 = default, 8).
    pub limit: usize,
    /// Overrides every tool's own timeout when > 0. A timeout runs from the
    /// call's start (its callback about to run), not from the batch's.
    pub timeout_ms: u32,
    /// Bounds every call of the batch from the moment it is submitted, waits
    /// included (for a free worker, for approval, for a main thread to pump),
    /// when > 0: a call without a result by then ends `timeout`, with a text
    /// saying what it was waiting for.
    pub deadline_ms: u32,
    /// Drop `null` for optional arguments before validation: the model was
    /// given OpenAI strict-mode schemas, where "omitted" is sent as `null`.
    pub strict_nulls: bool,
    /// Ids of calls the user already approved (tools flagged `REQUIRES_APPROVAL`).
    pub approved: Vec<String>,
    /// `submit` only: start every call on the submitting thread before
    /// returning, without waiting for the ones a tool completes later (async
    /// tools of an event loop). The limit does not apply.
    pub start_inline: bool,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            parallel: true,
            limit: DEFAULT_LIMIT,
            timeout_ms: 0,
            deadline_ms: 0,
            strict_nulls: false,
            approved: Vec::new(),
            start_inline: false,
        }
    }
}

impl ExecOptions {
    pub(crate) fn workers(&self, calls: usize) -> usize {
        let limit = match (self.parallel, self.limit) {
            (false, _) => 1,
            (true, 0) => DEFAULT_LIMIT,
            (true, n) => n,
        };
        limit.min(calls)
    }
}

fn track(shared: &Arc<Shared>, batch: &Arc<BatchInner>) {
    if let Ok(mut list) = shared.batches.lock() {
        if list.len() >= 64 && list.len() == list.capacity() {
            list.retain(|b| b.strong_count() > 0);
        }
        list.push(Arc::downgrade(batch));
    }
}

fn batches_of(shared: &Shared) -> Vec<Arc<BatchInner>> {
    match shared.batches.lock() {
        Ok(list) => list.iter().filter_map(Weak::upgrade).collect(),
        Err(_) => Vec::new(),
    }
}

/// Ends every call in flight on a closing registry, as cancelled.
pub(crate) fn cancel_all(shared: &Arc<Shared>) {
    for batch in batches_of(shared) {
        batch.abort(crate::check::CLOSED_TEXT);
    }
}

/// Ends the host's use of every call of the registry (it is being freed):
/// their handles stop resolving and their lent text goes.
pub fn release_calls(registry: &Registry) {
    for batch in batches_of(&registry.shared) {
        batch.release_calls();
    }
    cell::CallCell::release_held(&registry.shared);
    if let Ok(mut list) = registry.shared.batches.lock() {
        list.clear();
    }
}

/// Runs `calls` and returns one result per call, in call order. Blocks until
/// every call is done (completed, failed, timed out or cancelled).
pub fn execute(
    registry: &Registry,
    calls: Vec<CallRequest>,
    options: &ExecOptions,
) -> Vec<ToolResult> {
    if calls.is_empty() {
        return Vec::new();
    }
    let workers = options.workers(calls.len());
    let batch = BatchInner::new(registry.shared.clone(), calls, options, Sink::Collect, None);
    track(&registry.shared, &batch);
    batch.arm_deadline();
    if workers > 1 {
        join::watch(&batch, join::JOIN_AFTER, false);
    }
    batch.drive(true);
    batch.wait_done(None);
    batch.take_results()
}

/// Which of `calls` (by index) would wait for approval: their tool requires
/// it and their id is not in `options.approved`. Unknown tools are not listed.
pub fn needs_approval(
    registry: &Registry,
    calls: &[CallRequest],
    options: &ExecOptions,
) -> Vec<usize> {
    calls
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            registry
                .get(&c.name)
                .is_some_and(|t| t.meta.flags.requires_approval())
                && !options.approved.contains(&c.id)
        })
        .map(|(i, _)| i)
        .collect()
}

/// A batch running in the background.
pub struct Batch {
    inner: Arc<BatchInner>,
}

/// Starts `calls` and returns at once. Results go to `sink` as each call
/// finishes; `on_done` runs once, after the last result was handed over.
pub fn submit(
    registry: &Registry,
    calls: Vec<CallRequest>,
    options: &ExecOptions,
    sink: Sink,
    on_done: Option<Box<dyn Fn() + Send + Sync>>,
) -> Batch {
    let workers = options.workers(calls.len());
    let inner = BatchInner::new(registry.shared.clone(), calls, options, sink, on_done);
    inner.finish_if_empty();
    track(&registry.shared, &inner);
    inner.arm_deadline();
    if options.start_inline {
        inner.drive(true);
        return Batch { inner };
    }
    // A thread that waits for the batch runs its calls (caller-runs, no
    // hand-off); pool workers start them at the watcher's next tick if no
    // one does, so results come without anyone waiting (see `join`).
    if workers > 0 {
        join::watch(&inner, Duration::ZERO, true);
    }
    Batch { inner }
}

impl Batch {
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.len() == 0
    }

    /// Every result was handed over and the end-of-batch callback, if any,
    /// has returned.
    pub fn is_done(&self) -> bool {
        self.inner.is_finished()
    }

    /// Waits until every result was handed over, or `timeout` passes
    /// (`None` = no limit). Returns whether the batch is done.
    pub fn wait(&self, timeout: Option<Duration>) -> bool {
        let deadline = timeout.map(|t| Instant::now() + t);
        if pool::on_pool_thread() || timeout.is_none() {
            // Caller-runs: rather than sleep, start calls no worker took yet.
            // Inside a tool this also keeps a full pool from deadlocking. A
            // wait with a time limit does not: a call could outlast it.
            self.inner.drive(false);
        }
        self.inner.wait_done(deadline)
    }

    /// Pending calls never start and report `cancelled`; running calls see
    /// `Call::is_cancelled` and still report their own result.
    pub fn cancel(&self) {
        self.inner.cancel();
    }

    /// Queued results (with `Sink::Queue`), at most `max`, oldest first.
    pub fn poll(&self, max: usize) -> Vec<(usize, ToolResult)> {
        self.inner.poll(max)
    }

    /// True exactly once: on the first call after every result was polled.
    pub fn poll_end(&self) -> bool {
        self.inner.take_poll_end()
    }

    /// Stops every host callback of this batch (see `BatchInner::detach`);
    /// its calls still finish internally.
    pub fn detach(&self) {
        self.inner.detach();
    }
}

/// Runs main-thread tool calls queued on `registry`, on this thread, for about
/// `budget` (at least one call if any is queued). Returns how many ran.
pub fn pump(registry: &Registry, budget: Duration) -> usize {
    let shared = &registry.shared;
    shared.mark_pump_thread();
    let deadline = Instant::now() + budget;
    let mut ran = 0;
    loop {
        let Some(run) = shared.main_queue.pop() else {
            break;
        };
        run.run(false);
        ran += 1;
        if Instant::now() >= deadline {
            break;
        }
    }
    ran
}
