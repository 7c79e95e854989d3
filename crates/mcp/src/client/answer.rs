//! The host answering what a mounted server asks (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`): a 2026-07-28 server asks with an
//! `InputRequiredResult` to a `tools/call` (the mount answers and calls
//! again with the answers and the server's `requestState`, as it was), an
//! older one with requests of its own mid-call (answered in place).
//!
//! A call from an MCP client of capstan's own server (a gateway) passes the
//! requests on to that client instead (`forward::pass_input_on`); the host
//! answers for every other caller.

use std::sync::Arc;
use std::time::Duration;

// Sampling and roots are deprecated by 2026-07-28 (SEP-2577); servers of
// the older versions still ask them.
#[allow(deprecated)]
use rmcp::model::{CreateMessageResult, ListRootsResult};
use rmcp::model::{ElicitResult, InputRequests, InputResponses};
use serde_json::{json, Value};

use capstan_core::error::Error;
use capstan_core::input::METHODS;

/// How many rounds of requests one call may take before the mount gives
/// up on it (a server asking forever), as capstan's own server allows its
/// tools.
/// cbindgen:ignore
pub const MAX_ROUNDS: usize = 10;

/// How long the mount waits for one answer to a request the server made
/// mid-call (an older server's), which belongs to no call of the mount's
/// whose timeout would bound it. A 2026-07-28 server's requests are bounded
/// by their call.
pub(super) const ANSWER_WAIT: Duration = Duration::from_secs(3600);

/// What the host answers with: called on a blocking thread of the mounts'
/// runtime, once per request, with the local name of the tool whose call
/// the request is part of (None for an older server's requests, which say
/// no call), the method and its params. The answer is the method's result
/// (an `ElicitResult`, `CreateMessageResult` or `ListRootsResult`); an
/// error fails the call (or the server's request) with the text.
pub trait AnswerInput: Send + Sync {
    fn answer(&self, tool: Option<&str>, method: &str, params: &Value) -> Result<Value, String>;
}

impl<F> AnswerInput for F
where
    F: Fn(Option<&str>, &str, &Value) -> Result<Value, String> + Send + Sync,
{
    fn answer(&self, tool: Option<&str>, method: &str, params: &Value) -> Result<Value, String> {
        self(tool, method, params)
    }
}

/// The host's answerer and the methods it answers (declared to servers as
/// the client's capabilities).
#[derive(Clone)]
pub struct HostInput {
    methods: Vec<&'static str>,
    answerer: Arc<dyn AnswerInput>,
}

impl std::fmt::Debug for HostInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostInput")
            .field("methods", &self.methods)
            .finish_non_exhaustive()
    }
}

