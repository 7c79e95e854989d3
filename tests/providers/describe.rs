//! describe.

use super::*;

#[test]
fn describe_export_lists_flags_and_limits() {
    let mut spec = weather_tool();
    spec.flags = ToolFlags(ToolFlags::REQUIRES_APPROVAL | ToolFlags::MAIN_THREAD);
    spec.timeout_ms = 2500;
    spec.max_output_chars = 4000;
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
                "timeout_ms": 2500,
                "max_output_chars": 4000
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
