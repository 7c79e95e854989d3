//! OpenAI Responses stream: typed events. `response.output_item.added`
//! opens a `function_call` item (`call_id`, `name`) at its `output_index`;
//! `response.function_call_arguments.delta` adds to its arguments;
//! `response.function_call_arguments.done` and `response.output_item.done`
//! (the whole item) complete it. `response.output_text.delta` is text.
//! `response.completed` and `response.incomplete` (e.g. reason
//! `max_output_tokens`, which cuts a call still open) close the response.
//!
//! Errors: the `error` event and `response.failed`, read by the
//! non-streamed parser (same kind and message). Items of other types are
//! skipped, as in the non-streamed parser.

use serde_json::{Map, Value};

use super::emit::{object, provider_error, Assembler, Emit};
use crate::call::{Arguments, CallRequest};
use crate::error::Error;
use crate::providers::Format;

#[derive(Default)]
pub(crate) struct Responses {
    items: Vec<Item>,
}

struct Item {
    output_index: u64,
    item_id: String,
    position: usize,
    call_id: String,
    name: String,
    arguments: String,
    done: bool,
}

fn str_field(obj: &Map<String, Value>, key: &str) -> String {
    obj.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

impl Responses {
    fn find(&mut self, event: &Map<String, Value>) -> Option<&mut Item> {
        let index = event.get("output_index").and_then(Value::as_u64);
        let item_id = event.get("item_id").and_then(Value::as_str);
        self.items.iter_mut().find(|i| {
            index == Some(i.output_index) || (item_id.is_some() && item_id == Some(&i.item_id))
        })
    }

    fn added(&mut self, event: &Map<String, Value>, emit: &mut Emit) {
        let Some(item) = event.get("item").and_then(Value::as_object) else {
            return;
        };
        if item.get("type").and_then(Value::as_str) != Some("function_call") {
            return;
        }
        let output_index = event
            .get("output_index")
            .and_then(Value::as_u64)
            .unwrap_or(self.items.len() as u64);
        self.items.push(Item {
            output_index,
            item_id: str_field(item, "id"),
            position: emit.open(),
            call_id: str_field(item, "call_id"),
            name: str_field(item, "name"),
            arguments: str_field(item, "arguments"),
            done: false,
        });
    }

    fn complete(item: &mut Item, emit: &mut Emit) -> Result<(), Error> {
        if item.done {
            return Ok(());
        }
        item.done = true;
        let path = format!("output[{}]", item.output_index);
        for (key, value) in [("call_id", &item.call_id), ("name", &item.name)] {
            if value.is_empty() {
                return Err(Error::InvalidResponse(format!(
                    "{path}: function_call item has no \"{key}\""
                )));
            }
        }
        emit.ready.push((
            item.position,
            CallRequest {
                id: item.call_id.clone(),
                name: item.name.clone(),
                arguments: Arguments::Text(std::mem::take(&mut item.arguments)),
            },
        ));
        Ok(())
    }

    fn item_done(&mut self, event: &Map<String, Value>, emit: &mut Emit) -> Result<(), Error> {
        let Some(item) = event.get("item").and_then(Value::as_object) else {
            return Ok(());
        };
        if item.get("type").and_then(Value::as_str) != Some("function_call") {
            return Ok(());
        }
        if self.find(event).is_none() {
            self.added(event, emit);
        }
        let Some(open) = self.find(event) else {
            return Ok(());
        };
        if open.done {
            return Ok(());
        }
        // The whole item is authoritative.
        for (key, slot) in [("call_id", &mut open.call_id), ("name", &mut open.name)] {
            if let Some(Value::String(s)) = item.get(key) {
                slot.clone_from(s);
            }
        }
        if let Some(Value::String(args)) = item.get("arguments") {
            open.arguments.clone_from(args);
        }
        Self::complete(open, emit)
    }
}

impl Assembler for Responses {
    fn event(&mut self, _name: &str, data: &str, emit: &mut Emit) -> Result<(), Error> {
        let event = object(data)?;
        let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "error" | "response.failed" => Err(provider_error(
                Format::OpenAiResponses,
                &Value::Object(event),
                "error event",
            )),
            "response.output_item.added" => {
                self.added(&event, emit);
                Ok(())
            }
            "response.function_call_arguments.delta" => {
                if let Some(open) = self.find(&event) {
                    if !open.done {
                        if let Some(Value::String(d)) = event.get("delta") {
                            open.arguments.push_str(d);
                        }
                    }
                }
                Ok(())
            }
            "response.function_call_arguments.done" => {
                let Some(open) = self.find(&event) else {
                    return Ok(());
                };
                if let Some(Value::String(args)) = event.get("arguments") {
                    if !open.done {
                        open.arguments.clone_from(args);
                    }
                }
                if let Some(Value::String(name)) = event.get("name") {
                    if open.name.is_empty() {
                        open.name.clone_from(name);
                    }
                }
                Self::complete(open, emit)
            }
            "response.output_item.done" => self.item_done(&event, emit),
            "response.output_text.delta" => {
                if let Some(Value::String(d)) = event.get("delta") {
                    emit.text(d);
                }
                Ok(())
            }
            "response.completed" | "response.incomplete" => {
                let response = event.get("response").and_then(Value::as_object);
                let status = response.map(|r| str_field(r, "status"));
                let reason = response
                    .and_then(|r| r.get("incomplete_details"))
                    .and_then(|d| d.get("reason"))
                    .and_then(Value::as_str);
                emit.stop_reason = reason
                    .map(str::to_owned)
                    .or(status)
                    .or_else(|| Some(kind.trim_start_matches("response.").to_owned()));
                emit.terminal = true;
                if kind == "response.incomplete" {
                    self.close(emit);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn close(&mut self, emit: &mut Emit) {
        let reason = match emit.stop_reason.as_deref() {
            Some(r) => format!("\"{r}\""),
            None => "the end of the stream".to_owned(),
        };
        for item in &mut self.items {
            if !item.done {
                item.done = true;
                emit.cut(
                    item.position,
                    &item.call_id,
                    &item.name,
                    &item.arguments,
                    format!(
                        "the response ended ({reason}) before this call's arguments were complete"
                    ),
                );
            }
        }
    }

    fn buffered(&self) -> usize {
        self.items.iter().map(|i| i.arguments.len()).sum()
    }
}
