//! A call's way through, one step per function:
//!
//! 1. `admit`: look the tool up and validate the arguments (strict nulls
//!    dropped, defaults filled); a call that cannot run gets its result here.
//! 2. `request_approval`: a tool that requires approval waits for the
//!    host's decision, which goes on at step 3 (`Origin::Decision`).
//! 3. `dispatch`: run the call here, or send it to a main thread or a pool
//!    worker (`route` says which).
//! 4. `run::run_call`: the tool's callback runs; it completes the call
//!    (`CallCell::finish`: output capped, rendered) now or later.
//! 5. `BatchInner::deliver`: the one result goes to the batch's sink.

use std::sync::atomic::{fence, Ordering};
use std::sync::Arc;

use super::run::{run_call, Driver, Hold, Next, PendingRun, Ready};
use super::BatchInner;
use crate::call::{CallRequest, Outcome, ToolResult};
use crate::check;
use crate::exec::approval::{self, ApprovalCell};
use crate::exec::handler::ToolCache;
use crate::registry::Tool;
use crate::runtime::pool;

/// Where a call is being dispatched from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The thread that runs the batch (`execute`, `wait`, `start_inline`).
    Caller,
    /// A pool worker that joined the batch.
    Worker,
    /// The pool worker a submitted batch of quick calls starts on: a
    /// worker that, like the caller of `execute`, calls the others in when
    /// calls still wait after `JOIN_AFTER` (see `join`).
    Lead,
    /// The thread that approved the call (the host's, any).
    Decision,
}

/// Where a call runs.
enum Route {
    /// On this thread, now.
    Here,
    /// On a main thread of the registry, when it pumps or waits.
    MainThread,
    /// On a pool worker, never queued behind busy ones.
    Pool,
    /// On a pool worker, this thread waiting for the result: the caller must
    /// be free to abandon the call at its timeout (here if the pool is full).
    PoolAndWait,
}

impl BatchInner {
    /// Starts call `index`, claimed by this worker with the calls up to
    /// `claimed_to`; what this worker does next (see `run::run_call`).
    pub(super) fn start(
        self: &Arc<Self>,
        index: usize,
        claimed_to: usize,
        origin: Origin,
        cache: &mut ToolCache,
    ) -> Next {
        let Some(req) = self.slots[index]
            .call
            .lock()
            .ok()
            .and_then(|mut c| c.take())
        else {
            return Next::Go;
        };
        let Some(ready) = self
            .admit(index, req, cache)
            .and_then(|r| self.journal_gate(r))
        else {
            return Next::Go;
        };
        let flags = ready.tool.meta.flags;
        let asks = flags.requires_approval() && !self.rules.approved.contains(&ready.id);
        // Waiting for the approver, a serial tool's turn or a main thread's
        // pump may hold this thread however quick the tool is.
        let may_wait = asks || flags.serial() || flags.main_thread();
        self.before_watched_call(ready.tool, may_wait, origin);
        if asks {
            self.request_approval(ready.pending(self));
            return Next::Go;
        }
        self.dispatch(ready, claimed_to, origin)
    }

    /// Step 2: hands `run` to the registry's approver, or denies it if there
    /// is none. The call goes on from the decision (`Approval::approve`,
    /// `deny`), or ends at the batch's cancellation or deadline.
    fn request_approval(self: &Arc<Self>, run: PendingRun) {
        let Some(approver) = self.exec.approver() else {
            let text = format!(
                "Tool \"{}\" requires approval and no approver is set; the call was not run.",
                run.name
            );
            return run.finish_unrun(Outcome::Denied, text);
        };
        let index = run.index;
        let (id, name, arguments) = (run.id.clone(), run.name.clone(), run.arguments.to_string());
        let cell = ApprovalCell::new(id, name, arguments, Box::new(run));
        self.watch_approval(index, &cell);
        fence(Ordering::SeqCst);
        if self.is_cancelled() {
            return cell.cancel();
        }
        if self.deadline_passed() {
            return cell.expire(self.deadline_ms());
        }
        self.registry
            .run_callback(|| approval::ask(&approver, cell));
    }

