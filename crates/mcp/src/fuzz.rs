//! Entry points of the fuzz targets `mount_reader` and `server_request`
//! (fuzz/fuzz_targets), each with the properties it checks, so that the
//! seed corpora run as a plain test too (tests/fuzz_seeds.rs). Not a public
//! API.
//!
//! - `mount_reader`: the mount's stdio reader, the bound on tool results and
//!   the tools/list conversion, reached without a child process.
//! - `server_request`: one HTTP request through capstan's MCP HTTP server
//!   (header checks, token, body cap, rmcp's session and JSON-RPC handling,
//!   the JSON-RPC rewrites of refusals), over loopback.

use std::io::{Read as _, Write as _};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rmcp::model::{JsonRpcMessage, ServerResult};
use serde_json::Value;

use super::bounds::{self, Listing};
use super::wire::{Bad, Frame, Framer};

pub use super::bounds::{bound_message, bound_tool_result, MAX_RESULT_BLOCKS};

/// What the reader made of a byte stream.
#[derive(Debug, Default)]
pub struct Read {
    /// Messages read (as JSON), in order.
    pub messages: Vec<Value>,
    /// Lines that could not be read: their id, whether they were requests,
    /// and why.
    pub bad: Vec<(Option<Value>, bool, String)>,
    /// Tools listed by the tools/list pages among the messages: name,
    /// description length, problem.
    pub listed: Vec<(String, usize, Option<String>)>,
    /// Why a listing stopped, if one did.
    pub listing_error: Option<String>,
}

/// Feeds `data` to a `Framer` (lines of at most `max_line` bytes, tool
/// results bounded by `result_bytes`) in pieces of `piece` bytes, and each
/// tools/list page it reads to one listing.
pub fn read(data: &[u8], piece: usize, max_line: usize, result_bytes: u64) -> Read {
    let mut framer = Framer::new(max_line, result_bytes);
    let mut out = Read::default();
    let mut listing = Listing::default();
    for mut chunk in data.chunks(piece.max(1)) {
        while !chunk.is_empty() {
            let (took, frame) = framer.push(chunk);
            chunk = &chunk[took..];
            match frame {
                Some(Frame::Message(message)) => {
                    out.messages
                        .push(serde_json::to_value(&*message).unwrap_or(Value::Null));
                    if let JsonRpcMessage::Response(response) = *message {
                        if let ServerResult::ListToolsResult(page) = response.result {
                            if out.listing_error.is_none() {
                                if let Err(e) = bounds::list_page(&mut listing, page) {
                                    out.listing_error = Some(e);
                                }
                            }
                        }
                    }
                }
                Some(Frame::Bad(Bad { id, request, why })) => out.bad.push((id, request, why)),
                None => {}
            }
            if took == 0 {
                break;
            }
        }
    }
    out.listed = listing
        .tools
        .into_iter()
        .map(|t| (t.name, t.description.chars().count(), t.problem))
        .collect();
    out
}

/// The `mount_reader` target. Input: piece size, line bound and result
/// bound bytes, then the stream a server writes. Checked: the reader never
/// panics; a line it cannot read says why in JSON-RPC's words (no Rust type
/// names); a message read back as JSON is a JSON-RPC message; a listed
/// tool's name and description are within their bounds; a bounded result
/// has at most `MAX_RESULT_BLOCKS` blocks, at most the bound of text, and is
/// not cut again.
pub fn mount_reader(data: &[u8]) -> Result<(), String> {
    let [piece, line, result, stream @ ..] = data else {
        return Ok(());
    };
    let piece = usize::from(*piece) + 1;
    let max_line = 16 + usize::from(*line) * 16;
    let result_bytes = u64::from(*result) * 8;
    let got = read(stream, piece, max_line, result_bytes);
    for (_, _, why) in &got.bad {
        if why.is_empty() || why.contains("::") || why.contains("JsonRpcMessage") {
            return Err(format!("an unreadable line is explained as {why:?}"));
        }
    }
    for message in &got.messages {
        if message["jsonrpc"] != "2.0" {
            return Err(format!("not a JSON-RPC message: {message}"));
        }
    }
    for (name, description_chars, problem) in &got.listed {
        if problem.is_none() && name.len() > 256 {
            return Err(format!("a tool name of {} bytes was kept", name.len()));
        }
        if name.len() > 256 + 64 {
            return Err(format!("a tool name of {} bytes is kept", name.len()));
        }
        // 16,384 characters and the truncation marker.
        if *description_chars > 16_384 + 64 {
            return Err(format!("a description of {description_chars} characters"));
        }
    }
    // The stream itself as a tool result.
    let Ok(text) = std::str::from_utf8(stream) else {
        return Ok(());
    };
    let Some(cut) = bound_tool_result(text, result_bytes) else {
        return Ok(());
    };
    let value: Value =
        serde_json::from_str(&cut).map_err(|e| format!("a bounded result is not JSON: {e}"))?;
    let blocks = value["content"]
        .as_array()
        .ok_or_else(|| format!("a bounded result has no content blocks: {cut}"))?;
    if blocks.is_empty() || blocks.len() > MAX_RESULT_BLOCKS {
        return Err(format!("a bounded result has {} blocks", blocks.len()));
    }
    let note = blocks.last().and_then(|b| b["text"].as_str()).unwrap_or("");
    if !note.starts_with("[capstan cut this result: ") {
        return Err(format!("a cut result does not say so: {note:?}"));
    }
    let kept: usize = blocks[..blocks.len() - 1]
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .map(str::len)
        .sum();
    if kept as u64 > result_bytes {
        return Err(format!("{kept} bytes of text kept, over {result_bytes}"));
    }
    if bound_tool_result(&cut, result_bytes).is_some() {
        return Err(format!("a bounded result is cut again: {cut}"));
    }
    Ok(())
}

