//! round trips.

use super::*;

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

#[test]
fn run_turn_goes_from_a_response_to_the_next_messages() {
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
    let response = json!({"role":"assistant","content":[
        {"type":"tool_use","id":"t1","name":"add","input":{"a":2,"b":3}},
        {"type":"tool_use","id":"t2","name":"nope","input":{}}]});
    let messages =
        capstan::run_turn(&reg, Format::Anthropic, &response, &Default::default()).unwrap();
    assert_eq!(messages["role"], "user");
    assert_eq!(
        messages["content"][0],
        json!({"type":"tool_result","tool_use_id":"t1","content":"5"})
    );
    assert_eq!(messages["content"][1]["is_error"], true);
    let bad = capstan::run_turn(
        &reg,
        Format::Anthropic,
        &json!({"content": 3}),
        &Default::default(),
    );
    assert!(matches!(bad, Err(Error::InvalidResponse(_))));
}
