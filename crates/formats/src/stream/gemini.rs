//! Gemini stream (`streamGenerateContent?alt=sse`): each event is a whole
//! `GenerateContentResponse` whose `candidates[0].content.parts` continue
//! the response. A `functionCall` part always arrives whole, so it is
//! complete as soon as its event is read. `text` parts (not `thought`
//! ones) are text. The last event carries `finishReason`.
//!
//! A call without an `id` gets `gemini_call_0_{n}`, `n` counting every part
//! of the stream: the id the non-streamed parser gives the response whose
//! parts are all the streamed parts in order.
//! Errors: `{"error": {...}}` and a blocked prompt, read by the
//! non-streamed parser (same kind and message).

use serde_json::Value;

use super::emit::{object, provider_error, Assembler, Emit};
use crate::providers::Format;
use capstan_core::call::{Arguments, CallRequest};
use capstan_core::error::Error;

#[derive(Default)]
pub(crate) struct Gemini {
    parts: usize,
}

impl Assembler for Gemini {
    fn event(&mut self, _name: &str, data: &str, emit: &mut Emit) -> Result<(), Error> {
        let chunk = object(data)?;
        let blocked = !chunk.contains_key("candidates")
            && chunk
                .get("promptFeedback")
                .and_then(|f| f.get("blockReason"))
                .is_some();
        if chunk.get("error").is_some_and(|e| !e.is_null()) || blocked {
            return Err(provider_error(
                Format::Gemini,
                &Value::Object(chunk),
                "error event",
            ));
        }
        let Some(candidate) = chunk
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .and_then(Value::as_object)
        else {
            return Ok(());
        };
        let parts = candidate
            .get("content")
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            let index = self.parts;
            self.parts += 1;
            let path = format!("candidates[0].content.parts[{index}]");
            let Some(part) = part.as_object() else {
                return Err(Error::InvalidResponse(format!(
                    "{path}: part is not a JSON object"
                )));
            };
            if let Some(call) = part.get("functionCall") {
                let Some(call) = call.as_object() else {
                    return Err(Error::InvalidResponse(format!(
                        "{path}.functionCall: functionCall is not a JSON object"
                    )));
                };
                let Some(Value::String(name)) = call.get("name") else {
                    return Err(Error::InvalidResponse(format!(
                        "{path}.functionCall: functionCall has no \"name\""
                    )));
                };
                let id = match call.get("id") {
                    Some(Value::String(s)) if !s.is_empty() => s.clone(),
                    _ => format!("gemini_call_0_{index}"),
                };
                let arguments = match call.get("args") {
                    None | Some(Value::Null) => Value::Object(Default::default()),
                    Some(v) => v.clone(),
                };
                let position = emit.open();
                emit.ready.push((
                    position,
                    CallRequest {
                        id,
                        name: name.clone(),
                        arguments: Arguments::Value(arguments),
                    },
                ));
            } else if let Some(Value::String(text)) = part.get("text") {
                if part.get("thought").and_then(Value::as_bool) != Some(true) {
                    emit.text(text);
                }
            }
        }
        if let Some(Value::String(reason)) = candidate.get("finishReason") {
            emit.stop_reason = Some(reason.clone());
            emit.terminal = true;
        }
        Ok(())
    }

    fn close(&mut self, _emit: &mut Emit) {}

    fn buffered(&self) -> usize {
        0
    }
}
