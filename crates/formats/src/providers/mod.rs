//! Provider formats: tool definitions out, calls in, results out.
//!
//! Five wire formats (OpenAI Chat Completions, OpenAI Responses, Anthropic
//! Messages, Gemini, MCP) plus `describe`, capstan's own normalized JSON.
//! Every function here is pure: JSON in, JSON out, no I/O.
//!
//! Decisions where the providers leave room (each is documented again where
//! it is implemented):
//! - Several alternatives in one response (`n > 1` in chat, several Gemini
//!   candidates): only the first is read. Pass the message or content you
//!   want to act on to choose another.
//! - Items that are not function calls (text, reasoning, server-side or
//!   custom tools) are skipped: they belong to the host, not to capstan.
//! - Anthropic `is_error` is written only when true (the API defaults it to
//!   false); MCP `isError` is always written.
//! - Gemini calls without an `id` get `gemini_call_{candidate}_{part}`; such
//!   synthesized ids are never sent back to Gemini.
//! - MCP results are always an array of `CallToolResult`, in result order;
//!   the host wraps each in its JSON-RPC response.

mod anthropic;
mod gemini;
mod gemini_schema;
mod lenient;
mod mcp;
mod names;
mod openai_chat;
mod openai_responses;
mod parts;
mod strict;

use serde_json::{json, Map, Value};

use capstan_core::call::{results_to_json, CallRequest, ToolResult};
use capstan_core::error::{Error, ProviderDetail};
use capstan_core::tool::ToolSpec;

pub use capstan_core::schema::drop_strict_nulls;
/// Prefix of the ids capstan gives Gemini calls sent without one.
pub(crate) use gemini::SYNTHETIC_ID_PREFIX as GEMINI_SYNTHETIC_ID_PREFIX;
pub use names::{name_problems, name_report};
pub use strict::strict_schema;

/// A wire format capstan reads calls from and writes tools and results in.
///
/// The discriminants are those of the C enum `capstan_format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// capstan's normalized JSON (see `call.rs`), plus tool flags and limits.
    Describe = 0,
    OpenAiChat = 1,
    OpenAiResponses = 2,
    Anthropic = 3,
    Gemini = 4,
    Mcp = 5,
}

/// cbindgen:ignore
/// (cbindgen reads every public associated constant of the crate: without
/// this, `ALL` made it declare an opaque, unprefixed `Format` in the header.)
impl Format {
    pub const ALL: [Format; 6] = [
        Format::Describe,
        Format::OpenAiChat,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::Gemini,
        Format::Mcp,
    ];

    /// The format's name: `describe`, `openai_chat`, `openai_responses`,
    /// `anthropic`, `gemini` or `mcp`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Describe => "describe",
            Format::OpenAiChat => "openai_chat",
            Format::OpenAiResponses => "openai_responses",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
            Format::Mcp => "mcp",
        }
    }

    /// The format with this exact name (see [`Format::name`]).
    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// The name a provider's own search call is read under: OpenAI's
/// client-executed `tool_search_call` (format `openai_responses`). No
/// registered tool can have it (`:` is not allowed in tool names); `run_turn`
/// answers it with the registry's search, as a `tool_search_output` item.
pub const NATIVE_SEARCH_CALL: &str = "openai:tool_search";

/// The name of a search tool's result whose content is the JSON array of
/// the tool names it found, rendered as Anthropic `tool_reference` blocks
/// (set by `run_turn` under native deferred loading; never a tool's name).
pub const TOOL_REFERENCES: &str = "anthropic:tool_references";

/// How tool definitions are exported.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// OpenAI formats only: normalize each schema for strict mode (structured
    /// outputs) and mark the tool `strict: true`. A schema that cannot be made
    /// strict is exported as registered, not strict, and the report says why.
    /// Arguments of strict tools carry `null` for optional properties the model
    /// left out: run them through [`drop_strict_nulls`] before validating.
    pub strict: bool,
    /// Gemini only: write the OpenAPI-subset `parameters` field instead of
    /// `parametersJsonSchema`, with local `$ref`s inlined and unsupported
    /// keywords dropped; the report lists every drop.
    pub gemini_lower: bool,
    /// Provider-native deferred loading (OpenAI Responses and Anthropic; the
    /// other formats ignore it): deferred tools are exported with
    /// `defer_loading: true` instead of left out. OpenAI Responses: the
    /// search tool named `search_tool` is replaced by one client-executed
    /// `tool_search` tool (its description and parameters), added when any
    /// tool is deferred. Anthropic: the search tool is exported as a tool.
    pub native_search: bool,
    /// The registry's search tool among the tools exported, if any.
    pub search_tool: Option<String>,
}

