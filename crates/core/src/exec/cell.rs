//! One running call: the state a tool sees and completes exactly once.

use std::any::Any;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::time::Instant;

use serde_json::Value;

use crate::call::{Outcome, ToolResult};
use crate::error::Error;
use crate::handles::HandleTable;
use crate::progress::ProgressListener;
use crate::registry::{Registry, Shared, Tool};
use crate::render::{self, ContentKind};

/// The batch a call belongs to, as the call sees it (`batch::BatchInner` is
/// the one kind): where its result goes.
pub(crate) trait Owner: Send + Sync {
    /// Records call `index`'s one result and hands it on.
    fn deliver(&self, index: usize, result: ToolResult);
    fn is_cancelled(&self) -> bool;
    /// Its registry's close ended it (`BatchInner::abort`): its running
    /// calls end cancelled, whatever their tool does after seeing it.
    /// Set before `is_cancelled` turns true.
    fn is_closing(&self) -> bool;
    /// The call's worker is stuck in its callback past the call's timeout:
    /// another worker takes over, first with the calls `claimed` behind it.
    fn replace_stuck_worker(self: Arc<Self>, claimed: Range<usize>);
    fn registry(&self) -> &Arc<Shared>;
    /// Hears the progress the calls report.
    fn progress_listener(&self) -> Option<&ProgressListener>;
    /// Hears the log messages the calls send.
    fn log_listener(&self) -> Option<&crate::log::LogListener>;
    /// What the caller gave besides the arguments (`ExecOptions::input`).
    fn input(&self) -> Option<&Arc<crate::input::CallInput>>;
    /// Hears calls their tool deferred (`ExecOptions::on_defer`).
    fn defer_listener(&self) -> Option<&super::options::DeferListener>;
}

thread_local! {
    /// The call (its cell's address) whose callback runs on this thread, for
    /// calls whose batch hears defers: a completion elsewhere was deferred.
    static IN_CALLBACK_OF: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Marks this thread as running a call's callback until dropped.
pub(crate) struct CallbackMark(usize);

impl Drop for CallbackMark {
    fn drop(&mut self) {
        IN_CALLBACK_OF.with(|c| c.set(self.0));
    }
}

const RUNNING: u8 = 0;
const DONE: u8 = 1;
/// Timed out: the result is `timeout` and the callback sees the
/// cancellation, but the result is not delivered yet (that runs host code,
/// on a pool thread: see `begin_expire`).
const EXPIRING: u8 = 2;
/// Cancelled by its registry's close: the result is `cancelled` and the
/// callback sees the cancellation, but the result is not delivered yet (the
/// close delivers it: see `begin_cancel`).
const CANCELLING: u8 = 3;

/// Where the worker that invoked the callback is.
const IN_CALLBACK: u8 = 0;
const RETURNED: u8 = 1;
/// The call timed out while its callback still ran: another worker took over
/// the batch, with the calls this one had claimed behind the stuck one, and
/// this one leaves when the callback returns.
const REPLACED: u8 = 2;
/// The callback runs on a thread that does not drive the batch (the pool for
/// a call with a timeout, a main thread, a decision): a timeout there has no
/// worker to replace, since the batch's drivers went on without it.
const OFF_BATCH: u8 = 3;

/// Live calls that a C host can name by handle.
static HANDLES: LazyLock<HandleTable<CallCell>> = LazyLock::new(HandleTable::new);

/// Calls whose state is in memory, process-wide, counted in stripes: one
/// counter every call of every thread touched was a cache line the cores
/// passed back and forth on every call of a batch run on two of them. A
/// call may end on another thread (another stripe) than it began: a stripe
/// may go below zero, the sum cannot.
#[repr(align(128))]
struct LiveStripe(std::sync::atomic::AtomicIsize);

static LIVE_CALLS: [LiveStripe; crate::observe::STRIPES] =
    [const { LiveStripe(std::sync::atomic::AtomicIsize::new(0)) }; crate::observe::STRIPES];

fn live_stripe() -> &'static std::sync::atomic::AtomicIsize {
    &LIVE_CALLS[crate::observe::thread_stripe()].0
}

