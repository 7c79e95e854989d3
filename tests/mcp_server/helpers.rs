//! What the tests of this binary share: a served registry, a mount of it,
//! and raw HTTP for what a client library would not send.

pub(crate) use crate::wait::eventually;
pub(crate) use capstan::mcp::client::{Endpoint, Mount, MountOptions};
pub(crate) use capstan::mcp::server::{HttpServer, ServerOptions};
pub(crate) use capstan::{
    execute, submit, Call, CallRequest, ExecOptions, Outcome, Registry, Sink, ToolDef, ToolFlags,
    ToolResult,
};
pub(crate) use serde_json::{json, Value};
pub(crate) use std::io::{Read, Write};
pub(crate) use std::time::Duration;

pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

pub(crate) fn def(
    name: &str,
    parameters: Value,
    f: impl Fn(Call) + Send + Sync + 'static,
) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: format!("{name} tool"),
        parameters,
        handler: Box::new(f),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    }
}

/// A registry with `add` (two integers), `boom` (fails) and `hold`
/// (runs until cancelled, at most a minute, then says how it ended).
pub(crate) fn served_registry() -> Registry {
    let reg = Registry::default();
    let ints = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]});
    reg.register(def("add", ints, |call| {
        let a = &call.arguments()["a"];
        let b = &call.arguments()["b"];
        let sum = a.as_i64().unwrap_or(0) + b.as_i64().unwrap_or(0);
        call.complete_text(sum.to_string()).unwrap();
    }))
    .unwrap();
    reg.register(def("boom", json!({"type": "object"}), |call| {
        call.fail("the boom tool exploded").unwrap();
    }))
    .unwrap();
    reg.register(def("hold", json!({"type": "object"}), |call| {
        let cancelled = eventually(PATIENCE, || call.is_cancelled());
        let _ = call.complete_text(if cancelled {
            "cancelled"
        } else {
            "still running"
        });
    }))
    .unwrap();
    reg
}

/// Options to mount `url` with the prefix `s_`, patient when connecting.
pub(crate) fn mount_options(url: &str, headers: Vec<(String, String)>) -> MountOptions {
    let mut options = MountOptions::new(Endpoint::Http {
        url: url.into(),
        headers,
    });
    options.prefix = "s_".into();
    options.connect_timeout = PATIENCE;
    options
}

pub(crate) fn mount(
    client: &Registry,
    url: &str,
    headers: Vec<(String, String)>,
) -> Result<Mount, capstan::Error> {
    Mount::connect(client, mount_options(url, headers))
}

/// A mount that reconnects up to `max_reconnects` times, `backoff_ms` apart
/// (doubled after each failed attempt).
pub(crate) fn mount_reconnecting(
    client: &Registry,
    url: &str,
    max_reconnects: u32,
    backoff_ms: u64,
) -> Mount {
    let mut options = mount_options(url, vec![]);
    options.max_reconnects = max_reconnects;
    options.reconnect_backoff = Duration::from_millis(backoff_ms);
    // Each reconnect attempt is bounded by connect_timeout. With PATIENCE
    // there, one attempt that never completes (seen once in a full run: an
    // initialize racing the server's restart) used up the test's whole wait
    // with the mount "not connected, 0 reconnects, not given up"; a shorter
    // bound lets the policy try again, as it would for a host.
    options.connect_timeout = Duration::from_secs(5);
    Mount::connect(client, options).expect("mount")
}

pub(crate) fn call(reg: &Registry, name: &str, arguments: Value) -> ToolResult {
    execute(
        reg,
        vec![CallRequest::new("c1", name, arguments)],
        &ExecOptions::default(),
    )
    .remove(0)
}

/// `host:port` of a server's `http://host:port/mcp` URL.
pub(crate) fn address(url: &str) -> &str {
    url.trim_start_matches("http://").trim_end_matches("/mcp")
}

