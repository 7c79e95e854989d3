//! A finished call keeps nothing for its timeout: its timer is cancelled on
//! completion, not left sleeping until the deadline. Alone in its binary
//! because it reads process-wide counters.

use std::time::Duration;

use capstan::exec::{live_calls, live_timers};
use capstan::{execute, CallRequest, ExecOptions, Registry, ToolDef, ToolFlags};
use serde_json::json;

#[path = "common/wait.rs"]
mod wait;
use wait::eventually;

#[test]
fn finished_calls_with_a_one_hour_timeout_hold_no_timer_or_call_state() {
    let reg = Registry::default();
    reg.register(ToolDef {
        name: "quick".into(),
        description: "answers at once".into(),
        parameters: json!({"type": "object"}),
        // While it runs, its own timeout timer is armed.
        handler: Box::new(|call: capstan::Call| {
            let armed = live_timers() >= 1;
            call.complete_text(if armed { "ok" } else { "no timer armed" })
                .unwrap();
        }),
        timeout_ms: 3_600_000,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    })
    .unwrap();
    // And a batch deadline of an hour, whose timer must go with the batch.
    let opts = ExecOptions {
        deadline_ms: 3_600_000,
        ..Default::default()
    };
    let mut calls_run = 0;
    for round in 0..20 {
        let calls: Vec<_> = (0..1000)
            .map(|i| CallRequest::new(format!("c{round}_{i}"), "quick", json!({})))
            .collect();
        let results = execute(&reg, calls, &opts);
        assert!(
            results.iter().all(|r| r.content == "ok"),
            "{:?}",
            results[0]
        );
        calls_run += results.len();
    }
    assert_eq!(calls_run, 20_000);
    // Cancelled timers are dropped by the timer thread, at once but not
    // synchronously: allow it a moment (not an hour).
    assert!(
        eventually(Duration::from_secs(30), || live_timers() == 0),
        "{} timers still armed after every call finished",
        live_timers()
    );
    assert!(
        eventually(Duration::from_secs(30), || live_calls() == 0),
        "{} calls still held after every call finished",
        live_calls()
    );
}
