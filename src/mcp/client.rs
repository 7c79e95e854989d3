//! Mount an MCP server's tools into a registry (the client side of the MCP
//! bridge, issue #14).
//!
//! A mount connects to one server (a child process over stdio, or a
//! streamable-HTTP URL), lists its tools and registers each as an ordinary
//! registry tool named `prefix + remote name`. Calls are validated locally
//! against the remote `inputSchema` by the executor, then forwarded; when the
//! executor gives up on a call (timeout, batch cancelled, registry closed) the
//! forward is dropped, which sends `notifications/cancelled` to the server. A
//! `notifications/tools/list_changed` re-lists the tools. When the connection
//! dies, calls fail as tool errors that say so, and a supervisor reconnects
//! as the host's policy allows.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig, PaginatedRequestParams,
    SubscriptionFilter,
};
use rmcp::service::{ClientServiceExt, NotificationContext, RoleClient, RunningService};
use rmcp::transport::common::client_side_sse::SseRetryPolicy;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, Peer};
use serde_json::{json, Value};
use tokio::runtime::Runtime;
use tokio::sync::{watch, Notify};

use crate::error::Error;
use crate::exec::Call;
use crate::exec::{Handler, ToolDef};
use crate::registry::{check_name, Registry};
use crate::tool::ToolFlags;

