//! The streamable-HTTP MCP server: the bearer token, Host and body checks
//! before rmcp, JSON-RPC errors for what rmcp answers in plain HTTP, and
//! stopping with calls in flight.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;

use super::{
    new_state, params_problem, removed_error, runtime, Bridge, ServerOptions, State,
    DEFAULT_BODY_TIMEOUT_MS, DEFAULT_HEADER_TIMEOUT_MS, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_MS, KNOWN_METHODS,
};
use capstan_core::error::Error;
use capstan_core::registry::Registry;

/// How long the accept loop pauses after a failed accept (out of file
/// descriptors, say) before it tries again, instead of spinning.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// A streamable-HTTP MCP server running on its own threads.
pub struct HttpServer {
    state: Arc<State>,
    listener: u64,
    url: String,
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
}

/// A JSON-RPC error without id, with `status`.
fn refused(status: hyper::StatusCode, code: i64, message: &str) -> HttpResponse {
    refused_id(Value::Null, status, code, message)
}

/// A JSON-RPC error to `id`, with `status`.
fn refused_id(id: Value, status: hyper::StatusCode, code: i64, message: &str) -> HttpResponse {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    })
    .to_string();
    let mut response = hyper::Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// What rmcp's `Host` and `Origin` checks would read only in part: a header
/// given twice (rmcp looks at the first), and userinfo (`evil.com@localhost`:
/// the host a client resolved is not the one rmcp checks). 400 for `Host`
/// (RFC 9112 says so), 403 for `Origin` (as any refused origin).
fn ambiguous_host(headers: &hyper::HeaderMap) -> Option<HttpResponse> {
    for (name, status) in [
        (hyper::header::HOST, hyper::StatusCode::BAD_REQUEST),
        (hyper::header::ORIGIN, hyper::StatusCode::FORBIDDEN),
    ] {
        let mut values = headers.get_all(&name).iter();
        let first = values.next();
        let why = if values.next().is_some() {
            "is given more than once"
        } else if first.is_some_and(|v| v.as_bytes().contains(&b'@')) {
            "has userinfo (user@host)"
        } else {
            continue;
        };
        let message = format!("Refused: the {name} header {why}");
        return Some(refused(status, -32600, &message));
    }
    None
}

fn unauthorized() -> HttpResponse {
    let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Unauthorized: send Authorization: Bearer <token>"}}"#;
    let mut response = hyper::Response::new(Full::new(Bytes::from_static(body.as_bytes())).boxed());
    *response.status_mut() = hyper::StatusCode::UNAUTHORIZED;
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::WWW_AUTHENTICATE,
        hyper::header::HeaderValue::from_static("Bearer"),
    );
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

type HttpResponse =
    hyper::Response<http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>>;

/// rmcp answers bad HTTP input (unparsable JSON, a wrong Origin, an
/// oversized body) in plain text; clients expect a JSON-RPC error without
/// id there. The status stays; the text becomes the error's message.
async fn jsonrpc_errors(response: HttpResponse) -> HttpResponse {
    let plain = response
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_none_or(|v| v.starts_with("text/plain"));
    let status = response.status();
    if status.is_success() || !plain || status == hyper::StatusCode::METHOD_NOT_ALLOWED {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = match body.collect().await {
        Ok(b) => String::from_utf8_lossy(&b.to_bytes()).into_owned(),
        Err(never) => match never {},
    };
    // A body that is not JSON at all is a parse error; rmcp (3.11) says
    // "fail to deserialize request body <serde's reason>" with 415 there,
    // and "... unrecognized JSON-RPC message" for JSON that is no message.
    let code = if text.contains("deserialize") && !text.contains("unrecognized JSON-RPC message") {
        -32700
    } else {
        -32600
    };
    // rmcp answers a body it cannot read with 415, as if the media type
    // were wrong; the MCP transport spec wants 400 there.
    if status == hyper::StatusCode::UNSUPPORTED_MEDIA_TYPE && text.contains("deserialize") {
        parts.status = hyper::StatusCode::BAD_REQUEST;
    }
    let message = if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("bad request")
            .to_owned()
    } else {
        text
    };
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    })
    .to_string();
    parts.headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(hyper::header::CONTENT_LENGTH);
    hyper::Response::from_parts(parts, Full::new(Bytes::from(body)).boxed())
}