/// How many calls are held in memory right now, process-wide: running, or
/// finished but not yet completed by a host that holds their handle. A leak
/// check for soak runs and tests (exact once no call starts or ends).
pub fn live_calls() -> usize {
    let sum: isize = LIVE_CALLS.iter().map(|s| s.0.load(Ordering::SeqCst)).sum();
    usize::try_from(sum).unwrap_or(0)
}

pub(crate) struct CallCell {
    id: String,
    name: String,
    arguments: Value,
    /// The arguments as compact JSON, made when asked.
    arguments_text: OnceLock<String>,
    /// What a binding keeps with the call (see `Call::binding_data`).
    binding: OnceLock<Box<dyn Any + Send + Sync>>,
    max_output_chars: u32,
    /// The tool's compiled MCP `outputSchema`, if it has one.
    output_schema: Option<Arc<crate::schema::Schema>>,
    /// The registry's bound on a result's decoded part data (0 = default).
    max_result_bytes: u64,
    stats: Arc<crate::observe::ToolStats>,
    /// The batch, until the call has its result: a finished call that the
    /// host has not completed (it may never) holds its own text only, not
    /// its whole batch.
    batch: Mutex<Option<Arc<dyn Owner>>>,
    /// Which registry the call belongs to (its address), to release the
    /// calls a host still holds when that registry is freed.
    registry: usize,
    index: usize,
    /// The calls of the batch this call's driver had claimed with it, up to
    /// this index (exclusive): a replacement starts them if the call gets stuck.
    claimed_to: usize,
    state: AtomicU8,
    worker: AtomicU8,
    cancelled: AtomicBool,
    started: Instant,
    /// The call's handle, live until `released`.
    handle: AtomicUsize,
    /// The host is done with the call: it completed it (even if the
    /// completion was refused) or its registry was freed. Until then its
    /// handle resolves and the text lent from it stays valid.
    released: AtomicBool,
    /// The timeout timer, cancelled when the call finishes.
    timer: crate::runtime::timers::TimerSlot,
    /// The last progress reported (it must grow).
    last_progress: Mutex<Option<f64>>,
    /// Hears that the tool deferred the call: its callback returned with the
    /// call open, or another thread completed it.
    on_defer: Option<super::options::DeferListener>,
}

impl Drop for CallCell {
    fn drop(&mut self) {
        live_stripe().fetch_sub(1, Ordering::SeqCst);
    }
}

impl CallCell {
    pub(crate) fn new(
        id: String,
        name: String,
        arguments: Value,
        tool: &Tool,
        batch: Arc<dyn Owner>,
        index: usize,
        claimed_to: usize,
    ) -> Arc<CallCell> {
        live_stripe().fetch_add(1, Ordering::SeqCst);
        let on_defer = batch.defer_listener().cloned();
        Arc::new(CallCell {
            id,
            name,
            arguments,
            arguments_text: OnceLock::new(),
            binding: OnceLock::new(),
            max_output_chars: tool.meta.max_output_chars,
            output_schema: tool.output_schema.clone(),
            max_result_bytes: batch.registry().options.max_result_bytes,
            stats: tool.stats.clone(),
            registry: Arc::as_ptr(batch.registry()) as usize,
            batch: Mutex::new(Some(batch)),
            index,
            claimed_to,
            state: AtomicU8::new(RUNNING),
            worker: AtomicU8::new(IN_CALLBACK),
            cancelled: AtomicBool::new(false),
            started: Instant::now(),
            handle: AtomicUsize::new(0),
            released: AtomicBool::new(false),
            timer: crate::runtime::timers::TimerSlot::default(),
            last_progress: Mutex::new(None),
            on_defer,
        })
    }