/// Where the server is.
#[derive(Clone, Debug)]
pub enum Endpoint {
    /// A command line: the server runs as a child process speaking MCP on
    /// its stdin/stdout. `env` adds to (or overrides) the inherited environment.
    Command {
        argv: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<String>,
    },
    /// A streamable-HTTP endpoint, with extra headers sent on every request.
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// How to mount a server.
#[derive(Clone, Debug)]
pub struct MountOptions {
    pub endpoint: Endpoint,
    /// Put before every remote tool name to form the local name.
    pub prefix: String,
    /// How long connecting and the first tool listing may take.
    pub connect_timeout: Duration,
    /// The local timeout of every mounted tool (0: the executor's default).
    pub call_timeout_ms: u32,
    /// How many times in a row to try to reconnect after the connection
    /// died (0: never). `DEFAULT_MAX_RECONNECTS` by default.
    pub max_reconnects: u32,
    /// Wait before the first reconnect attempt; doubled after each failure
    /// (at most 64 times the first wait).
    pub reconnect_backoff: Duration,
    /// The protocol version to ask for (one of `PROTOCOL_VERSIONS`); None:
    /// `server/discover` at 2026-07-28, falling back to `initialize` at
    /// 2025-11-25 for a server that refuses it (`era::lifecycle`). A
    /// 2026-07-28 or later version never falls back; an older one uses
    /// `initialize`, and the server may answer with an older version still.
    pub protocol_version: Option<String>,
    /// OAuth for an HTTP endpoint that asks for it (`oauth`); None: a 401
    /// fails the connection.
    pub oauth: Option<super::oauth::OAuthOptions>,
}

/// Reconnect attempts in a row by default: with the default backoff they
/// wait 0.2, 0.4, 0.8, 1.6 and 3.2 s (6.2 s in all, plus each attempt's
/// own time), enough for a server to restart; one gone for good is given
/// up on soon after.
pub const DEFAULT_MAX_RECONNECTS: u32 = 5;

/// The MCP protocol versions a mount can ask for, newest first.
pub const PROTOCOL_VERSIONS: [&str; 5] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

impl MountOptions {
    pub fn new(endpoint: Endpoint) -> MountOptions {
        MountOptions {
            endpoint,
            prefix: String::new(),
            connect_timeout: Duration::from_secs(10),
            call_timeout_ms: 0,
            max_reconnects: DEFAULT_MAX_RECONNECTS,
            reconnect_backoff: Duration::from_millis(200),
            protocol_version: None,
            oauth: None,
        }
    }
}

/// The mounts' runtime: its own small tokio runtime with I/O and timers,
/// apart from the executor's pool, so that a busy pool never starves the
/// connection (and the connection never blocks a tool thread). Started by
/// the first mount; `capstan::runtime::shutdown` ends it once no mount is
/// left (see `stop_runtime`), and the next mount starts it again.
static RUNTIME: Mutex<Option<Arc<Runtime>>> = Mutex::new(None);
/// Mounts alive (mounted, not yet unmounted).
static MOUNTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn runtime() -> Result<Arc<Runtime>, Error> {
    let mut slot = RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(rt) = &*slot {
        return Ok(rt.clone());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("capstan-mcp")
        .enable_all()
        .on_thread_start(crate::runtime::pool::runtime_thread::started)
        .on_thread_unpark(crate::runtime::pool::runtime_thread::unparked)
        .on_thread_stop(crate::runtime::pool::runtime_thread::stopping)
        .build()
        .map(Arc::new)
        .map_err(|e| Error::Internal(format!("the MCP runtime could not start: {e}")))?;
    *slot = Some(rt.clone());
    crate::runtime::on_shutdown(stop_runtime);
    Ok(rt)
}

/// Ends the mounts' runtime and its threads, unless a mount is left.
fn stop_runtime(deadline: Option<std::time::Instant>) -> Result<(), String> {
    let mounts = MOUNTS.load(std::sync::atomic::Ordering::SeqCst);
    if mounts > 0 {
        return Err(format!("{mounts} MCP mount(s) still mounted"));
    }
    let Some(rt) = RUNTIME.lock().unwrap_or_else(|e| e.into_inner()).take() else {
        return Ok(());
    };
    let wait = deadline
        .map(|d| d.saturating_duration_since(std::time::Instant::now()))
        .unwrap_or(Duration::from_secs(3600));
    match Arc::try_unwrap(rt) {
        Ok(rt) => {
            // Waits for its threads up to `wait` (they have nothing left
            // to run once no mount is).
            rt.shutdown_timeout(wait);
            Ok(())
        }
        Err(rt) => {
            *RUNTIME.lock().unwrap_or_else(|e| e.into_inner()) = Some(rt);
            Err("the MCP client runtime is in use".into())
        }
    }
}

#[derive(Default)]
struct State {
    peer: Option<Peer<RoleClient>>,
    connected: bool,
    /// Why the last connection ended or the last attempt failed.
    last_error: String,
    /// Local name -> remote name, for every tool this mount registered.
    tools: BTreeMap<String, String>,
    /// Remote tools that could not be mounted, and why.
    problems: Vec<Value>,
    /// Remote tools mounted with something cut (a long description), and what.
    warnings: Vec<Value>,
    reconnects: u64,
    gave_up: bool,
    /// Counts connections: a call knows which one it was sent on.
    generation: u64,
    /// A call found the current connection broken (the server cannot be
    /// reached): `serve_connection` ends it, and the reconnect policy applies.
    broken: Option<String>,
    /// What the last connection negotiated (`era::negotiated`).
    protocol: Value,
}

struct Session {
    registry: Registry,
    options: MountOptions,
    state: Mutex<State>,
    /// Set once by unmount.
    shutdown: watch::Sender<bool>,
    /// Woken by the server's `notifications/tools/list_changed`.
    resync: Notify,
    /// Woken when a call sets `State::broken`.
    broke: Notify,
    /// Held while tools are registered (see `sync_tools` and `unmount`).
    registering: Mutex<()>,
    /// Forwarded calls waiting for the server's progress reports.
    progress: Arc<super::progress::Waiting>,
    /// The OAuth tokens, kept across reconnects (made by the first connect).
    authorization: tokio::sync::OnceCell<Arc<super::oauth::Authorization>>,
}

impl Session {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock only means a panic elsewhere; the state stays usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn describe(&self) -> String {
        match &self.options.endpoint {
            Endpoint::Command { argv, .. } => format!(
                "MCP server `{}`",
                argv.first().map(String::as_str).unwrap_or("")
            ),
            Endpoint::Http { url, .. } => format!("MCP server {url}"),
        }
    }

    /// The registry's `max_result_bytes` (its default for 0): what one tool
    /// result of this server may hold (see `bounds`).
    fn result_bytes(&self) -> u64 {
        match self.registry.options().max_result_bytes {
            0 => crate::parts::DEFAULT_MAX_RESULT_BYTES,
            n => n,
        }
    }

    fn is_shut_down(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// A call sent on connection `generation` could not reach the server:
    /// over streamable HTTP nothing else tells that the server went away
    /// (the connection's task keeps running), so end that connection.
    fn connection_broke(&self, generation: u64, why: String) {
        let mut state = self.state();
        if state.connected && state.generation == generation {
            state.broken = Some(why);
            self.broke.notify_one();
        }
    }
}

/// A mounted server. Dropping it without `unmount` unmounts it too.
pub struct Mount {
    session: Arc<Session>,
    supervisor: Mutex<Option<std::sync::mpsc::Receiver<()>>>,
}

/// Mounted-tool handler: forwards the call to the server.
struct RemoteTool {
    session: Weak<Session>,
    remote: String,
}

impl Handler for RemoteTool {
    fn invoke(&self, call: Call) {
        let Some(session) = self.session.upgrade() else {
            let _ = call.fail("the MCP server of this tool was unmounted");
            return;
        };
        let peer = {
            let state = session.state();
            match (&state.peer, state.connected) {
                (Some(peer), true) => Ok((peer.clone(), state.generation)),
                _ => Err(not_connected_text(&session, &state)),
            }
        };
        let (peer, generation) = match peer {
            Ok(sent_on) => sent_on,
            Err(text) => {
                let _ = call.fail(text);
                return;
            }
        };
        match runtime() {
            Ok(rt) => {
                let remote = self.remote.clone();
                rt.spawn(forward(session, peer, generation, remote, call));
            }
            Err(e) => {
                let _ = call.fail(e.to_string());
            }
        }
    }
}

fn not_connected_text(session: &Session, state: &State) -> String {
    let why = if state.last_error.is_empty() {
        String::new()
    } else {
        format!(" ({})", state.last_error)
    };
    let next = if session.is_shut_down() {
        "it was unmounted".to_string()
    } else if state.gave_up || session.options.max_reconnects == 0 {
        "no reconnect will be tried".to_string()
    } else {
        "reconnecting".to_string()
    };
    format!("{} is not connected{why}: {next}", session.describe())
}

/// How often a response stream that broke before its answer is resumed
/// (`GET` with `Last-Event-ID`): three times, 0.25, 0.5 and 1 s apart. Not
/// forever, as rmcp would by default: a server that went away must end the
/// calls waiting on it (then the connection, and the reconnect policy) rather
/// than leave them hanging with the mount still "connected".
#[derive(Debug)]
struct ResumeBriefly;

impl SseRetryPolicy for ResumeBriefly {
    fn retry(&self, attempts: usize) -> Option<Duration> {
        (attempts < 3).then(|| Duration::from_millis(250 << attempts))
    }
}

/// Resolves when the call should stop: the executor timed it out or
/// cancelled it, or the mount is going away.
async fn stop_wanted(call: &Call, shutdown: &mut watch::Receiver<bool>) -> &'static str {
    loop {
        if call.is_cancelled() {
            return "cancelled by the client (local timeout or cancellation)";
        }
        if *shutdown.borrow() {
            return "the client unmounted the server";
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(10)) => {}
            _ = shutdown.changed() => {}
        }
    }
}

/// Completes `call` with a server's `CallToolResult` (a plain answer, or
/// the result of its task).
fn finish(session: &Session, call: &Call, result: CallToolResult) {
    // Bounded again here (over stdio and server-sent events it was
    // before rmcp read it; a plain JSON body over HTTP is read by
    // rmcp itself): what the call keeps is bounded either way.
    let raw = serde_json::to_string(&result).unwrap_or_default();
    drop(result);
    let raw = super::bounds::bound_tool_result(&raw, session.result_bytes()).unwrap_or(raw);
    let value: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
    drop(raw);
    let text = render_result(&value);
    let is_error = value.get("isError").and_then(Value::as_bool) == Some(true);
    let problem = super::meta::structured_problem(&session.registry, call, &value);
    let _ = match (crate::parts::from_call_tool_result(&value), problem) {
        _ if is_error => call.fail(text),
        (_, Some(why)) => call.fail(format!("{}: {why}", session.describe())),
        // Images, audio and resources stay parts (#30).
        (Some(parts), None) => call.complete_parts(parts),
        (None, None) => call.complete_text(text),
    };
}

async fn forward(
    session: Arc<Session>,
    peer: Peer<RoleClient>,
    generation: u64,
    remote: String,
    call: Call,
) {
    let arguments = match call.arguments() {
        Value::Object(map) => Some(map.clone()),
        _ => None,
    };
    let params: CallToolRequestParams =
        match serde_json::from_value(json!({"name": remote, "arguments": arguments})) {
            Ok(p) => p,
            Err(e) => {
                let _ = call.fail(format!("could not build the MCP request: {e}"));
                return;
            }
        };
    let mut shutdown = session.shutdown.subscribe();
    // Dropping `call_tool_once` before its answer sends notifications/cancelled.
    let answer = tokio::select! {
        answer = super::progress::call_tool(&peer, params, &session.progress, &call) => answer,
        why = stop_wanted(&call, &mut shutdown) => {
            let _ = call.fail(format!("the call was cancelled: {why}"));
            return;
        }
    };
    match answer {
        Ok(CallToolResponse::Complete(result)) => finish(&session, &call, result),
        Ok(CallToolResponse::Task(created)) => {
            let stop = stop_wanted(&call, &mut shutdown);
            match super::remote_tasks::drive(&peer, created, stop).await {
                Ok(result) => finish(&session, &call, result),
                Err(why) => {
                    let _ = call.fail(format!("{}: {why}", session.describe()));
                }
            }
        }
        Ok(_) => {
            let _ = call.fail(format!(
                "{} answered tool {remote:?} with an input request, which capstan does not support",
                session.describe()
            ));
        }
        Err(e) => {
            let text = match e {
                rmcp::ServiceError::TransportClosed => {
                    let state = session.state();
                    format!(
                        "{} closed the connection during the call: {}",
                        session.describe(),
                        not_connected_text(&session, &state)
                    )
                }
                rmcp::ServiceError::TransportSend(e) => {
                    // rmcp's own text starts with the transport's Rust type
                    // name: the model and the host get the error itself.
                    let inner = e
                        .error
                        .to_string()
                        .replace("as ServerJsonRpcMessage", "as a JSON-RPC message");
                    if unreachable(&*e.error) {
                        let why = format!("{} could not be reached: {inner}", session.describe());
                        session.connection_broke(generation, why.clone());
                        why
                    } else {
                        // One bad answer (an HTTP error status, a body that is
                        // not a JSON-RPC answer): this call fails, the mount stays.
                        format!(
                            "{} gave no usable answer to this call: {inner}",
                            session.describe()
                        )
                    }
                }
                rmcp::ServiceError::McpError(error)
                    if error.data.as_ref().and_then(Value::as_str)
                        == Some(super::wire::UNREADABLE) =>
                {
                    format!(
                        "{} gave no usable answer to this call: {}",
                        session.describe(),
                        error.message
                    )
                }
                rmcp::ServiceError::UnexpectedResponse => format!(
                    "{} gave no usable answer to this call: its result is not a tool result",
                    session.describe()
                ),
                other => format!("{} failed the call: {other}", session.describe()),
            };
            let _ = call.fail(text);
        }
    }
}

/// Whether a transport error says the server cannot be reached at all, as
/// opposed to one bad answer over streamable HTTP (an HTTP error status, a
/// body that is not a JSON-RPC answer, an unexpected content type, a body
/// over the size limit). Told by the error's type, not its text; any other
/// error (stdio's, or one rmcp adds later) counts as unreachable, so the
/// connection is ended and the reconnect policy applies.
fn unreachable(error: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    use rmcp::transport::streamable_http_client::StreamableHttpError as E;
    match error.downcast_ref::<E<reqwest::Error>>() {
        Some(
            E::HttpStatus(_)
            | E::UnexpectedServerResponse(_)
            | E::ResponseBodyTooLarge { .. }
            | E::UnexpectedContentType(_)
            | E::UnexpectedEndOfStream
            | E::Deserialize(_)
            | E::Sse(_),
        ) => false,
        // reqwest's own error for a 4xx status other than 404 (which is
        // rmcp's SessionExpired): one refused request.
        Some(E::Client(e)) => !e.is_status(),
        _ => true,
    }
}

/// The text a model sees for a CallToolResult: text blocks as they are,
/// other blocks as compact JSON, one per line; the structured content when
/// there is no content at all.
fn render_result(value: &Value) -> String {
    let blocks = match value.get("content").and_then(Value::as_array) {
        Some(blocks) => blocks.as_slice(),
        None => &[],
    };
    if blocks.is_empty() {
        return match value.get("structuredContent") {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        };
    }
    let mut text = String::new();
    for (n, b) in blocks.iter().enumerate() {
        if n > 0 {
            text.push('\n');
        }
        match (b.get("type"), b.get("text")) {
            (Some(Value::String(t)), Some(Value::String(block))) if t == "text" => {
                text.push_str(block)
            }
            _ => text.push_str(&b.to_string()),
        }
    }
    text
}

/// Hears the server's notifications.
struct Listener {
    session: Weak<Session>,
    protocol_version: Option<String>,
}

impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        if let Ok(me) =
            serde_json::from_value(json!({"name": "capstan", "version": env!("CARGO_PKG_VERSION")}))
        {
            info.client_info = me;
        }
        if let Some(version) = &self.protocol_version {
            if let Ok(version) = serde_json::from_value(json!(version)) {
                info.protocol_version = version;
            }
        }
        // A server may answer with a task: capstan drives it (`remote_tasks`).
        info.capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(
                rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                Default::default(),
            );
        info
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        if let Some(session) = self.session.upgrade() {
            session.resync.notify_one();
        }
        std::future::ready(())
    }
}

