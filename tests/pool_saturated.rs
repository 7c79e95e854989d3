//! With every pool thread busy, timeouts still fire and nested execution
//! still completes. Its own test binary: the pool's cap is process-wide.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capstan::{execute, CallRequest, ExecOptions, Outcome, Registry, Sink, ToolDef, ToolFlags};
use serde_json::json;

#[path = "common/wait.rs"]
mod wait;

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
    capstan::runtime::configure(&capstan::runtime::RuntimeOptions {
        threads: 2,
        ..Default::default()
    })
    .unwrap();
    let reg = Registry::default();
    // Each call blocks its thread until its own timeout marks it cancelled.
    let threads = Arc::new(Mutex::new(std::collections::HashSet::new()));
    let seen = threads.clone();
    reg.register(def("until_cancelled", 30, move |c| {
        seen.lock().unwrap().insert(std::thread::current().id());
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
    // The cap is hard: the replacements of workers stuck past their timeout
    // and the timeouts themselves ran on the 2 pool threads, no thread of
    // their own (the caller's thread may run calls too).
    let mut ran_on = threads.lock().unwrap().clone();
    ran_on.remove(&std::thread::current().id());
    assert!(
        ran_on.len() <= 2,
        "callbacks ran on {} capstan threads",
        ran_on.len()
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
    // One pool thread, busy with a tool that submits a batch and waits for
    // it with a time limit: being a pool thread, it runs the batch's calls
    // itself (no other thread would before the limit).
    capstan::runtime::configure(&capstan::runtime::RuntimeOptions {
        threads: 1,
        ..Default::default()
    })
    .unwrap();
    assert!(
        wait::eventually(Duration::from_secs(30), || {
            capstan::runtime::pool::live_threads() <= 1
        }),
        "threads over the cap retire"
    );
    reg.register(def("leaf", 0, |c| c.complete_text("leaf").unwrap()))
        .unwrap();
    let inner = reg.clone();
    reg.register(def("waits", 0, move |c| {
        let calls: Vec<_> = (0..2)
            .map(|i| CallRequest::new(i.to_string(), "leaf", json!({})))
            .collect();
        let batch = capstan::submit(&inner, calls, &ExecOptions::default(), Sink::Queue, None);
        let done = batch.wait(Some(Duration::from_secs(10)));
        c.complete_text(if done {
            "nested done"
        } else {
            "nested waited in vain"
        })
        .unwrap();
    }))
    .unwrap();
    let outer = capstan::submit(
        &reg,
        vec![CallRequest::new("w", "waits", json!({}))],
        &ExecOptions::default(),
        Sink::Queue,
        None,
    );
    assert!(outer.wait(Some(Duration::from_secs(30))));
    assert_eq!(outer.poll(1)[0].1.content, "nested done");
    // The one pool thread busy with a call that waits for the test: a
    // thread waiting on its batch without a time limit runs the batch's
    // calls itself (caller-runs), or they would wait for that thread.
    let release = Arc::new(AtomicBool::new(false));
    let open = release.clone();
    reg.register(def("blocker", 0, move |c| {
        wait::eventually(Duration::from_secs(30), || open.load(Ordering::SeqCst));
        c.complete_text("released").unwrap();
    }))
    .unwrap();
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    let record = ran_on.clone();
    reg.register(def("here", 0, move |c| {
        record.lock().unwrap().push(std::thread::current().id());
        c.complete_text("ok").unwrap();
    }))
    .unwrap();
    let blocker = capstan::submit(
        &reg,
        vec![CallRequest::new("b", "blocker", json!({}))],
        &ExecOptions::default(),
        Sink::Queue,
        None,
    );
    let calls: Vec<_> = (0..3)
        .map(|i| CallRequest::new(i.to_string(), "here", json!({})))
        .collect();
    let batch = capstan::submit(&reg, calls, &ExecOptions::default(), Sink::Queue, None);
    assert!(batch.wait(None));
    release.store(true, Ordering::SeqCst);
    assert!(blocker.wait(Some(Duration::from_secs(30))));
    let me = std::thread::current().id();
    assert_eq!(*ran_on.lock().unwrap(), vec![me; 3]);
    // The cap may change at any time, also after the pool started.
    capstan::runtime::configure(&capstan::runtime::RuntimeOptions {
        threads: 4,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(capstan::runtime::pool::threads(), 4);
}
