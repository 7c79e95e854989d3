//! MCP client functions of the C ABI: mount an MCP server's tools into a
//! registry (issue #14). Declared in every build; without the cargo feature
//! `mcp` they fail with CAPSTAN_ERR_UNSUPPORTED.

use std::ffi::{c_char, c_void};

use super::boundary::*;
#[cfg(feature = "mcp")]
use super::registry::registry_ref;
use super::types::*;

/// A mounted MCP server: capstan's client connection to it, made by
/// `capstan_mcp_mount_new`. A handle, never reused, not a pointer to memory:
/// using it after `capstan_mcp_mount_free` is CAPSTAN_ERR_STALE_HANDLE, never
/// undefined behaviour.
pub struct capstan_mcp_mount {
    _private: [u8; 0],
}

/// Options of `capstan_mcp_mount_new`. Start from `CAPSTAN_MCP_MOUNT_OPTIONS_INIT`
/// and set exactly one of `argv` (a command line) or `url`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct capstan_mcp_mount_options {
    /// `sizeof(capstan_mcp_mount_options)`.
    pub struct_size: u32,
    /// Command line of a server speaking MCP over stdio: `argc` NUL-terminated
    /// strings, `argv[0]` the program (looked up in PATH). capstan starts it
    /// as a child process (stdin/stdout piped, stderr inherited) and
    /// restarts it on reconnect. Copied during the call.
    pub argv: *const *const c_char,
    /// Number of strings in `argv`.
    pub argc: usize,
    /// `env_count` "NAME=VALUE" strings added to (or overriding) the
    /// inherited environment of the child process. May be NULL.
    pub env: *const *const c_char,
    /// Number of strings in `env`.
    pub env_count: usize,
    /// Working directory of the child process; NULL: the caller's.
    pub cwd: *const c_char,
    /// URL of a streamable-HTTP MCP endpoint (e.g. "http://127.0.0.1:3001/mcp").
    /// https:// needs a library built with the cargo feature `mcp-https`
    /// (certificates checked by the operating system's verifier); without
    /// it the mount fails with UNSUPPORTED.
    pub url: *const c_char,
    /// `header_count` "Name: value" strings sent with every HTTP request
    /// (e.g. "Authorization: Bearer ..."). May be NULL.
    pub headers: *const *const c_char,
    /// Number of strings in `headers`.
    pub header_count: usize,
    /// Put before every remote tool name to form the local one (e.g. "fs_"
    /// mounts `read` as `fs_read`). NULL or "": none.
    pub prefix: *const c_char,
    /// Limit on connecting plus the first `tools/list`, in ms; 0 = 10000.
    pub connect_timeout_ms: u32,
    /// Local timeout of every mounted tool, in ms (the tool's `timeout_ms`);
    /// 0 = none of its own (the exec options' default applies).
    pub call_timeout_ms: u32,
    /// Reconnect attempts in a row after the connection died; 0 = the
    /// default, 5 (0.2 s, then doubling: about 6 s in all);
    /// `CAPSTAN_MCP_RECONNECT_NEVER` = never. Why 5: a server restarting
    /// (a crash its supervisor restarts, a redeploy) is back within those
    /// seconds, and one gone for good is given up on soon after; calls
    /// meanwhile fail at once saying the server is not connected, so a
    /// host loses nothing by reconnecting by default.
    pub max_reconnects: u32,
    /// Wait before the first reconnect attempt, doubled after each failed
    /// one (up to 64 times); 0 = 200 ms.
    pub reconnect_backoff_ms: u32,
    /// The MCP protocol version to ask for ("2026-07-28", "2025-11-25",
    /// "2025-06-18", "2025-03-26" or "2024-11-05"). NULL: `server/discover`
    /// at 2026-07-28 (stateless), and `initialize` at 2025-11-25 (a
    /// session) if the server refuses it or does not answer within 10 s:
    /// servers of either era mount. "2026-07-28" never falls back (a
    /// server without `server/discover` fails the mount); an older version
    /// uses `initialize`, and the server may answer with an older one still.
    /// `capstan_mcp_mount_info_json` says what was negotiated.
    pub protocol_version: *const c_char,
    /// OAuth 2.1 for a `url` whose server asks for authorization (the MCP
    /// authorization spec). When a request is refused (401, or 403
    /// `insufficient_scope`: a step-up), capstan discovers the server's
    /// authorization server (protected resource metadata, then its
    /// metadata, with the 2025-03-26 fallbacks), registers a client if none
    /// is given (`oauth_client_id`; else a client-id metadata document if
    /// the server accepts them, else dynamic registration), picks the
    /// scopes (`oauth_scopes`, else the challenge's, else the server's
    /// `scopes_supported`), builds the authorization URL (PKCE S256,
    /// `state`, `resource`) and calls this with it; then it exchanges the
    /// code for tokens, refreshes them when they expire or are refused, and
    /// sends the request again. Each authorization is bounded by
    /// `connect_timeout_ms`; a request starts at most two (the first and
    /// one step-up). NULL: no user to ask; with `oauth_client_id` and
    /// `oauth_client_secret` (a client registered beforehand, machine to
    /// machine) capstan gets the tokens with the client-credentials grant
    /// (SEP-1046: HTTP Basic when the server lists only that, else in the
    /// body; `resource` = `url`); without them a 401 fails the mount with
    /// MCP_CONNECT unless `oauth_tokens_load` gives usable tokens.
    pub oauth_authorize: capstan_mcp_authorize_fn,
    /// Where the authorization server sends the user back, registered with
    /// the client (e.g. "http://127.0.0.1:8976/callback"). Required with
    /// `oauth_authorize`. Copied during the call, as all strings here.
    pub oauth_redirect_uri: *const c_char,
    /// A client registered with the authorization server beforehand
    /// (NULL: none, see `oauth_authorize`).
    pub oauth_client_id: *const c_char,
    /// The secret of `oauth_client_id` for a confidential client (sent as
    /// the server's metadata says: HTTP Basic or in the body). NULL: none.
    pub oauth_client_secret: *const c_char,
    /// HTTPS URL of the host's client-id metadata document (SEP-991), used
    /// as the client id by servers that accept them. NULL: none.
    pub oauth_client_metadata_url: *const c_char,
    /// Space-separated scopes to ask for. NULL or "": the server's choice
    /// (its challenge's `scope`, else `scopes_supported`).
    pub oauth_scopes: *const c_char,
    /// Loads the tokens `oauth_tokens_save` kept, for a new mount (NULL:
    /// none; a new mount authorizes again). Either way the mount keeps the
    /// tokens it gets in memory for its life.
    pub oauth_tokens_load: capstan_mcp_tokens_load_fn,
    /// Keeps the tokens (JSON text with the access and refresh tokens and
    /// the client id: a secret, keep it as one). NULL: in memory only, for
    /// the mount's life.
    pub oauth_tokens_save: capstan_mcp_tokens_save_fn,
    /// Passed to the three `oauth_` callbacks and to `oauth_destroy`.
    pub oauth_user_data: *mut c_void,
    /// Called exactly once with `oauth_user_data` (may be NULL), after the
    /// last call of the `oauth_` callbacks returned, once the mount lets go
    /// of them: during or soon after `capstan_mcp_mount_free` or a failed
    /// `capstan_mcp_mount_new` (also for bad options), on that thread or on
    /// one of capstan's MCP threads; if an `oauth_authorize` call outlived
    /// its timeout, when that call returns.
    pub oauth_destroy: capstan_destroy_fn,
    /// The host's answers to what the server asks while running a tool
    /// (NULL: the mount answers nothing, and declares nothing). Called for
    /// each request of the methods in `input_methods`, declared to the
    /// server as the client's capabilities: a 2026-07-28 server asks with
    /// an `InputRequiredResult` (the mount answers every request, then
    /// calls the tool again with the answers and the server's state, up to
    /// 10 rounds a call); an older server sends its requests mid-call. A
    /// call from an MCP client of capstan's own server (a gateway) passes
    /// the requests on to that client instead.
    pub input_answer: capstan_mcp_input_fn,
    /// The methods `input_answer` answers: `CAPSTAN_MCP_INPUT_ELICITATION`,
    /// `CAPSTAN_MCP_INPUT_SAMPLING`, `CAPSTAN_MCP_INPUT_ROOTS`, or'ed; at
    /// least one with `input_answer`.
    pub input_methods: u32,
    /// Passed to `input_answer` and to `input_destroy`.
    pub input_user_data: *mut c_void,
    /// Called exactly once with `input_user_data` (may be NULL), once the
    /// mount lets go of `input_answer` and its last call returned, as
    /// `oauth_destroy` is.
    pub input_destroy: capstan_destroy_fn,
    /// PEM text of `oauth_client_id`'s private key (PKCS#8, an EC P-256
    /// key: ES256, the one algorithm capstan signs with). The client then
    /// authenticates at the token endpoint with a signed assertion
    /// (private_key_jwt, RFC 7523) instead of a secret: for the
    /// client-credentials grant when there is no `oauth_authorize`
    /// (SEP-1046), and for the grants of `oauth_assertion`. Copied during
    /// the call; NULL: none. A key that is not such PEM text fails the
    /// mount with INVALID_ARGUMENT.
    pub oauth_client_key: *const c_char,
    /// A grant without a user, from a JWT the host gets elsewhere (NULL:
    /// none). Without `oauth_idp_token_endpoint` it is the workload's
    /// identity token from its platform (workload identity federation,
    /// SEP-1933): capstan sends it in the JWT-bearer grant (RFC 7523) to the
    /// server's authorization server, whose issuer is the `audience` asked
    /// for. With it, the user's ID token from the enterprise identity
    /// provider (enterprise-managed authorization, SEP-990; `audience` is
    /// `oauth_idp_issuer`): capstan exchanges it there for an ID-JAG (RFC
    /// 8693), then sends that in the JWT-bearer grant, authenticated as
    /// `oauth_client_id` (with its secret or key). Called with
    /// `oauth_user_data` for each authorization: a refused grant fails the
    /// request with the server's error, without retrying or trying another
    /// grant. Used when there is no `oauth_authorize`.
    pub oauth_assertion: capstan_mcp_assertion_fn,
    /// The enterprise identity provider's issuer identifier (SEP-990; the
    /// ID-JAG's `iss`). Set all three `oauth_idp_` strings or none.
    pub oauth_idp_issuer: *const c_char,
    /// Its token endpoint, where the ID token is exchanged.
    pub oauth_idp_token_endpoint: *const c_char,
    /// The host's client id at the identity provider.
    pub oauth_idp_client_id: *const c_char,
    /// That client's secret (HTTP Basic); NULL: a public client.
    pub oauth_idp_client_secret: *const c_char,
    /// The issuer identifier of the authorization server that
    /// `oauth_client_secret` or `oauth_client_key` belong to: they are sent
    /// only to that authorization server (its metadata's `issuer` must be
    /// this), never to another one the MCP server names. NULL: only to an
    /// authorization server of the MCP server's own origin (its issuer and
    /// token endpoint); for any other, the mount fails with MCP_CONNECT
    /// naming the authorization server and this field, and nothing is sent.
    /// "*": to whichever authorization server the MCP server names (only for
    /// a server trusted as far as the credentials). Copied during the call;
    /// set without either of them: INVALID_ARGUMENT.
    pub oauth_client_issuer: *const c_char,
}

