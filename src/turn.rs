//! One agent turn: a model's response in, the messages for its next request out.

use serde_json::Value;

use crate::call::CallRequest;
use crate::error::Error;
use crate::exec::{self, ExecOptions};
use crate::providers::{self, Format};
use crate::registry::Registry;

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
    Ok(answer(registry, fmt, calls, options))
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
    Ok(answer(registry, fmt, calls, options))
}

/// Runs `calls` and writes one result per call, in call order, each under
/// an id the provider takes: a call whose id repeats an earlier call's of the
/// response, or is empty or illegal, is answered under the id
/// [`crate::history::ids::unique`] gives it (the history repair renames
/// that call in the model's message the same way).
fn answer(
    registry: &Registry,
    fmt: Format,
    calls: Vec<CallRequest>,
    options: &ExecOptions,
) -> Value {
    crate::history::ids::format_results(fmt, exec::execute(registry, calls, options))
}
