//! Host integration rules: approval, events, stats, shutdown.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capstan::{
    execute, needs_approval, submit, Approval, CallRequest, EventKind, ExecOptions, Outcome,
    Registry, Sink, ToolDef, ToolFlags,
};
use serde_json::json;

fn def(name: &str, flags: u32, f: impl Fn(capstan::Call) + Send + Sync + 'static) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string", "default": "/tmp"}}}),
        handler: Box::new(f),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags(flags),
    }
}

fn call(id: &str, name: &str) -> CallRequest {
    CallRequest::new(id, name, json!({}))
}

fn guarded() -> (Registry, Arc<AtomicUsize>) {
    let reg = Registry::default();
    let ran = Arc::new(AtomicUsize::new(0));
    let r2 = ran.clone();
    reg.register(def("delete_file", ToolFlags::REQUIRES_APPROVAL, move |c| {
        r2.fetch_add(1, Ordering::SeqCst);
        c.complete_text("deleted").unwrap();
    }))
    .unwrap();
    reg.register(def("read_file", 0, |c| c.complete_text("content").unwrap()))
        .unwrap();
    (reg, ran)
}

#[test]
fn without_an_approver_a_guarded_tool_is_denied_and_never_runs() {
    let (reg, ran) = guarded();
    let r = &execute(
        &reg,
        vec![call("1", "delete_file")],
        &ExecOptions::default(),
    )[0];
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.content.contains("requires approval"), "{}", r.content);
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[test]
fn the_approver_sees_name_id_and_validated_arguments_and_may_approve() {
    let (reg, ran) = guarded();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    reg.set_approver(Some(Arc::new(move |a: Approval| {
        s2.lock().unwrap().push((
            a.tool().to_string(),
            a.id().to_string(),
            a.arguments_text().to_string(),
        ));
        a.approve().unwrap();
        assert!(a.approve().is_err(), "a second decision is refused");
    })))
    .unwrap();
    let results = execute(
        &reg,
        vec![call("x1", "delete_file"), call("x2", "read_file")],
        &ExecOptions::default(),
    );
    assert_eq!(results[0].outcome, Outcome::Ok);
    assert_eq!(results[1].outcome, Outcome::Ok);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    let seen = seen.lock().unwrap();
    assert_eq!(
        *seen,
        vec![(
            "delete_file".into(),
            "x1".into(),
            r#"{"path":"/tmp"}"#.into()
        )]
    );
}