/// Copies a JWT for a grant without a user (see
/// `capstan_mcp_mount_options.oauth_assertion`) for `audience`
/// (NUL-terminated) into `out` (at most `cap` = `CAPSTAN_MCP_ASSERTION_MAX`
/// bytes, NUL not needed) and returns its length; 0: none (the
/// authorization fails, saying so). Runs on a blocking thread of capstan's
/// MCP runtime; it must not free the mount.
pub type capstan_mcp_assertion_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        audience: *const c_char,
        out: *mut c_char,
        cap: usize,
    ) -> usize,
>;

/// The room `capstan_mcp_assertion_fn` gets for its JWT.
pub const CAPSTAN_MCP_ASSERTION_MAX: usize = 16384;

/// Answers a request a mounted server made: `method` ("elicitation/create",
/// "sampling/createMessage" or "roots/list") with `params` (JSON text,
/// `params_len` bytes, NUL-terminated as well), for a call of the mounted
/// tool `tool` (its local name; NULL for an older server's request made
/// mid-call, which names no call). Copies the method's result as JSON
/// text into `answer` (at most `answer_cap` = `CAPSTAN_MCP_INPUT_ANSWER_MAX`
/// bytes, NUL not needed) and returns its length: an `ElicitResult`
/// (`{"action": "accept", "content": {...}}`, `"decline"` or `"cancel"`;
/// the requested schema's defaults are filled in for fields an accepted
/// answer leaves out), a `CreateMessageResult` or a `ListRootsResult`.
/// 0, or an answer that is not the method's result, gives no answer: the
/// call fails as a tool error saying why (an older server's request gets
/// a JSON-RPC error). May block (a user answering): capstan stops waiting
/// when the call ends (timeout, cancelled) or, for an older server's
/// request, after an hour. Runs on a blocking thread of capstan's MCP
/// runtime; it must not free the mount.
pub type capstan_mcp_input_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        tool: *const c_char,
        method: *const c_char,
        params: *const c_char,
        params_len: usize,
        answer: *mut c_char,
        answer_cap: usize,
    ) -> usize,
