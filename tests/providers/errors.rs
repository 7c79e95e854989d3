//! A provider's error body is an error, never "the model called no tools";
//! a body of another shape is an invalid response; and one call's unreadable
//! arguments fail that call only.

use super::*;
use capstan::providers::parse_calls_text;

#[track_caller]
fn provider_error(fmt: Format, body: &Value) -> (String, String) {
    match parse_calls(fmt, body) {
        Err(Error::ProviderError { kind, message, .. }) => {
            // The text a C host reads from capstan_error_message.
            let shown = Error::provider(kind.clone(), message.clone()).to_string();
            assert!(shown.contains(&kind) && shown.contains(&message), "{shown}");
            (kind, message)
        }
        other => panic!("{}: expected ProviderError, got {other:?}", fmt.name()),
    }
}

#[test]
fn openai_chat_error_body_is_a_provider_error_with_its_type_and_message() {
    let body = json!({"error": {
        "message": "The model `gpt-9` does not exist or you do not have access to it.",
        "type": "invalid_request_error", "param": null, "code": "model_not_found"}});
    let (kind, message) = provider_error(Format::OpenAiChat, &body);
    assert_eq!(kind, "invalid_request_error, model_not_found");
    assert!(message.starts_with("The model `gpt-9` does not exist"));

    let rate = json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}});
    assert_eq!(
        provider_error(Format::OpenAiChat, &rate),
        (
            "requests, rate_limit_exceeded".into(),
            "Rate limit reached".into()
        )
    );
    // A bare string error, as some gateways send it.
    assert_eq!(
        provider_error(Format::OpenAiChat, &json!({"error": "upstream timeout"})),
        ("error".into(), "upstream timeout".into())
    );
}

#[test]
fn openai_chat_object_of_another_shape_is_an_invalid_response() {
    let message = invalid_response(Format::OpenAiChat, &json!({"foo": 1}));
    assert!(message.contains("\"foo\""), "{message}");
    invalid_response(Format::OpenAiChat, &json!({}));
    // An assistant message without calls is still no calls.
    assert!(parse_calls(
        Format::OpenAiChat,
        &json!({"role": "assistant", "content": "hi"})
    )
    .unwrap()
    .is_empty());
}

#[test]
fn openai_responses_failed_response_is_a_provider_error() {
    let body = json!({"id": "resp_1", "object": "response", "status": "failed", "output": [],
        "error": {"code": "server_error", "message": "The server had an error while processing your request."}});
    let (kind, message) = provider_error(Format::OpenAiResponses, &body);
    assert_eq!(kind, "server_error");
    assert!(message.contains("server had an error"));

    // Failed without an error object still is not "no calls".
    let bare = json!({"object": "response", "status": "failed", "output": [], "error": null});
    assert_eq!(provider_error(Format::OpenAiResponses, &bare).0, "failed");
}

#[test]
fn openai_responses_error_events_are_provider_errors() {
    let event = json!({"type": "error", "code": "ERR_SOMETHING", "message": "Something went wrong", "param": null, "sequence_number": 1});
    assert_eq!(
        provider_error(Format::OpenAiResponses, &event),
        ("ERR_SOMETHING".into(), "Something went wrong".into())
    );
    let failed = json!({"type": "response.failed", "sequence_number": 9, "response": {
        "object": "response", "status": "failed", "output": [],
        "error": {"code": "rate_limit_exceeded", "message": "Slow down"}}});
    assert_eq!(
        provider_error(Format::OpenAiResponses, &failed),
        ("rate_limit_exceeded".into(), "Slow down".into())
    );
    let http = json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}});
    assert_eq!(
        provider_error(Format::OpenAiResponses, &http).0,
        "invalid_request_error, invalid_api_key"
    );
}

#[test]
fn openai_responses_stream_events_carry_their_calls() {
    let item = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_time", "arguments": "{}"});
    let done = json!({"type": "response.output_item.done", "output_index": 0, "item": item});
    let completed = json!({"type": "response.completed", "response": {"object": "response", "status": "completed", "output": [item]}});
    for body in [done, completed] {
        let calls = parse_calls(Format::OpenAiResponses, &body).unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id, "call_1");
    }
    let message = invalid_response(Format::OpenAiResponses, &json!({"foo": 1}));
    assert!(message.contains("\"foo\""), "{message}");
}

#[test]
fn anthropic_error_body_is_a_provider_error_with_its_type_and_message() {
    let body = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "req_011"});
    assert_eq!(
        provider_error(Format::Anthropic, &body),
        ("overloaded_error".into(), "Overloaded".into())
    );
    let message = invalid_response(Format::Anthropic, &json!({"foo": 1}));
    assert!(message.contains("\"foo\""), "{message}");
}