/// The server every `server_request` input goes to: one tool `echo`, the
/// bearer token `TOKEN`, sessions idle for 2 s at most (fuzzed
/// `initialize`s open many), started once per process.
fn server() -> Result<&'static str, String> {
    static SERVER: OnceLock<Result<(capstan_core::Registry, super::server::HttpServer), String>> =
        OnceLock::new();
    let made = SERVER.get_or_init(|| {
        let registry = capstan_core::Registry::default();
        registry
            .register(capstan_core::ToolDef {
                name: "echo".into(),
                description: "says its arguments back".into(),
                parameters: serde_json::json!({"type": "object"}),
                handler: Box::new(|call: capstan_core::Call| {
                    let _ = call.complete_text(call.arguments().to_string());
                }),
                timeout_ms: 0,
                max_output_chars: 0,
                flags: capstan_core::ToolFlags::default(),
            })
            .map_err(|e| e.to_string())?;
        let options = super::server::ServerOptions {
            bearer_token: Some(TOKEN.into()),
            session_idle_ms: 2000,
            max_body_bytes: 64 * 1024,
            ..Default::default()
        };
        let server =
            super::server::HttpServer::start(&registry, &options).map_err(|e| e.to_string())?;
        Ok((registry, server))
    });
    match made {
        Ok((_, server)) => Ok(server.url()),
        Err(e) => Err(e.clone()),
    }
}

/// The bearer token of the `server_request` server.
pub const TOKEN: &str = "fuzz-token";

/// One answer read back: status, head (lowercase), body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

/// Sends `request` (whole, raw) to the server at `url` on a new connection
/// and reads the answer: to the end, or only the head for a server-sent
/// event stream that stays open (a GET's).
fn exchange(url: &str, request: &[u8], head_only_for_streams: bool) -> Result<Answer, String> {
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let mut stream = std::net::TcpStream::connect(&address).map_err(|e| format!("connect: {e}"))?;
    let patience = Duration::from_secs(5);
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .map_err(|e| e.to_string())?;
    stream
        .write_all(request)
        .map_err(|e| format!("the server did not take the request: {e}"))?;
    let began = Instant::now();
    let mut answer = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        // A signal (libFuzzer's timeout alarm) cut the read.
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) if answer.is_empty() => return Err(format!("no answer: {e}")),
            Err(_) => break,
        }
        let head_end = answer.windows(4).position(|w| w == b"\r\n\r\n");
        if let Some(end) = head_end {
            let head = String::from_utf8_lossy(&answer[..end]).to_ascii_lowercase();
            if head_only_for_streams && head.contains("content-type: text/event-stream") {
                break;
            }
        }
        if began.elapsed() > patience {
            return Err(format!(
                "no complete answer within {patience:?}: {:?}",
                String::from_utf8_lossy(&answer[..answer.len().min(400)])
            ));
        }
    }
    let end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("no HTTP head: {:?}", String::from_utf8_lossy(&answer)))?;
    let head = String::from_utf8_lossy(&answer[..end]).to_ascii_lowercase();
    let status = head
        .strip_prefix("http/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| format!("no status line: {head:?}"))?;
    let mut body = answer[end + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    Ok(Answer { status, head, body })
}

/// The data of a chunked body (as far as it is complete).
fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    while let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&rest[..line_end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok());
        let Some(size) = size.filter(|&n| n > 0) else {
            break;
        };
        let data = &rest[line_end + 2..];
        let take = size.min(data.len());
        body.extend_from_slice(&data[..take]);
        rest = data.get(take + 2..).unwrap_or(&[]);
    }
    body
}

