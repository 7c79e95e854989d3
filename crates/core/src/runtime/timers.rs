//! Timers: call timeouts, batch deadlines and the moment pool workers join
//! a batch (see `join`), on one thread that sleeps until the earliest
//! deadline.
//!
//! Nothing ticks: the thread sleeps with no time limit while no timer is
//! armed (idle costs no wake-up), and otherwise until the earliest
//! deadline. Arming a timer wakes it only when the new deadline comes
//! before the one it sleeps for; cancelling never wakes it (it finds
//! nothing due when it wakes, at most once per cancelled timer).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

type Job = Box<dyn FnOnce() + Send>;

/// A timer's place in the queue: its deadline, then the order of arming.
type Key = (Instant, u64);

struct Queue {
    due: BTreeMap<Key, Entry>,
    next_id: u64,
    /// What the timer thread sleeps until right now: `Some(None)` with no
    /// time limit, `None` while it is awake (it looks at the queue before
    /// it sleeps again, so an arming thread need not wake it).
    sleeping: Option<Option<Instant>>,
    /// The timer thread, while one runs; `shutdown` bumps `epoch` to end it.
    thread: Option<std::thread::JoinHandle<()>>,
    epoch: u64,
}

struct Entry {
    job: Job,
    _armed: Armed,
}

struct Timers {
    queue: Mutex<Queue>,
    wake: Condvar,
}

static TIMERS: Timers = Timers {
    queue: Mutex::new(Queue {
        due: BTreeMap::new(),
        next_id: 0,
        sleeping: None,
        thread: None,
        epoch: 0,
    }),
    wake: Condvar::new(),
};

/// The queue's lock guards only deadlines and jobs not yet run (no job runs
/// under it), so a poisoned lock still holds consistent data.
fn queue() -> MutexGuard<'static, Queue> {
    TIMERS.queue.lock().unwrap_or_else(|e| e.into_inner())
}

/// Timers armed and not yet fired or cancelled, process-wide.
static LIVE_TIMERS: AtomicUsize = AtomicUsize::new(0);

/// How many timers (call timeouts, batch deadlines, pending joins) are
/// armed right now, process-wide. A timer is released when it fires or when
/// what it guards finishes first: a leak check for soak runs and tests.
pub fn live_timers() -> usize {
    LIVE_TIMERS.load(Ordering::SeqCst)
}

/// Counts one armed timer until dropped (fired or cancelled).
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

/// Starts the timer thread unless one runs; false if it could not start.
fn ensure_thread(q: &mut Queue) -> bool {
    if q.thread.is_some() {
        return true;
    }
    let epoch = q.epoch;
    match std::thread::Builder::new()
        .name("capstan-timer".into())
        .spawn(move || timer_thread(epoch))
    {
        Ok(handle) => {
            q.thread = Some(handle);
            q.sleeping = None;
            true
        }
        Err(_) => false,
    }
}

/// Ends the timer thread and joins it, unless a timer is armed: then how
/// many are (their calls or batches still run; the thread keeps running).
/// The next timer starts the thread again.
pub(crate) fn shutdown() -> usize {
    let mut q = queue();
    if !q.due.is_empty() {
        return q.due.len();
    }
    q.epoch += 1;
    let handle = q.thread.take();
    drop(q);
    TIMERS.wake.notify_all();
    if let Some(handle) = handle {
        let _ = handle.join();
    }
    0
}

/// An armed timer. `cancel` drops it and what it would have run, at once
/// (not at its deadline): a finished call keeps no memory for its timeout.
pub(crate) struct Timer(Option<Key>);

impl Timer {
    pub(crate) fn cancel(self) {
        if let Some(key) = self.0 {
            let entry = queue().due.remove(&key);
            drop(entry); // its job may hold the last reference to a batch
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
        } else if let Some(old) = slot.replace(timer) {
            drop(slot);
            old.cancel();
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

/// Runs `job` on the timer thread after `delay`, unless cancelled first.
/// The job must be short and run no host code: it hands such work to the
/// pool (`pool::spawn_urgent`).
pub(crate) fn after(delay: Duration, job: impl FnOnce() + Send + 'static) -> Timer {
    let armed = Armed::new();
    let at = Instant::now() + delay;
    let mut q = queue();
    if !ensure_thread(&mut q) {
        // No thread could start: the job runs now rather than never (a
        // timeout then fires early; work is never lost).
        drop(q);
        drop(armed);
        job();
        return Timer(None);
    }
    let key = (at, q.next_id);
    q.next_id += 1;
    q.due.insert(
        key,
        Entry {
            job: Box::new(job),
            _armed: armed,
        },
    );
    // Wake the thread only if it sleeps past the new deadline.
    let wake = match q.sleeping {
        Some(None) => true,
        Some(Some(until)) => at < until,
        None => false,
    };
    if wake {
        q.sleeping = None;
    }
    drop(q);
    if wake {
        TIMERS.wake.notify_one();
    }
    Timer(Some(key))
}

fn timer_thread(epoch: u64) {
    super::mark_own_thread();
    // The join delay is 50 us: Linux's default 50 us of timer slack would
    // double it. Sleeps here end at a deadline, never on a tick.
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and changes only this
    // thread's timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong);
    }
    let mut q = queue();
    loop {
        if q.epoch != epoch {
            return; // `shutdown` ended this thread (it has no timer armed)
        }
        let now = Instant::now();
        let first = q.due.first_key_value().map(|(k, _)| k.0);
        match first {
            Some(at) if at <= now => {
                if let Some((_, entry)) = q.due.pop_first() {
                    drop(q);
                    let Entry { job, _armed } = entry;
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    drop(_armed);
                    q = queue();
                }
            }
            Some(at) => {
                q.sleeping = Some(Some(at));
                q = TIMERS
                    .wake
                    .wait_timeout(q, at - now)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|e| e.into_inner().0);
                q.sleeping = None;
            }
            None => {
                q.sleeping = Some(None);
                q = TIMERS.wake.wait(q).unwrap_or_else(|e| e.into_inner());
                q.sleeping = None;
            }
        }
    }
}
