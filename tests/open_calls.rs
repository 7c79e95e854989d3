//! A call whose callback returned with the call still open (completed later,
//! elsewhere: deferred completion, an MCP task) holds no pool thread: the
//! thread cap counts callbacks running. Its own test binary: the pool's cap
//! is process-wide.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capstan::{
    submit, Call, CallRequest, ExecOptions, Outcome, Registry, Sink, ToolDef, ToolFlags,
};
use serde_json::json;

#[path = "common/wait.rs"]
mod wait;

/// The cap every test here runs under (the same for all: it is process-wide).
const CAP: usize = 3;

/// Long enough for any loaded machine; reached only when a test fails.
const PATIENCE: Duration = Duration::from_secs(60);

fn cap_pool() {
    capstan::runtime::configure(&capstan::runtime::RuntimeOptions {
        threads: CAP,
        ..Default::default()
    })
    .unwrap();
}

/// Open calls, their callbacks returned: completed by the test.
#[derive(Clone, Default)]
struct Held {
    calls: Arc<Mutex<Vec<Call>>>,
    started: Arc<AtomicUsize>,
}

impl Held {
    /// A tool whose callback keeps the call open and returns.
    fn tool(&self, name: &str) -> ToolDef {
        let held = self.clone();
        ToolDef {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            handler: Box::new(move |c: Call| {
                held.calls.lock().unwrap().push(c);
                held.started.fetch_add(1, Ordering::SeqCst);
            }),
            timeout_ms: 0,
            max_output_chars: 0,
            flags: ToolFlags::default(),
        }
    }

    fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }

    fn complete_all(&self) -> usize {
        let calls: Vec<Call> = self.calls.lock().unwrap().drain(..).collect();
        for c in &calls {
            c.complete_text("done").unwrap();
        }
        calls.len()
    }
}

fn calls(tool: &str, n: usize) -> Vec<CallRequest> {
    (0..n)
        .map(|i| CallRequest::new(format!("c{i}"), tool, json!({})))
        .collect()
}

fn plain(name: &str) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(|c: Call| {
            c.complete_text("plain").unwrap();
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    }
}

#[test]
fn open_calls_whose_callback_returned_hold_no_pool_thread() {
    cap_pool();
    let reg = Registry::default();
    let held = Held::default();
    reg.register(held.tool("open")).unwrap();
    // Four times the cap: one call per submitted batch (as the MCP server
    // submits each call), and one batch whose limit lets all its calls run.
    let n = 4 * CAP;
    let mut batches: Vec<_> = (0..n)
        .map(|_| {
            submit(
                &reg,
                calls("open", 1),
                &ExecOptions::default(),
                Sink::Queue,
                None,
            )
        })
        .collect();
    let wide = ExecOptions {
        limit: n,
        ..Default::default()
    };
    batches.push(submit(&reg, calls("open", n), &wide, Sink::Queue, None));
    let all = 2 * n;
    assert!(
        wait::eventually(PATIENCE, || held.started() == all),
        "{} of {all} open calls started with a cap of {CAP} pool threads: a call whose \
         callback returned still holds its thread",
        held.started()
    );
    assert_eq!(held.complete_all(), all);
    for b in &batches {
        assert!(
            b.wait(Some(PATIENCE)),
            "a completed call was never delivered"
        );
    }
    let results: Vec<_> = batches.iter().flat_map(|b| b.poll(usize::MAX)).collect();
    assert_eq!(results.len(), all);
    assert!(results.iter().all(|(_, r)| r.outcome == Outcome::Ok));
}

#[test]
fn a_plain_call_is_not_starved_by_open_calls() {
    cap_pool();
    let reg = Registry::default();
    let held = Held::default();
    reg.register(held.tool("open")).unwrap();
    reg.register(plain("plain")).unwrap();
    // As many open calls as the cap: each held its thread until completed.
    let open: Vec<_> = (0..CAP)
        .map(|_| {
            submit(
                &reg,
                calls("open", 1),
                &ExecOptions::default(),
                Sink::Queue,
                None,
            )
        })
        .collect();
    assert!(wait::eventually(PATIENCE, || held.started() == CAP));
    let batch = submit(
        &reg,
        calls("plain", 1),
        &ExecOptions::default(),
        Sink::Queue,
        None,
    );
    // A wait with a time limit does not run the call on this thread.
    let done = batch.wait(Some(PATIENCE));
    held.complete_all();
    assert!(done, "a plain call waited for {CAP} open calls to complete");
    assert_eq!(batch.poll(1)[0].1.content, "plain");
    for b in &open {
        assert!(b.wait(Some(PATIENCE)));
    }
}

#[test]
fn a_batch_limit_still_counts_its_open_calls() {
    cap_pool();
    let reg = Registry::default();
    let held = Held::default();
    reg.register(held.tool("open")).unwrap();
    let opts = ExecOptions {
        limit: 2,
        ..Default::default()
    };
    let batch = submit(&reg, calls("open", 7), &opts, Sink::Queue, None);
    // The limit's worth of calls start; then one more each time one
    // completes, never more.
    let mut want = 2;
    loop {
        assert!(
            wait::eventually(PATIENCE, || held.started() >= want),
            "{} started, {want} expected",
            held.started()
        );
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(held.started(), want, "the limit of 2 open calls was passed");
        if want == 7 {
            break;
        }
        let first = held.calls.lock().unwrap().remove(0);
        first.complete_text("done").unwrap();
        want += 1;
    }
    held.complete_all();
    assert!(batch.wait(Some(PATIENCE)));
    let results = batch.poll(usize::MAX);
    assert_eq!(results.len(), 7);
    assert!(results.iter().all(|(_, r)| r.outcome == Outcome::Ok));
}