#[test]
fn gemini_error_body_is_a_provider_error_with_its_status_and_message() {
    let body = json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}]}});
    let (kind, message) = provider_error(Format::Gemini, &body);
    assert_eq!(kind, "INVALID_ARGUMENT, 400");
    assert_eq!(message, "API key not valid. Please pass a valid API key.");
    // As the one element of a streamed array.
    assert_eq!(
        provider_error(Format::Gemini, &json!([body])).0,
        "INVALID_ARGUMENT, 400"
    );
    let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 8}});
    assert_eq!(provider_error(Format::Gemini, &blocked).0, "SAFETY");
}

#[test]
fn gemini_other_shapes_are_invalid_responses_not_no_calls() {
    let message = invalid_response(Format::Gemini, &json!({"foo": 1}));
    assert!(message.contains("\"foo\""), "{message}");
    let chunks = json!([{"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}}]}]);
    assert!(invalid_response(Format::Gemini, &chunks).contains("streamed"));
    // A response with usage only (a stream's last chunk) has no calls.
    assert!(parse_calls(
        Format::Gemini,
        &json!({"usageMetadata": {"totalTokenCount": 3}})
    )
    .unwrap()
    .is_empty());
}

#[test]
fn mcp_json_rpc_error_response_is_a_provider_error_with_its_code_and_message() {
    let body = json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "Unknown tool: invalid_tool_name"}});
    assert_eq!(
        provider_error(Format::Mcp, &body),
        ("-32602".into(), "Unknown tool: invalid_tool_name".into())
    );
    // The spec's own example of the error object.
    let bare = corpus("mcp_spec_examples/mcp_InvalidParamsError__unknown-tool.json");
    assert_eq!(
        provider_error(Format::Mcp, &bare),
        ("-32602".into(), "Unknown tool: invalid_tool_name".into())
    );
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "f"}});
    assert_eq!(
        provider_error(Format::Mcp, &json!([call, body])).0,
        "-32602"
    );
    let result = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
    assert!(invalid_response(Format::Mcp, &result).contains("result response"));
    invalid_response(Format::Mcp, &json!({"foo": 1}));
}

// --- one bad call, not a bad body --------------------------------------------

fn nested(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

#[track_caller]
fn unreadable_arguments(call: &CallRequest, expected: &str) {
    match &call.arguments {
        Arguments::Text(_) => {}
        other => panic!(
            "{}: expected arguments kept as text, got {other:?}",
            call.id
        ),
    }
    let error = call.arguments.clone().into_value().unwrap_err();
    assert!(error.contains(expected), "{}: {error}", call.id);
}

/// A response with a good call, a call whose arguments hold `bad`, and
/// another good call, in each format that carries arguments as JSON.
fn bodies_with(bad: &str) -> Vec<(Format, String)> {
    vec![
        (
            Format::Anthropic,
            format!(
                r#"{{"role":"assistant","content":[
                {{"type":"tool_use","id":"t1","name":"add","input":{{"a":1,"b":2}}}},
                {{"type":"tool_use","id":"t2","name":"add","input":{{"a":{bad},"b":2}}}},
                {{"type":"tool_use","id":"t3","name":"add","input":{{"a":3,"b":4}}}}]}}"#
            ),
        ),
        (
            Format::Gemini,
            format!(
                r#"{{"candidates":[{{"content":{{"role":"model","parts":[
                {{"functionCall":{{"id":"t1","name":"add","args":{{"a":1,"b":2}}}}}},
                {{"functionCall":{{"id":"t2","name":"add","args":{{"a":{bad},"b":2}}}}}},
                {{"functionCall":{{"id":"t3","name":"add","args":{{"a":3,"b":4}}}}}}]}}}}]}}"#
            ),
        ),
        (
            Format::Mcp,
            format!(
                r#"[{{"jsonrpc":"2.0","id":"t1","method":"tools/call","params":{{"name":"add","arguments":{{"a":1,"b":2}}}}}},
                {{"jsonrpc":"2.0","id":"t2","method":"tools/call","params":{{"name":"add","arguments":{{"a":{bad},"b":2}}}}}},
                {{"jsonrpc":"2.0","id":"t3","method":"tools/call","params":{{"name":"add","arguments":{{"a":3,"b":4}}}}}}]"#
            ),
        ),
    ]
}