/// One remark about an export: something dropped, or why a schema is not strict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportNote {
    /// The tool the remark is about.
    pub tool: String,
    /// JSON Pointer into the tool's registered parameters schema ("" = root).
    pub pointer: String,
    pub message: String,
}

impl ExportNote {
    pub fn to_json(&self) -> Value {
        json!({"tool": self.tool, "pointer": self.pointer, "message": self.message})
    }
}

/// Tool definitions in one format, and what the conversion had to say.
#[derive(Clone, Debug, PartialEq)]
pub struct Export {
    /// What the provider's `tools` field takes.
    pub tools: Value,
    pub report: Vec<ExportNote>,
}

impl Export {
    pub fn report_json(&self) -> Value {
        Value::Array(self.report.iter().map(ExportNote::to_json).collect())
    }
}

/// Tool definitions in `fmt`.
///
/// `describe`: `[{name, description, parameters, flags, timeout_ms?, max_output_chars?,
/// warnings?, mcp?}]` (`mcp`: the tool's `{title?, annotations?, outputSchema?, icons?}`);
/// `openai_chat`, `openai_responses`, `anthropic`, `mcp`: an array of tool
/// definitions; `gemini`: an array holding one Tool `{"functionDeclarations": [...]}`.
/// Names the format does not accept are reported, not changed.
pub fn export_tools(tools: &[ToolSpec], fmt: Format, opts: &ExportOptions) -> Export {
    let mut report = Vec::new();
    if let Some(provider) = names::provider_of(fmt) {
        for tool in tools {
            for problem in names::problems_for(provider, &tool.name) {
                report.push(ExportNote {
                    tool: tool.name.clone(),
                    pointer: String::new(),
                    message: format!("tool name \"{}\" {problem}", tool.name),
                });
            }
        }
    }
    let tools = match fmt {
        Format::Describe => Value::Array(tools.iter().map(describe_tool).collect()),
        Format::OpenAiChat => openai_chat::export(tools, opts, &mut report),
        Format::OpenAiResponses => openai_responses::export(tools, opts, &mut report),
        Format::Anthropic => anthropic::export(tools, opts),
        Format::Gemini => gemini::export(tools, opts, &mut report),
        Format::Mcp => mcp::export(tools),
    };
    Export { tools, report }
}

/// The function definitions a `tool_search_output` item lists for `tools`
/// (OpenAI Responses, as exported with `strict`, deferred ones with
/// `defer_loading: true`).
pub fn tool_search_output_tools(tools: &[ToolSpec], strict: bool) -> Value {
    let opts = ExportOptions {
        strict,
        native_search: true,
        ..ExportOptions::default()
    };
    Value::Array(openai_responses::functions(tools, &opts, &mut Vec::new()))
}

/// The tool calls in a provider response (or in the part of it that holds
/// them; each format's module lists what it accepts). No calls: empty vec.
/// A body that lacks a field the format requires is `Error::InvalidResponse`
/// naming where (`content[2]: tool_use block has no "name"`); for
/// `describe` the body is normalized call JSON and errors are `InvalidCalls`.
pub fn parse_calls(fmt: Format, body: &Value) -> Result<Vec<CallRequest>, Error> {
    match fmt {
        Format::Describe => CallRequest::list_from_json(body.clone()),
        Format::OpenAiChat => openai_chat::parse(body),
        Format::OpenAiResponses => openai_responses::parse(body),
        Format::Anthropic => anthropic::parse(body),
        Format::Gemini => gemini::parse(body),
        Format::Mcp => mcp::parse(body),
    }
}

/// [`parse_calls`] on JSON text, as a provider sent it: what the C ABI and
/// [`crate::turn::run_turn_text`] use. One call's arguments that no
/// `serde_json::Value` can hold (a number past f64's range such as `1e400`,
/// or nesting past serde_json's depth limit of 128) do not fail the body:
/// that call gets its arguments as text, which fails as its own
/// `invalid_arguments` result when it runs, and the other calls run. Text
/// that is not JSON is `Error::InvalidResponse`.
pub fn parse_calls_text(fmt: Format, text: &str) -> Result<Vec<CallRequest>, Error> {
    Ok(parse_response_text(fmt, text)?.1)
}

