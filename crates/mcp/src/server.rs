//! Serves a registry over MCP (rmcp): stdio, or streamable HTTP on loopback.
//!
//! Both protocol eras on one endpoint (`era`): 2025-11-25 clients open a
//! session with `initialize`, 2026-07-28 clients send stateless requests
//! with the protocol version in each request's `_meta` (`server/discover`).
//!
//! `tools/list` is the registry at the moment of the request; register and
//! unregister send `notifications/tools/list_changed` to every initialized
//! client (a modern one on its `subscriptions/listen` stream). `tools/call` goes through `exec::submit` like any other call:
//! validation, timeouts, approval, stats. A client's `notifications/cancelled`
//! cancels the call's batch (the tool sees `capstan_call_cancelled`).
//!
//! HTTP: rmcp checks `Host` and `Origin` (403; DNS-rebinding protection; only
//! loopback origins unless the host lists more) and the body size (413);
//! capstan checks the bearer token first (401), so nothing unauthenticated
//! reaches rmcp's session logic or a tool.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::{Map, Value};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use capstan_core::call::ToolResult;
use capstan_core::error::Error;
use capstan_core::exec::{self, Sink};
use capstan_core::registry::Registry;
use capstan_formats::providers::{export_tools, ExportOptions, Format};

mod call;
mod http;
mod journal;
mod stdio;

pub use http::HttpServer;
pub use stdio::serve_stdio;

/// Default bound on a POST body.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Default bound `stop` waits for calls in flight.
pub(crate) const DEFAULT_STOP_TIMEOUT_MS: u32 = 5000;
/// Default time a connection has to send a request's headers, counted from
/// the connection (or the end of its previous answer): a connection idle or
/// sending its headers slowly for longer is closed.
pub(crate) const DEFAULT_HEADER_TIMEOUT_MS: u32 = 10_000;
/// Default time a request's body has to arrive whole, counted from the end
/// of its head: a connection sending it slowly for longer gets 408 and is closed.
pub(crate) const DEFAULT_BODY_TIMEOUT_MS: u32 = 30_000;
/// Default cap on sessions open at once (about 55 KB each).
pub(crate) const DEFAULT_MAX_SESSIONS: usize = 1024;
/// Default time a session may stay idle before it is closed (rmcp's keep-alive).
pub(crate) const DEFAULT_SESSION_IDLE_MS: u32 = 300_000;
/// Default cap on connections open at once; more wait to be accepted.
pub(crate) const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// Default cap on a stdio client's requests taken and not yet answered.
pub(crate) const DEFAULT_MAX_REQUESTS_IN_FLIGHT: usize = 256;

/// How to serve. `Default` is loopback on a port the OS picks, no token.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// HTTP only: `host:port` to bind (`127.0.0.1:0` by default).
    pub address: String,
    /// HTTP only: requests must carry `Authorization: Bearer <token>` (401 otherwise).
    pub bearer_token: Option<String>,
    /// HTTP only: browser origins accepted besides loopback ones
    /// (`http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*`).
    pub allowed_origins: Vec<String>,
    /// HTTP only: `Host` values accepted besides loopback ones (needed when
    /// binding a non-loopback address).
    pub allowed_hosts: Vec<String>,
    /// HTTP only: larger POST bodies get 413.
    pub max_body_bytes: usize,
    /// Bounds every call from its arrival, waits included (0: the tools' own timeouts).
    pub call_timeout_ms: u32,
    /// How long `stop` waits for calls in flight (after cancelling them).
    pub stop_timeout_ms: u32,
    /// HTTP only: a connection that has not sent a whole request head this
    /// long after it opened, or after its previous answer, is closed
    /// (0: `DEFAULT_HEADER_TIMEOUT_MS`, 10 s).
    pub header_timeout_ms: u32,
    /// HTTP only: a request's body must arrive whole this long after its
    /// head; past it the request gets 408 and the connection is closed
    /// (0: `DEFAULT_BODY_TIMEOUT_MS`, 30 s).
    pub body_timeout_ms: u32,
    /// HTTP only: connections served at once; more wait in the listen
    /// queue until one closes (0: `DEFAULT_MAX_CONNECTIONS`, 256). Event
    /// streams (a GET, a `subscriptions/listen`) take at most half of them:
    /// a GET past it gets 405 (MCP: no stream offered), a listen 503.
    pub max_connections: usize,
    /// HTTP only: sessions open at once; an `initialize` past it gets an
    /// HTTP 500 saying "too many sessions" (0: `DEFAULT_MAX_SESSIONS`, 1024).
    pub max_sessions: usize,
    /// HTTP only: a session without requests this long is closed (0:
    /// `DEFAULT_SESSION_IDLE_MS`, 5 minutes).
    pub session_idle_ms: u32,
    /// stdio only: requests taken and not yet answered (a request counts
    /// from its line until its answer is written, or until its handler
    /// ended after the client cancelled it); a request past it gets a
    /// JSON-RPC error (-32000, "Server busy") at once
    /// (0: `DEFAULT_MAX_REQUESTS_IN_FLIGHT`, 256).
    pub max_requests_in_flight: usize,
    /// `serverInfo.name`.
    pub name: String,
    /// Per tool name: `{"title"?, "annotations"?, "outputSchema"?}` added to
    /// its `tools/list` entry, each replacing what the tool carries (`McpMeta`).
    pub tools_meta: Map<String, Value>,
    /// Tasks (`super::tasks`) kept at once, running or ended; a call that
    /// would make one more gets an error (0: `DEFAULT_MAX_TASKS`, 1024).
    pub max_tasks: usize,
    /// How long an ended task's result stays readable with `tasks/get`
    /// (0: `DEFAULT_TASK_KEEP_MS`, 5 minutes).
    pub task_keep_ms: u32,
    /// Bytes (as JSON text) the tasks hold in all: ended tasks' results,
    /// and the requests and answers of tasks waiting for input. Past it,
    /// ended tasks' results are dropped oldest first (`super::tasks`)
    /// (0: `DEFAULT_MAX_TASK_BYTES`, 64 MiB).
    pub max_task_bytes: usize,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            address: "127.0.0.1:0".into(),
            bearer_token: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            call_timeout_ms: 0,
            stop_timeout_ms: DEFAULT_STOP_TIMEOUT_MS,
            header_timeout_ms: DEFAULT_HEADER_TIMEOUT_MS,
            body_timeout_ms: DEFAULT_BODY_TIMEOUT_MS,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle_ms: DEFAULT_SESSION_IDLE_MS,
            max_requests_in_flight: DEFAULT_MAX_REQUESTS_IN_FLIGHT,
            name: "capstan".into(),
            tools_meta: Map::new(),
            max_tasks: 0,
            task_keep_ms: 0,
            max_task_bytes: 0,
        }
    }
}