/// `body` (three calls, the middle one unreadable as JSON) parses into
/// three calls: the outer two with their arguments, the middle one carrying
/// `why` for an `invalid_arguments` result.
fn only_the_middle_call_is_unreadable(fmt: Format, body: &str, why: &str) {
    assert!(serde_json::from_str::<Value>(body).is_err());
    let calls = parse_calls_text(fmt, body).unwrap_or_else(|e| panic!("{}: {e}", fmt.name()));
    assert_eq!(calls.len(), 3, "{}", fmt.name());
    assert_eq!(
        calls[0].arguments,
        Arguments::Value(json!({"a": 1, "b": 2}))
    );
    unreadable_arguments(&calls[1], why);
    assert_eq!(
        calls[2].arguments,
        Arguments::Value(json!({"a": 3, "b": 4}))
    );
}

#[test]
fn a_number_past_f64_in_one_call_fails_that_call_only() {
    for (fmt, body) in bodies_with("1e400") {
        only_the_middle_call_is_unreadable(fmt, &body, "number out of range");
    }
    for (fmt, body) in bodies_with("-123456789e-3000000000000000000000000") {
        // Underflow is 0 for serde_json: nothing to set aside.
        assert_eq!(parse_calls_text(fmt, &body).unwrap().len(), 3);
    }
}

#[test]
fn nesting_past_the_depth_limit_in_one_call_fails_that_call_only() {
    for (fmt, body) in bodies_with(&nested(300)) {
        only_the_middle_call_is_unreadable(fmt, &body, "recursion limit exceeded");
    }
}

#[test]
fn an_unreadable_id_or_name_is_still_an_invalid_response() {
    let body = r#"{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"add"}}"#;
    let message = match parse_calls_text(Format::Mcp, body) {
        Err(Error::InvalidResponse(m)) => m,
        other => panic!("{other:?}"),
    };
    assert!(
        message.contains("id") && message.contains("1e400"),
        "{message}"
    );
    // Text that is not JSON at all stays an invalid response, at any size.
    for text in ["{\"content\":[", &"[".repeat(100_000), "{\"a\":1e400"] {
        assert!(matches!(
            parse_calls_text(Format::Anthropic, text),
            Err(Error::InvalidResponse(_))
        ));
    }
}