>;

/// The room `capstan_mcp_input_fn` gets for its answer.
pub const CAPSTAN_MCP_INPUT_ANSWER_MAX: usize = 1_048_576;

/// The host's part of an OAuth authorization: show `authorization_url`
/// (NUL-terminated) to the user (open a browser, print it), wait for the
/// authorization server to send them to the redirect URI, and copy that
/// whole URL (with its `code` and `state`) into `redirect` (at most
/// `redirect_cap` = `CAPSTAN_MCP_REDIRECT_MAX` bytes, NUL not needed).
/// Returns the URL's length in bytes; 0 refuses the authorization (while
/// mounting: the mount fails with MCP_CONNECT, saying so). May block, up to the mount's connect timeout (capstan stops
/// waiting then). Runs on a blocking thread of capstan's MCP runtime; it
/// must not free the mount.
pub type capstan_mcp_authorize_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        authorization_url: *const c_char,
        redirect: *mut c_char,
        redirect_cap: usize,
    ) -> usize,
>;

/// Copies the JSON text last given to `capstan_mcp_tokens_save_fn` into
/// `buf` (at most `cap` = `CAPSTAN_MCP_TOKENS_MAX` bytes) and returns its
/// length; 0: nothing stored. Runs on a blocking thread of capstan's MCP
/// runtime.
pub type capstan_mcp_tokens_load_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, buf: *mut c_char, cap: usize) -> usize>;

