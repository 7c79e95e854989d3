//! Caller-runs: the thread that executes a batch runs its calls itself, so
//! pool threads must still join when calls are left waiting behind one of
//! its calls that blocks.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan::{execute, CallRequest, ExecOptions, Outcome, Registry, ToolDef, ToolFlags};
use serde_json::json;

#[test]
fn calls_waiting_behind_a_blocked_call_still_fan_out_to_the_limit() {
    let reg = Registry::default();
    let inside = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (i, m) = (inside.clone(), most.clone());
    reg.register(ToolDef {
        name: "gather".into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        // Each call blocks until all four run at once (or 5 s pass): only a
        // batch whose pool threads join behind a blocked caller gets there.
        handler: Box::new(move |c: capstan::Call| {
            let now = i.fetch_add(1, Ordering::SeqCst) + 1;
            m.fetch_max(now, Ordering::SeqCst);
            let until = Instant::now() + Duration::from_secs(5);
            while m.load(Ordering::SeqCst) < 4 && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(1));
            }
            i.fetch_sub(1, Ordering::SeqCst);
            c.complete_text("ok").unwrap();
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    })
    .unwrap();
    let calls: Vec<_> = (0..4)
        .map(|n| CallRequest::new(n.to_string(), "gather", json!({})))
        .collect();
    let options = ExecOptions {
        limit: 4,
        ..ExecOptions::default()
    };
    let results = execute(&reg, calls, &options);
    assert!(
        results.iter().all(|r| r.outcome == Outcome::Ok),
        "{results:?}"
    );
    assert_eq!(most.load(Ordering::SeqCst), 4, "all four ran at once");
}
