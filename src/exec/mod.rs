//! Execution: batches of calls on the pool or the caller's thread, limits,
//! timeouts, cancellation, and delivery of every call's one result.
//!
//! The executor knows calls; the registry below it knows tools. Its state of
//! a registry (batches in flight, main-thread queue, approver) is an
//! `ExecState` in the registry's extension slot (see `state`).

mod approval;
mod batch;
mod cell;
mod join;
mod main_queue;
mod run;
mod state;

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::runtime::live_timers;
pub use approval::{Approval, Approver};
pub(crate) use batch::BatchInner;
pub use batch::{live_batches, Sink};
pub use cell::{live_calls, Call};
pub use main_queue::pump;
pub use run::{Handler, ToolDef};

use crate::call::{CallRequest, ToolResult};
use crate::registry::Registry;
use crate::runtime::pool;
use state::ExecState;

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
    /// `submit` only: the host will wait for the batch (`Batch::wait` with
    /// no time limit), and its calls start on the waiting thread then
    /// (caller-runs: no hand-off to a pool thread). Pool threads join if
    /// calls are still waiting to start `JOIN_AFTER` (50 us) after the
    /// submit, also when no one waits. Without it (the default) the calls
    /// start on pool threads at once.
    pub start_on_wait: bool,
    /// Hears the progress the batch's calls report (`Call::report_progress`).
    pub progress: Option<crate::progress::ProgressListener>,
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
            start_on_wait: false,
            progress: None,
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

/// Ends the host's use of every call of the registry (it is being freed):
/// their handles stop resolving and their lent text goes.
pub fn release_calls(registry: &Registry) {
    let state = ExecState::of(registry);
    for batch in state.batches() {
        batch.release_calls();
    }
    cell::CallCell::release_held(registry);
    state.forget_batches();
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
    let state = ExecState::of(registry);
    let batch = BatchInner::new(registry, state.clone(), calls, options, Sink::Collect, None);
    state.track(&batch);
    batch.arm_deadline();
    if workers > 1 {
        join::watch(&batch, false);
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
    let state = ExecState::of(registry);
    let inner = BatchInner::new(registry, state.clone(), calls, options, sink, on_done);
    inner.finish_if_empty();
    state.track(&inner);
    inner.arm_deadline();
    if options.start_inline {
        inner.drive(true);
        return Batch { inner };
    }
    // The host said it will wait: the waiting thread runs the calls
    // (caller-runs: no hand-off), with pool workers joining in if calls are
    // still waiting after `JOIN_AFTER` (see `join`). Otherwise no one may
    // ever wait (results go to a callback or a queue): pool workers start
    // on the batch now, up to its limit, and no timer is armed (a timer
    // would cost the timer thread two wake-ups a batch).
    if workers > 0 {
        if options.start_on_wait {
            join::watch(&inner, true);
        } else {
            inner.call_helpers();
        }
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
