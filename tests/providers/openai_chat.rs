//! OpenAI Chat Completions.

use super::*;

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

#[test]
fn openai_chat_empty_argument_text_means_no_arguments() {
    // Models send "" (or whitespace) for a tool that takes no arguments.
    for text in ["", "  \n"] {
        let body = json!({"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "get_time", "arguments": text}}]});
        let calls = parse_calls(Format::OpenAiChat, &body).unwrap();
        assert_eq!(calls[0].arguments.clone().into_value(), Ok(json!({})));
    }
    // Anything else that is not JSON stays an error the model can read.
    let bad = Arguments::Text("{\"a\":".into()).into_value().unwrap_err();
    assert!(bad.starts_with("arguments are not valid JSON"), "{bad}");
}
