//! Non-blocking execution: callbacks as results finish, polling on the host's
//! thread, cancellation, detaching, main-thread tools and wake-ups.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capstan::exec::pump;
use capstan::{
    submit, CallRequest, ExecOptions, Outcome, Registry, Sink, ToolDef, ToolFlags, ToolResult,
};
use serde_json::json;

fn def(name: &str, flags: u32, f: impl Fn(capstan::Call) + Send + Sync + 'static) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(f),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags(flags),
    }
}

fn calls(name: &str, n: usize) -> Vec<CallRequest> {
    (0..n)
        .map(|i| CallRequest::new(format!("c{i}"), name, json!({})))
        .collect()
}

fn echo_registry() -> Registry {
    let reg = Registry::default();
    reg.register(def("echo", 0, |c| {
        let id = c.id().to_string();
        c.complete_text(id).unwrap()
    }))
    .unwrap();
    reg
}

type Seen = Arc<Mutex<Vec<(usize, ToolResult)>>>;

fn collecting_sink() -> (Sink, Seen) {
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    (
        Sink::Callback(Box::new(move |i, r| s2.lock().unwrap().push((i, r)))),
        seen,
    )
}

#[test]
fn every_result_arrives_once_with_its_index_then_done_once() {
    let reg = echo_registry();
    let (sink, seen) = collecting_sink();
    let done = Arc::new(AtomicUsize::new(0));
    let d2 = done.clone();
    let seen2 = seen.clone();
    let batch = submit(
        &reg,
        calls("echo", 50),
        &ExecOptions::default(),
        sink,
        Some(Box::new(move || {
            // Done comes after every result was handed over.
            assert_eq!(seen2.lock().unwrap().len(), 50);
            d2.fetch_add(1, Ordering::SeqCst);
        })),
    );
    assert!(batch.wait(Some(Duration::from_secs(10))));
    assert_eq!(done.load(Ordering::SeqCst), 1);
    let mut got = seen.lock().unwrap().clone();
    got.sort_by_key(|(i, _)| *i);
    assert_eq!(got.len(), 50);
    for (k, (i, r)) in got.iter().enumerate() {
        assert_eq!(*i, k);
        assert_eq!(r.content, format!("c{k}"));
    }
}

#[test]
fn an_empty_batch_is_done_at_once() {
    let reg = echo_registry();
    let done = Arc::new(AtomicUsize::new(0));
    let d2 = done.clone();
    let batch = submit(
        &reg,
        vec![],
        &ExecOptions::default(),
        Sink::Queue,
        Some(Box::new(move || {
            d2.fetch_add(1, Ordering::SeqCst);
        })),
    );
    assert!(batch.wait(Some(Duration::ZERO)));
    assert_eq!(done.load(Ordering::SeqCst), 1);
}

#[test]
fn poll_delivery_hands_results_over_on_the_polling_thread() {
    let reg = echo_registry();
    let batch = submit(
        &reg,
        calls("echo", 10),
        &ExecOptions::default(),
        Sink::Queue,
        None,
    );
    assert!(batch.wait(Some(Duration::from_secs(10))));
    assert!(!batch.poll_end(), "not over until every result was polled");
    let first = batch.poll(4);
    assert_eq!(first.len(), 4);
    let rest = batch.poll(100);
    assert_eq!(rest.len(), 6);
    assert!(batch.poll_end());
    assert!(!batch.poll_end(), "the end is told once");
    let mut idx: Vec<usize> = first.iter().chain(&rest).map(|(i, _)| *i).collect();
    idx.sort();
    assert_eq!(idx, (0..10).collect::<Vec<_>>());
}

