//! The mount's side of the stdio wire: newline-delimited JSON-RPC read from a
//! child process's stdout and written to its stdin (issue #29).
//!
//! rmcp's own stdio transport drops a line it cannot read (not UTF-8, not
//! JSON, nested past serde_json's 128 levels, longer than 16 MiB) without a
//! word, so the call waiting for that answer waits forever, or until a timeout
//! that says "timed out". Here such a line becomes an answer to that call
//! saying what was wrong: the line's top-level `"id"` is found by a scan that
//! needs neither valid UTF-8 nor bounded nesting nor the whole line in
//! memory, and an error response with that id is handed to rmcp in its place.
//! A bad request from the server gets an error response; a bad notification
//! (no id) is dropped, as the JSON-RPC spec says.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rmcp::model::{JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{RoleClient, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The longest line (one message) read from a server: 16 MiB, as rmcp's
/// stdio and streamable-HTTP transports allow.
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The deepest nesting a server's message may have: 127 arrays or objects,
/// the message itself included (serde_json, so rmcp, stops at 128).
pub(crate) const MAX_DEPTH: u64 = 127;

/// Marks the error responses capstan makes up for an unreadable answer, in
/// the error's `data`, so the mount words them as such.
pub(crate) const UNREADABLE: &str = "capstan: unreadable answer";

/// Finds the top-level `"id"` of a JSON-RPC message, and whether it has a
/// `"method"`, in bytes fed in pieces: linear, with constant memory, whatever
/// the nesting or the encoding.
pub struct IdScan {
    depth: u64,
    max_depth: u64,
    in_string: bool,
    escape: bool,
    /// At depth 1, after the `:` of a member (so the next value is one).
    in_value: bool,
    /// The current top-level key (its first 16 bytes), while it is read.
    key: Vec<u8>,
    key_long: bool,
    last_key_is_id: bool,
    /// The raw bytes of the `id` value while it is read (at most 256).
    capture: Option<Vec<u8>>,
    id: Option<Vec<u8>>,
    method: bool,
}

impl IdScan {
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if let Some(capture) = &mut self.capture {
                let ends = !self.in_string && self.depth == 1 && (b == b',' || b == b'}');
                if ends {
                    self.id = self.capture.take();
                } else if capture.len() < 256 {
                    capture.push(b);
                } else {
                    self.capture = None;
                }
            }
            if self.in_string {
                if self.escape {
                    self.escape = false;
                } else if b == b'\\' {
                    self.escape = true;
                } else if b == b'"' {
                    self.in_string = false;
                } else if self.depth == 1 && !self.in_value {
                    if self.key.len() < 16 {
                        self.key.push(b);
                    } else {
                        self.key_long = true;
                    }
                }
                continue;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    if self.depth == 1 && !self.in_value {
                        self.key.clear();
                        self.key_long = false;
                    }
                }
                b'{' | b'[' => {
                    self.depth = self.depth.saturating_add(1);
                    self.max_depth = self.max_depth.max(self.depth);
                }
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                b':' if self.depth == 1 && !self.in_value => {
                    self.in_value = true;
                    let key = (!self.key_long).then_some(self.key.as_slice());
                    self.last_key_is_id = key == Some(b"id");
                    if key == Some(b"method") {
                        self.method = true;
                    }
                    if self.last_key_is_id && self.id.is_none() {
                        self.capture = Some(Vec::new());
                    }
                }
                b',' if self.depth == 1 => self.in_value = false,
                _ => {}
            }
        }
    }

    /// The id found, if it is a JSON-RPC id (a string or an integer).
    pub fn id(&self) -> Option<Value> {
        let raw = self.id.as_deref()?;
        match serde_json::from_slice::<Value>(raw).ok()? {
            Value::String(s) => Some(Value::String(s)),
            Value::Number(n) if n.is_i64() => Some(Value::Number(n)),
            _ => None,
        }
    }

    pub fn has_method(&self) -> bool {
        self.method
    }

    /// Whether the bytes seen nest deeper than serde_json reads.
    pub fn too_deep(&self) -> bool {
        self.max_depth > MAX_DEPTH
    }
}

