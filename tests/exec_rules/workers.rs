//! Which threads run a batch: fan-out, caller-runs, sequential batches,
//! a worker stuck past its timeout.

use super::*;

/// A tool whose calls each wait (at most `PATIENCE`) until `n` calls have
/// started, then report whether they all had: "together" only if the calls
/// ran side by side.
fn rendezvous_tool(name: &str, n: usize) -> ToolDef {
    let started = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    def(name, 0, 0, move |call| {
        use std::sync::atomic::Ordering;
        started.fetch_add(1, Ordering::SeqCst);
        let together = eventually(PATIENCE / 4, || started.load(Ordering::SeqCst) >= n);
        call.complete_text(if together { "together" } else { "alone" })
            .unwrap();
    })
}

#[test]
fn a_submitted_batch_nobody_waits_for_runs_its_calls_side_by_side() {
    // Rounds from one thread: the first batch of a thread and one after a
    // batch that ran without it start on the pool in different ways; both
    // fan out to the limit. The third needs more threads than went idle.
    for (round, n) in [4, 4, 8].into_iter().enumerate() {
        let reg = Registry::default();
        reg.register(rendezvous_tool("meet", n)).unwrap();
        let calls = (0..n)
            .map(|i| CallRequest::new(format!("m{i}"), "meet", json!({})))
            .collect();
        let batch = submit(&reg, calls, &ExecOptions::default(), Sink::Queue, None);
        assert_eq!((batch.len(), batch.is_empty()), (n, false));
        // Not a wait that runs calls: only watch the results arrive.
        assert!(
            eventually(PATIENCE, || batch.is_done()),
            "round {round}: the batch ends"
        );
        let results = batch.poll(10);
        assert_eq!(results.len(), n);
        for (_, result) in results {
            assert_eq!(result.content, "together", "round {round}: {result:?}");
        }
    }
    let reg = Registry::default();
    let empty = submit(&reg, Vec::new(), &ExecOptions::default(), Sink::Queue, None);
    assert_eq!((empty.len(), empty.is_empty()), (0, true));
}

#[test]
fn a_call_stuck_past_its_timeout_is_replaced_and_does_not_raise_the_limit_once_it_returns() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let reg = Registry::default();
    let stuck_back = Arc::new(AtomicBool::new(false));
    let stuck_thread = Arc::new(Mutex::new(None));
    let (back, thread) = (stuck_back.clone(), stuck_thread.clone());
    // Ignores its 20 ms timeout and holds its thread for 150 ms.
    reg.register(def("stuck", 20, 0, move |call| {
        *thread.lock().unwrap() = Some(std::thread::current().id());
        std::thread::sleep(Duration::from_millis(150));
        back.store(true, Ordering::SeqCst);
        let _ = call.complete_text("late");
    }))
    .unwrap();
    // Steps: how many ran at once, how many ran on the stuck call's thread
    // after it came back, and how many finished while it was stuck.
    let (now, most, after_back, meanwhile) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let (n, m, o, w, b) = (
        now.clone(),
        most.clone(),
        after_back.clone(),
        meanwhile.clone(),
        stuck_back.clone(),
    );
    let thread = stuck_thread.clone();
    let ran_meanwhile = Arc::new(Mutex::new(Vec::new()));
    let ids = ran_meanwhile.clone();
    reg.register(def("step", 0, 0, move |call| {
        let inside = n.fetch_add(1, Ordering::SeqCst) + 1;
        m.fetch_max(inside, Ordering::SeqCst);
        if *thread.lock().unwrap() == Some(std::thread::current().id()) {
            o.fetch_add(1, Ordering::SeqCst);
        }
        std::thread::sleep(Duration::from_millis(30));
        if !b.load(Ordering::SeqCst) {
            w.fetch_add(1, Ordering::SeqCst);
            ids.lock().unwrap().push(call.id().to_string());
        }
        n.fetch_sub(1, Ordering::SeqCst);
        call.complete_text("ok").unwrap();
    }))
    .unwrap();
    // Run by the batch's own thread (execute) and by pool workers only
    // (submit, and a wait that only watches).
    for (parallel, by_pool) in [(false, false), (true, false), (false, true), (true, true)] {
        for counter in [&most, &after_back, &meanwhile] {
            counter.store(0, Ordering::SeqCst);
        }
        stuck_back.store(false, Ordering::SeqCst);
        *stuck_thread.lock().unwrap() = None;
        ran_meanwhile.lock().unwrap().clear();
        let options = ExecOptions {
            parallel,
            limit: 2,
            ..ExecOptions::default()
        };
        let mut calls = vec![CallRequest::new("s", "stuck", json!({}))];
        calls.extend((0..10).map(|i| CallRequest::new(format!("p{i}"), "step", json!({}))));
        let results: Vec<ToolResult> = if by_pool {
            let batch = submit(&reg, calls, &options, Sink::Queue, None);
            assert!(batch.wait(Some(PATIENCE)));
            let mut got = batch.poll(100);
            got.sort_by_key(|(i, _)| *i);
            got.into_iter().map(|(_, r)| r).collect()
        } else {
            execute(&reg, calls, &options)
        };
        assert_eq!(results[0].outcome, Outcome::Timeout);
        assert!(results[1..].iter().all(|r| r.outcome == Outcome::Ok));
        let case = format!("parallel={parallel} by_pool={by_pool}");
        // The batch went on without the stuck call once it timed out.
        assert!(
            meanwhile.load(Ordering::SeqCst) >= 1,
            "{case}: nothing ran meanwhile"
        );
        // The stuck call's thread, back, starts nothing more: its
        // replacement took over, and the limit holds throughout.
        assert_eq!(after_back.load(Ordering::SeqCst), 0, "{case}");
        let limit = if parallel { 2 } else { 1 };
        assert!(
            most.load(Ordering::SeqCst) <= limit,
            "{case}: {} steps ran at once",
            most.load(Ordering::SeqCst)
        );
        if by_pool {
            // Calls are claimed in chunks: p0 was claimed with the stuck
            // call (11 calls, one worker: chunks of 2), yet did not wait for
            // it to come back.
            assert!(
                ran_meanwhile.lock().unwrap().contains(&"p0".to_string()),
                "{case}: p0 waited for the stuck call: {:?}",
                ran_meanwhile.lock().unwrap()
            );
        }
    }
}