#[test]
fn run_turn_gives_the_unreadable_call_invalid_arguments_and_runs_the_others() {
    let reg = capstan::Registry::default();
    reg.register(capstan::ToolDef {
        name: "add".into(),
        description: String::new(),
        parameters: json!({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}}),
        handler: Box::new(|c: capstan::Call| {
            let a = c.arguments()["a"].as_i64().unwrap_or(0);
            let b = c.arguments()["b"].as_i64().unwrap_or(0);
            c.complete_value(&json!(a + b)).unwrap();
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    })
    .unwrap();
    for bad in ["1e400".to_owned(), nested(300)] {
        for (fmt, body) in bodies_with(&bad) {
            let messages = capstan::turn::run_turn_text(&reg, fmt, &body, &Default::default())
                .unwrap_or_else(|e| panic!("{}: {e}", fmt.name()));
            let text = messages.to_string();
            assert!(
                text.contains("arguments are not valid JSON"),
                "{}: {text}",
                fmt.name()
            );
            match fmt {
                Format::Anthropic => {
                    let content = &messages["content"];
                    assert_eq!(content[0]["content"], "3");
                    assert_eq!(content[1]["is_error"], true);
                    assert_eq!(content[2]["content"], "7");
                }
                Format::Gemini => {
                    let parts = &messages["parts"];
                    assert_eq!(parts[0]["functionResponse"]["response"]["output"], 3);
                    assert!(parts[1]["functionResponse"]["response"]["error"].is_string());
                    assert_eq!(parts[2]["functionResponse"]["response"]["output"], 7);
                }
                _ => {
                    assert_eq!(messages[0]["isError"], false);
                    assert_eq!(messages[1]["isError"], true);
                    assert_eq!(messages[2]["isError"], false);
                }
            }
        }
    }
    let error =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    assert!(matches!(
        capstan::run_turn(&reg, Format::Anthropic, &error, &Default::default()),
        Err(Error::ProviderError { .. })
    ));
}

#[test]
fn strings_in_the_other_calls_are_read_as_written() {
    // Digits, brackets and escaped quotes inside strings are text, not values
    // or nesting; the calls holding them keep their arguments as values.
    let tricky = r#"1e400 [[[ {{ \" ]] ü"#;
    // Inside the value set aside too: its end is found past the brackets.
    let deep = format!(r#"{}"x]] \" ]"{}"#, "[".repeat(300), "]".repeat(300));
    let body = format!(
        r#"{{"role":"assistant","content":[
        {{"type":"tool_use","id":"t1","name":"say","input":{{"s":"{tricky}"}}}},
        {{"type":"tool_use","id":"t2","name":"add","input":{{"a":{deep},"b":2}}}},
        {{"type":"tool_use","id":"t3","name":"say","input":{{"s":"plain"}}}}]}}"#,
    );
    let calls = parse_calls_text(Format::Anthropic, &body).unwrap();
    assert_eq!(calls.len(), 3);
    assert_eq!(
        calls[0].arguments,
        Arguments::Value(json!({"s": "1e400 [[[ {{ \" ]] ü"}))
    );
    unreadable_arguments(&calls[1], "recursion limit exceeded");
    assert_eq!(
        calls[1].arguments,
        Arguments::Text(format!(r#"{{"a":{deep},"b":2}}"#))
    );
    assert_eq!(calls[2].arguments, Arguments::Value(json!({"s": "plain"})));
}

#[test]
fn an_unreadable_id_or_name_is_shown_in_full_up_to_40_bytes() {
    let mcp = |id: &str, name: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":{name}}}}}"#
        );
        match parse_calls_text(Format::Mcp, &body) {
            Err(Error::InvalidResponse(m)) => m,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(
        mcp("1e400", r#""add""#),
        "call 0: the id is not a string but 1e400"
    );
    assert_eq!(
        mcp("7", "-1e400"),
        "call 0: the name is not a string but -1e400"
    );
    let forty = format!("1{}e400", "0".repeat(35));
    assert_eq!(forty.len(), 40);
    assert_eq!(
        mcp(&forty, r#""add""#),
        format!("call 0: the id is not a string but {forty}")
    );
    // Longer: the first 40 bytes and the size.
    let long = format!("1{}e400", "0".repeat(50));
    assert_eq!(
        mcp(&long, r#""add""#),
        format!(
            "call 0: the id is not a string but {}... (55 bytes)",
            &long[..40]
        )
    );
}

#[test]
fn an_empty_error_kind_is_skipped_for_the_next_key_or_the_fallback() {
    let body =
        json!({"error": {"message": "slow down", "type": "", "code": "rate_limit_exceeded"}});
    assert_eq!(
        provider_error(Format::OpenAiChat, &body),
        ("rate_limit_exceeded".into(), "slow down".into())
    );
    let none = json!({"error": {"message": "slow down", "type": "", "code": null}});
    assert_eq!(provider_error(Format::OpenAiChat, &none).0, "error");
}

#[test]
fn mcp_bare_error_object_needs_a_numeric_code() {
    // {"code", "message"} with a numeric code is a JSON-RPC error object;
    // with a string code it is no tools/call request at all.
    let bare = json!({"code": -32000, "message": "server busy"});
    assert_eq!(
        provider_error(Format::Mcp, &bare),
        ("-32000".into(), "server busy".into())
    );
    let message = invalid_response(Format::Mcp, &json!({"code": "E1", "message": "m"}));
    assert!(message.contains("\"name\""), "{message}");
}

/// The structured part a host reads with capstan_error_json: type, code,
/// HTTP status and retry delay, each only where the body carries it.
#[test]
fn provider_errors_keep_type_code_http_status_and_retry_delay() {
    let detail = |fmt: Format, body: &Value| match parse_calls(fmt, body) {
        Err(Error::ProviderError { detail, .. }) => *detail,
        other => panic!("{}: expected ProviderError, got {other:?}", fmt.name()),
    };
    let gemini = json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
        "message": "Quota exceeded", "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37.5s"}]}});
    assert_eq!(
        detail(Format::Gemini, &gemini),
        capstan::error::ProviderDetail {
            error_type: Some("RESOURCE_EXHAUSTED".into()),
            code: Some("429".into()),
            http_status: Some(429),
            retry_after_ms: Some(37_500),
        }
    );
    let openai = json!({"error": {"message": "Rate limit reached", "type": "requests",
        "param": null, "code": "rate_limit_exceeded"}});
    assert_eq!(
        detail(Format::OpenAiChat, &openai),
        capstan::error::ProviderDetail {
            error_type: Some("requests".into()),
            code: Some("rate_limit_exceeded".into()),
            http_status: None,
            retry_after_ms: None,
        }
    );
    let anthropic =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let d = detail(Format::Anthropic, &anthropic);
    assert_eq!(d.error_type.as_deref(), Some("overloaded_error"));
    assert_eq!(
        (d.code, d.http_status, d.retry_after_ms),
        (None, None, None)
    );
    // A JSON-RPC code is a code, not an HTTP status.
    let mcp = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad"}});
    let d = detail(Format::Mcp, &mcp);
    assert_eq!((d.code.as_deref(), d.http_status), (Some("-32602"), None));
}