    /// For a call whose batch hears defers: marks this thread as running
    /// its callback until the mark is dropped.
    pub(crate) fn mark_callback(&self) -> Option<CallbackMark> {
        self.on_defer.as_ref()?;
        let me = self as *const CallCell as usize;
        Some(CallbackMark(IN_CALLBACK_OF.with(|c| c.replace(me))))
    }

    /// After the callback returned: tells the listener if the call is still
    /// open (the tool completes it later).
    pub(crate) fn note_if_deferred(&self) {
        if let Some(listener) = &self.on_defer {
            if !self.is_done() {
                (listener.0)(self.index);
            }
        }
    }

    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn is_done(&self) -> bool {
        self.state.load(Ordering::SeqCst) == DONE
    }

    /// Ends the call with `outcome`. Exactly one caller wins; the rest get
    /// `AlreadyCompleted`.
    pub(crate) fn finish(&self, outcome: Outcome, content: String) -> Result<(), Error> {
        if outcome == Outcome::Ok {
            let structured = self.output_schema.as_ref().and_then(|_| {
                // Only text MCP would send as structuredContent: a JSON object.
                (content.trim_start().starts_with('{'))
                    .then(|| serde_json::from_str::<Value>(&content).ok())
                    .flatten()
                    .filter(Value::is_object)
            });
            self.check_structured(structured.as_ref())?;
        }
        self.settle(outcome, content).map(drop)
    }

    /// For a tool with an `outputSchema`: a successful result whose
    /// structured content fails it ends the call as a tool error naming the
    /// failing pointers, and is `InvalidContent` for the completer.
    fn check_structured(&self, structured: Option<&Value>) -> Result<(), Error> {
        let (Some(schema), Some(structured)) = (&self.output_schema, structured) else {
            return Ok(());
        };
        let Some(why) = crate::tool_meta::structured_problem(self.name(), schema, structured)
        else {
            return Ok(());
        };
        self.settle_from(RUNNING, Outcome::ToolError, Body::Uncapped(why.clone()))?;
        Err(Error::InvalidContent(why))
    }

    /// Ends the call `ok` with content parts: `max_output_chars` caps each
    /// text part, and the result's `content` is their text. (Parts refused
    /// by their check end the call with a message that is not capped: the
    /// model needs all of it to fix the call.)
    pub(crate) fn finish_parts(&self, parts: crate::parts::Parts) -> Result<(), Error> {
        self.check_structured(parts.structured())?;
        self.settle_from(RUNNING, Outcome::Ok, Body::Parts(parts))
            .map(drop)
    }

    /// `finish`, handing the winner the batch the result went to (the cell
    /// lets go of it).
    fn settle(&self, outcome: Outcome, content: String) -> Result<Option<Arc<dyn Owner>>, Error> {
        self.settle_from(RUNNING, outcome, Body::Text(content))
    }

