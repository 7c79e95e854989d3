//! The stdio server's transport: rmcp's line transport over stdin and
//! stdout, with what it leaves unbounded (issue 45):
//! - requests taken and not yet answered: at most `max_requests_in_flight`
//!   (a request counts from its line until its answer is written, or until
//!   its handler ended after the client cancelled it). Past it a request
//!   gets a JSON-RPC error at once, and stdin is read on (so its end is
//!   seen). While [`MAX_REFUSALS_WAITING`] of those errors wait to be
//!   written (the client reads its stdout slower than it writes), stdin
//!   waits; when none of them is written for [`DEAF_AFTER`] the client is
//!   taken not to read at all and disconnected, as if stdin had ended.
//! - a request whose id is already in flight gets an error at once, as
//!   over HTTP (rmcp would answer only one of the two).
//! - a line over [`MAX_LINE_BYTES`]: rmcp drops it without a word; here a
//!   request's line is answered with a JSON-RPC error, its id found by a
//!   scan of the whole line in constant memory (`IdScan`).

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use rmcp::model::{ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, RequestId};
use rmcp::service::{RequestContext, RxJsonRpcMessage, Service, TxJsonRpcMessage};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

use crate::wire::{IdScan, MAX_LINE_BYTES};

/// Oversized request lines whose refusal waits to be written, at most
/// (each stands for 16 MiB read: a client that sends them faster than it
/// reads its answers loses the refusals past it).
const MAX_REFUSED_LINES: usize = 64;

/// Refusals waiting to be written at most (about 200 bytes each): past it
/// stdin is not read until one is written.
pub(crate) const MAX_REFUSALS_WAITING: usize = 4096;

/// With `MAX_REFUSALS_WAITING` refusals waiting, this long without one
/// written ends the session (the client does not read its stdout).
const DEAF_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// The requests taken and not yet answered, by id (as JSON text).
pub(super) struct Ledger {
    max: usize,
    state: Mutex<LedgerState>,
    /// Told when a refusal was written.
    written: Notify,
}

#[derive(Default)]
struct LedgerState {
    taken: HashMap<String, Slot>,
    /// Refusals sent by the transport itself, not yet written.
    refusing: usize,
}

#[derive(Default)]
struct Slot {
    cancelled: bool,
    handler_done: bool,
}

enum Taken {
    Yes,
    Duplicate,
    Busy,
}