/// A request rmcp refused as "unrecognized JSON-RPC message" (400, id
/// null) that is a request for a known method: its params are of the wrong
/// shape. The MCP answer is an invalid-params error (-32602) to that id,
/// saying what is wrong, not an invalid request without id; for a modern
/// (2026-07-28) request of a method that era removed, "method not found"
/// (-32601) with 404.
fn invalid_params(body: &[u8]) -> Option<HttpResponse> {
    let Ok(Value::Object(request)) = serde_json::from_slice::<Value>(body) else {
        return None;
    };
    let id = request
        .get("id")
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())?;
    let method = request.get("method").and_then(Value::as_str)?;
    if crate::era::removed_method(method, crate::era::modern_params(request.get("params"))) {
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": removed_error(method),
        })
        .to_string();
        let mut response = hyper::Response::new(Full::new(Bytes::from(body)).boxed());
        *response.status_mut() = hyper::StatusCode::NOT_FOUND;
        response.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("application/json"),
        );
        return Some(response);
    }
    if !KNOWN_METHODS.contains(&method) {
        return None;
    }
    let why = params_problem(method, request.get("params"));
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32602, "message": format!("{method}: invalid params: {why}")},
    })
    .to_string();
    let mut response = hyper::Response::new(Full::new(Bytes::from(body)).boxed());
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Some(response)
}

/// The event streams (a GET, a `subscriptions/listen`) served at once:
/// at most half of `max_connections`, so that clients holding streams they
/// do not read cannot take every connection.
struct Streams {
    permits: Arc<tokio::sync::Semaphore>,
    max: usize,
}

impl Streams {
    fn new(max_connections: usize) -> Streams {
        let max = (max_connections / 2).max(1);
        Streams {
            permits: Arc::new(tokio::sync::Semaphore::new(max)),
            max,
        }
    }

    fn refusal(&self) -> String {
        format!(
            "too many event streams: {} are open (half of max_connections, capstan's limit); \
             close one, or retry later",
            self.max
        )
    }
}

/// A response body that holds a stream's permit until it ends.
struct Held {
    inner: http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl hyper::body::Body for Held {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// `response`, holding `permit` until its body ends.
fn held(response: HttpResponse, permit: tokio::sync::OwnedSemaphorePermit) -> HttpResponse {
    let (parts, inner) = response.into_parts();
    hyper::Response::from_parts(
        parts,
        Held {
            inner,
            _permit: permit,
        }
        .boxed(),
    )
}

/// The connection ends after `response` (its request's body was not read whole).
fn closing(mut response: HttpResponse) -> HttpResponse {
    response.headers_mut().insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
    response
}

/// The id of a `subscriptions/listen` request, which opens a stream.
fn listen_id(body: &[u8]) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<Value>,
        method: Option<String>,
    }
    let head: Head = serde_json::from_slice(body).ok()?;
    (head.method.as_deref() == Some("subscriptions/listen")).then(|| head.id.unwrap_or(Value::Null))
}

/// What `serve` needs besides the request.
struct Limits {
    max_body: usize,
    body_timeout: Duration,
    streams: Streams,
}

/// Serves one request: reads a POST body (up to `max_body` bytes, 413
/// past it, within `body_timeout`, 408 past it) so that a refusal of it
/// can be told apart, then hands it to rmcp. A GET stream or a
/// `subscriptions/listen` past the streams' share is refused.
async fn serve(
    service: StreamableHttpService<Bridge, crate::sessions::Sessions>,
    request: hyper::Request<hyper::body::Incoming>,
    limits: &Limits,
) -> HttpResponse {
    if request.method() != hyper::Method::POST {
        if request.method() != hyper::Method::GET {
            return jsonrpc_errors(service.handle(request).await).await;
        }
        // MCP: a server that offers no stream answers a GET with 405.
        let Ok(permit) = limits.streams.permits.clone().try_acquire_owned() else {
            let message = limits.streams.refusal();
            return closing(refused(
                hyper::StatusCode::METHOD_NOT_ALLOWED,
                -32000,
                &message,
            ));
        };
        return held(jsonrpc_errors(service.handle(request).await).await, permit);
    }
    let (parts, body) = request.into_parts();
    let max_body = limits.max_body;
    let read = http_body_util::Limited::new(body, max_body).collect();
    let body = match tokio::time::timeout(limits.body_timeout, read).await {
        Ok(Ok(b)) => b.to_bytes(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            let message = format!("Payload Too Large: the body is over {max_body} bytes");
            return refused(hyper::StatusCode::PAYLOAD_TOO_LARGE, -32600, &message);
        }
        Ok(Err(e)) => {
            let message = format!("Bad Request: could not read the body: {e}");
            return refused(hyper::StatusCode::BAD_REQUEST, -32600, &message);
        }
        Err(_) => {
            let message = format!(
                "Request Timeout: the body did not arrive whole within {} ms (body_timeout_ms)",
                limits.body_timeout.as_millis()
            );
            return closing(refused(
                hyper::StatusCode::REQUEST_TIMEOUT,
                -32600,
                &message,
            ));
        }
    };
    let permit = match listen_id(&body) {
        None => None,
        Some(id) => match limits.streams.permits.clone().try_acquire_owned() {
            Ok(permit) => Some(permit),
            Err(_) => {
                let message = limits.streams.refusal();
                return refused_id(id, hyper::StatusCode::SERVICE_UNAVAILABLE, -32000, &message);
            }
        },
    };
    let request = hyper::Request::from_parts(parts, Full::new(body.clone()));
    let response = service.handle(request).await;
    if let Some(permit) = permit {
        return held(jsonrpc_errors(response).await, permit);
    }
    if response.status() == hyper::StatusCode::UNSUPPORTED_MEDIA_TYPE {
        if let Some(answer) = invalid_params(&body) {
            return answer;
        }
    }
    jsonrpc_errors(response).await
}

