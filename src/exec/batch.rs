//! A batch of calls: who runs which call, where results go, when it is done.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use super::approval::ApprovalCell;
use super::cell::CallCell;
use super::pool;
use super::run::{run_call, PendingRun, ToolCache};
use crate::call::{CallRequest, Outcome, ToolResult};
use crate::check;
use crate::observe::{Event, EventKind};
use crate::registry::{Shared, Tool};

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
    calls: Vec<Mutex<Option<CallRequest>>>,
    results: Vec<Mutex<Option<ToolResult>>>,
    pub(crate) cells: Vec<OnceLock<Weak<CallCell>>>,
    approvals: Vec<OnceLock<Weak<ApprovalCell>>>,
    approved: Vec<String>,
    next: AtomicUsize,
    remaining: AtomicUsize,
    cancelled: AtomicBool,
    timeout_ms: u32,
    /// Bound on every call of the batch, waits included (0 = none), its
    /// timer, and whether it has passed.
    deadline_ms: u32,
    deadline_timer: Mutex<Option<pool::Timer>>,
    deadline_passed: AtomicBool,
    strict_nulls: bool,
    /// Calls start on the submitting thread, which never waits for them.
    start_inline: bool,
    /// How many workers share the batch (for the size of the chunks they claim).
    workers: usize,
    /// Workers inside `drive` right now, and when the batch started: to tell
    /// when more workers would only fight over the cores (see `crowded`).
    driving: AtomicUsize,
    /// (None for a batch of one worker: no clock read it would not use.)
    began: Option<Instant>,
    sink: Sink,
    queue: Mutex<VecDeque<(usize, ToolResult)>>,
    on_done: Option<Box<dyn Fn() + Send + Sync>>,
    lock: Mutex<()>,
    progress: Condvar,
    /// Threads waiting for one call (`waiters`) or for the whole batch (`done_waiters`).
    waiters: AtomicUsize,
    done_waiters: AtomicUsize,
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
        registry: Arc<Shared>,
        calls: Vec<CallRequest>,
        options: &super::ExecOptions,
        sink: Sink,
        on_done: Option<Box<dyn Fn() + Send + Sync>>,
    ) -> Arc<BatchInner> {
        let n = calls.len();
        LIVE_BATCHES.fetch_add(1, Ordering::SeqCst);
        Arc::new(BatchInner {
            registry,
            calls: calls.into_iter().map(|c| Mutex::new(Some(c))).collect(),
            results: (0..n).map(|_| Mutex::new(None)).collect(),
            cells: (0..n).map(|_| OnceLock::new()).collect(),
            approvals: (0..n).map(|_| OnceLock::new()).collect(),
            approved: options.approved.clone(),
            next: AtomicUsize::new(0),
            remaining: AtomicUsize::new(n),
            cancelled: AtomicBool::new(false),
            timeout_ms: options.timeout_ms,
            deadline_ms: options.deadline_ms,
            deadline_timer: Mutex::new(None),
            deadline_passed: AtomicBool::new(false),
            workers: options.workers(n).max(1),
            driving: AtomicUsize::new(0),
            began: (options.workers(n) > 1).then(Instant::now),
            strict_nulls: options.strict_nulls,
            start_inline: options.start_inline,
            sink,
            queue: Mutex::new(VecDeque::new()),
            on_done,
            lock: Mutex::new(()),
            progress: Condvar::new(),
            waiters: AtomicUsize::new(0),
            done_waiters: AtomicUsize::new(0),
            sink_open: AtomicBool::new(true),
            delivering: AtomicUsize::new(0),
            poll_finished: AtomicBool::new(false),
            ended: AtomicBool::new(false),
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.calls.len()
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Every call has its result (the end callback may still be running).
    pub(crate) fn is_done(&self) -> bool {
        self.remaining.load(Ordering::SeqCst) == 0
    }

    /// Every result was handed over and the end callback, if any, has
    /// returned. Inside one of this batch's own callbacks, `is_done` is
    /// enough: waiting there for the end callback would wait for itself.
    pub(crate) fn is_finished(&self) -> bool {
        self.ended.load(Ordering::SeqCst)
            || (self.is_done() && (self.on_done.is_none() || self.inside_own_callback()))
    }

    fn inside_own_callback(&self) -> bool {
        let key = self.key();
        DELIVERING
            .try_with(|d| d.try_borrow().map(|d| d.contains(&key)).unwrap_or(false))
            .unwrap_or(false)
    }

    /// Marks the end callback as returned and wakes whoever waits for it.
    fn end(&self) {
        self.ended.store(true, Ordering::SeqCst);
        if self.done_waiters.load(Ordering::SeqCst) + self.waiters.load(Ordering::SeqCst) > 0 {
            self.notify();
        }
    }

    fn notify(&self) {
        let _guard = self.lock.lock();
        self.progress.notify_all();
    }

    /// Records call `index`'s one result and hands it on.
    pub(crate) fn deliver(&self, index: usize, result: ToolResult) {
        let observer = &self.registry.observer;
        // The outcomes that have an event of their own announce it first.
        match result.outcome {
            Outcome::Cancelled => observer.emit(event(EventKind::Cancelled, &result, index)),
            Outcome::Timeout => observer.emit(event(EventKind::TimedOut, &result, index)),
            _ => {}
        }
        observer.emit(event(EventKind::Finished, &result, index));
        match &self.sink {
            Sink::Collect => {
                if let Some(slot) = self.results.get(index) {
                    if let Ok(mut slot) = slot.lock() {
                        *slot = Some(result);
                    }
                }
            }
            Sink::Callback(f) => self.host_callback(|| f(index, result)),
            Sink::Queue => {
                if let Ok(mut q) = self.queue.lock() {
                    q.push_back((index, result));
                }
                self.registry.wake.signal();
            }
        }
        if self.remaining.fetch_sub(1, Ordering::SeqCst) == 1 {
            let timer = self.deadline_timer.lock().ok().and_then(|mut t| t.take());
            if let Some(timer) = timer {
                timer.cancel();
            }
            if let Some(f) = &self.on_done {
                self.host_callback(f);
            }
            self.end();
        } else if self.waiters.load(Ordering::SeqCst) > 0 {
            self.notify();
        }
    }

    /// A batch of no calls is done at once; tell the host so.
    pub(crate) fn finish_if_empty(&self) {
        if self.calls.is_empty() {
            if let Some(f) = &self.on_done {
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
        self.delivering.fetch_add(1, Ordering::SeqCst);
        if self.sink_open.load(Ordering::SeqCst) {
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
        self.delivering.fetch_sub(1, Ordering::SeqCst);
    }

    /// Stops every host callback of this batch: when this returns none runs
    /// (unless called from inside one, which then is the last). The batch
    /// still finishes its calls internally.
    pub(crate) fn detach(&self) {
        self.sink_open.store(false, Ordering::SeqCst);
        let own = usize::from(self.inside_own_callback());
        while self.delivering.load(Ordering::SeqCst) > own {
            std::thread::yield_now();
        }
    }

    /// Whether the poller has been told the batch is over; tells it once.
    pub(crate) fn take_poll_end(&self) -> bool {
        self.is_done()
            && self.queue.lock().map(|q| q.is_empty()).unwrap_or(true)
            && !self.poll_finished.swap(true, Ordering::SeqCst)
    }

    fn deliver_early(&self, index: usize, req: &CallRequest, outcome: Outcome, text: String) {
        self.deliver(
            index,
            ToolResult::new(req.id.clone(), req.name.clone(), outcome, text),
        );
    }

    /// Blocks until the whole batch is done or `deadline` passes.
    pub(crate) fn wait_done(&self, deadline: Option<Instant>) -> bool {
        self.wait_on(&self.done_waiters, deadline, || self.is_finished())
    }

    /// Blocks until `cond` holds or `deadline` passes; returns `cond()`.
    pub(crate) fn wait_until(&self, deadline: Option<Instant>, cond: impl Fn() -> bool) -> bool {
        self.wait_on(&self.waiters, deadline, cond)
    }

    /// Waits for `cond`. On a main thread of the registry (one that ever
    /// pumped) it runs this batch's main-thread calls itself meanwhile: no
    /// one else would, since the thread that pumps is the one waiting here.
    fn wait_on(
        &self,
        waiters: &AtomicUsize,
        deadline: Option<Instant>,
        cond: impl Fn() -> bool,
    ) -> bool {
        let main = self.registry.is_pump_thread();
        loop {
            if cond() {
                return true;
            }
            if main {
                if let Some(run) = self.take_main() {
                    run.run(false);
                    continue;
                }
            }
            match self.sleep(waiters, deadline, &cond, main) {
                Woke::Met => return true,
                Woke::Expired => return cond(),
                Woke::MainCall => continue,
            }
        }
    }

    /// Sleeps until `cond` holds, `deadline` passes, or (with `main`) a
    /// main-thread call of this batch is queued.
    fn sleep(
        &self,
        waiters: &AtomicUsize,
        deadline: Option<Instant>,
        cond: &impl Fn() -> bool,
        main: bool,
    ) -> Woke {
        waiters.fetch_add(1, Ordering::SeqCst);
        let mut guard = match self.lock.lock() {
            Ok(g) => g,
            Err(_) => {
                waiters.fetch_sub(1, Ordering::SeqCst);
                return Woke::Expired;
            }
        };
        let woke = loop {
            if cond() {
                break Woke::Met;
            }
            if main && self.has_main() {
                break Woke::MainCall;
            }
            let wait = match deadline {
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        break Woke::Expired;
                    }
                    d - now
                }
                None => Duration::from_secs(3600),
            };
            guard = match self.progress.wait_timeout(guard, wait) {
                Ok((g, _)) => g,
                Err(_) => {
                    waiters.fetch_sub(1, Ordering::SeqCst);
                    return Woke::Expired;
                }
            };
        };
        drop(guard);
        waiters.fetch_sub(1, Ordering::SeqCst);
        woke
    }

    /// Takes this batch's oldest main-thread call waiting for a pump.
    fn take_main(&self) -> Option<PendingRun> {
        self.registry.main_queue.pop_of(self)
    }

    fn has_main(&self) -> bool {
        self.registry.main_queue.has_of(self)
    }

    /// Queues a main-thread call for `pump`, or for a main thread waiting on
    /// this batch (woken here: it may be the only thread that ever pumps).
    pub(crate) fn queue_main(&self, run: PendingRun) {
        self.registry.main_queue.push(run);
        fence(Ordering::SeqCst);
        if self.deadline_passed() {
            return self.expire_waiting_for_pump();
        }
        self.registry.wake.signal();
        if self.waiters.load(Ordering::SeqCst) + self.done_waiters.load(Ordering::SeqCst) > 0 {
            self.notify();
        }
    }

    /// Takes the collected results, in call order. Only after the batch is done.
    pub(crate) fn take_results(&self) -> Vec<ToolResult> {
        self.results
            .iter()
            .map(|slot| {
                slot.lock()
                    .ok()
                    .and_then(|mut s| s.take())
                    .unwrap_or_else(|| ToolResult::new("", "", Outcome::Cancelled, "result lost"))
            })
            .collect()
    }

    /// Hands over up to `max` queued results.
    pub(crate) fn poll(&self, max: usize) -> Vec<(usize, ToolResult)> {
        match self.queue.lock() {
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
        self.drive_as(on_caller, true);
    }

    fn drive_as(self: &Arc<Self>, on_caller: bool, bounded: bool) {
        if self.driving.fetch_add(1, Ordering::SeqCst) >= self.workers && bounded {
            self.driving.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        self.registry.clone().run_callback(|| {
            let mut cache = ToolCache::default();
            while let Some(claimed) = (on_caller || !self.crowded())
                .then(|| self.claim())
                .flatten()
            {
                // A worker replaced after a timeout still starts what it claimed.
                let mut keep_going = true;
                for i in claimed {
                    keep_going &= self.start(i, on_caller, &mut cache);
                }
                if !keep_going {
                    break;
                }
            }
        });
        self.driving.fetch_sub(1, Ordering::SeqCst);
    }

    /// Calls still waiting to start: pool workers join the batch's own
    /// thread, up to its limit (see `join`).
    pub(crate) fn call_helpers(self: &Arc<Self>) {
        if self.next.load(Ordering::SeqCst) >= self.calls.len() || self.is_cancelled() {
            return;
        }
        let driving = self.driving.load(Ordering::SeqCst);
        for _ in driving..self.workers {
            let b = self.clone();
            pool::spawn(move || b.drive(false));
        }
    }

    /// True when calls finish so fast that another worker would only take a
    /// core from those already driving: every core has a driver, and calls
    /// have been completing at more than one per 20 us per driver. Slow calls
    /// (I/O, sleeps) never look like this, so they get the full limit.
    fn crowded(&self) -> bool {
        let done = self.calls.len() - self.remaining.load(Ordering::Relaxed);
        let driving = self.driving.load(Ordering::Relaxed);
        if done < 16 || driving <= pool::cores() {
            return false;
        }
        let Some(began) = self.began else {
            return false;
        };
        let per_call_ns = began.elapsed().as_nanos() as usize * driving / done;
        per_call_ns < 20_000
    }

    /// Claims the next calls to start: chunks that shrink as the batch drains
    /// (guided scheduling), so that workers touch neither the same counter nor
    /// neighbouring slots on every call, yet finish together.
    fn claim(&self) -> Option<std::ops::Range<usize>> {
        let n = self.calls.len();
        let mut cur = self.next.load(Ordering::SeqCst);
        loop {
            if cur >= n {
                return None;
            }
            let chunk = ((n - cur) / (self.workers * 4)).clamp(1, 32);
            match self.next.compare_exchange_weak(
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

    /// A worker stuck in a timed-out callback holds no call back: if calls
    /// are still waiting to start, another worker takes over.
    pub(crate) fn replace_stuck_worker(self: &Arc<Self>) {
        if self.next.load(Ordering::SeqCst) < self.calls.len() {
            let batch = self.clone();
            // Over the limit: the stuck worker still counts as a driver.
            pool::spawn_urgent(move || batch.drive_as(false, false));
        }
    }

    pub(crate) fn timeout_for(&self, tool: &Tool) -> u32 {
        if self.timeout_ms > 0 {
            self.timeout_ms
        } else {
            tool.meta.timeout_ms
        }
    }

    /// Starts call `index`; false if this worker must stop (see `PendingRun::run`).
    fn start(self: &Arc<Self>, index: usize, on_caller: bool, cache: &mut ToolCache) -> bool {
        let Some(req) = self.calls[index].lock().ok().and_then(|mut c| c.take()) else {
            return true;
        };
        if self.is_cancelled() {
            let text = "Cancelled before it started.".to_string();
            self.deliver_early(index, &req, Outcome::Cancelled, text);
            return true;
        }
        if self.deadline_passed() {
            let text = self.late_start_text(&req.name);
            self.deliver_early(index, &req, Outcome::Timeout, text);
            return true;
        }
        let registry = &self.registry;
        if registry.is_closed() {
            let text = check::CLOSED_TEXT.to_string();
            self.deliver_early(index, &req, Outcome::Cancelled, text);
            return true;
        }
        let Some(tool) = cache.get(registry, &req.name) else {
            let text = registry.unknown_tool_text(&req.name);
            self.deliver_early(index, &req, Outcome::UnknownTool, text);
            return true;
        };
        let CallRequest {
            id,
            name,
            arguments,
        } = req;
        let coerce = registry.options.coerce;
        let arguments =
            match check::validate_arguments(tool, &name, arguments, self.strict_nulls, coerce) {
                Ok(v) => v,
                Err(text) => {
                    let result = ToolResult::new(id, name, Outcome::InvalidArguments, text);
                    self.deliver(index, result);
                    return true;
                }
            };
        let flags = tool.meta.flags;
        let needs_approval = flags.requires_approval() && !self.approved.contains(&id);
        // A main-thread call that reaches a main thread runs there, timeout or not.
        let main_here = flags.main_thread() && on_caller && self.registry.is_pump_thread();
        let queued = needs_approval
            || (flags.main_thread() && !main_here)
            || (!main_here && on_caller && !self.start_inline && self.timeout_for(tool) > 0)
            || (!main_here && self.start_inline && flags.serial());
        if !queued {
            return run_call(self, index, id, name, tool, arguments, !self.start_inline);
        }
        let run = PendingRun {
            batch: self.clone(),
            index,
            id,
            name,
            tool: tool.clone(),
            arguments,
        };
        if needs_approval {
            self.request_approval(run);
        } else if flags.main_thread() {
            self.queue_main(run);
        } else if self.start_inline {
            // A serial tool waits for its own earlier calls: never on the
            // thread that starts calls inline (an event loop), and it holds
            // its turn until the call completes, not just until it returns.
            pool::spawn_urgent(move || {
                run.run(true);
            });
        } else {
            // The caller must be free to abandon the call at its deadline.
            pool::spawn_urgent(move || {
                run.run(true);
            });
            self.wait_until(None, || self.result_arrived(index));
        }
        true
    }

    fn request_approval(self: &Arc<Self>, run: PendingRun) {
        let Some(approver) = self.registry.approver() else {
            let text = format!(
                "Tool \"{}\" requires approval and no approver is set; the call was not run.",
                run.name
            );
            return run.finish_unrun(Outcome::Denied, text);
        };
        let index = run.index;
        let cell = ApprovalCell::new(run);
        let _ = self.approvals[index].set(Arc::downgrade(&cell));
        fence(Ordering::SeqCst);
        if self.is_cancelled() {
            return cell.cancel();
        }
        if self.deadline_passed() {
            return cell.expire(self.deadline_ms);
        }
        let approval = super::Approval { cell };
        self.registry.run_callback(|| {
            if catch_unwind(AssertUnwindSafe(|| approver(approval.clone()))).is_err() {
                let _ = approval.deny("the approver failed");
            }
        });
    }

    fn result_arrived(&self, index: usize) -> bool {
        match &self.sink {
            Sink::Collect => self.results[index]
                .lock()
                .map(|s| s.is_some())
                .unwrap_or(true),
            _ => self.cells[index]
                .get()
                .and_then(Weak::upgrade)
                .map(|c| c.is_done())
                .unwrap_or(true),
        }
    }

    /// Arms the batch's deadline, if it has one.
    pub(crate) fn arm_deadline(self: &Arc<Self>) {
        if self.deadline_ms == 0 || self.is_done() {
            return;
        }
        let weak = Arc::downgrade(self);
        let timer = pool::after(
            Duration::from_millis(u64::from(self.deadline_ms)),
            move || {
                if let Some(batch) = weak.upgrade() {
                    batch.expire_deadline();
                }
            },
        );
        let Ok(mut slot) = self.deadline_timer.lock() else {
            return timer.cancel();
        };
        // Checked under the lock that the last delivery takes.
        if self.is_done() {
            drop(slot);
            timer.cancel();
        } else {
            *slot = Some(timer);
        }
    }

    pub(crate) fn deadline_passed(&self) -> bool {
        self.deadline_passed.load(Ordering::SeqCst)
    }

    /// The result text of a call that could not start before the deadline.
    pub(crate) fn late_start_text(&self, tool: &str) -> String {
        format!(
            "Tool \"{tool}\" timed out: the batch deadline of {} ms passed while it waited \
             to start (for a free worker or an earlier call of a serial tool); it was not run.",
            self.deadline_ms
        )
    }

    /// Ends this batch's calls still waiting for a main thread, as timed out.
    fn expire_waiting_for_pump(&self) {
        for run in self.registry.main_queue.drain_of(self) {
            let text = format!(
                "Tool \"{}\" timed out: the batch deadline of {} ms passed while it waited \
                 for the host's main thread to call capstan_registry_pump; it was not run.",
                run.name, self.deadline_ms
            );
            run.finish_unrun(Outcome::Timeout, text);
        }
    }

    /// The deadline passed: every call without a result ends `timeout`, with
    /// a text saying what it was waiting for.
    pub(crate) fn expire_deadline(&self) {
        self.deadline_passed.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let ms = self.deadline_ms;
        self.expire_waiting_for_pump();
        for approval in &self.approvals {
            if let Some(cell) = approval.get().and_then(Weak::upgrade) {
                cell.expire(ms);
            }
        }
        for cell in &self.cells {
            if let Some(cell) = cell.get().and_then(Weak::upgrade) {
                let text = format!(
                    "Tool \"{}\" did not finish within the batch deadline of {ms} ms and was \
                     cancelled.",
                    cell.name()
                );
                cell.expire(text);
            }
        }
        loop {
            let i = self.next.fetch_add(1, Ordering::SeqCst);
            if i >= self.calls.len() {
                break;
            }
            if let Some(req) = self.calls[i].lock().ok().and_then(|mut c| c.take()) {
                let text = self.late_start_text(&req.name);
                self.deliver_early(i, &req, Outcome::Timeout, text);
            }
        }
    }

    /// Stops calls that have not started; running calls see `is_cancelled`.
    pub(crate) fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        for run in self.registry.main_queue.drain_of(self) {
            run.run(false); // sees the cancellation and reports it
        }
        for approval in &self.approvals {
            if let Some(cell) = approval.get().and_then(Weak::upgrade) {
                cell.cancel();
            }
        }
        // Calls no worker has taken yet: report them now, on this thread.
        loop {
            let i = self.next.fetch_add(1, Ordering::SeqCst);
            if i >= self.calls.len() {
                break;
            }
            if let Some(req) = self.calls[i].lock().ok().and_then(|mut c| c.take()) {
                let text = "Cancelled before it started.".to_string();
                self.deliver_early(i, &req, Outcome::Cancelled, text);
            }
        }
    }

    /// Releases every call's handle (see `release_calls`).
    pub(crate) fn release_calls(&self) {
        for cell in &self.cells {
            if let Some(cell) = cell.get().and_then(Weak::upgrade) {
                cell.release();
            }
        }
    }

    /// Cancels the batch and ends every running call as cancelled too.
    pub(crate) fn abort(&self, reason: &str) {
        self.cancel();
        for cell in &self.cells {
            if let Some(cell) = cell.get().and_then(Weak::upgrade) {
                cell.cancel(reason);
            }
        }
    }
}

/// Why a waiting thread woke up.
enum Woke {
    Met,
    Expired,
    MainCall,
}

fn event(kind: EventKind, r: &ToolResult, index: usize) -> Event<'_> {
    Event {
        kind,
        tool: &r.name,
        id: &r.id,
        index,
        outcome: (kind == EventKind::Finished).then_some(r.outcome),
        duration_us: r.duration_us,
    }
}
