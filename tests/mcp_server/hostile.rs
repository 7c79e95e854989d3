//! Hostile HTTP clients (issue 29): what the server refuses and what a
//! misbehaving connection may cost. Raw sockets on 127.0.0.1, bounded loops.

use crate::helpers::*;

use std::net::TcpStream;
use std::time::Instant;

/// The JSON-RPC error of an answer: its code, and HTTP status.
fn error_of(status: u16, body: &str) -> (u16, i64) {
    let answer = message(body);
    (status, answer["error"]["code"].as_i64().unwrap_or(0))
}

#[test]
fn duplicate_or_userinfo_host_and_origin_headers_are_refused() {
    let served = served_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url();
    let host = address(url).to_string();
    // Each alone is accepted: the refusals below come from the duplicate.
    assert_eq!(raw_post(url, &[("Host", &host)], INITIALIZE), 200);
    let good_origin = "http://localhost:3000";
    assert_eq!(raw_post(url, &[("Origin", good_origin)], INITIALIZE), 200);
    let cases: [(&[(&str, &str)], u16); 4] = [
        (&[("Host", &host), ("Host", "evil.example")], 400),
        (&[("Host", "evil.example@localhost")], 400),
        (
            &[("Origin", good_origin), ("Origin", "https://evil.example")],
            403,
        ),
        (&[("Origin", "http://evil.example@localhost:3000")], 403),
    ];
    for (headers, want) in cases {
        let (status, _, body) = raw_exchange(url, headers, INITIALIZE);
        assert_eq!(
            error_of(status, &body),
            (want, -32600),
            "{headers:?}: {body}"
        );
    }
    assert!(server.stop());
}

#[test]
fn a_bearer_token_no_header_could_carry_is_refused_at_start() {
    let served = served_registry();
    for token in ["s3cret ", " s3cret", "s3c ret", "s3cret\\n", "s3cr\u{e9}t"] {
        let token = token.replace("\\n", "\n");
        let options = ServerOptions {
            bearer_token: Some(token.clone()),
            ..ServerOptions::default()
        };
        match HttpServer::start(&served, &options) {
            Err(e) => assert!(e.to_string().contains("bearer_token"), "{token:?}: {e}"),
            Ok(_) => panic!("{token:?} should be refused"),
        }
    }
}

#[test]
fn tools_call_with_params_of_the_wrong_shape_is_invalid_params() {
    let served = served_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url();
    let session = raw_session(url);
    let headers = [("Mcp-Session-Id", session.as_str())];
    for (params, says) in [
        (
            json!({"name": 5, "arguments": {}}),
            "\"name\" must be a string",
        ),
        (
            json!({"name": "s_add", "arguments": [1, 2]}),
            "\"arguments\" must be an object",
        ),
        (json!({"arguments": {}}), "\"name\" must be a string"),
        (json!([1]), "params must be an object"),
    ] {
        let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params});
        let (status, _, body) = raw_exchange(url, &headers, &request.to_string());
        let answer = message(&body);
        assert_eq!((status, answer["id"].clone()), (200, json!(7)), "{body}");
        assert_eq!(answer["error"]["code"], -32602, "{params}: {body}");
        let text = answer["error"]["message"].as_str().unwrap_or("");
        assert!(text.contains(says), "{params}: {text}");
    }
    // A method that does not exist is still "method not found".
    let request = r#"{"jsonrpc":"2.0","id":8,"method":"no/such","params":{}}"#;
    let (_, _, body) = raw_exchange(url, &headers, request);
    assert_eq!(message(&body)["error"]["code"], -32601, "{body}");
    assert!(server.stop());
}

/// Reads from `stream` until the server closes it or `limit` passes;
/// true when it closed.
fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let start = Instant::now();
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut buf = [0u8; 1024];
    while start.elapsed() < limit {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return true,
        }
    }
    false
}

