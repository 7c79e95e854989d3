//! Progress over MCP. Served: a `tools/call` whose `_meta` carries a
//! `progressToken` gets the call's reports (`Call::report_progress`) as
//! `notifications/progress`, in order, all sent before its result. Mounted:
//! a forwarded call asks for progress with a token of its own, and the
//! server's notifications for it are reported on the local call (so the
//! host's event hook sees them, and a client of capstan's server too).
//!
//! Bound: at most [`QUEUED`] reports wait to be sent per call; a tool that
//! reports faster than the client reads loses the reports past it (each
//! report supersedes the ones before, so the newest still arrives after a pause).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{NumberOrString, ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::exec::Call;
use crate::progress::{Progress, ProgressListener};

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
    let (tx, mut rx) = mpsc::channel::<Progress>(QUEUED);
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    let task = tokio::spawn(async move {
        loop {
            let report = tokio::select! {
                biased;
                r = rx.recv() => r,
                _ = stopped.cancelled() => {
                    // The result is ready: send what is queued, then stop.
                    rx.close();
                    rx.recv().await
                }
            };
            let Some(p) = report else { return };
            let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
            param.total = p.total;
            param.message = p.message;
            if peer.notify_progress(param).await.is_err() {
                return;
            }
        }
    });
    let listener = ProgressListener(Arc::new(move |_, p: &Progress| {
        let _ = tx.try_send(p.clone());
    }));
    Some((listener, Forwarder { stop, task }))
}

impl Forwarder {
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

/// Mounted calls waiting for their server's progress, by token.
#[derive(Default)]
pub(crate) struct Waiting {
    calls: Mutex<HashMap<String, Call>>,
    next: AtomicU64,
}

/// Removes a forwarded call from `Waiting` when its request ends.
pub(crate) struct Registered<'a> {
    waiting: &'a Waiting,
    key: String,
    pub(crate) token: ProgressToken,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.waiting.calls.lock() {
            calls.remove(&self.key);
        }
    }
}

impl Waiting {
    /// A token for `call`'s request; its server's progress for that token
    /// is reported on `call` until the returned guard drops.
    pub(crate) fn register(&self, call: &Call) -> Registered<'_> {
        let key = format!("capstan-{}", self.next.fetch_add(1, Ordering::Relaxed));
        if let Ok(mut calls) = self.calls.lock() {
            calls.insert(key.clone(), call.clone());
        }
        Registered {
            waiting: self,
            token: ProgressToken(NumberOrString::String(key.clone().into())),
            key,
        }
    }

    /// A server's `notifications/progress`: reported on the call it names.
    /// Reports for no waiting call, or breaking the rules of
    /// `crate::progress` (a value that does not grow), are dropped.
    pub(crate) fn heard(&self, param: ProgressNotificationParam) {
        let key = match &param.progress_token.0 {
            NumberOrString::String(s) => s.to_string(),
            NumberOrString::Number(n) => n.to_string(),
        };
        let call = self.calls.lock().ok().and_then(|c| c.get(&key).cloned());
        if let Some(call) = call {
            let _ = call.report_progress(&Progress {
                progress: param.progress,
                total: param.total,
                message: param.message,
            });
        }
    }
}
