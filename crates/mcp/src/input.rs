//! The MCP server's side of a tool asking for input (`capstan_core::input`;
//! MCP 2026-07-28 multi round-trip requests, SEP-2322): what a `tools/call`
//! brings back (the client's answers, the tool's state, checked intact) and
//! what the call's result becomes when the tool asked (an
//! `InputRequiredResult` with the tool's state sealed).
//!
//! The state travels through the client, which could change it: capstan
//! seals it with HMAC-SHA256 (rmcp's `RequestStateCodec`) under a random
//! key of the server's, bound to the tool's name, good for
//! `STATE_TTL`. A state that fails the check is refused with -32602 before
//! the tool runs. The key lives as long as the server: a client that
//! retries against a restarted server is refused the same way (and starts
//! over).

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, InputRequest, InputRequests, InputRequiredResult, RequestStateCodec,
    SealOptions,
};
use rmcp::service::{RequestContext, ServiceError};
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use capstan_core::error::Error;
use capstan_core::input::{CallInput, InputRequired};

/// How long a sealed state stays good: a round whose answer takes longer
/// (a user away from the elicitation) starts over.
pub(crate) const STATE_TTL: Duration = Duration::from_secs(3600);

/// A server's sealing key: 32 random bytes.
pub(crate) fn new_codec() -> Result<RequestStateCodec, Error> {
    let mut key = Vec::with_capacity(32);
    key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    RequestStateCodec::try_new(key).map_err(|e| Error::Internal(format!("requestState key: {e}")))
}

/// What the call's tool gets besides its arguments, for a client of the
/// modern era (`modern`); `None` for a legacy session, which cannot be
/// asked. The client's answers must each be an object (an `ElicitResult`,
/// `CreateMessageResult` or `ListRootsResult`) and its `requestState` one
/// this server sealed for this tool: else -32602 saying which.
pub(crate) fn call_input(
    codec: &RequestStateCodec,
    request: &mut CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    modern: bool,
) -> Result<Option<CallInput>, ErrorData> {
    if !modern {
        return Ok(None);
    }
    let responses = match request.input_responses.take() {
        None => None,
        Some(responses) => {
            check_responses(&responses)?;
            Some(Value::Object(responses.into_iter().collect()))
        }
    };
    let state =
        match request.request_state.take() {
            None => None,
            Some(sealed) => {
                // One answer for every way it can fail (rmcp's advice: the
                // details would help a forger).
                let opened = codec
                    .open_with(&sealed, request.name.as_bytes())
                    .map_err(|_| {
                        ErrorData::invalid_params(
                            format!(
                                "requestState failed its integrity check: it was changed, has \
                             expired, or is not this server's for tool {:?}; call again \
                             without it to start over",
                                request.name
                            ),
                            None,
                        )
                    })?;
                Some(String::from_utf8(opened).map_err(|_| {
                    ErrorData::invalid_params("requestState does not hold text", None)
                })?)
            }
        };
    Ok(Some(CallInput {
        responses,
        state,
        can_ask: can_ask(context),
        ..Default::default()
    }))
}

/// A client's answers must each be an object (an `ElicitResult`,
/// `CreateMessageResult` or `ListRootsResult`): else -32602 naming the key.
pub(crate) fn check_responses(responses: &rmcp::model::InputResponses) -> Result<(), ErrorData> {
    match responses.iter().find(|(_, v)| !v.is_object()) {
        None => Ok(()),
        Some((key, _)) => Err(ErrorData::invalid_params(
            format!(
                "inputResponses[{key:?}] is not an object (an ElicitResult, \
                 CreateMessageResult or ListRootsResult)"
            ),
            None,
        )),
    }
}

/// The answer for a call whose tool asked for input: its requests, and its
/// state sealed for this tool. A request rmcp cannot read as an MCP
/// request (its params wrong for its method) is a tool error naming it.
pub(crate) fn input_required(
    codec: &RequestStateCodec,
    tool: &str,
    asked: &InputRequired,
) -> Result<InputRequiredResult, String> {
    let requests = if asked.requests.is_empty() {
        None
    } else {
        Some(input_requests(tool, asked)?)
    };
    let state = asked.state.as_ref().map(|state| {
        codec.seal_with(
            state.as_bytes(),
            &SealOptions::new()
                .associated_data(tool.as_bytes())
                .ttl(STATE_TTL),
        )
    });
    Ok(InputRequiredResult::new(requests, state))
}

/// What a tool asked, as MCP's requests by key. A request rmcp cannot read
/// as an MCP request (its params wrong for its method) is named in the error.
pub(crate) fn input_requests(tool: &str, asked: &InputRequired) -> Result<InputRequests, String> {
    let mut requests = InputRequests::new();
    for (key, request) in &asked.requests {
        let read = read_request(request).map_err(|e| {
            format!("Tool \"{tool}\" asked for input that cannot be sent: request {key:?}: {e}")
        })?;
        requests.insert(key.clone(), read);
    }
    Ok(requests)
}

/// How many rounds in a row capstan drives itself for one call (asking a
/// legacy client, or running a task's rounds), as the SDKs' own drivers
/// allow a modern client.
pub(crate) const MAX_DRIVEN_ROUNDS: usize = 10;

/// What a tool can ask a legacy (2025-11-25) session's client: capstan asks
/// it itself, with server-initiated requests, for the methods the client
/// declared at `initialize`.
pub(crate) fn legacy_input(context: &RequestContext<RoleServer>) -> CallInput {
    CallInput {
        responses: None,
        state: None,
        can_ask: can_ask(context),
        ..Default::default()
    }
}