/// A line that could not be read as an MCP message.
#[derive(Debug, PartialEq)]
pub struct Bad {
    /// Its top-level id, if one was found.
    pub id: Option<Value>,
    /// It has a `"method"`: a request (with an id) or a notification.
    pub request: bool,
    /// What was wrong, for a person.
    pub why: String,
}

#[derive(Debug)]
pub enum Frame {
    Message(Box<ServerJsonRpcMessage>),
    Bad(Bad),
}

/// Cuts a byte stream into lines of at most `max` bytes and reads each as a
/// server's JSON-RPC message. Holds at most one line.
pub struct Framer {
    line: Vec<u8>,
    max: usize,
    /// The registry's `max_result_bytes`: a tool result past it (or past
    /// `MAX_RESULT_BLOCKS` blocks) is cut before it is read whole.
    result_bytes: u64,
    /// Set while the rest of a line past `max` is skipped (and scanned).
    oversized: Option<(IdScan, usize)>,
}

impl Framer {
    pub fn new(max: usize, result_bytes: u64) -> Framer {
        Framer {
            line: Vec::new(),
            max,
            result_bytes,
            oversized: None,
        }
    }

    /// Takes bytes from `input` up to the end of the first line in it;
    /// returns how many it took and what that line was, if it ended.
    pub fn push(&mut self, input: &[u8]) -> (usize, Option<Frame>) {
        let newline = input.iter().position(|&b| b == b'\n');
        let take = newline.map_or(input.len(), |i| i + 1);
        let body = &input[..newline.unwrap_or(input.len())];
        if let Some((scan, seen)) = &mut self.oversized {
            scan.feed(body);
            *seen = seen.saturating_add(body.len());
            if newline.is_none() {
                return (take, None);
            }
            let (scan, seen) = self.oversized.take().unwrap_or_default();
            return (take, Some(Frame::Bad(bad(&scan, too_long(seen, self.max)))));
        }
        if self.line.len() + body.len() > self.max {
            let mut scan = IdScan::default();
            scan.feed(&self.line);
            scan.feed(body);
            let seen = self.line.len() + body.len();
            self.line = Vec::new();
            if newline.is_none() {
                self.oversized = Some((scan, seen));
                return (take, None);
            }
            return (take, Some(Frame::Bad(bad(&scan, too_long(seen, self.max)))));
        }
        self.line.extend_from_slice(body);
        if newline.is_none() {
            return (take, None);
        }
        let line = std::mem::take(&mut self.line);
        (take, read_line(&line, self.result_bytes))
    }
}

impl Default for IdScan {
    fn default() -> Self {
        IdScan::new()
    }
}

impl IdScan {
    fn new() -> IdScan {
        IdScan {
            depth: 0,
            max_depth: 0,
            in_string: false,
            escape: false,
            in_value: false,
            key: Vec::new(),
            key_long: false,
            last_key_is_id: false,
            capture: None,
            id: None,
            method: false,
        }
    }
}

fn too_long(seen: usize, max: usize) -> String {
    format!("a message of more than {max} bytes ({seen} bytes or more), capstan's limit")
}

fn bad(scan: &IdScan, why: String) -> Bad {
    Bad {
        id: scan.id(),
        request: scan.has_method(),
        why,
    }
}

/// Reads one whole line (without its newline); a tool result in it is
/// bounded first (`bounds::bound_message`).
fn read_line(line: &[u8], result_bytes: u64) -> Option<Frame> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let why = match std::str::from_utf8(line) {
        Err(e) => format!("not valid UTF-8 (at byte {})", e.valid_up_to()),
        Ok(text) => match super::bounds::bound_message(text, result_bytes).map_or_else(
            || serde_json::from_str::<ServerJsonRpcMessage>(text),
            |cut| serde_json::from_str(&cut),
        ) {
            Ok(message) => return Some(Frame::Message(Box::new(message))),
            Err(e) => {
                let mut scan = IdScan::default();
                scan.feed(line);
                if scan.too_deep() {
                    format!("nested deeper than {MAX_DEPTH} levels, capstan's limit")
                } else if e.is_syntax() || e.is_eof() {
                    format!("not valid JSON ({e})")
                } else {
                    // serde's text for a shape that matches no message names
                    // Rust types: say it in JSON-RPC's words.
                    "JSON, but not a JSON-RPC message MCP defines".into()
                }
            }
        },
    };
    let mut scan = IdScan::default();
    scan.feed(line);
    Some(Frame::Bad(bad(&scan, why)))
}

