//! Log messages (`Call::log`): to the host's event hook for a local call,
//! and to an MCP client that asked for them, at its level or above (a
//! legacy session's `logging/setLevel`, a modern request's `_meta`
//! `io.modelcontextprotocol/logLevel`); none to a client that did not ask.

use std::sync::{Arc, Mutex};

use crate::helpers::*;
use capstan::log::LogLevel;
use capstan::observe::{Event, EventKind};

/// `chatty` logs "d" (debug), "i" (info) and "w" (warning), then answers
/// "done".
fn chatty_registry() -> Registry {
    let reg = Registry::default();
    reg.register(def("chatty", json!({"type": "object"}), |call| {
        call.log(LogLevel::Debug, "d").unwrap();
        call.log(LogLevel::Info, "i").unwrap();
        call.log(LogLevel::Warning, "w").unwrap();
        call.complete_text("done").unwrap();
    }))
    .unwrap();
    reg
}

/// The `notifications/message` params in an SSE answer, in order.
fn logged(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"].clone())
        .collect()
}

fn levels(body: &str) -> Vec<(String, String, String)> {
    logged(body)
        .iter()
        .map(|p| {
            let s = |v: &Value| v.as_str().unwrap_or("?").to_owned();
            (s(&p["level"]), s(&p["data"]), s(&p["logger"]))
        })
        .collect()
}

#[test]
fn a_local_calls_log_reaches_the_event_hook_in_order_and_bad_ones_are_refused() {
    let reg = chatty_registry();
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let o = outcomes.clone();
    reg.register(def("late", json!({"type": "object"}), move |call| {
        let long = "x".repeat(capstan::log::MAX_LOG_BYTES + 1);
        let mut o = o.lock().unwrap();
        o.push(matches!(
            call.log(LogLevel::Info, &long),
            Err(capstan::Error::InvalidArgument(_))
        ));
        let later = call.clone();
        call.complete_text("ok").unwrap();
        o.push(matches!(
            later.log(LogLevel::Info, "after"),
            Err(capstan::Error::AlreadyCompleted(_))
        ));
    }))
    .unwrap();
    let seen: Arc<Mutex<Vec<(String, LogLevel, String)>>> = Arc::default();
    let s = seen.clone();
    reg.set_event_hook(Some(Arc::new(move |e: &Event| {
        if e.kind == EventKind::Log {
            let (level, message) = e.log.expect("a log event carries its message");
            s.lock()
                .unwrap()
                .push((e.tool.to_owned(), level, message.to_owned()));
        }
    })))
    .unwrap();
    assert_eq!(call(&reg, "chatty", json!({})).content, "done");
    assert_eq!(call(&reg, "late", json!({})).content, "ok");
    let c = |level, m: &str| ("chatty".to_owned(), level, m.to_owned());
    assert_eq!(
        *seen.lock().unwrap(),
        [
            c(LogLevel::Debug, "d"),
            c(LogLevel::Info, "i"),
            c(LogLevel::Warning, "w")
        ],
        "the refused ones went nowhere"
    );
    assert_eq!(*outcomes.lock().unwrap(), [true, true]);
}

/// A legacy session hears notifications that belong to no request (rmcp
/// routes a log message there) on its GET stream: read in a thread.
fn listen(url: &str, session: &str) -> Arc<Mutex<String>> {
    let heard = Arc::new(Mutex::new(String::new()));
    let into = heard.clone();
    let mut stream = send_raw("GET", url, &[("Mcp-Session-Id", session)], "");
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                break;
            }
            into.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    heard
}

