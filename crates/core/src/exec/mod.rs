//! Execution: batches of calls on the pool or the caller's thread, limits,
//! timeouts, cancellation, and delivery of every call's one result.
//!
//! The executor knows calls; the registry below it knows tools. Its state of
//! a registry (batches in flight, main-thread queue, approver) is an
//! `ExecState` in the registry's extension slot (see `state`).
//!
//! Its files in layers, top first: each uses only files on lower lines
//! (tests/layering.rs checks the code against this list). A lower file
//! that must reach a higher one's object does it through a trait it
//! defines itself (`cell::Owner`, `waiting::Waiting`, `state::Tracked`).
//!
//! <!-- exec layers -->
//! ```text
//! mod                           execute, submit, wait, pump: the entry points
//!  └─> host                     a batch whose quick calls its host runs (one crossing each way)
//!       └─> batch               who runs which call, where results go, its end
//!            └─> state          a registry's batches, main-thread queue, approver
//!                 └─> main_queue · approval      calls waiting for a main thread, for the host's yes
//!                      └─> handler · waiting · handout    what runs a tool; a call waiting away from its batch; calls a host runs
//!                           └─> cell             one running call, as its tool sees it
//!                                └─> options · journal   how to run a batch; the durable record of calls
//! ```
//! <!-- /exec layers -->

mod approval;
mod batch;
mod cell;
mod handler;
mod handout;
mod host;
pub mod journal;
mod main_queue;
mod options;
mod state;
mod waiting;

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

pub use crate::runtime::live_timers;
pub use approval::{Approval, Approver};
pub use batch::{live_batches, Sink};
pub use cell::{live_calls, Call};
pub use handler::{Handler, ToolDef};
pub use host::{Answer, HostBatch, HostCall};
pub use options::{DeferListener, ExecOptions, DEFAULT_LIMIT};

use crate::call::{CallRequest, ToolResult};
use crate::registry::Registry;
use crate::runtime::pool;
use batch::BatchInner;
use state::{ExecState, Tracked};

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

fn tracked(batch: &Arc<BatchInner>) -> Weak<dyn Tracked> {
    let weak: Weak<BatchInner> = Arc::downgrade(batch);
    weak
}

/// Sets (or with `None` removes) the registry's journal: from the next
/// batch on, every call of a batch with a run id (`ExecOptions::run_id`) is
/// looked up and recorded there (see `journal`). Batches already running
/// keep the journal they began with.
pub fn set_journal(registry: &Registry, journal: Option<journal::Attached>) {
    let state = ExecState::of(registry);
    if let Ok(mut slot) = state.journal.attached.write() {
        *slot = journal;
    };
}

/// Runs main-thread tool calls queued on `registry`, on this thread, for about
/// `budget` (at least one call if any is queued). Returns how many ran.
pub fn pump(registry: &Registry, budget: Duration) -> usize {
    let state = ExecState::of(registry);
    let main = &state.main;
    main.mark_pump_thread();
    let deadline = Instant::now() + budget;
    let mut ran = 0;
    while let Some(run) = main.pop() {
        run.run_here();
        ran += 1;
        if Instant::now() >= deadline {
            break;
        }
    }
    ran
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
    state.track(tracked(&batch));
    batch.arm_deadline();
    if workers > 1 {
        batch.watch_from_caller();
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
    state.track(tracked(&inner));
    inner.arm_deadline();
    if options.start_inline {
        inner.drive(true);
        return Batch { inner };
    }
    // The host said it will wait: the waiting thread runs the calls
    // (caller-runs: no hand-off), with pool workers joining in if calls are
    // still waiting after `JOIN_AFTER` (see `batch::join`). Otherwise no one may
    // ever wait (results go to a callback or a queue): pool workers start
    // on the batch now, and no timer is armed (a timer would cost the timer
    // thread two wake-ups a batch): one lead worker, which calls in the
    // rest up to the limit unless the calls are known quick.
    if workers > 0 {
        if options.start_on_wait {
            inner.join_after(batch::JOIN_AFTER, true);
        } else if workers > 1 {
            inner.start_on_lead();
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