/// One live connection: the service and, for stdio, the child process.
struct Connection {
    running: RunningService<RoleClient, Listener>,
    child: Option<tokio::process::Child>,
}

async fn connect(session: &Arc<Session>) -> Result<Connection, String> {
    let listener = Listener {
        session: Arc::downgrade(session),
        protocol_version: session.options.protocol_version.clone(),
    };
    let timeout = session.options.connect_timeout;
    let lifecycle = super::era::lifecycle(session.options.protocol_version.as_deref());
    match &session.options.endpoint {
        Endpoint::Command { argv, env, cwd } => {
            let Some(program) = argv.first() else {
                return Err("the command line is empty".into());
            };
            let mut command = tokio::process::Command::new(program);
            command
                .args(&argv[1..])
                .envs(env.iter().map(|(k, v)| (k, v)))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::inherit())
                .kill_on_drop(true);
            if let Some(dir) = cwd {
                command.current_dir(dir);
            }
            let mut child = command
                .spawn()
                .map_err(|e| format!("could not start {program:?}: {e}"))?;
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err("the child process has no stdin/stdout pipes".into());
            };
            match tokio::time::timeout(
                timeout,
                listener.serve_with_lifecycle(
                    super::progress::Tap::new(
                        super::wire::StdioWire::new(stdout, stdin, session.result_bytes()),
                        &session.progress,
                    ),
                    lifecycle,
                ),
            )
            .await
            {
                Ok(Ok(running)) => Ok(Connection {
                    running,
                    child: Some(child),
                }),
                Ok(Err(e)) => {
                    reap(child).await;
                    Err(format!("MCP initialization with {program:?} failed: {e}"))
                }
                Err(_) => {
                    reap(child).await;
                    Err(format!(
                        "{program:?} did not complete MCP initialization within {} ms",
                        timeout.as_millis()
                    ))
                }
            }
        }
        Endpoint::Http { url, headers } => {
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
            for (name, value) in headers {
                let name = http::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| format!("invalid header name {name:?}: {e}"))?;
                let value = http::HeaderValue::from_str(value)
                    .map_err(|e| format!("invalid value of header {name}: {e}"))?;
                config.custom_headers.insert(name, value);
            }
            config.retry_config = Arc::new(ResumeBriefly);
            // reqwest's rustls has no provider of its own here (it would
            // panic): ring, unless the process installed one already.
            #[cfg(feature = "mcp-https")]
            let _ = rustls::crypto::ring::default_provider().install_default();
            let http = super::wire::CheckedHttp::new(session.result_bytes())?;
            let Some(oauth) = &session.options.oauth else {
                return serve_http(session, listener, lifecycle, http, config, url).await;
            };
            // The authorization runs inside the first request, so the
            // connect timeout bounds it as well (and `Authorization` again).
            let authorization = session
                .authorization
                .get_or_try_init(|| super::oauth::Authorization::new(oauth.clone(), url, timeout))
                .await?;
            let http = authorization.client(http).await?;
            serve_http(session, listener, lifecycle, http, config, url).await
        }
    }
}

