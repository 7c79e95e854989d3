//! Authorization server metadata through rmcp's discovery, with the one
//! exception capstan makes to its issuer check.
//!
//! RFC 8414 section 3.3: the `issuer` of metadata must be the issuer
//! identifier the metadata URL was made from, so that one authorization
//! server cannot pass itself off as another (the mix-up attacks). rmcp
//! enforces it everywhere. A server of the 2025-03-26 era has no protected
//! resource metadata: the client makes the metadata URL from the MCP
//! server's origin (the spec's "authorization base URL"), an issuer it
//! guessed rather than one anybody named, and such servers often answer
//! with an issuer that has a path (`https://host/oauth`); the conformance
//! suite's `auth/2025-03-26-oauth-metadata-backcompat` is one. Such metadata
//! is taken when its issuer has the MCP server's own origin: it can then
//! claim no other origin's authorization server, which is what the check
//! defends, and the issuer it states is the one the authorization response
//! (RFC 9207 `iss`) and stored tokens are then held to. The exception holds
//! whenever the issuer expected is the MCP server's origin itself, which
//! rmcp's error says: guessed so, or named so by protected resource metadata
//! (the same origin either way). Any other mismatch still fails: another
//! origin, or an issuer expected with a path (named, or from a path-aware
//! well-known URL).

use rmcp::transport::auth::{AuthError, AuthorizationMetadata};
use rmcp::transport::AuthorizationManager;

use super::dpop::TokenHttp;

/// The well-known URLs, at an origin's root, where rmcp looks for metadata
/// whose issuer is that origin.
const ROOT_METADATA: [&str; 2] = [
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
];

/// The authorization server metadata `manager` finds for the MCP server at
/// `url` (from the 401's `challenge` if any), with the same-origin
/// exception (see the module's text).
pub(super) async fn resolve(
    manager: &AuthorizationManager,
    url: &str,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadata, AuthError> {
    match manager.resolve_metadata_from_challenge(challenge).await {
        Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) if same_origin_issuer(url, &expected_issuer, &received_issuer) => {
            root_metadata(url, &received_issuer).await.ok_or(
                AuthError::AuthorizationServerMismatch {
                    expected_issuer,
                    received_issuer,
                },
            )
        }
        other => other.map(|resolution| resolution.metadata),
    }
}

/// Whether a mismatch is the exception: the issuer expected is the MCP
/// server's origin itself (the metadata came from the origin's root), and
/// the one received is a URL of that origin.
fn same_origin_issuer(url: &str, expected: &str, received: &str) -> bool {
    let (Ok(server), Ok(expected), Ok(received)) = (
        url::Url::parse(url),
        url::Url::parse(expected),
        url::Url::parse(received),
    ) else {
        return false;
    };
    let root = matches!(expected.path(), "" | "/");
    root && expected.query().is_none()
        && received.query().is_none()
        && received.fragment().is_none()
        && received.username().is_empty()
        && expected.origin() == server.origin()
        && received.origin() == server.origin()
        && server.origin().is_tuple()
}

/// The metadata at the root of `url`'s origin whose issuer is `issuer`
/// (what rmcp's discovery read and refused), read again: rmcp gives back
/// only the error. Redirects are followed within the origin only.
async fn root_metadata(url: &str, issuer: &str) -> Option<AuthorizationMetadata> {
    let http = TokenHttp::new(None).ok()?;
    let origin = url::Url::parse(url).ok()?.origin().ascii_serialization();
    for path in ROOT_METADATA {
        let request = http::Request::get(format!("{origin}{path}"))
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())
            .ok()?;
        let Ok(answer) = http.send(request, true).await else {
            continue;
        };
        if !answer.status().is_success() {
            continue;
        }
        let Ok(metadata) = serde_json::from_slice::<AuthorizationMetadata>(answer.body()) else {
            continue;
        };
        if metadata.issuer.as_deref() == Some(issuer) {
            return Some(metadata);
        }
    }
    None
}

/// The pin that lets client credentials go to any authorization server the
/// MCP server names (the host trusts that server as far as its secret).
pub const ANY_ISSUER: &str = "*";

