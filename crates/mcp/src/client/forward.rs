//! Forwarding a mounted tool's call to its server and rendering the answer.

use super::*;

/// Mounted-tool handler: forwards the call to the server.
pub(super) struct RemoteTool {
    pub(super) session: Weak<Session>,
    pub(super) remote: String,
}

impl Handler for RemoteTool {
    fn invoke(&self, call: Call) {
        let Some(session) = self.session.upgrade() else {
            let _ = call.fail("the MCP server of this tool was unmounted");
            return;
        };
        let peer = {
            let state = session.state();
            match (&state.peer, state.connected) {
                (Some(peer), true) => Ok((peer.clone(), state.generation)),
                _ => Err(not_connected_text(&session, &state)),
            }
        };
        let (peer, generation) = match peer {
            Ok(sent_on) => sent_on,
            Err(text) => {
                let _ = call.fail(text);
                return;
            }
        };
        match runtime() {
            Ok(rt) => {
                let remote = self.remote.clone();
                rt.spawn(forward(session, peer, generation, remote, call));
            }
            Err(e) => {
                let _ = call.fail(e.to_string());
            }
        }
    }
}

pub(super) fn not_connected_text(session: &Session, state: &State) -> String {
    let why = if state.last_error.is_empty() {
        String::new()
    } else {
        format!(" ({})", state.last_error)
    };
    let next = if session.is_shut_down() {
        "it was unmounted".to_string()
    } else if state.gave_up || session.options.max_reconnects == 0 {
        "no reconnect will be tried".to_string()
    } else {
        "reconnecting".to_string()
    };
    format!("{} is not connected{why}: {next}", session.describe())
}

/// Resolves when the call should stop: the executor timed it out or
/// cancelled it, or the mount is going away.
pub(super) async fn stop_wanted(call: &Call, shutdown: &mut watch::Receiver<bool>) -> &'static str {
    loop {
        if call.is_cancelled() {
            return "cancelled by the client (local timeout or cancellation)";
        }
        if *shutdown.borrow() {
            return "the client unmounted the server";
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(10)) => {}
            _ = shutdown.changed() => {}
        }
    }
}

/// Completes `call` with a server's `CallToolResult` (a plain answer, or
/// the result of its task).
pub(super) fn finish(session: &Session, call: &Call, result: CallToolResult) {
    // Bounded again here (over stdio and server-sent events it was
    // before rmcp read it; a plain JSON body over HTTP is read by
    // rmcp itself): what the call keeps is bounded either way.
    let raw = serde_json::to_string(&result).unwrap_or_default();
    drop(result);
    let raw = crate::bounds::bound_tool_result(&raw, session.result_bytes()).unwrap_or(raw);
    let value: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
    drop(raw);
    let text = render_result(&value);
    let is_error = value.get("isError").and_then(Value::as_bool) == Some(true);
    let problem = crate::meta::structured_problem(&session.registry, call, &value);
    let _ = match (capstan_core::parts::from_call_tool_result(&value), problem) {
        _ if is_error => call.fail(text),
        (_, Some(why)) => call.fail(format!("{}: {why}", session.describe())),
        // Images, audio and resources stay parts (#30).
        (Some(parts), None) => call.complete_parts(parts),
        (None, None) => call.complete_text(text),
    };
}

