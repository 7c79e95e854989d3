//! The mount's bound on what a server can make it owe (issue #29, row 1;
//! issue 45, finding 8): answers to the server's own requests (ping,
//! roots/list, sampling, elicitation) not yet delivered, and messages not
//! yet sent, the same over stdio and over streamable HTTP.
//!
//! rmcp starts a task for every request a server sends and keeps every
//! answer until the transport took it; the host's answerer runs on a
//! blocking thread per request. A server that floods requests (and does not
//! read the answers, or asks faster than the host answers) made capstan
//! hold every answer (1.33 GB in 8 s over HTTP) and hand every request to
//! the host (512 at once, the blocking pool's size, over stdio). Here a
//! request is handed to rmcp only while fewer than `MAX_OWED` answers are
//! owed (received, not yet delivered); past it the request is refused at
//! once with a JSON-RPC error (`BUSY`) saying so, as long as fewer than
//! `MAX_REFUSING` refusals are being sent, else dropped unread (a server
//! that does not read its answers would not read those either; the other
//! half of `MAX_QUEUED` stays for the mount's own messages). Sends are
//! bounded too: past `wire::MAX_QUEUED` messages waiting, a send fails at
//! once saying why.

use std::borrow::Cow;
use std::collections::HashSet;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ErrorCode, ErrorData, JsonRpcMessage, RequestId, ServerJsonRpcMessage, ServerNotification,
};
use rmcp::service::{RoleClient, TxJsonRpcMessage};
use rmcp::transport::Transport;

use super::wire::{MAX_QUEUED, MAX_QUEUED_ANSWERS as MAX_OWED};

/// The JSON-RPC error code of a request refused because too many answers
/// are owed (the implementation-defined server-error range).
pub(crate) const BUSY: i32 = -32000;

/// Refusals being sent at most: past it a request past the bound is
/// dropped unread.
pub(crate) const MAX_REFUSING: usize = MAX_QUEUED / 2;

/// A transport whose peer can make it owe a bounded number of answers.
pub(crate) struct Owed<T> {
    inner: T,
    /// Ids of the server's requests handed to rmcp and not yet answered
    /// (the answer's send not finished).
    owed: Arc<Mutex<HashSet<RequestId>>>,
    /// Messages whose send has not finished.
    sending: Arc<AtomicUsize>,
    /// Refusals whose send has not finished.
    refusing: Arc<AtomicUsize>,
    /// Requests dropped unread because too many answers were owed and too
    /// many refusals were being sent.
    dropped: Arc<AtomicUsize>,
}

impl<T> Owed<T> {
    pub(crate) fn new(inner: T) -> Owed<T> {
        Owed {
            inner,
            owed: Arc::default(),
            sending: Arc::default(),
            refusing: Arc::default(),
            dropped: Arc::default(),
        }
    }

    fn owed(&self) -> std::sync::MutexGuard<'_, HashSet<RequestId>> {
        self.owed.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The error of a send refused because too many wait: the transport's own
/// error type, made from text.
pub(crate) trait Refusal {
    fn refused(why: String) -> Self;
}

impl Refusal for std::io::Error {
    fn refused(why: String) -> Self {
        std::io::Error::new(std::io::ErrorKind::WouldBlock, why)
    }
}

impl<E: std::error::Error + Send + Sync + 'static> Refusal
    for rmcp::transport::streamable_http_client::StreamableHttpError<E>
{
    fn refused(why: String) -> Self {
        Self::UnexpectedServerResponse(why.into())
    }
}

/// Ends a send's share of the counts when the send finishes or is dropped.
struct Sending {
    sending: Arc<AtomicUsize>,
    answer: Option<(RequestId, Arc<Mutex<HashSet<RequestId>>>)>,
}

impl Drop for Sending {
    fn drop(&mut self) {
        self.sending.fetch_sub(1, Ordering::SeqCst);
        if let Some((id, owed)) = self.answer.take() {
            owed.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
        }
    }
}

impl<T> Owed<T>
where
    T: Transport<RoleClient>,
    T::Error: Refusal,
{
    /// Answers a request past the bound with `BUSY`, without waiting for
    /// the send (a server that does not read must not stop capstan reading
    /// it); dropped unread when `MAX_REFUSING` refusals are being sent
    /// already.
    fn refuse(&mut self, id: RequestId) {
        let refusing = Sending {
            sending: self.refusing.clone(),
            answer: None,
        };
        if self.refusing.fetch_add(1, Ordering::SeqCst) >= MAX_REFUSING {
            drop(refusing);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let error = ErrorData::new(
            ErrorCode(BUSY),
            format!(
                "capstan refused this request: {MAX_OWED} answers to this server's requests \
                 are owed already; send it again once some are answered"
            ),
            None,
        );
        let send = Transport::send(self, JsonRpcMessage::error(error, Some(id)));
        tokio::spawn(async move {
            let _refusing = refusing;
            let _ = send.await;
        });
    }
}

impl<T> Transport<RoleClient> for Owed<T>
where
    T: Transport<RoleClient>,
    T::Error: Refusal,
{
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answer = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            _ => None,
        };
        let ahead = self.sending.fetch_add(1, Ordering::SeqCst);
        let sending = Sending {
            sending: self.sending.clone(),
            answer: answer.map(|id| (id, self.owed.clone())),
        };
        let send = (ahead < MAX_QUEUED).then(|| self.inner.send(item));
        async move {
            let _sending = sending;
            match send {
                Some(send) => send.await,
                None => Err(T::Error::refused(format!(
                    "the server does not read what is sent to it ({MAX_QUEUED} messages wait to be sent)"
                ))),
            }
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let message = self.inner.receive().await?;
            match &message {
                JsonRpcMessage::Request(request) => {
                    let mut owed = self.owed();
                    if owed.len() >= MAX_OWED && !owed.contains(&request.id) {
                        drop(owed);
                        self.refuse(request.id.clone());
                        continue;
                    }
                    owed.insert(request.id.clone());
                }
                // rmcp drops the answer to a request the server cancelled.
                JsonRpcMessage::Notification(notification) => {
                    if let ServerNotification::CancelledNotification(cancelled) =
                        &notification.notification
                    {
                        if let Some(id) = &cancelled.params.request_id {
                            self.owed().remove(id);
                        }
                    }
                }
                _ => {}
            }
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
