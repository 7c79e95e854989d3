//! The two eras of the MCP protocol (issue #33), both served and both mounted.
//!
//! - **legacy** (2025-11-25 and older): the client opens with `initialize`
//!   (over HTTP the server hands out an `Mcp-Session-Id`); `list_changed`
//!   arrives unasked.
//! - **modern** (2026-07-28 and later): no session and no handshake: the
//!   client may ask `server/discover`, and every request carries the protocol
//!   version, the client's info and capabilities in its `_meta`
//!   (`io.modelcontextprotocol/*`); `list_changed` arrives on a
//!   `subscriptions/listen` stream the client opens.
//!
//! rmcp 3.11 routes each request to its era (over HTTP: by the request's
//! `_meta` and `MCP-Protocol-Version`; over stdio: by the first request), so
//! the server answers both on one endpoint; what capstan adds is the
//! `subscriptions/listen` stream (`listen`) and, for a mount, the choice of
//! lifecycle (`lifecycle`) and the report of what it got (`negotiated`).

use rmcp::model::{ProtocolVersion, SubscriptionFilter};
use rmcp::service::{ClientLifecycleMode, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleClient};
use serde_json::{json, Value};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Methods the 2026-07-28 revision removed: a modern request for one of
/// them gets "method not found" (over HTTP a 404), not the invalid-params
/// answer its params (shaped for the new era) would get from the old one.
pub(crate) const REMOVED_IN_2026: [&str; 5] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// The `_meta` key carrying a modern request's protocol version.
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// Whether a request's params (`_meta`) say it is of the modern era.
pub(crate) fn modern_params(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(VERSION_KEY))
        .and_then(Value::as_str)
        .is_some_and(|v| era_of(v) == "modern")
}

/// A modern request for a method its era removed.
pub(crate) fn removed_method(method: &str, modern: bool) -> bool {
    modern && REMOVED_IN_2026.contains(&method)
}

/// What `era` says of a protocol version.
pub(crate) fn era_of(version: &str) -> &'static str {
    if ProtocolVersion::NO_INITIALIZE.as_str() <= version {
        "modern"
    } else {
        "legacy"
    }
}

/// Whether a request came from a modern (2026-07-28) client: the version in
/// its `_meta`.
pub(crate) fn is_modern(meta: &rmcp::model::RequestMetaObject) -> bool {
    meta.protocol_version()
        .is_some_and(|v| era_of(v.as_str()) == "modern")
}

/// How a mount opens its connection, from `MountOptions::protocol_version`:
/// - none: `server/discover` at 2026-07-28 first; a server that refuses it
///   (or does not answer it within 10 s, rmcp's bound) gets `initialize`
///   at 2025-11-25 on the same connection;
/// - a modern version: `server/discover` only (a legacy server is an error);
/// - a legacy version: `initialize` asking for it (the server may answer
///   with an older one).
pub(crate) fn lifecycle(asked: Option<&str>) -> ClientLifecycleMode {
    match asked {
        None => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        },
        Some(version) if era_of(version) == "modern" => ClientLifecycleMode::Discover {
            preferred_versions: ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .filter(|known| known.as_str() == version)
                .cloned()
                .collect(),
        },
        Some(_) => ClientLifecycleMode::Initialize,
    }
}

/// What a mount got from its server: `{"protocol_version", "era",
/// "server": {"name", "version"} | null}` (null before the handshake).
pub(crate) fn negotiated(peer: &Peer<RoleClient>) -> Value {
    let Some(info) = peer.peer_info() else {
        return Value::Null;
    };
    let version = info.protocol_version.as_str();
    let server = info
        .server_info
        .as_ref()
        .map(|s| json!({"name": s.name, "version": s.version}));
    json!({
        "protocol_version": version,
        "era": era_of(version),
        "server": server,
    })
}

/// The notifications a `subscriptions/listen` stream of capstan's server
/// carries: `tools/list_changed` (capstan serves tools only).
pub(crate) fn accepted_filter(requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
    let tools = SubscriptionFilter::builder().tools_list_changed().build();
    Some(requested.intersection(&tools))
}

/// Serves one `subscriptions/listen` stream: a `tools/list_changed` on it
/// after each batch of registry changes (`changes` counts them), until the
/// client cancels the request or closes the stream, or the server stops
/// (then the stream ends with its final result). `from`: the count when the
/// listen was acknowledged; changes since then are announced at once (the
/// client may have changed the registry right after the acknowledgement).
pub(crate) async fn listen(
    context: SubscriptionContext,
    mut changes: watch::Receiver<u64>,
    from: Option<u64>,
    stopping: CancellationToken,
) -> Result<(), ErrorData> {
    let missed = from.is_some_and(|f| *changes.borrow_and_update() != f);
    if context.accepted().tools_list_changed != Some(true) {
        context.cancelled().await;
        return Ok(());
    }
    if missed && context.sink().notify_tool_list_changed().await.is_err() {
        return Ok(());
    }
    loop {
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
                if context.sink().notify_tool_list_changed().await.is_err() {
                    // The stream is gone (the client left).
                    return Ok(());
                }
            }
            _ = context.cancelled() => return Ok(()),
            _ = stopping.cancelled() => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_from_2026_07_28_on_are_modern_older_ones_legacy() {
        assert_eq!(era_of("2026-07-28"), "modern");
        assert_eq!(era_of("2027-01-01"), "modern");
        assert_eq!(era_of("2025-11-25"), "legacy");
        assert_eq!(era_of("2024-11-05"), "legacy");
    }

    #[test]
    fn a_mount_probes_by_default_and_keeps_to_the_era_of_a_version_it_is_given() {
        assert!(matches!(
            lifecycle(None),
            ClientLifecycleMode::Auto { ref preferred_versions, legacy_version: Some(ref legacy) }
                if preferred_versions == &[ProtocolVersion::V_2026_07_28]
                    && legacy == &ProtocolVersion::V_2025_11_25
        ));
        assert!(matches!(
            lifecycle(Some("2026-07-28")),
            ClientLifecycleMode::Discover { ref preferred_versions }
                if preferred_versions == &[ProtocolVersion::V_2026_07_28]
        ));
        assert!(matches!(
            lifecycle(Some("2025-06-18")),
            ClientLifecycleMode::Initialize
        ));
    }

    #[test]
    fn removed_methods_are_told_by_the_version_in_meta() {
        let modern = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
        let legacy = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}});
        assert!(modern_params(Some(&modern)));
        assert!(!modern_params(Some(&legacy)));
        assert!(!modern_params(Some(&json!({"level": "info"}))));
        assert!(!modern_params(None));
        assert!(removed_method("logging/setLevel", true));
        assert!(!removed_method("logging/setLevel", false));
        assert!(!removed_method("tools/list", true));
    }

    #[test]
    fn the_listen_stream_carries_tool_list_changes_only() {
        let all = SubscriptionFilter::builder()
            .tools_list_changed()
            .prompts_list_changed()
            .resources_list_changed()
            .build();
        let accepted = accepted_filter(&all).unwrap_or_default();
        assert_eq!(accepted.tools_list_changed, Some(true));
        assert_ne!(accepted.prompts_list_changed, Some(true));
        assert_ne!(accepted.resources_list_changed, Some(true));
    }
}
