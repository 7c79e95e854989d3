//! The process-wide pool: worker threads run host callbacks (timers hand
//! their host work to it, see `timers`; each worker runs the thread hooks,
//! see `hooks`).
//!
//! Workers start on demand, when a job finds no idle worker, up to a cap the
//! host may change at any time; a worker idle for a while retires, sooner
//! when more than one per core is idle. Nothing starts before the first job.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

#[doc(hidden)]
pub use super::hooks::runtime_thread;
use super::hooks::ThreadHookState;
pub use super::hooks::{abandon_thread_hooks, set_thread_hooks, ThreadHooks};

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
    super::mark_own_thread();
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
