//! MCP metadata of mounted tools: what a server declared of its tools is
//! kept on them (`McpMeta::from_listed`), as untrusted hints, and the one
//! declaration capstan checks is the `outputSchema`: a result whose
//! `structuredContent` fails it is an error result, not a success.

use serde_json::Value;

use capstan_core::exec::Call;
use capstan_core::registry::Registry;

/// Why a mounted tool's `CallToolResult` (as JSON) breaks the outputSchema
/// its server declared, or `None` (no schema, no structured content, or it
/// matches).
pub(crate) fn structured_problem(
    registry: &Registry,
    call: &Call,
    result: &Value,
) -> Option<String> {
    let structured = result.get("structuredContent")?;
    let tool = registry.get(call.tool())?;
    let schema = tool.output_schema.as_ref()?;
    capstan_core::tool_meta::structured_problem(call.tool(), schema, structured)
}
