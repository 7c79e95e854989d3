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

use capstan_core::error::Error;
use capstan_core::exec::Call;
use capstan_core::exec::{Handler, ToolDef};
use capstan_core::registry::{check_name, Registry};
use capstan_core::tool::ToolFlags;

mod answer;
mod connection;
mod forward;
mod remote_tasks;
mod supervise;

pub use answer::{AnswerInput, HostInput, MAX_ROUNDS as MAX_INPUT_ROUNDS};
use connection::*;
use forward::*;
use supervise::*;

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
    /// The host answering what the server asks (`answer`): declared to the
    /// server as the client's capabilities. None: the mount declares none,
    /// and a request reaches only an MCP client of capstan's own server
    /// that made the call.
    pub input: Option<HostInput>,
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
            input: None,
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
        .on_thread_start(capstan_core::runtime::pool::runtime_thread::started)
        .on_thread_unpark(capstan_core::runtime::pool::runtime_thread::unparked)
        .on_thread_stop(capstan_core::runtime::pool::runtime_thread::stopping)
        .build()
        .map(Arc::new)
        .map_err(|e| Error::Internal(format!("the MCP runtime could not start: {e}")))?;
    *slot = Some(rt.clone());
    capstan_core::runtime::on_shutdown(stop_runtime);
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
    /// The tools the server's `tools/list` answers named over HTTP, as they
    /// came (`sync_tools` tells those rmcp dropped).
    listed: Arc<super::wire::ListedTools>,
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
            0 => capstan_core::parts::DEFAULT_MAX_RESULT_BYTES,
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
        #[cfg(not(feature = "https"))]
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
            listed: Arc::default(),
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