#[test]
fn slow_or_idle_connections_are_closed_after_the_header_timeout() {
    let served = served_registry();
    let options = ServerOptions {
        header_timeout_ms: 500,
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).expect("start");
    let address = address(server.url()).to_string();
    // Half a request head, never finished; and a connection that says nothing.
    let mut slow = TcpStream::connect(&address).unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .unwrap();
    let mut silent = TcpStream::connect(&address).unwrap();
    // Ten times the timeout, at least (a loaded machine).
    assert!(
        closed_within(&mut slow, Duration::from_secs(10)),
        "half-sent head"
    );
    assert!(
        closed_within(&mut silent, Duration::from_secs(10)),
        "silent connection"
    );
    assert_eq!(raw_post(server.url(), &[], INITIALIZE), 200);
    assert!(server.stop());
}

#[test]
fn connections_past_the_cap_wait_and_are_served_when_one_closes() {
    let served = served_registry();
    let options = ServerOptions {
        max_connections: 4,
        header_timeout_ms: 60_000,
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).expect("start");
    let address = address(server.url()).to_string();
    let mut idle: Vec<TcpStream> = (0..4)
        .map(|_| TcpStream::connect(&address).unwrap())
        .collect();
    // A fifth connection is not served while four are open...
    let url = server.url().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(raw_post(&url, &[], INITIALIZE));
    });
    assert!(
        rx.recv_timeout(Duration::from_millis(500)).is_err(),
        "served past the cap"
    );
    // ...and is as soon as one closes.
    drop(idle.pop());
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(200));
    drop(idle);
    assert!(server.stop());
}

/// A registry with `gate`: runs until `open` is set (then answers
/// "released") or it is cancelled (then notes it in `cancelled`), a minute
/// at most; `started` counts the calls that began.
fn gated(
    open: Arc<AtomicBool>,
    started: Arc<AtomicUsize>,
    cancelled: Arc<AtomicUsize>,
) -> Registry {
    let reg = Registry::default();
    reg.register(def("gate", json!({"type": "object"}), move |call| {
        started.fetch_add(1, Ordering::SeqCst);
        eventually(PATIENCE, || {
            open.load(Ordering::SeqCst) || call.is_cancelled()
        });
        if call.is_cancelled() {
            cancelled.fetch_add(1, Ordering::SeqCst);
        }
        let _ = call.complete_text("released");
    }))
    .unwrap();
    reg
}

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

const GATE_CALL: &str =
    r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"gate","arguments":{}}}"#;

#[test]
fn a_request_id_already_in_flight_in_the_session_gets_an_error_and_the_first_its_answer() {
    let (open, started, cancelled) = Default::default();
    let served = gated(Arc::clone(&open), Arc::clone(&started), cancelled);
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url().to_string();
    let session = raw_session(&url);
    let first = {
        let (url, session) = (url.clone(), session.clone());
        std::thread::spawn(move || raw_exchange(&url, &[("Mcp-Session-Id", &session)], GATE_CALL))
    };
    assert!(eventually(PATIENCE, || started.load(Ordering::SeqCst) == 1));
    // The same id again while the first runs: refused at once, not run.
    let (status, _, body) = raw_exchange(&url, &[("Mcp-Session-Id", &session)], GATE_CALL);
    let answer = message(&body);
    assert_eq!((status, answer["id"].clone()), (200, json!(5)), "{body}");
    assert_eq!(answer["error"]["code"], -32600, "{body}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("already in flight"),
        "{body}"
    );
    assert_eq!(started.load(Ordering::SeqCst), 1);
    // The first still gets its answer.
    open.store(true, Ordering::SeqCst);
    let (status, _, body) = first.join().unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        message(&body)["result"]["content"][0]["text"],
        "released",
        "{body}"
    );
    // And the id is free again once answered.
    let (_, _, body) = raw_exchange(&url, &[("Mcp-Session-Id", &session)], GATE_CALL);
    assert_eq!(
        message(&body)["result"]["content"][0]["text"],
        "released",
        "{body}"
    );
    assert!(server.stop());
}