#[test]
fn cancel_stops_pending_calls_and_running_ones_see_it() {
    let reg = Registry::default();
    let started = Arc::new(AtomicUsize::new(0));
    let s2 = started.clone();
    reg.register(def("wait_cancel", 0, move |c| {
        s2.fetch_add(1, Ordering::SeqCst);
        while !c.is_cancelled() {
            std::thread::sleep(Duration::from_millis(1));
        }
        c.complete_text("stopped early").unwrap();
    }))
    .unwrap();
    let (sink, seen) = collecting_sink();
    let opts = ExecOptions {
        limit: 2,
        ..Default::default()
    };
    let batch = submit(&reg, calls("wait_cancel", 10), &opts, sink, None);
    while started.load(Ordering::SeqCst) < 2 {
        std::thread::sleep(Duration::from_millis(1));
    }
    batch.cancel();
    assert!(batch.wait(Some(Duration::from_secs(10))));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 10, "exactly one result per call");
    let ok = seen
        .iter()
        .filter(|(_, r)| r.outcome == Outcome::Ok)
        .count();
    let cancelled = seen
        .iter()
        .filter(|(_, r)| r.outcome == Outcome::Cancelled)
        .count();
    assert_eq!(ok, started.load(Ordering::SeqCst));
    assert_eq!(ok + cancelled, 10);
    assert!(cancelled >= 8 - 2, "pending calls never started");
}

#[test]
fn detach_stops_callbacks_but_calls_still_finish() {
    let reg = Registry::default();
    let gate = Arc::new(Mutex::new(()));
    let held = gate.lock().unwrap();
    let g2 = gate.clone();
    let ran = Arc::new(AtomicUsize::new(0));
    let r2 = ran.clone();
    reg.register(def("gated", 0, move |c| {
        let _g = g2.lock().unwrap();
        r2.fetch_add(1, Ordering::SeqCst);
        c.complete_text("x").unwrap();
    }))
    .unwrap();
    let (sink, seen) = collecting_sink();
    let batch = submit(&reg, calls("gated", 3), &ExecOptions::default(), sink, None);
    batch.detach();
    drop(held);
    drop(batch);
    while ran.load(Ordering::SeqCst) < 3 {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(20));
    assert!(seen.lock().unwrap().is_empty(), "no callback after detach");
}

#[test]
fn main_thread_tools_run_only_inside_pump_on_the_pumping_thread() {
    let reg = Registry::default();
    let where_ran = Arc::new(Mutex::new(Vec::new()));
    let w2 = where_ran.clone();
    reg.register(def("ui", ToolFlags::MAIN_THREAD, move |c| {
        w2.lock().unwrap().push(std::thread::current().id());
        c.complete_text("drawn").unwrap();
    }))
    .unwrap();
    let wakes = Arc::new(AtomicUsize::new(0));
    let wk = wakes.clone();
    reg.set_notify(Some(Arc::new(move || {
        wk.fetch_add(1, Ordering::SeqCst);
    })))
    .unwrap();
    let batch = submit(
        &reg,
        calls("ui", 3),
        &ExecOptions::default(),
        Sink::Queue,
        None,
    );
    std::thread::sleep(Duration::from_millis(30));
    assert!(
        where_ran.lock().unwrap().is_empty(),
        "nothing runs before pump"
    );
    assert!(wakes.load(Ordering::SeqCst) >= 1, "the host was woken");
    let mut ran = 0;
    while ran < 3 {
        ran += pump(&reg, Duration::from_millis(5));
    }
    assert!(batch.wait(Some(Duration::from_secs(5))));
    let me = std::thread::current().id();
    assert!(where_ran.lock().unwrap().iter().all(|t| *t == me));
    assert_eq!(batch.poll(10).len(), 3);
}

#[cfg(target_os = "linux")]
#[test]
fn wake_fd_becomes_readable_when_a_polled_result_is_queued() {
    let reg = echo_registry();
    let fd = reg.wake_fd().unwrap();
    let batch = submit(
        &reg,
        calls("echo", 1),
        &ExecOptions::default(),
        Sink::Queue,
        None,
    );
    assert!(batch.wait(Some(Duration::from_secs(5))));
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut pfd, 1, 1000) };
    assert_eq!(n, 1);
    let mut buf = [0u8; 8];
    // SAFETY: reads 8 bytes into a live buffer.
    let r = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), 8) };
    assert_eq!(r, 8);
    assert!(u64::from_ne_bytes(buf) >= 1);
}

