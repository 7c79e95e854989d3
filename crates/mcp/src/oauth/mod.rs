//! OAuth 2.1 for mounts over HTTP (the MCP authorization spec, issue #33).
//!
//! rmcp's `auth` module does the protocol: protected resource metadata from
//! the 401's `WWW-Authenticate` or the well-known URLs, authorization server
//! metadata (with the 2025-03-26 fallbacks), PKCE S256, a pre-registered
//! client, a client-id metadata document or dynamic registration, scope
//! selection, the `resource` indicator, and refresh of an expired or
//! rejected token (`AuthClient`). What it leaves to its caller is done here:
//! run the flow when a request is refused (401, or 403 `insufficient_scope`
//! for a step-up), ask the host to present the authorization URL and hand
//! back the redirect, keep the tokens where the host says, and bound it all
//! by the mount's connect timeout.
//!
//! Beyond rmcp: grants without a user (`grants.rs`: private_key_jwt,
//! workload identity, enterprise-managed) and DPoP (`dpop.rs`), with the
//! ES256 signing both need (`jwt.rs`), and the one exception to rmcp's
//! issuer check (`issuer.rs`). A connection's HTTP client, which starts the
//! flow when a request is refused, is in `authorized.rs`.

mod authorized;
mod dpop;
mod grants;
mod issuer;
mod jwt;
mod redact;

pub use authorized::Authorized;
pub use grants::IdentityProvider;
pub use issuer::ANY_ISSUER;

/// Whether `pem` is a client key capstan can sign with (`client_key`).
pub fn check_client_key(pem: &str) -> Result<(), String> {
    jwt::Es256::from_pem(pem).map(drop)
}

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{AuthError, ClientCredentialsConfig, StoredCredentials};
use rmcp::transport::{AuthorizationManager, AuthorizationRequest, AuthorizationSession};
use rmcp::transport::{CredentialStore, WWWAuthenticateParams};
use tokio::sync::Mutex;

/// The host's part of the flow: shows the authorization URL to its user
/// (browser, printed link, ...) and returns the URL the authorization
/// server redirected to (`redirect_uri?code=...&state=...`), or why not.
/// May block; runs on a blocking thread of the mounts' runtime.
pub type Authorize = dyn Fn(&str) -> Result<String, String> + Send + Sync;

/// The host's part of a grant without a user: a JWT it got elsewhere for
/// the audience given (the authorization server's issuer for a workload
/// identity token, the identity provider's for an enterprise ID token), or
/// why not. May block; runs on a blocking thread of the mounts' runtime.
pub type Assertion = dyn Fn(&str) -> Result<String, String> + Send + Sync;

/// Where the tokens live between mounts (the host's keychain, a file).
/// Without one they live in memory for the mount's life.
pub trait TokenStore: Send + Sync {
    /// The JSON text last saved, or None.
    fn load(&self) -> Option<String>;
    /// Keeps `json`; None: forget what was kept.
    fn save(&self, json: Option<&str>);
}

/// OAuth settings of a mount: what only the host can supply.
#[derive(Clone)]
pub struct OAuthOptions {
    /// Runs the user's part of the authorization (None: a server that asks
    /// for authorization fails the mount, unless stored tokens serve).
    pub authorize: Option<Arc<Authorize>>,
    /// Where the authorization server sends the user back; the host
    /// catches it there (a loopback listener, a custom URL scheme).
    pub redirect_uri: String,
    /// A client registered with the authorization server beforehand; None:
    /// a client-id metadata document (`client_metadata_url`) if the server
    /// accepts them, else dynamic client registration.
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// PEM text of `client_id`'s private key (PKCS#8, EC P-256): the client
    /// authenticates with private_key_jwt (ES256) instead of a secret.
    pub client_key: Option<String>,
    /// The issuer identifier of the authorization server `client_secret`
    /// or `client_key` belong to. They are sent to that authorization
    /// server only (its metadata's `issuer` must be this, exactly), never
    /// to another one an MCP server names. None: only to an authorization
    /// server of the MCP server's own origin (issuer and token endpoint).
    /// `ANY_ISSUER` ("*"): to whichever one the MCP server names, for a
    /// server the host trusts as far as its credentials.
    pub client_issuer: Option<String>,
    /// A JWT from the host for a grant without a user: with
    /// `identity_provider`, the user's ID token there (enterprise-managed
    /// authorization, SEP-990); without, the workload's identity token for
    /// the JWT-bearer grant (SEP-1933).
    pub assertion: Option<Arc<Assertion>>,
    pub identity_provider: Option<IdentityProvider>,
    /// HTTPS URL of the host's client-id metadata document (SEP-991).
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for; empty: those of the server's challenge, else its
    /// `scopes_supported`.
    pub scopes: Vec<String>,
    /// Name given at dynamic client registration.
    pub client_name: String,
    pub store: Option<Arc<dyn TokenStore>>,
}

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_id", &self.client_id)
            .field("client_metadata_url", &self.client_metadata_url)
            .field(
                "client_key",
                &self.client_key.as_ref().map(|_| "[REDACTED]"),
            )
            .field("assertion", &self.assertion.is_some())
            .field("client_issuer", &self.client_issuer)
            .field("identity_provider", &self.identity_provider)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl OAuthOptions {
    pub fn new(redirect_uri: impl Into<String>) -> OAuthOptions {
        OAuthOptions {
            authorize: None,
            redirect_uri: redirect_uri.into(),
            client_id: None,
            client_secret: None,
            client_key: None,
            client_issuer: None,
            assertion: None,
            identity_provider: None,
            client_metadata_url: None,
            scopes: Vec::new(),
            client_name: "capstan".into(),
            store: None,
        }
    }
}

