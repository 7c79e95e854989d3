//! `runtime::shutdown` waits for capstan's threads and the callbacks they
//! run: from inside a callback it would wait for itself, so it is refused
//! there. Its own test binary: shutdown is process-wide.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capstan::{
    execute, submit, Call, CallRequest, Error, ExecOptions, Registry, Sink, ToolDef, ToolFlags,
};
use serde_json::json;

/// Long enough for any loaded machine; reached only when a test fails.
const PATIENCE: Duration = Duration::from_secs(60);

/// A tool whose callback calls `shutdown` with no time limit and sends
/// back what it returned.
fn shutting_down(name: &str, tx: mpsc::Sender<Result<(), Error>>) -> ToolDef {
    let tx = Mutex::new(tx);
    ToolDef {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(move |c: Call| {
            let _ = tx.lock().unwrap().send(capstan::runtime::shutdown(None));
            c.complete_text("ok").unwrap();
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    }
}

fn refused(outcome: Result<Result<(), Error>, mpsc::RecvTimeoutError>, from: &str) {
    match outcome {
        Ok(Err(Error::WrongContext(why))) => {
            assert!(why.contains("wait for itself"), "{why}");
        }
        Ok(other) => panic!("shutdown from {from} returned {other:?}"),
        Err(_) => panic!("shutdown from {from} never returned"),
    }
}

#[test]
fn shutdown_from_a_callback_is_refused_and_returns() {
    let reg = Registry::default();
    let (tx, rx) = mpsc::channel();
    reg.register(shutting_down("stop", tx)).unwrap();
    let call = || vec![CallRequest::new("1", "stop", json!({}))];

    // A tool callback on a pool thread (a submitted batch no one waits for).
    let batch = submit(&reg, call(), &ExecOptions::default(), Sink::Queue, None);
    refused(
        rx.recv_timeout(PATIENCE),
        "a tool callback on a pool thread",
    );
    assert!(batch.wait(Some(PATIENCE)));

    // A tool callback on the host's own thread (a lone call of `execute`).
    let results = execute(&reg, call(), &ExecOptions::default());
    assert_eq!(results[0].content, "ok");
    refused(
        rx.try_recv().map_err(|_| mpsc::RecvTimeoutError::Timeout),
        "a tool callback on the host's thread",
    );

    // A result callback on a pool thread.
    reg.register(ToolDef {
        name: "echo".into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(|c: Call| c.complete_text("ok").unwrap()),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    })
    .unwrap();
    let (rtx, rrx) = mpsc::channel();
    let rtx = Arc::new(Mutex::new(rtx));
    let sink = Sink::Callback(Box::new(move |_, _| {
        let _ = rtx.lock().unwrap().send(capstan::runtime::shutdown(None));
    }));
    let echo = vec![CallRequest::new("1", "echo", json!({}))];
    let batch = submit(&reg, echo, &ExecOptions::default(), sink, None);
    refused(rrx.recv_timeout(PATIENCE), "a result callback");
    assert!(batch.wait(Some(PATIENCE)));

    // From the host's thread, outside any callback, it runs.
    drop(batch);
    assert!(capstan::runtime::shutdown(Some(PATIENCE)).is_ok());
    assert_eq!(capstan::runtime::live_threads(), 0);
}
