//! Anthropic.

use super::*;

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