#[test]
fn start_inline_starts_every_call_before_submit_returns_without_waiting() {
    let reg = Registry::default();
    let held = Arc::new(Mutex::new(Vec::new()));
    let h2 = held.clone();
    let me = std::thread::current().id();
    reg.register(def("async_like", 0, move |c| {
        assert_eq!(
            std::thread::current().id(),
            me,
            "started on the submitting thread"
        );
        h2.lock().unwrap().push(c); // completed later, elsewhere
    }))
    .unwrap();
    let opts = ExecOptions {
        start_inline: true,
        limit: 1,
        ..Default::default()
    };
    let batch = submit(&reg, calls("async_like", 5), &opts, Sink::Queue, None);
    assert_eq!(
        held.lock().unwrap().len(),
        5,
        "all started, none awaited, limit ignored"
    );
    assert!(!batch.is_done());
    let pending: Vec<_> = held.lock().unwrap().drain(..).collect();
    std::thread::spawn(move || {
        for c in pending {
            c.complete_text("done").unwrap();
        }
    });
    assert!(batch.wait(Some(Duration::from_secs(5))));
    assert_eq!(batch.poll(10).len(), 5);
}

#[test]
fn start_inline_sends_serial_tools_to_the_pool_and_keeps_them_serial() {
    let reg = Registry::default();
    let held = Arc::new(Mutex::new(Vec::new()));
    let h2 = held.clone();
    let me = std::thread::current().id();
    reg.register(def("serial_async", ToolFlags::SERIAL, move |c| {
        assert_ne!(std::thread::current().id(), me, "not on the inline thread");
        h2.lock().unwrap().push(c);
    }))
    .unwrap();
    let opts = ExecOptions {
        start_inline: true,
        ..Default::default()
    };
    let batch = submit(&reg, calls("serial_async", 3), &opts, Sink::Queue, None);
    // Serial: the second call waits until the first one completes.
    for expected in 1..=3 {
        let start = std::time::Instant::now();
        while held.lock().unwrap().len() < expected {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "call {expected} never started"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(
            held.lock().unwrap().len(),
            expected,
            "only one call of a serial tool at a time"
        );
        let c = held.lock().unwrap()[expected - 1].clone();
        c.complete_text("ok").unwrap();
    }
    assert!(batch.wait(Some(Duration::from_secs(5))));
}

#[test]
fn batches_run_whether_or_not_their_thread_waits_for_them_in_any_order() {
    // A batch starts on the pool at once, or (start_on_wait) on the thread
    // that waits for it with no time limit. Either way, and when a thread
    // switches between the two and between timed and untimed waits, every
    // batch runs: a timed wait does not run calls, so the pool must.
    let reg = echo_registry();
    for round in 0..40 {
        let (sink, seen) = collecting_sink();
        let n = 1 + round % 3;
        let opts = ExecOptions {
            start_on_wait: round % 3 == 1,
            ..Default::default()
        };
        let batch = submit(&reg, calls("echo", n), &opts, sink, None);
        let untimed = round % 4 < 2;
        let done = if untimed {
            batch.wait(None)
        } else {
            batch.wait(Some(Duration::from_secs(20)))
        };
        assert!(done, "round {round}: batch of {n} never finished");
        assert_eq!(seen.lock().unwrap().len(), n, "round {round}");
    }
}

/// Runs `n` calls of a `MAIN_THREAD` tool that completes each call later, on
/// another thread, while this (main) thread pumps; returns the most calls
/// that were ever started and not yet completed, and the order they started.
fn main_thread_deferred_calls(n: usize, opts: &ExecOptions) -> (usize, Vec<String>) {
    let reg = Registry::default();
    let held: Arc<Mutex<Vec<capstan::Call>>> = Arc::new(Mutex::new(Vec::new()));
    let in_flight = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(Mutex::new(Vec::new()));
    let (h2, f2, m2, s2) = (
        held.clone(),
        in_flight.clone(),
        most.clone(),
        started.clone(),
    );
    reg.register(def("later", ToolFlags::MAIN_THREAD, move |c| {
        let now = f2.fetch_add(1, Ordering::SeqCst) + 1;
        m2.fetch_max(now, Ordering::SeqCst);
        s2.lock().unwrap().push(c.id().to_string());
        h2.lock().unwrap().push(c); // completed later, elsewhere
    }))
    .unwrap();
    let batch = submit(&reg, calls("later", n), opts, Sink::Queue, None);
    let (h3, f3) = (held.clone(), in_flight.clone());
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let completer = std::thread::spawn(move || {
        while !stop2.load(Ordering::SeqCst) {
            let ready: Vec<_> = h3.lock().unwrap().drain(..).collect();
            for c in ready {
                std::thread::sleep(Duration::from_millis(2));
                f3.fetch_sub(1, Ordering::SeqCst);
                c.complete_text("done").unwrap();
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    while !batch.is_done() {
        pump(&reg, Duration::from_millis(5));
    }
    stop.store(true, Ordering::SeqCst);
    completer.join().unwrap();
    let results = batch.poll(n + 1);
    assert_eq!(results.len(), n);
    assert!(results.iter().all(|(_, r)| r.outcome == Outcome::Ok));
    let order = started.lock().unwrap().clone();
    (most.load(Ordering::SeqCst), order)
}

#[test]
fn the_limit_bounds_main_thread_calls_that_complete_later() {
    let opts = ExecOptions {
        limit: 3,
        ..Default::default()
    };
    let (most, order) = main_thread_deferred_calls(12, &opts);
    assert_eq!(order.len(), 12);
    assert!(
        most <= 3,
        "{most} main-thread calls ran at once under limit 3"
    );
}

#[test]
fn sequential_main_thread_calls_run_one_at_a_time_in_order() {
    let opts = ExecOptions {
        parallel: false,
        ..Default::default()
    };
    let (most, order) = main_thread_deferred_calls(6, &opts);
    assert_eq!(most, 1, "sequential calls overlapped");
    let expected: Vec<String> = (0..6).map(|i| format!("c{i}")).collect();
    assert_eq!(order, expected);
}

/// Issue 49: a main-thread call nobody pumps, in a batch without a
/// deadline, ends by the pump-wait bound (`pump_wait_ms`, 60 s by default)
/// as a timeout that says no thread pumped, instead of waiting for ever.
#[test]
fn a_main_thread_call_nobody_pumps_ends_saying_so() {
    let reg = Registry::default();
    let ran = Arc::new(AtomicUsize::new(0));
    let r2 = ran.clone();
    reg.register(def("ui", ToolFlags::MAIN_THREAD, move |c| {
        r2.fetch_add(1, Ordering::SeqCst);
        c.complete_text("drawn").unwrap();
    }))
    .unwrap();
    reg.register(def("plain", 0, |c| c.complete_text("ok").unwrap()))
        .unwrap();
    let opts = ExecOptions {
        pump_wait_ms: 200,
        ..ExecOptions::default()
    };
    let mut list = calls("ui", 2);
    list.push(CallRequest::new("p", "plain", json!({})));
    let batch = submit(&reg, list, &opts, Sink::Queue, None);
    // Generous: the bound is 200 ms; a loaded machine may take far longer.
    assert!(
        batch.wait(Some(Duration::from_secs(60))),
        "the batch still waits for a pump"
    );
    let mut results = batch.poll(10);
    results.sort_by_key(|(i, _)| *i);
    assert_eq!(results.len(), 3);
    for (_, r) in &results[..2] {
        assert_eq!(r.outcome, Outcome::Timeout, "{}", r.content);
        assert!(
            r.content
                .contains("waited 200 ms for the host's main thread to call capstan_registry_pump"),
            "{}",
            r.content
        );
    }
    assert_eq!(results[2].1.outcome, Outcome::Ok);
    assert_eq!(ran.load(Ordering::SeqCst), 0, "no main-thread tool ran");
    // A pump now finds nothing of that batch to run.
    assert_eq!(pump(&reg, Duration::from_millis(1)), 0);
}