/// The `data:` lines of an SSE text, each on a line of its own (a chunked
/// GET stream's chunk sizes dropped).
fn data_lines(text: &str) -> String {
    text.lines()
        .filter(|l| l.starts_with("data: "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_legacy_session_gets_logs_at_the_level_it_set_and_none_before() {
    let served = chatty_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url();
    let session = raw_session(url);
    let heard = listen(url, &session);
    let open = eventually(PATIENCE, || {
        heard.lock().unwrap().starts_with("HTTP/1.1 200")
    });
    assert!(open, "the GET stream opened: {}", heard.lock().unwrap());
    let headers = [("Mcp-Session-Id", session.as_str())];
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chatty","arguments":{}}}"#;
    let (status, _, body) = raw_exchange(url, &headers, call);
    assert_eq!(status, 200, "{body}");
    assert_eq!(levels(&body), [], "no level set, no logs: {body}");

    let set = r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}"#;
    let (status, _, body) = raw_exchange(url, &headers, set);
    assert_eq!(status, 200, "{body}");
    assert_eq!(message(&body)["result"], json!({}), "{body}");
    let (_, _, body) = raw_exchange(url, &headers, &call.replace("\"id\":2", "\"id\":4"));
    assert_eq!(
        message(&body)["result"]["content"][0]["text"],
        "done",
        "{body}"
    );
    let l = |level: &str, data: &str| (level.to_owned(), data.to_owned(), "chatty".to_owned());
    let want = [l("info", "i"), l("warning", "w")];
    let mut got = Vec::new();
    let arrived = eventually(PATIENCE, || {
        got = levels(&data_lines(&heard.lock().unwrap()));
        got.len() >= want.len()
    });
    assert!(arrived, "{got:?}");
    assert_eq!(got, want, "the session's stream had only these, in order");
    assert!(server.stop());
}

#[test]
fn a_modern_request_gets_logs_at_the_level_in_its_meta_and_set_level_is_gone() {
    let served = chatty_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url();
    let modern = |meta_level: Option<&str>| {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        if let Some(level) = meta_level {
            meta["io.modelcontextprotocol/logLevel"] = json!(level);
        }
        let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "chatty", "arguments": {}, "_meta": meta}})
        .to_string();
        let headers = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "chatty"),
        ];
        raw_exchange(url, &headers, &body).2
    };
    assert_eq!(levels(&modern(None)), [], "no logLevel, no logs");
    let body = modern(Some("warning"));
    let l = |level: &str, data: &str| (level.to_owned(), data.to_owned(), "chatty".to_owned());
    assert_eq!(levels(&body), [l("warning", "w")], "{body}");
    let body = modern(Some("debug"));
    assert_eq!(
        levels(&body),
        [l("debug", "d"), l("info", "i"), l("warning", "w")],
        "{body}"
    );

    let set = json!({"jsonrpc": "2.0", "id": 6, "method": "logging/setLevel", "params": {
        "level": "info", "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "logging/setLevel"),
    ];
    let (_, _, body) = raw_exchange(url, &headers, &set);
    assert_eq!(message(&body)["error"]["code"], -32601, "{body}");
    assert!(server.stop());
}

/// Issue 45: a legacy session that asked for logs and held a GET stream it
/// did not read stalled every later answer of the session once the stream
/// filled. A slow log reader loses log messages, and is told how many;
/// its answers still come.
#[test]
fn a_session_that_does_not_read_its_get_stream_loses_log_messages_never_answers() {
    let served = Registry::default();
    served
        .register(def("loud", json!({"type": "object"}), |call| {
            let text = "x".repeat(16 * 1024);
            for _ in 0..64 {
                let _ = call.log(LogLevel::Info, &text);
            }
            call.complete_text("done").unwrap();
        }))
        .unwrap();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url();
    let session = raw_session(url);
    let headers = [("Mcp-Session-Id", session.as_str())];
    let set = r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}"#;
    let (status, _, body) = raw_exchange(url, &headers, set);
    assert_eq!(status, 200, "{body}");
    // Opened, never read until every answer came.
    let mut stream = send_raw("GET", url, &headers, "");
    for id in 10..40 {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"loud","arguments":{{}}}}}}"#
        );
        // In a thread: a stalled answer keeps its stream open for ever
        // (rmcp's keep-alive), which no read timeout would end.
        let (tx, rx) = std::sync::mpsc::channel();
        let (url, session) = (url.to_string(), session.clone());
        std::thread::spawn(move || {
            let _ = tx.send(raw_exchange(&url, &[("Mcp-Session-Id", &session)], &call));
        });
        let (status, _, body) = rx
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("no answer to call {id}: the session stalled"));
        assert_eq!(status, 200, "{body}");
        let answer = message(&body);
        assert_eq!(answer["result"]["content"][0]["text"], "done", "{id}");
    }
    // 30 calls of 64 messages of 16 KiB: far more than the stream holds.
    let mut heard = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let end = std::time::Instant::now() + PATIENCE;
    let told = loop {
        if std::time::Instant::now() > end {
            break false;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break false,
            Ok(n) => heard.extend_from_slice(&buf[..n]),
        }
        let text = String::from_utf8_lossy(&heard);
        if text.contains("capstan dropped") {
            break true;
        }
    };
    assert!(told, "the stream did not say messages were dropped");
    assert!(server.stop());
}
