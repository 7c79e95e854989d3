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

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value};

use super::emit::{object, provider_error, Assembler, Emit};
use crate::providers::Format;
use capstan_core::call::{Arguments, CallRequest};
use capstan_core::error::Error;

/// Items are found by `output_index` or `item_id` through maps: an event
/// costs the same however many items came before it.
#[derive(Default)]
pub(crate) struct Responses {
    items: Vec<Item>,
    /// The first item at each `output_index`.
    by_index: HashMap<u64, usize>,
    /// The first item with each item id (kept after the item is done, so
    /// that later events for it are recognised).
    by_id: HashMap<String, usize>,
    /// Items not done yet (for `close`, which may come more than once).
    open: BTreeSet<usize>,
    /// Bytes held: open items' call ids, names and arguments, and every
    /// item id.
    held: usize,
}

struct Item {
    output_index: u64,
    position: usize,
    call_id: String,
    name: String,
    arguments: String,
    done: bool,
}

impl Item {
    fn size(&self) -> usize {
        self.call_id.len() + self.name.len() + self.arguments.len()
    }
}

fn str_field(obj: &Map<String, Value>, key: &str) -> String {
    obj.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

impl Responses {
    /// The first item the event names by its `output_index` or `item_id`.
    fn find_at(&self, event: &Map<String, Value>) -> Option<usize> {
        let by_index = event
            .get("output_index")
            .and_then(Value::as_u64)
            .and_then(|i| self.by_index.get(&i).copied());
        let by_id = event
            .get("item_id")
            .and_then(Value::as_str)
            .and_then(|id| self.by_id.get(id).copied());
        match (by_index, by_id) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
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
        let at = self.items.len();
        self.by_index.entry(output_index).or_insert(at);
        let item_id = str_field(item, "id");
        if !item_id.is_empty() && !self.by_id.contains_key(&item_id) {
            self.held += item_id.len() + super::CALL_OVERHEAD;
            self.by_id.insert(item_id, at);
        }
        let item = Item {
            output_index,
            position: emit.open(),
            call_id: str_field(item, "call_id"),
            name: str_field(item, "name"),
            arguments: str_field(item, "arguments"),
            done: false,
        };
        self.held += item.size();
        self.open.insert(at);
        self.items.push(item);
    }

    /// Reports the item ready; what it held goes with the call.
    fn complete(&mut self, at: usize, emit: &mut Emit) -> Result<(), Error> {
        let Some(item) = self.items.get_mut(at) else {
            return Ok(());
        };
        if item.done {
            return Ok(());
        }
        item.done = true;
        self.open.remove(&at);
        self.held -= item.size();
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
                id: std::mem::take(&mut item.call_id),
                name: std::mem::take(&mut item.name),
                arguments: Arguments::Text(std::mem::take(&mut item.arguments)),
            },
        ));
        Ok(())
    }

    /// Sets a string of the open item at `at`, keeping the count of bytes held.
    fn set(&mut self, at: usize, field: fn(&mut Item) -> &mut String, value: &str) {
        if let Some(item) = self.items.get_mut(at) {
            if !item.done {
                let slot = field(item);
                self.held = self.held - slot.len() + value.len();
                slot.clear();
                slot.push_str(value);
            }
        }
    }

    fn item_done(&mut self, event: &Map<String, Value>, emit: &mut Emit) -> Result<(), Error> {
        let Some(item) = event.get("item").and_then(Value::as_object) else {
            return Ok(());
        };
        if item.get("type").and_then(Value::as_str) != Some("function_call") {
            return Ok(());
        }
        if self.find_at(event).is_none() {
            self.added(event, emit);
        }
        let Some(at) = self.find_at(event) else {
            return Ok(());
        };
        // The whole item is authoritative.
        if let Some(Value::String(s)) = item.get("call_id") {
            self.set(at, |i| &mut i.call_id, s);
        }
        if let Some(Value::String(s)) = item.get("name") {
            self.set(at, |i| &mut i.name, s);
        }
        if let Some(Value::String(s)) = item.get("arguments") {
            self.set(at, |i| &mut i.arguments, s);
        }
        self.complete(at, emit)
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
                if let (Some(at), Some(Value::String(d))) =
                    (self.find_at(&event), event.get("delta"))
                {
                    if let Some(open) = self.items.get_mut(at).filter(|i| !i.done) {
                        open.arguments.push_str(d);
                        self.held += d.len();
                    }
                }
                Ok(())
            }
            "response.function_call_arguments.done" => {
                let Some(at) = self.find_at(&event) else {
                    return Ok(());
                };
                if let Some(Value::String(args)) = event.get("arguments") {
                    self.set(at, |i| &mut i.arguments, args);
                }
                if let Some(Value::String(name)) = event.get("name") {
                    if self.items.get(at).is_some_and(|i| i.name.is_empty()) {
                        self.set(at, |i| &mut i.name, name);
                    }
                }
                self.complete(at, emit)
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
        for at in std::mem::take(&mut self.open) {
            let Some(item) = self.items.get_mut(at) else {
                continue;
            };
            item.done = true;
            emit.cut(
                item.position,
                &item.call_id,
                &item.name,
                &item.arguments,
                format!("the response ended ({reason}) before this call's arguments were complete"),
            );
            item.call_id = String::new();
            item.name = String::new();
            item.arguments = String::new();
        }
        self.held = self
            .by_id
            .keys()
            .map(|k| k.len() + super::CALL_OVERHEAD)
            .sum();
    }

    fn buffered(&self) -> usize {
        self.held
    }
}
