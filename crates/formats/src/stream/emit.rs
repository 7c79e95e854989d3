//! What an assembler reports while it reads events: text, complete calls,
//! calls cut short, the stop reason and whether the response's last event
//! came.

use capstan_core::call::CallRequest;

/// A call the response started but never completed (cut by a token limit,
/// a content filter, or arguments that are not whole JSON).
#[derive(Clone, Debug, PartialEq)]
pub struct CutCall {
    pub id: String,
    pub name: String,
    /// The part of the arguments that arrived.
    pub arguments: String,
    /// Why it is not run, for the call's error result.
    pub reason: String,
}

#[derive(Default)]
pub(crate) struct Emit {
    next_position: usize,
    /// Text deltas of the events read since the last drain, in order.
    pub text: Vec<String>,
    /// Calls whose arguments are complete, with their position in the response.
    pub ready: Vec<(usize, CallRequest)>,
    pub cut: Vec<(usize, CutCall)>,
    /// New argument text of a call already reported ready (OpenAI Chat: a
    /// fragment after the arguments formed a whole JSON object), and whether
    /// it adds more than whitespace.
    pub revised: Vec<(usize, String, bool)>,
    /// The provider's stop or finish reason, when it gave one.
    pub stop_reason: Option<String>,
    /// The response's closing event arrived.
    pub terminal: bool,
}

impl Emit {
    /// A position for a call the response just started: calls are numbered
    /// in the order they start, which is their order in the response.
    pub fn open(&mut self) -> usize {
        self.next_position += 1;
        self.next_position - 1
    }

    pub fn opened(&self) -> usize {
        self.next_position
    }

    pub fn text(&mut self, delta: &str) {
        if !delta.is_empty() {
            self.text.push(delta.to_owned());
        }
    }

    pub fn cut(&mut self, position: usize, id: &str, name: &str, arguments: &str, reason: String) {
        let call = CutCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
            reason,
        };
        self.cut.push((position, call));
    }
}

/// Reads one provider's events into calls and text.
pub(crate) trait Assembler: Send {
    /// One SSE event (`name` is its `event:` field, often "").
    fn event(&mut self, name: &str, data: &str, emit: &mut Emit)
        -> Result<(), capstan_core::Error>;
    /// The body ended after its closing event: every call still open is cut.
    fn close(&mut self, emit: &mut Emit);
    /// Bytes of arguments held for calls still open.
    fn buffered(&self) -> usize;
}

/// The data of an event as a JSON object, or an invalid-response error naming the event.
pub(crate) fn object(
    data: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, capstan_core::Error> {
    match serde_json::from_str::<serde_json::Value>(data) {
        Ok(serde_json::Value::Object(obj)) => Ok(obj),
        Ok(_) => Err(capstan_core::Error::InvalidResponse(format!(
            "stream event data is not a JSON object: {}",
            preview(data)
        ))),
        Err(e) => Err(capstan_core::Error::InvalidResponse(format!(
            "stream event data is not valid JSON ({e}): {}",
            preview(data)
        ))),
    }
}

/// The start of `data`, for messages.
pub(crate) fn preview(data: &str) -> String {
    let mut s: String = data.chars().take(80).collect();
    if s.len() < data.len() {
        s.push_str("...");
    }
    s
}

/// The provider error a body reports, read by the non-streamed parser so
/// both give the same status and message; `fallback` when it reads none.
pub(crate) fn provider_error(
    fmt: crate::providers::Format,
    body: &serde_json::Value,
    fallback: &str,
) -> capstan_core::Error {
    match crate::providers::parse_calls(fmt, body) {
        Err(e) => e,
        Ok(_) => capstan_core::Error::provider(
            "error",
            format!("{fallback}: {}", preview(&body.to_string())),
        ),
    }
}
