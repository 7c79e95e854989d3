//! The whole turn (`CAPSTAN_EXEC_WHOLE_TURN`, issue #31): `run_turn` returns
//! the model's own turn as the provider needs it next (thinking blocks,
//! reasoning items and thought signatures unchanged, in place) followed by
//! the results, with calls renamed exactly as their results are, so that the
//! history passes the check with no finding in every format.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use capstan::history::{check, CheckOptions};
use capstan::providers::Format;
use capstan::turn::{run_turn_text, run_whole_turn_text};
use capstan::{Error, ExecOptions, Registry, ToolDef, ToolFlags};
use serde_json::{json, Value};

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/providers/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A registry with `get_weather`, counting its calls.
fn registry() -> (Registry, Arc<AtomicUsize>) {
    let reg = Registry::default();
    let ran = Arc::new(AtomicUsize::new(0));
    let r2 = ran.clone();
    reg.register(ToolDef {
        name: "get_weather".into(),
        description: "Weather for a place.".into(),
        parameters: json!({"type": "object", "properties": {"location": {"type": "string"}}}),
        handler: Box::new(move |c: capstan::Call| {
            r2.fetch_add(1, Ordering::SeqCst);
            c.complete_text("sunny").unwrap()
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags(0),
    })
    .unwrap();
    (reg, ran)
}

fn user_turn(fmt: Format) -> Value {
    match fmt {
        Format::Gemini => {
            json!({"role": "user", "parts": [{"text": "Weather in Paris and Tokyo?"}]})
        }
        Format::OpenAiResponses => {
            json!({"role": "user", "content": "Weather in Paris and Tokyo?"})
        }
        _ => json!({"role": "user", "content": "Weather in Paris and Tokyo?"}),
    }
}

/// The whole turn's JSON text, read.
fn whole(out: Result<impl ToString, Error>) -> Value {
    serde_json::from_str(&out.unwrap().to_string()).expect("the whole turn is JSON")
}

/// Runs the fixture's whole turn; returns the entries and the check's
/// findings on `[user turn, ...entries]`.
fn whole_turn(fmt: Format, name: &str) -> (Value, Vec<String>, usize) {
    let (reg, ran) = registry();
    let out = whole(run_whole_turn_text(
        &reg,
        fmt,
        &fixture(name),
        &ExecOptions::default(),
    ));
    let entries = out.as_array().expect("an array of entries").clone();
    let mut history = vec![user_turn(fmt)];
    history.extend(entries);
    let opts = CheckOptions {
        gemini_signatures: fmt == Format::Gemini,
        ..Default::default()
    };
    let checked = check(fmt, &Value::Array(history), &opts).unwrap();
    let findings = checked
        .findings
        .iter()
        .map(|f| f.to_json().to_string())
        .collect();
    (out, findings, ran.load(Ordering::SeqCst))
}

#[test]
fn anthropic_thinking_blocks_come_back_unchanged_before_renamed_calls() {
    let response: Value = serde_json::from_str(&fixture("anthropic_thinking.json")).unwrap();
    let (out, findings, ran) = whole_turn(Format::Anthropic, "anthropic_thinking.json");
    assert_eq!(ran, 2);
    assert!(findings.is_empty(), "{findings:?}");
    let blocks = &response["content"];
    assert_eq!(out[0]["role"], "assistant");
    assert_eq!(
        out[0]["content"][0], blocks[0],
        "thinking block with its signature"
    );
    assert_eq!(out[0]["content"][1], blocks[1], "redacted_thinking block");
    assert_eq!(out[0]["content"][2], blocks[2]);
    assert_eq!(
        out[0]["content"][3]["id"], "toolu_01W_2",
        "the repeat renamed"
    );
    assert_eq!(out[0]["content"][3]["input"], blocks[3]["input"]);
    let results = &out[1]["content"];
    assert_eq!(out[1]["role"], "user");
    assert_eq!(results[0]["tool_use_id"], "toolu_01W");
    assert_eq!(results[1]["tool_use_id"], "toolu_01W_2");
    assert_eq!(out.as_array().unwrap().len(), 2);
    // The signature string is written back exactly as it came.
    let text = out.to_string();
    assert!(text
        .contains("\"signature\":\"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/==\""));
}

#[test]
fn responses_reasoning_items_stay_before_the_calls_with_their_encrypted_content() {
    let response: Value =
        serde_json::from_str(&fixture("openai_responses_reasoning.json")).unwrap();
    let (out, findings, ran) =
        whole_turn(Format::OpenAiResponses, "openai_responses_reasoning.json");
    assert_eq!(ran, 2);
    assert!(findings.is_empty(), "{findings:?}");
    let items = out.as_array().unwrap();
    assert_eq!(items.len(), 5, "3 output items, 2 results");
    assert_eq!(items[0], response["output"][0], "reasoning item unchanged");
    assert_eq!(items[1], response["output"][1]);
    let long = response["output"][2]["call_id"].as_str().unwrap();
    let renamed = items[2]["call_id"].as_str().unwrap();
    assert_ne!(renamed, long);
    assert!(renamed.len() <= 64);
    assert_eq!(items[3]["type"], "function_call_output");
    assert_eq!(items[3]["call_id"], "call_Par1s");
    assert_eq!(items[4]["call_id"], renamed);
}

#[test]
fn gemini_keeps_the_signature_on_the_first_call_part_only() {
    let response: Value = serde_json::from_str(&fixture("gemini_thought_signatures.json")).unwrap();
    let (out, findings, ran) = whole_turn(Format::Gemini, "gemini_thought_signatures.json");
    assert_eq!(ran, 2);
    assert!(findings.is_empty(), "{findings:?}");
    let parts = &out[0]["parts"];
    let sent = &response["candidates"][0]["content"]["parts"];
    assert_eq!(out[0]["role"], "model");
    assert_eq!(
        parts[0], sent[0],
        "first call part with its signature, unchanged"
    );
    assert!(parts[1].get("thoughtSignature").is_none(), "none added");
    assert_eq!(parts[1]["functionCall"]["id"], "fc_a_2");
    let responses = &out[1]["parts"];
    assert_eq!(responses[0]["functionResponse"]["id"], "fc_a");
    assert_eq!(responses[1]["functionResponse"]["id"], "fc_a_2");
}

#[test]
fn gemini_calls_without_ids_keep_none() {
    let response: Value = serde_json::from_str(&fixture("gemini_parallel.json")).unwrap();
    let (reg, _) = registry();
    let out = whole(run_whole_turn_text(
        &reg,
        Format::Gemini,
        &fixture("gemini_parallel.json"),
        &ExecOptions::default(),
    ));
    assert_eq!(
        out[0], response["candidates"][0]["content"],
        "model content unchanged"
    );
}

#[test]
fn chat_assistant_message_comes_first_with_repeated_and_empty_ids_renamed() {
    let (out, findings, ran) = whole_turn(Format::OpenAiChat, "openai_chat_repeated_ids.json");
    assert_eq!(ran, 3);
    assert!(findings.is_empty(), "{findings:?}");
    let calls = &out[0]["tool_calls"];
    assert_eq!(out[0]["role"], "assistant");
    let ids: Vec<&str> = (0..3).map(|i| calls[i]["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["call_W1", "call_W1_2", "call_2"]);
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(out[i + 1]["role"], "tool");
        assert_eq!(out[i + 1]["tool_call_id"], *id);
    }
}

#[test]
fn without_the_flag_only_the_results_come_back() {
    let (reg, _) = registry();
    let out = run_turn_text(
        &reg,
        Format::Anthropic,
        &fixture("anthropic_thinking.json"),
        &ExecOptions::default(),
    )
    .unwrap();
    assert_eq!(out["role"], "user");
}

#[test]
fn a_response_without_calls_gives_the_model_turn_alone() {
    let (reg, ran) = registry();
    for (fmt, name) in [
        (Format::Anthropic, "anthropic_no_calls.json"),
        (Format::OpenAiChat, "openai_chat_no_calls.json"),
    ] {
        let out = whole(run_whole_turn_text(
            &reg,
            fmt,
            &fixture(name),
            &ExecOptions::default(),
        ));
        assert_eq!(out.as_array().unwrap().len(), 1, "{name}: {out}");
        assert_eq!(out[0]["role"], "assistant");
    }
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[test]
fn fragments_and_formats_without_conversations_are_refused_before_anything_runs() {
    let (reg, ran) = registry();
    let cases = [
        (
            Format::Anthropic,
            r#"{"type":"tool_use","id":"t1","name":"get_weather","input":{}}"#,
        ),
        (
            Format::OpenAiChat,
            r#"[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]"#,
        ),
        (
            Format::Gemini,
            r#"{"functionCall":{"name":"get_weather","args":{}}}"#,
        ),
        (
            Format::Describe,
            r#"[{"id":"c1","name":"get_weather","arguments":{}}]"#,
        ),
    ];
    for (fmt, body) in cases {
        match run_whole_turn_text(&reg, fmt, body, &ExecOptions::default()) {
            Err(Error::InvalidArgument(m)) => {
                assert!(m.contains("CAPSTAN_EXEC_WHOLE_TURN"), "{m}")
            }
            other => panic!("{}: {other:?}", fmt.name()),
        }
    }
    assert_eq!(ran.load(Ordering::SeqCst), 0, "nothing ran");
}

/// The model's turn comes back byte for byte (numbers past 64 bits, `1.10`,
/// `1E2`, key order, spacing), in every format, but for a repeated call id
/// renamed alone: its neighbours are not written again.
#[test]
fn the_model_turn_comes_back_byte_for_byte_but_for_renamed_ids() {
    let big =
        r#"{"location": "Paris", "big": 123456789012345678901234567890, "f": 1.10, "e": 1E2}"#;
    let anthropic_content = |second: &str| {
        format!(
            r#"[ {{"type":"thinking","thinking":"t","signature":"s", "n": 1.10}}, {{"type":"tool_use","id":"t1","name":"get_weather","input":{big}}},{{"type":"tool_use","id":"{second}","name":"get_weather","input":{{"z": 1E2, "a": -0.0}}}} ]"#
        )
    };
    let chat_message = |second: &str| {
        format!(
            r#"{{"role":"assistant", "content":null,"tool_calls":[{{"id":"c1","type":"function","function":{{"name":"get_weather","arguments":"{{}}"}}}},{{"id":"{second}","type":"function","function":{{"name":"get_weather","arguments":"{{}}"}}}}], "x_big": 123456789012345678901234567890, "x_f": 1.10}}"#
        )
    };
    let responses_items = |second: &str| {
        format!(
            r#"{{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc", "n": 1E2}},{{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{{}}","x": 123456789012345678901234567890}},{{"call_id":"{second}","type":"function_call","name":"get_weather","arguments":"{{}}","x": 1.10}}"#
        )
    };
    let gemini_content = |second: &str| {
        format!(
            r#"{{"role": "model", "parts":[{{"functionCall":{{"id":"g1","name":"get_weather","args":{big}}},"thoughtSignature":"sig"}},{{"functionCall":{{"name":"get_weather","id":"{second}","args":{{"e": 1E2}}}}}}]}}"#
        )
    };
    let cases = [
        (
            Format::Anthropic,
            format!(
                r#"{{"id":"msg_1","type":"message","role":"assistant","content":{},"stop_reason":"tool_use"}}"#,
                anthropic_content("t1")
            ),
            format!(
                r#"{{"role":"assistant","content":{}}}"#,
                anthropic_content("t1_2")
            ),
        ),
        (
            Format::OpenAiChat,
            format!(
                r#"{{"id":"x","choices":[{{"index":0,"message":{},"finish_reason":"tool_calls"}}]}}"#,
                chat_message("c1")
            ),
            chat_message("c1_2"),
        ),
        (
            Format::OpenAiResponses,
            format!(
                r#"{{"id":"resp_1","object":"response","output":[{}]}}"#,
                responses_items("c1")
            ),
            responses_items("c1_2"),
        ),
        (
            Format::Gemini,
            format!(
                r#"{{"candidates":[{{"content":{}}}]}}"#,
                gemini_content("g1")
            ),
            gemini_content("g1_2"),
        ),
    ];
    for (fmt, response, turn) in cases {
        let (reg, _) = registry();
        let out = run_whole_turn_text(&reg, fmt, &response, &ExecOptions::default())
            .unwrap()
            .to_string();
        assert!(
            out.starts_with(&format!("[{turn},")),
            "{}: the model's turn changed:\n{out}\nwanted it to start with\n[{turn},",
            fmt.name()
        );
    }
}