    /// Step 1: the call's tool and validated arguments, or `None` once the
    /// call has its result (the batch was cancelled or is past its deadline,
    /// the registry closed, the tool is unknown, the arguments invalid).
    fn admit<'t>(
        &self,
        index: usize,
        req: CallRequest,
        cache: &'t mut ToolCache,
    ) -> Option<Ready<'t>> {
        if let Some((outcome, text)) = self.refusal(&req.name) {
            self.deliver_early(index, &req, outcome, text);
            return None;
        }
        let Some(tool) = cache.get(&self.registry, &req.name) else {
            let text = self.registry.unknown_tool_text(&req.name);
            self.deliver_early(index, &req, Outcome::UnknownTool, text);
            return None;
        };
        let CallRequest {
            id,
            name,
            arguments,
        } = req;
        let coerce = self.registry.options.coerce;
        match check::validate_arguments(tool, &name, arguments, self.rules.strict_nulls, coerce) {
            Ok(arguments) => Some(Ready {
                index,
                id,
                name,
                tool,
                arguments,
            }),
            Err(text) => {
                let result = ToolResult::new(id, name, Outcome::InvalidArguments, text);
                self.deliver(index, result);
                None
            }
        }
    }

    /// Why no call of the batch may start now, if none may.
    fn refusal(&self, tool: &str) -> Option<(Outcome, String)> {
        if self.is_cancelled() {
            Some((Outcome::Cancelled, "Cancelled before it started.".into()))
        } else if self.deadline_passed() {
            Some((Outcome::Timeout, self.late_start_text(tool)))
        } else if self.registry.is_closed() {
            Some((Outcome::Cancelled, check::CLOSED_TEXT.into()))
        } else {
            None
        }
    }

    /// Where a call of `tool` dispatched from `origin` runs.
    fn route(&self, tool: &Tool, origin: Origin) -> Route {
        let flags = tool.meta.flags;
        if flags.main_thread() {
            // A main-thread call that reaches a main thread runs there,
            // timeout or not.
            let here = origin == Origin::Caller && self.exec.main.is_pump_thread();
            return if here { Route::Here } else { Route::MainThread };
        }
        match origin {
            // The approver's thread is the host's: never run a tool there.
            Origin::Decision => Route::Pool,
            // A serial tool waits for its own earlier calls: never on the
            // thread that starts calls inline (an event loop), and it holds
            // its turn until the call completes, not just until it returns.
            _ if self.rules.start_inline && flags.serial() => Route::Pool,
            Origin::Caller if !self.rules.start_inline && self.timeout_for(tool) > 0 => {
                Route::PoolAndWait
            }
            _ => Route::Here,
        }
    }

    /// What a driver does while a call it started is open: an inline start
    /// never waits for a call the tool completes later; the caller of
    /// `execute` waits for the batch anyway; a pool thread never waits (it
    /// parks, see `park`).
    fn hold(&self, origin: Origin) -> Hold {
        if self.rules.start_inline {
            Hold::No
        } else if origin == Origin::Caller {
            Hold::Wait
        } else {
            Hold::Park
        }
    }

    /// Step 3: runs the call where `route` says; what this worker does next
    /// (see `run::run_call`).
    fn dispatch(self: &Arc<Self>, ready: Ready<'_>, claimed_to: usize, origin: Origin) -> Next {
        let hold = self.hold(origin);
        match self.route(ready.tool, origin) {
            Route::Here => run_call(self, ready, hold, Some(Driver { claimed_to, origin })),
            // A driver holds its place in the limit until its call completes,
            // wherever the call runs: a main-thread call completed later
            // (an async tool of a UI or event loop) would otherwise let the
            // pump start the whole batch at once, sequential or not.
            Route::MainThread if hold != Hold::No => {
                let index = ready.index;
                self.queue_main(ready.pending(self));
                if hold == Hold::Park
                    && self.park(index, None, Some((origin, index + 1..claimed_to)))
                {
                    return Next::Parked;
                }
                self.wait_until(None, || self.result_arrived(index));
                Next::Go
            }
            _ => {
                self.dispatch_pending(ready.pending(self), origin);
                Next::Go
            }
        }
    }

    /// Step 3 for a call that left the thread that admitted it (approved).
    pub(crate) fn dispatch_pending(self: &Arc<Self>, run: PendingRun, origin: Origin) {
        match self.route(&run.tool, origin) {
            Route::Here => {
                run.run(!self.rules.start_inline);
            }
            Route::MainThread => self.queue_main(run),
            Route::Pool => pool::spawn_urgent(move || {
                run.run(true);
            }),
            Route::PoolAndWait => {
                let index = run.index;
                // With every pool thread busy and the cap reached, the call
                // runs here: queued, it could wait for this very thread.
                let job: Box<dyn FnOnce() + Send> = Box::new(move || run.run(true));
                if let Err(job) = pool::try_spawn(job) {
                    job();
                }
                self.wait_until(None, || self.result_arrived(index));
            }
        }
    }

    /// Queues a main-thread call for `pump`, or for a main thread waiting on
    /// this batch (woken here: it may be the only thread that ever pumps).
    fn queue_main(self: &Arc<Self>, run: PendingRun) {
        self.exec.main.push(Box::new(run));
        fence(Ordering::SeqCst);
        // A cancel that emptied the queue before this push (it sets the flag,
        // then drains; this pushes, then reads the flag: one of the two sees
        // the other): end the call here, or it waits for a pump that may
        // never come while `close` waits for its tool.
        if self.is_cancelled() {
            return self.cancel_waiting_for_pump();
        }
        if self.deadline_passed() {
            return self.expire_waiting_for_pump();
        }
        self.arm_pump_wait();
        self.registry.wake.signal();
        if self.waiters.one.load(Ordering::SeqCst) + self.waiters.all.load(Ordering::SeqCst) > 0 {
            self.notify();
        }
    }

    fn result_arrived(&self, index: usize) -> bool {
        self.slots[index].delivered.load(Ordering::SeqCst)
    }

    pub(crate) fn timeout_for(&self, tool: &Tool) -> u32 {
        if self.rules.timeout_ms > 0 {
            self.rules.timeout_ms
        } else {
            tool.meta.timeout_ms
        }
    }
}
