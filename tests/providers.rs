//! Provider formats: tool definitions out, calls in, results out.
//!
//! Inputs come from the providers' own specifications
//! (`shared/corpora/provider-spec`) and from fixtures written after each API
//! reference (`tests/fixtures/providers`).

use std::path::PathBuf;

use capstan::providers::{
    drop_strict_nulls, export_tools, format_results, name_report, parse_calls, strict_schema,
    ExportNote, ExportOptions, Format,
};
use capstan::{Arguments, CallRequest, Error, Outcome, ToolFlags, ToolResult, ToolSpec};
use serde_json::{json, Value};

// --- helpers ----------------------------------------------------------------

fn corpus(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpora/provider-spec")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/providers")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Same JSON, same key order.
#[track_caller]
fn assert_exact(actual: &Value, expected: &Value) {
    assert_eq!(
        serde_json::to_string_pretty(actual).unwrap(),
        serde_json::to_string_pretty(expected).unwrap()
    );
}

fn tool(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters,
        flags: ToolFlags::default(),
        timeout_ms: 0,
        max_output_chars: 0,
    }
}

fn weather_tool() -> ToolSpec {
    tool(
        "get_weather",
        "Current weather",
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["c", "f"], "default": "c"}
            },
            "required": ["city"]
        }),
    )
}

fn call(id: &str, name: &str, args: Value) -> CallRequest {
    CallRequest::new(id, name, args)
}

fn ok(id: &str, name: &str, content: &str) -> ToolResult {
    ToolResult::new(id, name, Outcome::Ok, content)
}

fn failed(id: &str, name: &str, outcome: Outcome, content: &str) -> ToolResult {
    ToolResult::new(id, name, outcome, content)
}

#[track_caller]
fn invalid_response(fmt: Format, body: &Value) -> String {
    match parse_calls(fmt, body) {
        Err(Error::InvalidResponse(message)) => message,
        other => panic!("expected InvalidResponse, got {other:?}"),
    }
}

fn no_options() -> ExportOptions {
    ExportOptions::default()
}

fn strict_options() -> ExportOptions {
    ExportOptions {
        strict: true,
        ..ExportOptions::default()
    }
}

fn lower_options() -> ExportOptions {
    ExportOptions {
        gemini_lower: true,
        ..ExportOptions::default()
    }
}

// --- Format -----------------------------------------------------------------

#[test]
fn format_names_round_trip_and_discriminants_follow_the_c_enum() {
    let expected = [
        (Format::Describe, "describe", 0),
        (Format::OpenAiChat, "openai_chat", 1),
        (Format::OpenAiResponses, "openai_responses", 2),
        (Format::Anthropic, "anthropic", 3),
        (Format::Gemini, "gemini", 4),
        (Format::Mcp, "mcp", 5),
    ];
    assert_eq!(Format::ALL.len(), expected.len());
    for (fmt, name, discriminant) in expected {
        assert_eq!(fmt.name(), name);
        assert_eq!(Format::parse(name), Some(fmt));
        assert_eq!(fmt as u32, discriminant);
    }
    assert_eq!(Format::parse("openai"), None);
    assert_eq!(Format::parse("Gemini"), None);
}

// --- OpenAI Chat Completions ------------------------------------------------

#[test]
fn openai_chat_export_reproduces_the_openapi_functions_example() {
    let example = corpus("openai_chat_completion_openapi_example_functions.json");
    let def = &example["request"]["tools"][0]["function"];
    let spec = tool(
        def["name"].as_str().unwrap(),
        def["description"].as_str().unwrap(),
        def["parameters"].clone(),
    );
    let export = export_tools(&[spec], Format::OpenAiChat, &no_options());
    assert_exact(&export.tools, &example["request"]["tools"]);
    assert!(export.report.is_empty());
}

#[test]
fn openai_chat_parses_the_openapi_functions_example() {
    let example = corpus("openai_chat_completion_openapi_example_functions.json");
    let calls = parse_calls(Format::OpenAiChat, &example["response"]).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "call_abc123");
    assert_eq!(calls[0].name, "get_current_weather");
    assert_eq!(
        calls[0].arguments,
        Arguments::Text("{\n\"location\": \"Boston, MA\"\n}".into())
    );
    assert_eq!(
        calls[0].arguments.clone().into_value().unwrap(),
        json!({"location": "Boston, MA"})
    );
}

#[test]
fn openai_chat_parses_parallel_calls_from_completion_message_or_tool_calls() {
    let body = fixture("openai_chat_parallel.json");
    let expected = vec![
        CallRequest {
            id: "call_Wx1".into(),
            name: "book_trip".into(),
            arguments: Arguments::Text(
                body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
                    .as_str()
                    .unwrap()
                    .into(),
            ),
        },
        CallRequest {
            id: "call_Wx2".into(),
            name: "get_time".into(),
            arguments: Arguments::Text("{}".into()),
        },
    ];
    let message = &body["choices"][0]["message"];
    assert_eq!(parse_calls(Format::OpenAiChat, &body).unwrap(), expected);
    assert_eq!(parse_calls(Format::OpenAiChat, message).unwrap(), expected);
    assert_eq!(
        parse_calls(Format::OpenAiChat, &message["tool_calls"]).unwrap(),
        expected
    );

    let nested = expected[0].arguments.clone().into_value().unwrap();
    assert_eq!(nested["traveler"]["name"], "Zoë Ørsted");
    assert_eq!(nested["traveler"]["tags"][1], "直行");
    assert_eq!(nested["legs"][0]["to"], "NRT");
    assert_eq!(nested["note"], "🚆 then ✈️");
    assert_eq!(
        expected[1].arguments.clone().into_value().unwrap(),
        json!({})
    );
}