/// Serves one streamable-HTTP connection through `http`.
async fn serve_http<C: rmcp::transport::streamable_http_client::StreamableHttpClient>(
    session: &Arc<Session>,
    listener: Listener,
    lifecycle: rmcp::ClientLifecycleMode,
    http: C,
    config: StreamableHttpClientTransportConfig,
    url: &str,
) -> Result<Connection, String> {
    let timeout = session.options.connect_timeout;
    let transport = StreamableHttpClientTransport::with_client(http, config);
    // Answers owed to the server bounded (its requests on the event
    // stream), as `StdioWire` bounds them over stdio.
    let transport = super::owed::Owed::new(transport);
    let transport = super::progress::Tap::new(transport, &session.progress);
    match tokio::time::timeout(timeout, listener.serve_with_lifecycle(transport, lifecycle)).await {
        Ok(Ok(running)) => Ok(Connection {
            running,
            child: None,
        }),
        Ok(Err(e)) => Err(format!("MCP initialization with {url} failed: {e}")),
        Err(_) => Err(format!(
            "{url} did not complete MCP initialization within {} ms",
            timeout.as_millis()
        )),
    }
}

/// Ends a child process: it gets a moment to exit on its own (its stdin is
/// closed by now), then it is killed; waited for either way, so no zombie stays.
async fn reap(mut child: tokio::process::Child) {
    if tokio::time::timeout(Duration::from_millis(500), child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
}

/// Lists the server's tools and makes the registry match: registers new
/// and changed ones, unregisters the ones that went away.
async fn sync_tools(
    session: &Arc<Session>,
    peer: &Peer<RoleClient>,
    limit: Duration,
) -> Result<(), String> {
    let tools = tokio::time::timeout(limit, list_tools(peer))
        .await
        .map_err(|_| "tools/list did not answer in time".to_string())??;
    // Unmount takes this lock after setting `shutdown`: once it has, no
    // tool of this mount is registered again.
    let _registering = session
        .registering
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if session.is_shut_down() {
        return Err("the server was unmounted".into());
    }
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    let mut mounted = BTreeMap::new();
    let ours = session.state().tools.clone();
    for tool in tools {
        let remote = tool.name;
        let local = format!("{}{remote}", session.options.prefix);
        let mut problem = |why: String| {
            problems.push(json!({"remote": remote, "local": local, "problem": why}));
        };
        if let Some(why) = tool.problem {
            problem(why);
            continue;
        }
        if let Err(e) = check_name(&local) {
            problem(e.to_string());
            continue;
        }
        if mounted.contains_key(&local) {
            problem("two remote tools have this name".into());
            continue;
        }
        if !ours.contains_key(&local) && session.registry.get(&local).is_some() {
            problem("a tool of this name is already registered in the registry".into());
            continue;
        }
        let def = ToolDef {
            name: local.clone(),
            description: tool.description,
            parameters: tool.parameters,
            handler: Box::new(RemoteTool {
                session: Arc::downgrade(session),
                remote: remote.clone(),
            }),
            timeout_ms: session.options.call_timeout_ms,
            max_output_chars: 0,
            flags: ToolFlags(0),
        };
        // What the server says of its tool, kept as untrusted hints.
        match session.registry.register_with_mcp(def, tool.mcp) {
            Ok(()) => {
                if let Some(warning) = tool.warning {
                    warnings.push(json!({"remote": remote, "local": local, "warning": warning}));
                }
                mounted.insert(local, remote);
            }
            Err(e) => problem(e.to_string()),
        }
    }
    for local in ours.keys() {
        if !mounted.contains_key(local) {
            let _ = session.registry.unregister(local);
        }
    }
    let mut state = session.state();
    state.tools = mounted;
    state.problems = problems;
    state.warnings = warnings;
    Ok(())
}

/// Lists the server's tools page by page, bounded (`bounds::Listing`: pages,
/// tools, bytes, a cursor that loops).
async fn list_tools(peer: &Peer<RoleClient>) -> Result<Vec<super::bounds::Listed>, String> {
    let mut listing = super::bounds::Listing::default();
    let mut cursor = None;
    loop {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        let page = peer
            .list_tools(Some(params))
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        match super::bounds::list_page(&mut listing, page)? {
            Some(next) => cursor = Some(next),
            None => return Ok(listing.tools),
        }
    }
}

async fn until_shutdown(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|v| *v).await;
}

