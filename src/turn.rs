//! One agent turn: a model's response in, the messages for its next request out.

use serde_json::Value;

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
    let results = exec::execute(registry, calls, options);
    Ok(providers::format_results(fmt, &results))
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
    let results = exec::execute(registry, calls, options);
    Ok(providers::format_results(fmt, &results))
}
