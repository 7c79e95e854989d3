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

use rmcp::model::ServerJsonRpcMessage;
use rmcp::service::{RoleClient, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

mod http;

pub use http::{CheckedHttp, ListedTools};

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

/// Answers owed to the server's own requests (ping, roots/list, sampling,
/// elicitation) at most, received and not yet answered and written: past
/// it `owed::Owed` refuses them, so a server that sends requests faster
/// than they are answered, or does not read the answers, costs bounded
/// memory and reaches the host a bounded number at a time.
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
                    // The server's requests are bounded by `owed::Owed`.
                    Some(Frame::Message(message)) => return Some(*message),
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
