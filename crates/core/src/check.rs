//! A call checked without running it: its tool looked up and its arguments
//! validated, as a batch does before it calls the tool, with the result a
//! batch would give a call that cannot run. For hosts that run the tool
//! themselves (a binding's lone call on the calling thread, an event loop's
//! coroutine) and need no thread, callback or timer from capstan.

use serde_json::Value;

use crate::call::{Arguments, CallRequest, Outcome};
use crate::registry::{Registry, Tool};
use crate::wire;

/// What checking a call found.
#[derive(Debug, PartialEq)]
pub enum Checked {
    /// The tool exists and the arguments are valid: these, defaults filled in.
    Valid(Value),
    /// The call cannot run: its outcome and the text the model reads.
    Answer(Outcome, String),
}

/// Looks `name` up and validates `arguments` against its schema (after
/// dropping OpenAI strict-mode nulls if `strict_nulls`). The texts are the
/// batch's (`exec::batch::pipeline`: keep them the same). An invalid call counts in
/// the tool's stats as a batch's would.
pub fn check_call(
    registry: &Registry,
    name: &str,
    arguments: Arguments,
    strict_nulls: bool,
) -> Checked {
    if registry.is_closed() {
        return Checked::Answer(Outcome::Cancelled, CLOSED_TEXT.to_string());
    }
    let Some(tool) = registry.get(name) else {
        let text = registry.unknown_tool_text(name);
        return Checked::Answer(Outcome::UnknownTool, text);
    };
    let coerce = registry.options().coerce;
    match validate_arguments(&tool, name, arguments, strict_nulls, coerce) {
        Ok(v) => Checked::Valid(v),
        Err(text) => Checked::Answer(Outcome::InvalidArguments, text),
    }
}

/// Checks every call of a batch as [`check_call`] checks one, in call order
/// (one crossing for a host that runs a batch of tools itself).
pub fn check_calls(
    registry: &Registry,
    calls: Vec<CallRequest>,
    strict_nulls: bool,
) -> Vec<Checked> {
    calls
        .into_iter()
        .map(|c| check_call(registry, &c.name, c.arguments, strict_nulls))
        .collect()
}

/// The checked calls as JSON text, an array in call order with a pair per
/// call: `["ok",{...}]` for a valid call (its arguments, defaults filled in),
/// `[outcome,"text"]` for one that cannot run (the text a batch would give
/// it). Pairs, not objects: a host reads them back with less work.
pub fn checked_list_json(checked: &[Checked]) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(checked.len() * 40 + 2);
    out.push(b'[');
    wire::write_items(&mut out, checked, |out, c| {
        out.extend_from_slice(b"[\"");
        match c {
            Checked::Valid(v) => {
                out.extend_from_slice(b"ok\",");
                wire::write_value(out, v);
            }
            Checked::Answer(o, text) => {
                out.extend_from_slice(o.as_str().as_bytes());
                out.extend_from_slice(b"\",");
                wire::write_str(out, text);
            }
        }
        out.push(b']');
    });
    out.push(b']');
    wire::into_string(out)
}

/// What a call gets when its registry was closed before the call started.
pub(crate) const CLOSED_TEXT: &str = "Cancelled: the tool registry was shut down.";

/// Validates a call's arguments for `tool` (with `strict_nulls`, the nulls a
/// strict-mode model sends for optional properties dropped first): the
/// arguments with defaults filled in, or the text the model reads, the call
/// then counted as invalid in the tool's stats. The one place a batch and
/// [`check_call`] validate.
pub(crate) fn validate_arguments(
    tool: &Tool,
    name: &str,
    arguments: Arguments,
    strict_nulls: bool,
    coerce: bool,
) -> Result<Value, String> {
    let checked = match (arguments.into_value(), tool.schema()) {
        (_, Err(e)) => Err(format!(
            "Tool \"{name}\" cannot validate its arguments: {e}"
        )),
        (Ok(mut v), Ok(schema)) => {
            if strict_nulls {
                crate::schema::drop_strict_nulls(schema.source(), &mut v);
            }
            schema.validate(v, coerce).map_err(|e| e.to_string())
        }
        (Err(e), _) => Err(format!("Invalid arguments for tool \"{name}\": {e}")),
    };
    if checked.is_err() {
        tool.stats.finished(Outcome::InvalidArguments, 0, false);
    }
    checked
}
