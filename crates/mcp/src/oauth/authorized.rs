//! A mount's HTTP client with OAuth: rmcp's `AuthClient` (tokens, refresh,
//! DPoP proofs under it), and a fresh authorization when the server still
//! refuses a request (401, or 403 `insufficient_scope`).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthClient, AuthError};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse as PostResponse,
    StreamableHttpResponseLimits,
};
use rmcp::transport::AuthorizationManager;

use super::{dpop, Authorization};
use crate::wire::CheckedHttp;

type HttpError = StreamableHttpError<reqwest::Error>;
type Headers = std::collections::HashMap<http::HeaderName, http::HeaderValue>;
type SseStream =
    futures_core::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;

/// Authorizations (not refreshes) one request may start: the first
/// authorization and one step-up. A server that keeps refusing after that
/// gets its refusal passed on, instead of the user being asked forever.
const AUTHORIZATIONS_PER_REQUEST: usize = 2;

impl Authorization {
    /// The HTTP client of one connection: `http` with this mount's tokens.
    pub async fn client(self: &Arc<Self>, http: CheckedHttp) -> Result<Authorized, String> {
        // `AuthClient::new` wants a manager of its own; the mount's shared
        // one replaces it at once.
        let placeholder = AuthorizationManager::new(self.url.as_str())
            .await
            .map_err(|e| format!("OAuth for {}: {e}", self.url))?;
        let http = dpop::DpopHttp::new(http, self.dpop.clone())?;
        let mut inner = AuthClient::new(http, placeholder);
        inner.auth_manager = self.manager.clone();
        Ok(Authorized {
            inner,
            authorization: self.clone(),
        })
    }
}

/// A connection's HTTP client: rmcp's `AuthClient` (tokens, refresh), and
/// a fresh authorization when the server still refuses.
#[derive(Clone)]
pub struct Authorized {
    inner: AuthClient<dpop::DpopHttp<CheckedHttp>>,
    authorization: Arc<Authorization>,
}

impl Authorized {
    /// Runs `send` and, while the server refuses it with an OAuth challenge,
    /// authorizes and sends again (at most `AUTHORIZATIONS_PER_REQUEST` times).
    async fn with_authorization<T, F, Fut>(&self, send: F) -> Result<T, HttpError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, HttpError>>,
    {
        let mut authorizations = 0;
        loop {
            let seen = self.authorization.completed.load(Ordering::Acquire);
            let challenge = match send().await {
                Err(StreamableHttpError::AuthRequired(e)) => e.www_authenticate_header.clone(),
                Err(StreamableHttpError::InsufficientScope(e)) => e.www_authenticate_header.clone(),
                // A refresh that failed quotes its token endpoint's answer.
                Err(StreamableHttpError::Auth(AuthError::TokenRefreshFailed(text))) => {
                    let text = self.authorization.redact(&text);
                    return Err(HttpError::Auth(AuthError::TokenRefreshFailed(text)));
                }
                other => return other,
            };
            if authorizations == AUTHORIZATIONS_PER_REQUEST {
                return Err(HttpError::Auth(AuthError::AuthorizationFailed(
                    self.authorization.redact(&format!(
                        "{} still refuses the request after {authorizations} authorizations: \
                         {challenge}",
                        self.authorization.url
                    )),
                )));
            }
            authorizations += 1;
            self.authorization
                .authorize(&challenge, seen)
                .await
                .map_err(|e| HttpError::Auth(AuthError::AuthorizationFailed(e)))?;
        }
    }
}

impl StreamableHttpClient for Authorized {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<PostResponse, HttpError> {
        self.with_authorization(|| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
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
        self.with_authorization(|| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
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
        self.with_authorization(|| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), HttpError> {
        // Ending a session is no reason to ask the user for anything.
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
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
        self.with_authorization(|| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
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
        self.with_authorization(|| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