/// Sends one request over a plain socket (with `Host` unless `headers` has
/// one) and returns the socket to read the answer from.
pub(crate) fn send_raw(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::net::TcpStream {
    let address = address(url);
    let mut stream = std::net::TcpStream::connect(address).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {address}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

/// POSTs `body` to the server with `headers` over a plain socket;
/// returns the status code.
pub(crate) fn raw_post(url: &str, headers: &[(&str, &str)], body: &str) -> u16 {
    let mut stream = send_raw("POST", url, headers, body);
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).expect("status line");
    let line = String::from_utf8_lossy(&head).to_string();
    line[9..12]
        .parse()
        .unwrap_or_else(|_| panic!("status line {line:?}"))
}

/// One request over a plain socket, the whole answer read: status,
/// head (lowercase) and body (de-chunked).
pub(crate) fn raw_exchange(
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    raw_request("POST", url, headers, body)
}

/// `raw_exchange` with another method.
pub(crate) fn raw_request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut stream = send_raw(method, url, headers, body);
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("answer");
    let answer = String::from_utf8_lossy(&answer).to_string();
    let (head, mut rest) = answer.split_once("\r\n\r\n").expect("head");
    let head = head.to_ascii_lowercase();
    let status = head[9..12].parse().expect("status");
    if !head.contains("transfer-encoding: chunked") {
        return (status, head, rest.to_string());
    }
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).expect("chunk size");
        if size == 0 {
            break;
        }
        body.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    (status, head, body)
}

/// The JSON-RPC message of an answer, plain JSON or the first SSE event.
pub(crate) fn message(body: &str) -> Value {
    let text = body
        .lines()
        .find_map(|l| l.strip_prefix("data: ").filter(|d| d.starts_with('{')))
        .unwrap_or(body);
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {body:?}"))
}

/// A session opened by hand: initialize, then `initialized`; returns
/// the session id header to send with every request.
pub(crate) fn raw_session(url: &str) -> String {
    let (status, head, _) = raw_exchange(url, &[], INITIALIZE);
    assert_eq!(status, 200, "{head}");
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .expect("a session id")
        .trim()
        .to_string();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, _, body) = raw_exchange(url, &[("Mcp-Session-Id", &session)], initialized);
    // Accepted, with nothing to say: an empty answer stays empty.
    assert_eq!((status, body.as_str()), (202, ""));
    session
}

pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// A Python for the hostile servers under tests/mcp_server (standard library
/// only): $CAPSTAN_TEST_PYTHON, else build/venv's, else python3.
pub(crate) fn python() -> String {
    if let Some(python) = std::env::var_os("CAPSTAN_TEST_PYTHON").filter(|p| !p.is_empty()) {
        return python.to_string_lossy().into_owned();
    }
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("build/venv/bin/python");
    if venv.exists() {
        return venv.display().to_string();
    }
    "python3".into()
}

/// Options to mount the hostile stdio server `tests/mcp_server/<script>`
/// with the prefix `s_`.
pub(crate) fn script_options(script: &str, args: &[&str]) -> MountOptions {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp_server")
        .join(script);
    let mut argv = vec![python(), path.display().to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    let mut options = MountOptions::new(Endpoint::Command {
        argv,
        env: vec![],
        cwd: None,
    });
    options.prefix = "s_".into();
    options.connect_timeout = PATIENCE;
    options
}

/// Held by the tests that measure this process's peak memory, and by those
/// that allocate a lot, so that one's allocations do not count in another's
/// figure.
static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `f` alone among the heavy tests (see `HEAVY`).
pub(crate) fn heavy<T>(f: impl FnOnce() -> T) -> T {
    let _alone = HEAVY.lock().unwrap_or_else(|e| e.into_inner());
    f()
}

/// A field of /proc/self/status, in bytes (Linux).
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Runs `f` alone among the heavy tests and returns how far this
/// process's resident memory peaked above where it was when `f` began
/// (None where that cannot be read): the peak is reset first (Linux).
pub(crate) fn peak_growth<T>(f: impl FnOnce() -> T) -> (T, Option<u64>) {
    heavy(|| {
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let before = status_bytes("VmRSS:");
        let out = f();
        let after = status_bytes("VmHWM:");
        (out, after.zip(before).map(|(a, b)| a.saturating_sub(b)))
    })
}

/// One stateless 2026-07-28 `tools/call` of `name` (no arguments) declaring
/// the client `capabilities`, with `extra` params merged in (the
/// `inputResponses` and `requestState` of a retry); the JSON-RPC answer.
pub(crate) fn tools_call_modern(url: &str, name: &str, capabilities: Value, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": {}});
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        params[k] = v;
    }
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let body =
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}).to_string();
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
    ];
    let (_, _, answer) = raw_exchange(url, &headers, &body);
    message(&answer)
}
