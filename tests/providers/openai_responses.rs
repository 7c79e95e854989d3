//! OpenAI Responses.

use super::*;

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

#[test]
fn openai_responses_a_response_is_known_by_its_output_or_its_object_field() {
    let body = fixture("openai_responses_parallel.json");
    // "output" alone (a trimmed response) still carries the calls.
    let output_only = json!({"output": body["output"].clone()});
    assert_eq!(
        parse_calls(Format::OpenAiResponses, &output_only)
            .unwrap()
            .len(),
        2
    );
    // "object": "response" alone, failed, is a provider error, not no calls.
    let failed = json!({"object": "response", "status": "failed",
        "error": {"code": "server_error", "message": "boom"}});
    assert_eq!(
        parse_calls(Format::OpenAiResponses, &failed),
        Err(Error::ProviderError {
            kind: "server_error".into(),
            message: "boom".into(),
            detail: Box::new(capstan::error::ProviderDetail {
                code: Some("server_error".into()),
                ..Default::default()
            })
        })
    );
    // An in-progress response with no output yet has no calls.
    let empty = json!({"object": "response", "status": "in_progress"});
    assert!(parse_calls(Format::OpenAiResponses, &empty)
        .unwrap()
        .is_empty());
}