/// [`parse_calls_text`], also returning the response as read (a value past
/// what `serde_json::Value` holds stands there as a marker string).
pub fn parse_response_text(fmt: Format, text: &str) -> Result<(Value, Vec<CallRequest>), Error> {
    let body = lenient::parse(text)
        .map_err(|e| Error::InvalidResponse(format!("response is not valid JSON: {e}")))?;
    let mut calls = parse_calls(fmt, &body.value)?;
    for (i, call) in calls.iter_mut().enumerate() {
        body.restore(call, i)?;
    }
    Ok((body.value, calls))
}

/// Results as the next request to the provider takes them.
///
/// `describe`: the normalized result array; `openai_chat`: an array of `tool`
/// messages; `openai_responses`: an array of `function_call_output` items;
/// `anthropic`: one `user` message; `gemini`: one `user` content; `mcp`: an
/// array of `CallToolResult`. Results with content parts are rendered as
/// each provider takes them (the table in `parts.rs`); for `openai_chat` one
/// `user` message with the media then follows the `tool` messages.
pub fn format_results(fmt: Format, results: &[ToolResult]) -> Value {
    match fmt {
        Format::Describe => results_to_json(results),
        Format::OpenAiChat => openai_chat::format(results),
        Format::OpenAiResponses => openai_responses::format(results),
        Format::Anthropic => anthropic::format(results),
        Format::Gemini => gemini::format(results),
        Format::Mcp => mcp::format(results),
    }
}

fn describe_tool(tool: &ToolSpec) -> Value {
    let mut flags = Vec::new();
    if tool.flags.requires_approval() {
        flags.push("requires_approval");
    }
    if tool.flags.serial() {
        flags.push("serial");
    }
    if tool.flags.main_thread() {
        flags.push("main_thread");
    }
    if tool.flags.wait_for_response() {
        flags.push("wait_for_response");
    }
    if tool.flags.deferred() {
        flags.push("deferred");
    }
    let mut m = Map::new();
    m.insert("name".into(), json!(tool.name));
    m.insert("description".into(), json!(tool.description));
    m.insert("parameters".into(), parameters(tool));
    m.insert("flags".into(), json!(flags));
    if tool.timeout_ms > 0 {
        m.insert("timeout_ms".into(), json!(tool.timeout_ms));
    }
    if tool.max_output_chars > 0 {
        m.insert("max_output_chars".into(), json!(tool.max_output_chars));
    }
    if !tool.warnings.is_empty() {
        m.insert("warnings".into(), json!(tool.warnings));
    }
    if !tool.mcp.is_empty() {
        let mut mcp = Map::new();
        tool.mcp.write_mcp(&mut mcp);
        m.insert("mcp".into(), Value::Object(mcp));
    }
    Value::Object(m)
}

/// The parameters schema to export: a tool registered without one takes none.
fn parameters(tool: &ToolSpec) -> Value {
    match &tool.parameters {
        Value::Null => json!({"type": "object", "properties": {}}),
        other => other.clone(),
    }
}

/// The parameters for an OpenAI format, and whether they are strict.
fn openai_parameters(
    tool: &ToolSpec,
    opts: &ExportOptions,
    report: &mut Vec<ExportNote>,
) -> (Value, bool) {
    let params = parameters(tool);
    if !opts.strict {
        return (params, false);
    }
    match strict::normalize(&params) {
        Ok(strict) => (strict, true),
        Err(problems) => {
            for (pointer, message) in problems {
                report.push(ExportNote {
                    tool: tool.name.clone(),
                    pointer,
                    message: format!("not strict: {message}"),
                });
            }
            (params, false)
        }
    }
}

/// A result's content as JSON when it is JSON, else as a string.
fn content_value(content: &str) -> Value {
    serde_json::from_str(content).unwrap_or_else(|_| Value::String(content.to_owned()))
}

// --- helpers for reading provider bodies -----------------------------------

/// The error a provider reported in `error` (its error object, or a bare
/// string): the kind is the first of `kind_keys` present (a string or a
/// number; several are joined, e.g. Gemini's `status` and `code`), the
/// message its `message`. Anything else is shown as compact JSON.
fn provider_error(error: Option<&Value>, kind_keys: &[&str], fallback_kind: &str) -> Error {
    let scalar = |v: &Value| match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let (kind, message) = match error {
        Some(Value::Object(obj)) => {
            let mut kinds: Vec<String> = Vec::new();
            for key in kind_keys {
                if let Some(k) = obj.get(*key).and_then(scalar) {
                    if !kinds.contains(&k) {
                        kinds.push(k);
                    }
                }
            }
            let message = match obj.get("message") {
                Some(Value::String(m)) => m.clone(),
                _ => Value::Object(obj.clone()).to_string(),
            };
            (kinds.join(", "), message)
        }
        Some(Value::String(m)) => (String::new(), m.clone()),
        Some(other) => (String::new(), other.to_string()),
        None => (String::new(), "the provider gave no details".to_owned()),
    };
    let detail = match error {
        Some(Value::Object(obj)) => provider_detail(obj),
        _ => ProviderDetail::default(),
    };
    Error::ProviderError {
        kind: if kind.is_empty() {
            fallback_kind.to_owned()
        } else {
            kind
        },
        message,
        detail: Box::new(detail),
    }
}

