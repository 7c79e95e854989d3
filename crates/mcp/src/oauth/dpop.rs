//! DPoP (RFC 9449; the MCP DPoP extension, SEP-1932): when the authorization
//! server lists ES256 among its `dpop_signing_alg_values_supported`, the mount
//! proves possession of a key of its own at every token request, and a token
//! the server binds to that key (`token_type` DPoP) is presented with the
//! `DPoP` scheme and a fresh proof on every request to the MCP server. A
//! server that asks for a nonce (`use_dpop_nonce`) gets the request again
//! with it, once.
//!
//! Two HTTP paths carry it: `TokenHttp`, the HTTP client of the OAuth
//! requests (rmcp's `OAuthHttpClient`, and the grants of `grants.rs`), and
//! `DpopHttp`, which wraps the connection's MCP client below rmcp's
//! `AuthClient` (which hands it the token).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse as PostResponse,
    StreamableHttpResponseLimits,
};
use rmcp::transport::{
    OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRedirectPolicy, OAuthHttpRequest,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::jwt::{now, Es256};

type HttpError = StreamableHttpError<reqwest::Error>;
type Headers = std::collections::HashMap<HeaderName, HeaderValue>;
type SseStream =
    futures_core::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;

const DPOP: HeaderName = HeaderName::from_static("dpop");
const DPOP_NONCE: &str = "dpop-nonce";

/// The longest OAuth response read (metadata, a token); a larger one fails.
const MAX_OAUTH_RESPONSE: usize = 1 << 20;

/// A mount's DPoP key and what its servers said: whether the current token
/// is bound to the key, and the nonces they asked for.
pub struct Dpop {
    key: Es256,
    jwk: Value,
    bound: AtomicBool,
    /// The authorization server's nonce and the MCP server's.
    nonces: Mutex<(Option<String>, Option<String>)>,
}

/// Whether an authorization server's metadata offers DPoP with ES256.
pub fn offered(metadata: &rmcp::transport::auth::AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("dpop_signing_alg_values_supported")
        .and_then(Value::as_array)
        .is_some_and(|algs| algs.iter().any(|a| a == "ES256"))
}

/// Where a mount's stored tokens keep the key a DPoP-bound token is bound
/// to (beside rmcp's fields), so that the next mount can use and refresh it.
const KEPT_KEY: &str = "capstan_dpop_key";

impl Dpop {
    pub fn new() -> Arc<Dpop> {
        Dpop::with(Es256::generate(), false)
    }

    fn with(key: Es256, bound: bool) -> Arc<Dpop> {
        let jwk = key.public_jwk();
        Arc::new(Dpop {
            key,
            jwk,
            bound: AtomicBool::new(bound),
            nonces: Mutex::new((None, None)),
        })
    }

    /// The key of stored tokens (JSON text a mount kept), if they are bound
    /// to one; else a new key.
    pub fn from_stored(stored: Option<&str>) -> Arc<Dpop> {
        let kept = stored
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .filter(|v| {
                v.pointer("/token_response/token_type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| t.eq_ignore_ascii_case("DPoP"))
            })
            .and_then(|v| Es256::from_secret(v.get(KEPT_KEY)?.as_str()?));
        match kept {
            Some(key) => Dpop::with(key, true),
            None => Dpop::new(),
        }
    }

    /// `credentials` (rmcp's stored form, as JSON) with the key if the token
    /// is bound to it.
    pub fn keep(&self, credentials: &mut Value) {
        if let Value::Object(fields) = credentials {
            if self.bound() {
                fields.insert(KEPT_KEY.into(), self.key.secret().into());
            } else {
                fields.remove(KEPT_KEY);
            }
        }
    }

    /// Whether the current access token is DPoP-bound.
    pub fn bound(&self) -> bool {
        self.bound.load(Ordering::Acquire)
    }

    /// The tokens to come are Bearer tokens (the authorization server does
    /// not offer DPoP, or no longer).
    pub fn unbind(&self) {
        self.bound.store(false, Ordering::Release);
    }

    fn nonces(&self) -> std::sync::MutexGuard<'_, (Option<String>, Option<String>)> {
        self.nonces.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A proof for one request (RFC 9449 section 4.2): a fresh `jti`, the
    /// method and the URL without query or fragment, the time, the hash of
    /// the access token it goes with, and the server's nonce if it gave one.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        nonce: Option<&str>,
    ) -> String {
        let mut claims = json!({
            "jti": uuid::Uuid::new_v4().to_string(),
            "htm": method,
            "htu": htu(url),
            "iat": now(),
        });
        if let Some(token) = token {
            claims["ath"] = B64.encode(Sha256::digest(token.as_bytes())).into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        self.key.sign(
            &json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk}),
            &claims,
        )
    }
}

/// `htu`: the request's URL without its query and fragment.
fn htu(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or(url).to_owned(),
    }
}

