//! The mount's side of the streamable-HTTP wire: answers that come as
//! server-sent events get the same check as stdio lines (`super`).

use std::sync::Arc;

use rmcp::model::ClientJsonRpcMessage;
use rmcp::model::{JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse as PostResponse,
    StreamableHttpResponseLimits,
};
use serde_json::Value;

use super::{read_line, unreadable_answer, Bad, Frame};

/// rmcp's streamable-HTTP client (reqwest) with the same rule for answers
/// that come as server-sent events: rmcp skips an event whose data it
/// cannot read, so the call waited until the stream ended and then said
/// the server "closed the connection". Here such an event's data becomes
/// the error answer to its call, as on stdio.
#[derive(Clone)]
pub struct CheckedHttp(reqwest::Client, u64, Arc<ListedTools>);

/// The names of the tools in the server's `tools/list` answers as they came,
/// each with what is wrong with its `x-mcp-header` annotations, if anything.
/// rmcp's HTTP transport drops a tool whose annotations are invalid (the
/// MCP spec: a client must not call it) without a word; the mount tells
/// the listed names from the ones rmcp passed on, and lists the dropped
/// ones among its problems, with why.
#[derive(Default)]
pub struct ListedTools(std::sync::Mutex<Vec<(String, Option<String>)>>);

impl ListedTools {
    /// What was noted since the last take.
    pub fn take(&self) -> Vec<(String, Option<String>)> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn note(&self, message: &ServerJsonRpcMessage) {
        let JsonRpcMessage::Response(response) = message else {
            return;
        };
        let rmcp::model::ServerResult::ListToolsResult(list) = &response.result else {
            return;
        };
        let mut noted = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for tool in &list.tools {
            noted.push((tool.name.to_string(), header_problem(&tool.input_schema)));
        }
    }
}

/// What is wrong with the `x-mcp-header` annotations of an input schema
/// (MCP 2026-07-28, custom headers): one may sit only on a property reached
/// from the root through `properties` alone, of a primitive type, naming a
/// header (an HTTP token) no other annotation names (letter case aside).
pub(crate) fn header_problem(schema: &serde_json::Map<String, Value>) -> Option<String> {
    if schema.contains_key("x-mcp-header") {
        return Some("x-mcp-header annotates the schema root, not a property".into());
    }
    let mut seen: Vec<String> = Vec::new();
    let mut pending: Vec<(String, &serde_json::Map<String, Value>)> = vec![(String::new(), schema)];
    while let Some((path, object)) = pending.pop() {
        let Some(Value::Object(properties)) = object.get("properties") else {
            continue;
        };
        for (name, property) in properties {
            let Value::Object(property) = property else {
                continue;
            };
            let at = format!("{path}/{name}");
            pending.push((at.clone(), property));
            let Some(header) = property.get("x-mcp-header") else {
                continue;
            };
            let Some(header) = header.as_str() else {
                return Some(format!("property {at}: x-mcp-header is not a string"));
            };
            let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
            if header.is_empty() {
                return Some(format!("property {at}: x-mcp-header is empty"));
            }
            if !header.chars().all(token) {
                return Some(format!(
                    "property {at}: x-mcp-header {header:?} is not an HTTP header name"
                ));
            }
            if seen.iter().any(|s| s.eq_ignore_ascii_case(header)) {
                return Some(format!(
                    "property {at}: x-mcp-header {header:?} names a header another property names"
                ));
            }
            seen.push(header.to_owned());
            let primitive = matches!(
                property.get("type").and_then(Value::as_str),
                Some("string" | "number" | "integer" | "boolean")
            );
            if !primitive {
                return Some(format!(
                    "property {at}: x-mcp-header is on a property that is not a string, number, \
                     integer or boolean"
                ));
            }
        }
    }
    None
}

impl CheckedHttp {
    /// The client rmcp's `from_config` builds: no idle connection pool,
    /// only same-origin 307/308 redirects followed (at most 10).
    /// `result_bytes`: the registry's `max_result_bytes` (see `Framer`).
    /// `listed`: where the names of the tools the server lists are noted.
    pub fn new(result_bytes: u64, listed: Arc<ListedTools>) -> Result<CheckedHttp, String> {
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(
                attempt.status(),
                reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
            );
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if !keeps_body || !same_origin {
                attempt.stop()
            } else if attempt.previous().len() > 10 {
                attempt.error("more than 10 redirects")
            } else {
                attempt.follow()
            }
        });
        reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(redirects)
            .build()
            .map(|client| CheckedHttp(client, result_bytes, listed))
            .map_err(|e| format!("the HTTP client could not be made: {e}"))
    }
}

/// What rmcp calls a `BoxStream` of events.
type SseStream = std::pin::Pin<
    Box<dyn futures_core::Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Send>,
>;

