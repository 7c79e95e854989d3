//! Grants without a user (no authorization URL, no redirect), for hosts that
//! are machines:
//! - the client-credentials grant with a key (private_key_jwt, RFC 7523
//!   section 2.2; SEP-1046) — with a secret it is rmcp's (`mod.rs`);
//! - the JWT-bearer grant (RFC 7523 section 2.1) with a workload identity
//!   token the host's platform issued (workload identity federation,
//!   SEP-1933);
//! - enterprise-managed authorization (SEP-990): the user's ID token from
//!   the enterprise identity provider, exchanged there for an ID-JAG (RFC
//!   8693), then the JWT-bearer grant with it (rmcp's `enterprise` module).
//!
//! Each sends one token request (two for SEP-990) and never retries or falls
//! back to another grant: a refusal fails the request that needed the token,
//! with the server's error. The token goes where rmcp keeps the others, so
//! requests carry it as usual; when it expires the next refused request runs
//! the grant again.

use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAssertion, EmaClientAssertionProvider,
    EmaClientAuthentication, EmaExchangeRequest,
};
use rmcp::transport::auth::AuthorizationMetadata;
use rmcp::transport::{AuthorizationManager, CredentialStore};
use serde_json::{json, Value};

use super::dpop::{self, TokenHttp};
use super::jwt::{now, Es256};
use super::{Authorization, HostStore};

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// The form members of a token request that are credentials.
const SENT_SECRETS: [&str; 4] = [
    "assertion",
    "client_secret",
    "client_assertion",
    "subject_token",
];
/// The most of a server's error text an error message quotes.
const MAX_QUOTED: usize = 300;
/// The client id a token is kept under when the host named none (a
/// workload identity token names its workload itself).
const NO_CLIENT: &str = "capstan";

/// The enterprise identity provider of SEP-990, as the host configured it.
#[derive(Clone, Debug)]
pub struct IdentityProvider {
    /// Its issuer identifier (the ID-JAG's `iss`).
    pub issuer: String,
    pub token_endpoint: String,
    /// The host's client there.
    pub client_id: String,
    /// That client's secret (HTTP Basic); None: a public client.
    pub client_secret: Option<String>,
}

/// How the client authenticates at a token endpoint.
enum ClientAuth<'a> {
    /// `client_id` in the body (a public client), or nothing without one.
    Public(Option<&'a str>),
    Basic(&'a str, &'a str),
    Post(&'a str, &'a str),
    /// private_key_jwt, for the authorization server `audience`.
    Key(&'a str, &'a Arc<Es256>, String),
}

