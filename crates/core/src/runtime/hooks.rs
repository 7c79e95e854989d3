//! The thread hooks: a host's start/stop hooks, run on every thread of
//! capstan's that runs host code (the pool's workers, the MCP bridge's
//! runtime threads), and given up for good by `abandon_thread_hooks`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
pub(crate) struct ThreadHookState {
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
    pub(crate) fn before_job(&mut self) {
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

    pub(crate) fn stop(&mut self) {
        if let Some(hooks) = self.started.take() {
            if !run_hook(&*hooks.on_stop) || ABANDONED.load(Ordering::SeqCst) {
                keep_abandoned(Some(hooks));
            }
        }
    }
}

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
pub mod runtime_thread {
    use super::{ThreadHookState, RUNTIME_THREAD};

    /// Runs `f` on this thread's hook state (none off capstan's runtimes).
    fn with_state(f: impl FnOnce(&mut Option<ThreadHookState>)) {
        let _ = RUNTIME_THREAD.try_with(|t| {
            if let Ok(mut t) = t.try_borrow_mut() {
                f(&mut t);
            }
        });
    }

    pub fn started() {
        crate::runtime::mark_own_thread();
        block_sigpipe();
        with_state(|t| t.get_or_insert_with(ThreadHookState::default).before_job());
    }

    /// capstan's MCP threads write to sockets and pipes whose peer may have
    /// gone (a client that closed its connection, a server process that
    /// exited): such a write raises SIGPIPE, whose default kills the
    /// process, and C hosts rarely ignore it (Rust and Python programs do).
    /// The signal goes to the thread that wrote, so these threads block it:
    /// the write fails with EPIPE instead, and the host's own threads keep
    /// its disposition. (tokio's vectored writes, `writev`, cannot ask for
    /// `MSG_NOSIGNAL` as its plain writes do.)
    pub fn block_sigpipe() {
        #[cfg(unix)]
        // SAFETY: a signal set on the stack, filled by libc before use;
        // pthread_sigmask changes only this thread's mask.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
    }

    #[cfg(all(test, unix))]
    mod tests {
        /// A thread capstan's MCP runtimes start blocks SIGPIPE; another
        /// keeps its mask.
        #[test]
        fn an_mcp_runtime_thread_blocks_sigpipe_and_others_do_not() {
            fn blocked() -> bool {
                // SAFETY: reads this thread's mask into a set on the stack.
                unsafe {
                    let mut set: libc::sigset_t = std::mem::zeroed();
                    libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut set);
                    libc::sigismember(&set, libc::SIGPIPE) == 1
                }
            }
            let other = std::thread::spawn(blocked).join().unwrap_or(true);
            assert!(!other);
            let runtime = std::thread::spawn(|| {
                super::started();
                let b = blocked();
                super::stopping();
                b
            });
            assert!(runtime.join().unwrap_or(false));
        }
    }

    pub fn unparked() {
        with_state(|t| t.iter_mut().for_each(ThreadHookState::before_job));
    }

    pub fn stopping() {
        with_state(|t| t.take().iter_mut().for_each(ThreadHookState::stop));
    }
}