/// The error response capstan hands rmcp for an unreadable answer.
pub fn unreadable_answer(id: &Value, why: &str) -> Option<ServerJsonRpcMessage> {
    serde_json::from_value(json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": -32603,
            "message": format!("the server's answer was {why}"),
            "data": UNREADABLE,
        }
    }))
    .ok()
}

/// rmcp's client transport over a child's stdout and stdin (or any pair of
/// pipes), reading with a `Framer`.
pub struct StdioWire<R, W> {
    read: R,
    chunk: Vec<u8>,
    start: usize,
    end: usize,
    framer: Framer,
    write: Arc<tokio::sync::Mutex<Option<W>>>,
    /// Lines queued to be written, not yet written.
    queued: Arc<AtomicUsize>,
}

impl<R, W> StdioWire<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// `result_bytes`: the registry's `max_result_bytes` (see `Framer`).
    pub fn new(read: R, write: W, result_bytes: u64) -> StdioWire<R, W> {
        StdioWire {
            read,
            chunk: vec![0; 64 * 1024],
            start: 0,
            end: 0,
            framer: Framer::new(MAX_LINE_BYTES, result_bytes),
            write: Arc::new(tokio::sync::Mutex::new(Some(write))),
            queued: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Queues `line` to be written: fails at once when `MAX_QUEUED` lines
    /// wait already (the server does not read its input).
    fn write_line(
        &self,
        line: Vec<u8>,
    ) -> std::io::Result<impl std::future::Future<Output = std::io::Result<()>> + Send + 'static>
    {
        let queued = Queued::new(&self.queued);
        if queued.ahead >= MAX_QUEUED {
            return Err(std::io::Error::new(
                std::io::ErrorKind::WouldBlock,
                format!("the server does not read its input ({MAX_QUEUED} messages wait to be written to it)"),
            ));
        }
        let write = self.write.clone();
        Ok(async move {
            let _queued = queued;
            let mut write = write.lock().await;
            let Some(write) = write.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the connection is closed",
                ));
            };
            write.write_all(&line).await?;
            write.flush().await
        })
    }
}

/// Messages to the server queued at most: past it a send fails at once.
pub(crate) const MAX_QUEUED: usize = 4096;

/// Answers to the server's own requests (ping, roots/list, sampling,
/// elicitation) queued at most: past it the server's requests are dropped
/// unread, so a server that sends requests and does not read the answers
/// costs bounded memory.
pub(crate) const MAX_QUEUED_ANSWERS: usize = 256;

/// One line queued (counted in the shared count until dropped).
struct Queued {
    count: Arc<AtomicUsize>,
    ahead: usize,
}

impl Queued {
    fn new(count: &Arc<AtomicUsize>) -> Queued {
        let ahead = count.fetch_add(1, Ordering::SeqCst);
        Queued {
            count: count.clone(),
            ahead,
        }
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::SeqCst);
    }
}

fn line_of<T: serde::Serialize>(message: &T) -> std::io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    Ok(line)
}