enum Ended {
    Shutdown,
    Closed(String),
}

/// The shortest time between two re-listings on `list_changed`.
const RESYNC_INTERVAL: Duration = Duration::from_millis(500);

/// Runs one connection until it ends or the mount shuts down. Every wait
/// in it (the listen subscription, a re-listing) gives way to unmount.
async fn serve_connection(session: &Arc<Session>, connection: Connection) -> Ended {
    let Connection { running, child } = connection;
    let token = running.cancellation_token();
    let mut shutdown = session.shutdown.subscribe();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    let (peer, generation) = {
        let state = session.state();
        (state.peer.clone(), state.generation)
    };
    // Since protocol 2026-07-28 a server sends list_changed only on a
    // `subscriptions/listen` stream; older servers send it unasked (to
    // `Listener`) and refuse the request, which is fine. Asked for within
    // the loop: a server that never answers does not hold it.
    let subscribe = async {
        let peer = peer.as_ref()?;
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        tokio::time::timeout(session.options.connect_timeout, peer.listen(filter))
            .await
            .ok()?
            .ok()
    };
    tokio::pin!(subscribe);
    let mut subscribing = true;
    let mut listen: Option<rmcp::service::Subscription> = None;
    let mut service_ended = false;
    let mut last_sync: Option<tokio::time::Instant> = None;
    let ended = 'serve: loop {
        tokio::select! {
            subscription = &mut subscribe, if subscribing => {
                subscribing = false;
                listen = subscription;
                if listen.is_some() {
                    // A change between the listing and the stream's
                    // acknowledgment was announced to nobody: list again.
                    session.resync.notify_one();
                }
            }
            heard = async {
                match listen.as_mut() {
                    Some(subscription) => subscription.next().await,
                    None => std::future::pending().await,
                }
            } => {
                match heard {
                    Ok(Some(_)) => session.resync.notify_one(),
                    _ => listen = None,
                }
            }
            _ = until_shutdown(&mut shutdown) => break Ended::Shutdown,
            reason = &mut waiting => {
                service_ended = true;
                break Ended::Closed(match reason {
                    Ok(r) => format!("the connection ended ({r:?})"),
                    Err(e) => format!("the connection task failed: {e}"),
                });
            }
            _ = session.broke.notified() => {
                let broken = {
                    let mut state = session.state();
                    state.broken.take().filter(|_| state.generation == generation)
                };
                if let Some(why) = broken {
                    break Ended::Closed(why);
                }
            }
            _ = session.resync.notified() => {
                if let Some(peer) = &peer {
                    // At most one re-listing per RESYNC_INTERVAL: the
                    // notifications heard meanwhile make one more, not many.
                    let not_before = last_sync.map(|t| t + RESYNC_INTERVAL);
                    let relist = async {
                        if let Some(t) = not_before {
                            tokio::time::sleep_until(t).await;
                        }
                        sync_tools(session, peer, session.options.connect_timeout).await
                    };
                    tokio::select! {
                        synced = relist => {
                            last_sync = Some(tokio::time::Instant::now());
                            if let Err(e) = synced {
                                session.state().last_error = format!("re-listing the tools failed: {e}");
                            }
                        }
                        _ = until_shutdown(&mut shutdown) => break 'serve Ended::Shutdown,
                    }
                }
            }
        }
    };
    // Bounded: the service gets 2 s to end (it ended already if `waiting`
    // resolved), the child 0.5 s before it is killed.
    if !service_ended {
        token.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(2), &mut waiting).await;
    }
    {
        let mut state = session.state();
        state.connected = false;
        state.peer = None;
        if let Ended::Closed(why) = &ended {
            state.last_error = why.clone();
        }
    }
    if let Some(child) = child {
        reap(child).await;
    }
    ended
}