#[test]
fn openai_chat_keeps_malformed_arguments_as_text() {
    let body = json!({"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Par"}}
    ]});
    let calls = parse_calls(Format::OpenAiChat, &body).unwrap();
    assert_eq!(
        calls[0].arguments,
        Arguments::Text("{\"city\": \"Par".into())
    );
    let error = calls[0].arguments.clone().into_value().unwrap_err();
    assert!(error.contains("not valid JSON"), "{error}");
}

#[test]
fn openai_chat_without_tool_calls_gives_no_calls() {
    let body = fixture("openai_chat_no_calls.json");
    assert!(parse_calls(Format::OpenAiChat, &body).unwrap().is_empty());
    assert!(parse_calls(Format::OpenAiChat, &json!({"choices": []}))
        .unwrap()
        .is_empty());
}

#[test]
fn openai_chat_reads_only_pending_calls_from_a_message_list() {
    let assistant = json!({"role": "assistant", "tool_calls": [
        {"id": "call_9", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
    ]});
    let pending = json!([{"role": "user", "content": "time?"}, assistant]);
    let calls = parse_calls(Format::OpenAiChat, &pending).unwrap();
    assert_eq!(
        calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["call_9"]
    );

    let answered = json!([
        {"role": "user", "content": "time?"},
        assistant,
        {"role": "tool", "tool_call_id": "call_9", "content": "12:00"}
    ]);
    assert!(parse_calls(Format::OpenAiChat, &answered)
        .unwrap()
        .is_empty());
}

#[test]
fn openai_chat_skips_tool_calls_that_are_not_functions() {
    let body = json!({"role": "assistant", "tool_calls": [
        {"id": "call_c", "type": "custom", "custom": {"name": "grammar_tool", "input": "x"}},
        {"id": "call_f", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
    ]});
    let calls = parse_calls(Format::OpenAiChat, &body).unwrap();
    assert_eq!(
        calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["call_f"]
    );
}

#[test]
fn openai_chat_missing_fields_are_named_by_path() {
    let mut body = fixture("openai_chat_parallel.json");
    let calls = &mut body["choices"][0]["message"]["tool_calls"];
    calls[1].as_object_mut().unwrap().remove("id");
    assert_eq!(
        invalid_response(Format::OpenAiChat, &body),
        "choices[0].message.tool_calls[1]: tool call has no \"id\""
    );

    let mut body = fixture("openai_chat_parallel.json");
    let function = &mut body["choices"][0]["message"]["tool_calls"][0]["function"];
    function.as_object_mut().unwrap().remove("name");
    assert_eq!(
        invalid_response(Format::OpenAiChat, &body),
        "choices[0].message.tool_calls[0].function: function has no \"name\""
    );

    let no_message = json!({"choices": [{"index": 0, "finish_reason": "stop"}]});
    assert_eq!(
        invalid_response(Format::OpenAiChat, &no_message),
        "choices[0]: choice has no \"message\""
    );
    assert!(invalid_response(Format::OpenAiChat, &json!("hello")).contains("expected"));
}

#[test]
fn openai_chat_results_are_tool_messages_in_order() {
    let results = [
        ok("call_Wx1", "book_trip", "{\"booked\":true}"),
        failed(
            "call_Wx2",
            "get_time",
            Outcome::Timeout,
            "get_time timed out after 5000 ms",
        ),
    ];
    assert_exact(
        &format_results(Format::OpenAiChat, &results),
        &json!([
            {"role": "tool", "tool_call_id": "call_Wx1", "content": "{\"booked\":true}"},
            {"role": "tool", "tool_call_id": "call_Wx2", "content": "get_time timed out after 5000 ms"}
        ]),
    );
}

// --- OpenAI Responses -------------------------------------------------------

#[test]
fn openai_responses_export_is_flat_and_always_says_strict() {
    let example = corpus("openai_responses_openapi_example_functions.json");
    let def = &example["request"]["tools"][0];
    let spec = tool(
        def["name"].as_str().unwrap(),
        def["description"].as_str().unwrap(),
        def["parameters"].clone(),
    );
    let export = export_tools(&[spec], Format::OpenAiResponses, &no_options());
    let mut expected = def.clone();
    expected["strict"] = json!(false);
    assert_exact(&export.tools, &json!([expected]));
}

#[test]
fn openai_responses_parses_the_openapi_functions_example_with_call_id() {
    let example = corpus("openai_responses_openapi_example_functions.json");
    let calls = parse_calls(Format::OpenAiResponses, &example["response"]).unwrap();
    assert_eq!(
        calls,
        vec![CallRequest {
            id: "call_unLAR8MvFNptuiZK6K6HCy5k".into(),
            name: "get_current_weather".into(),
            arguments: Arguments::Text("{\"location\":\"Boston, MA\",\"unit\":\"celsius\"}".into()),
        }]
    );
}

#[test]
fn openai_responses_reads_function_calls_among_other_items() {
    let body = fixture("openai_responses_parallel.json");
    let calls = parse_calls(Format::OpenAiResponses, &body).unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("call_Par1s", "get_weather")
    );
    assert_eq!(
        calls[0].arguments.clone().into_value().unwrap(),
        json!({"city": "Paris", "when": {"day": "tomorrow"}})
    );
    assert_eq!(calls[1].id, "call_T0ky0");
    assert_eq!(
        calls[1].arguments.clone().into_value().unwrap(),
        json!({"city": "東京"})
    );
    assert_eq!(
        parse_calls(Format::OpenAiResponses, &body["output"]).unwrap(),
        calls
    );
    assert_eq!(
        parse_calls(Format::OpenAiResponses, &body["output"][3]).unwrap(),
        calls[1..]
    );
    assert!(parse_calls(Format::OpenAiResponses, &body["output"][1])
        .unwrap()
        .is_empty());
}

#[test]
fn openai_responses_missing_call_id_is_named_by_path() {
    let mut body = fixture("openai_responses_parallel.json");
    body["output"][3].as_object_mut().unwrap().remove("call_id");
    assert_eq!(
        invalid_response(Format::OpenAiResponses, &body),
        "output[3]: function_call item has no \"call_id\""
    );
}

#[test]
fn openai_responses_results_are_function_call_outputs() {
    let results = [
        ok("call_Par1s", "get_weather", "18°C"),
        failed(
            "call_T0ky0",
            "get_weather",
            Outcome::ToolError,
            "service down",
        ),
    ];
    assert_exact(
        &format_results(Format::OpenAiResponses, &results),
        &json!([
            {"type": "function_call_output", "call_id": "call_Par1s", "output": "18°C"},
            {"type": "function_call_output", "call_id": "call_T0ky0", "output": "service down"}
        ]),
    );
}

// --- OpenAI strict mode -------------------------------------------------------

#[test]
fn strict_mode_requires_every_property_and_makes_optional_ones_nullable() {
    let example = corpus("openai_chat_completion_openapi_example_functions.json");
    let params = &example["request"]["tools"][0]["function"]["parameters"];
    assert_exact(
        &strict_schema(params).unwrap(),
        &json!({
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                "unit": {"type": ["string", "null"], "enum": ["celsius", "fahrenheit", null]}
            },
            "required": ["location", "unit"],
            "additionalProperties": false
        }),
    );
}

