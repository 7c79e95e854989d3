//! The end of a batch: waits, the end callback, detach, the deadline.

use super::*;

#[test]
fn a_wait_returns_only_after_the_end_callback_returned_and_inside_it_does_not_wait() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::OnceLock;
    // Its calls wait until the batch is kept where the end callback finds it.
    let gate = Arc::new(AtomicBool::new(false));
    let open = gate.clone();
    let reg = Registry::default();
    reg.register(def("gated", 0, 0, move |call| {
        assert!(eventually(PATIENCE, || open.load(Ordering::SeqCst)));
        call.complete_text("ok").unwrap();
    }))
    .unwrap();
    let calls = (0..3)
        .map(|i| CallRequest::new(format!("g{i}"), "gated", json!({})))
        .collect();
    let ended = Arc::new(AtomicBool::new(false));
    let inside = Arc::new(OnceLock::<bool>::new());
    let this: Arc<OnceLock<capstan::Batch>> = Arc::default();
    let (end, seen, me) = (ended.clone(), inside.clone(), this.clone());
    let batch = submit(
        &reg,
        calls,
        &ExecOptions::default(),
        Sink::Callback(Box::new(|_, _| {})),
        Some(Box::new(move || {
            // Waiting on its own batch here would wait for itself: inside its
            // end callback the batch counts as finished.
            if let Some(me) = me.get() {
                let _ = seen.set(me.wait(Some(PATIENCE)) && me.is_done());
            }
            std::thread::sleep(Duration::from_millis(50));
            end.store(true, Ordering::SeqCst);
        })),
    );
    let kept = this.set(batch).is_ok();
    assert!(kept);
    gate.store(true, Ordering::SeqCst);
    // Not a caller-runs wait: the batch may end on the pool meanwhile.
    let batch = this.get().unwrap();
    assert!(batch.wait(Some(PATIENCE)));
    assert!(
        ended.load(Ordering::SeqCst),
        "wait returned before the end callback did"
    );
    assert_eq!(inside.get(), Some(&true));
}

#[test]
fn detach_returns_only_after_a_result_callback_already_running_returned() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let reg = echo_registry();
    let (running, returned) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (r1, r2) = (running.clone(), returned.clone());
    let batch = submit(
        &reg,
        echo_calls(1),
        &ExecOptions::default(),
        Sink::Callback(Box::new(move |_, _| {
            r1.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(100));
            r2.store(true, Ordering::SeqCst);
        })),
        None,
    );
    assert!(eventually(PATIENCE, || running.load(Ordering::SeqCst)));
    batch.detach();
    assert!(
        returned.load(Ordering::SeqCst),
        "detach returned while the callback ran"
    );
}

#[test]
fn waiting_on_another_batch_inside_a_callback_still_waits_for_its_end_callback() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let reg = echo_registry();
    let (other_began, other_ended) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (began, ended) = (other_began.clone(), other_ended.clone());
    let other = Arc::new(submit(
        &reg,
        echo_calls(2),
        &ExecOptions::default(),
        Sink::Queue,
        Some(Box::new(move || {
            began.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(100));
            ended.store(true, Ordering::SeqCst);
        })),
    ));
    let saw = Arc::new(Mutex::new(None));
    let (waits_on, record) = (other.clone(), saw.clone());
    let outer = submit(
        &reg,
        echo_calls(1),
        &ExecOptions::default(),
        Sink::Callback(Box::new(move |_, _| {
            // The other batch has all its results and its end callback is
            // running on another thread: this wait must wait for it.
            assert!(eventually(PATIENCE, || other_began.load(Ordering::SeqCst)));
            let done = waits_on.wait(Some(PATIENCE));
            *record.lock().unwrap() = Some(done && other_ended.load(Ordering::SeqCst));
        })),
        None,
    );
    assert!(outer.wait(Some(PATIENCE)));
    assert_eq!(*saw.lock().unwrap(), Some(true));
}

#[test]
fn a_wait_with_a_time_limit_on_a_host_thread_runs_no_call_there() {
    let reg = Registry::default();
    let ran_on = thread_recording(&reg, "where", 0, "ok");
    for round in 0..20 {
        let calls = (0..4)
            .map(|i| CallRequest::new(format!("w{round}_{i}"), "where", json!({})))
            .collect();
        let batch = submit(&reg, calls, &ExecOptions::default(), Sink::Queue, None);
        // A call could outlast the limit: such a wait only watches.
        assert!(batch.wait(Some(PATIENCE)));
    }
    let me = std::thread::current().id();
    let ran_on = ran_on.lock().unwrap();
    assert_eq!(ran_on.len(), 80);
    assert!(
        ran_on.iter().all(|t| *t != me),
        "a call ran on the waiting thread"
    );
}

#[test]
fn calls_the_batch_deadline_caught_before_they_started_say_they_never_ran() {
    let reg = Registry::default();
    reg.register(def("long", 0, 0, |call| {
        std::thread::sleep(Duration::from_millis(200));
        let _ = call.complete_text("finished late");
    }))
    .unwrap();
    reg.register(def("next", 0, 0, |call| call.complete_text("ran").unwrap()))
        .unwrap();
    let options = ExecOptions {
        parallel: false,
        deadline_ms: 50,
        ..ExecOptions::default()
    };
    let calls = vec![
        CallRequest::new("1", "long", json!({})),
        CallRequest::new("2", "next", json!({})),
        CallRequest::new("3", "next", json!({})),
    ];
    let results = execute(&reg, calls, &options);
    assert_eq!(results[0].outcome, Outcome::Timeout, "{results:?}");
    for r in &results[1..] {
        assert_eq!(r.outcome, Outcome::Timeout, "{r:?}");
        assert_eq!(
            r.content,
            "Tool \"next\" timed out: the batch deadline of 50 ms passed while it waited to \
             start (for a free worker or an earlier call of a serial tool); it was not run."
        );
    }
}

#[test]
fn at_the_batch_deadline_calls_not_started_report_at_once_not_when_a_worker_frees() {
    let delivered = Arc::new(Mutex::new(Vec::new()));
    let saw_them = Arc::new(Mutex::new(None));
    let reg = Registry::default();
    let (seen, saw) = (delivered.clone(), saw_them.clone());
    // Holds the batch's only worker until the other calls have their results.
    reg.register(def("long", 0, 0, move |call| {
        let others = eventually(PATIENCE, || seen.lock().unwrap().len() >= 2);
        *saw.lock().unwrap() = Some(others);
        let _ = call.complete_text("finished late");
    }))
    .unwrap();
    reg.register(def("next", 0, 0, |call| call.complete_text("ran").unwrap()))
        .unwrap();
    let options = ExecOptions {
        parallel: false,
        deadline_ms: 50,
        ..ExecOptions::default()
    };
    let record = delivered.clone();
    let batch = submit(
        &reg,
        vec![
            CallRequest::new("1", "long", json!({})),
            CallRequest::new("2", "next", json!({})),
            CallRequest::new("3", "next", json!({})),
        ],
        &options,
        Sink::Callback(Box::new(move |_, r| {
            if r.id != "1" {
                record.lock().unwrap().push(r.outcome);
            }
        })),
        None,
    );
    assert!(batch.wait(Some(PATIENCE)));
    // The batch ended at its deadline; its first callback returns after.
    assert!(eventually(PATIENCE, || saw_them.lock().unwrap().is_some()));
    assert_eq!(
        *saw_them.lock().unwrap(),
        Some(true),
        "the calls not started waited for the worker"
    );
    assert_eq!(*delivered.lock().unwrap(), [Outcome::Timeout; 2]);
}