/// The methods of `capstan_core::input::METHODS` the request's client declared
/// the capability of.
fn can_ask(context: &RequestContext<RoleServer>) -> Vec<&'static str> {
    let capabilities = context.client_capabilities().unwrap_or_default();
    capstan_core::input::METHODS
        .iter()
        .filter(|(method, _)| match *method {
            "elicitation/create" => capabilities.elicitation.is_some(),
            "sampling/createMessage" => capabilities.sampling.is_some(),
            _ => capabilities.roots.is_some(),
        })
        .map(|(method, _)| *method)
        .collect()
}

/// Why a legacy client's answers did not come.
pub(crate) enum Unanswered {
    /// The client went away (closed its connection or session, or
    /// cancelled the call): the call ends without an answer.
    Gone,
    /// The server is stopping.
    Stopping,
    /// The call's timeout passed while the client had not answered `method`.
    TimedOut { method: String },
}

/// What ends the wait for a legacy client's answers: the call's deadline
/// (`until`), the client going away (`gone`: the request's token, cancelled
/// when its connection closes), the server stopping.
pub(crate) struct AskBounds<'a> {
    pub(crate) until: Option<std::time::Instant>,
    pub(crate) gone: &'a tokio_util::sync::CancellationToken,
    pub(crate) stopping: &'a tokio_util::sync::CancellationToken,
}

/// Asks a legacy session's client what the tool asked, one server-initiated
/// request after another, and gives the next round's input: each answer by
/// its key (an `{"error": ...}` object for a request the client refused or
/// could not be sent), the tool's state as it gave it (it never left the
/// server), and what the client can be asked. A client that does not
/// answer holds the call no longer than `bounds` allow: the request is
/// cancelled (`notifications/cancelled`) and the call ends.
pub(crate) async fn ask_legacy_client(
    peer: &rmcp::Peer<RoleServer>,
    asked: &InputRequired,
    can_ask: &[&'static str],
    bounds: &AskBounds<'_>,
) -> Result<CallInput, Unanswered> {
    let mut responses = serde_json::Map::new();
    for (key, request) in &asked.requests {
        let answer = match read_request(request) {
            Err(e) => error_answer(format!("capstan could not send request {key:?}: {e}")),
            Ok(read) => {
                let method = request.get("method").and_then(Value::as_str).unwrap_or("?");
                let request = match read {
                    InputRequest::CreateMessage(r) => r.into(),
                    InputRequest::Elicitation(r) => r.into(),
                    InputRequest::ListRoots(r) => r.into(),
                    _ => rmcp::model::ServerRequest::PingRequest(Default::default()),
                };
                ask_one(peer, request, method, bounds).await?
            }
        };
        responses.insert(key.clone(), answer);
    }
    Ok(CallInput {
        responses: Some(Value::Object(responses)),
        state: asked.state.clone(),
        can_ask: can_ask.to_vec(),
        ..Default::default()
    })
}

/// One request to a legacy client, and its answer (or an error object),
/// within `bounds`.
async fn ask_one(
    peer: &rmcp::Peer<RoleServer>,
    request: rmcp::model::ServerRequest,
    method: &str,
    bounds: &AskBounds<'_>,
) -> Result<Value, Unanswered> {
    let mut options = rmcp::service::PeerRequestOptions::no_options();
    if let Some(until) = bounds.until {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(Unanswered::TimedOut {
                method: method.to_owned(),
            });
        }
        // rmcp cancels the request when it times out (and forgets it).
        options.timeout = Some(left);
    }
    let handle = match peer.send_request_with_option(request, options).await {
        Ok(handle) => handle,
        Err(ServiceError::TransportClosed) => return Err(Unanswered::Gone),
        Err(e) => return Ok(error_answer(format!("the client did not answer: {e}"))),
    };
    let id = handle.id.clone();
    let ended = tokio::select! {
        answer = handle.await_response() => match answer {
            Ok(result) => {
                return Ok(serde_json::to_value(result)
                    .unwrap_or_else(|e| error_answer(format!("unreadable answer: {e}"))))
            }
            Err(ServiceError::Timeout { .. }) => {
                return Err(Unanswered::TimedOut { method: method.to_owned() })
            }
            Err(ServiceError::TransportClosed) => return Err(Unanswered::Gone),
            Err(e) => return Ok(error_answer(format!("the client did not answer: {e}"))),
        },
        _ = bounds.gone.cancelled() => Unanswered::Gone,
        _ = bounds.stopping.cancelled() => Unanswered::Stopping,
    };
    // The request is withdrawn: rmcp forgets its pending answer once this
    // notification is sent (or fails to be).
    let cancelled = rmcp::model::CancelledNotification::new(
        rmcp::model::CancelledNotificationParam::new(Some(id), Some("the call ended".into())),
    );
    let _ = peer.send_notification(cancelled.into()).await;
    Err(ended)
}

/// A request a tool asked for, as rmcp's type (`params` may be left out:
/// `roots/list` has none worth giving).
fn read_request(request: &Value) -> Result<InputRequest, serde_json::Error> {
    let mut request = request.clone();
    if let Value::Object(r) = &mut request {
        r.entry("params")
            .or_insert_with(|| Value::Object(Default::default()));
    }
    serde_json::from_value(request)
}

fn error_answer(message: String) -> Value {
    serde_json::json!({"error": {"code": -32603, "message": message}})
}
