//! Main-thread tools: who runs their calls, and how cancel and the deadline
//! end those still queued for a pump.

use super::*;

#[test]
fn a_thread_that_pumped_runs_its_own_batch_s_main_thread_calls_while_it_waits() {
    let reg = Registry::default();
    let ran_on = thread_recording(&reg, "ui", ToolFlags::MAIN_THREAD, "drawn");
    // Pumping once makes this thread a main thread of the registry: no one
    // else would run its batch's main-thread calls while it waits.
    assert_eq!(capstan::exec::pump(&reg, Duration::ZERO), 0);
    let calls = (0..3)
        .map(|i| CallRequest::new(format!("u{i}"), "ui", json!({})))
        .collect();
    let results = execute(&reg, calls, &ExecOptions::default());
    assert!(
        results.iter().all(|r| r.outcome == Outcome::Ok),
        "{results:?}"
    );
    let me = std::thread::current().id();
    let ran_on = ran_on.lock().unwrap().clone();
    assert_eq!(ran_on, vec![me; 3]);
}

#[test]
fn main_thread_calls_wait_for_the_main_thread_not_for_any_thread_that_waits() {
    let reg = Arc::new(Registry::default());
    let ran_on = thread_recording(&reg, "ui", ToolFlags::MAIN_THREAD, "drawn");
    assert_eq!(capstan::exec::pump(&reg, Duration::ZERO), 0);
    let main = std::thread::current().id();
    // Other threads run batches and wait (one submits, one executes, so it
    // starts the call itself): they never pumped, so they must not run the
    // calls; this main thread does, when it pumps.
    let submitter = {
        let reg = reg.clone();
        std::thread::spawn(move || {
            let batch = submit(
                &reg,
                vec![CallRequest::new("w", "ui", json!({}))],
                &ExecOptions::default(),
                Sink::Collect,
                None,
            );
            batch.wait(Some(PATIENCE))
        })
    };
    let executor = {
        let reg = reg.clone();
        std::thread::spawn(move || {
            let results = execute(
                &reg,
                vec![CallRequest::new("x", "ui", json!({}))],
                &ExecOptions::default(),
            );
            results[0].outcome == Outcome::Ok
        })
    };
    let mut ran = 0;
    assert!(
        eventually(PATIENCE, || {
            ran += capstan::exec::pump(&reg, Duration::from_millis(1));
            ran == 2
        }),
        "the calls reached the pump"
    );
    assert!(submitter.join().unwrap(), "the submitted batch ended");
    assert!(executor.join().unwrap(), "the executed batch ended");
    assert_eq!(*ran_on.lock().unwrap(), vec![main; 2]);
}

#[test]
fn another_batch_s_main_thread_calls_wait_for_a_pump_while_a_main_thread_runs_its_own() {
    let reg = Arc::new(Registry::default());
    let ran = Arc::new(Mutex::new(Vec::new()));
    let record = ran.clone();
    reg.register(def("ui", 0, ToolFlags::MAIN_THREAD, move |call| {
        record.lock().unwrap().push(call.id().to_string());
        call.complete_text("drawn").unwrap();
    }))
    .unwrap();
    let queued = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = queued.clone();
    reg.set_notify(Some(Arc::new(move || {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    })))
    .unwrap();
    assert_eq!(capstan::exec::pump(&reg, Duration::ZERO), 0);
    let other = submit(
        &reg,
        vec![
            CallRequest::new("theirs", "ui", json!({})),
            CallRequest::new("theirs too", "ui", json!({})),
        ],
        &ExecOptions::default(),
        Sink::Collect,
        None,
    );
    // Submitted here but left to the pool: wait until both calls are queued
    // (the notifier hears each).
    assert!(eventually(PATIENCE, || queued
        .load(std::sync::atomic::Ordering::SeqCst)
        >= 2));
    // Its own batch, its call queued by a pool worker like the others: the
    // main thread's wait takes that one, not the older ones of `other`.
    let mine = submit(
        &reg,
        vec![CallRequest::new("mine", "ui", json!({}))],
        &ExecOptions::default(),
        Sink::Queue,
        None,
    );
    assert!(mine.wait(Some(PATIENCE)));
    assert_eq!(mine.poll(1)[0].1.outcome, Outcome::Ok);
    assert_eq!(
        *ran.lock().unwrap(),
        vec!["mine"],
        "only its own batch's call"
    );
    assert!(!other.is_done());
    // Within its budget, one pump runs every queued call.
    assert_eq!(capstan::exec::pump(&reg, PATIENCE), 2);
    assert!(other.wait(Some(PATIENCE)));
    let mut ran = ran.lock().unwrap().clone();
    ran[1..].sort();
    assert_eq!(ran, vec!["mine", "theirs", "theirs too"]);
}

