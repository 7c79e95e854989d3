//! Host code that capstan's timers lead to (the result of a call that timed
//! out, of a batch whose deadline passed) runs on a pool thread, which ran
//! the thread hooks' `on_start`, never on the timer thread itself. Its own
//! test binary: the hooks are process-wide.

use std::cell::Cell;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capstan::runtime::pool::{self, ThreadHooks};
use capstan::{submit, Call, CallRequest, ExecOptions, Outcome, Registry, Sink, ToolDef};
use serde_json::json;

thread_local! {
    static HOOKED: Cell<bool> = const { Cell::new(false) };
}

/// Where each result was delivered: (outcome, thread name, hooked).
type Seen = Arc<Mutex<Vec<(Outcome, String, bool)>>>;

/// A tool that returns without completing its call (kept in `held`): only a
/// timer can end it.
fn never_completes(reg: &Registry, timeout_ms: u32, held: &Arc<Mutex<Vec<Call>>>) {
    let held = held.clone();
    reg.register(ToolDef {
        name: "hang".into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(move |c: Call| held.lock().unwrap().push(c)),
        timeout_ms,
        max_output_chars: 0,
        flags: Default::default(),
    })
    .unwrap();
}

fn run(reg: &Registry, options: ExecOptions) -> Vec<(Outcome, String, bool)> {
    let seen: Seen = Arc::default();
    let sink = seen.clone();
    let batch = submit(
        reg,
        vec![CallRequest::new("1", "hang", json!({}))],
        &options,
        Sink::Callback(Box::new(move |_, r| {
            let thread = std::thread::current().name().unwrap_or("").to_string();
            let hooked = HOOKED.with(|h| h.get());
            sink.lock().unwrap().push((r.outcome, thread, hooked));
        })),
        None,
    );
    assert!(
        batch.wait(Some(Duration::from_secs(30))),
        "batch never ended"
    );
    let seen = seen.lock().unwrap().clone();
    seen
}

/// A pool thread ("capstan", or "capstan-extra" when the pool is full).
fn on_pool(thread: &str) -> bool {
    thread == "capstan" || thread == "capstan-extra"
}

#[test]
fn results_that_timers_deliver_run_on_a_pool_thread_that_ran_on_start() {
    pool::set_thread_hooks(Some(ThreadHooks {
        on_start: Box::new(|| HOOKED.with(|h| h.set(true))),
        on_stop: Box::new(|| HOOKED.with(|h| h.set(false))),
    }));
    let held = Arc::new(Mutex::new(Vec::new()));

    // A tool's own timeout, then a batch deadline.
    let deadline = ExecOptions {
        deadline_ms: 20,
        ..ExecOptions::default()
    };
    for (what, tool_timeout_ms, options) in [
        ("timeout", 20, ExecOptions::default()),
        ("deadline", 0, deadline),
    ] {
        let reg = Registry::default();
        never_completes(&reg, tool_timeout_ms, &held);
        let seen = run(&reg, options);
        assert_eq!(seen.len(), 1, "{seen:?}");
        let (outcome, thread, hooked) = &seen[0];
        assert_eq!(*outcome, Outcome::Timeout);
        assert!(on_pool(thread), "a {what} was delivered on {thread:?}");
        assert!(
            hooked,
            "a {what} was delivered on a thread that did not run on_start"
        );
    }

    for call in held.lock().unwrap().drain(..) {
        let _ = call.complete_text("late");
    }
    pool::set_thread_hooks(None);
}
