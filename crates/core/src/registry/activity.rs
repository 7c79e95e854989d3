//! Host code a registry has under way (tool and result callbacks running,
//! tools not yet destroyed), counted so that `close` can wait for it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::Shared;

pub(crate) struct Activity {
    running: AtomicUsize,
    pub(super) tools: AtomicUsize,
    pub(super) closed: AtomicBool,
    lock: Mutex<()>,
    idle: Condvar,
}

impl Activity {
    pub(super) fn new() -> Activity {
        Activity {
            running: AtomicUsize::new(0),
            tools: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
            lock: Mutex::new(()),
            idle: Condvar::new(),
        }
    }

    fn settle(&self, counter: &AtomicUsize) {
        if counter.fetch_sub(1, Ordering::SeqCst) == 1 && self.closed.load(Ordering::SeqCst) {
            let _guard = self.lock.lock();
            self.idle.notify_all();
        }
    }

    fn is_idle(&self) -> bool {
        self.running.load(Ordering::SeqCst) == 0 && self.tools.load(Ordering::SeqCst) == 0
    }

    /// Waits up to `wait` until nothing runs and every tool is destroyed.
    pub(super) fn wait_idle(&self, wait: Duration) -> bool {
        let deadline = Instant::now().checked_add(wait);
        let Ok(mut guard) = self.lock.lock() else {
            return false;
        };
        while !self.is_idle() {
            let now = Instant::now();
            let slice = match deadline {
                Some(d) if now >= d => return false,
                Some(d) => (d - now).min(Duration::from_millis(100)),
                None => Duration::from_millis(100),
            };
            guard = match self.idle.wait_timeout(guard, slice) {
                Ok((g, _)) => g,
                Err(_) => return false,
            };
        }
        true
    }

    /// What `close` would still wait for, in words.
    pub(super) fn outstanding(&self) -> String {
        let running = self.running.load(Ordering::SeqCst);
        let tools = self.tools.load(Ordering::SeqCst);
        match (running, tools) {
            (0, 0) => "nothing is left (it finished just now)".into(),
            (r, 0) => format!("{r} callback(s) of this registry were still running"),
            (0, t) => {
                format!("{t} tool(s) were not yet destroyed (calls of theirs still in flight)")
            }
            (r, t) => {
                format!("{r} callback(s) were still running and {t} tool(s) were not yet destroyed")
            }
        }
    }
}

/// Counts a tool as alive until it is dropped. The last field of `Tool`, so
/// it drops after the handler (whose drop is the host's destroy).
pub(crate) struct Alive(Arc<Activity>);

impl Alive {
    pub(super) fn new(activity: &Arc<Activity>) -> Alive {
        activity.tools.fetch_add(1, Ordering::SeqCst);
        Alive(activity.clone())
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.settle(&self.0.tools);
    }
}

thread_local! {
    /// Registries whose tool callback is running on this thread, innermost last.
    static IN_CALLBACK: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Shared {
    fn key(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }

    /// Runs host code (a tool or result callback), counted so that `close`
    /// can wait for it.
    pub(crate) fn run_callback(self: &Arc<Self>, f: impl FnOnce()) {
        let key = self.key();
        // try_with: on a thread whose locals are gone (a thread-exit
        // destructor) nesting is not tracked, and the work is simply counted.
        let nested = IN_CALLBACK
            .try_with(|v| {
                v.try_borrow()
                    .map(|v| v.last() == Some(&key))
                    .unwrap_or(false)
            })
            .unwrap_or(false);
        if nested {
            return f(); // already counted, by the worker that runs us
        }
        let activity = &self.activity;
        activity.running.fetch_add(1, Ordering::SeqCst);
        let pushed = IN_CALLBACK
            .try_with(|v| v.try_borrow_mut().map(|mut v| v.push(key)).is_ok())
            .unwrap_or(false);
        let frame = crate::runtime::InCallback::enter();
        f();
        drop(frame);
        if pushed {
            let _ = IN_CALLBACK.try_with(|v| v.try_borrow_mut().map(|mut v| v.pop()));
        }
        activity.settle(&activity.running);
    }

    pub(super) fn in_own_callback(self: &Arc<Self>) -> bool {
        let key = self.key();
        IN_CALLBACK
            .try_with(|v| v.try_borrow().map(|v| v.contains(&key)).unwrap_or(false))
            .unwrap_or(false)
    }
}