async fn supervise(session: Arc<Session>, first: std::sync::mpsc::Sender<Result<(), String>>) {
    let mut first = Some(first);
    let mut attempts: u32 = 0;
    let mut shutdown = session.shutdown.subscribe();
    loop {
        if session.is_shut_down() {
            break;
        }
        // One attempt, connecting and listing, is bounded by connect_timeout
        // as a whole (each step was bounded on its own: an attempt could take
        // twice as long, and a reconnect policy seemed not to act).
        let began = tokio::time::Instant::now();
        // Unmount does not wait for an attempt: dropped, it kills the
        // child it started (kill_on_drop) and ends its service.
        let result = tokio::select! {
            result = connect(&session) => result,
            _ = until_shutdown(&mut shutdown) => break,
        };
        let result = match result {
            Ok(connection) => {
                let peer = connection.running.peer().clone();
                // rmcp keeps up to 512 answers a server marks cacheable
                // (`ttlMs`), pages of tools/list among them, 16 MiB each: a
                // mount lists on connecting and on list_changed only, and
                // keeps nothing it did not bound.
                peer.set_response_cache_config(rmcp::service::ClientCacheConfig::disabled())
                    .await;
                let left = session
                    .options
                    .connect_timeout
                    .saturating_sub(began.elapsed());
                let synced = tokio::select! {
                    synced = sync_tools(&session, &peer, left) => synced,
                    _ = until_shutdown(&mut shutdown) => Err("unmounted".into()),
                };
                match synced {
                    Ok(()) => Ok((connection, peer)),
                    Err(e) => {
                        let mut connection = connection;
                        let _ = connection
                            .running
                            .close_with_timeout(Duration::from_secs(2))
                            .await;
                        if let Some(child) = connection.child {
                            reap(child).await;
                        }
                        Err(e)
                    }
                }
            }
            Err(e) => Err(e),
        };
        match result {
            Ok((connection, peer)) => {
                {
                    let mut state = session.state();
                    state.protocol = super::era::negotiated(&peer);
                    state.peer = Some(peer);
                    state.connected = true;
                    state.generation += 1;
                    state.broken = None;
                    if first.is_none() {
                        state.reconnects += 1;
                    }
                    state.last_error.clear();
                }
                attempts = 0;
                if let Some(tx) = first.take() {
                    let _ = tx.send(Ok(()));
                }
                if let Ended::Shutdown = serve_connection(&session, connection).await {
                    break;
                }
            }
            Err(e) => {
                if let Some(tx) = first.take() {
                    let _ = tx.send(Err(e));
                    return;
                }
                session.state().last_error = e;
            }
        }
        if attempts >= session.options.max_reconnects {
            session.state().gave_up = true;
            break;
        }
        let wait = session.options.reconnect_backoff * (1u32 << attempts.min(6));
        attempts += 1;
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = until_shutdown(&mut shutdown) => break,
        }
    }
}

