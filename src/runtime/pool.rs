//! The process-wide pool: worker threads run host callbacks (timers hand
//! their host work to it, see `timers`).
//!
//! Workers start on demand, when a job finds no idle worker, up to a cap the
//! host may change at any time; a worker idle for a while retires, sooner
//! when more than one per core is idle. Nothing starts before the first job.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

/// Past one idle worker per core, idle workers retire after at most this.
const SURPLUS_KEEP_ALIVE: Duration = Duration::from_secs(1);

/// The cap and the keep-alive in force (0: the defaults, see `runtime`).
static THREADS: AtomicUsize = AtomicUsize::new(0);
static KEEP_ALIVE_MS: AtomicU64 = AtomicU64::new(0);

/// Sets the cap on pool threads and their keep-alive, at any time. Lowering
/// the cap lets surplus workers retire once their current job returns.
pub(crate) fn configure(threads: usize, keep_alive: Duration) {
    THREADS.store(threads.max(1), Ordering::SeqCst);
    KEEP_ALIVE_MS.store(
        u64::try_from(keep_alive.as_millis())
            .unwrap_or(u64::MAX)
            .max(1),
        Ordering::SeqCst,
    );
    // Idle workers over the new cap, or past the new keep-alive, see it now.
    WORKERS.work.notify_all();
}

/// The cap in force.
pub fn threads() -> usize {
    match THREADS.load(Ordering::SeqCst) {
        0 => super::DEFAULT_THREADS,
        n => n,
    }
}

/// The keep-alive in force.
pub(crate) fn keep_alive_setting() -> Duration {
    match KEEP_ALIVE_MS.load(Ordering::SeqCst) {
        0 => super::DEFAULT_KEEP_ALIVE,
        ms => Duration::from_millis(ms),
    }
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
    /// Worker threads not yet ended (`threads` plus those retiring, in
    /// their `on_stop`), and their handles, to join them (`shutdown`).
    running: usize,
    handles: Vec<std::thread::JoinHandle<()>>,
    /// `shutdown` waits: idle workers end now rather than at their keep-alive.
    closing: bool,
}

struct Workers {
    state: Mutex<State>,
    work: Condvar,
    /// Signalled when a worker thread ends (for `shutdown`).
    ended: Condvar,
}

static WORKERS: Workers = Workers {
    state: Mutex::new(State {
        queue: VecDeque::new(),
        idle: 0,
        threads: 0,
        running: 0,
        handles: Vec::new(),
        closing: false,
    }),
    work: Condvar::new(),
    ended: Condvar::new(),
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
/// threads (expired timers run there too) and the MCP bridge's threads.
/// `on_start` runs before the thread's first job (a thread already
/// running when the hooks are set runs it before its next job), `on_stop`
/// when a thread that ran `on_start` retires, or before its next job once
/// the hooks were replaced or removed. A host binding uses them
/// to attach its runtime to capstan's threads. `runtime::shutdown` ends
/// every pool thread (running `on_stop`); threads still alive at process
/// exit run no `on_stop`.
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
    let setting = keep_alive_setting();
    if idle > cores() {
        setting.min(SURPLUS_KEEP_ALIVE)
    } else {
        setting
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
        if st.closing {
            break;
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
    state().running -= 1;
    WORKERS.ended.notify_all();
}

/// Queues `job`; wakes an idle worker or starts one if none would take it.
/// With every worker busy and the cap reached, the job waits for a worker:
/// at the front of the queue if `urgent`, at the back otherwise; with
/// `only_now` it is handed back instead. The cap is never passed.
fn submit(job: Job, urgent: bool, only_now: bool) -> Result<(), Job> {
    let mut st = state();
    if st.queue.len() < st.idle {
        st.queue.push_back(job);
        drop(st);
        WORKERS.work.notify_one();
        return Ok(());
    }
    if st.threads >= threads() {
        if only_now {
            return Err(job);
        }
        if urgent {
            st.queue.push_front(job);
        } else {
            st.queue.push_back(job);
        }
        return Ok(());
    }
    st.threads += 1;
    st.running += 1;
    st.queue.push_back(job);
    // Threads that ended are joined here, not kept until `shutdown`.
    let ended: Vec<_> = {
        let (done, alive) = std::mem::take(&mut st.handles)
            .into_iter()
            .partition(|h| h.is_finished());
        st.handles = alive;
        done
    };
    drop(st);
    for handle in ended {
        let _ = handle.join();
    }
    let started = std::thread::Builder::new()
        .name("capstan".into())
        .spawn(worker);
    if let Ok(handle) = started {
        state().handles.push(handle);
    } else {
        state().running -= 1;
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
    Ok(())
}

/// Runs `f` on a pool thread, queued while every pool thread is busy.
pub fn spawn(f: impl FnOnce() + Send + 'static) {
    let _ = submit(Box::new(f), false, false);
}

/// Runs `f` on a pool thread, ahead of the jobs already queued: work that
/// a blocked thread waits for, or a result past its deadline.
pub(crate) fn spawn_urgent(f: impl FnOnce() + Send + 'static) {
    let _ = submit(Box::new(f), true, false);
}

/// Runs `f` on a pool thread if one is idle or may start now, else on this
/// thread (the timer thread's way out when every pool thread is busy,
/// possibly waiting for `f`).
pub(crate) fn spawn_or_run_here(f: impl FnOnce() + Send + 'static) {
    if let Err(f) = try_spawn(Box::new(f)) {
        f();
    }
}

/// Runs `f` on a pool thread if one is idle or may start now; otherwise
/// hands it back (every pool thread is busy and the cap is reached).
pub(crate) fn try_spawn(f: Box<dyn FnOnce() + Send>) -> Result<(), Box<dyn FnOnce() + Send>> {
    submit(f, true, true)
}

/// Ends every pool thread: idle ones at once, busy ones once the queue is
/// empty and their job returned; joins them. Waits until `deadline`
/// (`None`: no limit); how many threads were still running a job then (0:
/// none is left). The pool starts threads again for the next job.
pub(crate) fn shutdown(deadline: Option<std::time::Instant>) -> usize {
    let mut st = state();
    st.closing = true;
    WORKERS.work.notify_all();
    while st.running > 0 {
        let wait = match deadline {
            None => Duration::from_secs(3600),
            Some(d) => match d.checked_duration_since(std::time::Instant::now()) {
                Some(w) if !w.is_zero() => w,
                _ => break,
            },
        };
        st = WORKERS
            .ended
            .wait_timeout(st, wait)
            .map(|(g, _)| g)
            .unwrap_or_else(|e| e.into_inner().0);
    }
    st.closing = false;
    let left = st.running;
    let (done, alive): (Vec<_>, Vec<_>) = std::mem::take(&mut st.handles)
        .into_iter()
        .partition(|h| h.is_finished() || left == 0);
    st.handles = alive;
    drop(st);
    for handle in done {
        let _ = handle.join();
    }
    left
}

/// How many pool threads are alive right now (idle or busy).
pub fn live_threads() -> usize {
    state().threads
}
