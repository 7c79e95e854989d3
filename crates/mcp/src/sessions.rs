//! The HTTP server's sessions: rmcp's `LocalSessionManager`, with what a
//! hostile client must not get from it (issue 29):
//! - a cap on sessions open at once (`max_sessions`); sessions idle for
//!   `session_idle_ms` are closed (rmcp's keep-alive);
//! - a request whose JSON-RPC id is already in flight in its session gets
//!   an error at once (rmcp would route both answers to the second POST and
//!   leave the first unanswered for good);
//! - a POST whose answer stream goes away before the answer (the client
//!   closed its connection) cancels its request, as the client's
//!   `notifications/cancelled` would;
//! - a session's GET stream is read off rmcp's channel at once (`Relay`):
//!   rmcp's session worker waits while that channel (16 messages) is full,
//!   so a client that asked for logs and did not read its GET stream
//!   stalled every later answer of its session (issue 45). Log messages and
//!   progress reports past [`MAX_DROPPABLE`] waiting are dropped instead,
//!   counted, and a warning log message tells the client how many once it
//!   reads again; past [`MAX_WAITING`] messages in all the stream is closed.

use std::collections::{HashSet, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage, ServerNotification};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use serde_json::{json, Value};

type Local = LocalSessionManager;
type LocalError = LocalSessionManagerError;

/// Why a session could not be made or used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionsError {
    #[error("{0}")]
    Local(#[from] LocalError),
    #[error("too many sessions: {0} are open (close one with DELETE)")]
    TooMany(usize),
}

pub(crate) struct Sessions {
    inner: Arc<Local>,
    max_sessions: usize,
    /// (session, request id as JSON text) of the requests in flight.
    in_flight: Arc<Mutex<HashSet<(SessionId, String)>>>,
}

impl Sessions {
    pub(crate) fn new(inner: Local, max_sessions: usize) -> Sessions {
        Sessions {
            inner: Arc::new(inner),
            max_sessions,
            in_flight: Arc::new(Mutex::new(HashSet::new())),
        }
    }
}

/// The answer stream of one POSTed request.
type Answer = Pin<Box<dyn Stream<Item = ServerSseMessage> + Send + Sync>>;

fn one_message(message: ServerJsonRpcMessage) -> Answer {
    Box::pin(Once(Some(ServerSseMessage::from_message(message))))
}

struct Once(Option<ServerSseMessage>);

impl Stream for Once {
    type Item = ServerSseMessage;
    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<ServerSseMessage>> {
        Poll::Ready(self.0.take())
    }
}

/// Forwards a request's answer stream; when dropped, forgets the request,
/// and cancels it if its answer never came.
struct Guarded {
    inner: Answer,
    guard: Guard,
}

struct Guard {
    sessions: Arc<Local>,
    in_flight: Arc<Mutex<HashSet<(SessionId, String)>>>,
    session: SessionId,
    id: Value,
    key: String,
    answered: bool,
}

impl Stream for Guarded {
    type Item = ServerSseMessage;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ServerSseMessage>> {
        let polled = self.inner.as_mut().poll_next(cx);
        if let Poll::Ready(Some(item)) = &polled {
            let answers = match item.message.as_deref() {
                Some(ServerJsonRpcMessage::Response(r)) => serde_json::to_value(&r.id).ok(),
                Some(ServerJsonRpcMessage::Error(e)) => {
                    e.id.as_ref().and_then(|id| serde_json::to_value(id).ok())
                }
                _ => None,
            };
            if answers.as_ref() == Some(&self.guard.id) {
                self.guard.answered = true;
            }
        }
        polled
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(mut set) = self.in_flight.lock() {
            set.remove(&(self.session.clone(), self.key.clone()));
        }
        if self.answered {
            return;
        }
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": self.id, "reason": "the client closed its connection"}});
        let Ok(cancel) = serde_json::from_value::<ClientJsonRpcMessage>(cancel) else {
            return;
        };
        let (sessions, session) = (self.sessions.clone(), self.session.clone());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = sessions.accept_message(&session, cancel).await;
            });
        }
    }
}

/// Log messages and progress reports waiting on a GET stream at most;
/// more are dropped (and counted).
pub(crate) const MAX_DROPPABLE: usize = 64;

/// Messages waiting on a GET stream at most: past it the client is taken
/// not to read, and the stream is closed (it may open another).
pub(crate) const MAX_WAITING: usize = 1024;