impl<R, W> Transport<RoleClient> for StdioWire<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = line_of(&item).and_then(|line| self.write_line(line));
        async move { write?.await }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            // Cancel-safe: bytes are only consumed synchronously, and a read
            // either fills `chunk` or leaves it as it was.
            while self.start < self.end {
                let (took, frame) = self.framer.push(&self.chunk[self.start..self.end]);
                self.start += took;
                match frame {
                    Some(Frame::Message(message)) => {
                        let request = matches!(*message, JsonRpcMessage::Request(_));
                        if request && self.queued.load(Ordering::SeqCst) >= MAX_QUEUED_ANSWERS {
                            continue;
                        }
                        return Some(*message);
                    }
                    Some(Frame::Bad(Bad {
                        id: Some(id),
                        request: false,
                        why,
                    })) => {
                        if let Some(answer) = unreadable_answer(&id, &why) {
                            return Some(answer);
                        }
                    }
                    Some(Frame::Bad(Bad {
                        id: Some(id),
                        request: true,
                        why,
                    })) => {
                        let refusal = json!({"jsonrpc": "2.0", "id": id, "error": {
                            "code": -32600, "message": format!("capstan could not read this request: {why}")}});
                        // Not awaited here: a server that does not read
                        // must not stop capstan reading it.
                        let room = self.queued.load(Ordering::SeqCst) < MAX_QUEUED_ANSWERS;
                        let write = line_of(&refusal).and_then(|line| self.write_line(line));
                        if let (true, Ok(write)) = (room, write) {
                            tokio::spawn(write);
                        }
                    }
                    Some(Frame::Bad(_)) | None => {}
                }
            }
            // Both ends reset before the read: rmcp drops this future when
            // another branch of its select wins, and a read dropped midway
            // must leave no bytes to feed again (with `end` left as it was,
            // the next call fed the last chunk a second time: a result of
            // 5,000 blocks came back with 7,184).
            self.start = 0;
            self.end = 0;
            self.end = match self.read.read(&mut self.chunk).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => n,
            };
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let writer = self.write.lock().await.take();
        if let Some(mut writer) = writer {
            let _ = writer.shutdown().await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn frames(input: &[u8], max: usize, piece: usize) -> Vec<Result<Value, Bad>> {
        let mut framer = Framer::new(max, 1 << 20);
        let mut out = Vec::new();
        for mut chunk in input.chunks(piece) {
            while !chunk.is_empty() {
                let (took, frame) = framer.push(chunk);
                chunk = &chunk[took..];
                match frame {
                    Some(Frame::Message(m)) => out.push(Ok(serde_json::to_value(&*m).unwrap())),
                    Some(Frame::Bad(b)) => out.push(Err(b)),
                    None => {}
                }
            }
        }
        out
    }

    #[test]
    fn good_lines_are_messages_however_the_bytes_are_split() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\n  \n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n";
        for piece in [1, 3, 7, 1000] {
            let got = frames(input, 1000, piece);
            assert_eq!(got.len(), 2, "{piece}: {got:?}");
            assert_eq!(got[0].as_ref().unwrap()["id"], 1);
        }
    }

    #[test]
    fn a_bad_answer_keeps_its_id_and_says_what_was_wrong() {
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"result\":{{\"x\":{}1{}}}}}\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        let cases: Vec<(Vec<u8>, Value, &str)> = vec![
            (
                b"{\"jsonrpc\":\"2.0\",\"result\":{\"t\":\"\xff\"},\"id\":7}\n".to_vec(),
                json!(7),
                "UTF-8",
            ),
            (deep.into_bytes(), json!("a\"b"), "nested deeper than 127"),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":-3,\"result\":{\"a\":}\n".to_vec(),
                json!(-3),
                "not valid JSON",
            ),
            (
                b"{\"jsonrpc\":\"1.0\",\"id\":4,\"result\":{}}\n".to_vec(),
                json!(4),
                "not a JSON-RPC message",
            ),
            (
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"result\":{{\"t\":\"{}\"}},\"id\": 9 }}\n",
                    "x".repeat(5000)
                )
                .into_bytes(),
                json!(9),
                "more than 1000 bytes",
            ),
        ];
        for (line, id, says) in cases {
            for piece in [1, 64, 100_000] {
                let got = frames(&line, 1000, piece);
                let [Err(bad)] = got.as_slice() else {
                    panic!("{says}: {got:?}");
                };
                assert_eq!(bad.id, Some(id.clone()), "{says}");
                assert!(!bad.request);
                assert!(bad.why.contains(says), "{}", bad.why);
                assert!(!bad.why.contains("JsonRpcMessage"), "{}", bad.why);
            }
        }
    }

    #[test]
    fn nesting_serde_json_reads_is_not_called_too_deep() {
        // 127 levels in all (the message, its result and 125 arrays) parse.
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"x\":{}{}}}}}\n",
            "[".repeat(125),
            "]".repeat(125)
        );
        let got = frames(line.as_bytes(), 1 << 20, 1 << 20);
        assert!(got[0].is_ok(), "{got:?}");
        let line = line.replacen('[', "[[", 1).replacen(']', "]]", 1);
        let got = frames(line.as_bytes(), 1 << 20, 1 << 20);
        let [Err(bad)] = got.as_slice() else {
            panic!("{got:?}")
        };
        assert!(bad.why.contains("nested deeper"), "{}", bad.why);
    }

    #[test]
    fn a_receive_dropped_while_it_waits_does_not_read_the_last_chunk_again() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (mut server, ours) = tokio::io::duplex(1 << 16);
            let mut wire = StdioWire::new(ours, tokio::io::sink(), 1 << 20);
            let line = |id: u32| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n");
            server.write_all(line(1).as_bytes()).await.unwrap();
            let first = wire
                .receive()
                .await
                .map(|m| serde_json::to_value(m).unwrap());
            assert_eq!(first.unwrap()["id"], 1);
            // Nothing to read: dropped while it waits, as rmcp's select does.
            let waited = tokio::time::timeout(Duration::from_millis(20), wire.receive()).await;
            assert!(waited.is_err());
            server.write_all(line(2).as_bytes()).await.unwrap();
            let next = wire
                .receive()
                .await
                .map(|m| serde_json::to_value(m).unwrap());
            assert_eq!(next.unwrap()["id"], 2);
        });
    }

    #[test]
    fn ids_inside_values_or_of_other_types_are_not_taken() {
        let got = frames(
            b"{\"result\":{\"id\":5},\"method\":\"x\",\"id\":[1]}\xff\n",
            1000,
            1000,
        );
        let [Err(bad)] = got.as_slice() else {
            panic!("{got:?}")
        };
        assert_eq!(bad.id, None);
        assert!(bad.request);
    }
}