/// A mount's authorization state, kept across its reconnects: the tokens
/// stay valid when the connection is remade.
pub struct Authorization {
    options: OAuthOptions,
    url: String,
    /// The longest one authorization may take (the connect timeout).
    limit: Duration,
    /// Shared with every `AuthClient` made for this mount; replaced by each
    /// completed authorization.
    manager: Arc<Mutex<AuthorizationManager>>,
    /// One authorization at a time; counts completed ones, so that requests
    /// refused together run one flow, not one each.
    flows: Mutex<()>,
    completed: AtomicU64,
    /// The mount's DPoP key, used if its authorization server offers DPoP.
    dpop: Arc<dpop::Dpop>,
    /// Why the tokens in the host's store were not used, if they were not.
    passed_over: Option<String>,
}

/// Adapts the host's `TokenStore` (JSON text) to rmcp's credential store.
/// Once the mount has saved (or forgotten) tokens, it reads them back from
/// memory: they are the newest it has, whether the host gave a load, a
/// save or both; before that it asks the host's load (tokens of an earlier
/// mount), and takes them only if they were issued for this mount's server
/// by the authorization server its discovery found (`bind`): a token goes
/// nowhere else, neither the access token to another MCP server nor the
/// refresh token to another token endpoint.
#[derive(Clone)]
struct HostStore {
    /// None: in memory only.
    host: Option<Arc<dyn TokenStore>>,
    /// What this mount saved last (`Some(None)`: forgot); `None`: nothing yet.
    saved: Arc<std::sync::Mutex<Option<Option<String>>>>,
    /// The mount's DPoP key, kept with a token bound to it.
    dpop: Arc<dpop::Dpop>,
    /// The MCP server's URL: the resource every record this store keeps is
    /// for (its `resource`).
    resource: String,
    /// The authorization server discovery found for the resource (see
    /// `issuer_of`); None until then, and until then the host's records
    /// are not used.
    issuer: Arc<std::sync::Mutex<Option<String>>>,
}

/// The members of a stored record that say whom its tokens are for.
const RESOURCE_KEY: &str = "resource";
const ISSUER_KEY: &str = "issuer";

/// What a record's `issuer` holds for the authorization server of
/// `metadata`: its issuer identifier, or for a server that states none (a
/// 2025-03-26 server without metadata, whose endpoints are guessed from
/// its origin) its token endpoint, where the refresh token would go.
fn issuer_of(metadata: &rmcp::transport::auth::AuthorizationMetadata) -> String {
    metadata
        .issuer
        .clone()
        .unwrap_or_else(|| metadata.token_endpoint.clone())
}

impl HostStore {
    fn new(host: Option<Arc<dyn TokenStore>>, dpop: Arc<dpop::Dpop>, resource: &str) -> HostStore {
        HostStore {
            host,
            saved: Arc::default(),
            dpop,
            resource: resource.to_owned(),
            issuer: Arc::default(),
        }
    }

    /// From now on the host's records are taken if they were issued by
    /// the authorization server of `metadata` (found by discovery).
    fn bind(&self, metadata: &rmcp::transport::auth::AuthorizationMetadata) {
        if let Ok(mut issuer) = self.issuer.lock() {
            *issuer = Some(issuer_of(metadata));
        }
    }