#[test]
fn strict_mode_closes_nested_objects_and_removes_defaults() {
    let schema = json!({
        "type": "object",
        "properties": {
            "filter": {
                "type": "object",
                "properties": {"tag": {"type": "string", "default": "all"}},
                "required": ["tag"]
            },
            "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "string"}]}
        },
        "required": ["filter", "steps"],
        "$defs": {
            "step": {"type": "object", "properties": {"say": {"type": "string"}, "wait": {"type": "number"}}, "required": ["say"]}
        }
    });
    assert_exact(
        &strict_schema(&schema).unwrap(),
        &json!({
            "type": "object",
            "properties": {
                "filter": {
                    "type": "object",
                    "properties": {"tag": {"type": "string"}},
                    "required": ["tag"],
                    "additionalProperties": false
                },
                "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}},
                "limit": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}
            },
            "required": ["filter", "steps", "limit"],
            "$defs": {
                "step": {
                    "type": "object",
                    "properties": {"say": {"type": "string"}, "wait": {"type": ["number", "null"]}},
                    "required": ["say", "wait"],
                    "additionalProperties": false
                }
            },
            "additionalProperties": false
        }),
    );
}

#[test]
fn strict_mode_refuses_open_objects_and_unsupported_keywords_with_reasons() {
    let schema = json!({
        "type": "object",
        "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "extra": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true},
            "meta": {"type": "object"},
            "headers": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}},
            "range": {"allOf": [{"type": "integer"}, {"minimum": 0}]},
            "anything": {}
        }
    });
    let problems = strict_schema(&schema).unwrap_err();
    let starts: Vec<&str> = problems
        .iter()
        .map(|p| p.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        starts,
        [
            "/properties/labels/additionalProperties",
            "/properties/extra/additionalProperties",
            "/properties/meta",
            "/properties/headers/patternProperties",
            "/properties/range/allOf",
            "/properties/anything",
        ],
        "{problems:#?}"
    );
    assert!(
        problems[0].contains("additionalProperties as a schema"),
        "{}",
        problems[0]
    );
    assert!(
        problems[2].contains("without \"properties\""),
        "{}",
        problems[2]
    );
    assert!(problems[5].contains("no type"), "{}", problems[5]);
}