/// Whether an error answer (a token endpoint's JSON, a `WWW-Authenticate`
/// challenge) asks for a DPoP nonce.
fn asks_nonce(text: &str) -> bool {
    text.contains("use_dpop_nonce")
}

/// The HTTP client of a mount's OAuth requests when it does them itself (the
/// grants) or when DPoP is on (rmcp's requests then come here): token
/// requests get a proof (with a nonce the server asks for, once), and the
/// `token_type` of the answer says whether the token is bound.
pub struct TokenHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    dpop: Option<Arc<Dpop>>,
}

impl TokenHttp {
    pub fn new(dpop: Option<Arc<Dpop>>) -> Result<TokenHttp, String> {
        let build = |redirect| {
            reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .redirect(redirect)
                .build()
                .map_err(|e| format!("the OAuth HTTP client could not be made: {e}"))
        };
        // Redirects are followed only within the origin asked (as rmcp's
        // own OAuth client does for discovery), at most 10.
        let same_origin = reqwest::redirect::Policy::custom(|attempt| {
            let first = attempt.previous().first().map(|u| u.origin());
            if first.as_ref() != Some(&attempt.url().origin()) {
                attempt.error("an OAuth redirect to another origin")
            } else if attempt.previous().len() > 10 {
                attempt.error("more than 10 OAuth redirects")
            } else {
                attempt.follow()
            }
        });
        Ok(TokenHttp {
            follow: build(same_origin)?,
            stop: build(reqwest::redirect::Policy::none())?,
            dpop,
        })
    }

    /// Sends `request`, following redirects if `follow`.
    pub async fn send(
        &self,
        request: http::Request<Vec<u8>>,
        follow: bool,
    ) -> Result<http::Response<Vec<u8>>, String> {
        let (parts, body) = request.into_parts();
        let client = if follow { &self.follow } else { &self.stop };
        let url = parts.uri.to_string();
        let token_request = parts.method == http::Method::POST && form_has(&body, "grant_type");
        let dpop = self.dpop.as_ref().filter(|_| token_request);
        let mut nonce_asked = false;
        loop {
            let mut builder = client
                .request(parts.method.clone(), &url)
                .headers(parts.headers.clone())
                .body(body.clone());
            if let Some(dpop) = dpop {
                let nonce = dpop.nonces().0.clone();
                builder = builder.header(DPOP, dpop.proof("POST", &url, None, nonce.as_deref()));
            }
            let response = builder
                .send()
                .await
                .map_err(|e| format!("the request to {url} failed: {e}"))?;
            let answer = read(response).await?;
            let Some(dpop) = dpop else {
                return Ok(answer);
            };
            if let Some(nonce) = answer
                .headers()
                .get(DPOP_NONCE)
                .and_then(|v| v.to_str().ok())
            {
                dpop.nonces().0 = Some(nonce.to_owned());
            }
            if answer.status() == http::StatusCode::BAD_REQUEST
                && !nonce_asked
                && asks_nonce(&String::from_utf8_lossy(answer.body()))
                && answer.headers().contains_key(DPOP_NONCE)
            {
                nonce_asked = true;
                continue;
            }
            if answer.status().is_success() {
                let token_type = serde_json::from_slice::<Value>(answer.body())
                    .ok()
                    .and_then(|v| v.get("token_type")?.as_str().map(str::to_owned));
                let bound = token_type.is_some_and(|t| t.eq_ignore_ascii_case("DPoP"));
                dpop.bound.store(bound, Ordering::Release);
            }
            return Ok(answer);
        }
    }
}

/// Whether a form-encoded body has `name`.
fn form_has(body: &[u8], name: &str) -> bool {
    url::form_urlencoded::parse(body).any(|(k, _)| k == name)
}

/// The whole answer, at most `MAX_OAUTH_RESPONSE` bytes of body.
async fn read(mut response: reqwest::Response) -> Result<http::Response<Vec<u8>>, String> {
    let mut builder = http::Response::builder().status(response.status());
    for (name, value) in response.headers() {
        builder = builder.header(name, value);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("reading the answer of {} failed: {e}", response.url()))?
    {
        if body.len() + chunk.len() > MAX_OAUTH_RESPONSE {
            return Err(format!(
                "the answer of {} is larger than {MAX_OAUTH_RESPONSE} bytes",
                response.url()
            ));
        }
        body.extend_from_slice(&chunk);
    }
    builder.body(body).map_err(|e| e.to_string())
}

impl OAuthHttpClient for TokenHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let follow = matches!(request.redirect_policy, OAuthHttpRedirectPolicy::Follow);
            self.send(request.request, follow)
                .await
                .map_err(|e| e.into())
        })
    }
}

