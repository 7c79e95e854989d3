//! A batch of calls: who runs which call, where results go, when it is done.
//! A call's way through is in `pipeline`, its run in `run`; waiting in
//! `wait`; deadline, cancellation and close in `ending`.

mod ending;
mod join;
mod journaled;
mod park;
mod pipeline;
mod run;
mod wait;

use std::collections::VecDeque;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::Instant;

pub(crate) use join::JOIN_AFTER;
pub(crate) use pipeline::Origin;
use run::Next;

use super::approval::ApprovalCell;
use super::cell::{CallCell, Owner};
use super::handler::ToolCache;
use super::handout::Handout;
use super::options::ExecOptions;
use super::state::{ExecState, Tracked};
use crate::call::{CallRequest, Outcome, ToolResult};
use crate::observe::{Event, EventKind};
use crate::progress::ProgressListener;
use crate::registry::Registry;
use crate::registry::Shared;
use crate::runtime::pool;
use crate::runtime::timers::{Timer, TimerSlot};

/// Batches whose state is in memory, process-wide.
static LIVE_BATCHES: AtomicUsize = AtomicUsize::new(0);

/// How many batches are held in memory right now, process-wide. A leak check
/// for tests: a call the host never completes must not keep its batch.
pub fn live_batches() -> usize {
    LIVE_BATCHES.load(Ordering::SeqCst)
}

/// Where a batch's results go as they finish.
pub enum Sink {
    /// Kept in call order for `execute` to return.
    Collect,
    /// Handed to the host on the thread that finished the call.
    Callback(Box<dyn Fn(usize, ToolResult) + Send + Sync>),
    /// Queued for the host to poll on its own thread.
    Queue,
}

pub struct BatchInner {
    pub(crate) registry: Arc<Shared>,
    /// The executor's state of that registry (main-thread queue, approver).
    pub(crate) exec: Arc<ExecState>,
    /// One per call, in call order.
    slots: Vec<Slot>,
    rules: Rules,
    drivers: Drivers,
    ending: Ending,
    delivery: Delivery,
    waiters: Waiters,
    /// A host batch's: where `HOST_RUN` calls go instead of their callback.
    handout: OnceLock<Arc<Handout>>,
    /// The registry's journal under the batch's run id (`ExecOptions::run_id`).
    journal: Option<journaled::BatchJournal>,
}

/// Per call, by index: its request until a thread claims it, its state
/// while it waits or runs, its result until it is handed over.
struct Slot {
    call: Mutex<Option<CallRequest>>,
    /// The collected result (`Sink::Collect`).
    result: Mutex<Option<ToolResult>>,
    /// Set once the call's result was handed to the sink: what a driver
    /// waiting for one call it sent elsewhere (a main thread, the pool) waits for.
    delivered: AtomicBool,
    cell: OnceLock<Weak<CallCell>>,
    approval: OnceLock<Weak<ApprovalCell>>,
    /// The driver parked on this call, resumed once its result is handed
    /// over (see `park`).
    parked: park::Parked,
}

/// What the batch's options say about its calls.
struct Rules {
    /// Ids of calls the host already approved.
    approved: Vec<String>,
    timeout_ms: u32,
    /// Bound on every call of the batch, waits included (0 = none).
    deadline_ms: u32,
    /// Without a deadline, the bound on waiting for a pump (`arm_pump_wait`).
    pump_wait_ms: u32,
    strict_nulls: bool,
    /// Calls start on the submitting thread, which never waits for them.
    start_inline: bool,
    /// Hears the calls' progress reports.
    on_progress: Option<ProgressListener>,
    on_log: Option<crate::log::LogListener>,
    /// The caller's input for the calls (`ExecOptions::input`).
    input: Option<Arc<crate::input::CallInput>>,
    /// Hears calls whose callback returned with the call still open.
    on_defer: Option<super::options::DeferListener>,
}

/// Who runs the calls: the threads driving the batch, and what they claim.
struct Drivers {
    /// The first call no thread has claimed.
    next: AtomicUsize,
    /// How many workers share the batch (its limit; for the size of the
    /// chunks they claim).
    workers: usize,
    /// Workers inside `drive` right now, and when the batch started: to tell
    /// when more workers would only fight over the cores (see `crowded`).
    driving: AtomicUsize,
    /// (None for a batch of one worker: no clock read it would not use.)
    began: Option<Instant>,
    /// The watching thread (the caller of `execute`, a submitted batch's
    /// lead) calls helpers in, or arms the join timer, before its next call
    /// (see `join`); false once it did.
    watching: AtomicBool,
    /// When the watching thread began, in nanoseconds after `began` (a
    /// lead starts when a pool thread takes it).
    watch_from_ns: AtomicU64,
}