/// A registry with a main-thread tool `ui` that counts its runs, and a
/// submitted batch of `n` of its calls with `options`, queued for a pump
/// that never comes.
fn unpumped_batch(
    options: &ExecOptions,
    n: usize,
) -> (Registry, capstan::Batch, Arc<Mutex<usize>>) {
    let reg = Registry::default();
    let runs = Arc::new(Mutex::new(0));
    let count = runs.clone();
    reg.register(def("ui", 0, ToolFlags::MAIN_THREAD, move |call| {
        *count.lock().unwrap() += 1;
        call.complete_text("drawn").unwrap();
    }))
    .unwrap();
    let calls = (0..n)
        .map(|i| CallRequest::new(format!("u{i}"), "ui", json!({})))
        .collect();
    let batch = submit(&reg, calls, options, Sink::Queue, None);
    (reg, batch, runs)
}

#[test]
fn cancelling_a_batch_ends_its_calls_still_waiting_for_a_pump() {
    let (_reg, batch, runs) = unpumped_batch(&ExecOptions::default(), 2);
    std::thread::sleep(Duration::from_millis(20));
    assert!(!batch.is_done(), "main-thread calls wait for a pump");
    batch.cancel();
    assert_all_cancelled_unrun(&batch, &runs, 2, PATIENCE, "");
}

/// After `cancel`: the batch ends within `patience` without a pump, its `n`
/// results all cancelled, and no tool ran. `context` starts each message.
fn assert_all_cancelled_unrun(
    batch: &capstan::Batch,
    runs: &Mutex<usize>,
    n: usize,
    patience: Duration,
    context: &str,
) {
    assert!(
        batch.wait(Some(patience)),
        "{context}cancel ends them without a pump"
    );
    let results: Vec<_> = batch.poll(10).into_iter().map(|(_, r)| r).collect();
    assert_eq!(results.len(), n, "{context}");
    assert!(
        results.iter().all(|r| r.outcome == Outcome::Cancelled),
        "{context}{results:?}"
    );
    assert_eq!(*runs.lock().unwrap(), 0, "{context}no tool ran");
}

/// A cancel that comes while a pool thread is queuing the batch's calls for
/// a pump: a call queued just after cancel emptied the queue must see the
/// cancellation too, not wait for a pump that never comes (a Node.js test
/// hung in CI on it: `close` then waited forever for that call's tool). The
/// window is a few instructions wide, so the test tries it many times.
#[test]
fn a_cancel_racing_the_queuing_of_main_thread_calls_leaves_none_waiting_for_a_pump() {
    for round in 0..400 {
        let (_reg, batch, runs) = unpumped_batch(&ExecOptions::default(), 4);
        batch.cancel();
        let context = format!("round {round}: ");
        assert_all_cancelled_unrun(&batch, &runs, 4, Duration::from_secs(10), &context);
    }
}

#[test]
fn a_batch_deadline_ends_calls_still_waiting_for_a_pump_and_says_so() {
    let options = ExecOptions {
        deadline_ms: 20,
        ..ExecOptions::default()
    };
    let (_reg, batch, runs) = unpumped_batch(&options, 2);
    assert!(batch.wait(Some(PATIENCE)), "the deadline ends them");
    let results: Vec<_> = batch.poll(10).into_iter().map(|(_, r)| r).collect();
    assert_eq!(results.len(), 2);
    for r in &results {
        assert_eq!(r.outcome, Outcome::Timeout, "{r:?}");
        assert!(
            r.content.contains("deadline of 20 ms") && r.content.contains("capstan_registry_pump"),
            "{r:?}"
        );
    }
    assert_eq!(*runs.lock().unwrap(), 0, "no tool ran");
}