/// A connection's MCP client under rmcp's `AuthClient`: a DPoP-bound token
/// goes out as `Authorization: DPoP <token>` with a proof for the request;
/// any other token as rmcp sends it (Bearer).
#[derive(Clone)]
pub struct DpopHttp<C> {
    inner: C,
    dpop: Arc<Dpop>,
    probe: reqwest::Client,
}

impl<C> DpopHttp<C> {
    pub fn new(inner: C, dpop: Arc<Dpop>) -> Result<DpopHttp<C>, String> {
        let probe = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("the HTTP client could not be made: {e}"))?;
        Ok(DpopHttp { inner, dpop, probe })
    }

    /// Sends with `send(auth, headers)`: unchanged unless the token is
    /// bound; then with the DPoP scheme and a proof, and once more with the
    /// MCP server's nonce if it asks for one.
    async fn present<T, F, Fut>(
        &self,
        method: &str,
        uri: &str,
        auth: Option<String>,
        headers: Headers,
        send: F,
    ) -> Result<T, HttpError>
    where
        F: Fn(Option<String>, Headers) -> Fut,
        Fut: std::future::Future<Output = Result<T, HttpError>>,
    {
        let token = match auth {
            Some(token) if self.dpop.bound() => token,
            auth => return send(auth, headers).await,
        };
        let mut nonce_asked = false;
        loop {
            let nonce = self.dpop.nonces().1.clone();
            let mut with = headers.clone();
            let (Ok(scheme), Ok(proof)) = (
                HeaderValue::from_str(&format!("DPoP {token}")),
                HeaderValue::from_str(&self.dpop.proof(
                    method,
                    uri,
                    Some(&token),
                    nonce.as_deref(),
                )),
            ) else {
                return send(Some(token), headers).await;
            };
            with.insert(http::header::AUTHORIZATION, scheme);
            with.insert(DPOP, proof);
            match send(None, with).await {
                Err(StreamableHttpError::AuthRequired(e))
                    if !nonce_asked && asks_nonce(&e.www_authenticate_header) =>
                {
                    nonce_asked = true;
                    match self.rs_nonce(uri, &token).await {
                        Some(nonce) => self.dpop.nonces().1 = Some(nonce),
                        None => return Err(StreamableHttpError::AuthRequired(e)),
                    }
                }
                other => return other,
            }
        }
    }

    /// The MCP server's nonce. rmcp's HTTP client keeps only the
    /// `WWW-Authenticate` header of a 401, and the nonce comes in
    /// `DPoP-Nonce`; so the mount asks again with a request that carries no
    /// JSON-RPC message (`{}`: nothing to run, should the server take it)
    /// and reads the header of that refusal.
    async fn rs_nonce(&self, uri: &str, token: &str) -> Option<String> {
        let response = self
            .probe
            .post(uri)
            .header(http::header::AUTHORIZATION, format!("DPoP {token}"))
            .header(DPOP, self.dpop.proof("POST", uri, Some(token), None))
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .body("{}")
            .send()
            .await
            .ok()?;
        let nonce = response
            .headers()
            .get(DPOP_NONCE)?
            .to_str()
            .ok()?
            .to_owned();
        Some(nonce)
    }
}