/// rmcp's streamable-HTTP client (reqwest) with the same rule for answers
/// that come as server-sent events: rmcp skips an event whose data it
/// cannot read, so the call waited until the stream ended and then said
/// the server "closed the connection". Here such an event's data becomes
/// the error answer to its call, as on stdio.
#[derive(Clone)]
pub struct CheckedHttp(reqwest::Client, u64);

impl CheckedHttp {
    /// The client rmcp's `from_config` builds: no idle connection pool,
    /// only same-origin 307/308 redirects followed (at most 10).
    /// `result_bytes`: the registry's `max_result_bytes` (see `Framer`).
    pub fn new(result_bytes: u64) -> Result<CheckedHttp, String> {
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(
                attempt.status(),
                reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
            );
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if !keeps_body || !same_origin {
                attempt.stop()
            } else if attempt.previous().len() > 10 {
                attempt.error("more than 10 redirects")
            } else {
                attempt.follow()
            }
        });
        reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(redirects)
            .build()
            .map(|client| CheckedHttp(client, result_bytes))
            .map_err(|e| format!("the HTTP client could not be made: {e}"))
    }
}

/// What rmcp calls a `BoxStream` of events.
type SseStream = std::pin::Pin<
    Box<dyn futures_core::Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Send>,
>;

/// An event stream whose unreadable message events are replaced (see
/// `CheckedHttp`), and that answers its request itself when it ends without
/// the server's answer and cannot be resumed (`owed`).
struct CheckedEvents {
    inner: SseStream,
    result_bytes: u64,
    /// The id of the request whose answer this stream owes, for a request
    /// sent without a session (2026-07-28): nothing else would ever answer
    /// it once the stream ends (a legacy session's end closes the whole
    /// transport, which fails its calls).
    owed: Option<Value>,
    /// The server gave an event id: rmcp resumes the stream (GET with
    /// `Last-Event-ID`) when it breaks, so its end is not the answer's.
    resumable: bool,
    ended: bool,
}