impl Mount {
    /// Connects, lists the tools and registers them. Blocks the calling
    /// thread until that is done or `connect_timeout` passed.
    pub fn connect(registry: &Registry, options: MountOptions) -> Result<Mount, Error> {
        if let Some(version) = &options.protocol_version {
            if !PROTOCOL_VERSIONS.contains(&version.as_str()) {
                return Err(Error::InvalidArgument(format!(
                    "unknown MCP protocol version {version:?}; known: {}",
                    PROTOCOL_VERSIONS.join(", ")
                )));
            }
        }
        if let Endpoint::Command { argv, .. } = &options.endpoint {
            if argv.is_empty() {
                return Err(Error::InvalidArgument(
                    "the command line (argv) is empty".into(),
                ));
            }
        }
        #[cfg(not(feature = "mcp-https"))]
        if let Endpoint::Http { url, .. } = &options.endpoint {
            if url
                .get(..8)
                .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
            {
                return Err(Error::Unsupported(format!(
                    "{url}: this capstan was built without HTTPS (cargo feature \
                     `mcp-https`); mount over plain http:// or rebuild with it"
                )));
            }
        }
        let rt = runtime()?;
        let (shutdown, _) = watch::channel(false);
        let session = Arc::new(Session {
            registry: registry.clone(),
            options,
            state: Mutex::new(State::default()),
            shutdown,
            resync: Notify::new(),
            broke: Notify::new(),
            registering: Mutex::new(()),
            progress: Default::default(),
            authorization: tokio::sync::OnceCell::new(),
        });
        let (first_tx, first_rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let task_session = session.clone();
        rt.spawn(async move {
            supervise(task_session, first_tx).await;
            let _ = done_tx.send(());
        });
        // The supervisor bounds connecting and listing by connect_timeout;
        // closing a connection whose listing failed takes 2.5 s at most; the
        // extra second covers spawning and scheduling.
        let limit = session.options.connect_timeout + Duration::from_millis(3500);
        MOUNTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mount = Mount {
            session,
            supervisor: Mutex::new(Some(done_rx)),
        };
        match first_rx.recv_timeout(limit) {
            Ok(Ok(())) => Ok(mount),
            Ok(Err(e)) => {
                drop(mount);
                Err(Error::McpConnect(e))
            }
            Err(_) => {
                drop(mount);
                Err(Error::McpConnect(
                    "the MCP server did not connect in time".into(),
                ))
            }
        }
    }

    /// True while the connection is up.
    pub fn is_connected(&self) -> bool {
        self.session.state().connected
    }

    /// Local names of the mounted tools, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        self.session.state().tools.keys().cloned().collect()
    }

