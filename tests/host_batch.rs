//! Host batches (`exec::HostBatch`): the calls of `HOST_RUN` tools come out
//! checked, for the host to run on its own thread; every other call runs on
//! the pool under the batch's limit; the host's answers go back at once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan::exec::HostBatch;
use capstan::{CallRequest, Error, ExecOptions, Outcome, Registry, ToolDef, ToolFlags};
use serde_json::{json, Value};

fn def(name: &str, flags: u32, f: impl Fn(capstan::Call) + Send + Sync + 'static) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: format!("{name} tool"),
        parameters: json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 2}}
        }),
        handler: Box::new(f),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags(flags),
    }
}

fn call(id: &str, name: &str, args: Value) -> CallRequest {
    CallRequest::new(id, name, args)
}

/// `add` is host-run (its callback counts into the returned counter);
/// `native` runs its callback on the pool.
fn registry() -> (Registry, Arc<AtomicUsize>) {
    let reg = Registry::default();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    reg.register(def("add", ToolFlags::HOST_RUN, move |c| {
        r.fetch_add(1, Ordering::SeqCst);
        c.complete_text("callback").unwrap();
    }))
    .unwrap();
    reg.register(def("native", 0, |c| c.complete_text("native").unwrap()))
        .unwrap();
    (reg, ran)
}