/// Whether the host's client secret or key may go to the authorization
/// server of `metadata`, found for the MCP server at `url`: with a pinned
/// issuer, only if it is that issuer (metadata whose `issuer` rmcp or
/// `resolve` checked against the URL it was read from, so its token
/// endpoint is that issuer's word); without, only if the issuer and the
/// token endpoint are of the MCP server's origin. An MCP server names its
/// authorization server itself: without this, any server could have a
/// host's credentials sent to a third origin it chose.
pub(super) fn credentials_may_go(
    url: &str,
    pinned: Option<&str>,
    metadata: &AuthorizationMetadata,
) -> Result<(), String> {
    let named = metadata
        .issuer
        .as_deref()
        .unwrap_or(metadata.token_endpoint.as_str());
    if pinned == Some(ANY_ISSUER) {
        return Ok(());
    }
    if let Some(pinned) = pinned {
        let trim = |s: &str| s.trim_end_matches('/').to_owned();
        if metadata.issuer.as_deref().map(trim) == Some(trim(pinned)) {
            return Ok(());
        }
        return Err(format!(
            "{url} names the authorization server {named}, not {pinned}, the issuer the \
             client credentials are pinned to (client_issuer): they were not sent"
        ));
    }
    let origin = |s: &str| url::Url::parse(s).ok().map(|u| u.origin());
    let server = origin(url).filter(url::Origin::is_tuple);
    let same = |s: &str| server.is_some() && origin(s) == server;
    let issuer_ok = metadata.issuer.as_deref().is_none_or(same);
    if issuer_ok && same(&metadata.token_endpoint) {
        return Ok(());
    }
    Err(format!(
        "{url} names the authorization server {named} (token endpoint {}), of another \
         origin: the client secret or key is sent only to the MCP server's own origin or \
         to the issuer pinned for it (client_issuer), so it was not sent",
        metadata.token_endpoint
    ))
}

#[cfg(test)]
mod tests {
    use super::{credentials_may_go, same_origin_issuer};

    fn metadata(issuer: Option<&str>, token: &str) -> super::AuthorizationMetadata {
        let mut m = serde_json::json!({
            "authorization_endpoint": "https://x/authorize",
            "token_endpoint": token,
        });
        if let Some(issuer) = issuer {
            m["issuer"] = issuer.into();
        }
        serde_json::from_value(m).expect("metadata")
    }

    #[test]
    fn client_credentials_go_only_to_the_servers_origin_or_the_pinned_issuer() {
        let server = "https://mcp.example.com/mcp";
        let own = metadata(
            Some("https://mcp.example.com"),
            "https://mcp.example.com/token",
        );
        let legacy = metadata(None, "https://mcp.example.com/token");
        let idp = metadata(
            Some("https://idp.example.com"),
            "https://idp.example.com/token",
        );
        let sneaky = metadata(
            Some("https://mcp.example.com"),
            "https://evil.example.com/token",
        );
        assert!(credentials_may_go(server, None, &own).is_ok());
        assert!(credentials_may_go(server, None, &legacy).is_ok());
        for other in [&idp, &sneaky] {
            let err = credentials_may_go(server, None, other).unwrap_err();
            assert!(err.contains("client_issuer"), "{err}");
        }
        let pin = Some("https://idp.example.com/");
        assert!(credentials_may_go(server, pin, &idp).is_ok());
        // Pinned: nothing else, not even the server's own origin.
        for other in [&own, &legacy] {
            assert!(credentials_may_go(server, pin, other).is_err());
        }
        // The host's explicit "any": wherever the server says.
        for any in [&own, &legacy, &idp, &sneaky] {
            assert!(credentials_may_go(server, Some(super::ANY_ISSUER), any).is_ok());
        }
    }

    #[test]
    fn only_a_root_issuer_mismatch_within_the_servers_origin_is_excepted() {
        let server = "https://mcp.example.com/mcp";
        let root = "https://mcp.example.com/";
        assert!(same_origin_issuer(
            server,
            root,
            "https://mcp.example.com/oauth"
        ));
        assert!(same_origin_issuer(
            server,
            "https://mcp.example.com",
            "https://mcp.example.com/tenant/1"
        ));
        // Another origin: scheme, host or port.
        for other in [
            "https://evil.example.com/oauth",
            "http://mcp.example.com/oauth",
            "https://mcp.example.com:8443/oauth",
        ] {
            assert!(!same_origin_issuer(server, root, other), "{other}");
        }
        // The issuer expected was named (protected resource metadata, a
        // path-aware URL), not guessed from the origin.
        assert!(!same_origin_issuer(
            server,
            "https://mcp.example.com/as",
            "https://mcp.example.com/oauth"
        ));
        // The expected root is not the server's origin.
        assert!(!same_origin_issuer(
            server,
            "https://as.example.com/",
            "https://as.example.com/oauth"
        ));
        // Not an issuer identifier (RFC 8414: no query or fragment).
        for odd in [
            "https://mcp.example.com/oauth?x=1",
            "https://mcp.example.com/oauth#f",
            "https://user@mcp.example.com/oauth",
            "not a url",
        ] {
            assert!(!same_origin_issuer(server, root, odd), "{odd}");
        }
    }
}