/// Keeps `json` (`len` bytes, not NUL-terminated, borrowed for the call)
/// for `capstan_mcp_tokens_load_fn`; `len == 0` (json NULL): forget what
/// was kept. Runs on a blocking thread of capstan's MCP runtime.
pub type capstan_mcp_tokens_save_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, json: *const c_char, len: usize)>;

/// The room `capstan_mcp_authorize_fn` gets for the redirect URL.
pub const CAPSTAN_MCP_REDIRECT_MAX: usize = 8192;

/// The room `capstan_mcp_tokens_load_fn` gets for the stored tokens.
pub const CAPSTAN_MCP_TOKENS_MAX: usize = 65536;

/// The size of `capstan_mcp_mount_options` before the OAuth fields (0.4):
/// a binding built against it passes its own smaller `struct_size`, and its
/// options read as if the OAuth fields were NULL.
const MOUNT_OPTIONS_V1: usize = std::mem::offset_of!(capstan_mcp_mount_options, oauth_authorize);

/// `capstan_mcp_mount_options.max_reconnects` meaning "never reconnect":
/// the mount drops for good when its connection dies.
pub const CAPSTAN_MCP_RECONNECT_NEVER: u32 = u32::MAX;

#[cfg(feature = "mcp")]
mod imp {
    use std::collections::HashMap;
    use std::ffi::c_char;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex, OnceLock};
    use std::time::Duration;

    use super::super::boundary::*;
    use super::super::mcp_host::{input, oauth};
    use super::*;
    use crate::mcp::client::{Endpoint, Mount, MountOptions};

    fn mounts() -> std::sync::MutexGuard<'static, HashMap<usize, Arc<Mount>>> {
        static MOUNTS: OnceLock<Mutex<HashMap<usize, Arc<Mount>>>> = OnceLock::new();
        MOUNTS
            .get_or_init(|| Mutex::new(HashMap::new()))
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    static NEXT: AtomicUsize = AtomicUsize::new(1);

    pub(super) fn insert(mount: Mount) -> *mut capstan_mcp_mount {
        // Handles count up from 1 and are never reused (a 64-bit counter
        // does not wrap in practice), so a stale one never names a new mount.
        let handle = NEXT.fetch_add(1, Ordering::Relaxed);
        mounts().insert(handle, Arc::new(mount));
        handle as *mut capstan_mcp_mount
    }

    pub(super) fn get(mount: *const capstan_mcp_mount) -> Result<Arc<Mount>, Fail> {
        non_null(mount, "mount")?;
        mounts()
            .get(&(mount as usize))
            .cloned()
            .ok_or_else(|| Fail::Core(crate::Error::StaleHandle(stale_text())))
    }

    pub(super) fn remove(mount: *mut capstan_mcp_mount) -> Result<Arc<Mount>, Fail> {
        mounts()
            .remove(&(mount as usize))
            .ok_or_else(|| Fail::Core(crate::Error::StaleHandle(stale_text())))
    }

    fn stale_text() -> String {
        "mount handle is not live: it was already unmounted, or never was a mount".into()
    }

    unsafe fn list(
        ptr: *const *const c_char,
        count: usize,
        name: &'static str,
    ) -> Result<Vec<String>, Fail> {
        if count == 0 {
            return Ok(Vec::new());
        }
        non_null(ptr, name)?;
        (0..count)
            .map(|i| {
                c_text(*ptr.add(i), name)?
                    .map(str::to_owned)
                    .ok_or(Fail::Null(name))
            })
            .collect()
    }

    fn split(item: &str, sep: char, what: &str) -> Result<(String, String), Fail> {
        match item.split_once(sep) {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_owned(), v.trim_start().to_owned()))
            }
            _ => Err(Fail::BadArgument(format!(
                "{what} {item:?} is not of the form NAME{sep}VALUE"
            ))),
        }
    }

    pub(super) unsafe fn options(
        opts: *const capstan_mcp_mount_options,
    ) -> Result<MountOptions, Fail> {
        non_null(opts, "opts")?;
        let o = read_options(opts, MOUNT_OPTIONS_V1, "opts")?.ok_or(Fail::Null("opts"))?;
        // First, so that oauth_destroy and input_destroy run once whatever
        // fails below.
        let oauth = oauth(&o, !o.url.is_null());
        let input = input(&o);
        let argv = list(o.argv, o.argc, "opts.argv")?;
        let url = c_text(o.url, "opts.url")?;
        let endpoint = match (argv.is_empty(), url) {
            (false, None) => Endpoint::Command {
                argv,
                env: list(o.env, o.env_count, "opts.env")?
                    .iter()
                    .map(|e| split(e, '=', "opts.env entry"))
                    .collect::<Result<_, _>>()?,
                cwd: c_text(o.cwd, "opts.cwd")?.map(str::to_owned),
            },
            (true, Some(url)) => Endpoint::Http {
                url: url.to_owned(),
                headers: list(o.headers, o.header_count, "opts.headers")?
                    .iter()
                    .map(|h| split(h, ':', "opts.headers entry"))
                    .collect::<Result<_, _>>()?,
            },
            (false, Some(_)) => {
                return Err(Fail::BadArgument(
                    "set either opts.argv (a command line) or opts.url, not both".into(),
                ))
            }
            (true, None) => {
                return Err(Fail::BadArgument(
                    "set opts.argv (a command line, argc > 0) or opts.url".into(),
                ))
            }
        };
        let mut options = MountOptions::new(endpoint);
        options.prefix = c_text(o.prefix, "opts.prefix")?.unwrap_or("").to_owned();
        if o.connect_timeout_ms != 0 {
            options.connect_timeout = Duration::from_millis(u64::from(o.connect_timeout_ms));
        }
        options.call_timeout_ms = o.call_timeout_ms;
        options.max_reconnects = match o.max_reconnects {
            0 => crate::mcp::client::DEFAULT_MAX_RECONNECTS,
            CAPSTAN_MCP_RECONNECT_NEVER => 0,
            n => n,
        };
        options.protocol_version =
            c_text(o.protocol_version, "opts.protocol_version")?.map(str::to_owned);
        if o.reconnect_backoff_ms != 0 {
            options.reconnect_backoff = Duration::from_millis(u64::from(o.reconnect_backoff_ms));
        }
        options.oauth = oauth?;
        options.input = input?;
        Ok(options)
    }
}