/// Waits (bounded, so a broken library fails instead of hanging) for `cond`.
fn eventually(cond: impl Fn() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(30);
    while !cond() {
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

#[test]
fn host_run_calls_come_out_checked_and_their_callback_never_runs() {
    let (reg, ran) = registry();
    let calls = vec![
        call("c0", "add", json!({"a": 1})),
        call("c1", "native", json!({})),
        call("c2", "add", json!({"a": "x"})),
        call("c3", "add", json!({"a": 4, "b": 5})),
    ];
    let hb = HostBatch::begin(&reg, calls, &ExecOptions::default());
    let handed: Vec<(usize, Value)> = hb
        .calls()
        .iter()
        .map(|c| (c.index, c.call.arguments().clone()))
        .collect();
    assert_eq!(
        handed,
        vec![(0, json!({"a": 1, "b": 2})), (3, json!({"a": 4, "b": 5}))]
    );
    let out: Value = serde_json::from_str(&hb.calls_json()).unwrap();
    assert_eq!(
        out,
        json!([
            {"index": 0, "id": "c0", "name": "add", "arguments": {"a": 1, "b": 2}},
            {"index": 3, "id": "c3", "name": "add", "arguments": {"a": 4, "b": 5}}
        ])
    );
    let results = hb
        .finish(
            Some(r#"[{"index":3,"json":9},{"index":0,"text":"3"}]"#),
            None,
        )
        .unwrap();
    let got: Vec<(&str, Outcome, &str)> = results
        .iter()
        .map(|r| (r.id.as_str(), r.outcome, r.content.as_str()))
        .collect();
    assert_eq!(got[0], ("c0", Outcome::Ok, "3"));
    assert_eq!(got[1], ("c1", Outcome::Ok, "native"));
    assert_eq!((got[2].0, got[2].1), ("c2", Outcome::InvalidArguments));
    assert_eq!(got[3], ("c3", Outcome::Ok, "9"));
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

/// The handed-out calls are written by hand: the text is what serde_json
/// writes for the same calls, escapes included.
#[test]
fn handed_out_calls_are_the_text_serde_json_would_write() {
    let (reg, _) = registry();
    let calls = vec![
        call("c\"0\\", "add", json!({"a": 1})),
        call("plain id past eight bytes", "add", json!({"a": 2, "b": -3})),
        call("ctl\u{1}\n🙂", "add", json!({})),
    ];
    let hb = HostBatch::begin(&reg, calls, &ExecOptions::default());
    let expected = json!([
        {"index": 0, "id": "c\"0\\", "name": "add", "arguments": {"a": 1, "b": 2}},
        {"index": 1, "id": "plain id past eight bytes", "name": "add", "arguments": {"a": 2, "b": -3}},
        {"index": 2, "id": "ctl\u{1}\n🙂", "name": "add", "arguments": {"b": 2}}
    ]);
    assert_eq!(hb.calls_json(), expected.to_string());
}

#[test]
fn pool_calls_run_while_the_host_runs_its_own() {
    let reg = Registry::default();
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    reg.register(def("slow", 0, move |c| {
        c.complete_text("slow").unwrap();
        d.store(true, Ordering::SeqCst);
    }))
    .unwrap();
    reg.register(def("add", ToolFlags::HOST_RUN, |c| {
        c.complete_text("x").unwrap()
    }))
    .unwrap();
    let calls = vec![call("s", "slow", json!({})), call("a", "add", json!({}))];
    let hb = HostBatch::begin(&reg, calls, &ExecOptions::default());
    // Before any answer: the pool call already ran.
    assert!(eventually(|| done.load(Ordering::SeqCst)));
    let results = hb
        .finish(Some(r#"[{"index":1,"text":"ok"}]"#), None)
        .unwrap();
    assert_eq!(results[0].content, "slow");
    assert_eq!(results[1].content, "ok");
}

#[test]
fn pool_calls_keep_the_batch_limit() {
    let reg = Registry::default();
    let inside = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (i, p) = (inside.clone(), peak.clone());
    reg.register(def("wide", 0, move |c| {
        let now = i.fetch_add(1, Ordering::SeqCst) + 1;
        p.fetch_max(now, Ordering::SeqCst);
        // Stay until a second call is inside too (bounded: a broken limit of
        // 1 fails the test, not hangs it).
        eventually(|| p.load(Ordering::SeqCst) >= 2);
        i.fetch_sub(1, Ordering::SeqCst);
        c.complete_text("w").unwrap();
    }))
    .unwrap();
    let calls = (0..6)
        .map(|n| call(&format!("w{n}"), "wide", json!({})))
        .collect();
    let options = ExecOptions {
        limit: 2,
        ..ExecOptions::default()
    };
    let hb = HostBatch::begin(&reg, calls, &options);
    assert!(hb.calls().is_empty());
    let results = hb.finish(Some("[]"), None).unwrap();
    assert!(results.iter().all(|r| r.outcome == Outcome::Ok));
    assert_eq!(peak.load(Ordering::SeqCst), 2);
}

#[test]
fn answers_are_checked_whole_before_any_call_completes() {
    let (reg, _) = registry();
    let calls = vec![call("a", "add", json!({})), call("b", "add", json!({}))];
    let hb = HostBatch::begin(&reg, calls, &ExecOptions::default());
    for bad in [
        r#"[{"index":0,"text":"x"}]"#,
        r#"[{"index":0,"text":"x"},{"index":0,"text":"y"}]"#,
        r#"[{"index":0,"text":"x"},{"index":2,"text":"y"}]"#,
        r#"[{"index":0,"text":"x"},{"index":1}]"#,
        r#"[{"index":0,"text":"x"},{"index":1,"text":"y","size":1}]"#,
    ] {
        match hb.finish(Some(bad), None) {
            Err(Error::InvalidResults(_)) => {}
            other => panic!("{bad}: {:?}", other.map(|_| ())),
        }
        assert!(hb.calls().iter().all(|c| !c.call.is_done()), "{bad}");
    }
    let results = hb
        .finish(
            Some(r#"[{"index":0,"json":null},{"index":1,"error":"no"}]"#),
            None,
        )
        .unwrap();
    assert_eq!(
        (results[0].outcome, results[0].content.as_str()),
        (Outcome::Ok, "null")
    );
    assert_eq!(results[1].outcome, Outcome::ToolError);
    assert!(matches!(
        hb.finish(Some("[]"), None),
        Err(Error::AlreadyCompleted(_))
    ));
}

#[test]
fn a_host_that_never_answers_gets_timeouts_at_the_deadline() {
    let (reg, _) = registry();
    let options = ExecOptions {
        deadline_ms: 20,
        ..ExecOptions::default()
    };
    let hb = HostBatch::begin(&reg, vec![call("a", "add", json!({}))], &options);
    assert_eq!(hb.calls().len(), 1);
    assert!(eventually(|| hb.is_done()));
    let results = hb
        .finish(Some(r#"[{"index":0,"text":"too late"}]"#), None)
        .unwrap();
    assert_eq!(results[0].outcome, Outcome::Timeout);
    assert_ne!(results[0].content, "too late");
}

#[test]
fn a_batch_dropped_unanswered_ends_its_calls_cancelled() {
    let (reg, _) = registry();
    let hb = HostBatch::begin(
        &reg,
        vec![call("a", "add", json!({}))],
        &ExecOptions::default(),
    );
    let kept = hb.calls()[0].call.clone();
    assert!(!kept.is_done());
    drop(hb);
    assert!(kept.is_done());
    assert!(kept.complete_text("late").is_err());
}

#[test]
fn a_host_run_tool_runs_its_callback_outside_host_batches() {
    let (reg, ran) = registry();
    let results = capstan::execute(
        &reg,
        vec![call("a", "add", json!({}))],
        &ExecOptions::default(),
    );
    assert_eq!(results[0].content, "callback");
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[test]
fn finish_need_not_block_on_the_pool_and_is_called_again_without_answers() {
    let reg = Registry::default();
    let open = Arc::new(AtomicBool::new(false));
    let o = open.clone();
    reg.register(def("gate", 0, move |c| {
        eventually(|| o.load(Ordering::SeqCst));
        c.complete_text("gate").unwrap();
    }))
    .unwrap();
    reg.register(def("add", ToolFlags::HOST_RUN, |c| {
        c.complete_text("x").unwrap()
    }))
    .unwrap();
    let calls = vec![call("g", "gate", json!({})), call("a", "add", json!({}))];
    let hb = HostBatch::begin(&reg, calls, &ExecOptions::default());
    assert!(matches!(
        hb.finish(None, None),
        Err(Error::InvalidResults(_))
    ));
    let answers = r#"[{"index":1,"text":"ok"}]"#;
    assert!(matches!(
        hb.finish(Some(answers), Some(Duration::ZERO)),
        Err(Error::Timeout(_))
    ));
    assert!(hb.calls()[0].call.is_done()); // the answers were kept
    assert!(matches!(
        hb.finish(Some(answers), Some(Duration::ZERO)),
        Err(Error::AlreadyCompleted(_))
    ));
    open.store(true, Ordering::SeqCst);
    let results = hb.finish(None, None).unwrap();
    assert_eq!(results[0].content, "gate");
    assert_eq!(results[1].content, "ok");
    assert!(matches!(
        hb.finish(None, None),
        Err(Error::AlreadyCompleted(_))
    ));
}