    /// Why the host's record `text` is not for this mount, or None: it is
    /// (its resource is the mount's server, its issuer the one discovery
    /// found). A record without them (capstan's before they were kept, or
    /// the host's own) proves nothing, and is not used.
    fn refusal(&self, text: &str) -> Option<String> {
        let Ok(record) = serde_json::from_str::<serde_json::Value>(text) else {
            return Some("they are not JSON capstan can read".into());
        };
        let field = |key| record.get(key).and_then(serde_json::Value::as_str);
        let issuer = self.issuer.lock().ok().and_then(|i| i.clone());
        match (field(RESOURCE_KEY), field(ISSUER_KEY), issuer) {
            (None, _, _) | (_, None, _) => {
                Some("they do not say which server and authorization server they are for".into())
            }
            (Some(resource), _, _) if resource != self.resource => Some(format!(
                "they were issued for {resource}, not {}",
                self.resource
            )),
            (_, Some(_), None) => Some(
                "the server's authorization server could not be found to check their issuer".into(),
            ),
            (_, Some(theirs), Some(ours)) if theirs != ours => Some(format!(
                "they were issued by {theirs}, and {} names {ours}",
                self.resource
            )),
            _ => None,
        }
    }

    fn remember(&self, json: Option<&str>) {
        if let Ok(mut saved) = self.saved.lock() {
            *saved = Some(json.map(str::to_owned));
        }
    }
}

#[async_trait::async_trait]
impl CredentialStore for HostStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let saved = self.saved.lock().ok().and_then(|s| s.clone());
        let text = match saved {
            Some(text) => text,
            None => {
                let Some(store) = self.host.clone() else {
                    return Ok(None);
                };
                let text = tokio::task::spawn_blocking(move || store.load())
                    .await
                    .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
                // Tokens not proven to be this server's are not sent: the
                // server's 401 asks for a fresh authorization.
                text.filter(|t| self.refusal(t).is_none())
            }
        };
        // Unreadable stored tokens are as good as none: authorize again.
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let mut json = serde_json::to_value(&credentials)
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        self.dpop.keep(&mut json);
        // Whom the tokens are for, so that a later mount of another server
        // does not take them (rmcp keeps no issuer when the server states
        // none: its token endpoint stands for it).
        if let Some(record) = json.as_object_mut() {
            record.insert(RESOURCE_KEY.into(), self.resource.clone().into());
            if record
                .get(ISSUER_KEY)
                .is_none_or(serde_json::Value::is_null)
            {
                let issuer = self.issuer.lock().ok().and_then(|i| i.clone());
                record.insert(ISSUER_KEY.into(), issuer.into());
            }
        }
        let json = json.to_string();
        self.remember(Some(&json));
        let Some(store) = self.host.clone() else {
            return Ok(());
        };
        tokio::task::spawn_blocking(move || store.save(Some(&json)))
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.remember(None);
        let Some(store) = self.host.clone() else {
            return Ok(());
        };
        tokio::task::spawn_blocking(move || store.save(None))
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }
}

impl Authorization {
    /// Prepares the mount's authorization; tokens a host store holds are
    /// used from the first request (refreshed if they expired).
    pub async fn new(
        options: OAuthOptions,
        url: &str,
        limit: Duration,
    ) -> Result<Arc<Authorization>, String> {
        // Stored tokens bound to a DPoP key come with it: the mount goes on
        // with that key (its token requests carry proofs, so that a refresh
        // of a bound refresh token works), else with a new one.
        let stored = match options.store.clone() {
            Some(store) => tokio::task::spawn_blocking(move || store.load())
                .await
                .unwrap_or(None),
            None => None,
        };
        let dpop = dpop::Dpop::from_stored(stored.as_deref());
        let (mut manager, mut store) = new_manager(&options, url, &dpop, None).await?;
        let mut passed_over = None;
        if let Some(text) = &stored {
            // Stored tokens need the server's metadata: its authorization
            // server is the one they must have been issued by, and refresh
            // goes there. It is found through rmcp's client (which checks
            // the addresses it names); when they are bound to a DPoP key,
            // for a manager whose token requests carry proofs. If it cannot
            // be found, the stored tokens are not sent, and a 401 starts a
            // fresh authorization.
            let found = tokio::time::timeout(limit, issuer::resolve(&manager, url, None)).await;
            if let Ok(Ok(found)) = found {
                if dpop.bound() {
                    let http = Arc::new(dpop::TokenHttp::new(Some(dpop.clone()))?);
                    (manager, store) = new_manager(&options, url, &dpop, Some(http)).await?;
                }
                store.bind(&found);
                manager.set_metadata(found);
                let _ = tokio::time::timeout(limit, manager.initialize_from_store()).await;
            }
            passed_over = store.refusal(text);
        }
        Ok(Arc::new(Authorization {
            options,
            url: url.to_owned(),
            limit,
            manager: Arc::new(Mutex::new(manager)),
            flows: Mutex::new(()),
            completed: AtomicU64::new(0),
            dpop,
            passed_over,
        }))
    }