/// A raw POST of `body` with the session header if any, authorized.
fn post(url: &str, session: Option<&str>, body: &str) -> Result<Answer, String> {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(session) = session {
        request.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    exchange(url, request.as_bytes(), false)
}

/// Opens a session (initialize, then initialized) and returns its id.
fn open_session(url: &str) -> Result<String, String> {
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#;
    let answer = post(url, None, init)?;
    let session = answer
        .head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .map(|s| s.trim().to_string())
        .ok_or_else(|| format!("initialize gave no session: {answer:?}"))?;
    post(
        url,
        Some(&session),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )?;
    Ok(session)
}

/// Whether `name` is an HTTP token (a header name hyper reads).
fn header_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b))
}

/// The `server_request` target. Input: a method byte (POST, GET, DELETE,
/// PUT), a flags byte (1: in a fresh session; 2: no bearer token; 4: no
/// default Content-Type/Accept), header lines (`Name: value`, those hyper
/// could not read dropped) up to an empty line, then the body.
///
/// Checked: the server answers every request with a status line; every
/// refusal but 405 is a JSON-RPC error (`"jsonrpc": "2.0"`, an integer
/// code, a message naming no Rust type) in a JSON body; every message of a
/// 2xx answer is a JSON-RPC message; an answer to a request carries the
/// request's id; nothing is served without the token.
///
/// Returns the answer (None for an input too short to be a request), so a
/// test can see which path a seed took.
pub fn server_request(data: &[u8]) -> Result<Option<Answer>, String> {
    let [method, flags, rest @ ..] = data else {
        return Ok(None);
    };
    let url = server()?;
    let method = ["POST", "GET", "DELETE", "PUT"][usize::from(*method % 4)];
    let (in_session, no_token, no_defaults) = (flags & 1 != 0, flags & 2 != 0, flags & 4 != 0);
    let split = rest.windows(2).position(|w| w == b"\n\n");
    let (header_block, body) = match split {
        Some(at) => (&rest[..at], &rest[at + 2..]),
        None => (&rest[..0], rest),
    };
    let mut headers: Vec<(String, Vec<u8>)> = Vec::new();
    for line in header_block.split(|&b| b == b'\n').take(32) {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        let value_ok = value
            .iter()
            .all(|&b| b == b'\t' || (0x20..0x7f).contains(&b));
        if header_name(name) && value_ok && value.len() <= 1024 {
            headers.push((String::from_utf8_lossy(name).into_owned(), value.to_vec()));
        }
    }
    let has = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let session = if in_session {
        Some(open_session(url)?)
    } else {
        None
    };
    let mut request = format!("{method} /mcp HTTP/1.1\r\n").into_bytes();
    let mut add = |name: &str, value: &[u8]| {
        request.extend_from_slice(name.as_bytes());
        request.extend_from_slice(b": ");
        request.extend_from_slice(value);
        request.extend_from_slice(b"\r\n");
    };
    if !has("host") {
        add("Host", b"127.0.0.1");
    }
    if !no_token && !has("authorization") {
        add("Authorization", format!("Bearer {TOKEN}").as_bytes());
    }
    if !no_defaults && !has("content-type") {
        add("Content-Type", b"application/json");
    }
    if !no_defaults && !has("accept") {
        add("Accept", b"application/json, text/event-stream");
    }
    if let Some(session) = &session {
        add("Mcp-Session-Id", session.as_bytes());
    }
    for (name, value) in &headers {
        // Framing is capstan's here: a fuzzed length would only stall.
        if !name.eq_ignore_ascii_case("content-length")
            && !name.eq_ignore_ascii_case("transfer-encoding")
            && !name.eq_ignore_ascii_case("connection")
        {
            add(name, value);
        }
    }
    add("Content-Length", body.len().to_string().as_bytes());
    add("Connection", b"close");
    request.extend_from_slice(b"\r\n");
    request.extend_from_slice(body);
    let answer = exchange(url, &request, method == "GET");
    if let Some(session) = &session {
        let close = format!("DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nMcp-Session-Id: {session}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        let _ = exchange(url, close.as_bytes(), false);
    }
    let answer = answer?;
    check_answer(&answer, body, no_token && !has("authorization"))?;
    Ok(Some(answer))
}

/// The properties of one answer (see `server_request`).
fn check_answer(answer: &Answer, body: &[u8], unauthorized: bool) -> Result<(), String> {
    let Answer { status, head, .. } = answer;
    let text = String::from_utf8_lossy(&answer.body);
    let say = |what: &str| format!("{what}: {status} {head:?} {text:?}");
    if unauthorized && *status < 400 {
        return Err(say("a request without the token was served"));
    }
    let json = head.contains("content-type: application/json");
    let events = head.contains("content-type: text/event-stream");
    let messages: Vec<Value> = if json && !text.trim().is_empty() {
        vec![serde_json::from_str(&text)
            .map_err(|e| say(&format!("a JSON body that is not JSON ({e})")))?]
    } else if events {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| {
                serde_json::from_str(d)
                    .map_err(|e| say(&format!("an event that is not JSON ({e})")))
            })
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    if *status >= 400 && *status != 405 {
        let [error] = messages.as_slice() else {
            return Err(say("a refusal without a JSON-RPC error body"));
        };
        let code = error["error"]["code"].as_i64();
        let message = error["error"]["message"].as_str().unwrap_or("");
        if error["jsonrpc"] != "2.0" || code.is_none() || message.is_empty() {
            return Err(say("a refusal that is not a JSON-RPC error"));
        }
        if message.contains("::") {
            return Err(say("a refusal naming a Rust type"));
        }
    }
    for message in &messages {
        let shaped = message.is_array() || message["jsonrpc"] == "2.0";
        if !shaped {
            return Err(say("an answer that is not a JSON-RPC message"));
        }
    }
    // An answer to a request carries the request's id.
    let request: Option<Value> = serde_json::from_slice(body).ok();
    let id = request
        .as_ref()
        .filter(|r| r["method"].is_string())
        .map(|r| &r["id"])
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64());
    if let (Some(id), true) = (id, (200..300).contains(status)) {
        for message in &messages {
            let answer = message.get("result").is_some() || message.get("error").is_some();
            if answer && &message["id"] != id {
                return Err(say(&format!("an answer to request {id} with another id")));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fuzz_entry_reads_messages_bad_lines_and_listings() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"a\",\"inputSchema\":{}}],\"nextCursor\":\"x\"}}\n\xff\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[],\"nextCursor\":\"x\"}}\n";
        let read = read(input, 7, 1 << 20, 1 << 20);
        assert_eq!(read.messages.len(), 2);
        assert_eq!(read.bad.len(), 1);
        assert_eq!(read.listed, [("a".to_string(), 0, None)]);
        assert!(read.listing_error.unwrap().contains("repeats"));
    }

    fn answer(status: u16, content_type: &str, body: &str) -> Answer {
        Answer {
            status,
            head: format!("http/1.1 {status} x\r\ncontent-type: {content_type}"),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn the_server_checks_reject_what_they_are_there_to_reject() {
        let request = br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
        let error = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no"}}"#;
        let ok = |a: &Answer, unauthorized| check_answer(a, request, unauthorized);
        assert_eq!(ok(&answer(400, "application/json", error), false), Ok(()));
        assert_eq!(ok(&answer(405, "text/plain", "no"), false), Ok(()));
        let answered = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
        assert_eq!(
            ok(&answer(200, "application/json", answered), false),
            Ok(())
        );
        // A plain-text refusal; a refusal naming a Rust type; a non JSON-RPC
        // error; an answer with another id; a request served without the token.
        let rust = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a::B"}}"#;
        let other = r#"{"jsonrpc":"2.0","id":8,"result":{}}"#;
        for (bad, unauthorized) in [
            (answer(400, "text/plain", "no"), false),
            (answer(400, "application/json", rust), false),
            (answer(415, "application/json", r#"{"error":"no"}"#), false),
            (
                answer(200, "text/event-stream", &format!("data: {other}\n\n")),
                false,
            ),
            (answer(200, "application/json", answered), true),
        ] {
            assert!(ok(&bad, unauthorized).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_mount_reader_checks_hold_for_a_cut_result() {
        // A result bound of 8 bytes on 9 bytes of text: cut, and said so.
        let result = br#"{"content":[{"type":"text","text":"123456789"}]}"#;
        assert_eq!(
            mount_reader(&[[0u8, 255, 1].as_slice(), result].concat()),
            Ok(())
        );
        assert!(bound_tool_result(std::str::from_utf8(result).unwrap(), 8).is_some());
    }
}
