//! The pool's threads: a cap the host may change at any time, and start/stop
//! hooks on every pool thread. Its own test binary: both are process-wide.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "common/wait.rs"]
mod wait;

use capstan::runtime::pool::{self, ThreadHooks};
use capstan::{execute, CallRequest, ExecOptions, Outcome, Registry, ToolDef, ToolFlags};
use serde_json::json;

thread_local! {
    static HOOKED: Cell<bool> = const { Cell::new(false) };
}

static STARTS: AtomicUsize = AtomicUsize::new(0);
static STOPS: AtomicUsize = AtomicUsize::new(0);

/// A tool whose calls wait (up to `patience`) until `want` of them run at once, and
/// record the most that ran at once and any pool thread that ran one before
/// its start hook.
struct Gather {
    inside: AtomicUsize,
    most: AtomicUsize,
    unhooked: AtomicUsize,
}

fn gather(reg: &Registry, name: &str, want: usize, patience: Duration) -> Arc<Gather> {
    let g = Arc::new(Gather {
        inside: AtomicUsize::new(0),
        most: AtomicUsize::new(0),
        unhooked: AtomicUsize::new(0),
    });
    let tool = g.clone();
    reg.register(ToolDef {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(move |c: capstan::Call| {
            let g = &tool;
            let on_pool = std::thread::current()
                .name()
                .is_some_and(|n| n.starts_with("capstan"));
            if on_pool && !HOOKED.with(|h| h.get()) {
                g.unhooked.fetch_add(1, Ordering::SeqCst);
            }
            let now = g.inside.fetch_add(1, Ordering::SeqCst) + 1;
            g.most.fetch_max(now, Ordering::SeqCst);
            let until = Instant::now() + patience;
            while g.most.load(Ordering::SeqCst) < want && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(1));
            }
            g.inside.fetch_sub(1, Ordering::SeqCst);
            c.complete_text("ok").unwrap();
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    })
    .unwrap();
    g
}

fn run(reg: &Registry, tool: &str, n: usize) {
    let calls: Vec<_> = (0..n)
        .map(|i| CallRequest::new(i.to_string(), tool, json!({})))
        .collect();
    let options = ExecOptions {
        limit: n,
        ..ExecOptions::default()
    };
    let results = execute(reg, calls, &options);
    assert!(
        results.iter().all(|r| r.outcome == Outcome::Ok),
        "{results:?}"
    );
}

fn eventually(what: &str, cond: impl Fn() -> bool) {
    assert!(wait::eventually(Duration::from_secs(10), cond), "{what}");
}

#[test]
fn cap_changes_after_the_first_call_and_hooks_bracket_every_pool_thread() {
    pool::set_thread_hooks(Some(ThreadHooks {
        on_start: Box::new(|| {
            HOOKED.with(|h| h.set(true));
            STARTS.fetch_add(1, Ordering::SeqCst);
        }),
        on_stop: Box::new(|| {
            HOOKED.with(|h| h.set(false));
            STOPS.fetch_add(1, Ordering::SeqCst);
        }),
    }));
    let reg = Registry::default();

    // Cap 1: the calling thread and one pool thread run the calls.
    capstan::runtime::configure(&capstan::runtime::RuntimeOptions {
        threads: 1,
        ..Default::default()
    })
    .unwrap();
    let narrow = gather(&reg, "narrow", 3, Duration::from_millis(300));
    run(&reg, "narrow", 4);
    assert!(
        narrow.most.load(Ordering::SeqCst) <= 2,
        "with a cap of 1, at most the caller and one pool thread run calls"
    );

    // Raised after the pool started: five calls now run at once.
    capstan::runtime::configure(&capstan::runtime::RuntimeOptions {
        threads: 8,
        ..Default::default()
    })
    .unwrap();
    let wide = gather(&reg, "wide", 5, Duration::from_secs(5));
    run(&reg, "wide", 5);
    assert_eq!(
        wide.most.load(Ordering::SeqCst),
        5,
        "the raised cap applies"
    );
    assert_eq!(
        narrow.unhooked.load(Ordering::SeqCst) + wide.unhooked.load(Ordering::SeqCst),
        0,
        "every pool thread ran on_start before its first callback"
    );
    assert!(STARTS.load(Ordering::SeqCst) >= 4);
    assert!(
        pool::live_threads() >= 2,
        "idle pool threads stay a while: {} alive",
        pool::live_threads()
    );

    // Lowered again: idle threads over the cap retire, running on_stop.
    capstan::runtime::configure(&capstan::runtime::RuntimeOptions {
        threads: 1,
        ..Default::default()
    })
    .unwrap();
    eventually("threads over the cap retire", || pool::live_threads() <= 1);
    eventually("retired threads ran on_stop", || {
        STOPS.load(Ordering::SeqCst) + 1 >= STARTS.load(Ordering::SeqCst)
    });

    // Removed: the thread left runs on_stop before its next job (or when it
    // retires), and no new start runs.
    pool::set_thread_hooks(None);
    let starts = STARTS.load(Ordering::SeqCst);
    gather(&reg, "pair", 2, Duration::from_secs(5));
    run(&reg, "pair", 2);
    eventually("every thread that started stopped", || {
        STOPS.load(Ordering::SeqCst) == STARTS.load(Ordering::SeqCst)
    });
    assert_eq!(STARTS.load(Ordering::SeqCst), starts);
    assert!(reg.close(Duration::from_secs(5)));
}
