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

use serde_json::{Map, Value};

use super::emit::{object, provider_error, Assembler, Emit};
use crate::call::{Arguments, CallRequest};
use crate::error::Error;
use crate::providers::Format;

#[derive(Default)]
pub(crate) struct Messages {
    blocks: Vec<Block>,
}

struct Block {
    index: u64,
    position: usize,
    id: String,
    name: String,
    start_input: Value,
    input: String,
    done: bool,
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
                self.blocks.push(Block {
                    index,
                    position: emit.open(),
                    id,
                    name,
                    start_input: block.get("input").cloned().unwrap_or(Value::Null),
                    input: String::new(),
                    done: false,
                });
            }
            _ => {}
        }
        Ok(())
    }

    fn open_block(&mut self, index: u64) -> Option<&mut Block> {
        self.blocks.iter_mut().find(|b| b.index == index && !b.done)
    }

    fn stop(&mut self, index: u64, emit: &mut Emit) {
        let Some(block) = self.open_block(index) else {
            return;
        };
        block.done = true;
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
        block.input = String::new();
        emit.ready.push((
            block.position,
            CallRequest {
                id: block.id.clone(),
                name: block.name.clone(),
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
                        if let Some(block) = self.open_block(index) {
                            block.input.push_str(field("partial_json").unwrap_or(""));
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
        for block in &mut self.blocks {
            if !block.done {
                block.done = true;
                emit.cut(
                    block.position,
                    &block.id,
                    &block.name,
                    &block.input,
                    format!(
                        "the response ended ({reason}) before this tool_use block was complete"
                    ),
                );
            }
        }
    }

    fn buffered(&self) -> usize {
        self.blocks.iter().map(|b| b.input.len()).sum()
    }
}