    /// Runs one authorization for `challenge` (a 401's or 403's
    /// `WWW-Authenticate`), unless one completed since the refused request
    /// was sent (`seen`); bounded by the connect timeout.
    async fn authorize(&self, challenge: &str, seen: u64) -> Result<(), String> {
        let _one = self.flows.lock().await;
        if self.completed.load(Ordering::Acquire) != seen {
            return Ok(());
        }
        let limit = self.limit;
        let manager = tokio::time::timeout(limit, self.run(challenge))
            .await
            .map_err(|_| {
                format!(
                    "OAuth authorization for {} did not complete within the connect timeout ({} ms)",
                    self.url,
                    limit.as_millis()
                )
            })?
            .map_err(|e| self.redact(&e))?;
        *self.manager.lock().await = manager;
        self.completed.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// `text` without the credentials it may quote (`redact.rs`), the
    /// mount's own secrets included.
    fn redact(&self, text: &str) -> String {
        let o = &self.options;
        let idp = o.identity_provider.as_ref();
        let secrets: Vec<&str> = [
            o.client_secret.as_deref(),
            o.client_key.as_deref(),
            idp.and_then(|p| p.client_secret.as_deref()),
        ]
        .into_iter()
        .flatten()
        .collect();
        redact::redact(text, &secrets)
    }

    /// Whether the mount's client secret or key may go to the authorization
    /// server of `metadata` (see `OAuthOptions::client_issuer`).
    fn check_credentials(
        &self,
        metadata: &rmcp::transport::auth::AuthorizationMetadata,
    ) -> Result<(), String> {
        let o = &self.options;
        if o.client_secret.is_none() && o.client_key.is_none() {
            return Ok(());
        }
        issuer::credentials_may_go(&self.url, o.client_issuer.as_deref(), metadata)
    }

    async fn run(&self, challenge: &str) -> Result<AuthorizationManager, String> {
        let o = &self.options;
        let Some(authorize) = o.authorize.clone() else {
            if o.assertion.is_some() || (o.client_id.is_some() && o.client_key.is_some()) {
                return self.grant(challenge).await;
            }
            if let (Some(id), Some(secret)) = (&o.client_id, &o.client_secret) {
                return self.client_credentials(challenge, id, secret).await;
            }
            let stored = match &self.passed_over {
                Some(why) => format!("; the stored tokens were not used: {why}"),
                None => String::new(),
            };
            return Err(format!(
                "{} asks for OAuth authorization and the mount has no authorize callback \
                 (nor a client id and secret or key for the client-credentials grant, nor an \
                 assertion){stored}",
                self.url
            ));
        };
        let (manager, _, metadata, _) = self.discover(challenge).await?;
        if o.client_id.is_some() {
            self.check_credentials(&metadata)?;
        }
        let (token_endpoint, registration) = (
            metadata.token_endpoint.clone(),
            metadata.registration_endpoint.clone(),
        );
        let mut request =
            AuthorizationRequest::new(o.redirect_uri.clone()).with_client_name(&o.client_name);
        let mut scopes = o.scopes.clone();
        // A step-up asks for what the 403 names on top of what was asked
        // before (the host's scopes, and those granted so far: SEP-2350),
        // so that it loses none.
        if let Some((true, challenged)) = self.challenge_scopes(challenge) {
            let granted = self.manager.lock().await.get_current_scopes().await;
            for s in granted.into_iter().chain(challenged) {
                if !scopes.contains(&s) {
                    scopes.push(s);
                }
            }
        }
        if !scopes.is_empty() {
            request = request.with_scopes(scopes);
        }
        if let Some(id) = &o.client_id {
            request = request.with_preregistered_client(id);
            if let Some(secret) = &o.client_secret {
                request = request.with_client_secret(secret);
            }
        }
        if let Some(url) = &o.client_metadata_url {
            request = request.with_client_metadata_url(url);
        }
        let session =
            AuthorizationSession::new(manager, request)
                .await
                .map_err(|(_, e)| match (&e, &registration) {
                    (AuthError::RegistrationFailed(_), Some(at)) => {
                        format!("OAuth client registration at {at} failed: {e}")
                    }
                    _ => format!("OAuth authorization for {} failed: {e}", self.url),
                })?;
        let url = session.get_authorization_url().to_owned();
        let redirect = tokio::task::spawn_blocking(move || authorize(&url))
            .await
            .map_err(|e| format!("the authorize callback failed: {e}"))?
            .map_err(|why| format!("OAuth authorization was refused: {why}"))?;
        // The code and state the redirect carries, which a server may quote
        // back in its refusal.
        let sent: Vec<String> = url::Url::parse(&redirect)
            .map(|u| {
                u.query_pairs()
                    .filter(|(k, _)| k == "code" || k == "state")
                    .map(|(_, v)| v.into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let sent: Vec<&str> = sent.iter().map(String::as_str).collect();
        session.handle_callback_url(&redirect).await.map_err(|e| {
            let text = match e {
                AuthError::TokenExchangeFailed(_) => {
                    format!("OAuth token request to {token_endpoint} failed: {e}")
                }
                _ => format!("OAuth authorization redirect {redirect:?} was refused: {e}"),
            };
            redact::redact(&text, &sent)
        })?;
        Ok(session.auth_manager)
    }
}

impl Authorization {
    /// What a refusal's `WWW-Authenticate` challenge says: whether it is a
    /// step-up (403 `insufficient_scope`), and the scopes it names.
    fn challenge_scopes(&self, challenge: &str) -> Option<(bool, Vec<String>)> {
        let base = url::Url::parse(&self.url).ok()?;
        let params = WWWAuthenticateParams::parse(challenge, &base);
        let scopes = params
            .scope
            .iter()
            .flat_map(|s| s.split_whitespace())
            .map(str::to_owned)
            .collect();
        Some((params.is_insufficient_scope(), scopes))
    }

    /// The scopes a grant without a user asks for: the host's, else the
    /// challenge's.
    fn machine_scopes(&self, challenge: &str) -> Vec<String> {
        if !self.options.scopes.is_empty() {
            return self.options.scopes.clone();
        }
        self.challenge_scopes(challenge)
            .map(|(_, challenged)| challenged)
            .unwrap_or_default()
    }

    /// The client-credentials grant (SEP-1046; OAuth 2.1 section 4.2): a
    /// pre-registered client with no user gets its tokens from the token
    /// endpoint with its id and secret (HTTP Basic when that is the only
    /// method the server lists, else in the body), for the MCP server's URL
    /// as the resource. The scopes are the host's, else the challenge's.
    async fn client_credentials(
        &self,
        challenge: &str,
        client_id: &str,
        client_secret: &str,
    ) -> Result<AuthorizationManager, String> {
        let (mut manager, _, metadata, _) = self.discover(challenge).await?;
        self.check_credentials(&metadata)?;
        let token_endpoint = metadata.token_endpoint.clone();
        let scopes = self.machine_scopes(challenge);
        let config = ClientCredentialsConfig::ClientSecret {
            client_id: client_id.to_owned(),
            client_secret: client_secret.to_owned(),
            scopes,
            resource: Some(self.url.clone()),
        };
        let refused = |e: AuthError| {
            format!("OAuth client-credentials grant at {token_endpoint} failed: {e}")
        };
        manager
            .validate_client_credentials_metadata(&config)
            .map_err(refused)?;
        manager
            .configure_client_credentials(&config)
            .map_err(refused)?;
        manager
            .exchange_client_credentials(&config)
            .await
            .map_err(refused)?;
        Ok(manager)
    }
}

/// A manager for `url` keeping its tokens in the host's store (or in
/// memory), and that store. Its OAuth requests go through rmcp's client,
/// which checks the addresses discovered metadata names, or through `http`
/// (DPoP proofs; the endpoints it reaches are those the checked discovery
/// found).
async fn new_manager(
    options: &OAuthOptions,
    url: &str,
    dpop: &Arc<dpop::Dpop>,
    http: Option<Arc<dpop::TokenHttp>>,
) -> Result<(AuthorizationManager, HostStore), String> {
    let mut manager = match http {
        None => AuthorizationManager::new(url).await,
        Some(http) => AuthorizationManager::new_with_oauth_http_client(url, http).await,
    }
    .map_err(|e| format!("OAuth for {url}: {e}"))?;
    let store = HostStore::new(options.store.clone(), dpop.clone(), url);
    manager.set_credential_store(store.clone());
    Ok((manager, store))
}