impl ServerOptions {
    /// Checks what a host can get wrong, so that start fails with a reason.
    pub fn check(&self) -> Result<(), Error> {
        if self.bearer_token.as_deref() == Some("") {
            // No request could carry it: every one would get 401.
            return Err(Error::InvalidArgument(
                "bearer_token is empty (leave it unset for no token)".into(),
            ));
        }
        if let Some(token) = &self.bearer_token {
            // A header value loses its surrounding whitespace and cannot
            // carry control characters: such a token would refuse every request.
            if token.bytes().any(|b| !(0x21..0x7f).contains(&b)) {
                return Err(Error::InvalidArgument(
                    "bearer_token has whitespace or characters outside visible ASCII: no request could carry it".into(),
                ));
            }
        }
        for (name, meta) in &self.tools_meta {
            let Some(m) = meta.as_object() else {
                return Err(Error::InvalidArgument(format!(
                    "tools_meta[{name:?}] must be an object"
                )));
            };
            for (key, value) in m {
                let ok = match key.as_str() {
                    "title" => value.is_string(),
                    "annotations" | "outputSchema" => value.is_object(),
                    _ => false,
                };
                if !ok {
                    return Err(Error::InvalidArgument(format!(
                        "tools_meta[{name:?}].{key}: expected \"title\" (string), \"annotations\" or \"outputSchema\" (objects)"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Methods of the MCP spec (2025-06-18, and 2026-07-28's `server/discover`
/// and `subscriptions/listen`, and the Tasks extension's) a client may send:
/// a request for one of them that rmcp cannot read had params of the wrong shape.
const KNOWN_METHODS: [&str; 18] = [
    "initialize",
    "server/discover",
    "subscriptions/listen",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "logging/setLevel",
    "completion/complete",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// What every session of one server shares.
struct State {
    registry: Registry,
    options: ServerOptions,
    /// Initialized clients (legacy era), for `list_changed`.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    changed: Arc<Notify>,
    /// Batches of registry changes announced so far: each modern client's
    /// `subscriptions/listen` stream watches it (`era::listen`).
    changes: tokio::sync::watch::Sender<u64>,
    /// The count of `changes` when a `subscriptions/listen` was accepted
    /// (the lowest, if several were at once): rmcp acknowledges a listen
    /// before `listen` runs, and a change in between is owed to it.
    listen_from: Mutex<Option<u64>>,
    /// Cancelled by `stop`: calls in flight are cancelled, new ones refused.
    stopping: CancellationToken,
    in_flight: AtomicUsize,
    idle: Notify,
    /// Calls run as tasks (`super::tasks`).
    tasks: Arc<super::tasks::Tasks>,
    /// Seals the state of tools that ask for input (`super::input`).
    codec: rmcp::model::RequestStateCodec,
}

/// The rmcp handler: one per session, all sharing `State`; the session's
/// own log level (`logging/setLevel`, a legacy session's).
#[derive(Clone)]
struct Bridge(Arc<State>, super::log::SessionLevel);

impl Bridge {
    fn new(state: Arc<State>) -> Bridge {
        Bridge(state, Arc::default())
    }
}

/// Counts a call from its submission until its result is delivered (not
/// until its request future ends: stopping drops those first); `stop` waits
/// for the count to reach zero.
struct InFlight(Arc<State>);

impl InFlight {
    fn enter(state: &Arc<State>) -> Self {
        state.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(state.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// Cancels the call's batch when the request goes away without its result
/// (client cancellation, server stop, a closed connection).
struct CancelOnDrop(Option<exec::Batch>);

impl CancelOnDrop {
    fn cancel(&self) {
        if let Some(batch) = &self.0 {
            batch.cancel();
        }
    }

    /// The batch, no longer cancelled on drop.
    fn into_inner(mut self) -> Option<exec::Batch> {
        self.0.take()
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(batch) = &self.0 {
            if !batch.is_done() {
                batch.cancel();
            }
        }
    }
}

fn request_id_text(id: &rmcp::model::RequestId) -> String {
    match serde_json::to_value(id) {
        Ok(Value::String(s)) => s,
        Ok(v) => v.to_string(),
        Err(_) => "mcp_call".into(),
    }
}

impl State {
    fn tools(&self) -> Result<Vec<Tool>, ErrorData> {
        let export = export_tools(
            &self.registry.specs(),
            Format::Mcp,
            &ExportOptions::default(),
        );
        let Value::Array(list) = export.tools else {
            return Err(ErrorData::internal_error("tool export is not a list", None));
        };
        list.into_iter()
            .map(|mut tool| {
                let meta = tool
                    .get("name")
                    .and_then(Value::as_str)
                    .and_then(|n| self.options.tools_meta.get(n))
                    .and_then(Value::as_object);
                if let (Some(meta), Value::Object(t)) = (meta, &mut tool) {
                    for (k, v) in meta {
                        t.insert(k.clone(), v.clone());
                    }
                }
                serde_json::from_value::<Tool>(tool)
                    .map_err(|e| ErrorData::internal_error(format!("tool export: {e}"), None))
            })
            .collect()
    }

    /// Sends `list_changed` to every client still connected, after each
    /// batch of registry changes.
    async fn announce_changes(self: Arc<Self>) {
        loop {
            tokio::select! {
                _ = self.changed.notified() => {}
                _ = self.stopping.cancelled() => return,
            }
            let peers: Vec<Peer<RoleServer>> = match self.peers.lock() {
                Ok(mut p) => {
                    p.retain(|peer| !peer.is_transport_closed());
                    p.clone()
                }
                Err(_) => return,
            };
            for peer in peers {
                let _ = peer.notify_tool_list_changed().await;
            }
            self.changes.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// Cancels calls in flight and waits for them until `deadline`. True if none is left.
    async fn drain(&self, deadline: Instant) -> bool {
        self.stopping.cancel();
        loop {
            let idle = self.idle.notified();
            if self.in_flight.load(Ordering::SeqCst) == 0 {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, idle).await.is_err() {
                return self.in_flight.load(Ordering::SeqCst) == 0;
            }
        }
    }
}

impl ServerHandler for Bridge {
    // Logging (deprecated by MCP 2026-07-28, SEP-2577, still used by
    // clients of both eras): advertised, with `set_level` below.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_tasks()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new(
            self.0.options.name.clone(),
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.0.tools()?))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Boxed: rmcp's future for a request is sized for its largest
        // method, and a call's (with its task path) is by far the largest.
        Box::pin(self.0.call(request, &context, &self.1)).await
    }

    /// A legacy session's level for the log messages of its later calls
    /// (`Call::log`); a 2026-07-28 client sets it per request in `_meta`
    /// instead (the method was removed).
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if super::era::is_modern(&context.meta) {
            return Err(removed_error("logging/setLevel"));
        }
        let Some(level) = super::log::level_of(request.level) else {
            return Err(ErrorData::invalid_params("an unknown log level", None));
        };
        *self.1.lock().unwrap_or_else(|e| e.into_inner()) = Some(level);
        Ok(())
    }

    /// rmcp reads some requests for a known method whose params do not fit
    /// as a custom request, which would answer "method not found": the
    /// method exists, its params are wrong (-32602, saying what is wrong).
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        let method = request.method.as_str();
        let modern = super::era::is_modern(&context.meta);
        if super::era::removed_method(method, modern) {
            return Err(removed_error(method));
        }
        if KNOWN_METHODS.contains(&method) {
            let why = params_problem(method, request.params.as_ref());
            return Err(ErrorData::invalid_params(
                format!("{method}: invalid params: {why}"),
                None,
            ));
        }
        Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            request.method,
            None,
        ))
    }

    /// A modern (2026-07-28) client hears `tools/list_changed` on the
    /// `subscriptions/listen` stream it opens (a legacy one unasked).
    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        let now = *self.0.changes.borrow();
        if let Ok(mut from) = self.0.listen_from.lock() {
            *from = Some(from.map_or(now, |f| f.min(now)));
        }
        super::era::accepted_filter(requested)
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), ErrorData> {
        let changes = self.0.changes.subscribe();
        let from = self.0.listen_from.lock().ok().and_then(|mut f| f.take());
        super::era::listen(context, changes, from, self.0.stopping.clone()).await
    }

    /// For rmcp's check of `Mcp-Param-*` headers against the tool's
    /// `x-mcp-header` arguments (2026-07-28, SEP-2243).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.0.registry.get(name)?;
        self.0.tools().ok()?.into_iter().find(|t| t.name == name)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.0.tasks.get(&request.task_id).map(GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.0
            .tasks
            .update(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.0.tasks.cancel(&request.task_id)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Ok(mut peers) = self.0.peers.lock() {
            peers.retain(|peer| !peer.is_transport_closed());
            peers.push(context.peer);
        }
    }
}

/// A sink for a batch of one call: its result comes out of the receiver,
/// and `counted` (the server's count of calls in flight) is dropped when it
/// is handed over.
pub(super) fn one_result<C: Send + 'static>(
    counted: C,
) -> (Sink, tokio::sync::oneshot::Receiver<ToolResult>) {
    let (tx, rx) = tokio::sync::oneshot::channel::<ToolResult>();
    let tx = Mutex::new(Some((tx, counted)));
    let sink = Sink::Callback(Box::new(move |_, result| {
        if let Some((tx, counted)) = tx.lock().ok().and_then(|mut t| t.take()) {
            let _ = tx.send(result);
            drop(counted);
        }
    }));
    (sink, rx)
}

/// What is wrong with the params of a request for a known method that rmcp
/// could not read.
fn params_problem(method: &str, params: Option<&Value>) -> String {
    match (method, params) {
        (_, Some(p)) if !p.is_object() && !p.is_null() => "params must be an object".to_owned(),
        ("tools/call", p) if !p.and_then(|p| p.get("name")).is_some_and(Value::is_string) => {
            "\"name\" must be a string".to_owned()
        }
        ("tools/call", Some(p))
            if !p
                .get("arguments")
                .is_none_or(|a| a.is_object() || a.is_null()) =>
        {
            "\"arguments\" must be an object".to_owned()
        }
        (m, p)
            if m.starts_with("tasks/")
                && !p
                    .and_then(|p| p.get("taskId"))
                    .is_some_and(Value::is_string) =>
        {
            "\"taskId\" must be a string".to_owned()
        }
        _ => "they do not have the shape the MCP spec gives them".to_owned(),
    }
}

/// "Method not found" for a method the modern era removed.
fn removed_error(method: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("Method not found: {method} (removed in MCP 2026-07-28)"),
        None,
    )
}

fn new_state(registry: &Registry, options: &ServerOptions) -> Result<(Arc<State>, u64), Error> {
    options.check()?;
    let changed = Arc::new(Notify::new());
    let notify = changed.clone();
    let listener = registry.add_change_listener(Arc::new(move || notify.notify_one()));
    let state = Arc::new(State {
        registry: registry.clone(),
        options: options.clone(),
        peers: Mutex::new(Vec::new()),
        changed,
        changes: tokio::sync::watch::Sender::new(0),
        listen_from: Mutex::new(None),
        stopping: CancellationToken::new(),
        in_flight: AtomicUsize::new(0),
        idle: Notify::new(),
        tasks: Arc::new(super::tasks::Tasks::new(
            options.max_tasks,
            options.task_keep_ms,
            options.max_task_bytes,
        )),
        codec: super::input::new_codec()?,
    });
    Ok((state, listener))
}

fn runtime(threads: usize) -> Result<tokio::runtime::Runtime, Error> {
    let mut builder = if threads == 0 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    };
    builder
        .enable_all()
        .thread_name("capstan-mcp")
        .on_thread_start(capstan_core::runtime::pool::runtime_thread::started)
        .on_thread_unpark(capstan_core::runtime::pool::runtime_thread::unparked)
        .on_thread_stop(capstan_core::runtime::pool::runtime_thread::stopping)
        .build()
        .map_err(|e| Error::Internal(format!("could not start the MCP runtime: {e}")))
}

/// Options from their C form: comma-separated lists.
pub fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}