#[test]
fn strict_mode_refuses_a_root_that_is_a_union() {
    let example = corpus("mcp_spec_examples/mcp_Tool__tool-with-composition-input-schema.json");
    let problems = strict_schema(&example["inputSchema"]).unwrap_err();
    assert_eq!(
        problems,
        ["/oneOf: oneOf is not supported in strict mode (only anyOf is)"]
    );
    let any_of = json!({"anyOf": [{"type": "object", "properties": {}}]});
    let problems = strict_schema(&any_of).unwrap_err();
    assert_eq!(problems[0], "(root): the root must be an object, not anyOf");
}

#[test]
fn strict_export_marks_strict_tools_and_reports_the_others() {
    let loose = tool(
        "tag",
        "Tag things",
        json!({"type": "object", "properties": {"tags": {"type": "object", "additionalProperties": true}}}),
    );
    let export = export_tools(
        &[weather_tool(), loose.clone()],
        Format::OpenAiChat,
        &strict_options(),
    );
    assert_exact(
        &export.tools,
        &json!([
            {"type": "function", "function": {
                "name": "get_weather",
                "description": "Current weather",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "description": "City name"},
                        "unit": {"type": ["string", "null"], "enum": ["c", "f", null]}
                    },
                    "required": ["city", "unit"],
                    "additionalProperties": false
                },
                "strict": true
            }},
            {"type": "function", "function": {
                "name": "tag",
                "description": "Tag things",
                "parameters": loose.parameters
            }}
        ]),
    );
    assert_eq!(
        export.report,
        [ExportNote {
            tool: "tag".into(),
            pointer: "/properties/tags/additionalProperties".into(),
            message: "not strict: additionalProperties: true allows keys that are not listed; strict mode requires false".into(),
        }]
    );

    let responses = export_tools(
        &[weather_tool(), loose],
        Format::OpenAiResponses,
        &strict_options(),
    );
    assert_eq!(responses.tools[0]["strict"], json!(true));
    assert_eq!(
        responses.tools[0]["parameters"]["additionalProperties"],
        json!(false)
    );
    assert_eq!(responses.tools[1]["strict"], json!(false));
    assert_eq!(responses.report.len(), 1);
}

#[test]
fn strict_nulls_for_left_out_properties_are_dropped_before_validation() {
    let schema = json!({
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string"},
            "note": {"type": ["string", "null"]},
            "step": {"$ref": "#/$defs/step"}
        },
        "required": ["city"],
        "$defs": {"step": {"type": "object", "properties": {"wait": {"type": "number"}}}}
    });
    let mut args = json!({"city": null, "unit": null, "note": null, "step": {"wait": null}});
    drop_strict_nulls(&schema, &mut args);
    // A required null and a nullable property keep their null: validation decides.
    assert_exact(&args, &json!({"city": null, "note": null, "step": {}}));
}

// --- Anthropic ----------------------------------------------------------------

#[test]
fn anthropic_export_uses_input_schema() {
    let export = export_tools(&[weather_tool()], Format::Anthropic, &strict_options());
    assert_exact(
        &export.tools,
        &json!([{
            "name": "get_weather",
            "description": "Current weather",
            "input_schema": weather_tool().parameters
        }]),
    );
    assert!(export.report.is_empty());
}

#[test]
fn anthropic_parses_parallel_tool_use_blocks_from_message_content_or_block() {
    let body = fixture("anthropic_parallel.json");
    let expected = vec![
        call(
            "toolu_01A",
            "get_weather",
            json!({"location": "São Paulo, BR", "options": {"unit": "celsius", "days": [1, 2]}}),
        ),
        call("toolu_01B", "get_time", json!({})),
    ];
    assert_eq!(parse_calls(Format::Anthropic, &body).unwrap(), expected);
    assert_eq!(
        parse_calls(Format::Anthropic, &body["content"]).unwrap(),
        expected
    );
    assert_eq!(
        parse_calls(Format::Anthropic, &body["content"][2]).unwrap(),
        expected[1..]
    );
}

#[test]
fn anthropic_without_tool_use_gives_no_calls() {
    assert!(
        parse_calls(Format::Anthropic, &fixture("anthropic_no_calls.json"))
            .unwrap()
            .is_empty()
    );
    let text_only = json!({"role": "assistant", "content": "plain text"});
    assert!(parse_calls(Format::Anthropic, &text_only)
        .unwrap()
        .is_empty());
}

#[test]
fn anthropic_missing_fields_are_named_by_path() {
    let mut body = fixture("anthropic_parallel.json");
    body["content"][2].as_object_mut().unwrap().remove("name");
    assert_eq!(
        invalid_response(Format::Anthropic, &body),
        "content[2]: tool_use block has no \"name\""
    );
    let mut body = fixture("anthropic_parallel.json");
    body["content"][1]["id"] = json!(17);
    assert_eq!(
        invalid_response(Format::Anthropic, &body),
        "content[1]: tool_use block: \"id\" must be a string"
    );
}