    fn settle_from(
        &self,
        from: u8,
        outcome: Outcome,
        body: Body,
    ) -> Result<Option<Arc<dyn Owner>>, Error> {
        if let Err(now) =
            self.state
                .compare_exchange(from, DONE, Ordering::SeqCst, Ordering::SeqCst)
        {
            // The close claimed the call (`begin_cancel`) and the tool
            // completed it (or dropped it) before the close's loop came by:
            // the cancelled result is delivered here, so it is never lost
            // (the close's own attempt then finds the call done).
            if now == CANCELLING && from != CANCELLING {
                let _ = self.settle_from(
                    CANCELLING,
                    Outcome::Cancelled,
                    Body::Text(crate::check::CLOSED_TEXT.to_owned()),
                );
            }
            return Err(self.already_completed());
        }
        self.timer.cancel();
        let mut result = match body {
            Body::Text(content) => {
                let content = match outcome {
                    Outcome::Ok | Outcome::ToolError => render::cap(content, self.max_output_chars),
                    _ => content,
                };
                ToolResult::new(self.id(), self.name(), outcome, content)
            }
            Body::Uncapped(content) => ToolResult::new(self.id(), self.name(), outcome, content),
            Body::InputRequired(asked) => {
                let mut r =
                    ToolResult::new(self.id(), self.name(), outcome, asked.describe(self.name()));
                r.input_required = Some(Arc::new(asked));
                r
            }
            Body::Parts(mut parts) => {
                parts.cap_text(self.max_output_chars);
                let mut r = ToolResult::new(self.id(), self.name(), outcome, parts.text());
                r.parts = Some(Arc::new(parts));
                r
            }
        };
        result.duration_us = self.started.elapsed().as_micros() as u64;
        self.stats.finished(outcome, result.duration_us, true);
        if let Some(listener) = &self.on_defer {
            // Completed by another thread than its callback's: deferred, and
            // heard before the result is.
            let me = self as *const CallCell as usize;
            if IN_CALLBACK_OF.with(|c| c.get()) != me {
                (listener.0)(self.index);
            }
        }
        let batch = self.batch.lock().ok().and_then(|mut b| b.take());
        if let Some(batch) = &batch {
            batch.deliver(self.index, result);
        }
        Ok(batch)
    }

    /// Whether the call's batch was cancelled (false once the call is done).
    /// A batch ended by its registry's close claims the call's result as
    /// `cancelled` here, before the callback hears of the cancellation: the
    /// close may not have reached this call yet, and a completion made in
    /// reaction must not win the race against it.
    fn batch_cancelled(&self) -> bool {
        let (cancelled, closing) = self
            .batch
            .lock()
            .ok()
            .and_then(|b| {
                b.as_ref().map(|b| {
                    // `cancelled` first: `abort` sets `closing` before it.
                    let cancelled = b.is_cancelled();
                    (cancelled, cancelled && b.is_closing())
                })
            })
            .unwrap_or((false, false));
        if closing {
            self.begin_cancel();
        }
        cancelled
    }

    fn already_completed(&self) -> Error {
        Error::AlreadyCompleted(format!(
            "call {:?} of tool {:?} was already completed, timed out or cancelled",
            self.id(),
            self.name()
        ))
    }

    /// Keeps the call's timeout timer, to cancel when the call finishes.
    pub(crate) fn set_timer(&self, timer: crate::runtime::timers::Timer) {
        // `finish` cancels under the slot's lock after settling the state.
        self.timer.keep(timer, || self.is_done());
    }

    /// Releases every call of `registry` that a host still holds (it is
    /// being freed): finished calls no longer reach it through a batch.
    pub(crate) fn release_held(registry: &Registry) {
        let key = Arc::as_ptr(&registry.shared) as usize;
        for cell in HANDLES.values() {
            if cell.registry == key {
                cell.release();
            }
        }
    }

    /// The host is done with the call: its handle stops resolving and the
    /// text lent from it may go.
    pub(crate) fn release(&self) {
        self.released.store(true, Ordering::SeqCst);
        HANDLES.withdraw(&self.handle);
    }

