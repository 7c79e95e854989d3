//! Caller-runs: a batch starts on the thread that runs it, and pool workers
//! join in only when some of its calls are still waiting to start after
//! `JOIN_AFTER` (its calls are slow, or one blocks its thread). Trivially
//! fast batches then cost no thread hand-off at all, and slow ones still fan
//! out to their limit within about `JOIN_AFTER` plus one tick.
//!
//! One watcher thread checks the batches it was given every `TICK` while it
//! has any, and for `LINGER` after, so back-to-back batches wake no one; then
//! it sleeps until the next batch arrives.

use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use super::batch::BatchInner;

/// How long a batch's own thread works alone before helpers are called in.
/// A trivial call costs about 1 us, so a batch that needs no help is done by
/// then; a 20 ms tool delays its siblings by at most this plus a tick.
pub(crate) const JOIN_AFTER: Duration = Duration::from_micros(50);
/// Each tick costs the watcher a few microseconds of CPU: at 50 us that is
/// a few percent of one core while batches run, and nothing when idle.
const TICK: Duration = Duration::from_micros(50);
const LINGER: Duration = Duration::from_millis(5);

struct Watched {
    /// A submitted batch is held: nothing else may keep it alive until its
    /// calls start (the host may free its handle at once). An executed one
    /// is not: its caller holds it, and must see it freed when it returns.
    batch: Held,
    due: Instant,
}

#[derive(Clone)]
enum Held {
    Strong(Arc<BatchInner>),
    Weak(Weak<BatchInner>),
}

#[derive(Default)]
struct List {
    batches: Vec<Watched>,
    parked: bool,
}

struct Watch {
    list: Mutex<List>,
    wake: Condvar,
}

static WATCH: Watch = Watch {
    list: Mutex::new(List {
        batches: Vec::new(),
        parked: false,
    }),
    wake: Condvar::new(),
};

fn started() -> bool {
    static STARTED: OnceLock<bool> = OnceLock::new();
    *STARTED.get_or_init(|| {
        std::thread::Builder::new()
            .name("capstan-join".into())
            .spawn(watcher)
            .is_ok()
    })
}

/// Calls in helpers for `batch` if it still has calls waiting to start
/// `after` from now (at the watcher's next tick if sooner).
pub(crate) fn watch(batch: &Arc<BatchInner>, after: Duration, hold: bool) {
    if !started() {
        return batch.call_helpers();
    }
    let due = Instant::now() + after;
    let mut list = WATCH.list.lock().unwrap_or_else(|e| e.into_inner());
    list.batches.push(Watched {
        batch: if hold {
            Held::Strong(batch.clone())
        } else {
            Held::Weak(Arc::downgrade(batch))
        },
        due,
    });
    let parked = std::mem::replace(&mut list.parked, false);
    drop(list);
    if parked {
        WATCH.wake.notify_one();
    }
}

fn watcher() {
    // Sleep the tick itself, not the default 50 us of timer slack on top.
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and changes only this
    // thread's timer slack.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong)
    };
    let mut last_busy = Instant::now();
    let mut due = Vec::new();
    loop {
        let mut list = WATCH.list.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if list.batches.is_empty() {
            if now.duration_since(last_busy) > LINGER {
                list.parked = true;
                while list.parked {
                    list = WATCH.wake.wait(list).unwrap_or_else(|e| e.into_inner());
                }
                last_busy = Instant::now();
                continue;
            }
        } else {
            last_busy = now;
            list.batches.retain(|w| {
                if w.due <= now {
                    due.push(w.batch.clone());
                    false
                } else {
                    true
                }
            });
        }
        drop(list);
        for batch in due.drain(..) {
            let batch = match batch {
                Held::Strong(b) => Some(b),
                Held::Weak(w) => w.upgrade(),
            };
            if let Some(batch) = batch {
                batch.call_helpers();
            }
        }
        std::thread::sleep(TICK);
    }
}
