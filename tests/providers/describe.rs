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

#[test]
fn describe_takes_one_call_object_as_well_as_an_array() {
    let one = json!({"id": "a", "name": "get_weather", "arguments": {"city": "Oslo"}});
    assert_eq!(
        parse_calls(Format::Describe, &one).unwrap(),
        vec![call("a", "get_weather", json!({"city": "Oslo"}))]
    );
    assert!(matches!(
        parse_calls(Format::Describe, &json!("a")),
        Err(Error::InvalidCalls(_))
    ));
}

#[test]
fn results_read_back_take_one_object_and_is_error_without_an_outcome() {
    // What capstan_format_write_results reads: the results capstan handed out, or
    // a host's own, where "is_error" alone says the tool failed.
    let failed = json!({"id": "a", "name": "f", "content": "boom", "is_error": true});
    let read = ToolResult::list_from_json(&failed).unwrap();
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].outcome, Outcome::ToolError);
    assert!(read[0].is_error());
    let fine = json!([{"id": "b", "name": "f", "content": "ok", "is_error": false},
                      {"id": "c", "name": "f", "content": "ok"},
                      {"id": "d", "name": "f", "content": "", "is_error": false, "outcome": "timeout"}]);
    let read = ToolResult::list_from_json(&fine).unwrap();
    assert_eq!(read[0].outcome, Outcome::Ok);
    assert_eq!(read[1].outcome, Outcome::Ok);
    assert_eq!(read[2].outcome, Outcome::Timeout, "an outcome given wins");
    assert!(matches!(
        ToolResult::list_from_json(&json!(3)),
        Err(Error::InvalidResults(_))
    ));
}

#[test]
fn results_written_straight_to_text_equal_the_json_tree() {
    // capstan_registry_execute's output is written without building a tree; it must
    // be the same text as the tree's (ids shorter and longer than names).
    let results = vec![
        ok("a", "get_weather", "{\"temp\":21}"),
        failed(
            "call_with_a_long_id_0123456789",
            "f",
            Outcome::InvalidArguments,
            "bad \"city\"\n\u{1F600}",
        ),
        ok("", "", ""),
    ];
    assert_eq!(
        capstan::call::results_to_string(&results),
        capstan::call::results_to_json(&results).to_string()
    );
    assert_eq!(capstan::call::results_to_string(&[]), "[]");
}