impl<C> StreamableHttpClient for DpopHttp<C>
where
    C: StreamableHttpClient<Error = reqwest::Error> + Send + Sync,
{
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<PostResponse, HttpError> {
        self.present(
            "POST",
            &uri,
            auth_header,
            custom_headers,
            |auth, headers| {
                self.inner.post_message(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    auth,
                    headers,
                )
            },
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<PostResponse, HttpError> {
        self.present(
            "POST",
            &uri,
            auth_header,
            custom_headers,
            |auth, headers| {
                self.inner.post_message_with_max_sse_event_size(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    auth,
                    headers,
                    max_sse_event_size,
                )
            },
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<PostResponse, HttpError> {
        self.present(
            "POST",
            &uri,
            auth_header,
            custom_headers,
            |auth, headers| {
                self.inner.post_message_with_response_limits(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    auth,
                    headers,
                    limits,
                )
            },
        )
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), HttpError> {
        self.present(
            "DELETE",
            &uri,
            auth_header,
            custom_headers,
            |auth, headers| {
                self.inner
                    .delete_session(uri.clone(), session_id.clone(), auth, headers)
            },
        )
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<SseStream, HttpError> {
        self.present("GET", &uri, auth_header, custom_headers, |auth, headers| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth,
                headers,
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<SseStream, HttpError> {
        self.present("GET", &uri, auth_header, custom_headers, |auth, headers| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth,
                headers,
                max_sse_event_size,
            )
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(jws: &str) -> (Value, Value) {
        let mut parts = jws.split('.');
        let mut decode = || -> Value {
            serde_json::from_slice(&B64.decode(parts.next().unwrap()).unwrap()).unwrap()
        };
        (decode(), decode())
    }

    #[test]
    fn a_proof_names_the_request_the_token_and_the_nonce_and_never_repeats() {
        let dpop = Dpop::new();
        let proof = dpop.proof(
            "POST",
            "http://127.0.0.1:9/mcp?x=1#f",
            Some("tok"),
            Some("n1"),
        );
        let (header, claims) = claims(&proof);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"]["x"].is_string() && header["jwk"].get("d").is_none());
        assert_eq!(claims["htm"], "POST");
        assert_eq!(
            claims["htu"], "http://127.0.0.1:9/mcp",
            "no query or fragment"
        );
        assert_eq!(claims["nonce"], "n1");
        // ath: base64url(SHA-256("tok")), RFC 9449 section 4.2.
        assert_eq!(claims["ath"], "GnZ0607njffhrEOak8P6jjyUV4TU3sn9jjARc4svHWI");
        let (_, again) = self::claims(&dpop.proof("POST", "http://127.0.0.1:9/mcp", None, None));
        assert_ne!(claims["jti"], again["jti"]);
        assert!(again.get("ath").is_none() && again.get("nonce").is_none());
    }

    #[test]
    fn a_bound_tokens_key_is_kept_and_read_back_and_an_unbound_one_is_not() {
        let dpop = Dpop::new();
        let mut stored = json!({"client_id": "c", "token_response": {"access_token": "t", "token_type": "DPoP"}});
        dpop.keep(&mut stored);
        assert!(
            stored.get(KEPT_KEY).is_none(),
            "not bound yet: nothing to keep"
        );
        dpop.bound.store(true, Ordering::Release);
        dpop.keep(&mut stored);
        let again = Dpop::from_stored(Some(&stored.to_string()));
        assert!(again.bound());
        assert_eq!(again.jwk, dpop.jwk, "the same key");
        // A Bearer token, garbage or nothing: a new key, unbound.
        stored["token_response"]["token_type"] = "Bearer".into();
        for text in [Some(stored.to_string()), Some("{".into()), None] {
            let fresh = Dpop::from_stored(text.as_deref());
            assert!(!fresh.bound());
            assert_ne!(fresh.jwk, dpop.jwk);
        }
    }

    /// A server that answers each connection with the next of the answers
    /// `answers(its port)` gives (raw HTTP), on a thread; its port.
    fn answering(answers: impl FnOnce(u16) -> Vec<String> + Send + 'static) -> u16 {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for answer in answers(port) {
                let Ok((mut s, _)) = listener.accept() else {
                    return;
                };
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                let _ = s.write_all(answer.as_bytes());
            }
        });
        port
    }

    fn redirect(to: String) -> String {
        format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    }

    const OK: &str = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";

    #[test]
    fn oauth_redirects_are_followed_within_the_origin_only() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let http = TokenHttp::new(None).unwrap();
        let get = |port: u16| {
            http::Request::get(format!("http://127.0.0.1:{port}/.well-known/a"))
                .body(Vec::new())
                .unwrap()
        };
        // To another origin (another port): refused.
        let elsewhere = answering(|_| vec![OK.to_owned()]);
        let port = answering(move |_| vec![redirect(format!("http://127.0.0.1:{elsewhere}/x"))]);
        let err = runtime
            .block_on(http.send(get(port), true))
            .expect_err("a redirect to another origin was followed");
        assert!(err.contains("failed"), "{err}");
        // Within the origin: followed.
        let port = answering(|port| {
            vec![
                redirect(format!("http://127.0.0.1:{port}/y")),
                OK.to_owned(),
            ]
        });
        let answer = runtime
            .block_on(http.send(get(port), true))
            .expect("a redirect within the origin is followed");
        assert_eq!(
            (answer.status().as_u16(), answer.body().as_slice()),
            (200, &b"{}"[..])
        );
    }

    #[test]
    fn dpop_is_offered_only_with_es256() {
        let metadata = |algs: Value| -> rmcp::transport::auth::AuthorizationMetadata {
            serde_json::from_value(json!({
                "authorization_endpoint": "http://a/authorize",
                "token_endpoint": "http://a/token",
                "dpop_signing_alg_values_supported": algs,
            }))
            .unwrap()
        };
        assert!(offered(&metadata(json!(["RS256", "ES256"]))));
        assert!(!offered(&metadata(json!(["RS256"]))));
        assert!(!offered(&metadata(json!(null))));
    }

    #[test]
    fn token_requests_are_told_from_other_posts_by_their_grant_type() {
        assert!(form_has(
            b"grant_type=client_credentials&scope=a",
            "grant_type"
        ));
        assert!(!form_has(b"{\"redirect_uris\":[]}", "grant_type"));
        assert!(asks_nonce(
            "DPoP error=\"use_dpop_nonce\", resource_metadata=\"x\""
        ));
        assert!(!asks_nonce("DPoP error=\"invalid_token\""));
    }
}