#[test]
fn calls_claimed_behind_a_stuck_call_start_even_when_no_other_call_is_left_to_claim() {
    use std::sync::atomic::{AtomicBool, Ordering};
    // 16 calls, limit 2: the first worker claims calls 0 and 1 together.
    // Call 0 ignores its 100 ms timeout for 2 s; the other worker meanwhile
    // takes every other call. Call 1 must not wait for call 0's thread.
    let reg = Registry::default();
    let stuck_back = Arc::new(AtomicBool::new(false));
    let back = stuck_back.clone();
    reg.register(def("stuck", 100, 0, move |call| {
        std::thread::sleep(Duration::from_secs(2));
        back.store(true, Ordering::SeqCst);
        let _ = call.complete_text("late");
    }))
    .unwrap();
    let back = stuck_back.clone();
    reg.register(def("quick", 0, 0, move |call| {
        let text = if back.load(Ordering::SeqCst) {
            "after"
        } else {
            "meanwhile"
        };
        call.complete_text(text).unwrap();
    }))
    .unwrap();
    let mut calls = vec![CallRequest::new("s", "stuck", json!({}))];
    calls.extend((1..16).map(|i| CallRequest::new(format!("q{i}"), "quick", json!({}))));
    let options = ExecOptions {
        limit: 2,
        ..ExecOptions::default()
    };
    let batch = submit(&reg, calls, &options, Sink::Queue, None);
    assert!(batch.wait(Some(PATIENCE)), "the batch ends");
    let mut got = batch.poll(100);
    got.sort_by_key(|(i, _)| *i);
    assert_eq!(got.len(), 16);
    assert_eq!(got[0].1.outcome, Outcome::Timeout);
    for (i, result) in &got[1..] {
        assert_eq!(result.content, "meanwhile", "call {i}: {result:?}");
    }
}

#[test]
fn a_lone_call_without_a_timeout_runs_on_the_thread_that_executes_it() {
    let reg = Registry::default();
    let ran_on = thread_recording(&reg, "here", 0, "ok");
    for _ in 0..3 {
        execute(
            &reg,
            vec![CallRequest::new("1", "here", json!({}))],
            &ExecOptions::default(),
        );
    }
    let me = std::thread::current().id();
    assert_eq!(*ran_on.lock().unwrap(), vec![me; 3]);
}

#[test]
fn a_sequential_batch_of_calls_with_timeouts_runs_them_one_at_a_time() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let reg = Registry::default();
    let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (n, m) = (now.clone(), most.clone());
    // A timeout sends each call to the pool while the batch's thread waits
    // for its result before it starts the next.
    reg.register(def("timed", 10_000, 0, move |call| {
        m.fetch_max(n.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(10));
        n.fetch_sub(1, Ordering::SeqCst);
        call.complete_text("ok").unwrap();
    }))
    .unwrap();
    let calls = (0..6)
        .map(|i| CallRequest::new(format!("t{i}"), "timed", json!({})))
        .collect();
    let sequential = ExecOptions {
        parallel: false,
        ..ExecOptions::default()
    };
    let results = execute(&reg, calls, &sequential);
    assert!(
        results.iter().all(|r| r.outcome == Outcome::Ok),
        "{results:?}"
    );
    assert_eq!(most.load(Ordering::SeqCst), 1);
}