    /// Abandons the call at its deadline, first half (the timer thread's: no
    /// host code runs). The call's result becomes `timeout` before the
    /// callback can see the cancellation, so a callback that reacts to it
    /// cannot slip in an `ok` first, and any completion from now on is
    /// refused. A callback that waits for the cancellation returns and frees
    /// its pool thread, which may be the one `end_expire` waits for. True if
    /// this claimed the result.
    pub(crate) fn begin_expire(&self) -> bool {
        let won = self
            .state
            .compare_exchange(RUNNING, EXPIRING, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok();
        if won {
            self.cancelled.store(true, Ordering::SeqCst);
        }
        won
    }

    /// The second half of expiring the call (on a pool thread: it delivers the result,
    /// which runs host code), after `begin_expire` returned true.
    pub(crate) fn end_expire(&self, text: String) {
        let won = self
            .settle_from(EXPIRING, Outcome::Timeout, Body::Text(text))
            .ok()
            .flatten();
        if let Some(batch) = won {
            if self
                .worker
                .compare_exchange(IN_CALLBACK, REPLACED, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                batch.replace_stuck_worker(self.index + 1..self.claimed_to);
            }
        }
    }

    /// Ends the call cancelled: its result first, then the callback sees
    /// the cancellation. Also delivers the result of a call that
    /// `begin_cancel` claimed.
    pub(crate) fn cancel(&self, reason: &str) {
        self.begin_cancel();
        let _ = self.settle_from(
            CANCELLING,
            Outcome::Cancelled,
            Body::Text(reason.to_owned()),
        );
    }

    /// Claims the call's result as `cancelled` (no host code runs: the
    /// result is delivered by `cancel`), then lets the callback see the
    /// cancellation, so that no completion can slip in first.
    fn begin_cancel(&self) {
        if self
            .state
            .compare_exchange(RUNNING, CANCELLING, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            self.cancelled.store(true, Ordering::SeqCst);
        }
    }

    /// Marks the callback as run off the batch's drivers (see `OFF_BATCH`).
    pub(crate) fn run_off_batch(&self) {
        self.worker.store(OFF_BATCH, Ordering::SeqCst);
    }

    /// The callback returned. False if a replacement worker took over the
    /// batch meanwhile: the caller must then stop starting calls, even those
    /// it had claimed (the replacement has them).
    pub(crate) fn callback_returned(&self) -> bool {
        self.worker
            .compare_exchange(IN_CALLBACK, RETURNED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }
}

/// What a call ends with: text, or content parts.
enum Body {
    Text(String),
    /// capstan's own message, not capped: why a tool's parts were refused.
    Uncapped(String),
    Parts(crate::parts::Parts),
    /// The tool asked its caller for input (`Call::require_input`).
    InputRequired(crate::input::InputRequired),
}

/// A call as its tool sees it. Clone it to complete later, from any thread.
#[derive(Clone)]
pub struct Call {
    pub(crate) cell: Arc<CallCell>,
}

impl Call {
    pub fn id(&self) -> &str {
        self.cell.id()
    }

    pub fn tool(&self) -> &str {
        self.cell.name()
    }

    /// Validated arguments, schema defaults filled in.
    pub fn arguments(&self) -> &Value {
        &self.cell.arguments
    }

    /// The arguments as compact JSON text.
    pub fn arguments_text(&self) -> &str {
        self.cell
            .arguments_text
            .get_or_init(|| self.cell.arguments.to_string())
    }

    /// Data a binding keeps with the call (the C ABI's NUL-terminated copies
    /// of its texts), made by `init` on first use. It lives as long as the
    /// call's state: at least until the host completes the call or its
    /// registry is freed (see `handle`). `None` if a `T` is not what the
    /// first use stored.
    pub fn binding_data<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> Option<&T> {
        self.cell
            .binding
            .get_or_init(|| Box::new(init()))
            .downcast_ref::<T>()
    }

    /// True once the call should stop: it timed out, its batch was cancelled,
    /// its registry closed, or it already has its result. After a timeout or
    /// a close, the result is already `timeout` or `cancelled` when this
    /// returns true: a completion made in reaction is `AlreadyCompleted`.
    pub fn is_cancelled(&self) -> bool {
        self.cell.cancelled.load(Ordering::SeqCst)
            || self.cell.is_done()
            || self.cell.batch_cancelled()
    }

    pub fn is_done(&self) -> bool {
        self.cell.is_done()
    }

    /// Completes the call with content for the model. Content declared JSON
    /// that is not JSON still completes the call, as a tool error the model
    /// can read, and returns `InvalidContent` so the host hears of it too.
    ///
    /// Every completion, even one refused because the call already timed out
    /// or was cancelled, ends the host's use of the call: its handle stops
    /// resolving (see `handle`).
    pub fn complete(&self, kind: ContentKind, content: &str) -> Result<(), Error> {
        let result = self.complete_unreleased(kind, content);
        self.cell.release();
        result
    }

    fn complete_unreleased(&self, kind: ContentKind, content: &str) -> Result<(), Error> {
        if self.cell.is_done() {
            return Err(self.cell.already_completed()); // no need to render it
        }
        if kind == ContentKind::Parts {
            return match crate::parts::Parts::parse(content, self.cell.max_result_bytes) {
                Ok(parts) => self.cell.finish_parts(parts),
                Err(e) => self.fail_parts(e),
            };
        }
        match render::render(kind, content) {
            Ok(text) => self.cell.finish(Outcome::Ok, text),
            Err(e) => {
                self.cell.finish(
                    Outcome::ToolError,
                    format!("Tool \"{}\" returned malformed output: {e}", self.tool()),
                )?;
                Err(e)
            }
        }
    }

    /// Completes the call with text (see `complete`).
    pub fn complete_text(&self, content: impl Into<String>) -> Result<(), Error> {
        let result = self.cell.finish(Outcome::Ok, content.into());
        self.cell.release();
        result
    }

    /// Completes the call with content parts (see `crate::parts`), checked
    /// against the registry's `max_result_bytes`; parts that fail the check
    /// complete the call as a tool error saying why, and return
    /// `InvalidContent` (see `complete`).
    pub fn complete_parts(&self, parts: Value) -> Result<(), Error> {
        let result = if self.cell.is_done() {
            Err(self.cell.already_completed())
        } else {
            match crate::parts::Parts::from_value(parts, self.cell.max_result_bytes) {
                Ok(parts) => self.cell.finish_parts(parts),
                Err(e) => self.fail_parts(e),
            }
        };
        self.cell.release();
        result
    }

    fn fail_parts(&self, e: Error) -> Result<(), Error> {
        let why = match &e {
            Error::InvalidContent(m) => m.clone(),
            other => other.to_string(),
        };
        let message = format!(
            "Tool \"{}\" returned content parts that cannot be sent: {why}",
            self.tool()
        );
        self.cell
            .settle_from(RUNNING, Outcome::ToolError, Body::Uncapped(message))?;
        Err(e)
    }

    /// Completes the call with a JSON value, rendered for the model (see `complete`).
    pub fn complete_value(&self, value: &Value) -> Result<(), Error> {
        let result = self.cell.finish(Outcome::Ok, render::render_value(value));
        self.cell.release();
        result
    }

    /// Completes the call as a tool error the model will see (see `complete`).
    pub fn fail(&self, message: impl Into<String>) -> Result<(), Error> {
        let result = self.cell.finish(Outcome::ToolError, message.into());
        self.cell.release();
        result
    }

    /// What the caller gave besides the arguments (an MCP client's answers
    /// to the previous round's requests, the tool's state from it) and what
    /// it can be asked; `None` for a caller that gives no input and cannot
    /// be asked (a provider turn, a task), or once the call has its result.
    pub fn input(&self) -> Option<Arc<crate::input::CallInput>> {
        let batch = self.cell.batch.lock().ok().and_then(|b| b.clone())?;
        batch.input().cloned()
    }

    /// Ends the call asking its caller for input (`crate::input`): the
    /// requests by key and the tool's own state, both back in the next
    /// round's `input`. The caller sees the call ended with them, anyone
    /// else a tool error saying what was asked. `InvalidArgument` for
    /// requests that break a rule, `Unsupported` for a method the caller
    /// cannot answer: the call then stays open (the tool completes it some
    /// other way). `AlreadyCompleted` once it has its result.
    pub fn require_input(&self, requests: Value, state: Option<String>) -> Result<(), Error> {
        if self.cell.is_done() {
            let e = self.cell.already_completed();
            self.cell.release();
            return Err(e);
        }
        let input = self.input();
        let asked =
            crate::input::InputRequired::check(self.tool(), requests, state, input.as_deref())?;
        let result = self
            .cell
            .settle_from(RUNNING, Outcome::ToolError, Body::InputRequired(asked))
            .map(drop);
        self.cell.release();
        result
    }

    /// Reports progress (see `crate::progress` for the rules): to the
    /// registry's event hook and the batch's progress listener, on this
    /// thread. `InvalidArgument` for a report breaking a rule,
    /// `AlreadyCompleted` once the call has its result.
    pub fn report_progress(&self, report: &crate::progress::Progress) -> Result<(), Error> {
        let cell = &self.cell;
        let batch = self.running_batch()?;
        {
            let mut last = cell
                .last_progress
                .lock()
                .map_err(|_| Error::Internal("progress lock poisoned".into()))?;
            report.check(*last)?;
            *last = Some(report.progress);
        }
        self.tell_running(
            &*batch,
            crate::observe::EventKind::Progress,
            Some(report),
            None,
        );
        if let Some(listener) = batch.progress_listener() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                (listener.0)(cell.index, report)
            }));
        }
        Ok(())
    }

    /// The call's batch while the call runs; `AlreadyCompleted` once it has
    /// its result.
    fn running_batch(&self) -> Result<Arc<dyn Owner>, Error> {
        let cell = &self.cell;
        let batch = cell.batch.lock().ok().and_then(|b| b.clone());
        batch
            .filter(|_| !cell.is_done())
            .ok_or_else(|| cell.already_completed())
    }

    /// Tells the registry's event hook what the running call sent: its
    /// progress, or a log message.
    fn tell_running(
        &self,
        batch: &dyn Owner,
        kind: crate::observe::EventKind,
        progress: Option<&crate::progress::Progress>,
        log: Option<(crate::log::LogLevel, &str)>,
    ) {
        let cell = &self.cell;
        batch.registry().observer.emit(crate::observe::Event {
            kind,
            tool: cell.name(),
            id: cell.id(),
            index: cell.index,
            outcome: None,
            duration_us: cell.started.elapsed().as_micros() as u64,
            progress,
            log,
        });
    }

    /// Sends a log message (MCP's `notifications/message`): to the
    /// registry's event hook as an `EventKind::Log` event and to the
    /// batch's log listener, on this thread before this returns. A message
    /// over `crate::log::MAX_LOG_BYTES` is `InvalidArgument` and goes
    /// nowhere; one after the call has its result is `AlreadyCompleted`.
    pub fn log(&self, level: crate::log::LogLevel, message: &str) -> Result<(), Error> {
        let cell = &self.cell;
        let batch = self.running_batch()?;
        crate::log::check(message)?;
        self.tell_running(
            &*batch,
            crate::observe::EventKind::Log,
            None,
            Some((level, message)),
        );
        if let Some(listener) = batch.log_listener() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                (listener.0)(cell.index, level, message)
            }));
        }
        Ok(())
    }

    /// A handle a C host can pass around. It resolves, and the text lent
    /// through it (`binding_data`) stays valid, until the host completes
    /// the call (`complete`, `fail`, even when refused because the call
    /// already timed out or was cancelled) or the registry is freed; not
    /// merely until the call has its result.
    pub fn handle(&self) -> Result<usize, Error> {
        let cell = &self.cell;
        HANDLES
            .handle_in(&cell.handle, cell, || cell.released.load(Ordering::SeqCst))
            .ok_or_else(|| Error::Internal("too many live calls".into()))
    }

    /// The live call a handle names.
    pub fn from_handle(handle: usize) -> Result<Call, Error> {
        HANDLES
            .get(handle)
            .map(|cell| Call { cell })
            .ok_or_else(|| {
                Error::StaleHandle(
                "call handle is not live: the host already completed this call (its result may \
                 have been a timeout or a cancellation), or its registry was freed"
                    .into(),
            )
            })
    }
}
