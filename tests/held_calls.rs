//! A call that timed out and that the host never completes keeps its own
//! text alive (the host may still read it) but not its whole batch. Alone in
//! its binary because it reads process-wide counters.

use std::time::Duration;

use capstan::exec::{live_batches, live_calls};
use capstan::{execute, CallRequest, ExecOptions, Outcome, Registry, ToolDef, ToolFlags};
use serde_json::json;

#[path = "common/wait.rs"]
mod wait;
use wait::eventually;

fn tool(name: &str, timeout_ms: u32, handler: Box<dyn capstan::Handler>) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler,
        timeout_ms,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    }
}

static UNCOUNTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[test]
fn a_call_never_completed_after_its_timeout_does_not_hold_its_batch() {
    let reg = Registry::default();
    reg.register(tool(
        "quick",
        0,
        Box::new(|call: capstan::Call| {
            call.complete_text("ok").unwrap();
        }),
    ))
    .unwrap();
    // Takes a handle, as a C host does, and never completes the call.
    reg.register(tool(
        "abandon",
        5,
        Box::new(|call: capstan::Call| {
            // Its batch is held while it runs.
            if live_batches() == 0 {
                UNCOUNTED.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            call.handle().unwrap();
        }),
    ))
    .unwrap();
    let rounds = 10;
    for round in 0..rounds {
        let mut calls: Vec<_> = (0..200)
            .map(|i| {
                CallRequest::new(
                    format!("q{round}_{i}"),
                    "quick",
                    json!({"pad": "x".repeat(100)}),
                )
            })
            .collect();
        calls.push(CallRequest::new(format!("a{round}"), "abandon", json!({})));
        let results = execute(&reg, calls, &ExecOptions::default());
        assert_eq!(results.last().map(|r| r.outcome), Some(Outcome::Timeout));
        assert!(results[..200].iter().all(|r| r.outcome == Outcome::Ok));
    }
    assert!(
        eventually(Duration::from_secs(30), || live_batches() == 0),
        "{} batches still held by calls the host never completed",
        live_batches()
    );
    assert!(
        !UNCOUNTED.load(std::sync::atomic::Ordering::SeqCst),
        "a running call's batch was not counted"
    );
    // The abandoned calls themselves stay (their lent text must stay valid
    // until the host completes them or frees the registry).
    assert_eq!(live_calls(), rounds);
}