/// An event stream whose unreadable message events are replaced (see
/// `CheckedHttp`), and that answers its request itself when it ends without
/// the server's answer and cannot be resumed (`owed`).
struct CheckedEvents {
    inner: SseStream,
    result_bytes: u64,
    /// The id of the request whose answer this stream owes, for a request
    /// sent without a session (2026-07-28): nothing else would ever answer
    /// it once the stream ends (a legacy session's end closes the whole
    /// transport, which fails its calls).
    owed: Option<Value>,
    /// The server gave an event id: rmcp resumes the stream (GET with
    /// `Last-Event-ID`) when it breaks, so its end is not the answer's.
    resumable: bool,
    ended: bool,
    listed: Arc<ListedTools>,
}

/// An answer's id, read without keeping the rest.
#[derive(serde::Deserialize)]
struct AnswerId {
    id: Option<Value>,
    method: Option<serde::de::IgnoredAny>,
}

impl CheckedEvents {
    /// Notes the owed answer as given when `event` is it.
    fn note(&mut self, event: &sse_stream::Sse) {
        if event.id.as_deref().is_some_and(|id| !id.is_empty()) {
            self.resumable = true;
        }
        let Some(owed) = &self.owed else { return };
        let answered = event
            .data
            .as_deref()
            .and_then(|data| serde_json::from_str::<AnswerId>(data).ok())
            .is_some_and(|a| a.method.is_none() && a.id.as_ref() == Some(owed));
        if answered {
            self.owed = None;
        }
    }

    /// The answer to the owed request when the stream ended without it.
    fn unanswered(&mut self) -> Option<sse_stream::Sse> {
        if self.resumable {
            return None;
        }
        let id = self.owed.take()?;
        self.ended = true;
        let answer = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": -32603,
                "message": "the server closed the connection during the call, before answering",
            },
        });
        Some(sse_stream::Sse {
            data: Some(answer.to_string()),
            ..sse_stream::Sse::default()
        })
    }
}

impl futures_core::Stream for CheckedEvents {
    type Item = Result<sse_stream::Sse, sse_stream::Error>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        if self.ended {
            return Poll::Ready(None);
        }
        let result_bytes = self.result_bytes;
        match self.inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(event))) => {
                let event = check_event(event, result_bytes, &self.listed);
                self.note(&event);
                Poll::Ready(Some(Ok(event)))
            }
            Poll::Ready(Some(Err(e))) => match self.unanswered() {
                Some(answer) => Poll::Ready(Some(Ok(answer))),
                None => Poll::Ready(Some(Err(e))),
            },
            Poll::Ready(None) => Poll::Ready(self.unanswered().map(Ok)),
            Poll::Pending => Poll::Pending,
        }
    }
}

fn check_event(
    mut event: sse_stream::Sse,
    result_bytes: u64,
    listed: &ListedTools,
) -> sse_stream::Sse {
    let is_message = matches!(event.event.as_deref(), None | Some("") | Some("message"));
    let Some(data) = event.data.as_deref().filter(|_| is_message) else {
        return event;
    };
    if let Some(cut) = crate::bounds::bound_message(data, result_bytes) {
        event.data = Some(cut);
        return event;
    }
    if data.trim().is_empty() {
        return event;
    }
    if let Ok(message) = serde_json::from_str::<ServerJsonRpcMessage>(data) {
        listed.note(&message);
        return event;
    }
    if let Some(Frame::Bad(Bad {
        id: Some(id),
        request: false,
        why,
    })) = read_line(data.as_bytes(), result_bytes)
    {
        if let Some(answer) = unreadable_answer(&id, &why) {
            event.data = serde_json::to_string(&answer).ok();
        }
    }
    event
}

fn checked_events(
    stream: SseStream,
    result_bytes: u64,
    owed: Option<Value>,
    listed: Arc<ListedTools>,
) -> SseStream {
    Box::pin(CheckedEvents {
        inner: stream,
        result_bytes,
        owed,
        resumable: false,
        ended: false,
        listed,
    })
}

/// The id of `message` when it is a request sent without a session.
fn owed_answer(message: &ClientJsonRpcMessage, session_id: &Option<Arc<str>>) -> Option<Value> {
    match (message, session_id) {
        (ClientJsonRpcMessage::Request(request), None) => serde_json::to_value(&request.id).ok(),
        _ => None,
    }
}

fn checked_post(
    answer: Result<PostResponse, HttpError>,
    http: &CheckedHttp,
    owed: Option<Value>,
) -> Result<PostResponse, HttpError> {
    match answer {
        Ok(PostResponse::Sse(stream, session)) => Ok(PostResponse::Sse(
            checked_events(stream, http.1, owed, http.2.clone()),
            session,
        )),
        Ok(PostResponse::Json(message, session))
            if !matches!(message, JsonRpcMessage::Error(_)) =>
        {
            http.2.note(&message);
            Ok(PostResponse::Json(message, session))
        }
        // A stateless request the server could not answer (it stopped
        // mid-call, say) gets an error without id (rmcp 3.11: "no response
        // message received from handler"): it is this request's answer,
        // which nothing would correlate otherwise.
        Ok(PostResponse::Json(JsonRpcMessage::Error(mut error), session)) if error.id.is_none() => {
            if let Some(id) = owed.and_then(|id| serde_json::from_value(id).ok()) {
                error.id = Some(id);
                error.error.message = format!(
                    "the server closed the connection during the call, without an answer: {}",
                    error.error.message
                )
                .into();
            }
            Ok(PostResponse::Json(JsonRpcMessage::Error(error), session))
        }
        other => other,
    }
}

