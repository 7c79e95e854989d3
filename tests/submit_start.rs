//! Where a submitted batch starts (issue #26): at once on pool threads,
//! with no timer and whatever the submitting thread did with its earlier
//! batches; with `start_on_wait`, on the thread that waits, and on the pool
//! if no one does. Its own test binary: `live_timers` is process-wide.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use capstan::exec::live_timers;
use capstan::{
    submit, Call, CallRequest, ExecOptions, Outcome, Registry, Sink, ToolDef, ToolFlags,
};
use serde_json::json;

/// A tool that reports the thread it runs on and the call, and leaves the
/// call open for the test to complete.
fn holding_registry() -> (Registry, mpsc::Receiver<(std::thread::ThreadId, Call)>) {
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let reg = Registry::default();
    reg.register(ToolDef {
        name: "hold".into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(move |c: Call| {
            let _ = tx.lock().unwrap().send((std::thread::current().id(), c));
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags(0),
    })
    .unwrap();
    reg.register(ToolDef {
        name: "echo".into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(|c: Call| c.complete_text("ok").unwrap()),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags(0),
    })
    .unwrap();
    (reg, rx)
}

fn one(name: &str) -> Vec<CallRequest> {
    vec![CallRequest::new("c0", name, json!({}))]
}

fn counting_sink() -> (Sink, Arc<Mutex<Vec<Outcome>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let sink = Sink::Callback(Box::new(move |_, r| s2.lock().unwrap().push(r.outcome)));
    (sink, seen)
}

/// Both rules in one test: `live_timers` counts every timer of the process.
#[test]
fn a_submitted_batch_starts_on_the_pool_at_once_unless_the_host_says_it_will_wait() {
    let (reg, started) = holding_registry();
    let me = std::thread::current().id();

    // A batch this thread waited for, run by this thread (start_on_wait):
    // the next batch, submitted without the flag, still starts on the pool
    // at once. (A guess from the thread's history would have held it back
    // for the waiting thread, behind a join timer.)
    let waited = ExecOptions {
        start_on_wait: true,
        ..Default::default()
    };
    let (sink, seen) = counting_sink();
    let batch = submit(&reg, one("echo"), &waited, sink, None);
    assert!(batch.wait(None));
    assert_eq!(*seen.lock().unwrap(), [Outcome::Ok]);
    assert_eq!(live_timers(), 0, "the join timer went with the batch");

    for round in 0..3 {
        let (sink, seen) = counting_sink();
        let batch = submit(&reg, one("hold"), &ExecOptions::default(), sink, None);
        // No timer: the call was handed to a pool thread by the submit.
        assert_eq!(live_timers(), 0, "round {round}: a submit armed a timer");
        let (thread, call) = started
            .recv_timeout(Duration::from_secs(20))
            .expect("the call never started");
        assert_ne!(thread, me, "round {round}: ran on the submitting thread");
        call.complete_text("done").unwrap();
        assert!(batch.wait(Some(Duration::from_secs(20))));
        assert_eq!(*seen.lock().unwrap(), [Outcome::Ok]);
    }

    // With the flag and no one waiting, the calls still run: on the pool,
    // once the join timer passes.
    let (sink, seen) = counting_sink();
    let batch = submit(&reg, one("hold"), &waited, sink, None);
    let (thread, call) = started
        .recv_timeout(Duration::from_secs(20))
        .expect("a start_on_wait batch no one waits for never started");
    assert_ne!(thread, me);
    call.complete_text("done").unwrap();
    assert!(batch.wait(Some(Duration::from_secs(20))));
    assert_eq!(*seen.lock().unwrap(), [Outcome::Ok]);
    // The join timer fired (that is what started the call): the timer
    // thread releases it once its job returns, which may be just after the
    // call it started has finished.
    let released = Instant::now() + Duration::from_secs(20);
    while live_timers() != 0 && Instant::now() < released {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(live_timers(), 0, "the fired join timer was never released");
}
