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

/// Runs `f` on a pool thread. If the pool cannot start, runs it here: work
/// is never lost.
pub fn spawn(f: impl FnOnce() + Send + 'static) {
    match runtime() {
        Ok(rt) => {
            rt.spawn_blocking(f);
        }
        Err(_) => f(),
    }
}

/// Runs `f` on a pool thread after `delay`.
pub fn after(delay: Duration, f: impl FnOnce() + Send + 'static) {
    match runtime() {
        Ok(rt) => {
            rt.spawn(async move {
                tokio::time::sleep(delay).await;
                // Host code may run in `f`: keep it off the timer thread.
                tokio::task::spawn_blocking(f);
            });
        }
        Err(_) => {
            std::thread::spawn(move || {
                std::thread::sleep(delay);
                f()
            });
        }
    }
}