/// An answer's id, read without keeping the rest.
#[derive(serde::Deserialize)]
struct AnswerId {
    id: Option<Value>,
    method: Option<serde::de::IgnoredAny>,
}

impl CheckedEvents {
    /// Notes the owed answer as given when `event` is it.
    fn note(&mut self, event: &sse_stream::Sse) {
        if event.id.as_deref().is_some_and(|id| !id.is_empty()) {
            self.resumable = true;
        }
        let Some(owed) = &self.owed else { return };
        let answered = event
            .data
            .as_deref()
            .and_then(|data| serde_json::from_str::<AnswerId>(data).ok())
            .is_some_and(|a| a.method.is_none() && a.id.as_ref() == Some(owed));
        if answered {
            self.owed = None;
        }
    }

    /// The answer to the owed request when the stream ended without it.
    fn unanswered(&mut self) -> Option<sse_stream::Sse> {
        if self.resumable {
            return None;
        }
        let id = self.owed.take()?;
        self.ended = true;
        let answer = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": -32603,
                "message": "the server closed the connection during the call, before answering",
            },
        });
        Some(sse_stream::Sse {
            data: Some(answer.to_string()),
            ..sse_stream::Sse::default()
        })
    }
}

impl futures_core::Stream for CheckedEvents {
    type Item = Result<sse_stream::Sse, sse_stream::Error>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        if self.ended {
            return Poll::Ready(None);
        }
        let result_bytes = self.result_bytes;
        match self.inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(event))) => {
                let event = check_event(event, result_bytes);
                self.note(&event);
                Poll::Ready(Some(Ok(event)))
            }
            Poll::Ready(Some(Err(e))) => match self.unanswered() {
                Some(answer) => Poll::Ready(Some(Ok(answer))),
                None => Poll::Ready(Some(Err(e))),
            },
            Poll::Ready(None) => Poll::Ready(self.unanswered().map(Ok)),
            Poll::Pending => Poll::Pending,
        }
    }
}

fn check_event(mut event: sse_stream::Sse, result_bytes: u64) -> sse_stream::Sse {
    let is_message = matches!(event.event.as_deref(), None | Some("") | Some("message"));
    let Some(data) = event.data.as_deref().filter(|_| is_message) else {
        return event;
    };
    if let Some(cut) = super::bounds::bound_message(data, result_bytes) {
        event.data = Some(cut);
        return event;
    }
    if data.trim().is_empty() || serde_json::from_str::<ServerJsonRpcMessage>(data).is_ok() {
        return event;
    }
    if let Some(Frame::Bad(Bad {
        id: Some(id),
        request: false,
        why,
    })) = read_line(data.as_bytes(), result_bytes)
    {
        if let Some(answer) = unreadable_answer(&id, &why) {
            event.data = serde_json::to_string(&answer).ok();
        }
    }
    event
}

fn checked_events(stream: SseStream, result_bytes: u64, owed: Option<Value>) -> SseStream {
    Box::pin(CheckedEvents {
        inner: stream,
        result_bytes,
        owed,
        resumable: false,
        ended: false,
    })
}

/// The id of `message` when it is a request sent without a session.
fn owed_answer(message: &ClientJsonRpcMessage, session_id: &Option<Arc<str>>) -> Option<Value> {
    match (message, session_id) {
        (ClientJsonRpcMessage::Request(request), None) => serde_json::to_value(&request.id).ok(),
        _ => None,
    }
}