/// How the batch ends early, and its timers.
struct Ending {
    cancelled: AtomicBool,
    /// Ended by its registry's close (`abort`), set before `cancelled`.
    closing: AtomicBool,
    /// The deadline (`Rules::deadline_ms`) passed.
    deadline_passed: AtomicBool,
    deadline_timer: TimerSlot,
    /// Without a deadline: how long main-thread calls wait for a pump
    /// (`PUMP_WAIT_MS`, see `ending.rs`).
    pump_wait_timer: TimerSlot,
    /// When pool workers join the batch's own thread (see `join`).
    join_timer: TimerSlot,
}

/// Where results go, and when the batch is over for the host.
struct Delivery {
    sink: Sink,
    /// Results waiting for the host's poll (`Sink::Queue`).
    queue: Mutex<VecDeque<(usize, ToolResult)>>,
    on_done: Option<Box<dyn Fn() + Send + Sync>>,
    /// Calls without a result yet.
    remaining: AtomicUsize,
    /// Cleared by `detach`: no host callback of this batch runs after that.
    sink_open: AtomicBool,
    /// Host result callbacks of this batch running right now.
    delivering: AtomicUsize,
    /// The end-of-batch signal was handed to the poller.
    poll_finished: AtomicBool,
    /// `on_done` (the host's end-of-batch callback) has returned: only then
    /// is the batch over for a waiter, who may free what that callback uses.
    ended: AtomicBool,
}

/// Threads waiting for one call (`one`) or for the whole batch (`all`),
/// and what wakes them.
struct Waiters {
    lock: Mutex<()>,
    progress: Condvar,
    one: AtomicUsize,
    all: AtomicUsize,
}

impl Drop for BatchInner {
    fn drop(&mut self) {
        LIVE_BATCHES.fetch_sub(1, Ordering::SeqCst);
    }
}