type HttpError = StreamableHttpError<reqwest::Error>;
type Headers = std::collections::HashMap<http::HeaderName, http::HeaderValue>;

impl StreamableHttpClient for CheckedHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<PostResponse, HttpError> {
        let owed = owed_answer(&message, &session_id);
        checked_post(
            self.0
                .post_message(uri, message, session_id, auth_header, custom_headers)
                .await,
            self,
            owed,
        )
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
        let owed = owed_answer(&message, &session_id);
        checked_post(
            self.0
                .post_message_with_max_sse_event_size(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                )
                .await,
            self,
            owed,
        )
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
        let owed = owed_answer(&message, &session_id);
        checked_post(
            self.0
                .post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await,
            self,
            owed,
        )
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), HttpError> {
        self.0
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
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
            .map(|stream| checked_events(stream, self.1, None, self.2.clone()))
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
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map(|stream| checked_events(stream, self.1, None, self.2.clone()))
    }
}

#[cfg(test)]
mod stream_end_tests {
    use super::*;
    use serde_json::json;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    struct Listed(std::vec::IntoIter<sse_stream::Sse>);

    impl futures_core::Stream for Listed {
        type Item = Result<sse_stream::Sse, sse_stream::Error>;
        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            Poll::Ready(self.0.next().map(Ok))
        }
    }

    fn message(data: &str, id: Option<&str>) -> sse_stream::Sse {
        sse_stream::Sse {
            data: Some(data.to_owned()),
            id: id.map(str::to_owned),
            ..sse_stream::Sse::default()
        }
    }

    /// What rmcp reads from a response stream of `events` owing `owed`'s answer.
    fn read(events: Vec<sse_stream::Sse>, owed: Option<Value>) -> Vec<Value> {
        let mut stream = checked_events(
            Box::pin(Listed(events.into_iter())),
            1 << 20,
            owed,
            Arc::default(),
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let mut out = Vec::new();
            while let Some(event) = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
                let data = event.expect("event").data.unwrap_or_default();
                out.push(serde_json::from_str(&data).unwrap_or(Value::Null));
            }
            out
        })
    }

    const PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;

    #[test]
    fn a_stateless_stream_that_ends_without_the_answer_answers_with_an_error() {
        let got = read(vec![message(PROGRESS, None)], Some(json!(7)));
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[1]["id"], 7);
        assert_eq!(got[1]["error"]["code"], -32603);
        let text = got[1]["error"]["message"].as_str().unwrap_or("");
        assert!(
            text.contains("closed the connection during the call"),
            "{text}"
        );
    }

    #[test]
    fn a_stream_that_answered_or_can_be_resumed_or_owes_nothing_adds_nothing() {
        let answer = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
        let other = r#"{"jsonrpc":"2.0","id":8,"result":{"content":[]}}"#;
        assert_eq!(read(vec![message(answer, None)], Some(json!(7))).len(), 1);
        // Another request's answer is not this one's.
        assert_eq!(read(vec![message(other, None)], Some(json!(7))).len(), 2);
        assert_eq!(
            read(vec![message(PROGRESS, Some("e1"))], Some(json!(7))).len(),
            1
        );
        assert_eq!(read(vec![message(PROGRESS, None)], None).len(), 1);
    }

    #[test]
    fn invalid_x_mcp_header_annotations_are_named_and_valid_ones_pass() {
        let problem = |schema: Value| header_problem(schema.as_object().unwrap());
        let prop = |p: Value| json!({"type": "object", "properties": p});
        assert_eq!(
            problem(prop(
                json!({"region": {"type": "string", "x-mcp-header": "Region"},
                                "n": {"type": "object", "properties": {
                                    "zone": {"type": "integer", "x-mcp-header": "Zone"}}}})
            )),
            None
        );
        for (schema, says) in [
            (
                json!({"type": "object", "x-mcp-header": "R"}),
                "the schema root",
            ),
            (
                prop(json!({"r": {"type": "string", "x-mcp-header": ""}})),
                "/r: x-mcp-header is empty",
            ),
            (
                prop(json!({"r": {"type": "string", "x-mcp-header": 7}})),
                "is not a string",
            ),
            (
                prop(json!({"r": {"type": "string", "x-mcp-header": "A B"}})),
                "not an HTTP header name",
            ),
            (
                prop(json!({"r": {"type": "object", "x-mcp-header": "R"}})),
                "not a string, number",
            ),
            (
                prop(json!({"a": {"type": "string", "x-mcp-header": "Region"},
                            "b": {"type": "string", "x-mcp-header": "region"}})),
                "another property names",
            ),
        ] {
            let why = problem(schema.clone()).unwrap_or_default();
            assert!(why.contains(says), "{schema}: {why}");
        }
    }
}
