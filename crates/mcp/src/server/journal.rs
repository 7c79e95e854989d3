//! A served `tools/call` and the registry's journal (issue #47): the
//! client names the call's journal key in the request's `_meta`, under
//! capstan's own prefix (the MCP schema's `MetaObject` rules: a reverse-DNS
//! prefix, a slash, a name):
//!
//! - `dev.capstan/runId` (string): the run (conversation, workflow) the call
//!   belongs to. Without it the call is not journaled.
//! - `dev.capstan/callId` (string): the call's id within the run (the
//!   provider's tool-call id). Without it the JSON-RPC request id is used,
//!   which a client's next session numbers anew: a client that wants a
//!   call answered from the journal later sends both.

use std::sync::Arc;

use rmcp::ErrorData;
use serde_json::{Map, Value};

/// The `_meta` key of a call's run id.
pub(crate) const RUN_KEY: &str = "dev.capstan/runId";
/// The `_meta` key of a call's id within its run.
pub(crate) const CALL_KEY: &str = "dev.capstan/callId";

/// The journal key a request's `_meta` names: (run id, call id), each
/// `None` when absent. INVALID_PARAMS naming the key if one is not a
/// non-empty string.
pub(crate) fn key(
    meta: &Map<String, Value>,
) -> Result<(Option<Arc<str>>, Option<String>), ErrorData> {
    let text = |key: &str| -> Result<Option<String>, ErrorData> {
        match meta.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(other) => Err(ErrorData::invalid_params(
                format!("_meta[\"{key}\"] must be a non-empty string (the call's journal key), not {other}"),
                None,
            )),
        }
    };
    let run = text(RUN_KEY)?.map(Arc::from);
    let call = text(CALL_KEY)?;
    if call.is_some() && run.is_none() {
        return Err(ErrorData::invalid_params(
            format!("_meta[\"{CALL_KEY}\"] was given without _meta[\"{RUN_KEY}\"]: a call id is journaled only within a run"),
            None,
        ));
    }
    Ok((run, call))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn the_key_is_read_from_capstans_meta_keys_and_bad_values_are_named() {
        let (run, call) = key(&meta(json!({RUN_KEY: "conv-1", CALL_KEY: "call_7"}))).unwrap();
        assert_eq!(
            (run.as_deref(), call.as_deref()),
            (Some("conv-1"), Some("call_7"))
        );
        assert_eq!(key(&meta(json!({}))).unwrap(), (None, None));
        let e = key(&meta(json!({RUN_KEY: 5}))).unwrap_err();
        assert!(e.message.contains(RUN_KEY), "{}", e.message);
        let e = key(&meta(json!({RUN_KEY: ""}))).unwrap_err();
        assert!(e.message.contains("non-empty"), "{}", e.message);
        let e = key(&meta(json!({CALL_KEY: "c"}))).unwrap_err();
        assert!(e.message.contains("without"), "{}", e.message);
    }

    #[test]
    fn the_keys_follow_the_mcp_meta_key_rules() {
        // Prefix: dot-separated labels (letter first, letter/digit last),
        // second label not `modelcontextprotocol`/`mcp`; name alphanumeric
        // at both ends.
        for k in [RUN_KEY, CALL_KEY] {
            let (prefix, name) = k.split_once('/').unwrap();
            let labels: Vec<&str> = prefix.split('.').collect();
            assert!(labels.iter().all(|l| {
                l.starts_with(|c: char| c.is_ascii_alphabetic())
                    && l.ends_with(|c: char| c.is_ascii_alphanumeric())
                    && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            }));
            assert!(!matches!(
                labels.get(1),
                Some(&"modelcontextprotocol") | Some(&"mcp")
            ));
            assert!(name.starts_with(|c: char| c.is_ascii_alphanumeric()));
            assert!(name.ends_with(|c: char| c.is_ascii_alphanumeric()));
        }
    }
}
