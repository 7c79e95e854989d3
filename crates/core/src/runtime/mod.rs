//! The one owner of capstan's own threads and their process-wide state: the
//! pool that runs host callbacks (`pool`), the timer thread (`timers`), the
//! hooks run on those threads (`hooks`). Everything above (exec, mcp) starts no thread
//! of its own for host code; the MCP bridge's tokio runtimes run its I/O.
//!
//! Nothing here wakes on a tick: a pool thread sleeps until it has a job
//! (or its keep-alive passes), the timer thread until the earliest deadline.

mod hooks;
pub mod pool;
pub(crate) mod timers;

use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use pool::{live_threads, set_thread_hooks, ThreadHooks};
pub use timers::live_timers;

use crate::error::Error;

/// Default cap on pool threads (threads running host callbacks), process-wide.
pub const DEFAULT_THREADS: usize = 256;
/// Default time an idle pool thread waits for work before it retires.
pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(10);

/// How capstan runs its threads, process-wide.
#[derive(Clone, Debug)]
pub struct RuntimeOptions {
    /// At most this many pool threads (0 = `DEFAULT_THREADS`).
    pub threads: usize,
    /// An idle pool thread retires after this long without work (zero =
    /// `DEFAULT_KEEP_ALIVE`). Past one idle thread per core, idle threads
    /// retire after at most 1 s.
    pub keep_alive: Duration,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            threads: DEFAULT_THREADS,
            keep_alive: DEFAULT_KEEP_ALIVE,
        }
    }
}

/// Sets the options in force, at any time, also after threads started.
/// Lowering the cap lets surplus pool threads retire once their current job
/// returns; a shorter keep-alive applies from each idle thread's next wait.
pub fn configure(options: &RuntimeOptions) -> Result<(), Error> {
    let threads = match options.threads {
        0 => DEFAULT_THREADS,
        n => n,
    };
    let keep_alive = match options.keep_alive {
        d if d.is_zero() => DEFAULT_KEEP_ALIVE,
        d => d,
    };
    pool::configure(threads, keep_alive);
    Ok(())
}

/// The options in force.
pub fn options() -> RuntimeOptions {
    RuntimeOptions {
        threads: pool::threads(),
        keep_alive: pool::keep_alive_setting(),
    }
}

/// Something above the runtime that runs threads of its own (the MCP
/// client's connections): `stop` ends and joins them by the deadline, or
/// says what still runs.
pub(crate) type Stop = fn(Option<Instant>) -> Result<(), String>;

static PARTS: Mutex<Vec<Stop>> = Mutex::new(Vec::new());

/// Has `shutdown` stop `stop` too (once, however often this is called).
/// Only the MCP parts register one.
pub fn on_shutdown(stop: Stop) {
    let mut parts = PARTS.lock().unwrap_or_else(|e| e.into_inner());
    if !parts.iter().any(|p| std::ptr::fn_addr_eq(*p, stop)) {
        parts.push(stop);
    }
}

thread_local! {
    /// This thread is one of capstan's own (a pool thread, the timer thread,
    /// a thread of an MCP runtime), for its whole life.
    static OWN_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Host callbacks capstan runs on this thread right now, on any thread.
    static CALLBACKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Marks this thread as one of capstan's own, for its whole life.
pub(crate) fn mark_own_thread() {
    let _ = OWN_THREAD.try_with(|own| own.set(true));
}

/// Counts a host callback (tool, result, approval) running on this thread
/// until dropped: on a host's own thread too, `shutdown` must not wait there.
pub(crate) struct InCallback(bool);

impl InCallback {
    pub(crate) fn enter() -> InCallback {
        InCallback(CALLBACKS.try_with(|n| n.set(n.get() + 1)).is_ok())
    }
}

impl Drop for InCallback {
    fn drop(&mut self) {
        if self.0 {
            let _ = CALLBACKS.try_with(|n| n.set(n.get().saturating_sub(1)));
        }
    }
}

/// True on a thread `shutdown` would wait for: one of capstan's own, or
/// one inside a host callback capstan runs.
fn waited_for_here() -> bool {
    OWN_THREAD.try_with(|own| own.get()).unwrap_or(false)
        || CALLBACKS.try_with(|n| n.get() > 0).unwrap_or(false)
}

/// Ends every thread capstan started and joins it: the MCP client's
/// connection threads (no mount may be left), the timer thread (no timer may
/// be armed: no call with a timeout and no batch with a deadline may still
/// run), the pool threads (they finish the queued work first). Waits up to
/// `timeout` (`None`: no limit) for the work still running; cancels
/// nothing. Err says what still runs. Threads start again on demand: capstan
/// works as before after this, whatever it returned.
///
/// `WrongContext`, at once and doing nothing, on a thread of capstan's or
/// inside a callback capstan runs (a tool, result or hook callback, on any
/// thread): it would wait for itself.
pub fn shutdown(timeout: Option<Duration>) -> Result<(), Error> {
    if waited_for_here() {
        return Err(Error::WrongContext(
            "the runtime shutdown was called from inside a callback capstan runs or on one of \
             capstan's threads; it waits for those threads and callbacks to end, so there it \
             would wait for itself: call it from a host thread outside any callback"
                .into(),
        ));
    }
    let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
    let mut left = Vec::new();
    let parts: Vec<Stop> = PARTS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for stop in parts {
        if let Err(what) = stop(deadline) {
            left.push(what);
        }
    }
    // Pool jobs may arm timers, and timers hand work to the pool: the
    // timers, then the pool, then the timers they armed meanwhile.
    timers::shutdown();
    let busy = pool::shutdown(deadline);
    let armed = timers::shutdown();
    if busy > 0 {
        left.push(format!("{busy} pool thread(s) still run a callback"));
    }
    if armed > 0 {
        left.push(format!(
            "{armed} timer(s) armed: calls with a timeout or batches with a deadline still run"
        ));
    }
    if left.is_empty() {
        Ok(())
    } else {
        Err(Error::Timeout(format!(
            "capstan's threads could not all be stopped: {}",
            left.join("; ")
        )))
    }
}
