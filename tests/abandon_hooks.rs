//! `abandon_thread_hooks`: a host runtime that is going away (the Python
//! binding at interpreter exit) stops every thread hook for good. Alone in
//! its binary: the hooks, the pool and the abandonment are process-wide.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use capstan::runtime::pool::{self, ThreadHooks};
use capstan::{submit, CallRequest, ExecOptions, Registry, Sink, ToolDef, ToolFlags};
use serde_json::json;

#[path = "common/wait.rs"]
mod wait;
use wait::eventually;

const PATIENCE: Duration = Duration::from_secs(30);

/// Sets its flag when dropped: hooks dropped after abandonment would run
/// host code (a binding's destroy) into a runtime that is gone.
struct Dropped(Arc<AtomicBool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

static RUNS: AtomicUsize = AtomicUsize::new(0);
static BLOCK: AtomicBool = AtomicBool::new(false);
static INSIDE: AtomicBool = AtomicBool::new(false);

/// Hooks that count their runs; `on_start` holds its thread while `BLOCK`
/// is set. Dropping them sets the returned flag.
fn hooks() -> (ThreadHooks, Arc<AtomicBool>) {
    let dropped = Arc::new(AtomicBool::new(false));
    let guard = Dropped(dropped.clone());
    let hooks = ThreadHooks {
        on_start: Box::new(move || {
            let _ = &guard;
            RUNS.fetch_add(1, Ordering::SeqCst);
            INSIDE.store(true, Ordering::SeqCst);
            eventually(PATIENCE, || !BLOCK.load(Ordering::SeqCst));
            INSIDE.store(false, Ordering::SeqCst);
        }),
        on_stop: Box::new(|| {
            RUNS.fetch_add(1, Ordering::SeqCst);
        }),
    };
    (hooks, dropped)
}

/// Runs one call on the pool (the submitting thread only watches).
fn run_on_pool(reg: &Registry) {
    let batch = submit(
        reg,
        vec![CallRequest::new("1", "noop", json!({}))],
        &ExecOptions::default(),
        Sink::Queue,
        None,
    );
    assert!(batch.wait(Some(PATIENCE)));
}

#[test]
fn abandoned_hooks_wait_for_a_thread_inside_one_then_never_run_nor_drop() {
    // One pool thread: every pool job catches it up with the hooks.
    capstan::runtime::configure(&capstan::runtime::RuntimeOptions {
        threads: 1,
        ..Default::default()
    })
    .unwrap();
    let reg = Registry::default();
    reg.register(ToolDef {
        name: "noop".into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(|call: capstan::Call| call.complete_text("ok").unwrap()),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    })
    .unwrap();

    let (first, first_dropped) = hooks();
    pool::set_thread_hooks(Some(first));
    run_on_pool(&reg);
    assert!(
        RUNS.load(Ordering::SeqCst) >= 1,
        "the pool thread ran on_start"
    );
    // Replaced, and the pool thread stopped them: the first hooks go.
    let (second, second_dropped) = hooks();
    BLOCK.store(true, Ordering::SeqCst);
    pool::set_thread_hooks(Some(second));
    let reg2 = Arc::new(reg);
    let runner = {
        let reg = reg2.clone();
        std::thread::spawn(move || run_on_pool(&reg))
    };
    assert!(
        eventually(PATIENCE, || INSIDE.load(Ordering::SeqCst)),
        "the pool thread entered the second on_start"
    );
    assert!(
        eventually(PATIENCE, || first_dropped.load(Ordering::SeqCst)),
        "hooks replaced and stopped on every thread are dropped"
    );

    // A thread is inside a hook: abandoning waits for it, up to its limit.
    assert!(!pool::abandon_thread_hooks(Duration::from_millis(50)));
    let releaser = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(100));
        BLOCK.store(false, Ordering::SeqCst);
    });
    assert!(
        pool::abandon_thread_hooks(PATIENCE),
        "once the thread left the hook, abandoning is complete"
    );
    assert!(!INSIDE.load(Ordering::SeqCst));
    releaser.join().unwrap();
    runner.join().unwrap();

    // From now on no hook runs: not the abandoned ones' on_stop, not new
    // hooks' on_start, on old or new threads. And none is dropped.
    let runs = RUNS.load(Ordering::SeqCst);
    let (third, third_dropped) = hooks();
    pool::set_thread_hooks(Some(third));
    capstan::runtime::configure(&capstan::runtime::RuntimeOptions {
        threads: 4,
        ..Default::default()
    })
    .unwrap();
    for _ in 0..10 {
        run_on_pool(&reg2);
    }
    pool::set_thread_hooks(None);
    run_on_pool(&reg2);
    assert_eq!(
        RUNS.load(Ordering::SeqCst),
        runs,
        "a hook ran after abandonment"
    );
    assert!(
        !second_dropped.load(Ordering::SeqCst),
        "abandoned hooks were dropped"
    );
    assert!(
        !third_dropped.load(Ordering::SeqCst),
        "hooks set after abandonment were dropped"
    );
}