#[test]
fn anthropic_results_are_one_user_message_with_is_error_only_when_true() {
    let results = [
        ok("toolu_01A", "get_weather", "{\"temp\": 24}"),
        failed(
            "toolu_01B",
            "get_time",
            Outcome::InvalidArguments,
            "argument /tz: expected a string",
        ),
    ];
    assert_exact(
        &format_results(Format::Anthropic, &results),
        &json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "{\"temp\": 24}"},
            {"type": "tool_result", "tool_use_id": "toolu_01B", "content": "argument /tz: expected a string", "is_error": true}
        ]}),
    );
}

// --- Gemini -------------------------------------------------------------------

#[test]
fn gemini_export_is_one_tool_with_json_schema_declarations() {
    let no_params = tool(
        "get_time",
        "Current time",
        json!({"type": "object", "properties": {}}),
    );
    let export = export_tools(&[weather_tool(), no_params], Format::Gemini, &no_options());
    assert_exact(
        &export.tools,
        &json!([{"functionDeclarations": [
            {"name": "get_weather", "description": "Current weather", "parametersJsonSchema": weather_tool().parameters},
            {"name": "get_time", "description": "Current time", "parametersJsonSchema": {"type": "object", "properties": {}}}
        ]}]),
    );
    assert!(export.report.is_empty());
}

#[test]
fn gemini_lowering_inlines_refs_and_reports_every_drop() {
    let spec = tool(
        "plan",
        "Plan a route",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "stops": {"type": "array", "items": {"$ref": "#/$defs/stop"}, "minItems": 1},
                "mode": {"const": "walk"},
                "note": {"type": ["string", "null"], "format": "uri"},
                "meta": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}, "additionalProperties": {"type": "string"}},
                "when": {"oneOf": [{"type": "string", "format": "date-time"}, {"type": "integer"}]}
            },
            "required": ["stops"],
            "additionalProperties": false,
            "$defs": {
                "stop": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "dwell": {"type": "integer", "exclusiveMinimum": 0}},
                    "required": ["name"],
                    "additionalProperties": false
                }
            }
        }),
    );
    let export = export_tools(&[spec], Format::Gemini, &lower_options());
    assert_exact(
        &export.tools,
        &json!([{"functionDeclarations": [{
            "name": "plan",
            "description": "Plan a route",
            "parameters": {
                "type": "OBJECT",
                "properties": {
                    "stops": {
                        "type": "ARRAY",
                        "items": {
                            "type": "OBJECT",
                            "properties": {"name": {"type": "STRING"}, "dwell": {"type": "INTEGER"}},
                            "required": ["name"]
                        },
                        "minItems": 1
                    },
                    "mode": {"enum": ["walk"], "type": "STRING"},
                    "note": {"nullable": true, "type": "STRING"},
                    "meta": {"type": "OBJECT"},
                    "when": {"anyOf": [{"type": "STRING", "format": "date-time"}, {"type": "INTEGER"}]}
                },
                "required": ["stops"]
            }
        }]}]),
    );
    let report: Vec<(&str, &str)> = export
        .report
        .iter()
        .map(|n| (n.pointer.as_str(), n.message.split(':').next().unwrap()))
        .collect();
    assert_eq!(
        report,
        [
            ("/$schema", "$schema dropped"),
            (
                "/$defs/stop/properties/dwell/exclusiveMinimum",
                "exclusiveMinimum dropped"
            ),
            (
                "/$defs/stop/additionalProperties",
                "additionalProperties dropped"
            ),
            ("/properties/note/format", "format dropped"),
            ("/properties/meta/propertyNames", "propertyNames dropped"),
            (
                "/properties/meta/additionalProperties",
                "additionalProperties dropped"
            ),
            ("/properties/when/oneOf", "oneOf lowered to anyOf"),
            ("/additionalProperties", "additionalProperties dropped"),
            ("/$defs", "$defs dropped"),
        ],
    );
    assert!(export.report.iter().all(|n| n.tool == "plan"));
}

#[test]
fn gemini_lowering_cuts_recursive_refs_and_omits_empty_parameters() {
    let tree = tool(
        "tree",
        "A tree",
        json!({"type": "object", "properties": {
            "root": {"$ref": "#/$defs/node"}
        }, "$defs": {"node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
        }}}}),
    );
    let none = tool(
        "ping",
        "Ping",
        json!({"type": "object", "additionalProperties": false}),
    );
    let export = export_tools(&[tree, none], Format::Gemini, &lower_options());
    let decls = &export.tools[0]["functionDeclarations"];
    assert_exact(
        &decls[0]["parameters"]["properties"]["root"],
        &json!({"type": "OBJECT", "properties": {"children": {"type": "ARRAY", "items": {"type": "OBJECT"}}}}),
    );
    assert_exact(&decls[1], &json!({"name": "ping", "description": "Ping"}));
    let recursive = export
        .report
        .iter()
        .find(|n| n.pointer == "/$defs/node/properties/children/items/$ref")
        .expect("recursive $ref reported");
    assert!(
        recursive.message.contains("recursive"),
        "{}",
        recursive.message
    );
}