fn checked_post(
    answer: Result<PostResponse, HttpError>,
    result_bytes: u64,
    owed: Option<Value>,
) -> Result<PostResponse, HttpError> {
    match answer {
        Ok(PostResponse::Sse(stream, session)) => Ok(PostResponse::Sse(
            checked_events(stream, result_bytes, owed),
            session,
        )),
        // A stateless request the server could not answer (it stopped
        // mid-call, say) gets an error without id (rmcp 3.11: "no response
        // message received from handler"): it is this request's answer,
        // which nothing would correlate otherwise.
        Ok(PostResponse::Json(JsonRpcMessage::Error(mut error), session)) if error.id.is_none() => {
            if let Some(id) = owed.and_then(|id| serde_json::from_value(id).ok()) {
                error.id = Some(id);
                error.error.message = format!(
                    "the server closed the connection during the call, without an answer: {}",
                    error.error.message
                )
                .into();
            }
            Ok(PostResponse::Json(JsonRpcMessage::Error(error), session))
        }
        other => other,
    }
}

use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse as PostResponse,
    StreamableHttpResponseLimits,
};
type HttpError = StreamableHttpError<reqwest::Error>;
type Headers = std::collections::HashMap<http::HeaderName, http::HeaderValue>;

impl StreamableHttpClient for CheckedHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<PostResponse, HttpError> {
        let owed = owed_answer(&message, &session_id);
        checked_post(
            self.0
                .post_message(uri, message, session_id, auth_header, custom_headers)
                .await,
            self.1,
            owed,
        )
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<PostResponse, HttpError> {
        let owed = owed_answer(&message, &session_id);
        checked_post(
            self.0
                .post_message_with_max_sse_event_size(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                )
                .await,
            self.1,
            owed,
        )
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<PostResponse, HttpError> {
        let owed = owed_answer(&message, &session_id);
        checked_post(
            self.0
                .post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await,
            self.1,
            owed,
        )
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), HttpError> {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<SseStream, HttpError> {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
            .map(|stream| checked_events(stream, self.1, None))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<SseStream, HttpError> {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map(|stream| checked_events(stream, self.1, None))
    }
}

#[cfg(test)]
mod stream_end_tests {
    use super::*;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    struct Listed(std::vec::IntoIter<sse_stream::Sse>);

    impl futures_core::Stream for Listed {
        type Item = Result<sse_stream::Sse, sse_stream::Error>;
        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            Poll::Ready(self.0.next().map(Ok))
        }
    }

    fn message(data: &str, id: Option<&str>) -> sse_stream::Sse {
        sse_stream::Sse {
            data: Some(data.to_owned()),
            id: id.map(str::to_owned),
            ..sse_stream::Sse::default()
        }
    }

    /// What rmcp reads from a response stream of `events` owing `owed`'s answer.
    fn read(events: Vec<sse_stream::Sse>, owed: Option<Value>) -> Vec<Value> {
        let mut stream = checked_events(Box::pin(Listed(events.into_iter())), 1 << 20, owed);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let mut out = Vec::new();
            while let Some(event) = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
                let data = event.expect("event").data.unwrap_or_default();
                out.push(serde_json::from_str(&data).unwrap_or(Value::Null));
            }
            out
        })
    }

    const PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;

    #[test]
    fn a_stateless_stream_that_ends_without_the_answer_answers_with_an_error() {
        let got = read(vec![message(PROGRESS, None)], Some(json!(7)));
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[1]["id"], 7);
        assert_eq!(got[1]["error"]["code"], -32603);
        let text = got[1]["error"]["message"].as_str().unwrap_or("");
        assert!(
            text.contains("closed the connection during the call"),
            "{text}"
        );
    }

    #[test]
    fn a_stream_that_answered_or_can_be_resumed_or_owes_nothing_adds_nothing() {
        let answer = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
        let other = r#"{"jsonrpc":"2.0","id":8,"result":{"content":[]}}"#;
        assert_eq!(read(vec![message(answer, None)], Some(json!(7))).len(), 1);
        // Another request's answer is not this one's.
        assert_eq!(read(vec![message(other, None)], Some(json!(7))).len(), 2);
        assert_eq!(
            read(vec![message(PROGRESS, Some("e1"))], Some(json!(7))).len(),
            1
        );
        assert_eq!(read(vec![message(PROGRESS, None)], None).len(), 1);
    }
}