thread_local! {
    /// Batches whose result callback is running on this thread.
    static DELIVERING: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl BatchInner {
    pub(crate) fn new(
        registry: &Registry,
        exec: Arc<ExecState>,
        calls: Vec<CallRequest>,
        options: &ExecOptions,
        sink: Sink,
        on_done: Option<Box<dyn Fn() + Send + Sync>>,
    ) -> Arc<BatchInner> {
        let n = calls.len();
        let journal = journaled::BatchJournal::new(registry, &exec.journal, options, &calls);
        LIVE_BATCHES.fetch_add(1, Ordering::SeqCst);
        Arc::new(BatchInner {
            registry: registry.shared.clone(),
            exec,
            // One allocation for every call's state (five vectors of one
            // element each were 4 more allocations and frees for a lone call).
            slots: calls
                .into_iter()
                .map(|c| Slot {
                    call: Mutex::new(Some(c)),
                    result: Mutex::new(None),
                    delivered: AtomicBool::new(false),
                    cell: OnceLock::new(),
                    approval: OnceLock::new(),
                    parked: park::Parked::default(),
                })
                .collect(),
            rules: Rules {
                approved: options.approved.clone(),
                timeout_ms: options.timeout_ms,
                deadline_ms: options.deadline_ms,
                pump_wait_ms: match options.pump_wait_ms {
                    0 => ending::PUMP_WAIT_MS,
                    ms => ms,
                },
                strict_nulls: options.strict_nulls,
                start_inline: options.start_inline,
                on_progress: options.progress.clone(),
                on_log: options.log.clone(),
                input: options.input.clone(),
                on_defer: options.on_defer.clone(),
            },
            drivers: Drivers {
                next: AtomicUsize::new(0),
                workers: options.workers(n).max(1),
                driving: AtomicUsize::new(0),
                began: (options.workers(n) > 1).then(Instant::now),
                watching: AtomicBool::new(false),
                watch_from_ns: AtomicU64::new(0),
            },
            ending: Ending {
                cancelled: AtomicBool::new(false),
                closing: AtomicBool::new(false),
                deadline_passed: AtomicBool::new(false),
                deadline_timer: TimerSlot::default(),
                pump_wait_timer: TimerSlot::default(),
                join_timer: TimerSlot::default(),
            },
            delivery: Delivery {
                sink,
                queue: Mutex::new(VecDeque::new()),
                on_done,
                remaining: AtomicUsize::new(n),
                sink_open: AtomicBool::new(true),
                delivering: AtomicUsize::new(0),
                poll_finished: AtomicBool::new(false),
                ended: AtomicBool::new(false),
            },
            waiters: Waiters {
                lock: Mutex::new(()),
                progress: Condvar::new(),
                one: AtomicUsize::new(0),
                all: AtomicUsize::new(0),
            },
            handout: OnceLock::new(),
            journal,
        })
    }

    /// Hands this batch's `HOST_RUN` calls to `handout` (before any starts).
    pub(crate) fn hand_out_to(&self, handout: Arc<Handout>) {
        let _ = self.handout.set(handout);
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.ending.cancelled.load(Ordering::SeqCst)
    }

    /// Every call has its result (the end callback may still be running).
    pub(crate) fn is_done(&self) -> bool {
        self.delivery.remaining.load(Ordering::SeqCst) == 0
    }

    /// Every result was handed over and the end callback, if any, has
    /// returned. Inside one of this batch's own callbacks, `is_done` is
    /// enough: waiting there for the end callback would wait for itself.
    pub(crate) fn is_finished(&self) -> bool {
        self.delivery.ended.load(Ordering::SeqCst)
            || (self.is_done() && (self.delivery.on_done.is_none() || self.inside_own_callback()))
    }

    fn inside_own_callback(&self) -> bool {
        let key = self.key();
        DELIVERING
            .try_with(|d| d.try_borrow().map(|d| d.contains(&key)).unwrap_or(false))
            .unwrap_or(false)
    }

    /// Marks the end callback as returned and wakes whoever waits for it.
    fn end(&self) {
        self.delivery.ended.store(true, Ordering::SeqCst);
        if self.waiters.all.load(Ordering::SeqCst) + self.waiters.one.load(Ordering::SeqCst) > 0 {
            self.notify();
        }
    }

    fn notify(&self) {
        let _guard = self.waiters.lock.lock();
        self.waiters.progress.notify_all();
    }

    /// Records call `index`'s one result and hands it on.
    pub(crate) fn deliver(&self, index: usize, result: ToolResult) {
        let result = self.journal_completed(index, result);
        let observer = &self.registry.observer;
        // The outcomes that have an event of their own announce it first.
        match result.outcome {
            Outcome::Cancelled => observer.emit(event(EventKind::Cancelled, &result, index)),
            Outcome::Timeout => observer.emit(event(EventKind::TimedOut, &result, index)),
            _ => {}
        }
        observer.emit(event(EventKind::Finished, &result, index));
        match &self.delivery.sink {
            Sink::Collect => {
                if let Some(slot) = self.slots.get(index).map(|s| &s.result) {
                    if let Ok(mut slot) = slot.lock() {
                        *slot = Some(result);
                    }
                }
            }
            Sink::Callback(f) => self.host_callback(|| f(index, result)),
            Sink::Queue => {
                if let Ok(mut q) = self.delivery.queue.lock() {
                    q.push_back((index, result));
                }
                self.registry.wake.signal();
            }
        }
        if let Some(slot) = self.slots.get(index) {
            slot.delivered.store(true, Ordering::SeqCst);
            slot.parked.resume();
        }
        if self.delivery.remaining.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.ending.deadline_timer.cancel();
            self.ending.pump_wait_timer.cancel();
            self.ending.join_timer.cancel();
            if let Some(f) = &self.delivery.on_done {
                self.host_callback(f);
            }
            self.end();
        } else if self.waiters.one.load(Ordering::SeqCst) > 0 {
            self.notify();
        }
    }

    /// A batch of no calls is done at once; tell the host so.
    pub(crate) fn finish_if_empty(&self) {
        if self.slots.is_empty() {
            if let Some(f) = &self.delivery.on_done {
                self.host_callback(f);
            }
            self.end();
        }
    }

    fn key(&self) -> usize {
        self as *const BatchInner as usize
    }

    /// Runs a host result callback unless the batch was detached.
    fn host_callback(&self, f: impl FnOnce()) {
        self.delivery.delivering.fetch_add(1, Ordering::SeqCst);
        if self.delivery.sink_open.load(Ordering::SeqCst) {
            let key = self.key();
            let pushed = DELIVERING
                .try_with(|d| d.try_borrow_mut().map(|mut d| d.push(key)).is_ok())
                .unwrap_or(false);
            self.registry.run_callback(|| {
                let _ = catch_unwind(AssertUnwindSafe(f));
            });
            if pushed {
                let _ = DELIVERING.try_with(|d| d.try_borrow_mut().map(|mut d| d.pop()));
            }
        }
        self.delivery.delivering.fetch_sub(1, Ordering::SeqCst);
    }

    /// Stops every host callback of this batch: when this returns none runs
    /// (unless called from inside one, which then is the last). The batch
    /// still finishes its calls internally.
    pub(crate) fn detach(&self) {
        self.delivery.sink_open.store(false, Ordering::SeqCst);
        let own = usize::from(self.inside_own_callback());
        while self.delivery.delivering.load(Ordering::SeqCst) > own {
            std::thread::yield_now();
        }
    }

    /// Whether the poller has been told the batch is over; tells it once.
    pub(crate) fn take_poll_end(&self) -> bool {
        self.is_done()
            && self
                .delivery
                .queue
                .lock()
                .map(|q| q.is_empty())
                .unwrap_or(true)
            && !self.delivery.poll_finished.swap(true, Ordering::SeqCst)
    }

    fn deliver_early(&self, index: usize, req: &CallRequest, outcome: Outcome, text: String) {
        self.deliver(
            index,
            ToolResult::new(req.id.clone(), req.name.clone(), outcome, text),
        );
    }

    /// Takes the collected results, in call order. Only after the batch is done.
    pub(crate) fn take_results(&self) -> Vec<ToolResult> {
        self.slots
            .iter()
            .map(|slot| {
                slot.result
                    .lock()
                    .ok()
                    .and_then(|mut s| s.take())
                    .unwrap_or_else(|| ToolResult::new("", "", Outcome::Cancelled, "result lost"))
            })
            .collect()
    }

    /// Hands over up to `max` queued results.
    pub(crate) fn poll(&self, max: usize) -> Vec<(usize, ToolResult)> {
        match self.delivery.queue.lock() {
            Ok(mut q) => {
                let n = q.len().min(max);
                q.drain(..n).collect()
            }
            Err(_) => Vec::new(),
        }
    }

    /// Runs calls of this batch until none is left to start, as one of its
    /// at most `workers` drivers (the batch's limit); returns at once if that
    /// many already drive it. Counted as host activity: closing the registry
    /// waits for it.
    pub(crate) fn drive(self: &Arc<Self>, on_caller: bool) {
        let origin = if on_caller {
            Origin::Caller
        } else {
            Origin::Worker
        };
        self.drive_from(origin, true, 0..0);
    }

    /// `drive`, over the limit unless `bounded`, starting with the calls
    /// `first` (claimed by a worker that got stuck in a callback and was
    /// replaced by this one).
    fn drive_from(self: &Arc<Self>, origin: Origin, bounded: bool, first: Range<usize>) {
        if self.drivers.driving.fetch_add(1, Ordering::SeqCst) >= self.drivers.workers && bounded {
            self.drivers.driving.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        self.go_on(origin, first);
    }

    /// Runs calls as a driver already counted in `driving`, the calls
    /// `first` first, until none is left to start. A driver parked on an
    /// open call keeps its count: that call's completion resumes it.
    fn go_on(self: &Arc<Self>, origin: Origin, first: Range<usize>) {
        let mut parked = false;
        self.registry.clone().run_callback(|| {
            let mut cache = ToolCache::default();
            let mut claimed = Some(first);
            while let Some(chunk) = claimed {
                for i in chunk.clone() {
                    match self.start(i, chunk.end, origin, &mut cache) {
                        Next::Go => {}
                        // Stuck in a callback past its timeout and replaced:
                        // the replacement has the rest of this chunk and the
                        // batch.
                        Next::Stop => return,
                        Next::Parked => {
                            parked = true;
                            return;
                        }
                    }
                }
                claimed = (origin == Origin::Caller || !self.crowded())
                    .then(|| self.claim())
                    .flatten();
            }
        });
        if !parked {
            self.drivers.driving.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Keeps the approval call `index` waits for, to expire or cancel it.
    pub(crate) fn watch_approval(&self, index: usize, cell: &Arc<ApprovalCell>) {
        let _ = self.slots[index].approval.set(Arc::downgrade(cell));
    }

    /// Calls still waiting to start: pool workers join the batch's own
    /// thread, up to its limit (see `join`).
    pub(crate) fn call_helpers(self: &Arc<Self>) {
        if !self.has_unclaimed() || self.is_cancelled() {
            return;
        }
        let driving = self.drivers.driving.load(Ordering::SeqCst);
        for _ in driving..self.drivers.workers {
            let b = self.clone();
            pool::spawn(move || b.drive(false));
        }
    }

    /// Keeps the timer that calls in helpers, cancelled when the batch is done.
    pub(crate) fn keep_join_timer(&self, timer: Timer) {
        self.ending.join_timer.keep(timer, || self.is_done());
    }

    /// Some call was not yet claimed by any thread.
    pub(crate) fn has_unclaimed(&self) -> bool {
        self.drivers.next.load(Ordering::SeqCst) < self.slots.len()
    }

    /// True when calls finish so fast that another worker would only take a
    /// core from those already driving: every core has a driver, and calls
    /// have been completing at more than one per 20 us per driver. Slow calls
    /// (I/O, sleeps) never look like this, so they get the full limit.
    fn crowded(&self) -> bool {
        let done = self.slots.len() - self.delivery.remaining.load(Ordering::Relaxed);
        let driving = self.drivers.driving.load(Ordering::Relaxed);
        if done < 16 || driving <= pool::cores() {
            return false;
        }
        let Some(began) = self.drivers.began else {
            return false;
        };
        calls_are_fast(began.elapsed(), driving, done)
    }

    /// Claims the next calls to start: chunks that shrink as the batch drains
    /// (guided scheduling), so that workers touch neither the same counter nor
    /// neighbouring slots on every call, yet finish together.
    fn claim(&self) -> Option<Range<usize>> {
        let n = self.slots.len();
        let mut cur = self.drivers.next.load(Ordering::SeqCst);
        loop {
            if cur >= n {
                return None;
            }
            let chunk = ((n - cur) / (self.drivers.workers * 4)).clamp(1, 32);
            match self.drivers.next.compare_exchange_weak(
                cur,
                cur + chunk,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return Some(cur..cur + chunk),
                Err(now) => cur = now,
            }
        }
    }

    /// A worker stuck in a timed-out callback holds no call back: another
    /// worker takes over, first with the calls `claimed` that the stuck one
    /// had claimed behind the stuck call, then with those still unclaimed.
    pub(crate) fn replace_stuck_worker(self: &Arc<Self>, claimed: Range<usize>) {
        if !claimed.is_empty() || self.has_unclaimed() {
            let batch = self.clone();
            // Over the limit: the stuck worker still counts as a driver
            // until its callback returns.
            pool::spawn_urgent(move || batch.drive_from(Origin::Worker, false, claimed));
        }
    }
}

/// A call reaches its batch through this (the call's module is below the batch's).
impl Owner for BatchInner {
    fn deliver(&self, index: usize, result: ToolResult) {
        BatchInner::deliver(self, index, result);
    }

    fn is_cancelled(&self) -> bool {
        BatchInner::is_cancelled(self)
    }

    fn is_closing(&self) -> bool {
        self.ending.closing.load(Ordering::SeqCst)
    }

    fn replace_stuck_worker(self: Arc<Self>, claimed: Range<usize>) {
        BatchInner::replace_stuck_worker(&self, claimed);
    }

    fn registry(&self) -> &Arc<Shared> {
        &self.registry
    }

    fn progress_listener(&self) -> Option<&ProgressListener> {
        self.rules.on_progress.as_ref()
    }

    fn log_listener(&self) -> Option<&crate::log::LogListener> {
        self.rules.on_log.as_ref()
    }

    fn input(&self) -> Option<&Arc<crate::input::CallInput>> {
        self.rules.input.as_ref()
    }

    fn defer_listener(&self) -> Option<&super::options::DeferListener> {
        self.rules.on_defer.as_ref()
    }
}

/// The registry's state ends the batch at close through this.
impl Tracked for BatchInner {
    fn abort(&self, reason: &str) {
        BatchInner::abort(self, reason);
    }

    fn release_calls(&self) {
        BatchInner::release_calls(self);
    }
}

fn event(kind: EventKind, r: &ToolResult, index: usize) -> Event<'_> {
    Event {
        kind,
        tool: &r.name,
        id: &r.id,
        index,
        outcome: (kind == EventKind::Finished).then_some(r.outcome),
        duration_us: r.duration_us,
        progress: None,
        log: None,
    }
}

/// Whether `done` calls finished in `elapsed` by `driving` threads came at
/// more than one per 20 us per driver. In u128: on 32-bit targets the product
/// of nanoseconds and drivers passes `usize::MAX` after about a second.
fn calls_are_fast(elapsed: std::time::Duration, driving: usize, done: usize) -> bool {
    let per_call_ns = elapsed.as_nanos().saturating_mul(driving as u128) / done.max(1) as u128;
    per_call_ns < 20_000
}

#[cfg(test)]
mod tests {
    use crate::exec::batch::calls_are_fast;
    use std::time::Duration;

    #[test]
    fn the_call_rate_does_not_overflow_on_long_batches() {
        // 5 s with 4 drivers: 2e10 ns, past u32 (the i686 overflow).
        assert!(!calls_are_fast(Duration::from_secs(5), 4, 16));
        assert!(!calls_are_fast(
            Duration::from_secs(u64::MAX / 2),
            usize::MAX,
            16
        ));
        assert!(calls_are_fast(Duration::from_micros(100), 4, 1000));
    }
}