#[test]
fn gemini_synthesizes_stable_ids_from_position_when_none_are_sent() {
    let body = fixture("gemini_parallel.json");
    let expected = vec![
        call(
            "gemini_call_0_1",
            "set_light",
            json!({"room": "kök", "level": {"brightness": 25, "warm": true}}),
        ),
        call("gemini_call_0_2", "get_time", json!({})),
    ];
    assert_eq!(parse_calls(Format::Gemini, &body).unwrap(), expected);
    let content = &body["candidates"][0]["content"];
    assert_eq!(parse_calls(Format::Gemini, content).unwrap(), expected);
    assert_eq!(
        parse_calls(Format::Gemini, &content["parts"]).unwrap(),
        expected
    );
}

#[test]
fn gemini_keeps_ids_it_is_sent_and_echoes_them_back() {
    let body = fixture("gemini_with_ids.json");
    let calls = parse_calls(Format::Gemini, &body).unwrap();
    assert_eq!(
        calls,
        vec![
            call("fc-7d1e", "get_weather", json!({"city": "Paris"})),
            call("fc-8a2f", "get_weather", json!({"city": "London"})),
        ]
    );
    let results = [
        ok(
            "fc-7d1e",
            "get_weather",
            "{\"temp\": 18, \"sky\": \"cloudy\"}",
        ),
        failed(
            "fc-8a2f",
            "get_weather",
            Outcome::ToolError,
            "upstream returned 503",
        ),
    ];
    assert_exact(
        &format_results(Format::Gemini, &results),
        &json!({"role": "user", "parts": [
            {"functionResponse": {"id": "fc-7d1e", "name": "get_weather", "response": {"output": {"temp": 18, "sky": "cloudy"}}}},
            {"functionResponse": {"id": "fc-8a2f", "name": "get_weather", "response": {"error": "upstream returned 503"}}}
        ]}),
    );
}

#[test]
fn gemini_never_sends_back_ids_it_did_not_issue() {
    let results = [
        ok("gemini_call_0_1", "set_light", "done"),
        ok("gemini_call_0_2", "get_time", "[12, 0]"),
    ];
    assert_exact(
        &format_results(Format::Gemini, &results),
        &json!({"role": "user", "parts": [
            {"functionResponse": {"name": "set_light", "response": {"output": "done"}}},
            {"functionResponse": {"name": "get_time", "response": {"output": [12, 0]}}}
        ]}),
    );
}

#[test]
fn gemini_without_function_calls_gives_no_calls() {
    let text = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hi"}]}, "finishReason": "STOP"}]});
    assert!(parse_calls(Format::Gemini, &text).unwrap().is_empty());
    let blocked = json!({"candidates": [{"finishReason": "SAFETY"}]});
    assert!(parse_calls(Format::Gemini, &blocked).unwrap().is_empty());
    let prompt_blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}, "candidates": []});
    assert!(parse_calls(Format::Gemini, &prompt_blocked)
        .unwrap()
        .is_empty());
}

#[test]
fn gemini_missing_name_is_named_by_path() {
    let mut body = fixture("gemini_parallel.json");
    body["candidates"][0]["content"]["parts"][2]["functionCall"]
        .as_object_mut()
        .unwrap()
        .remove("name");
    assert_eq!(
        invalid_response(Format::Gemini, &body),
        "candidates[0].content.parts[2].functionCall: functionCall has no \"name\""
    );
}

// --- MCP ----------------------------------------------------------------------

#[test]
fn mcp_export_reproduces_the_spec_tool_examples() {
    for name in [
        "mcp_Tool__with-default-2020-12-input-schema.json",
        "mcp_Tool__with-explicit-draft-07-input-schema.json",
        "mcp_Tool__with-no-parameters.json",
        "mcp_Tool__tool-with-composition-input-schema.json",
    ] {
        let example = corpus(&format!("mcp_spec_examples/{name}"));
        let spec = tool(
            example["name"].as_str().unwrap(),
            example["description"].as_str().unwrap(),
            example["inputSchema"].clone(),
        );
        let export = export_tools(&[spec], Format::Mcp, &no_options());
        let expected = json!([{
            "name": example["name"],
            "description": example["description"],
            "inputSchema": example["inputSchema"]
        }]);
        assert_exact(&export.tools, &expected);
    }
}

#[test]
fn mcp_export_adds_no_annotations_for_capstan_flags() {
    let mut spec = weather_tool();
    spec.flags = ToolFlags(ToolFlags::REQUIRES_APPROVAL | ToolFlags::SERIAL);
    let export = export_tools(&[spec], Format::Mcp, &no_options());
    assert_eq!(
        export.tools[0]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["name", "description", "inputSchema"]
    );
}

