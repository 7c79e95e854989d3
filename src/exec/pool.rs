//! The process-wide pool: worker threads run host callbacks, one small tokio
//! runtime thread runs the timers.
//!
//! Workers start on demand, when a job finds no idle worker, up to a cap the
//! host may change at any time; a worker idle for a while retires, sooner
//! when more than one per core is idle. Nothing starts before the first job.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use tokio::runtime::{Builder, Runtime};

use crate::error::Error;

/// Default cap on threads running tool callbacks at once, process-wide.
pub const DEFAULT_THREADS: usize = 256;

/// How long an idle worker waits for work before it retires: up to one per
/// core stays this long, the others only `SURPLUS_KEEP_ALIVE`.
const KEEP_ALIVE: Duration = Duration::from_secs(10);
const SURPLUS_KEEP_ALIVE: Duration = Duration::from_secs(1);

static THREADS: AtomicUsize = AtomicUsize::new(0);
static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// Sets how many pool threads may run tool callbacks at once, at any time.
/// Lowering it lets surplus workers retire once their current job returns.
pub fn configure(threads: usize) -> Result<(), Error> {
    if threads == 0 {
        return Err(Error::InvalidArgument(
            "pool threads must be at least 1".into(),
        ));
    }
    THREADS.store(threads, Ordering::SeqCst);
    // Idle workers over the new cap retire now, not at their keep-alive.
    WORKERS.work.notify_all();
    Ok(())
}

/// The cap in force.
pub fn threads() -> usize {
    match THREADS.load(Ordering::SeqCst) {
        0 => DEFAULT_THREADS,
        n => n,
    }
}

/// The timers' runtime: one thread, started by the first timer.
fn runtime() -> Result<&'static Runtime, Error> {
    RUNTIME
        .get_or_init(|| {
            Builder::new_multi_thread()
                .worker_threads(1)
                .max_blocking_threads(1)
                .thread_name("capstan-timer")
                .enable_time()
                .build()
                .map_err(|e| format!("cannot start the capstan timers: {e}"))
        })
        .as_ref()
        .map_err(|e| Error::Internal(e.clone()))
}

pub(crate) fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}

type Job = Box<dyn FnOnce() + Send>;

struct State {
    queue: VecDeque<Job>,
    /// Workers waiting for a job.
    idle: usize,
    /// Workers alive (idle or running a job).
    threads: usize,
}

struct Workers {
    state: Mutex<State>,
    work: Condvar,
}

static WORKERS: Workers = Workers {
    state: Mutex::new(State {
        queue: VecDeque::new(),
        idle: 0,
        threads: 0,
    }),
    work: Condvar::new(),
};

/// The pool's lock guards only its queue and counts (no host code runs under
/// it), so a poisoned lock still holds consistent data.
fn state() -> MutexGuard<'static, State> {
    WORKERS.state.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    static ON_POOL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True on a thread running pool work.
pub(crate) fn on_pool_thread() -> bool {
    ON_POOL.try_with(|p| p.get()).unwrap_or(false)
}

/// Hooks run on every thread of capstan's that runs host code: the pool
/// threads (expired timers run there too) and the MCP bridge's threads. `on_start` runs before the thread's first job (a thread already
/// running when the hooks are set runs it before its next job), `on_stop`
/// when a thread that ran `on_start` retires, or before its next job once
/// the hooks were replaced or removed. A host binding uses them
/// to attach its runtime to capstan's threads. The pool never shuts down
/// before the process exits; threads still alive then run no `on_stop`.
pub struct ThreadHooks {
    pub on_start: Box<dyn Fn() + Send + Sync>,
    pub on_stop: Box<dyn Fn() + Send + Sync>,
}

static HOOKS: Mutex<Option<Arc<ThreadHooks>>> = Mutex::new(None);
/// Bumped on every `set_thread_hooks`: a worker compares it before each job.
static HOOKS_VERSION: AtomicU64 = AtomicU64::new(0);

