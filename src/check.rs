//! A call checked without running it: its tool looked up and its arguments
//! validated, as a batch does before it calls the tool, with the result a
//! batch would give a call that cannot run. For hosts that run the tool
//! themselves (a binding's lone call on the calling thread, an event loop's
//! coroutine) and need no thread, callback or timer from capstan.

use serde_json::Value;

use crate::call::{Arguments, Outcome};
use crate::registry::Registry;

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
/// batch's (`exec::batch`: keep them the same). An invalid call counts in
/// the tool's stats as a batch's would.
pub fn check_call(
    registry: &Registry,
    name: &str,
    arguments: Arguments,
    strict_nulls: bool,
) -> Checked {
    if registry.is_closed() {
        let text = "Cancelled: the tool registry was shut down.".to_string();
        return Checked::Answer(Outcome::Cancelled, text);
    }
    let Some(tool) = registry.get(name) else {
        let text = registry.shared.unknown_tool_text(name);
        return Checked::Answer(Outcome::UnknownTool, text);
    };
    let checked = match (arguments.into_value(), tool.schema()) {
        (_, Err(e)) => Err(format!(
            "Tool \"{name}\" cannot validate its arguments: {e}"
        )),
        (Ok(mut v), Ok(schema)) => {
            if strict_nulls {
                crate::providers::drop_strict_nulls(schema.source(), &mut v);
            }
            schema
                .validate(v, registry.options().coerce)
                .map_err(|e| e.to_string())
        }
        (Err(e), _) => Err(format!("Invalid arguments for tool \"{name}\": {e}")),
    };
    match checked {
        Ok(v) => Checked::Valid(v),
        Err(text) => {
            tool.stats.finished(Outcome::InvalidArguments, 0, false);
            Checked::Answer(Outcome::InvalidArguments, text)
        }
    }
}
