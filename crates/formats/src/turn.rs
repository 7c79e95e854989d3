//! One agent turn: a model's response in, the messages for its next request out.

pub mod searches;

use serde_json::Value;

use crate::providers::{self, Format};
use capstan_core::call::{CallRequest, ToolResult};
use capstan_core::error::Error;
use capstan_core::exec::{self, ExecOptions};
use capstan_core::registry::Registry;

/// Parses the calls out of `response` (format `fmt`), runs them per `options`,
/// and returns what to append to the conversation, in the same format.
/// Blocks like `execute`. Errors only when `response` lacks what `fmt` requires.
pub fn run_turn(
    registry: &Registry,
    fmt: Format,
    response: &Value,
    options: &ExecOptions,
) -> Result<Value, Error> {
    let calls = providers::parse_calls(fmt, response)?;
    // Counted (a whole serialization) only for a turn with searches.
    let body_bytes = || capstan_core::text::json_len(response);
    Ok(answer(registry, fmt, calls, options, body_bytes))
}

/// [`run_turn`] on the response's JSON text (see
/// [`providers::parse_calls_text`]: one call's unreadable arguments fail
/// that call only).
pub fn run_turn_text(
    registry: &Registry,
    fmt: Format,
    response: &str,
    options: &ExecOptions,
) -> Result<Value, Error> {
    let calls = providers::parse_calls_text(fmt, response)?;
    Ok(answer(registry, fmt, calls, options, || response.len()))
}

/// [`run_turn_text`] returning the whole turn: the model's own turn as the
/// next request takes it (see [`crate::history::turn`]: thinking blocks,
/// reasoning items and thought signatures kept, calls renamed as their
/// results are), then the results, as one array of entries. The model's turn
/// is checked before any call runs: a fragment of a response or a format
/// without conversations is `Error::InvalidArgument` and nothing runs.
/// Returned as JSON text: the model's turn is cut from `response`, byte for
/// byte but for renamed ids (numbers past 64 bits stay as written).
pub fn run_whole_turn_text(
    registry: &Registry,
    fmt: Format,
    response: &str,
    options: &ExecOptions,
) -> Result<String, Error> {
    let (body, calls) = providers::parse_response_text(fmt, response)?;
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    let ids = crate::history::ids::unique(fmt, &ids);
    let mut entries = crate::history::turn::model_turn(fmt, response, &body, &calls, &ids)?;
    let any_call = !calls.is_empty();
    match answer(registry, fmt, calls, options, || response.len()) {
        Value::Array(results) => entries.extend(results.iter().map(Value::to_string)),
        // Anthropic and Gemini answer in one message: none without calls.
        results if any_call => entries.push(results.to_string()),
        _ => {}
    }
    Ok(crate::history::raw::array(&entries))
}

/// Runs `calls` and writes one result per call, in call order, each under
/// an id the provider takes: a call whose id repeats an earlier call's of the
/// response, or is empty or illegal, is answered under the id
/// [`crate::history::ids::unique`] gives it (the history repair renames
/// that call in the model's message the same way).
///
/// A provider's own search call (OpenAI's client-executed
/// `tool_search_call`, read as [`providers::NATIVE_SEARCH_CALL`]) is answered
/// by the registry's search, no host tool involved; the other calls run as
/// usual. Under Anthropic native deferred loading the search tool's results
/// become `tool_reference` blocks. What the searches write together is
/// bounded by the response's `body_bytes` (`searches::TurnSearches`).
fn answer(
    registry: &Registry,
    fmt: Format,
    calls: Vec<CallRequest>,
    options: &ExecOptions,
    body_bytes: impl FnOnce() -> usize,
) -> Value {
    let mut searches = searches::TurnSearches::new(registry, fmt, body_bytes, &calls);
    let mut slots: Vec<Option<ToolResult>> = Vec::with_capacity(calls.len());
    let mut run = Vec::new();
    let mut run_slots = Vec::new();
    for call in calls {
        if call.name == providers::NATIVE_SEARCH_CALL {
            slots.push(Some(searches.answer_native(&call)));
        } else {
            run_slots.push(slots.len());
            slots.push(None);
            run.push(call);
        }
    }
    for (slot, result) in run_slots
        .into_iter()
        .zip(exec::execute(registry, run, options))
    {
        slots[slot] = Some(result);
    }
    let mut results: Vec<ToolResult> = slots.into_iter().flatten().collect();
    if fmt == Format::Anthropic {
        searches::mark_tool_references(registry, &mut results);
    }
    searches.bound_results(&mut results);
    crate::history::ids::format_results(fmt, results)
}
