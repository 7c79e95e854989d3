//! The process-wide pool: tokio's blocking threads run host callbacks, one
//! small runtime thread runs the timers. Started lazily, sized once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use tokio::runtime::{Builder, Runtime};

use crate::error::Error;

/// Default cap on threads running tool callbacks at once, process-wide.
pub const DEFAULT_THREADS: usize = 256;

static THREADS: AtomicUsize = AtomicUsize::new(0);
static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// Sets how many threads may run tool callbacks at once. Only before the pool
/// starts (the first parallel call starts it).
pub fn configure(threads: usize) -> Result<(), Error> {
    if threads == 0 {
        return Err(Error::InvalidArgument(
            "pool threads must be at least 1".into(),
        ));
    }
    if RUNTIME.get().is_some() {
        return Err(Error::WrongContext(
            "the pool has already started; configure it before the first call".into(),
        ));
    }
    THREADS.store(threads, Ordering::SeqCst);
    Ok(())
}

/// The cap in force (or that will be when the pool starts).
pub fn threads() -> usize {
    match THREADS.load(Ordering::SeqCst) {
        0 => DEFAULT_THREADS,
        n => n,
    }
}

fn runtime() -> Result<&'static Runtime, Error> {
    RUNTIME
        .get_or_init(|| {
            Builder::new_multi_thread()
                .worker_threads(1)
                .max_blocking_threads(threads())
                .thread_name("capstan")
                .enable_time()
                .build()
                .map_err(|e| format!("cannot start the capstan pool: {e}"))
        })
        .as_ref()
        .map_err(|e| Error::Internal(e.clone()))
}

static BUSY: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static ON_POOL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True on a thread running pool work.
pub(crate) fn on_pool_thread() -> bool {
    ON_POOL.try_with(|p| p.get()).unwrap_or(false)
}

/// Host code run on pool threads: `on_start` on each pool thread before its
/// first callback, `on_stop` when a thread that ran `on_start` retires.
pub struct ThreadHooks {
    pub on_start: Box<dyn Fn() + Send + Sync>,
    pub on_stop: Box<dyn Fn() + Send + Sync>,
}

// TEMPORARY (python branch): thread hooks over today's tokio pool, replaced
// at merge by the new pool's implementation of the same signature.
static HOOKS: std::sync::RwLock<Option<std::sync::Arc<ThreadHooks>>> = std::sync::RwLock::new(None);

thread_local! {
    static STARTED: std::cell::RefCell<Option<Started>> = const { std::cell::RefCell::new(None) };
}

/// The hooks whose `on_start` ran on this thread; their `on_stop` runs when
/// this drops: when the thread exits, or before the next hooks' `on_start`.
struct Started(std::sync::Arc<ThreadHooks>);

impl Drop for Started {
    fn drop(&mut self) {
        let stop = &self.0.on_stop;
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(stop));
    }
}

/// Sets (None: clears) the hooks, process-wide. Threads that ran the previous
/// `on_start` run the previous `on_stop` when they retire or before they run
/// the new `on_start`; the previous hooks drop after the last such `on_stop`.
pub fn set_thread_hooks(hooks: Option<ThreadHooks>) {
    let new = hooks.map(std::sync::Arc::new);
    let old = match HOOKS.write() {
        Ok(mut h) => std::mem::replace(&mut *h, new),
        Err(poisoned) => std::mem::replace(&mut *poisoned.into_inner(), new),
    };
    drop(old); // outside the lock: may run the host's destroy
}

/// Runs the hooks' `on_start` on this pool thread if it has not run yet
/// (and the `on_stop` of hooks it ran before, if they were replaced).
fn start_thread_hooks() {
    let current = match HOOKS.read() {
        Ok(h) => h.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    let stale = STARTED.try_with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            return None; // inside this thread's own hook
        };
        match (&*s, &current) {
            (Some(started), Some(now)) if std::sync::Arc::ptr_eq(&started.0, now) => None,
            (None, None) => None,
            _ => Some(s.take()),
        }
    });
    let Ok(Some(previous)) = stale else { return };
    drop(previous); // its on_stop, outside the borrow
    if let Some(hooks) = current {
        let start = &hooks.on_start;
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(start));
        let _ = STARTED.try_with(|s| *s.borrow_mut() = Some(Started(hooks)));
    }
}

fn pool_work(f: impl FnOnce() + Send + 'static) -> impl FnOnce() + Send + 'static {
    move || {
        start_thread_hooks();
        BUSY.fetch_add(1, Ordering::SeqCst);
        let was = ON_POOL.try_with(|p| p.replace(true)).unwrap_or(false);
        f();
        let _ = ON_POOL.try_with(|p| p.set(was));
        BUSY.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Runs `f` on a pool thread, queued while every pool thread is busy. If the
/// pool cannot start, runs it here: work is never lost.
pub fn spawn(f: impl FnOnce() + Send + 'static) {
    match runtime() {
        Ok(rt) => {
            rt.spawn_blocking(pool_work(f));
        }
        Err(_) => f(),
    }
}

/// Runs `f` on a pool thread, or on a thread of its own if every pool
/// thread is busy. For work that a blocked thread waits for (possibly a pool
/// thread itself), which must never queue behind it.
pub(crate) fn spawn_urgent(f: impl FnOnce() + Send + 'static) {
    if BUSY.load(Ordering::SeqCst) < threads() {
        return spawn(f);
    }
    let work = pool_work(f);
    let spare = std::sync::Arc::new(std::sync::Mutex::new(Some(work)));
    let backup = spare.clone();
    let started = std::thread::Builder::new()
        .name("capstan-extra".into())
        .spawn(move || {
            if let Some(w) = spare.lock().ok().and_then(|mut s| s.take()) {
                w();
            }
        });
    if started.is_err() {
        if let Some(w) = backup.lock().ok().and_then(|mut s| s.take()) {
            spawn(w);
        }
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// The thread that runs expired timers. Not a pool thread: a timeout must
/// fire even when every pool thread is busy (possibly waiting for it), and
/// not the timer thread itself, because expiring a call runs host code.
fn expiry_thread() -> Option<&'static std::sync::mpsc::Sender<Job>> {
    static SENDER: OnceLock<Option<std::sync::mpsc::Sender<Job>>> = OnceLock::new();
    SENDER
        .get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("capstan-expiry".into())
                .spawn(move || {
                    for job in rx {
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    }
                })
                .ok()
                .map(|_| tx)
        })
        .as_ref()
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

/// Runs `f` after `delay`, on capstan's expiry thread, unless cancelled first.
pub(crate) fn after(delay: Duration, f: impl FnOnce() + Send + 'static) -> Timer {
    let sender = expiry_thread();
    let armed = Armed::new();
    match (runtime(), sender) {
        (Ok(rt), Some(tx)) => {
            let tx = tx.clone();
            let task = rt.spawn(async move {
                let _armed = armed;
                tokio::time::sleep(delay).await;
                let _ = tx.send(Box::new(f));
            });
            Timer(Some(task.abort_handle()))
        }
        _ => {
            std::thread::spawn(move || {
                let _armed = armed;
                std::thread::sleep(delay);
                f()
            });
            Timer(None)
        }
    }
}