#[cfg(not(feature = "mcp"))]
fn unsupported() -> Fail {
    Fail::Core(crate::Error::Unsupported(
        "this library was built without feature `mcp`".into(),
    ))
}

/// Mounts an MCP server's tools into `reg`: starts the command line (stdio)
/// or connects to the URL (streamable HTTP), initializes, lists the tools
/// and registers each as `prefix + remote name`, with the remote
/// `inputSchema` as its parameters (so arguments are validated locally like
/// any tool's). Blocks until that is done, at most about twice
/// `connect_timeout_ms`. On success `*out` is the mount: free it with
/// `capstan_mcp_mount_free`, before or after `capstan_registry_free` of `reg`
/// (the mount keeps its own reference to the registry's core; once the
/// registry is closed its tools are gone and calls cannot reach them).
///
/// A remote tool whose local name no provider accepts, that is already
/// registered in `reg` (by the host or another mount), or whose schema does
/// not compile is not mounted (never replaced, never silently dropped): the
/// mount's `problems` (`capstan_mcp_mount_info_json`) list each with why.
///
/// Calls are forwarded from capstan's MCP thread; the tool callback thread
/// is not held. When the executor ends a call first (timeout, batch
/// cancelled, registry closed), `notifications/cancelled` is sent for it.
/// The mount declares the MCP Tasks extension: a call the server answers
/// with a task is driven to its end (`tasks/get`, `tasks/cancel` when the
/// executor ends the call first) and completes as an ordinary call.
/// The server's `notifications/tools/list_changed` re-lists its tools:
/// new ones are registered, gone ones unregistered. When the connection dies
/// (the command exits, or a call finds the HTTP server unreachable), calls
/// in flight and new calls end as `tool_error` results whose text says
/// that the server is not connected and whether a reconnect will be tried;
/// the mount then reconnects (restarting the command) up to
/// `max_reconnects` times in a row, waiting `reconnect_backoff_ms`, doubled
/// after each failed attempt.
///
/// Fails with NULL_PARAMETER, INVALID_UTF8, INVALID_ARGUMENT (struct_size,
/// neither or both of argv and url, a malformed env or header entry, an
/// unknown protocol version, `oauth_authorize` without `oauth_redirect_uri`,
/// a client secret without a client id, OAuth fields with a command line),
/// MCP_CONNECT (the server could not be started, reached, initialized or
/// listed in time, or its OAuth authorization failed or was refused: the
/// message says which step and why, naming the endpoint; nothing is
/// registered then), SHUTTING_DOWN (the registry is closed), UNSUPPORTED (built
/// without feature `mcp`, or an https:// url in a build without feature
/// `mcp-https`).
#[no_mangle]
pub unsafe extern "C" fn capstan_mcp_mount_new(
    reg: *mut capstan_registry,
    opts: *const capstan_mcp_mount_options,
    out: *mut *mut capstan_mcp_mount,
) -> capstan_status {
    guard(|| {
        #[cfg(feature = "mcp")]
        {
            // Options first: once read, their oauth_destroy runs whatever fails.
            let options = imp::options(opts)?;
            non_null(out, "out")?;
            let registry = registry_ref(reg)?;
            if registry.is_closed() {
                return Err(Fail::Core(crate::Error::ShuttingDown(
                    "the registry is closed".into(),
                )));
            }
            let mount = crate::mcp::client::Mount::connect(registry, options)?;
            *out = imp::insert(mount);
            Ok(())
        }
        #[cfg(not(feature = "mcp"))]
        {
            let _ = reg;
            // The host handed oauth_user_data and input_user_data over:
            // release them, once.
            if let Ok(Some(o)) = read_options(opts, MOUNT_OPTIONS_V1, "opts") {
                destroy_now(o.oauth_user_data, o.oauth_destroy);
                destroy_now(o.input_user_data, o.input_destroy);
            }
            non_null(out, "out")?;
            Err(unsupported())
        }
    })
}