impl HostInput {
    /// `methods`: some of "elicitation/create", "sampling/createMessage",
    /// "roots/list" (at least one; else `InvalidArgument` naming it).
    pub fn new(methods: &[&str], answerer: Arc<dyn AnswerInput>) -> Result<HostInput, Error> {
        if methods.is_empty() {
            return Err(Error::InvalidArgument(
                "an input answerer needs at least one method to answer".into(),
            ));
        }
        let methods = methods
            .iter()
            .map(|m| {
                METHODS
                    .iter()
                    .find(|(known, _)| known == m)
                    .map(|(known, _)| *known)
                    .ok_or_else(|| {
                        Error::InvalidArgument(format!(
                            "{m:?} is not a method a server can ask a client (elicitation/create, \
                             sampling/createMessage, roots/list)"
                        ))
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(HostInput { methods, answerer })
    }

    pub(super) fn answers(&self, method: &str) -> bool {
        self.methods.contains(&method)
    }

    /// The client capabilities the answered methods stand for.
    pub(super) fn capabilities(&self) -> impl Iterator<Item = &'static str> + '_ {
        METHODS
            .iter()
            .filter(|(method, _)| self.methods.contains(method))
            .map(|(_, capability)| *capability)
    }

    /// One answer, from a blocking thread, checked to be the method's
    /// result. An accepted form elicitation gets the requested schema's
    /// defaults for the fields the host left out (SEP-1034).
    pub(super) async fn ask(
        &self,
        tool: Option<&str>,
        method: &'static str,
        params: Value,
    ) -> Result<Value, String> {
        if !self.answers(method) {
            return Err(format!(
                "it asked for {method}, which this mount's host does not answer"
            ));
        }
        let answerer = self.answerer.clone();
        let tool = tool.map(str::to_owned);
        let asked = params.clone();
        let answer =
            tokio::task::spawn_blocking(move || answerer.answer(tool.as_deref(), method, &asked))
                .await
                .map_err(|_| format!("the host's answer to {method} panicked"))??;
        checked(method, &params, answer)
    }

    /// Answers every request (of an `InputRequiredResult`, or a task's), one
    /// at a time (a user answers one question after another), by their keys;
    /// at most `capstan_core::input::MAX_REQUESTS` (32) in one round, as capstan's
    /// own tools may ask.
    pub(crate) async fn answer_all(
        &self,
        tool: &str,
        requests: &InputRequests,
    ) -> Result<InputResponses, String> {
        if requests.len() > capstan_core::input::MAX_REQUESTS {
            return Err(format!(
                "it asked {} requests at once, at most {} are answered in one round",
                requests.len(),
                capstan_core::input::MAX_REQUESTS
            ));
        }
        let mut answers = InputResponses::new();
        for (key, request) in requests {
            let request = serde_json::to_value(request).unwrap_or(Value::Null);
            let method = request["method"].as_str().unwrap_or("");
            let Some(method) = METHODS.iter().map(|(m, _)| *m).find(|m| *m == method) else {
                return Err(format!(
                    "its request {key:?} has an unknown method {method:?}"
                ));
            };
            let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
            let answer = self
                .ask(Some(tool), method, params)
                .await
                .map_err(|why| format!("request {key:?}: {why}"))?;
            answers.insert(key.clone(), answer);
        }
        Ok(answers)
    }
}

/// The host's answer read as the method's result type (an error names
/// what is wrong), with a form elicitation's defaults filled in.
#[allow(deprecated)]
fn checked(method: &str, params: &Value, mut answer: Value) -> Result<Value, String> {
    let fits = match method {
        "elicitation/create" => {
            fill_defaults(params, &mut answer);
            serde_json::from_value::<ElicitResult>(answer.clone()).map(drop)
        }
        "sampling/createMessage" => {
            serde_json::from_value::<CreateMessageResult>(answer.clone()).map(drop)
        }
        _ => serde_json::from_value::<ListRootsResult>(answer.clone()).map(drop),
    };
    let result_type = match method {
        "elicitation/create" => "an ElicitResult",
        "sampling/createMessage" => "a CreateMessageResult",
        _ => "a ListRootsResult",
    };
    match fits {
        Ok(()) if answer.is_object() => Ok(answer),
        Ok(()) => Err(format!(
            "the host's answer to {method} is not {result_type}: not an object"
        )),
        Err(e) => Err(format!(
            "the host's answer to {method} is not {result_type}: {e}"
        )),
    }
}

/// An accepted form elicitation: every field of the requested schema with
/// a `default` that the answer's `content` lacks gets that default.
fn fill_defaults(params: &Value, answer: &mut Value) {
    if answer["action"] != "accept" {
        return;
    }
    let Some(properties) = params["requestedSchema"]["properties"].as_object() else {
        return;
    };
    let Some(answer) = answer.as_object_mut() else {
        return;
    };
    let content = answer.entry("content").or_insert_with(|| json!({}));
    let Some(content) = content.as_object_mut() else {
        return;
    };
    for (name, field) in properties {
        if let Some(default) = field.get("default") {
            content
                .entry(name.clone())
                .or_insert_with(|| default.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_accepted_form_gets_the_defaults_of_the_fields_it_left_out() {
        let params = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "default": "John"},
            "age": {"type": "integer", "default": 30},
            "note": {"type": "string"}}}});
        let answer = checked(
            "elicitation/create",
            &params,
            json!({"action": "accept", "content": {"name": "Ada"}}),
        )
        .unwrap();
        assert_eq!(
            answer,
            json!({"action": "accept", "content": {"name": "Ada", "age": 30}})
        );
        let declined = checked("elicitation/create", &params, json!({"action": "decline"}));
        assert_eq!(declined.unwrap(), json!({"action": "decline"}));
    }

    #[test]
    fn an_answer_that_is_not_the_methods_result_is_refused_naming_it() {
        let e = checked("elicitation/create", &json!({}), json!({"action": "maybe"})).unwrap_err();
        assert!(e.contains("not an ElicitResult"), "{e}");
        let e = checked("roots/list", &json!({}), json!({"roots": "nope"})).unwrap_err();
        assert!(e.contains("not a ListRootsResult"), "{e}");
        let e = checked("sampling/createMessage", &json!({}), json!([1])).unwrap_err();
        assert!(e.contains("not a CreateMessageResult"), "{e}");
        assert!(checked("roots/list", &json!({}), json!({"roots": []})).is_ok());
    }

    #[test]
    fn more_than_32_requests_in_one_round_are_refused_before_the_host_is_asked() {
        let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = asked.clone();
        let f = move |_: Option<&str>, _: &str, _: &Value| {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(json!({"roots": []}))
        };
        let host = HostInput::new(&["roots/list"], Arc::new(f)).unwrap();
        let requests = |n: usize| -> InputRequests {
            (0..n)
                .map(|i| {
                    let request = json!({"method": "roots/list", "params": {}});
                    (format!("k{i}"), serde_json::from_value(request).unwrap())
                })
                .collect()
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let e = rt
            .block_on(host.answer_all("t", &requests(33)))
            .unwrap_err();
        assert!(e.contains("33 requests at once, at most 32"), "{e}");
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 0);
        let answers = rt.block_on(host.answer_all("t", &requests(32))).unwrap();
        assert_eq!(answers.len(), 32);
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 32);
    }

    #[test]
    fn an_answerer_needs_known_methods() {
        let f = Arc::new(|_: Option<&str>, _: &str, _: &Value| Ok(json!({})));
        assert!(HostInput::new(&[], f.clone()).is_err());
        let e = HostInput::new(&["tools/call"], f.clone()).unwrap_err();
        assert!(e.to_string().contains("\"tools/call\""), "{e}");
        let host = HostInput::new(&["roots/list", "elicitation/create"], f).unwrap();
        assert_eq!(
            host.capabilities().collect::<Vec<_>>(),
            ["elicitation", "roots"]
        );
    }
}