#[test]
fn a_client_that_closes_its_connection_cancels_its_call() {
    let (open, started, cancelled): (Arc<AtomicBool>, Arc<AtomicUsize>, Arc<AtomicUsize>) =
        Default::default();
    let served = gated(open, Arc::clone(&started), Arc::clone(&cancelled));
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url().to_string();
    let session = raw_session(&url);
    let address = address(&url).to_string();
    let mut socket = TcpStream::connect(&address).unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\nContent-Length: {}\r\n\r\n{GATE_CALL}",
        GATE_CALL.len()
    );
    socket.write_all(request.as_bytes()).unwrap();
    assert!(eventually(PATIENCE, || started.load(Ordering::SeqCst) == 1));
    drop(socket);
    // The tool sees the cancellation (well before its minute is up).
    assert!(
        eventually(PATIENCE, || cancelled.load(Ordering::SeqCst) == 1),
        "the call was not cancelled"
    );
    assert!(server.stop());
}

#[test]
fn sessions_past_the_cap_are_refused_until_one_closes() {
    let served = served_registry();
    let options = ServerOptions {
        max_sessions: 3,
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).expect("start");
    let url = server.url();
    let sessions: Vec<String> = (0..3).map(|_| raw_session(url)).collect();
    let (status, _, body) = raw_exchange(url, &[], INITIALIZE);
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("too many sessions"), "{body}");
    let (status, _, _) = raw_request("DELETE", url, &[("Mcp-Session-Id", &sessions[0])], "");
    assert!((200..300).contains(&status), "{status}");
    assert_eq!(raw_post(url, &[], INITIALIZE), 200);
    assert!(server.stop());
}

