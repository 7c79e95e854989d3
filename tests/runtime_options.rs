//! The runtime's options: idle pool threads end after the keep-alive set,
//! and the defaults come back with zero fields. Its own test binary: the
//! options are process-wide.

use std::time::Duration;

use capstan::runtime::{self, RuntimeOptions};
use capstan::{CallRequest, ExecOptions, Registry, Sink, ToolDef, ToolFlags};
use serde_json::json;

#[path = "common/wait.rs"]
mod wait;

fn registry() -> Registry {
    let reg = Registry::default();
    reg.register(ToolDef {
        name: "echo".into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(|c: capstan::Call| c.complete_text("ok").unwrap()),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    })
    .unwrap();
    reg
}

/// A batch no one waits on without a limit runs on pool threads.
fn run_on_pool(reg: &Registry, n: usize) {
    let calls: Vec<_> = (0..n)
        .map(|i| CallRequest::new(i.to_string(), "echo", json!({})))
        .collect();
    let batch = capstan::submit(reg, calls, &ExecOptions::default(), Sink::Queue, None);
    assert!(batch.wait(Some(Duration::from_secs(30))));
}

#[test]
fn idle_pool_threads_end_after_the_keep_alive_and_zero_fields_mean_defaults() {
    runtime::configure(&RuntimeOptions {
        threads: 3,
        keep_alive: Duration::from_millis(20),
    })
    .unwrap();
    assert_eq!(runtime::options().threads, 3);
    assert_eq!(runtime::options().keep_alive, Duration::from_millis(20));
    let reg = registry();
    run_on_pool(&reg, 4);
    assert!(runtime::live_threads() <= 3, "the cap bounds the pool");
    assert!(
        wait::eventually(Duration::from_secs(30), || runtime::live_threads() == 0),
        "{} pool threads still alive",
        runtime::live_threads()
    );
    // Work after that starts threads again.
    run_on_pool(&reg, 2);
    runtime::configure(&RuntimeOptions {
        threads: 0,
        keep_alive: Duration::ZERO,
    })
    .unwrap();
    assert_eq!(runtime::options().threads, runtime::DEFAULT_THREADS);
    assert_eq!(runtime::options().keep_alive, runtime::DEFAULT_KEEP_ALIVE);
}
