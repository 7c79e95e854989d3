//! MCP server functions of the C ABI. Declared in every build; without the
//! cargo feature `mcp` they return `CAPSTAN_ERR_UNSUPPORTED`.

use std::ffi::c_char;

use super::boundary::*;
use super::registry::registry_ref;
use super::types::*;

/// An MCP server started with `capstan_mcp_server_start`. Its functions may
/// be called from any thread; `capstan_mcp_server_free` must not race them.
pub struct capstan_mcp_server {
    _private: [u8; 0],
}

/// Options of `capstan_mcp_server_serve_stdio` and `capstan_mcp_server_start`.
/// NULL means defaults; zero/NULL fields mean defaults. Strings are
/// NUL-terminated UTF-8, read during the call only.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct capstan_mcp_server_options {
    /// `sizeof(capstan_mcp_server_options)`.
    pub struct_size: u32,
    /// Reserved: must be 0.
    pub flags: u32,
    /// HTTP: `IP:PORT` to bind; NULL = `"127.0.0.1:0"` (loopback, a port the
    /// OS picks: read it back with `capstan_mcp_server_url`). Binding a
    /// non-loopback address exposes the tools to the network: set
    /// `bearer_token` and `allowed_hosts` then.
    pub address: *const c_char,
    /// HTTP: when set, every request must carry `Authorization: Bearer
    /// <token>` or gets 401. NULL = no check.
    pub bearer_token: *const c_char,
    /// HTTP: comma-separated browser origins accepted besides loopback ones
    /// (`http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*`), e.g.
    /// `"https://app.example.com:443"`. A request with any other `Origin`
    /// gets 403 (DNS-rebinding protection); one without `Origin` passes.
    pub allowed_origins: *const c_char,
    /// HTTP: comma-separated `Host` values accepted besides `localhost`,
    /// `127.0.0.1` and `::1` (others get 403).
    pub allowed_hosts: *const c_char,
    /// JSON object, per tool name, of what MCP clients see beside the tool's
    /// name, description and schema: `{"NAME": {"title": "...",
    /// "annotations": {"readOnlyHint": true, ...}, "outputSchema": {...}}}`.
    /// Each field given replaces the one the tool carries
    /// (`capstan_tool_def.mcp_meta`, the better place: it is checked, and an
    /// `outputSchema` there is enforced; one given here is only listed).
    /// A tool with an `outputSchema` should return `CAPSTAN_CONTENT_JSON`
    /// objects: a result whose text is a JSON object is also sent as
    /// `structuredContent`. NULL = none. Bad JSON or shape: INVALID_ARGUMENT.
    pub tools_meta: *const c_char,
    /// `serverInfo.name` sent to clients; NULL = `"capstan"`.
    pub name: *const c_char,
    /// HTTP: larger POST bodies get 413; 0 = 4 MiB.
    pub max_body_bytes: u32,
    /// Bounds every call from its arrival, approval wait included (as
    /// `capstan_exec_options.deadline_ms`); 0 = the tools' own timeouts.
    pub call_timeout_ms: u32,
    /// How long stopping waits for calls in flight after cancelling them;
    /// 0 = 5000.
    pub stop_timeout_ms: u32,
}

#[cfg(feature = "mcp")]
unsafe fn server_options(
    opts: *const capstan_mcp_server_options,
) -> Result<crate::mcp::server::ServerOptions, Fail> {
    use crate::error::Error;
    use crate::mcp::server::{split_list, ServerOptions, DEFAULT_MAX_BODY_BYTES};
    let mut options = ServerOptions::default();
    let min = std::mem::size_of::<capstan_mcp_server_options>();
    let Some(o) = read_options(opts, min, "opts")? else {
        return Ok(options);
    };
    super::flags::check(o.flags, &super::flags::MCP_SERVER)?;
    if let Some(a) = c_text(o.address, "opts.address")? {
        options.address = a.to_owned();
    }
    // An empty token is refused by ServerOptions::check, as for Rust hosts.
    options.bearer_token = c_text(o.bearer_token, "opts.bearer_token")?.map(str::to_owned);
    if let Some(list) = c_text(o.allowed_origins, "opts.allowed_origins")? {
        options.allowed_origins = split_list(list);
    }
    if let Some(list) = c_text(o.allowed_hosts, "opts.allowed_hosts")? {
        options.allowed_hosts = split_list(list);
    }
    if let Some(meta) = c_text(o.tools_meta, "opts.tools_meta")? {
        match serde_json::from_str::<serde_json::Value>(meta) {
            Ok(serde_json::Value::Object(m)) => options.tools_meta = m,
            Ok(_) => {
                return Err(Fail::BadArgument(
                    "opts.tools_meta is not a JSON object".into(),
                ))
            }
            Err(e) => {
                return Err(Fail::Core(Error::InvalidArgument(format!(
                    "opts.tools_meta is not JSON: {e}"
                ))))
            }
        }
    }
    if let Some(name) = c_text(o.name, "opts.name")? {
        options.name = name.to_owned();
    }
    options.max_body_bytes = match o.max_body_bytes {
        0 => DEFAULT_MAX_BODY_BYTES,
        n => n as usize,
    };
    options.call_timeout_ms = o.call_timeout_ms;
    if o.stop_timeout_ms != 0 {
        options.stop_timeout_ms = o.stop_timeout_ms;
    }
    Ok(options)
}

#[cfg(not(feature = "mcp"))]
fn unsupported() -> Fail {
    Fail::Core(crate::error::Error::Unsupported(
        "this library was built without feature `mcp`".into(),
    ))
}