/// The token endpoint authentication methods the server lists.
fn auth_methods(metadata: &AuthorizationMetadata) -> Vec<String> {
    metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(Value::as_array)
        .map(|m| {
            m.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// A secret goes in HTTP Basic unless the server lists the body and not
/// Basic (RFC 8414: Basic is the default when it lists nothing).
fn secret_in_basic(metadata: &AuthorizationMetadata) -> bool {
    let methods = auth_methods(metadata);
    methods.is_empty()
        || methods.iter().any(|m| m == "client_secret_basic")
        || !methods.iter().any(|m| m == "client_secret_post")
}

/// The audience of a client assertion: the server's issuer (RFC 7523bis),
/// else its token endpoint (RFC 7523).
fn audience(metadata: &AuthorizationMetadata) -> String {
    metadata
        .issuer
        .clone()
        .unwrap_or_else(|| metadata.token_endpoint.clone())
}

/// Signs private_key_jwt assertions for rmcp's SEP-990 exchange.
struct KeyAssertions(Arc<Es256>);

#[async_trait::async_trait]
impl EmaClientAssertionProvider for KeyAssertions {
    async fn create_assertion(
        &self,
        server: &EmaAuthorizationServer,
    ) -> Result<EmaClientAssertion, Box<dyn std::error::Error + Send + Sync>> {
        Ok(EmaClientAssertion::new(
            self.0.client_assertion(&server.client_id, &server.issuer),
        ))
    }
}

impl Authorization {
    /// Runs the grant the options name, for the server of `challenge`.
    pub(super) async fn grant(&self, challenge: &str) -> Result<AuthorizationManager, String> {
        let o = &self.options;
        let (mut manager, store, metadata, http) = self.discover(challenge).await?;
        self.check_credentials(&metadata)?;
        let scopes = self.machine_scopes(challenge);
        let key = match &o.client_key {
            Some(pem) => Some(Arc::new(Es256::from_pem(pem)?)),
            None => None,
        };
        let client_id = o.client_id.as_deref();
        let auth = match (client_id, &key, &o.client_secret) {
            (Some(id), Some(key), _) => ClientAuth::Key(id, key, audience(&metadata)),
            (Some(id), None, Some(secret)) if secret_in_basic(&metadata) => {
                ClientAuth::Basic(id, secret)
            }
            (Some(id), None, Some(secret)) => ClientAuth::Post(id, secret),
            (id, None, None) => ClientAuth::Public(id),
            (None, Some(_), _) | (None, None, Some(_)) => {
                return Err("a client key or secret needs a client id".into())
            }
        };
        let endpoint = metadata.token_endpoint.clone();
        let token = match (&o.assertion, &o.identity_provider) {
            (Some(assertion), Some(idp)) => {
                let id_token = self.assertion(assertion, &idp.issuer).await?;
                let Some(client_id) = client_id else {
                    return Err(
                        "enterprise-managed authorization needs the client id registered at \
                         the server's authorization server"
                            .into(),
                    );
                };
                self.enterprise(&http, &metadata, idp, client_id, &auth, &id_token, &scopes)
                    .await?
            }
            (Some(assertion), None) => {
                let jwt = self.assertion(assertion, &audience(&metadata)).await?;
                let mut form = vec![("grant_type", JWT_BEARER.to_owned()), ("assertion", jwt)];
                self.add_common(&mut form, &scopes);
                token_request(&http, &endpoint, "JWT-bearer grant", form, &auth).await?
            }
            (None, _) if key.is_some() => {
                let mut form = vec![("grant_type", "client_credentials".to_owned())];
                self.add_common(&mut form, &scopes);
                token_request(&http, &endpoint, "client-credentials grant", form, &auth).await?
            }
            (None, _) => {
                return Err(format!(
                    "{} asks for OAuth authorization and the mount has no way to get a token",
                    self.url
                ))
            }
        };
        let client_id = client_id.unwrap_or(NO_CLIENT);
        manager
            .configure_client_id(client_id)
            .map_err(|e| format!("OAuth for {}: {e}", self.url))?;
        let credentials = serde_json::from_value(json!({
            "client_id": client_id,
            "token_response": token,
            "granted_scopes": scopes,
            "token_received_at": now(),
            "issuer": metadata.issuer,
        }))
        .map_err(|e| format!("the token from {endpoint} is not one capstan can use: {e}"))?;
        store
            .save(credentials)
            .await
            .map_err(|e| format!("keeping the token from {endpoint} failed: {e}"))?;
        Ok(manager)
    }

    /// Discovery for `challenge` with the mount's metadata checks; then, if
    /// the authorization server offers DPoP, a manager whose OAuth requests
    /// carry proofs (found again through it, as rmcp's resolution also
    /// notes the resource and its scopes).
    pub(super) async fn discover(
        &self,
        challenge: &str,
    ) -> Result<
        (
            AuthorizationManager,
            HostStore,
            AuthorizationMetadata,
            TokenHttp,
        ),
        String,
    > {
        let o = &self.options;
        let (mut manager, mut store) = super::new_manager(o, &self.url, &self.dpop, None).await?;
        let found = |e| format!("OAuth discovery for {} failed: {e}", self.url);
        let mut metadata = super::issuer::resolve(&manager, &self.url, Some(challenge))
            .await
            .map_err(found)?;
        let dpop = dpop::offered(&metadata).then(|| self.dpop.clone());
        if dpop.is_none() {
            self.dpop.unbind();
        }
        if let Some(dpop) = &dpop {
            let http = Arc::new(TokenHttp::new(Some(dpop.clone()))?);
            (manager, store) = super::new_manager(o, &self.url, &self.dpop, Some(http)).await?;
            metadata = super::issuer::resolve(&manager, &self.url, Some(challenge))
                .await
                .map_err(found)?;
        }
        store.bind(&metadata);
        manager.set_metadata(metadata.clone());
        Ok((manager, store, metadata, TokenHttp::new(dpop)?))
    }

    /// `scope` (if any) and `resource` (RFC 8707: the MCP server).
    fn add_common(&self, form: &mut Vec<(&'static str, String)>, scopes: &[String]) {
        if !scopes.is_empty() {
            form.push(("scope", scopes.join(" ")));
        }
        form.push(("resource", self.url.clone()));
    }

    /// The host's JWT for `audience`.
    async fn assertion(
        &self,
        assertion: &Arc<super::Assertion>,
        audience: &str,
    ) -> Result<String, String> {
        let (assertion, audience) = (assertion.clone(), audience.to_owned());
        tokio::task::spawn_blocking(move || assertion(&audience))
            .await
            .map_err(|e| format!("the assertion callback failed: {e}"))?
            .map_err(|why| format!("the host gave no assertion: {why}"))
    }

    /// SEP-990 through rmcp: the ID token for an ID-JAG at the identity
    /// provider, then the ID-JAG for an access token at the server's
    /// authorization server.
    #[allow(clippy::too_many_arguments)]
    async fn enterprise(
        &self,
        http: &TokenHttp,
        metadata: &AuthorizationMetadata,
        idp: &IdentityProvider,
        client_id: &str,
        auth: &ClientAuth<'_>,
        id_token: &str,
        scopes: &[String],
    ) -> Result<Value, String> {
        let Some(issuer) = metadata.issuer.clone() else {
            return Err(format!(
                "the authorization server of {} names no issuer, which enterprise-managed \
                 authorization binds its grant to",
                self.url
            ));
        };
        let resource_auth = match auth {
            ClientAuth::Basic(_, secret) => EmaClientAuthentication::ClientSecretBasic(
                oauth2::ClientSecret::new((*secret).into()),
            ),
            ClientAuth::Post(_, secret) => EmaClientAuthentication::ClientSecretPost(
                oauth2::ClientSecret::new((*secret).into()),
            ),
            ClientAuth::Key(_, key, _) => {
                EmaClientAuthentication::JwtAssertion(Arc::new(KeyAssertions((*key).clone())))
            }
            ClientAuth::Public(_) => EmaClientAuthentication::None,
        };
        let idp_auth = match &idp.client_secret {
            Some(secret) => EmaClientAuthentication::ClientSecretBasic(oauth2::ClientSecret::new(
                secret.clone(),
            )),
            None => EmaClientAuthentication::None,
        };
        let resource_as =
            EmaAuthorizationServer::new(issuer, metadata.token_endpoint.clone(), client_id)
                .with_client_authentication(resource_auth);
        let idp_server = EmaAuthorizationServer::new(
            idp.issuer.clone(),
            idp.token_endpoint.clone(),
            idp.client_id.clone(),
        )
        .with_client_authentication(idp_auth);
        let token =
            EmaExchangeRequest::new_with_id_token(idp_server, resource_as, &self.url, id_token)
                .with_scopes(scopes.iter().cloned())
                .exchange(http, http)
                .await
                .map_err(|e| {
                    format!(
                        "enterprise-managed authorization for {} failed: {e}",
                        self.url
                    )
                })?;
        let mut answer = json!({
            "access_token": token.access_token.secret(),
            "token_type": "Bearer",
        });
        if let Some(expires) = token.expires_in {
            answer["expires_in"] = expires.as_secs().into();
        }
        Ok(answer)
    }
}

/// One token request (a form POST to `endpoint`), authenticated as `auth`:
/// the server's JSON answer, or its error.
async fn token_request(
    http: &TokenHttp,
    endpoint: &str,
    grant: &str,
    mut form: Vec<(&'static str, String)>,
    auth: &ClientAuth<'_>,
) -> Result<Value, String> {
    let mut request = http::Request::post(endpoint)
        .header(
            http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(http::header::ACCEPT, "application/json");
    match auth {
        ClientAuth::Public(Some(id)) => form.push(("client_id", (*id).into())),
        ClientAuth::Public(None) => {}
        ClientAuth::Basic(id, secret) => {
            // RFC 6749 section 2.3.1: each part form-encoded first.
            let enc =
                |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let basic = STANDARD.encode(format!("{}:{}", enc(id), enc(secret)));
            request = request.header(http::header::AUTHORIZATION, format!("Basic {basic}"));
        }
        ClientAuth::Post(id, secret) => {
            form.push(("client_id", (*id).into()));
            form.push(("client_secret", (*secret).into()));
        }
        ClientAuth::Key(id, key, audience) => {
            form.push(("client_id", (*id).into()));
            form.push(("client_assertion_type", CLIENT_ASSERTION_TYPE.into()));
            form.push(("client_assertion", key.client_assertion(id, audience)));
        }
    }
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish();
    let request = request
        .body(body.into_bytes())
        .map_err(|e| format!("the OAuth {grant} request to {endpoint} could not be made: {e}"))?;
    let answer = http
        .send(request, false)
        .await
        .map_err(|e| format!("OAuth {grant} at {endpoint} failed: {e}"))?;
    let json: Option<Value> = serde_json::from_slice(answer.body()).ok();
    if !answer.status().is_success() {
        let said = json
            .as_ref()
            .map(|j| {
                let error = j
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("no error code");
                match j.get("error_description").and_then(Value::as_str) {
                    Some(why) => format!("{error}: {why}"),
                    None => error.to_owned(),
                }
            })
            .unwrap_or_else(|| String::from_utf8_lossy(answer.body()).into_owned());
        // What a server says is quoted, not trusted to be short, nor to
        // keep to itself what it was sent.
        let mut sent: Vec<&str> = form
            .iter()
            .filter(|(k, _)| SENT_SECRETS.contains(k))
            .map(|(_, v)| v.as_str())
            .collect();
        if let ClientAuth::Basic(_, secret) = auth {
            sent.push(secret);
        }
        let said = super::redact::redact(&said, &sent);
        let mut said: String = said.chars().take(MAX_QUOTED).collect();
        if said.chars().count() == MAX_QUOTED {
            said.push_str("...");
        }
        return Err(format!(
            "OAuth {grant} at {endpoint} was refused (HTTP {}): {said}",
            answer.status().as_u16()
        ));
    }
    match json {
        Some(token) if token.get("access_token").is_some_and(Value::is_string) => Ok(token),
        _ => Err(format!(
            "OAuth {grant} at {endpoint} answered without an access_token"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(extra: Value) -> AuthorizationMetadata {
        let mut m = json!({
            "authorization_endpoint": "http://a/authorize",
            "token_endpoint": "http://a/token",
        });
        m.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        serde_json::from_value(m).unwrap()
    }

    #[test]
    fn a_secret_goes_in_basic_unless_the_server_lists_only_the_body() {
        assert!(secret_in_basic(&metadata(json!({}))));
        assert!(secret_in_basic(&metadata(
            json!({"token_endpoint_auth_methods_supported": ["client_secret_basic"]})
        )));
        assert!(secret_in_basic(&metadata(
            json!({"token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"]})
        )));
        assert!(!secret_in_basic(&metadata(
            json!({"token_endpoint_auth_methods_supported": ["client_secret_post"]})
        )));
    }

    #[test]
    fn an_assertions_audience_is_the_issuer_else_the_token_endpoint() {
        assert_eq!(
            audience(&metadata(json!({"issuer": "http://a"}))),
            "http://a"
        );
        assert_eq!(audience(&metadata(json!({}))), "http://a/token");
    }
}