/// Installs (or with `None` removes) the pool threads' start/stop hooks.
pub fn set_thread_hooks(hooks: Option<ThreadHooks>) {
    let mut slot = HOOKS.lock().unwrap_or_else(|e| e.into_inner());
    let old = std::mem::replace(&mut *slot, hooks.map(Arc::new));
    if ABANDONED.load(Ordering::SeqCst) {
        keep_abandoned(old); // its drop may run host code
    }
    HOOKS_VERSION.fetch_add(1, Ordering::SeqCst);
}

/// The hooks a pool thread has run `on_start` of.
#[derive(Default)]
struct ThreadHookState {
    version: u64,
    started: Option<Arc<ThreadHooks>>,
}

/// Set for good by `abandon_thread_hooks`: no hook runs again.
static ABANDONED: AtomicBool = AtomicBool::new(false);
/// Threads inside a hook right now.
static IN_HOOK: AtomicUsize = AtomicUsize::new(0);

/// Stops every thread hook for good, without running `on_stop` (nor
/// dropping the hooks, whose drop may run host code): for a host runtime
/// that is ending and must not be entered again. Waits until no thread is
/// inside a hook, up to `timeout`; false if one still was then (it finishes,
/// and no hook starts after this returns either way).
pub fn abandon_thread_hooks(timeout: Duration) -> bool {
    ABANDONED.store(true, Ordering::SeqCst);
    let deadline = std::time::Instant::now().checked_add(timeout);
    while IN_HOOK.load(Ordering::SeqCst) > 0 {
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            return false;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    true
}

/// Abandoned hooks are kept here, never dropped (their drop may run host
/// code), and stay reachable until the process ends.
fn keep_abandoned(hooks: Option<Arc<ThreadHooks>>) {
    static KEPT: Mutex<Vec<Arc<ThreadHooks>>> = Mutex::new(Vec::new());
    if let Some(hooks) = hooks {
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        if !kept.iter().any(|k| Arc::ptr_eq(k, &hooks)) {
            kept.push(hooks);
        }
    }
}

/// Runs one hook unless they were abandoned; whether it ran. Counted in
/// `IN_HOOK` from before the check, so that `abandon_thread_hooks` either
/// is seen here or sees this thread and waits for it.
fn run_hook(hook: &(dyn Fn() + Send + Sync)) -> bool {
    IN_HOOK.fetch_add(1, Ordering::SeqCst);
    let run = !ABANDONED.load(Ordering::SeqCst);
    if run {
        let _ = catch_unwind(AssertUnwindSafe(hook));
    }
    IN_HOOK.fetch_sub(1, Ordering::SeqCst);
    run
}

impl ThreadHookState {
    /// Before each job: catches up with hooks set or changed since the last.
    fn before_job(&mut self) {
        if ABANDONED.load(Ordering::SeqCst) {
            keep_abandoned(self.started.take());
            return;
        }
        let version = HOOKS_VERSION.load(Ordering::SeqCst);
        if version == self.version {
            return;
        }
        self.version = version;
        let current = HOOKS.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let same = match (&current, &self.started) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if same {
            return;
        }
        self.stop();
        if let Some(hooks) = current {
            if run_hook(&*hooks.on_start) {
                self.started = Some(hooks);
            } else {
                keep_abandoned(Some(hooks));
            }
        }
    }

    fn stop(&mut self) {
        if let Some(hooks) = self.started.take() {
            if !run_hook(&*hooks.on_stop) || ABANDONED.load(Ordering::SeqCst) {
                keep_abandoned(Some(hooks));
            }
        }
    }
}

#[cfg(feature = "mcp")]
thread_local! {
    /// On a thread of one of capstan's tokio runtimes (the MCP bridge's):
    /// the hooks it has run. `None` on every other thread, a host's own
    /// thread driving a runtime included.
    static RUNTIME_THREAD: std::cell::RefCell<Option<ThreadHookState>> =
        const { std::cell::RefCell::new(None) };
}

/// For capstan's tokio runtimes, whose threads run host code too (result
/// callbacks and event hooks for calls an MCP server answered): as its
/// `on_thread_start`, `on_thread_unpark` and `on_thread_stop`, they run the
/// thread hooks as a pool thread does (before it first runs tasks, catching
/// up when woken, `on_stop` when it ends).
#[cfg(feature = "mcp")]
pub(crate) mod runtime_thread {
    use super::{ThreadHookState, RUNTIME_THREAD};

    /// Runs `f` on this thread's hook state (none off capstan's runtimes).
    fn with_state(f: impl FnOnce(&mut Option<ThreadHookState>)) {
        let _ = RUNTIME_THREAD.try_with(|t| {
            if let Ok(mut t) = t.try_borrow_mut() {
                f(&mut t);
            }
        });
    }

    pub(crate) fn started() {
        with_state(|t| t.get_or_insert_with(ThreadHookState::default).before_job());
    }

    pub(crate) fn unparked() {
        with_state(|t| t.iter_mut().for_each(ThreadHookState::before_job));
    }

    pub(crate) fn stopping() {
        with_state(|t| t.take().iter_mut().for_each(ThreadHookState::stop));
    }
}

/// Runs one job as pool work.
fn run_job(job: Job, hooks: &mut ThreadHookState) {
    hooks.before_job();
    let was = ON_POOL.try_with(|p| p.replace(true)).unwrap_or(false);
    let _ = catch_unwind(AssertUnwindSafe(job));
    let _ = ON_POOL.try_with(|p| p.set(was));
}

/// How long an idle worker waits for a job before it retires, with `idle`
/// workers idle (itself included): one per core stays long, the rest soon.
fn keep_alive(idle: usize) -> Duration {
    if idle > cores() {
        SURPLUS_KEEP_ALIVE
    } else {
        KEEP_ALIVE
    }
}

fn worker() {
    let mut hooks = ThreadHookState::default();
    let mut st = state();
    loop {
        if st.threads > threads() {
            // The cap was lowered. A job may have been queued for this
            // worker (woken to take it): hand it to the next one.
            if !st.queue.is_empty() {
                WORKERS.work.notify_one();
            }
            break;
        }
        if let Some(job) = st.queue.pop_front() {
            drop(st);
            run_job(job, &mut hooks);
            st = state();
            continue;
        }
        st.idle += 1;
        let keep = keep_alive(st.idle);
        let (guard, waited) = WORKERS
            .work
            .wait_timeout(st, keep)
            .unwrap_or_else(|e| e.into_inner());
        st = guard;
        st.idle -= 1;
        if waited.timed_out() && st.queue.is_empty() {
            break;
        }
    }
    st.threads -= 1;
    drop(st);
    hooks.stop();
}

/// Queues `job`; wakes an idle worker or starts one if none would take it.
/// With `urgent`, a job that would wait (every worker busy, the cap reached)
/// gets a thread of its own instead.
fn submit(job: Job, urgent: bool) {
    let mut st = state();
    if st.queue.len() < st.idle {
        st.queue.push_back(job);
        drop(st);
        WORKERS.work.notify_one();
        return;
    }
    if st.threads >= threads() {
        if urgent {
            drop(st);
            return extra_thread(job);
        }
        st.queue.push_back(job);
        return;
    }
    st.threads += 1;
    st.queue.push_back(job);
    drop(st);
    let started = std::thread::Builder::new()
        .name("capstan".into())
        .spawn(worker);
    if started.is_err() {
        // No thread could start: with no worker at all, run the job here.
        // Work is never lost.
        let mut st = state();
        st.threads -= 1;
        let orphan = (st.threads == 0).then(|| st.queue.pop_back()).flatten();
        drop(st);
        if let Some(job) = orphan {
            run_job(job, &mut ThreadHookState::default());
        }
    }
}

/// A thread of its own for one urgent job while the pool is full.
fn extra_thread(job: Job) {
    let spare = Arc::new(Mutex::new(Some(job)));
    let backup = spare.clone();
    let started = std::thread::Builder::new()
        .name("capstan-extra".into())
        .spawn(move || {
            let job = spare.lock().ok().and_then(|mut s| s.take());
            if let Some(job) = job {
                let mut hooks = ThreadHookState::default();
                run_job(job, &mut hooks);
                hooks.stop();
            }
        });
    if started.is_err() {
        if let Some(job) = backup.lock().ok().and_then(|mut s| s.take()) {
            state().queue.push_back(job);
            WORKERS.work.notify_one();
        }
    }
}

/// Runs `f` on a pool thread, queued while every pool thread is busy.
pub fn spawn(f: impl FnOnce() + Send + 'static) {
    submit(Box::new(f), false);
}

/// Runs `f` on a pool thread, or on a thread of its own if every pool
/// thread is busy. For work that a blocked thread waits for (possibly a pool
/// thread itself), which must never queue behind it.
pub(crate) fn spawn_urgent(f: impl FnOnce() + Send + 'static) {
    submit(Box::new(f), true);
}

/// How many pool threads are alive right now (idle or busy).
pub fn live_threads() -> usize {
    state().threads
}

/// Timers armed and not yet fired or cancelled, process-wide.
static LIVE_TIMERS: AtomicUsize = AtomicUsize::new(0);

/// How many timers (call timeouts, batch deadlines) are armed right now,
/// process-wide. A timer is released when it fires or when what it guards
/// finishes first: a leak check for soak runs and tests.
pub fn live_timers() -> usize {
    LIVE_TIMERS.load(Ordering::SeqCst)
}

/// Counts one armed timer until dropped (with its task, fired or aborted).
struct Armed;

impl Armed {
    fn new() -> Armed {
        LIVE_TIMERS.fetch_add(1, Ordering::SeqCst);
        Armed
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        LIVE_TIMERS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// An armed timer. `cancel` drops it and what it would have run, at once
/// (not at its deadline): a finished call keeps no memory for its timeout.
pub(crate) struct Timer(Option<tokio::task::AbortHandle>);

impl Timer {
    pub(crate) fn cancel(self) {
        if let Some(h) = self.0 {
            h.abort();
        }
    }
}

/// Where a call or a batch keeps its timer, to cancel it if it finishes
/// first. Its finish cancels under the slot's lock, so a timer kept after the
/// finish is cancelled at once instead.
#[derive(Default)]
pub(crate) struct TimerSlot(Mutex<Option<Timer>>);

impl TimerSlot {
    /// Keeps `timer`, unless `done()` (checked under the lock `cancel`
    /// takes): then cancels it.
    pub(crate) fn keep(&self, timer: Timer, done: impl FnOnce() -> bool) {
        let Ok(mut slot) = self.0.lock() else {
            return timer.cancel();
        };
        if done() {
            drop(slot);
            timer.cancel();
        } else {
            *slot = Some(timer);
        }
    }

    /// Cancels the timer kept, if any.
    pub(crate) fn cancel(&self) {
        let timer = self.0.lock().ok().and_then(|mut t| t.take());
        if let Some(timer) = timer {
            timer.cancel();
        }
    }
}

/// Runs `f` after `delay`, unless cancelled first, on a pool thread: the
/// timer thread itself runs no host code (expiring a call delivers its
/// result), and a pool thread runs the thread hooks first. `spawn_urgent`: a
/// timeout fires even when every pool thread is busy (possibly waiting for
/// it).
pub(crate) fn after(delay: Duration, f: impl FnOnce() + Send + 'static) -> Timer {
    let armed = Armed::new();
    match runtime() {
        Ok(rt) => {
            let task = rt.spawn(async move {
                let _armed = armed;
                tokio::time::sleep(delay).await;
                spawn_urgent(f);
            });
            Timer(Some(task.abort_handle()))
        }
        Err(_) => {
            // No timer runtime: a sleeping thread of its own, which hands
            // `f` to the pool like the runtime would.
            std::thread::spawn(move || {
                let _armed = armed;
                std::thread::sleep(delay);
                spawn_urgent(f);
            });
            Timer(None)
        }
    }
}