/// The structured part of a provider's error object: its type or status
/// name, its code, an HTTP status (a numeric code from 100 to 599) and a
/// retry delay (a `google.rpc.RetryInfo` detail's `retryDelay`, `"37s"`).
fn provider_detail(obj: &Map<String, Value>) -> ProviderDetail {
    let text = |v: &Value| match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let error_type = ["type", "status"]
        .iter()
        .find_map(|k| obj.get(*k).filter(|v| v.is_string()).and_then(text));
    let code = obj.get("code").and_then(text);
    let http_status = ["code", "status"].iter().find_map(|k| {
        obj.get(*k)
            .and_then(Value::as_u64)
            .filter(|n| (100..=599).contains(n))
            .map(|n| n as u16)
    });
    let retry_after_ms = obj
        .get("details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|d| {
            d.get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|d| {
            d.get("retryDelay")
                .and_then(Value::as_str)
                .and_then(duration_ms)
        });
    ProviderDetail {
        error_type,
        code,
        http_status,
        retry_after_ms,
    }
}

/// A protobuf JSON duration (`"37s"`, `"1.5s"`) in milliseconds.
fn duration_ms(text: &str) -> Option<u64> {
    let seconds: f64 = text.strip_suffix('s')?.parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| (seconds * 1000.0).round() as u64)
}

/// The keys of an object, for messages about a body of the wrong shape.
fn keys_of(obj: &Map<String, Value>) -> String {
    let keys: Vec<String> = obj.keys().take(8).map(|k| format!("\"{k}\"")).collect();
    if keys.is_empty() {
        "an empty object".to_owned()
    } else {
        format!("an object with {}", keys.join(", "))
    }
}

fn invalid(path: &str, message: impl std::fmt::Display) -> Error {
    if path.is_empty() {
        Error::InvalidResponse(message.to_string())
    } else {
        Error::InvalidResponse(format!("{path}: {message}"))
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn at(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

/// The calls among `items` (at `path`): `parse` reads item `i` at its own path
/// and returns `None` for items that are not function calls.
fn calls_among(
    items: &[Value],
    path: &str,
    mut parse: impl FnMut(usize, &Value, &str) -> Result<Option<CallRequest>, Error>,
) -> Result<Vec<CallRequest>, Error> {
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        out.extend(parse(i, item, &at(path, i))?);
    }
    Ok(out)
}

fn object<'a>(value: &'a Value, path: &str, what: &str) -> Result<&'a Map<String, Value>, Error> {
    value
        .as_object()
        .ok_or_else(|| invalid(path, format!("{what} is not a JSON object")))
}

/// A required string field; `what` names the thing that should have it.
fn required_str(
    obj: &Map<String, Value>,
    key: &str,
    path: &str,
    what: &str,
) -> Result<String, Error> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        None | Some(Value::Null) => Err(invalid(path, format!("{what} has no \"{key}\""))),
        Some(_) => Err(invalid(path, format!("{what}: \"{key}\" must be a string"))),
    }
}

/// An optional array field: absent or null is empty.
fn optional_array<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a [Value], Error> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(invalid(path, format!("\"{key}\" must be an array"))),
    }
}

/// Arguments given as a JSON value: absent or null means none.
fn value_arguments(value: Option<&Value>) -> capstan_core::call::Arguments {
    match value {
        None | Some(Value::Null) => capstan_core::call::Arguments::Value(Value::Object(Map::new())),
        Some(v) => capstan_core::call::Arguments::Value(v.clone()),
    }
}

/// Arguments given as a JSON string (OpenAI): kept as text so a malformed one
/// is reported when executed, never replaced by `{}`.
fn text_arguments(value: Option<&Value>) -> capstan_core::call::Arguments {
    match value {
        Some(Value::String(s)) => capstan_core::call::Arguments::Text(s.clone()),
        other => value_arguments(other),
    }
}