/// A minimal streamable-HTTP MCP server on 127.0.0.1, in plain JSON (no
/// SSE): one tool `echo`, whose first call gets `first_answer` (status and
/// body) and later ones a normal result. Serves until `stop` is set.
pub(crate) fn bad_once_server(first_answer: (u16, &'static str), stop: Arc<AtomicBool>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        while !stop.load(Ordering::SeqCst) {
            match listener.accept() {
                Ok((socket, _)) => {
                    let calls = Arc::clone(&calls);
                    std::thread::spawn(move || answer_once(socket, first_answer, &calls));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    });
    url
}

/// Reads one request from `socket` and answers it (see `bad_once_server`).
fn answer_once(mut socket: TcpStream, first_answer: (u16, &str), calls: &AtomicUsize) {
    socket.set_nonblocking(false).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && socket.read(&mut byte).unwrap_or(0) == 1 {
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    let _ = socket.read_exact(&mut body);
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = request["id"].clone();
    let result = |result: Value| {
        (
            200,
            json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
        )
    };
    let (status, answer) = match (head.split(' ').next(), request["method"].as_str()) {
        (Some("post"), Some("initialize")) => result(json!({"protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}}, "serverInfo": {"name": "bad-once", "version": "1"}})),
        (Some("post"), Some("tools/list")) => result(json!({"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}}]})),
        (Some("post"), Some("tools/call")) => {
            if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                (first_answer.0, first_answer.1.to_string())
            } else {
                result(json!({"content": [{"type": "text", "text": "ok"}]}))
            }
        }
        // A server of the 2025 era: server/discover (a mount's first
        // request) is a method it does not know; notifications get 202.
        (Some("post"), Some(method)) if !id.is_null() => (
            200,
            json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": format!("Method not found: {method}")}})
            .to_string(),
        ),
        (Some("post"), _) => (202, String::new()),
        (Some("delete"), _) => (200, String::new()),
        _ => (405, String::new()),
    };
    // A first answer in SSE (it starts with "data:") gets its content type;
    // "{id}" in it becomes the call's id.
    let answer = answer.replace("{id}", &id.to_string());
    let kind = if answer.starts_with("data:") {
        "text/event-stream"
    } else {
        "application/json"
    };
    let response = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: {kind}\r\nMcp-Session-Id: s1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
        answer.len()
    );
    let _ = socket.write_all(response.as_bytes());
}

#[test]
fn one_bad_http_answer_fails_that_call_only_and_says_why() {
    let deep: &'static str = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{{id}},\"result\":{{\"content\":[],\"structuredContent\":{}{}}}}}",
        "[".repeat(200),
        "]".repeat(200)
    )
    .leak();
    let sse_deep: &'static str = format!("data: {deep}\n\n").leak();
    let sse_bad: &'static str =
        "data: {\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{\"content\":[{\"type\"\n\n";
    for (first, says) in [
        ((500, "oops"), "500"),
        ((400, "no"), "400"),
        ((200, "not json at all"), "answer"),
        ((200, deep), "recursion limit"),
        ((200, sse_deep), "nested deeper than 127 levels"),
        ((200, sse_bad), "not valid JSON"),
    ] {
        let stop = Arc::new(AtomicBool::new(false));
        let url = bad_once_server(first, Arc::clone(&stop));
        let client = Registry::default();
        let mount = mount(&client, &url, vec![]).expect("mount");
        let began = Instant::now();
        let failed = call(&client, "s_echo", json!({}));
        eprintln!("bad answer {:?}: failed in {:?}", first.0, began.elapsed());
        assert!(failed.is_error(), "{first:?}: {failed:?}");
        assert!(
            failed.content.contains(says),
            "{first:?}: {}",
            failed.content
        );
        // No Rust type names (rmcp's transport error starts with one).
        assert!(
            !failed.content.contains("::") && !failed.content.contains("JsonRpcMessage"),
            "{first:?}: {}",
            failed.content
        );
        // The mount stays: the next call works.
        let next = call(&client, "s_echo", json!({}));
        assert_eq!(next.content, "ok", "{first:?}: {next:?}");
        assert!(mount.is_connected());
        mount.unmount();
        stop.store(true, Ordering::SeqCst);
    }
}

#[test]
fn one_unreadable_stdio_answer_fails_that_call_only_and_says_why() {
    let client = Registry::default();
    let mut options = script_options("bad_answers.py", &[]);
    // Without the fix these calls waited for ever; with a timeout they said
    // "timed out". A minute is far past the real figure (milliseconds).
    options.call_timeout_ms = 60_000;
    let mount = Mount::connect(&client, options).expect("mount");
    for (kind, says) in [
        ("utf8", "not valid UTF-8"),
        ("long", "more than 16777216 bytes"),
        ("deep", "nested deeper than 127 levels"),
        ("json", "not valid JSON"),
        ("shape", "not a JSON-RPC message"),
        ("result", "not a tool result"),
    ] {
        let failed = call(&client, "s_answer", json!({ "kind": kind }));
        assert_eq!(failed.outcome, Outcome::ToolError, "{kind}: {failed:?}");
        assert!(
            failed.content.contains(says)
                && failed.content.contains("no usable answer to this call"),
            "{kind}: {}",
            failed.content
        );
        assert!(
            !failed.content.contains("::") && !failed.content.contains("JsonRpcMessage"),
            "{kind}: {}",
            failed.content
        );
        // The connection stays: the next call works.
        let next = call(&client, "s_answer", json!({"kind": "ok"}));
        assert_eq!(
            (next.outcome, next.content.as_str()),
            (Outcome::Ok, "ok"),
            "{kind}"
        );
        assert!(mount.is_connected(), "{kind}");
        assert_eq!(mount.info()["reconnects"], 0, "{kind}");
    }
    mount.unmount();
}

#[test]
fn a_tool_schema_nested_past_127_levels_fails_the_mount_at_once_saying_so() {
    let client = Registry::default();
    // Without the fix the listing waited out connect_timeout, then said
    // "did not answer in time".
    let options = script_options("bad_answers.py", &["deep-schema"]);
    let err = match Mount::connect(&client, options) {
        Ok(_) => panic!("a schema nested 400 levels was mounted"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("tools/list") && err.contains("nested deeper than 127 levels"),
        "{err}"
    );
    assert!(client.names().is_empty());
}

#[test]
fn unmount_during_a_slow_relisting_returns_at_once_and_nothing_comes_back() {
    let dir = std::env::temp_dir().join(format!("capstan-relist-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    let marker = dir.display().to_string();
    let client = Registry::default();
    let options = script_options("bad_answers.py", &["slow-relist", &marker]);
    let mount = Mount::connect(&client, options).expect("mount");
    assert_eq!(client.names(), ["s_answer"]);
    // list_changed: the server takes 12 s to answer the re-listing.
    assert_eq!(call(&client, "s_answer", json!({})).content, "ok");
    assert!(
        eventually(PATIENCE, || dir.exists()),
        "the re-listing began"
    );
    let began = Instant::now();
    mount.unmount();
    let took = began.elapsed();
    eprintln!("unmount during a 12 s re-listing: {took:?}");
    // The bound is 2.5 s (10 s on a starved runtime): before, unmount gave
    // up waiting after 10 s and the re-listing registered the tools again.
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(client.names().is_empty(), "{:?}", client.names());
    // Past the server's 12 s: nothing it owned came back.
    let back = eventually(Duration::from_secs(13), || !client.names().is_empty());
    assert!(!back, "{:?}", client.names());
    let _ = std::fs::remove_file(&dir);
}

#[test]
fn a_server_flooding_requests_without_reading_costs_bounded_memory() {
    let client = Registry::default();
    let options = script_options("flood.py", &["50000"]);
    let mount = Mount::connect(&client, options).expect("mount");
    let began = Instant::now();
    // 50,000 pings, roots/list, sampling and elicitation requests, none
    // of their answers read until the flood ends.
    let (result, grew) = peak_growth(|| call(&client, "s_flood", json!({})));
    let took = began.elapsed();
    assert_eq!(result.content, "flooded", "{result:?}");
    eprintln!("flood of 50,000 requests: call answered in {took:?}, peak RSS grew {grew:?} bytes");
    // The queue holds 256 answers; before, every answer waited in memory
    // (GBs a minute). 100 MB is ten times the figure measured.
    if let Some(grew) = grew {
        assert!(grew < 100 << 20, "{grew}");
    }
    assert!(mount.is_connected());
    // The mount still works once the server reads again.
    assert_eq!(call(&client, "s_flood", json!({})).content, "ok");
    mount.unmount();
}

#[test]
fn list_changed_in_a_tight_loop_costs_a_listing_per_half_second() {
    let client = Registry::default();
    let mount = Mount::connect(&client, script_options("flood.py", &["0"])).expect("mount");
    let began = Instant::now();
    // 20,000 list_changed notifications; then, 2 s on, how many listings?
    let churn = call(&client, "s_flood", json!({"churn": true}));
    assert!(!churn.is_error(), "{churn:?}");
    std::thread::sleep(Duration::from_secs(2));
    let listings = call(&client, "s_flood", json!({"listings": true}));
    let listings: u64 = listings.content.parse().expect("a count");
    let took = began.elapsed().as_secs_f64();
    eprintln!("20,000 list_changed: {listings} listings in {took:.1} s");
    // One at connect, then one per 0.5 s at most (coalesced): before, one
    // per notification heard while none was running (thousands).
    assert!(
        (listings as f64) <= 2.0 + took / 0.5 * 10.0,
        "{listings} listings in {took:.1} s"
    );
    assert!(listings >= 2, "list_changed was heard: {listings}");
    mount.unmount();
}

/// A stdio server's burst of 2,000 `elicitation/create` requests: the host
/// is asked at most 256 at once (the answers owed, as over HTTP), and every
/// request past them is refused at once with a JSON-RPC error saying why
/// (before, all 2,000 were taken, and reached the host 512 at a time).
#[test]
fn a_stdio_servers_requests_past_256_owed_answers_are_refused_with_a_json_rpc_error() {
    use capstan::mcp::client::HostInput;
    let active = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(AtomicBool::new(false));
    let (now, peak, released) = (active.clone(), most.clone(), release.clone());
    let answerer = move |_: Option<&str>, _: &str, _: &Value| {
        let at = now.fetch_add(1, Ordering::SeqCst) + 1;
        peak.fetch_max(at, Ordering::SeqCst);
        eventually(PATIENCE * 2, || released.load(Ordering::SeqCst));
        now.fetch_sub(1, Ordering::SeqCst);
        Ok(json!({"action": "decline"}))
    };
    let client = Registry::default();
    let mut options = script_options("ask_burst.py", &[]);
    options.input = Some(HostInput::new(&["elicitation/create"], Arc::new(answerer)).unwrap());
    let mount = Mount::connect(&client, options).expect("mount");
    let burst = call(&client, "s_burst", json!({"n": 2000}));
    assert_eq!(burst.content, "sent", "{burst:?}");
    let tally = || -> Value {
        let result = call(&client, "s_tally", json!({}));
        serde_json::from_str(&result.content).unwrap_or_else(|e| panic!("{e}: {result:?}"))
    };
    let mut last = Value::Null;
    let held = eventually(PATIENCE, || {
        std::thread::sleep(Duration::from_millis(50));
        last = tally();
        last["refused"] == 2000 - 256 && active.load(Ordering::SeqCst) == 256
    });
    let at_once = most.load(Ordering::SeqCst);
    release.store(true, Ordering::SeqCst);
    assert!(
        held,
        "server heard {last}; the host holds {} (at most {at_once} at once)",
        active.load(Ordering::SeqCst)
    );
    assert_eq!(at_once, 256, "{last}");
    assert_eq!(last["codes"], json!([-32000]), "{last}");
    let why = last["message"].as_str().unwrap_or_default();
    assert!(
        why.contains("256 answers to this server's requests are owed"),
        "{why}"
    );
    // Once the host answers, the 256 answers reach the server.
    assert!(
        eventually(PATIENCE, || {
            std::thread::sleep(Duration::from_millis(50));
            last = tally();
            last["answered"] == 256
        }),
        "{last}"
    );
    assert!(mount.is_connected());
    mount.unmount();
}

/// The status line of what `stream` got, within `PATIENCE`.
fn status_of(stream: &mut TcpStream) -> String {
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut head = [0u8; 12];
    match stream.read_exact(&mut head) {
        Ok(()) => String::from_utf8_lossy(&head).into_owned(),
        Err(e) => format!("nothing: {e}"),
    }
}

/// A fresh client's `initialize` is answered (within `PATIENCE`).
fn a_fresh_client_is_answered(url: &str) -> Option<u16> {
    let url = url.to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(raw_post(&url, &[], INITIALIZE));
    });
    rx.recv_timeout(PATIENCE).ok()
}

/// Issue 45: connections that sent a request head and then no body took
/// every slot for as long as they liked (another client waited > 90 s).
/// A body must arrive whole within body_timeout_ms: past it, 408 and the
/// connection closes, so a fresh client is served.
#[test]
fn a_body_that_does_not_arrive_gets_408_and_frees_its_connection() {
    let served = served_registry();
    let options = ServerOptions {
        max_connections: 4,
        header_timeout_ms: 600_000,
        body_timeout_ms: 500,
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).expect("start");
    let address = address(server.url()).to_string();
    let mut slow: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = TcpStream::connect(&address).unwrap();
            let head = format!(
                "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{"
            );
            s.write_all(head.as_bytes()).unwrap();
            s
        })
        .collect();
    assert_eq!(a_fresh_client_is_answered(server.url()), Some(200));
    for s in &mut slow {
        let status = status_of(s);
        assert_eq!(status, "HTTP/1.1 408", "{status}");
    }
    assert!(server.stop());
}

/// Issue 45: as many unread GET streams as max_connections took every slot.
/// Event streams take at most half of them; a GET past it gets 405 (MCP:
/// the server offers no stream) and its connection closes, so a fresh
/// client is served.
#[test]
fn event_streams_take_at_most_half_the_connections() {
    let served = served_registry();
    let options = ServerOptions {
        max_connections: 4,
        header_timeout_ms: 600_000,
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).expect("start");
    let address = address(server.url()).to_string();
    let sessions: Vec<String> = (0..4).map(|_| raw_session(server.url())).collect();
    let mut streams: Vec<TcpStream> = sessions
        .iter()
        .map(|session| {
            let mut s = TcpStream::connect(&address).unwrap();
            let head = format!(
                "GET /mcp HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n\
                 Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n"
            );
            s.write_all(head.as_bytes()).unwrap();
            s
        })
        .collect();
    let statuses: Vec<String> = streams.iter_mut().map(status_of).collect();
    let open = statuses.iter().filter(|s| *s == "HTTP/1.1 200").count();
    let refused = statuses.iter().filter(|s| *s == "HTTP/1.1 405").count();
    assert_eq!((open, refused), (2, 2), "{statuses:?}");
    assert_eq!(a_fresh_client_is_answered(server.url()), Some(200));
    drop(streams);
    assert!(server.stop());
}
