//! Input a tool can ask its caller for while it runs (MCP 2026-07-28's
//! multi round-trip requests, SEP-2322): the tool ends its call with the
//! requests (an elicitation, a sampling request, a roots listing) and an
//! opaque state of its own; the caller answers them and calls the tool
//! again with the answers and that state, as many rounds as the tool needs.
//!
//! Only a caller that can answer may be asked: an MCP client calling a
//! served tool, for the methods its capabilities declare (a 2026-07-28
//! client answers in its next request, or with `tasks/update` for a task;
//! a 2025-11-25 session's client capstan asks itself). Every other caller
//! (a provider turn) gets `Unsupported` from `Call::require_input`, and the
//! call stays open for the tool to complete another way.

use serde_json::Value;

use crate::error::Error;

/// What a tool may ask for, and the client capability each needs.
pub const METHODS: [(&str, &str); 3] = [
    ("elicitation/create", "elicitation"),
    ("sampling/createMessage", "sampling"),
    ("roots/list", "roots"),
];

/// The most a tool's own state may take (it travels to the client and back
/// in every round, sealed).
pub(crate) const MAX_STATE_BYTES: usize = 64 * 1024;

/// The most requests one round may carry.
pub const MAX_REQUESTS: usize = 32;

/// What a call's caller gave besides the arguments, and what it can be asked.
#[derive(Clone, Debug, Default)]
pub struct CallInput {
    /// The answers to the previous round's requests, by key (an object), as
    /// the client sent them.
    pub responses: Option<Value>,
    /// The tool's own state from the previous round, checked intact.
    pub state: Option<String>,
    /// The methods of `METHODS` this caller can be asked.
    pub can_ask: Vec<&'static str>,
    /// The capabilities (of `METHODS`) the tool asked for and the caller
    /// did not declare (its `require_input` was refused for them): the MCP
    /// server answers a 2026-07-28 call that then failed with
    /// MissingRequiredClientCapability (-32021) naming them.
    pub missing: std::sync::Arc<std::sync::Mutex<Vec<&'static str>>>,
}

impl CallInput {
    /// The input as the tool reads it: a JSON object with `inputResponses`
    /// and `requestState` when the caller sent them, and `canAsk` (the
    /// methods it can be asked, possibly none).
    pub fn to_json(&self) -> Value {
        let mut out = serde_json::Map::new();
        if let Some(responses) = &self.responses {
            out.insert("inputResponses".into(), responses.clone());
        }
        if let Some(state) = &self.state {
            out.insert("requestState".into(), Value::String(state.clone()));
        }
        out.insert(
            "canAsk".into(),
            Value::Array(
                self.can_ask
                    .iter()
                    .map(|m| Value::String((*m).into()))
                    .collect(),
            ),
        );
        Value::Object(out)
    }
}

/// A call ended asking for input: the requests by key and the tool's state.
#[derive(Clone, Debug, PartialEq)]
pub struct InputRequired {
    /// `{key: {"method": ..., "params": {...}}}`, at least one unless `state` is set.
    pub requests: serde_json::Map<String, Value>,
    pub state: Option<String>,
}

impl InputRequired {
    /// Checks what a tool asks for against the rules and what `input`'s
    /// caller can answer. `InvalidArgument` for requests that break a rule
    /// (naming the key), `Unsupported` for a method the caller cannot be
    /// asked.
    pub fn check(
        tool: &str,
        requests: Value,
        state: Option<String>,
        input: Option<&CallInput>,
    ) -> Result<InputRequired, Error> {
        let Value::Object(requests) = requests else {
            return Err(Error::InvalidArgument(
                "input requests must be a JSON object of requests by key".into(),
            ));
        };
        if requests.is_empty() && state.is_none() {
            return Err(Error::InvalidArgument(
                "input requests: none, and no state either (at least one is needed)".into(),
            ));
        }
        if requests.len() > MAX_REQUESTS {
            return Err(Error::InvalidArgument(format!(
                "input requests: {} requests, at most {MAX_REQUESTS} in one round",
                requests.len()
            )));
        }
        if let Some(state) = &state {
            if state.len() > MAX_STATE_BYTES {
                return Err(Error::InvalidArgument(format!(
                    "input request state: {} bytes, at most {MAX_STATE_BYTES}",
                    state.len()
                )));
            }
        }
        let can_ask = input.map_or(&[][..], |i| &i.can_ask[..]);
        for (key, request) in &requests {
            if key.is_empty() {
                return Err(Error::InvalidArgument(
                    "input requests: an empty key".into(),
                ));
            }
            let method = request.get("method").and_then(Value::as_str);
            let Some((method, capability)) =
                METHODS.iter().find(|(m, _)| Some(*m) == method).copied()
            else {
                return Err(Error::InvalidArgument(format!(
                    "input request {key:?}: \"method\" must be one of elicitation/create, \
                     sampling/createMessage, roots/list (got {})",
                    request
                        .get("method")
                        .map_or("none".into(), Value::to_string)
                )));
            };
            if !matches!(request.get("params"), None | Some(Value::Object(_))) {
                return Err(Error::InvalidArgument(format!(
                    "input request {key:?}: \"params\" must be an object"
                )));
            }
            if let Some(extra) = request
                .as_object()
                .and_then(|o| o.keys().find(|k| *k != "method" && *k != "params"))
            {
                return Err(Error::InvalidArgument(format!(
                    "input request {key:?}: unknown member {extra:?} (a request has \
                     \"method\" and \"params\")"
                )));
            }
            if !can_ask.contains(&method) {
                if let Some(input) = input {
                    if let Ok(mut missing) = input.missing.lock() {
                        if !missing.contains(&capability) {
                            missing.push(capability);
                        }
                    }
                }
                return Err(Error::Unsupported(if input.is_none() {
                    format!(
                        "tool {tool:?} asked for input ({method}), but its caller cannot be \
                         asked: only an MCP client calling a served tool can answer"
                    )
                } else {
                    format!(
                        "tool {tool:?} asked for input ({method}), but this client did not \
                         declare the {capability:?} capability"
                    )
                }));
            }
        }
        if input.is_none() {
            return Err(Error::Unsupported(format!(
                "tool {tool:?} asked for input, but its caller cannot be asked: only an MCP \
                 client calling a served tool can answer"
            )));
        }
        Ok(InputRequired { requests, state })
    }