/// Constant-time comparison, so the token cannot be guessed byte by byte.
fn same_token(got: &[u8], want: &[u8]) -> bool {
    got.len() == want.len() && got.iter().zip(want).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

fn authorized(headers: &hyper::HeaderMap, token: &Option<String>) -> bool {
    let Some(token) = token else { return true };
    let Some(value) = headers.get(hyper::header::AUTHORIZATION) else {
        return false;
    };
    let value = value.as_bytes();
    let prefix = b"Bearer ";
    value.len() > prefix.len()
        && value[..prefix.len()].eq_ignore_ascii_case(prefix)
        && same_token(&value[prefix.len()..], token.as_bytes())
}

impl HttpServer {
    /// Binds `options.address` and serves `registry` there until `stop`.
    pub fn start(registry: &Registry, options: &ServerOptions) -> Result<HttpServer, Error> {
        let addr: SocketAddr = options.address.parse().map_err(|_| {
            Error::InvalidArgument(format!(
                "address {:?} is not host:port with a numeric IP (e.g. 127.0.0.1:0)",
                options.address
            ))
        })?;
        if options.max_body_bytes == 0 {
            return Err(Error::InvalidArgument("max_body_bytes is 0".into()));
        }
        let std_listener = std::net::TcpListener::bind(addr)
            .map_err(|e| Error::Transport(format!("cannot bind {addr}: {e}")))?;
        std_listener
            .set_nonblocking(true)
            .map_err(|e| Error::Transport(format!("{addr}: {e}")))?;
        let bound = std_listener
            .local_addr()
            .map_err(|e| Error::Transport(format!("{addr}: {e}")))?;
        let url = format!("http://{bound}/mcp");
        let (state, listener) = new_state(registry, options)?;
        let rt = match runtime(2) {
            Ok(rt) => rt,
            Err(e) => {
                registry.remove_change_listener(listener);
                return Err(e);
            }
        };
        let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        hosts.extend(options.allowed_hosts.iter().cloned());
        let mut origins: Vec<String> = vec![
            "http://localhost:*".into(),
            "http://127.0.0.1:*".into(),
            "http://[::1]:*".into(),
        ];
        origins.extend(options.allowed_origins.iter().cloned());
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_allowed_origins(origins)
            .enforce_origin_validation()
            .with_max_request_body_bytes(options.max_body_bytes)
            .with_cancellation_token(state.stopping.child_token());
        let bridge = state.clone();
        let mut local = LocalSessionManager::default();
        local.session_config.keep_alive = Some(Duration::from_millis(u64::from(
            match options.session_idle_ms {
                0 => DEFAULT_SESSION_IDLE_MS,
                n => n,
            },
        )));
        let max_sessions = match options.max_sessions {
            0 => DEFAULT_MAX_SESSIONS,
            n => n,
        };
        let service = StreamableHttpService::new(
            // A handler per session: its own log level.
            move || Ok(Bridge::new(bridge.clone())),
            Arc::new(crate::sessions::Sessions::new(local, max_sessions)),
            config,
        );
        let token = options.bearer_token.clone();
        let max_connections = match options.max_connections {
            0 => DEFAULT_MAX_CONNECTIONS,
            n => n,
        };
        let limits = Arc::new(Limits {
            max_body: options.max_body_bytes,
            body_timeout: Duration::from_millis(u64::from(match options.body_timeout_ms {
                0 => DEFAULT_BODY_TIMEOUT_MS,
                n => n,
            })),
            streams: Streams::new(max_connections),
        });
        let stopping = state.stopping.clone();
        // enter, not block_on: the caller may be on another runtime's thread.
        let accept = {
            let _in = rt.enter();
            tokio::net::TcpListener::from_std(std_listener)
        };
        let tcp = match accept {
            Ok(l) => l,
            Err(e) => {
                registry.remove_change_listener(listener);
                return Err(Error::Transport(format!("{addr}: {e}")));
            }
        };
        rt.spawn(state.clone().announce_changes());
        let header_timeout = Duration::from_millis(u64::from(match options.header_timeout_ms {
            0 => DEFAULT_HEADER_TIMEOUT_MS,
            n => n,
        }));
        let connections = Arc::new(tokio::sync::Semaphore::new(max_connections));
        rt.spawn(async move {
            loop {
                // A connection over the cap waits in the listen queue.
                let permit = tokio::select! {
                    p = connections.clone().acquire_owned() => match p {
                        Ok(p) => p,
                        Err(_) => return,
                    },
                    _ = stopping.cancelled() => return,
                };
                let stream = tokio::select! {
                    s = tcp.accept() => match s {
                        Ok((stream, _)) => stream,
                        Err(_) => {
                            // Out of file descriptors, say: pause instead
                            // of spinning, then try again.
                            drop(permit);
                            tokio::select! {
                                _ = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                                _ = stopping.cancelled() => return,
                            }
                        }
                    },
                    _ = stopping.cancelled() => return,
                };
                let service = service.clone();
                let token = token.clone();
                let limits = limits.clone();
                let handler = hyper::service::service_fn(move |request| {
                    let service = service.clone();
                    let limits = limits.clone();
                    let refusal = ambiguous_host(request.headers());
                    let ok = authorized(request.headers(), &token);
                    async move {
                        if let Some(refusal) = refusal {
                            return Ok::<_, std::convert::Infallible>(refusal);
                        }
                        if !ok {
                            return Ok(unauthorized());
                        }
                        Ok(serve(service, request, &limits).await)
                    }
                });
                tokio::spawn(async move {
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(header_timeout)
                        .serve_connection(io, handler)
                        .await;
                    drop(permit);
                });
            }
        });
        SERVERS.fetch_add(1, Ordering::SeqCst);
        capstan_core::runtime::on_shutdown(servers_left);
        Ok(HttpServer {
            state,
            listener,
            url,
            runtime: Mutex::new(Some(rt)),
        })
    }

    /// `http://IP:PORT/mcp`, with the port the OS chose for port 0.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops accepting, cancels calls in flight and waits for them up to the
    /// stop timeout, then ends every connection. True when no call was left
    /// running. A second stop returns true at once.
    pub fn stop(&self) -> bool {
        let rt = match self.runtime.lock() {
            Ok(mut r) => r.take(),
            Err(_) => None,
        };
        let Some(rt) = rt else { return true };
        SERVERS.fetch_sub(1, Ordering::SeqCst);
        self.state.registry.remove_change_listener(self.listener);
        let deadline =
            Instant::now() + Duration::from_millis(u64::from(self.state.options.stop_timeout_ms));
        let state = self.state.clone();
        // On a thread of its own: the caller may be inside another tokio
        // runtime (a tool callback on capstan's pool), where block_on panics.
        let stopper = std::thread::spawn(move || {
            let drained = rt.block_on(state.drain(deadline));
            if let Ok(mut peers) = state.peers.lock() {
                peers.clear();
            }
            rt.shutdown_timeout(Duration::from_millis(100));
            drained
        });
        stopper.join().unwrap_or(false)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// HTTP servers started and not yet stopped.
static SERVERS: AtomicUsize = AtomicUsize::new(0);

/// For `capstan::runtime::shutdown`: a started server's threads are its own
/// (`stop` ends and joins them); shutdown only reports them.
fn servers_left(_deadline: Option<Instant>) -> Result<(), String> {
    match SERVERS.load(Ordering::SeqCst) {
        0 => Ok(()),
        n => Err(format!("{n} MCP server(s) still started (stop them first)")),
    }
}
