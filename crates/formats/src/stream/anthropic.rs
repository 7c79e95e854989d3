//! Anthropic Messages stream: `message_start`, then per content block
//! `content_block_start` (a `tool_use` block carries `id` and `name`),
//! `content_block_delta` (`text_delta` text, `input_json_delta`
//! `partial_json` fragments of the input), `content_block_stop`; then
//! `message_delta` (`stop_reason`) and `message_stop`. `ping` is ignored.
//!
//! A call is complete at its `content_block_stop`; its input is the joined
//! fragments (none: the input of the start event, usually `{}`). Input that
//! is not whole JSON (a block cut by `max_tokens`) cuts the call. Other
//! blocks (thinking, server-side tools) are skipped as in the non-streamed
//! parser. Error: the `error` event `{"type": "error", "error": {...}}`.

use std::collections::{HashMap, VecDeque};

use serde_json::{Map, Value};

use super::emit::{object, provider_error, Assembler, Emit};
use crate::providers::Format;
use capstan_core::call::{Arguments, CallRequest};
use capstan_core::error::Error;

/// Only open `tool_use` blocks are kept, found by index: a delta costs the
/// same however many blocks came before it.
#[derive(Default)]
pub(crate) struct Messages {
    /// Open blocks by `index`, oldest first (a second start at an index
    /// still open waits behind the first).
    open: HashMap<u64, VecDeque<Block>>,
    /// Bytes the open blocks hold (id, name, start input, input).
    held: usize,
}

struct Block {
    position: usize,
    id: String,
    name: String,
    start_input: Value,
    /// The length of `start_input` as JSON text.
    start_len: usize,
    input: String,
}

impl Block {
    fn size(&self) -> usize {
        self.id.len() + self.name.len() + self.start_len + self.input.len()
    }
}

fn index_of(event: &Map<String, Value>, kind: &str) -> Result<u64, Error> {
    event
        .get("index")
        .and_then(Value::as_u64)
        .ok_or_else(|| Error::InvalidResponse(format!("{kind} event has no numeric \"index\"")))
}

impl Messages {
    fn start(&mut self, event: &Map<String, Value>, emit: &mut Emit) -> Result<(), Error> {
        let index = index_of(event, "content_block_start")?;
        let Some(block) = event.get("content_block").and_then(Value::as_object) else {
            return Err(Error::InvalidResponse(
                "content_block_start event has no \"content_block\" object".into(),
            ));
        };
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(Value::String(text)) = block.get("text") {
                    emit.text(text);
                }
            }
            Some("tool_use") => {
                let field = |key: &str| match block.get(key) {
                    Some(Value::String(s)) => Ok(s.clone()),
                    _ => Err(Error::InvalidResponse(format!(
                        "content[{index}]: tool_use block has no \"{key}\""
                    ))),
                };
                let (id, name) = (field("id")?, field("name")?);
                let start_input = block.get("input").cloned().unwrap_or(Value::Null);
                let block = Block {
                    position: emit.open(),
                    id,
                    name,
                    start_len: start_input.to_string().len(),
                    start_input,
                    input: String::new(),
                };
                self.held += block.size();
                self.open.entry(index).or_default().push_back(block);
            }
            _ => {}
        }
        Ok(())
    }

    fn stop(&mut self, index: u64, emit: &mut Emit) {
        let Some(queue) = self.open.get_mut(&index) else {
            return;
        };
        let Some(mut block) = queue.pop_front() else {
            return;
        };
        if queue.is_empty() {
            self.open.remove(&index);
        }
        self.held -= block.size();
        let arguments = if block.input.trim().is_empty() {
            match std::mem::take(&mut block.start_input) {
                Value::Null => Value::Object(Map::new()),
                v => v,
            }
        } else {
            match serde_json::from_str::<Value>(&block.input) {
                Ok(v) => v,
                Err(e) => {
                    let reason =
                        format!("the tool_use block ended before its input was whole JSON ({e})");
                    emit.cut(block.position, &block.id, &block.name, &block.input, reason);
                    return;
                }
            }
        };
        emit.ready.push((
            block.position,
            CallRequest {
                id: block.id,
                name: block.name,
                arguments: Arguments::Value(arguments),
            },
        ));
    }
}

impl Assembler for Messages {
    fn event(&mut self, _name: &str, data: &str, emit: &mut Emit) -> Result<(), Error> {
        let event = object(data)?;
        match event.get("type").and_then(Value::as_str) {
            Some("error") => Err(provider_error(
                Format::Anthropic,
                &Value::Object(event),
                "error event",
            )),
            Some("content_block_start") => self.start(&event, emit),
            Some("content_block_delta") => {
                let index = index_of(&event, "content_block_delta")?;
                let delta = event.get("delta").and_then(Value::as_object);
                let kind = delta.and_then(|d| d.get("type")).and_then(Value::as_str);
                let field = |key: &str| delta.and_then(|d| d.get(key)).and_then(Value::as_str);
                match kind {
                    Some("text_delta") => emit.text(field("text").unwrap_or("")),
                    Some("input_json_delta") => {
                        let block = self.open.get_mut(&index).and_then(|q| q.front_mut());
                        if let Some(block) = block {
                            let partial = field("partial_json").unwrap_or("");
                            block.input.push_str(partial);
                            self.held += partial.len();
                        }
                    }
                    _ => {}
                }
                Ok(())
            }
            Some("content_block_stop") => {
                let index = index_of(&event, "content_block_stop")?;
                self.stop(index, emit);
                Ok(())
            }
            Some("message_delta") => {
                let reason = event
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str);
                if let Some(reason) = reason {
                    emit.stop_reason = Some(reason.to_owned());
                }
                Ok(())
            }
            Some("message_stop") => {
                emit.terminal = true;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn close(&mut self, emit: &mut Emit) {
        let reason = match emit.stop_reason.as_deref() {
            Some(r) => format!("stop_reason \"{r}\""),
            None => "the end of the stream".to_owned(),
        };
        let mut open: Vec<Block> = self.open.drain().flat_map(|(_, q)| q).collect();
        open.sort_by_key(|b| b.position);
        self.held = 0;
        for block in open {
            emit.cut(
                block.position,
                &block.id,
                &block.name,
                &block.input,
                format!("the response ended ({reason}) before this tool_use block was complete"),
            );
        }
    }

    fn buffered(&self) -> usize {
        self.held
    }
}
