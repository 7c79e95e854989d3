//! MCP.

use super::*;

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

#[test]
fn mcp_a_request_is_known_by_its_method_or_its_jsonrpc_field() {
    // A tools/call request without "jsonrpc" (some clients leave it out).
    let no_version =
        json!({"id": 4, "method": "tools/call", "params": {"name": "f", "arguments": {"x": 1}}});
    assert_eq!(
        parse_calls(Format::Mcp, &no_version).unwrap(),
        vec![call("4", "f", json!({"x": 1}))]
    );
    // A JSON-RPC message with no method is not a bare params object, even
    // when its params would read as one.
    let no_method = json!({"jsonrpc": "2.0", "id": 5, "params": {"name": "f", "arguments": {}}});
    invalid_response(Format::Mcp, &no_method);
}