#[test]
fn mcp_parses_the_spec_tools_call_request_and_its_params() {
    let request = corpus("mcp_spec_examples/mcp_CallToolRequest__call-tool-request.json");
    assert_eq!(
        parse_calls(Format::Mcp, &request).unwrap(),
        vec![call(
            "call-tool-example",
            "get_weather",
            json!({"location": "New York"})
        )]
    );
    let params = corpus(
        "mcp_spec_examples/mcp_CallToolRequestParams__tool-call-params-with-progress-token.json",
    );
    assert_eq!(
        parse_calls(Format::Mcp, &params).unwrap(),
        vec![call(
            "mcp_call_0",
            "build_simulation",
            json!({"city": "Micropolis"})
        )]
    );
}

#[test]
fn mcp_takes_numeric_ids_and_arrays_of_requests() {
    let batch = fixture("mcp_tools_call_batch.json");
    assert_eq!(
        parse_calls(Format::Mcp, &batch["requests"]).unwrap(),
        vec![
            call("7", "get_weather", json!({"location": "Zürich"})),
            call("req-8", "get_current_time", json!({})),
        ]
    );
}

#[test]
fn mcp_other_methods_and_missing_names_are_clear_errors() {
    let list = corpus("mcp_spec_examples/mcp_ListToolsRequest__list-tools-request.json");
    assert_eq!(
        invalid_response(Format::Mcp, &list),
        "method is \"tools/list\", not \"tools/call\""
    );
    let mut batch = fixture("mcp_tools_call_batch.json");
    batch["requests"][1]["params"]
        .as_object_mut()
        .unwrap()
        .remove("name");
    assert_eq!(
        invalid_response(Format::Mcp, &batch["requests"]),
        "[1].params: tools/call params has no \"name\""
    );
}

#[test]
fn mcp_results_match_the_spec_call_tool_result_examples() {
    let text = corpus("mcp_spec_examples/mcp_CallToolResult__result-with-unstructured-text.json");
    let content = text["content"][0]["text"].as_str().unwrap();
    let out = format_results(
        Format::Mcp,
        &[ok("call-tool-example", "get_weather", content)],
    );
    assert_eq!(out, json!([text]));

    let response =
        corpus("mcp_spec_examples/mcp_CallToolResultResponse__call-tool-result-response.json");
    assert_eq!(out[0], response["result"]);

    let error = corpus("mcp_spec_examples/mcp_CallToolResult__invalid-tool-input-error.json");
    let message = error["content"][0]["text"].as_str().unwrap();
    let out = format_results(
        Format::Mcp,
        &[failed("c1", "book_flight", Outcome::ToolError, message)],
    );
    assert_exact(&out, &json!([error]));

    let structured =
        corpus("mcp_spec_examples/mcp_CallToolResult__result-with-structured-content.json");
    let json_text = structured["content"][0]["text"].as_str().unwrap();
    let out = format_results(Format::Mcp, &[ok("c2", "get_weather_data", json_text)]);
    let mut expected = structured.clone();
    expected["isError"] = json!(false);
    assert_exact(&out, &json!([expected]));
}

#[test]
fn mcp_results_are_always_an_array_and_errors_carry_no_structured_content() {
    let results = [
        ok("1", "a", "[1, 2]"),
        failed("2", "b", Outcome::UnknownTool, "{\"error\": \"no tool b\"}"),
    ];
    assert_exact(
        &format_results(Format::Mcp, &results),
        &json!([
            {"resultType": "complete", "content": [{"type": "text", "text": "[1, 2]"}], "isError": false},
            {"resultType": "complete", "content": [{"type": "text", "text": "{\"error\": \"no tool b\"}"}], "isError": true}
        ]),
    );
    assert_eq!(format_results(Format::Mcp, &[]), json!([]));
}

// --- describe -------------------------------------------------------------------

#[test]
fn describe_export_lists_flags_and_limits() {
    let mut spec = weather_tool();
    spec.flags = ToolFlags(ToolFlags::REQUIRES_APPROVAL | ToolFlags::MAIN_THREAD);
    spec.timeout_ms = 2500;
    let plain = tool("get_time", "Current time", Value::Null);
    let export = export_tools(&[spec, plain], Format::Describe, &strict_options());
    assert_exact(
        &export.tools,
        &json!([
            {
                "name": "get_weather",
                "description": "Current weather",
                "parameters": weather_tool().parameters,
                "flags": ["requires_approval", "main_thread"],
                "timeout_ms": 2500
            },
            {
                "name": "get_time",
                "description": "Current time",
                "parameters": {"type": "object", "properties": {}},
                "flags": []
            }
        ]),
    );
}

#[test]
fn describe_parses_normalized_calls_and_formats_normalized_results() {
    let calls = json!([
        {"id": "a", "name": "get_weather", "arguments": {"city": "Oslo"}},
        {"id": "b", "name": "get_weather", "arguments": "{\"city\":"}
    ]);
    let parsed = parse_calls(Format::Describe, &calls).unwrap();
    assert_eq!(parsed[0], call("a", "get_weather", json!({"city": "Oslo"})));
    assert_eq!(parsed[1].arguments, Arguments::Text("{\"city\":".into()));

    let results_json = json!([
        {"id": "a", "name": "get_weather", "content": "5°C", "is_error": false, "outcome": "ok", "duration_us": 12},
        {"id": "b", "name": "get_weather", "content": "arguments are not valid JSON", "is_error": true, "outcome": "invalid_arguments", "duration_us": 0}
    ]);
    let results = ToolResult::list_from_json(&results_json).unwrap();
    assert_exact(&format_results(Format::Describe, &results), &results_json);
}