pub(super) async fn forward(
    session: Arc<Session>,
    peer: Peer<RoleClient>,
    generation: u64,
    remote: String,
    call: Call,
) {
    let arguments = match call.arguments() {
        Value::Object(map) => Some(map.clone()),
        _ => None,
    };
    let mut params: CallToolRequestParams =
        match serde_json::from_value(json!({"name": remote, "arguments": arguments})) {
            Ok(p) => p,
            Err(e) => {
                let _ = call.fail(format!("could not build the MCP request: {e}"));
                return;
            }
        };
    // A caller that can be asked for input (an MCP client of capstan's own
    // server) lends the server what it can answer, and its answers; for
    // any other caller the host answers, if it does (`answer`).
    let asking = ask_through(&peer, &call);
    let meta = asking.as_ref().map(|input| lend_input(input, &mut params));
    let host = match asking {
        None => session.options.input.as_ref(),
        Some(_) => None,
    };
    let mut shutdown = session.shutdown.subscribe();
    let mut rounds = 0;
    let answer = loop {
        // Dropping `call_tool` before its answer sends notifications/cancelled.
        let answer = tokio::select! {
            answer = crate::progress::call_tool(&peer, params.clone(), meta.clone(), &session.progress, &call) => answer,
            why = stop_wanted(&call, &mut shutdown) => {
                let _ = call.fail(format!("the call was cancelled: {why}"));
                return;
            }
        };
        let (Some(host), Ok(CallToolResponse::InputRequired(asked))) = (host, &answer) else {
            break answer;
        };
        // The host answers, and the call goes again (a new request) with
        // the answers and the server's state exactly as it came.
        rounds += 1;
        if rounds > super::answer::MAX_ROUNDS {
            let _ = call.fail(format!(
                "{} asked for input more than {} times in one call of tool {remote:?}; \
                 capstan gave up on it",
                session.describe(),
                super::answer::MAX_ROUNDS
            ));
            return;
        }
        let none = Default::default();
        let requests = asked.input_requests.as_ref().unwrap_or(&none);
        let answers = tokio::select! {
            answers = host.answer_all(call.tool(), requests) => answers,
            why = stop_wanted(&call, &mut shutdown) => {
                let _ = call.fail(format!("the call was cancelled: {why}"));
                return;
            }
        };
        match answers {
            Ok(answers) => {
                params.input_responses = Some(answers);
                params.request_state = asked.request_state.clone();
            }
            Err(why) => {
                let _ = call.fail(format!(
                    "{} asked for input to run tool {remote:?}, and the host could not \
                     answer: {why}",
                    session.describe()
                ));
                return;
            }
        }
    };
    match answer {
        Ok(CallToolResponse::Complete(result)) => finish(&session, &call, result),
        Ok(CallToolResponse::Task(created)) => {
            let stop = stop_wanted(&call, &mut shutdown);
            let answering = host.map(|host| super::remote_tasks::Answering {
                host,
                tool: call.tool(),
            });
            match super::remote_tasks::drive(&peer, created, stop, answering).await {
                Ok(result) => finish(&session, &call, result),
                Err(why) => {
                    let _ = call.fail(format!("{}: {why}", session.describe()));
                }
            }
        }
        Ok(CallToolResponse::InputRequired(asked)) if asking.is_some() => {
            pass_input_on(&session, &call, asked);
        }
        Ok(CallToolResponse::InputRequired(_)) => {
            let _ = call.fail(format!(
                "{} asks for input to run tool {remote:?}, and this call's caller cannot be \
                 asked (an MCP client calling it through capstan's server can answer, and \
                 the host when the mount has an input answerer)",
                session.describe()
            ));
        }
        Ok(_) => {
            let _ = call.fail(format!(
                "{} gave no usable answer to this call: an unknown kind of result",
                session.describe()
            ));
        }
        Err(e) => {
            let text = match e {
                rmcp::ServiceError::TransportClosed => {
                    let state = session.state();
                    format!(
                        "{} closed the connection during the call: {}",
                        session.describe(),
                        not_connected_text(&session, &state)
                    )
                }
                rmcp::ServiceError::TransportSend(e) => {
                    // rmcp's own text starts with the transport's Rust type
                    // name: the model and the host get the error itself.
                    let inner = e
                        .error
                        .to_string()
                        .replace("as ServerJsonRpcMessage", "as a JSON-RPC message");
                    if unreachable(&*e.error) {
                        let why = format!("{} could not be reached: {inner}", session.describe());
                        session.connection_broke(generation, why.clone());
                        why
                    } else {
                        // One bad answer (an HTTP error status, a body that is
                        // not a JSON-RPC answer): this call fails, the mount stays.
                        format!(
                            "{} gave no usable answer to this call: {inner}",
                            session.describe()
                        )
                    }
                }
                rmcp::ServiceError::McpError(error)
                    if error.data.as_ref().and_then(Value::as_str)
                        == Some(crate::wire::UNREADABLE) =>
                {
                    format!(
                        "{} gave no usable answer to this call: {}",
                        session.describe(),
                        error.message
                    )
                }
                rmcp::ServiceError::McpError(error)
                    if error.code == rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY =>
                {
                    let needs = error
                        .data
                        .as_ref()
                        .and_then(|d| d.get("requiredCapabilities"))
                        .and_then(Value::as_object)
                        .map(|c| c.keys().cloned().collect::<Vec<_>>().join(", "))
                        .unwrap_or_default();
                    format!(
                        "{} refused the call: it needs the client capabilities [{needs}], which \
                         this call's caller cannot give (MissingRequiredClientCapability)",
                        session.describe()
                    )
                }
                rmcp::ServiceError::UnexpectedResponse => format!(
                    "{} gave no usable answer to this call: its result is not a tool result",
                    session.describe()
                ),
                other => format!("{} failed the call: {other}", session.describe()),
            };
            let _ = call.fail(text);
        }
    }
}