/// Unmounts: disconnects (calls of the mount still in flight end as
/// `tool_error` results saying it was unmounted), stops the child process
/// (stdin closed, then killed if it has not exited within 0.5 s) and waits
/// for it, unregisters the mount's tools and frees the mount. Safe with
/// calls in flight and from any thread; it blocks about 2.5 s at most
/// whatever the server does (10 s on a starved runtime), and no tool of the
/// mount is registered again once it returned. NULL is a no-op (OK); a
/// mount already unmounted is STALE_HANDLE, never
/// undefined behaviour. UNSUPPORTED without feature `mcp` (for non-NULL).
#[no_mangle]
pub unsafe extern "C" fn capstan_mcp_mount_free(mount: *mut capstan_mcp_mount) -> capstan_status {
    guard(|| {
        if mount.is_null() {
            return Ok(());
        }
        #[cfg(feature = "mcp")]
        {
            let mount = imp::remove(mount)?;
            mount.unmount();
            Ok(())
        }
        #[cfg(not(feature = "mcp"))]
        {
            Err(unsupported())
        }
    })
}

/// The mount's state as JSON text: `{"connected": bool, "tools": {local
/// name: remote name, ...}, "problems": [{"remote", "local", "problem"}],
/// "reconnects": n (successful reconnects so far), "gave_up": bool (the
/// reconnect attempts ran out), "last_error": text ("" if none),
/// "protocol_version": the version the last connection negotiated,
/// "era": "modern" (2026-07-28 and later: `server/discover`, no session)
/// or "legacy" (`initialize`, a session), "server": {"name", "version"} as
/// the server named itself (untrusted) or null}`. `*out` is
/// owned by the caller (`capstan_string_free`). STALE_HANDLE after unmount.
#[no_mangle]
pub unsafe extern "C" fn capstan_mcp_mount_info_json(
    mount: *const capstan_mcp_mount,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    guard(|| {
        non_null(out, "out")?;
        #[cfg(feature = "mcp")]
        {
            let mount = imp::get(mount)?;
            write_text(&mount.info().to_string(), out, out_len)
        }
        #[cfg(not(feature = "mcp"))]
        {
            let _ = (mount, out_len);
            Err(unsupported())
        }
    })
}