/// Serves `reg`'s tools over MCP on this process's stdin and stdout (one
/// client: the process that started this one), blocking the calling thread.
/// Returns OK when stdin reaches end of file (the client went away) or when
/// the host stops it by closing the registry (`capstan_registry_close` from
/// another thread; calls in flight are cancelled and waited for up to
/// `opts->stop_timeout_ms`), or by freeing it from another thread once it
/// serves (header: "Children": it holds its own share of `reg`). Nothing
/// else may write to stdout meanwhile.
/// On POSIX, writing to a pipe or socket whose reader is gone raises
/// SIGPIPE, which ends a process that does not ignore it: capstan's MCP
/// threads (this server's, HTTP servers', mounts') block it for themselves,
/// so such a write fails with EPIPE there, and the host's own threads keep
/// its disposition.
/// tools/list is the registry as it is at each request, and registering or
/// unregistering a tool sends `notifications/tools/list_changed`. Calls run
/// as with `capstan_registry_execute` (validation, timeouts, approval, stats);
/// invalid arguments come back as `isError` results with capstan's text; an
/// unknown tool is a JSON-RPC error (-32602). INVALID_ARGUMENT for bad
/// options, TRANSPORT if stdio cannot be served, UNSUPPORTED without `mcp`.
#[no_mangle]
pub unsafe extern "C" fn capstan_mcp_server_serve_stdio(
    reg: *mut capstan_registry,
    opts: *const capstan_mcp_server_options,
) -> capstan_status {
    guard(|| {
        // A share, not a borrow: the registry may be freed while this serves.
        let registry = registry_ref(reg)?.clone();
        #[cfg(feature = "mcp")]
        {
            let options = server_options(opts)?;
            crate::mcp::server::serve_stdio(&registry, &options)?;
            Ok(())
        }
        #[cfg(not(feature = "mcp"))]
        {
            let _ = (registry, opts);
            Err(unsupported())
        }
    })
}

/// Starts an MCP server over streamable HTTP on `opts->address` (default
/// loopback, a port the OS picks) and returns at once; the server runs on
/// threads of its own until `capstan_mcp_server_stop`. `*out` (written only
/// on success) owns it: free it with `capstan_mcp_server_free`. The endpoint
/// is `capstan_mcp_server_url`. It serves as `capstan_mcp_server_serve_stdio`
/// does, plus HTTP security: `Host` and `Origin` checked (403), bearer token
/// if set (401), body size (413), malformed JSON-RPC answered with a JSON-RPC
/// error. The server keeps what it needs of `reg` (header: "Children"):
/// after `capstan_registry_free` it still answers, every call ending
/// cancelled, until it is stopped and freed. INVALID_ARGUMENT for bad
/// options or an address that is not `IP:PORT`; TRANSPORT when the address
/// cannot be bound (the message says why); UNSUPPORTED without `mcp`.
#[no_mangle]
pub unsafe extern "C" fn capstan_mcp_server_start(
    reg: *mut capstan_registry,
    opts: *const capstan_mcp_server_options,
    out: *mut *mut capstan_mcp_server,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        non_null(out, "out")?;
        #[cfg(feature = "mcp")]
        {
            let options = server_options(opts)?;
            let server = crate::mcp::server::HttpServer::start(registry, &options)?;
            *out = Box::into_raw(Box::new(server)).cast::<capstan_mcp_server>();
            Ok(())
        }
        #[cfg(not(feature = "mcp"))]
        {
            let _ = (registry, opts);
            Err(unsupported())
        }
    })
}

/// The server's endpoint, e.g. `"http://127.0.0.1:41234/mcp"` (the port the
/// OS chose for port 0), into `*out` (caller frees with `capstan_string_free`).
/// Still readable after `capstan_mcp_server_stop`.
#[no_mangle]
pub unsafe extern "C" fn capstan_mcp_server_url(
    server: *const capstan_mcp_server,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    guard(|| {
        non_null(server, "server")?;
        non_null(out, "out")?;
        #[cfg(feature = "mcp")]
        {
            let server = &*server.cast::<crate::mcp::server::HttpServer>();
            write_text(server.url(), out, out_len)
        }
        #[cfg(not(feature = "mcp"))]
        {
            let _ = out_len;
            Err(unsupported())
        }
    })
}

/// Stops the server: no new connection or call is accepted, calls in
/// flight are cancelled (their tools see `capstan_call_cancelled`) and
/// waited for up to `stop_timeout_ms`, then every connection is closed and
/// the server's threads, sockets and memory are released (the handle itself
/// stays until `capstan_mcp_server_free`). Blocks the caller up to about
/// that bound; any thread, also a tool callback. OK when no call was left
/// running; TIMEOUT when some still were (they finish in the background and
/// their results are dropped). A second stop returns OK at once.
/// NULL_PARAMETER for NULL.
#[no_mangle]
pub unsafe extern "C" fn capstan_mcp_server_stop(
    server: *mut capstan_mcp_server,
) -> capstan_status {
    guard(|| {
        non_null(server, "server")?;
        #[cfg(feature = "mcp")]
        {
            let server = &*server.cast::<crate::mcp::server::HttpServer>();
            if server.stop() {
                Ok(())
            } else {
                Err(Fail::Core(crate::error::Error::Timeout(
                    "calls were still running when the MCP server's stop timeout passed".into(),
                )))
            }
        }
        #[cfg(not(feature = "mcp"))]
        {
            Err(unsupported())
        }
    })
}

/// Stops the server if it still runs (as `capstan_mcp_server_stop`) and
/// frees it. NULL is a no-op. Consumes `server`.
#[no_mangle]
pub unsafe extern "C" fn capstan_mcp_server_free(server: *mut capstan_mcp_server) {
    guard_value((), || {
        if server.is_null() {
            return Ok(());
        }
        #[cfg(feature = "mcp")]
        drop(Box::from_raw(
            server.cast::<crate::mcp::server::HttpServer>(),
        ));
        Ok(())
    })
}