#[test]
fn denial_later_from_another_thread_carries_the_reason() {
    let (reg, ran) = guarded();
    reg.set_approver(Some(Arc::new(|a: Approval| {
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(10));
            a.deny("not in the sandbox").unwrap();
        });
    })))
    .unwrap();
    let r = &execute(
        &reg,
        vec![call("1", "delete_file")],
        &ExecOptions::default(),
    )[0];
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.content.contains("not in the sandbox"));
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[test]
fn pre_approved_ids_run_without_asking() {
    let (reg, ran) = guarded();
    let asked = Arc::new(AtomicUsize::new(0));
    let a2 = asked.clone();
    reg.set_approver(Some(Arc::new(move |a: Approval| {
        a2.fetch_add(1, Ordering::SeqCst);
        a.deny("no").unwrap();
    })))
    .unwrap();
    let opts = ExecOptions {
        approved: vec!["ok1".into()],
        ..Default::default()
    };
    let calls = vec![
        call("ok1", "delete_file"),
        call("other", "delete_file"),
        call("r", "read_file"),
    ];
    assert_eq!(needs_approval(&reg, &calls, &opts), vec![1]);
    assert_eq!(
        needs_approval(&reg, &calls, &ExecOptions::default()),
        vec![0, 1]
    );
    let results = execute(&reg, calls, &opts);
    assert_eq!(results[0].outcome, Outcome::Ok);
    assert_eq!(results[1].outcome, Outcome::Denied);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[test]
fn cancelling_a_batch_cancels_calls_waiting_for_approval() {
    let (reg, ran) = guarded();
    let pending = Arc::new(Mutex::new(Vec::new()));
    let p2 = pending.clone();
    reg.set_approver(Some(Arc::new(move |a: Approval| {
        p2.lock().unwrap().push(a)
    })))
    .unwrap();
    let batch = submit(
        &reg,
        vec![call("1", "delete_file")],
        &ExecOptions::default(),
        Sink::Queue,
        None,
    );
    while pending.lock().unwrap().is_empty() {
        std::thread::sleep(Duration::from_millis(1));
    }
    batch.cancel();
    assert!(batch.wait(Some(Duration::from_secs(5))));
    let r = batch.poll(10);
    assert_eq!(r[0].1.outcome, Outcome::Cancelled);
    assert!(
        pending.lock().unwrap()[0].approve().is_err(),
        "too late to approve"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[test]
fn events_report_start_finish_timeout_and_cancel() {
    let reg = Registry::default();
    let mut slow = def("slow", 0, |_c| {});
    slow.timeout_ms = 20;
    reg.register(slow).unwrap();
    reg.register(def("fast", 0, |c| c.complete_text("x").unwrap()))
        .unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let e2 = events.clone();
    reg.set_event_hook(Some(Arc::new(move |e: &capstan::Event| {
        e2.lock().unwrap().push((
            e.kind,
            e.tool.to_string(),
            e.outcome,
            e.id.to_string(),
            e.index,
        ));
    })))
    .unwrap();
    execute(
        &reg,
        vec![call("1", "fast"), call("2", "slow")],
        &ExecOptions::default(),
    );
    let ev = events.lock().unwrap().clone();
    // Every event names its call: id and position in the batch.
    for e in &ev {
        let expected = if e.1 == "fast" { ("1", 0) } else { ("2", 1) };
        assert_eq!((e.3.as_str(), e.4), expected, "{e:?}");
    }
    let has = |k: EventKind, t: &str, o: Option<Outcome>| {
        ev.iter().any(|x| x.0 == k && x.1 == t && x.2 == o)
    };
    assert!(has(EventKind::Started, "fast", None));
    assert!(has(EventKind::Finished, "fast", Some(Outcome::Ok)));
    assert!(has(EventKind::Started, "slow", None));
    assert!(has(EventKind::TimedOut, "slow", None));
    assert!(has(EventKind::Finished, "slow", Some(Outcome::Timeout)));

    events.lock().unwrap().clear();
    let gate = Arc::new(Mutex::new(()));
    let held = gate.lock().unwrap();
    let g2 = gate.clone();
    reg.register(def("gated", 0, move |c| {
        let _g = g2.lock().unwrap();
        c.complete_text("x").unwrap();
    }))
    .unwrap();
    let opts = ExecOptions {
        parallel: false,
        ..Default::default()
    };
    let batch = submit(
        &reg,
        vec![call("g1", "gated"), call("g2", "gated")],
        &opts,
        Sink::Queue,
        None,
    );
    while !events
        .lock()
        .unwrap()
        .iter()
        .any(|x| x.0 == EventKind::Started)
    {
        std::thread::sleep(Duration::from_millis(1));
    }
    batch.cancel();
    drop(held);
    assert!(batch.wait(Some(Duration::from_secs(5))));
    let ev = events.lock().unwrap().clone();
    assert!(has_event(&ev, EventKind::Cancelled, "gated", None));
    assert!(has_event(
        &ev,
        EventKind::Finished,
        "gated",
        Some(Outcome::Cancelled)
    ));
    assert!(has_event(
        &ev,
        EventKind::Finished,
        "gated",
        Some(Outcome::Ok)
    ));

    events.lock().unwrap().clear();
    reg.set_event_hook(None).unwrap();
    execute(&reg, vec![call("4", "fast")], &ExecOptions::default());
    assert!(
        events.lock().unwrap().is_empty(),
        "hook removed: no more events"
    );
}

/// Events as heard: kind, tool, outcome, call id, position in the batch.
type Seen = Vec<(EventKind, String, Option<Outcome>, String, usize)>;

fn has_event(ev: &Seen, k: EventKind, t: &str, o: Option<Outcome>) -> bool {
    ev.iter().any(|x| x.0 == k && x.1 == t && x.2 == o)
}

#[test]
fn stats_count_outcomes_latency_and_in_flight() {
    let reg = Registry::default();
    reg.register(def("ok", 0, |c| c.complete_text("x").unwrap()))
        .unwrap();
    reg.register(def("bad", 0, |c| c.fail("no").unwrap()))
        .unwrap();
    let held = Arc::new(Mutex::new(Vec::new()));
    let h2 = held.clone();
    reg.register(def("held", 0, move |c| h2.lock().unwrap().push(c)))
        .unwrap();
    let mut calls: Vec<_> = (0..5).map(|i| call(&format!("o{i}"), "ok")).collect();
    calls.push(call("b", "bad"));
    calls.push(CallRequest::new("v", "ok", json!({"path": 3})));
    execute(&reg, calls, &ExecOptions::default());
    let batch = submit(
        &reg,
        vec![call("h", "held")],
        &ExecOptions::default(),
        Sink::Queue,
        None,
    );
    while held.lock().unwrap().is_empty() {
        std::thread::sleep(Duration::from_millis(1));
    }
    let s = reg.stats_json();
    assert_eq!(s["tools"]["ok"]["calls"], 6);
    assert_eq!(s["tools"]["ok"]["outcomes"]["ok"], 5);
    assert_eq!(s["tools"]["ok"]["outcomes"]["invalid_arguments"], 1);
    assert!(s["tools"]["ok"]["p50_us"].is_u64());
    assert!(s["tools"]["ok"]["p99_us"].as_u64() >= s["tools"]["ok"]["p50_us"].as_u64());
    assert_eq!(s["tools"]["bad"]["outcomes"]["tool_error"], 1);
    assert_eq!(s["tools"]["held"]["in_flight"], 1);
    assert_eq!(s["tools"]["held"]["calls"], 0);
    held.lock().unwrap()[0].complete_text("done").unwrap();
    batch.wait(Some(Duration::from_secs(5)));
    let s = reg.stats_json();
    assert_eq!(s["tools"]["held"]["in_flight"], 0);
    assert_eq!(s["tools"]["held"]["calls"], 1);
}

#[test]
fn close_reports_every_call_once_and_runs_no_callback_after() {
    let reg = Registry::default();
    let started = Arc::new(AtomicUsize::new(0));
    let s2 = started.clone();
    reg.register(def("block", 0, move |c| {
        s2.fetch_add(1, Ordering::SeqCst);
        while !c.is_cancelled() {
            std::thread::sleep(Duration::from_millis(1));
        }
    }))
    .unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let after_close = Arc::new(AtomicUsize::new(0));
    let closed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (c2, a2, cl2) = (count.clone(), after_close.clone(), closed.clone());
    let sink = Sink::Callback(Box::new(move |_, r| {
        assert_eq!(r.outcome, Outcome::Cancelled);
        c2.fetch_add(1, Ordering::SeqCst);
        if cl2.load(Ordering::SeqCst) {
            a2.fetch_add(1, Ordering::SeqCst);
        }
    }));
    let calls: Vec<_> = (0..40).map(|i| call(&i.to_string(), "block")).collect();
    let batch = submit(
        &reg,
        calls,
        &ExecOptions {
            limit: 4,
            ..Default::default()
        },
        sink,
        None,
    );
    while started.load(Ordering::SeqCst) < 4 {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(reg.close(Duration::from_secs(10)));
    closed.store(true, Ordering::SeqCst);
    assert!(batch.wait(Some(Duration::ZERO)), "done when close returns");
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(
        count.load(Ordering::SeqCst),
        40,
        "exactly one result per call"
    );
    assert_eq!(
        after_close.load(Ordering::SeqCst),
        0,
        "no callback after close returned"
    );
    assert_eq!(
        started.load(Ordering::SeqCst),
        4,
        "pending calls never started"
    );
    let r = &execute(&reg, vec![call("late", "block")], &ExecOptions::default())[0];
    assert_eq!(r.outcome, Outcome::Cancelled);
}

#[test]
fn close_from_inside_a_callback_does_not_deadlock() {
    let reg = Registry::default();
    let inner = reg.clone();
    reg.register(def("closer", 0, move |c| {
        let finished = inner.close(Duration::from_secs(30));
        let _ = c.complete_text(format!("close finished: {finished}"));
    }))
    .unwrap();
    let r = &execute(&reg, vec![call("1", "closer")], &ExecOptions::default())[0];
    // The call was cancelled by its own close: that is its one result.
    assert_eq!(r.outcome, Outcome::Cancelled);
}