    /// The mount's state as JSON: `connected`, `tools` (local -> remote),
    /// `problems` (remote tools not mounted, with why), `warnings` (remote
    /// tools mounted with their description cut), `reconnects`,
    /// `last_error`, and what the last connection negotiated:
    /// `protocol_version`, `era` ("legacy": `initialize` and a session,
    /// 2025-11-25 and older; "modern": stateless, 2026-07-28 and later) and
    /// `server` (`{"name", "version"}` as the server said, or null).
    pub fn info(&self) -> Value {
        let state = self.session.state();
        let negotiated = |key: &str| state.protocol.get(key).cloned().unwrap_or(Value::Null);
        json!({
            "protocol_version": negotiated("protocol_version"),
            "era": negotiated("era"),
            "server": negotiated("server"),
            "connected": state.connected,
            "tools": state.tools,
            "problems": state.problems,
            "warnings": state.warnings,
            "reconnects": state.reconnects,
            "gave_up": state.gave_up,
            "last_error": state.last_error,
        })
    }

    /// Disconnects (calls in flight end as tool errors that say so), stops
    /// the child process and waits for it, unregisters the mounted tools.
    /// Idempotent. Returns within about 2.5 s whatever the server does (a
    /// connection attempt or a re-listing in progress is dropped; the
    /// connection gets 2 s to end, a child process 0.5 s to exit before it
    /// is killed), 10 s at most on a starved runtime; once it returned, no
    /// tool of this mount is registered again.
    pub fn unmount(&self) {
        self.session.shutdown.send_replace(true);
        let done = self
            .supervisor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(done) = done {
            MOUNTS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            // Bounded: serve_connection waits 2 s for the service, reap 0.5 s
            // plus the kill.
            let _ = done.recv_timeout(Duration::from_secs(10));
        }
        let _registering = self
            .session
            .registering
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let tools = std::mem::take(&mut self.session.state().tools);
        for local in tools.keys() {
            let _ = self.session.registry.unregister(local);
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        self.unmount();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_response_stream_is_resumed_three_times_a_quarter_half_and_one_second_apart() {
        let delays: Vec<Option<Duration>> = (0..5).map(|n| ResumeBriefly.retry(n)).collect();
        let ms = Duration::from_millis;
        assert_eq!(
            delays,
            [Some(ms(250)), Some(ms(500)), Some(ms(1000)), None, None]
        );
    }
}
