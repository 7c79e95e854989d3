//! Provider formats. (Interim: capstan's own format only; the provider
//! formats land with issue #4.)

use serde_json::Value;

use crate::call::{results_to_json, CallRequest, ToolResult};
use crate::error::Error;
use crate::tool::ToolSpec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Describe,
    OpenAiChat,
    OpenAiResponses,
    Anthropic,
    Gemini,
    Mcp,
}

#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    pub strict: bool,
    pub gemini_lower: bool,
}

pub struct ExportNote {
    pub tool: String,
    pub pointer: String,
    pub message: String,
}

pub struct Export {
    pub tools: Value,
    pub report: Vec<ExportNote>,
}

fn unsupported(fmt: Format) -> Error {
    Error::InvalidArgument(format!("format {fmt:?} is not supported yet"))
}

pub fn export_tools(tools: &[ToolSpec], fmt: Format, _opts: &ExportOptions) -> Export {
    let _ = fmt;
    let tools = tools
        .iter()
        .map(|t| {
            serde_json::json!({
                "name": t.name, "description": t.description, "parameters": t.parameters,
            })
        })
        .collect();
    Export {
        tools: Value::Array(tools),
        report: Vec::new(),
    }
}

pub fn parse_calls(fmt: Format, body: &Value) -> Result<Vec<CallRequest>, Error> {
    match fmt {
        Format::Describe => CallRequest::list_from_json(body.clone()),
        other => Err(unsupported(other)),
    }
}

pub fn format_results(_fmt: Format, results: &[ToolResult]) -> Value {
    results_to_json(results)
}