fn key(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

impl Ledger {
    pub(super) fn new(max: usize) -> Arc<Ledger> {
        Arc::new(Ledger {
            max,
            state: Mutex::new(LedgerState::default()),
            written: Notify::new(),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, LedgerState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn take(&self, id: &RequestId) -> Taken {
        let mut state = self.state();
        let key = key(id);
        if state.taken.contains_key(&key) {
            Taken::Duplicate
        } else if state.taken.len() >= self.max {
            Taken::Busy
        } else {
            state.taken.insert(key, Slot::default());
            Taken::Yes
        }
    }

    /// Waits while `MAX_REFUSALS_WAITING` refusals are not written; false
    /// when none was written for `DEAF_AFTER`.
    async fn room_to_refuse(&self) -> bool {
        loop {
            let written = self.written.notified();
            if self.state().refusing < MAX_REFUSALS_WAITING {
                return true;
            }
            if tokio::time::timeout(DEAF_AFTER, written).await.is_err() {
                return false;
            }
        }
    }

    fn answered(&self, key: &str) {
        self.state().taken.remove(key);
    }

    fn cancelled(&self, id: &RequestId) {
        let key = key(id);
        let mut state = self.state();
        match state.taken.get_mut(&key) {
            Some(slot) if slot.handler_done => {
                state.taken.remove(&key);
            }
            Some(slot) => slot.cancelled = true,
            None => {}
        }
    }

    fn handler_done(&self, key: &str) {
        let mut state = self.state();
        match state.taken.get_mut(key) {
            Some(slot) if slot.cancelled => {
                state.taken.remove(key);
            }
            Some(slot) => slot.handler_done = true,
            None => {}
        }
    }
}

/// Releases a request's slot when dropped (its answer written, or given up).
struct Answered(Arc<Ledger>, String);

impl Drop for Answered {
    fn drop(&mut self) {
        self.0.answered(&self.1);
    }
}

/// Counts a refusal until it is written.
struct Refusing(Arc<Ledger>);

impl Refusing {
    fn new(ledger: &Arc<Ledger>) -> Refusing {
        ledger.state().refusing += 1;
        Refusing(ledger.clone())
    }
}

impl Drop for Refusing {
    fn drop(&mut self) {
        {
            let mut state = self.0.state();
            state.refusing = state.refusing.saturating_sub(1);
        }
        self.0.written.notify_waiters();
    }
}

/// The ids of oversized request lines, for the transport to refuse.
#[derive(Default)]
struct Oversized {
    ids: Mutex<VecDeque<Value>>,
    heard: Notify,
}

/// stdin, with every line over `MAX_LINE_BYTES` taken out: its first
/// bytes have reached rmcp when it is found too long, so they are ended
/// with a NUL (never valid JSON, so rmcp drops them as unparsable) and a
/// newline; the rest is scanned for its id and skipped.
struct Lines<R> {
    inner: R,
    chunk: Box<[u8]>,
    start: usize,
    end: usize,
    /// Bytes of the current line passed on so far.
    line: usize,
    scan: IdScan,
    /// The current line is too long: its rest is skipped.
    skipping: bool,
    /// Bytes still to pass on before anything else (the NUL and newline).
    marker: &'static [u8],
    oversized: Arc<Oversized>,
}

impl<R> Lines<R> {
    fn new(inner: R, oversized: Arc<Oversized>) -> Lines<R> {
        Lines {
            inner,
            chunk: vec![0; 64 * 1024].into_boxed_slice(),
            start: 0,
            end: 0,
            line: 0,
            scan: IdScan::default(),
            skipping: false,
            marker: b"",
            oversized,
        }
    }

    /// The oversized line ended: its refusal is owed when it is a request
    /// whose id was found.
    fn refuse(&mut self) {
        let scan = std::mem::take(&mut self.scan);
        self.skipping = false;
        self.line = 0;
        let Some(id) = scan.id().filter(|_| scan.has_method()) else {
            return;
        };
        let mut ids = self.oversized.ids.lock().unwrap_or_else(|e| e.into_inner());
        if ids.len() < MAX_REFUSED_LINES {
            ids.push_back(id);
            self.oversized.heard.notify_one();
        }
    }

    /// Passes on what it can of `chunk[start..end]` into `buf`.
    fn filter(&mut self, buf: &mut ReadBuf<'_>) {
        while self.start < self.end && buf.remaining() > 0 && self.marker.is_empty() {
            let rest = &self.chunk[self.start..self.end];
            let newline = rest.iter().position(|&b| b == b'\n');
            let body = &rest[..newline.unwrap_or(rest.len())];
            if self.skipping {
                self.scan.feed(body);
                self.start += body.len();
                if newline.is_some() {
                    self.start += 1;
                    self.refuse();
                }
                continue;
            }
            if self.line.saturating_add(body.len()) > MAX_LINE_BYTES {
                self.scan.feed(body);
                self.start += body.len();
                self.marker = b"\0\n";
                self.skipping = true;
                if newline.is_some() {
                    self.start += 1;
                    self.refuse();
                }
                continue;
            }
            let with_newline = body.len() + usize::from(newline.is_some());
            let n = with_newline.min(buf.remaining());
            let passed = &rest[..n];
            buf.put_slice(passed);
            self.start += n;
            if n == with_newline && newline.is_some() {
                self.scan.feed(&passed[..n - 1]);
                self.scan = IdScan::default();
                self.line = 0;
            } else {
                self.scan.feed(passed);
                self.line += n;
            }
        }
        if !self.marker.is_empty() {
            let n = self.marker.len().min(buf.remaining());
            buf.put_slice(&self.marker[..n]);
            self.marker = &self.marker[n..];
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Lines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            let before = buf.filled().len();
            this.filter(buf);
            if buf.filled().len() > before || buf.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            // Nothing passed on yet (a line being skipped, or all read):
            // read more, as a read of 0 bytes would say stdin ended.
            let mut read = ReadBuf::new(&mut this.chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Ready(Ok(())) => {
                    let n = read.filled().len();
                    if n == 0 {
                        return Poll::Ready(Ok(()));
                    }
                    this.start = 0;
                    this.end = n;
                }
                other => return other,
            }
        }
    }
}

/// rmcp's stdio transport, reading through `Lines`, bounding requests in
/// flight with a `Ledger`.
pub(super) struct Wire<R: AsyncRead + Unpin, W: AsyncWrite> {
    inner: AsyncRwTransport<RoleServer, Lines<R>, W>,
    ledger: Arc<Ledger>,
    oversized: Arc<Oversized>,
}

impl<R, W> Wire<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(super) fn new(read: R, write: W, ledger: Arc<Ledger>) -> Wire<R, W> {
        let oversized = Arc::new(Oversized::default());
        let lines = Lines::new(read, oversized.clone());
        // `Lines` cuts every line at MAX_LINE_BYTES (plus its marker):
        // rmcp's own bound never drops one first.
        let inner = AsyncRwTransport::new(lines, write).with_max_line_length(MAX_LINE_BYTES + 2);
        Wire {
            inner,
            ledger,
            oversized,
        }
    }

    /// Writes an error to `id` without waiting for it (a client that does
    /// not read must not stop this transport reading).
    fn refuse(&mut self, id: Value, code: i64, message: String) {
        let error =
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        let Ok(error) = serde_json::from_value::<TxJsonRpcMessage<RoleServer>>(error) else {
            return;
        };
        let refusing = Refusing::new(&self.ledger);
        let send = self.inner.send(error);
        tokio::spawn(async move {
            let _ = send.await;
            drop(refusing);
        });
    }

    fn refuse_oversized(&mut self) {
        loop {
            let id = self
                .oversized
                .ids
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .pop_front();
            let Some(id) = id else { return };
            let message = format!(
                "Invalid request: the request is over {MAX_LINE_BYTES} bytes, capstan's limit for one message"
            );
            self.refuse(id, -32600, message);
        }
    }
}

impl<R, W> Transport<RoleServer> for Wire<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answers = match &item {
            JsonRpcMessage::Response(r) => Some(key(&r.id)),
            JsonRpcMessage::Error(e) => e.id.as_ref().map(key),
            _ => None,
        };
        let answered = answers.map(|key| Answered(self.ledger.clone(), key));
        let send = self.inner.send(item);
        async move {
            let sent = send.await;
            drop(answered);
            sent
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if !self.ledger.room_to_refuse().await {
                return None;
            }
            self.refuse_oversized();
            // Cancel-safe both ways: rmcp keeps a partial line between
            // calls, and a refusal heard is taken from the queue above.
            let message = tokio::select! {
                biased;
                _ = self.oversized.heard.notified() => continue,
                m = self.inner.receive() => m?,
            };
            match &message {
                ClientJsonRpcMessage::Request(request) => {
                    let id = serde_json::to_value(&request.id).unwrap_or(Value::Null);
                    match self.ledger.take(&request.id) {
                        Taken::Yes => return Some(message),
                        Taken::Duplicate => {
                            let message = format!(
                                "Invalid request: a request with id {id} is already in flight"
                            );
                            self.refuse(id, -32600, message);
                        }
                        Taken::Busy => {
                            let message = format!(
                                "Server busy: {} requests are in flight, capstan's limit \
                                 (max_requests_in_flight); send this one again after an answer",
                                self.ledger.max
                            );
                            self.refuse(id, -32000, message);
                        }
                    }
                    // Lets the refusal be written before the next line is
                    // read (one thread serves stdio).
                    tokio::task::yield_now().await;
                }
                ClientJsonRpcMessage::Notification(n) => {
                    if let ClientNotification::CancelledNotification(c) = &n.notification {
                        if let Some(id) = &c.params.request_id {
                            self.ledger.cancelled(id);
                        }
                    }
                    return Some(message);
                }
                _ => return Some(message),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

/// The server's handler, telling the ledger when a request's handler
/// ends (a cancelled request's answer is never written).
pub(super) struct Counted<S> {
    pub(super) inner: S,
    pub(super) ledger: Arc<Ledger>,
}

struct HandlerDone(Arc<Ledger>, String);

impl Drop for HandlerDone {
    fn drop(&mut self) {
        self.0.handler_done(&self.1);
    }
}

impl<S: Service<RoleServer>> Service<RoleServer> for Counted<S> {
    fn handle_request(
        &self,
        request: rmcp::model::ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> impl std::future::Future<Output = Result<rmcp::model::ServerResult, rmcp::ErrorData>>
           + rmcp::service::MaybeSendFuture
           + '_ {
        let done = HandlerDone(self.ledger.clone(), key(&context.id));
        let handled = self.inner.handle_request(request, context);
        async move {
            let result = handled.await;
            drop(done);
            result
        }
    }

    fn handle_notification(
        &self,
        notification: ClientNotification,
        context: rmcp::service::NotificationContext<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), rmcp::ErrorData>>
           + rmcp::service::MaybeSendFuture
           + '_ {
        self.inner.handle_notification(notification, context)
    }

    fn get_info(&self) -> rmcp::model::ServerConfig {
        self.inner.get_info()
    }

    fn supported_protocol_versions(
        &self,
    ) -> std::borrow::Cow<'static, [rmcp::model::ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// What `Lines` passes on of `input`, and the ids it refused.
    fn filtered(input: Vec<u8>) -> (Vec<u8>, Vec<Value>) {
        let oversized = Arc::new(Oversized::default());
        let mut lines = Lines::new(&input[..], oversized.clone());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let mut out = Vec::new();
        rt.block_on(lines.read_to_end(&mut out)).expect("read");
        let ids = oversized
            .ids
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
            .collect();
        (out, ids)
    }

    #[test]
    fn lines_within_the_bound_pass_unchanged_and_oversized_ones_are_cut_with_their_id() {
        let small = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n".to_vec();
        let pad = "x".repeat(MAX_LINE_BYTES);
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{{\"p\":\"{pad}\"}},\"id\":\"late\"}}\n"
        );
        let mut input = small.clone();
        input.extend_from_slice(big.as_bytes());
        input.extend_from_slice(&small);
        let (out, ids) = filtered(input);
        assert_eq!(ids, vec![json!("late")]);
        assert!(out.starts_with(&small));
        assert!(out.ends_with(&small));
        // The cut line's prefix ends in NUL, newline: never valid JSON.
        let middle = &out[small.len()..out.len() - small.len()];
        assert!(
            middle.ends_with(b"\0\n"),
            "{:?}",
            &middle[middle.len() - 4..]
        );
        assert!(middle.len() <= MAX_LINE_BYTES + 2);
        assert_eq!(middle.iter().filter(|&&b| b == b'\n').count(), 1);
    }

    #[test]
    fn an_oversized_answer_or_notification_is_cut_without_a_refusal() {
        let pad = "x".repeat(MAX_LINE_BYTES + 1);
        let answer = format!("{{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{\"p\":\"{pad}\"}}}}\n");
        let (_, ids) = filtered(answer.into_bytes());
        assert!(ids.is_empty());
    }

    #[test]
    fn the_ledger_refuses_past_its_bound_and_frees_a_slot_per_answer_or_cancelled_end() {
        let ledger = Ledger::new(2);
        let (a, b, c) = (
            RequestId::Number(1),
            RequestId::Number(2),
            RequestId::Number(3),
        );
        assert!(matches!(ledger.take(&a), Taken::Yes));
        assert!(matches!(ledger.take(&a), Taken::Duplicate));
        assert!(matches!(ledger.take(&b), Taken::Yes));
        assert!(matches!(ledger.take(&c), Taken::Busy));
        drop(Answered(ledger.clone(), key(&a)));
        assert!(matches!(ledger.take(&c), Taken::Yes));
        // A cancelled request frees its slot once its handler ended.
        ledger.cancelled(&b);
        assert!(matches!(ledger.take(&a), Taken::Busy));
        ledger.handler_done(&key(&b));
        assert!(matches!(ledger.take(&a), Taken::Yes));
    }
}