    /// What anyone but the MCP client reads of it (the result's content).
    pub fn describe(&self, tool: &str) -> String {
        let mut asked: Vec<String> = self
            .requests
            .iter()
            .map(|(key, r)| {
                let method = r.get("method").and_then(Value::as_str).unwrap_or("?");
                format!("{key} ({method})")
            })
            .collect();
        if asked.is_empty() {
            asked.push("another round".into());
        }
        format!("Tool \"{tool}\" needs input: {}.", asked.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn client(can_ask: &[&'static str]) -> CallInput {
        CallInput {
            can_ask: can_ask.to_vec(),
            ..CallInput::default()
        }
    }

    #[test]
    fn requests_are_checked_against_the_rules_and_what_the_caller_can_answer() {
        let all = client(&["elicitation/create", "sampling/createMessage", "roots/list"]);
        let ok = json!({"name": {"method": "elicitation/create", "params": {"message": "?"}},
                        "roots": {"method": "roots/list"}});
        let got = InputRequired::check("t", ok.clone(), None, Some(&all)).unwrap();
        assert_eq!(got.requests.len(), 2);
        assert_eq!(
            got.describe("t"),
            "Tool \"t\" needs input: name (elicitation/create), roots (roots/list)."
        );
        // A state alone is a round too.
        assert!(InputRequired::check("t", json!({}), Some("s".into()), Some(&all)).is_ok());

        let bad = |requests: Value, state: Option<String>, input: Option<&CallInput>| {
            match InputRequired::check("t", requests, state, input) {
                Err(e) => e.to_string(),
                Ok(r) => panic!("accepted {r:?}"),
            }
        };
        assert!(bad(json!([]), None, Some(&all)).contains("JSON object"));
        assert!(bad(json!({}), None, Some(&all)).contains("at least one"));
        assert!(bad(json!({"k": {"method": "ping"}}), None, Some(&all)).contains("\"ping\""));
        assert!(bad(json!({"k": {}}), None, Some(&all)).contains("got none"));
        assert!(bad(
            json!({"k": {"method": "roots/list", "params": 1}}),
            None,
            Some(&all)
        )
        .contains("\"params\" must be an object"));
        assert!(bad(
            json!({"k": {"method": "roots/list", "x": 1}}),
            None,
            Some(&all)
        )
        .contains("unknown member \"x\""));
        assert!(bad(json!({"": {"method": "roots/list"}}), None, Some(&all)).contains("empty key"));
        let long = "s".repeat(MAX_STATE_BYTES + 1);
        assert!(bad(json!({}), Some(long), Some(&all)).contains("at most 65536"));
        let many: serde_json::Map<String, Value> = (0..=MAX_REQUESTS)
            .map(|n| (n.to_string(), json!({"method": "roots/list"})))
            .collect();
        assert!(bad(Value::Object(many), None, Some(&all)).contains("at most 32"));

        // What the caller cannot answer is Unsupported, naming why.
        let sampling_only = client(&["sampling/createMessage"]);
        let e = InputRequired::check("t", ok.clone(), None, Some(&sampling_only)).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e}");
        assert!(e.to_string().contains("\"elicitation\" capability"), "{e}");
        let e = InputRequired::check("t", ok, None, None).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e}");
        let e = InputRequired::check("t", json!({}), Some("s".into()), None).unwrap_err();
        assert!(e.to_string().contains("cannot be asked"), "{e}");
    }

    #[test]
    fn the_input_a_tool_reads_has_only_what_the_caller_sent() {
        assert_eq!(client(&[]).to_json(), json!({"canAsk": []}));
        let input = CallInput {
            responses: Some(json!({"k": {"action": "accept"}})),
            state: Some("s1".into()),
            can_ask: vec!["roots/list"],
            ..Default::default()
        };
        assert_eq!(
            input.to_json(),
            json!({"inputResponses": {"k": {"action": "accept"}}, "requestState": "s1",
                   "canAsk": ["roots/list"]})
        );
    }
}