/// A stream read off rmcp's channel by a task of its own (see the module).
struct Relay {
    shared: Arc<Mutex<Relayed>>,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Default)]
struct Relayed {
    waiting: VecDeque<ServerSseMessage>,
    /// Of `waiting`, the log messages and progress reports.
    droppable: usize,
    /// Dropped since the client was last told.
    dropped: u64,
    ended: bool,
    waker: Option<Waker>,
}

impl Relayed {
    fn wake(&mut self) {
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }
}

fn droppable(item: &ServerSseMessage) -> bool {
    matches!(
        item.message.as_deref(),
        Some(ServerJsonRpcMessage::Notification(n)) if matches!(
            n.notification,
            ServerNotification::LoggingMessageNotification(_)
                | ServerNotification::ProgressNotification(_)
        )
    )
}

/// The warning that tells the client how many messages it lost.
fn dropped_note(dropped: u64) -> Option<ServerSseMessage> {
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
        "level": "warning", "logger": "capstan",
        "data": format!("capstan dropped {dropped} log or progress messages: this event stream \
            was not read ({MAX_DROPPABLE} were waiting)")}});
    serde_json::from_value::<ServerJsonRpcMessage>(note)
        .ok()
        .map(ServerSseMessage::from_message)
}

impl Relay {
    fn spawn<S>(inner: S) -> Relay
    where
        S: Stream<Item = ServerSseMessage> + Send + 'static,
    {
        let shared = Arc::new(Mutex::new(Relayed::default()));
        let into = shared.clone();
        let task = tokio::spawn(async move {
            let mut inner = std::pin::pin!(inner);
            while let Some(item) = std::future::poll_fn(|cx| inner.as_mut().poll_next(cx)).await {
                let mut relayed = into.lock().unwrap_or_else(|e| e.into_inner());
                let droppable = droppable(&item);
                if droppable && relayed.droppable >= MAX_DROPPABLE {
                    relayed.dropped += 1;
                    continue;
                }
                if relayed.waiting.len() >= MAX_WAITING {
                    break;
                }
                relayed.droppable += usize::from(droppable);
                relayed.waiting.push_back(item);
                relayed.wake();
            }
            let mut relayed = into.lock().unwrap_or_else(|e| e.into_inner());
            relayed.ended = true;
            relayed.wake();
        });
        Relay { shared, task }
    }
}

impl Stream for Relay {
    type Item = ServerSseMessage;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ServerSseMessage>> {
        let mut relayed = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        if relayed.dropped > 0 {
            let dropped = std::mem::take(&mut relayed.dropped);
            if let Some(note) = dropped_note(dropped) {
                return Poll::Ready(Some(note));
            }
        }
        if let Some(item) = relayed.waiting.pop_front() {
            if droppable(&item) {
                relayed.droppable = relayed.droppable.saturating_sub(1);
            }
            return Poll::Ready(Some(item));
        }
        if relayed.ended {
            return Poll::Ready(None);
        }
        relayed.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = <Local as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let open = self.inner.sessions.read().await.len();
        if open >= self.max_sessions {
            return Err(SessionsError::TooMany(open));
        }
        Ok(self.inner.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let request_id = match &message {
            ClientJsonRpcMessage::Request(r) => serde_json::to_value(&r.id).ok(),
            _ => None,
        };
        let Some(request_id) = request_id else {
            let stream = self.inner.create_stream(id, message).await?;
            return Ok(Box::pin(stream) as Answer);
        };
        let key = request_id.to_string();
        let fresh = match self.in_flight.lock() {
            Ok(mut set) => set.insert((id.clone(), key.clone())),
            Err(_) => true,
        };
        if !fresh {
            let error = json!({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32600,
                "message": format!("Invalid request: a request with id {key} is already in flight in this session")}});
            if let Ok(error) = serde_json::from_value::<ServerJsonRpcMessage>(error) {
                return Ok(one_message(error));
            }
        }
        let guard = Guard {
            sessions: self.inner.clone(),
            in_flight: self.in_flight.clone(),
            session: id.clone(),
            id: request_id,
            key,
            answered: false,
        };
        let stream = self.inner.create_stream(id, message).await?;
        Ok(Box::pin(Guarded {
            inner: Box::pin(stream),
            guard,
        }) as Answer)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(Relay::spawn(self.inner.create_standalone_stream(id).await?))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(Relay::spawn(self.inner.resume(id, last_event_id).await?))
    }
}
