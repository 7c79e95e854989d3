//! A capstan result as an MCP `CallToolResult`: what the server answers a
//! `tools/call` with, and what a task's `tasks/result` carries (both render
//! through here, so a call answers the same whether it ran as a task or not).

use rmcp::model::CallToolResult;
use rmcp::ErrorData;
use serde_json::Value;

use capstan_core::call::ToolResult;
use capstan_formats::providers::{format_results, Format};

/// A call's result as MCP's `CallToolResult`.
pub(crate) fn render(result: &ToolResult) -> Result<CallToolResult, ErrorData> {
    let rendered = format_results(Format::Mcp, std::slice::from_ref(result));
    let item = match rendered {
        Value::Array(mut items) if !items.is_empty() => items.swap_remove(0),
        _ => return Err(ErrorData::internal_error("result rendering failed", None)),
    };
    serde_json::from_value::<CallToolResult>(item)
        .map_err(|e| ErrorData::internal_error(format!("result rendering: {e}"), None))
}