/// The input of a call whose caller can be asked, when its server is of
/// the 2026-07-28 era (it asks with an `InputRequiredResult`; an older one
/// would ask the mount itself, mid-call, which capstan declines).
fn ask_through(
    peer: &Peer<RoleClient>,
    call: &Call,
) -> Option<Arc<capstan_core::input::CallInput>> {
    let input = call.input().filter(|i| !i.can_ask.is_empty())?;
    let modern = peer
        .peer_info()
        .is_some_and(|info| !info.protocol_version.has_initialize());
    modern.then_some(input)
}

/// Puts the caller's answers and state (the server's own, passed back) on
/// the request, and returns its `_meta` declaring what the caller can be
/// asked besides the mount's own capabilities.
fn lend_input(
    input: &capstan_core::input::CallInput,
    params: &mut CallToolRequestParams,
) -> rmcp::model::RequestMetaObject {
    if let Some(Value::Object(answers)) = &input.responses {
        params.input_responses = Some(answers.clone().into_iter().collect());
    }
    params.request_state = input.state.clone();
    let mut capabilities = json!({
        "extensions": {rmcp::model::TASKS_EXTENSION_ID: {}},
    });
    for (method, capability) in capstan_core::input::METHODS {
        if input.can_ask.contains(&method) {
            capabilities[capability] = json!({});
        }
    }
    let mut meta = rmcp::model::RequestMetaObject::default();
    if let Ok(capabilities) = serde_json::from_value(capabilities) {
        meta.set_client_capabilities(capabilities);
    }
    meta
}

/// Ends the call asking its caller what the server asked, with the
/// server's state as the call's own: the caller's answers go back to the
/// server on the next round.
fn pass_input_on(session: &Session, call: &Call, asked: rmcp::model::InputRequiredResult) {
    let requests = match &asked.input_requests {
        Some(requests) => serde_json::to_value(requests).unwrap_or_else(|_| json!({})),
        None => json!({}),
    };
    if let Err(e) = call.require_input(requests, asked.request_state.clone()) {
        let _ = call.fail(format!(
            "{} asked for input that cannot be passed on: {e}",
            session.describe()
        ));
    }
}

/// Whether a transport error says the server cannot be reached at all, as
/// opposed to one bad answer over streamable HTTP (an HTTP error status, a
/// body that is not a JSON-RPC answer, an unexpected content type, a body
/// over the size limit). Told by the error's type, not its text; any other
/// error (stdio's, or one rmcp adds later) counts as unreachable, so the
/// connection is ended and the reconnect policy applies.
pub(super) fn unreachable(error: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    use rmcp::transport::streamable_http_client::StreamableHttpError as E;
    match error.downcast_ref::<E<reqwest::Error>>() {
        Some(
            E::HttpStatus(_)
            | E::UnexpectedServerResponse(_)
            | E::ResponseBodyTooLarge { .. }
            | E::UnexpectedContentType(_)
            | E::UnexpectedEndOfStream
            | E::Deserialize(_)
            | E::Sse(_),
        ) => false,
        // reqwest's own error for a 4xx status other than 404 (which is
        // rmcp's SessionExpired): one refused request.
        Some(E::Client(e)) => !e.is_status(),
        _ => true,
    }
}

/// The text a model sees for a CallToolResult: text blocks as they are,
/// other blocks as compact JSON, one per line; the structured content when
/// there is no content at all.
pub(super) fn render_result(value: &Value) -> String {
    let blocks = match value.get("content").and_then(Value::as_array) {
        Some(blocks) => blocks.as_slice(),
        None => &[],
    };
    if blocks.is_empty() {
        return match value.get("structuredContent") {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        };
    }
    let mut text = String::new();
    for (n, b) in blocks.iter().enumerate() {
        if n > 0 {
            text.push('\n');
        }
        match (b.get("type"), b.get("text")) {
            (Some(Value::String(t)), Some(Value::String(block))) if t == "text" => {
                text.push_str(block)
            }
            _ => text.push_str(&b.to_string()),
        }
    }
    text
}
