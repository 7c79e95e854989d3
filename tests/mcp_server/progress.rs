//! Progress reports: to the host's event hook for a local call, to an MCP
//! client that asked with a progressToken, and from a mounted server's
//! notifications to the host of the mount.

use std::sync::{Arc, Mutex};

use crate::helpers::*;
use capstan::observe::{Event, EventKind};
use capstan::progress::Progress;

type Seen = Arc<Mutex<Vec<(String, f64, Option<f64>, Option<String>)>>>;

fn watch(reg: &Registry) -> Seen {
    let seen: Seen = Arc::default();
    let s = seen.clone();
    reg.set_event_hook(Some(Arc::new(move |e: &Event| {
        if e.kind == EventKind::Progress {
            let p = e.progress.expect("a progress event carries its report");
            s.lock()
                .unwrap()
                .push((e.tool.to_string(), p.progress, p.total, p.message.clone()));
        }
    })))
    .unwrap();
    seen
}

fn report(progress: f64, total: Option<f64>, message: &str) -> Progress {
    Progress {
        progress,
        total,
        message: Some(message.into()),
    }
}

/// `steps` reports 1/3 "one" and 2/3 "two", then answers "done".
fn steps_registry() -> Registry {
    let reg = Registry::default();
    reg.register(def("steps", json!({"type": "object"}), |call| {
        call.report_progress(&report(1.0, Some(3.0), "one"))
            .unwrap();
        call.report_progress(&report(2.0, Some(3.0), "two"))
            .unwrap();
        call.complete_text("done").unwrap();
    }))
    .unwrap();
    reg
}

fn expected(tool: &str) -> Vec<(String, f64, Option<f64>, Option<String>)> {
    vec![
        (tool.into(), 1.0, Some(3.0), Some("one".into())),
        (tool.into(), 2.0, Some(3.0), Some("two".into())),
    ]
}

#[test]
fn a_local_calls_progress_reaches_the_event_hook_in_order() {
    let reg = steps_registry();
    let seen = watch(&reg);
    let r = call(&reg, "steps", json!({}));
    assert_eq!(r.content, "done");
    assert_eq!(*seen.lock().unwrap(), expected("steps"));
}

#[test]
fn progress_that_does_not_grow_or_comes_after_the_result_is_refused() {
    let reg = Registry::default();
    let outcome = Arc::new(Mutex::new(Vec::new()));
    let o = outcome.clone();
    reg.register(def("t", json!({"type": "object"}), move |call| {
        let mut o = o.lock().unwrap();
        o.push(call.report_progress(&report(2.0, None, "a")).is_ok());
        o.push(call.report_progress(&report(2.0, None, "again")).is_ok());
        o.push(call.report_progress(&report(1.0, None, "back")).is_ok());
        let later = call.clone();
        call.complete_text("ok").unwrap();
        o.push(matches!(
            later.report_progress(&report(3.0, None, "late")),
            Err(capstan::Error::AlreadyCompleted(_))
        ));
    }))
    .unwrap();
    let seen = watch(&reg);
    call(&reg, "t", json!({}));
    assert_eq!(*outcome.lock().unwrap(), [true, false, false, true]);
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "only the valid report went out"
    );
}

#[test]
fn a_mounted_servers_progress_reaches_the_mounting_hosts_event_hook() {
    let served = steps_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let client = Registry::default();
    let seen = watch(&client);
    let mount = mount(&client, server.url(), vec![]).expect("mount");
    let r = call(&client, "s_steps", json!({}));
    assert_eq!(
        (r.outcome, r.content.as_str()),
        (Outcome::Ok, "done"),
        "{r:?}"
    );
    assert_eq!(*seen.lock().unwrap(), expected("s_steps"));
    mount.unmount();
    assert!(server.stop());
}

#[test]
fn a_client_that_asks_for_no_progress_gets_no_notification() {
    let served = steps_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let session = raw_session(server.url());
    let request = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"steps","arguments":{}}}"#;
    let (status, _, body) = raw_exchange(server.url(), &[("Mcp-Session-Id", &session)], request);
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains("notifications/progress"), "{body}");
    let asking = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"steps","arguments":{},"_meta":{"progressToken":"tok"}}}"#;
    let (status, _, body) = raw_exchange(server.url(), &[("Mcp-Session-Id", &session)], asking);
    assert_eq!(status, 200, "{body}");
    let first = body.find("notifications/progress").expect("progress sent");
    assert!(body.contains(r#""progressToken":"tok""#), "{body}");
    assert!(body.contains(r#""message":"two""#), "{body}");
    assert!(
        first < body.find(r#""result""#).expect("result"),
        "progress before the result: {body}"
    );
    assert!(server.stop());
}
