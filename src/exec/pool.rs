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
    ON_POOL.with(|p| p.get())
}

fn pool_work(f: impl FnOnce() + Send + 'static) -> impl FnOnce() + Send + 'static {
    move || {
        BUSY.fetch_add(1, Ordering::SeqCst);
        let was = ON_POOL.with(|p| p.replace(true));
        f();
        ON_POOL.with(|p| p.set(was));
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

/// Runs `f` after `delay`, on capstan's expiry thread.
pub fn after(delay: Duration, f: impl FnOnce() + Send + 'static) {
    let sender = expiry_thread();
    match (runtime(), sender) {
        (Ok(rt), Some(tx)) => {
            let tx = tx.clone();
            rt.spawn(async move {
                tokio::time::sleep(delay).await;
                let _ = tx.send(Box::new(f));
            });
        }
        _ => {
            std::thread::spawn(move || {
                std::thread::sleep(delay);
                f()
            });
        }
    }
}