// --- round trips ----------------------------------------------------------------

/// The ids an answer carries, in order (MCP results carry none: the host
/// puts each in its JSON-RPC response, so one result per call is checked).
fn answer_ids(fmt: Format, answered: &Value) -> Vec<String> {
    let text = |v: &Value| v.as_str().unwrap().to_owned();
    match fmt {
        Format::OpenAiChat => answered
            .as_array()
            .unwrap()
            .iter()
            .map(|m| text(&m["tool_call_id"]))
            .collect(),
        Format::OpenAiResponses => answered
            .as_array()
            .unwrap()
            .iter()
            .map(|m| text(&m["call_id"]))
            .collect(),
        Format::Anthropic => answered["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| text(&b["tool_use_id"]))
            .collect(),
        Format::Gemini => answered["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| text(&p["functionResponse"]["id"]))
            .collect(),
        Format::Mcp | Format::Describe => answered
            .as_array()
            .unwrap()
            .iter()
            .map(|_| String::new())
            .collect(),
    }
}

/// Parsing a response, answering every call, and formatting the answers links
/// each answer to its call by the provider's own id field.
#[test]
fn every_format_answers_each_call_under_its_own_id() {
    let cases = [
        (Format::OpenAiChat, fixture("openai_chat_parallel.json")),
        (
            Format::OpenAiResponses,
            fixture("openai_responses_parallel.json"),
        ),
        (Format::Anthropic, fixture("anthropic_parallel.json")),
        (Format::Gemini, fixture("gemini_with_ids.json")),
        (
            Format::Mcp,
            fixture("mcp_tools_call_batch.json")["requests"].clone(),
        ),
    ];
    for (fmt, body) in cases {
        let calls = parse_calls(fmt, &body).unwrap();
        assert!(calls.len() >= 2, "{}", fmt.name());
        let results: Vec<ToolResult> = calls.iter().map(|c| ok(&c.id, &c.name, "done")).collect();
        let answered = format_results(fmt, &results);
        let expected: Vec<String> = match fmt {
            Format::Mcp => vec![String::new(); calls.len()],
            _ => calls.iter().map(|c| c.id.clone()).collect(),
        };
        assert_eq!(answer_ids(fmt, &answered), expected, "{}", fmt.name());
    }
}

// --- names ----------------------------------------------------------------------

#[test]
fn name_report_says_which_providers_accept_each_name() {
    let long65 = "a".repeat(65);
    let long129 = "b".repeat(129);
    let names = [
        "get_weather",
        "admin.tools.list",
        "ns:tool",
        "1st-tool",
        long65.as_str(),
        long129.as_str(),
        "wetter für ort",
        "",
    ];
    let report = name_report(&names);
    let verdicts: Vec<(bool, bool, bool, bool)> = report
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["openai"].as_bool().unwrap(),
                r["anthropic"].as_bool().unwrap(),
                r["gemini"].as_bool().unwrap(),
                r["mcp"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            (true, true, true, true),
            (false, false, true, true),
            (false, false, true, false),
            (true, true, false, true),
            (false, false, false, true),
            (false, false, false, false),
            (false, false, false, false),
            (false, false, false, false),
        ]
    );
    assert_exact(
        &report[1],
        &json!({
            "name": "admin.tools.list",
            "openai": false,
            "anthropic": false,
            "gemini": true,
            "mcp": true,
            "problems": [
                "openai: contains '.' (allowed: A-Z a-z 0-9 _ -)",
                "anthropic: contains '.' (allowed: A-Z a-z 0-9 _ -)"
            ]
        }),
    );
    assert_eq!(
        report[3]["problems"],
        json!(["gemini: must start with a letter or an underscore"])
    );
    assert_eq!(
        report[4]["problems"][0],
        "openai: is 65 characters long, more than 64"
    );
    assert_eq!(
        report[6]["problems"][0],
        "openai: contains ' ', 'ü' (allowed: A-Z a-z 0-9 _ -)"
    );
    assert_eq!(report[7]["problems"][0], "openai: is empty");
}

#[test]
fn export_reports_names_the_format_would_refuse() {
    let dotted = tool(
        "admin.tools.list",
        "List",
        json!({"type": "object", "properties": {}}),
    );
    for (fmt, refused) in [
        (Format::OpenAiChat, true),
        (Format::OpenAiResponses, true),
        (Format::Anthropic, true),
        (Format::Gemini, false),
        (Format::Mcp, false),
        (Format::Describe, false),
    ] {
        let export = export_tools(std::slice::from_ref(&dotted), fmt, &no_options());
        assert_eq!(!export.report.is_empty(), refused, "{}", fmt.name());
        if refused {
            assert_eq!(export.report[0].pointer, "");
            assert!(
                export.report[0].message.contains("'.'"),
                "{}",
                export.report[0].message
            );
        }
    }
}
