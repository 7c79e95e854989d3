//! With every pool thread busy, timeouts still fire and nested execution
//! still completes. Its own test binary: the pool's cap is process-wide.

use std::time::Duration;

use capstan::{execute, CallRequest, ExecOptions, Outcome, Registry, ToolDef, ToolFlags};
use serde_json::json;

fn def(name: &str, timeout_ms: u32, f: impl Fn(capstan::Call) + Send + Sync + 'static) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(f),
        timeout_ms,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    }
}

#[test]
fn timeouts_fire_and_nesting_completes_with_a_saturated_pool() {
    capstan::exec::pool::configure(2).unwrap();
    let reg = Registry::default();
    // Each call blocks its thread until its own timeout marks it cancelled.
    reg.register(def("until_cancelled", 30, |c| {
        while !c.is_cancelled() {
            std::thread::sleep(Duration::from_millis(1));
        }
    }))
    .unwrap();
    let calls: Vec<_> = (0..8)
        .map(|i| CallRequest::new(i.to_string(), "until_cancelled", json!({})))
        .collect();
    let results = execute(&reg, calls, &ExecOptions::default());
    assert!(
        results.iter().all(|r| r.outcome == Outcome::Timeout),
        "{results:?}"
    );

    let inner = reg.clone();
    reg.register(def("nest", 0, move |c| {
        let depth: u64 = c.id().len() as u64;
        if depth >= 4 {
            c.complete_text("leaf").unwrap();
            return;
        }
        let calls: Vec<_> = (0..3)
            .map(|i| CallRequest::new(format!("{}{i}", c.id()), "nest", json!({})))
            .collect();
        let out = execute(&inner, calls, &ExecOptions::default());
        let leaves: usize = out.iter().map(|r| r.content.matches("leaf").count()).sum();
        c.complete_text("leaf".repeat(leaves)).unwrap();
    }))
    .unwrap();
    let r = &execute(
        &reg,
        vec![CallRequest::new("0", "nest", json!({}))],
        &ExecOptions::default(),
    )[0];
    assert_eq!(
        r.content.matches("leaf").count(),
        27,
        "3 levels of fan-out 3 below the root"
    );
    // The cap may change at any time, also after the pool started.
    capstan::exec::pool::configure(4).unwrap();
    assert_eq!(capstan::exec::pool::threads(), 4);
}
