//! Progress over MCP. Served: a `tools/call` whose `_meta` carries a
//! `progressToken` gets the call's reports (`Call::report_progress`) as
//! `notifications/progress`, in order, all sent before its result. Mounted:
//! the server's notifications for a forwarded call (rmcp gives each request
//! a token) are reported on the local call as the transport reads them, so
//! all of them before the call's result (the host's event hook sees them,
//! and a client of capstan's server too). rmcp's own notification handler
//! runs on a task of its own, which may come after the result.
//!
//! Bound: at most [`QUEUED`] reports wait to be sent per call; a tool that
//! reports faster than the client reads loses the reports past it (each
//! report supersedes the ones before, so the newest still arrives after a pause).

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult,
    CancelledNotificationParam, ClientRequest, JsonRpcMessage, NumberOrString,
    ProgressNotificationParam, ProgressToken, RequestId, ServerJsonRpcMessage, ServerNotification,
    ServerResult,
};
use rmcp::service::{PeerRequestOptions, RequestContext, RoleClient, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{Peer, RoleServer, ServiceError};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use capstan_core::exec::Call;
use capstan_core::progress::{Progress, ProgressListener};

/// Reports queued per call before newer ones are dropped.
const QUEUED: usize = 64;
/// How long a result waits for its call's queued reports to be sent.
const FLUSH: Duration = Duration::from_secs(1);

/// Sends one served call's progress to its client.
pub(crate) struct Forwarder {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

/// The listener to put in the call's `ExecOptions`, and what sends its
/// reports; `None` if the request asked for no progress.
pub(crate) fn serve(context: &RequestContext<RoleServer>) -> Option<(ProgressListener, Forwarder)> {
    let token = context.meta.get_progress_token()?;
    let peer: Peer<RoleServer> = context.peer.clone();
    let (tx, rx) = mpsc::channel::<Progress>(QUEUED);
    let forwarder = Forwarder::spawn(rx, move |p: Progress| {
        let peer = peer.clone();
        let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
        param.total = p.total;
        param.message = p.message;
        async move { peer.notify_progress(param).await.is_ok() }
    });
    let listener = ProgressListener(Arc::new(move |_, p: &Progress| {
        let _ = tx.try_send(p.clone());
    }));
    Some((listener, forwarder))
}

impl Forwarder {
    /// Sends what `rx` brings with `send` (which says whether to go on),
    /// in order, until `finish`.
    pub(crate) fn spawn<T, F, Fut>(mut rx: mpsc::Receiver<T>, mut send: F) -> Forwarder
    where
        T: Send + 'static,
        F: FnMut(T) -> Fut + Send + 'static,
        Fut: Future<Output = bool> + Send,
    {
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            loop {
                let next = tokio::select! {
                    biased;
                    r = rx.recv() => r,
                    _ = stopped.cancelled() => {
                        // The result is ready: send what is queued, then stop.
                        rx.close();
                        rx.recv().await
                    }
                };
                let Some(item) = next else { return };
                if !send(item).await {
                    return;
                }
            }
        });
        Forwarder { stop, task }
    }

    /// Sends the reports still queued (for at most `FLUSH`), so that none
    /// follows the result.
    pub(crate) async fn finish(self) {
        self.stop.cancel();
        let mut task = self.task;
        if tokio::time::timeout(FLUSH, &mut task).await.is_err() {
            task.abort();
        }
    }
}

/// Mounted calls waiting for their server's progress, by the token rmcp
/// gave their request.
#[derive(Default)]
pub(crate) struct Waiting {
    calls: Mutex<HashMap<String, Call>>,
    /// Reports read before their call was registered (the request's token is
    /// known only once it is sent): at most `QUEUED`, the oldest dropped.
    early: Mutex<VecDeque<(String, Progress)>>,
}

fn key(token: &ProgressToken) -> String {
    match &token.0 {
        NumberOrString::String(s) => format!("s{s}"),
        NumberOrString::Number(n) => format!("n{n}"),
    }
}

/// Removes a forwarded call from `Waiting` when its request ends.
struct Registered<'a> {
    waiting: &'a Waiting,
    key: String,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.waiting.calls.lock() {
            calls.remove(&self.key);
        }
    }
}

/// Sends `notifications/cancelled` for a request dropped before its answer.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        let param = CancelledNotificationParam::new(
            Some(id),
            Some("request abandoned by the caller".into()),
        );
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let _ = peer.notify_cancelled(param).await;
            });
        }
    }
}

/// `tools/call` as rmcp's `call_tool_once` sends it (cancelled if dropped
/// before the answer), with the server's progress for it reported on
/// `call`: rmcp gives every request a progress token of its own, known only
/// once the request is on its way.
pub(crate) async fn call_tool(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    meta: Option<rmcp::model::RequestMetaObject>,
    waiting: &Waiting,
    call: &Call,
) -> Result<CallToolResponse, ServiceError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let mut options = PeerRequestOptions::no_options();
    options.meta = meta;
    let handle = peer.send_request_with_option(request, options).await?;
    let key = key(&handle.progress_token);
    waiting.register(&key, call);
    let _registered = Registered { waiting, key };
    let mut cancel = CancelOnDrop {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    let answer = handle.await_response().await;
    cancel.id = None;
    match answer? {
        ServerResult::CallToolResult(r) => Ok(CallToolResponse::Complete(r)),
        ServerResult::InputRequiredResult(r) => Ok(CallToolResponse::InputRequired(r)),
        ServerResult::CreateTaskResult(r) => Ok(CallToolResponse::Task(r)),
        // A result with nothing in it (`{}`, `_meta` alone): no content.
        ServerResult::EmptyResult(_) => Ok(CallToolResponse::Complete(CallToolResult::default())),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

impl Waiting {
    fn register(&self, key: &str, call: &Call) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.insert(key.to_owned(), call.clone());
        }
        let early: Vec<Progress> = match self.early.lock() {
            Ok(mut early) => {
                let (mine, rest) = early.drain(..).partition(|(k, _)| k == key);
                *early = rest;
                mine.into_iter().map(|(_, p)| p).collect()
            }
            Err(_) => Vec::new(),
        };
        for p in early {
            let _ = call.report_progress(&p);
        }
    }

    /// A server's `notifications/progress`: reported on the call it names.
    /// Reports breaking the rules of `capstan_core::progress` (a value that does
    /// not grow) are dropped.
    fn heard(&self, param: &ProgressNotificationParam) {
        let key = key(&param.progress_token);
        let progress = Progress {
            progress: param.progress,
            total: param.total,
            message: param.message.clone(),
        };
        let Ok(calls) = self.calls.lock() else { return };
        match calls.get(&key).cloned() {
            Some(call) => {
                drop(calls);
                let _ = call.report_progress(&progress);
            }
            None => {
                drop(calls);
                if let Ok(mut early) = self.early.lock() {
                    if early.len() >= QUEUED {
                        early.pop_front();
                    }
                    early.push_back((key, progress));
                }
            }
        }
    }
}

/// A mount's transport, reading the server's progress notifications as
/// they arrive (see the module's comment).
pub(crate) struct Tap<T> {
    inner: T,
    waiting: Arc<Waiting>,
}

impl<T> Tap<T> {
    pub(crate) fn new(inner: T, waiting: &Arc<Waiting>) -> Tap<T> {
        Tap {
            inner,
            waiting: waiting.clone(),
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Tap<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(n) = &message {
            if let ServerNotification::ProgressNotification(p) = &n.notification {
                self.waiting.heard(&p.params);
            }
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
