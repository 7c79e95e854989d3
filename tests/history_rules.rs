// size: one table of damage kinds run in every format; the kinds and
// the formats read as one matrix.
//! History check and repair (issue #31): every kind of damage, at every
//! position, in every format with conversations, is found, and the repair
//! gives a history that checks clean.

use capstan::history::{check, CheckOptions, Damage};
use capstan::providers::Format;
use serde_json::{json, Value};

const FORMATS: [Format; 4] = [
    Format::OpenAiChat,
    Format::OpenAiResponses,
    Format::Anthropic,
    Format::Gemini,
];

/// One model turn: its calls (id, name) and the ids its results answer, in order.
#[derive(Clone)]
struct Turn {
    calls: Vec<(String, String)>,
    results: Vec<String>,
}

fn turns() -> Vec<Turn> {
    (0..3)
        .map(|t| {
            let calls: Vec<(String, String)> = (0..3)
                .map(|k| (format!("call_{t}_{k}"), format!("tool_{k}")))
                .collect();
            let results = calls.iter().map(|(id, _)| id.clone()).collect();
            Turn { calls, results }
        })
        .collect()
}

fn name_of(turn: &Turn, id: &str) -> String {
    turn.calls
        .iter()
        .find(|(c, _)| c == id)
        .map(|(_, n)| n.clone())
        .unwrap_or_else(|| "tool_x".into())
}

/// A conversation in `fmt`: user text, then per turn the model's calls and
/// the results, then model text.
fn build(fmt: Format, turns: &[Turn], signatures: bool) -> Value {
    let mut h = Vec::new();
    match fmt {
        Format::OpenAiChat => {
            h.push(json!({"role": "user", "content": "hi"}));
            for t in turns {
                let calls: Vec<Value> = t.calls.iter().map(|(id, name)| json!({
                    "id": id, "type": "function", "function": {"name": name, "arguments": "{}"}
                })).collect();
                h.push(json!({"role": "assistant", "content": null, "tool_calls": calls}));
                for id in &t.results {
                    h.push(json!({"role": "tool", "tool_call_id": id, "content": "ok"}));
                }
            }
            h.push(json!({"role": "assistant", "content": "done"}));
        }
        Format::OpenAiResponses => {
            h.push(json!({"role": "user", "content": "hi"}));
            for t in turns {
                h.push(json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"}));
                for (id, name) in &t.calls {
                    h.push(json!({"type": "function_call", "call_id": id, "name": name, "arguments": "{}"}));
                }
                for id in &t.results {
                    h.push(json!({"type": "function_call_output", "call_id": id, "output": "ok"}));
                }
            }
            h.push(json!({"role": "assistant", "content": "done"}));
        }
        Format::Anthropic => {
            h.push(json!({"role": "user", "content": "hi"}));
            for t in turns {
                let mut blocks =
                    vec![json!({"type": "thinking", "thinking": "...", "signature": "sig"})];
                blocks.extend(t.calls.iter().map(|(id, name)| {
                    json!({
                        "type": "tool_use", "id": id, "name": name, "input": {}
                    })
                }));
                h.push(json!({"role": "assistant", "content": blocks}));
                let results: Vec<Value> = t
                    .results
                    .iter()
                    .map(|id| {
                        json!({
                            "type": "tool_result", "tool_use_id": id, "content": "ok"
                        })
                    })
                    .collect();
                h.push(json!({"role": "user", "content": results}));
            }
            h.push(json!({"role": "assistant", "content": [{"type": "text", "text": "done"}]}));
        }
        Format::Gemini => {
            h.push(json!({"role": "user", "parts": [{"text": "hi"}]}));
            for t in turns {
                let parts: Vec<Value> = t
                    .calls
                    .iter()
                    .enumerate()
                    .map(|(k, (id, name))| {
                        let mut p = json!({"functionCall": {"id": id, "name": name, "args": {}}});
                        if signatures && k == 0 {
                            p["thoughtSignature"] = json!("c2ln");
                        }
                        p
                    })
                    .collect();
                h.push(json!({"role": "model", "parts": parts}));
                let results: Vec<Value> = t.results.iter().map(|id| json!({
                    "functionResponse": {"id": id, "name": name_of(t, id), "response": {"output": "ok"}}
                })).collect();
                h.push(json!({"role": "user", "parts": results}));
            }
            h.push(json!({"role": "model", "parts": [{"text": "done"}]}));
        }
        _ => unreachable!(),
    }
    Value::Array(h)
}

fn opts(repair: bool) -> CheckOptions {
    CheckOptions {
        repair,
        gemini_signatures: true,
    }
}

fn kinds(fmt: Format, h: &Value) -> Vec<Damage> {
    check(fmt, h, &opts(false))
        .unwrap()
        .findings
        .iter()
        .map(|f| f.kind)
        .collect()
}

/// `h` shows `damage`, and its repair checks clean and stays as it is when
/// repaired again.
fn assert_found_and_repaired(fmt: Format, h: &Value, damage: Damage, what: &str) {
    let found = check(fmt, h, &opts(true)).unwrap();
    assert!(
        found.findings.iter().any(|f| f.kind == damage),
        "{}: {what}: expected {} in {}",
        fmt.name(),
        damage.as_str(),
        found.report_json()
    );
    assert!(found.findings.iter().all(|f| f.repair.is_some()));
    let repaired = found.repaired.unwrap();
    let again = check(fmt, &repaired, &opts(true)).unwrap();
    assert!(
        again.findings.is_empty(),
        "{}: {what}: repaired history still has {}\n{repaired:#}",
        fmt.name(),
        again.report_json()
    );
    assert_eq!(
        again.repaired.unwrap(),
        repaired,
        "{}: {what}: repair is not stable",
        fmt.name()
    );
}

#[test]
fn an_intact_history_checks_clean_and_repairs_to_itself() {
    for fmt in FORMATS {
        let h = build(fmt, &turns(), true);
        let got = check(fmt, &h, &opts(true)).unwrap();
        assert!(
            got.findings.is_empty(),
            "{}: {}",
            fmt.name(),
            got.report_json()
        );
        assert_eq!(got.repaired.unwrap(), h, "{}", fmt.name());
    }
}

#[test]
fn a_missing_result_is_found_at_every_position_and_becomes_an_error_result() {
    for fmt in FORMATS {
        for t in 0..3 {
            for k in 0..3 {
                let mut ts = turns();
                ts[t].results.remove(k);
                let h = build(fmt, &ts, true);
                assert_found_and_repaired(
                    fmt,
                    &h,
                    Damage::MissingResult,
                    &format!("turn {t} call {k}"),
                );
                let repaired = check(fmt, &h, &opts(true)).unwrap().repaired.unwrap();
                assert!(repaired.to_string().contains("never finished"));
            }
        }
    }
}

#[test]
fn a_turn_whose_results_are_all_missing_is_repaired() {
    for fmt in FORMATS {
        for t in 0..3 {
            let mut ts = turns();
            ts[t].results.clear();
            let h = build(fmt, &ts, true);
            assert_found_and_repaired(fmt, &h, Damage::MissingResult, &format!("turn {t}"));
        }
        // The history ends on the model's calls.
        let ts = turns();
        let mut h = build(fmt, &ts, true);
        let a = h.as_array_mut().unwrap();
        a.pop();
        let cut = match fmt {
            Format::OpenAiChat | Format::OpenAiResponses => 3,
            _ => 1,
        };
        a.truncate(a.len() - cut);
        assert_found_and_repaired(fmt, &h, Damage::MissingResult, "history ends on calls");
    }
}

#[test]
fn an_orphan_result_is_found_at_every_position_and_dropped() {
    for fmt in FORMATS {
        for t in 0..3 {
            for k in 0..=3 {
                let mut ts = turns();
                ts[t].results.insert(k, "ghost".into());
                let h = build(fmt, &ts, true);
                assert_found_and_repaired(
                    fmt,
                    &h,
                    Damage::OrphanResult,
                    &format!("turn {t} at {k}"),
                );
                let repaired = check(fmt, &h, &opts(true)).unwrap().repaired.unwrap();
                assert!(!repaired.to_string().contains("ghost"));
            }
        }
        // A result after the last text, following no call at all.
        let mut h = build(fmt, &turns(), true);
        let stray = build(
            fmt,
            &[Turn {
                calls: vec![],
                results: vec!["call_0_0".into()],
            }],
            true,
        );
        let stray_entry = stray.as_array().unwrap()[2].clone();
        h.as_array_mut().unwrap().push(stray_entry);
        // call_0_0 has its result: this one is a second result, dropped.
        assert_found_and_repaired(fmt, &h, Damage::DuplicateResult, "stray");
        // A result for a call the history does not have is an orphan.
        let ghost = result_entry(fmt, "ghost", "tool_x", "ghost");
        let mut h = build(fmt, &turns(), true);
        h.as_array_mut().unwrap().push(ghost);
        assert_found_and_repaired(fmt, &h, Damage::OrphanResult, "stray ghost");
    }
}

#[test]
fn a_second_result_for_a_call_is_found_and_dropped() {
    for fmt in FORMATS {
        for t in 0..3 {
            for k in 0..3 {
                let mut ts = turns();
                let id = ts[t].results[k].clone();
                ts[t].results.push(id);
                let h = build(fmt, &ts, true);
                assert_found_and_repaired(
                    fmt,
                    &h,
                    Damage::DuplicateResult,
                    &format!("turn {t} call {k}"),
                );
            }
        }
    }
}

#[test]
fn a_duplicate_call_id_is_found_at_every_position_and_renamed_with_its_result() {
    for fmt in FORMATS {
        for t in 0..3 {
            for k in 0..3 {
                if t == 0 && k == 0 {
                    continue;
                }
                let mut ts = turns();
                ts[t].calls[k].0 = "call_0_0".into();
                ts[t].results[k] = "call_0_0".into();
                let h = build(fmt, &ts, true);
                assert_found_and_repaired(
                    fmt,
                    &h,
                    Damage::DuplicateCallId,
                    &format!("turn {t} call {k}"),
                );
                // The renamed call keeps its own result (not an invented one).
                let repaired = check(fmt, &h, &opts(true)).unwrap().repaired.unwrap();
                assert!(
                    !repaired.to_string().contains("never finished"),
                    "{}",
                    fmt.name()
                );
            }
        }
    }
}

#[test]
fn an_illegal_id_is_found_and_renamed_where_the_provider_limits_ids() {
    let cases: [(Format, &str); 4] = [
        (Format::OpenAiChat, ""),
        (Format::OpenAiResponses, &"x".repeat(65)),
        (Format::Anthropic, "call.1:abc"),
        (Format::Anthropic, ""),
    ];
    for (fmt, bad) in cases {
        for t in 0..3 {
            for k in 0..3 {
                let mut ts = turns();
                ts[t].calls[k].0 = bad.to_string();
                ts[t].results[k] = bad.to_string();
                let h = build(fmt, &ts, true);
                assert_found_and_repaired(
                    fmt,
                    &h,
                    Damage::IllegalId,
                    &format!("{bad:?} turn {t} call {k}"),
                );
                let repaired = check(fmt, &h, &opts(true)).unwrap().repaired.unwrap();
                assert!(
                    !repaired.to_string().contains("never finished"),
                    "{}",
                    fmt.name()
                );
            }
        }
    }
}

#[test]
fn results_out_of_call_order_are_found_and_reordered() {
    for fmt in FORMATS {
        for t in 0..3 {
            for k in 0..2 {
                let mut ts = turns();
                ts[t].results.swap(k, k + 1);
                let h = build(fmt, &ts, true);
                assert_found_and_repaired(
                    fmt,
                    &h,
                    Damage::OutOfOrder,
                    &format!("turn {t} swap {k}"),
                );
                assert_eq!(
                    check(fmt, &h, &opts(true)).unwrap().repaired.unwrap(),
                    build(fmt, &turns(), true)
                );
            }
        }
    }
}

#[test]
fn anthropic_results_after_text_are_out_of_order() {
    let mut h = build(Format::Anthropic, &turns(), false);
    let content = h[2]["content"].as_array_mut().unwrap();
    content.insert(0, json!({"type": "text", "text": "here you go"}));
    assert_found_and_repaired(Format::Anthropic, &h, Damage::OutOfOrder, "text first");
    let repaired = check(Format::Anthropic, &h, &opts(true))
        .unwrap()
        .repaired
        .unwrap();
    assert_eq!(repaired[2]["content"][3]["type"], "text");
}

#[test]
fn gemini_missing_signature_is_found_on_the_first_call_part_only() {
    let h = build(Format::Gemini, &turns(), false);
    let found = check(Format::Gemini, &h, &opts(true)).unwrap();
    let sigs = found
        .findings
        .iter()
        .filter(|f| f.kind == Damage::MissingSignature)
        .count();
    assert_eq!(sigs, 3, "one per model content: {}", found.report_json());
    let repaired = found.repaired.unwrap();
    assert_eq!(
        repaired[1]["parts"][0]["thoughtSignature"],
        "skip_thought_signature_validator"
    );
    assert!(repaired[1]["parts"][1].get("thoughtSignature").is_none());
    assert!(check(Format::Gemini, &repaired, &opts(false))
        .unwrap()
        .findings
        .is_empty());
    // Without the option (models before Gemini 3) signatures are not asked for.
    assert!(check(Format::Gemini, &h, &CheckOptions::default())
        .unwrap()
        .findings
        .is_empty());
}

#[test]
fn gemini_calls_without_ids_are_matched_by_name_and_position() {
    let h = json!([
        {"role": "user", "parts": [{"text": "weather?"}]},
        {"role": "model", "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"output": "sun"}}}
        ]}
    ]);
    let found = check(Format::Gemini, &h, &opts(true)).unwrap();
    assert_eq!(found.findings.len(), 1, "{}", found.report_json());
    assert_eq!(found.findings[0].kind, Damage::MissingResult);
    let repaired = found.repaired.unwrap();
    assert_eq!(repaired[2]["parts"].as_array().unwrap().len(), 2);
    assert!(repaired[2]["parts"][1]["functionResponse"]
        .get("id")
        .is_none());
}

#[test]
fn documented_examples_check_clean() {
    // Anthropic's tool use guide: tool_use then tool_result.
    let anthropic = json!({"messages": [
        {"role": "user", "content": "What is the weather like in San Francisco?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "I'll check the weather."},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
             "input": {"location": "San Francisco, CA"}}
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": "15 degrees"}
        ]}
    ]});
    assert!(kinds(Format::Anthropic, &anthropic).is_empty());
    // OpenAI's function calling guide (Responses): the call, then its output.
    let responses = json!({"input": [
        {"role": "user", "content": "What's the weather like in Paris today?"},
        {"type": "function_call", "id": "fc_12345xyz", "call_id": "call_12345xyz",
         "name": "get_weather", "arguments": "{\"location\":\"Paris, France\"}"},
        {"type": "function_call_output", "call_id": "call_12345xyz", "output": "15C"}
    ]});
    assert!(kinds(Format::OpenAiResponses, &responses).is_empty());
    // A request body keeps its shape when repaired.
    let mut broken = responses.clone();
    broken["input"].as_array_mut().unwrap().pop();
    let repaired = check(Format::OpenAiResponses, &broken, &opts(true))
        .unwrap()
        .repaired
        .unwrap();
    assert_eq!(repaired["input"].as_array().unwrap().len(), 3);
}

#[test]
fn formats_without_conversations_and_bad_shapes_are_refused() {
    for fmt in [Format::Mcp, Format::Describe] {
        assert!(check(fmt, &json!([]), &opts(false)).is_err());
    }
    assert!(check(Format::Anthropic, &json!("text"), &opts(false)).is_err());
    assert!(check(Format::Anthropic, &json!([1]), &opts(false)).is_err());
    assert!(check(
        Format::OpenAiChat,
        &json!({"role": "tool", "tool_call_id": 5}),
        &opts(false)
    )
    .is_err());
}

#[test]
fn a_call_or_result_without_an_id_field_gets_one() {
    // Found by the check_history fuzz target: a tool_use block with no "id".
    let h = json!([
        {"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "content": "ok"}]}
    ]);
    assert_found_and_repaired(Format::Anthropic, &h, Damage::IllegalId, "no id field");
    let repaired = check(Format::Anthropic, &h, &opts(true))
        .unwrap()
        .repaired
        .unwrap();
    assert_eq!(repaired[0]["content"][0]["id"], "call_0");
    assert_eq!(repaired[1]["content"][0]["tool_use_id"], "call_0");
}

/// One result entry answering `id` with `text`.
fn result_entry(fmt: Format, id: &str, name: &str, text: &str) -> Value {
    match fmt {
        Format::OpenAiChat => json!({"role": "tool", "tool_call_id": id, "content": text}),
        Format::OpenAiResponses => {
            json!({"type": "function_call_output", "call_id": id, "output": text})
        }
        Format::Anthropic => json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": text}
        ]}),
        _ => json!({"role": "user", "parts": [
            {"functionResponse": {"id": id, "name": name, "response": {"output": text}}}
        ]}),
    }
}

/// The result piece (block, part) of a results entry of `result_entry`.
fn result_piece(fmt: Format, id: &str, name: &str, text: &str) -> Value {
    match fmt {
        Format::Anthropic => result_entry(fmt, id, name, text)["content"][0].clone(),
        _ => result_entry(fmt, id, name, text)["parts"][0].clone(),
    }
}

fn text_entry(fmt: Format, role: &str, text: &str) -> Value {
    match (fmt, role) {
        (Format::Gemini, "assistant") => json!({"role": "model", "parts": [{"text": text}]}),
        (Format::Gemini, _) => json!({"role": "user", "parts": [{"text": text}]}),
        _ => json!({"role": role, "content": text}),
    }
}

/// Where each model turn of a `build` history starts.
fn turn_starts(fmt: Format, h: &Value) -> Vec<usize> {
    let a = h.as_array().unwrap();
    (0..a.len())
        .filter(|&i| {
            let e = &a[i];
            match fmt {
                Format::OpenAiChat => e.get("tool_calls").is_some(),
                Format::OpenAiResponses => e["type"] == "reasoning",
                Format::Anthropic => {
                    e["role"] == "assistant" && e["content"][1]["type"] == "tool_use"
                }
                _ => e["role"] == "model" && e["parts"][0].get("functionCall").is_some(),
            }
        })
        .collect()
}

/// The results entry of turn `t` (Anthropic, Gemini: one entry).
fn results_entry_of(fmt: Format, h: &Value, t: usize) -> usize {
    turn_starts(fmt, h)[t] + 1
}

/// A real result present but misplaced is moved next to its call, in every
/// format and every placement: it is never dropped as an orphan and replaced
/// by a made-up "never finished" error.
#[test]
fn a_misplaced_real_result_is_moved_next_to_its_call() {
    let real = "real result of call_0_1";
    for fmt in FORMATS {
        let two = || {
            let mut ts = turns();
            ts.truncate(2);
            ts
        };
        let without = |t: usize, k: usize| {
            let mut ts = two();
            ts[t].results.remove(k);
            build(fmt, &ts, true)
        };
        let r01 = result_entry(fmt, "call_0_1", "tool_1", real);
        let pieces = matches!(fmt, Format::Anthropic | Format::Gemini);
        let mut cases: Vec<(&str, Value)> = Vec::new();

        let mut h = without(0, 1);
        let at = turn_starts(fmt, &h)[1];
        let a = h.as_array_mut().unwrap();
        a.insert(at, r01.clone());
        a.insert(at, text_entry(fmt, "user", "an intervening user message"));
        cases.push(("after an intervening user message", h));

        let mut h = without(0, 1);
        let at = turn_starts(fmt, &h)[1];
        let a = h.as_array_mut().unwrap();
        a.insert(at, r01.clone());
        a.insert(
            at,
            text_entry(fmt, "assistant", "an intervening model message"),
        );
        cases.push(("after an intervening model message", h));

        let mut h = without(0, 1);
        let at = turn_starts(fmt, &h)[0];
        h.as_array_mut().unwrap().insert(at, r01.clone());
        cases.push(("before its call", h));

        let mut h = without(0, 1);
        h.as_array_mut().unwrap().push(r01.clone());
        cases.push(("at the end of the history", h));

        // Among the results of the next turn.
        let mut h = without(0, 1);
        if pieces {
            let at = results_entry_of(fmt, &h, 1);
            let piece = result_piece(fmt, "call_0_1", "tool_1", real);
            let key = if fmt == Format::Anthropic {
                "content"
            } else {
                "parts"
            };
            h[at][key].as_array_mut().unwrap().push(piece);
        } else {
            let at = h.as_array().unwrap().len() - 1;
            h.as_array_mut().unwrap().insert(at, r01.clone());
        }
        cases.push(("among the next turn's results", h));

        for (what, h) in cases {
            let found = check(fmt, &h, &opts(true)).unwrap();
            assert!(
                !found
                    .findings
                    .iter()
                    .any(|f| f.kind == Damage::MissingResult),
                "{}: {what}: a call with a result was reported missing: {}",
                fmt.name(),
                found.report_json()
            );
            assert_found_and_repaired(fmt, &h, Damage::OrphanResult, what);
            let repaired = found.repaired.unwrap().to_string();
            assert_eq!(
                repaired.matches(real).count(),
                1,
                "{}: {what}: {repaired}",
                fmt.name()
            );
            assert!(
                !repaired.contains("never finished"),
                "{}: {what}: {repaired}",
                fmt.name()
            );
        }
    }
}

/// Of two results for one call the real outcome is kept, a success over an
/// error, wherever each is, and the report says which was dropped.
#[test]
fn of_two_results_for_a_call_the_success_is_kept_over_the_error() {
    let real = "real result of call_0_1";
    for fmt in FORMATS {
        let error = match fmt {
            Format::Anthropic => json!({"type": "tool_result", "tool_use_id": "call_0_1",
                "content": "it failed", "is_error": true}),
            Format::Gemini => json!({"functionResponse": {"id": "call_0_1", "name": "tool_1",
                "response": {"error": "it failed"}}}),
            _ => Value::Null,
        };
        let mut ts = turns();
        ts.truncate(2);
        let mut h = build(fmt, &ts, true);
        // call_0_1's own result becomes an error; the success comes later.
        let at = results_entry_of(fmt, &h, 0);
        match fmt {
            Format::Anthropic => h[at]["content"][1] = error,
            Format::Gemini => h[at]["parts"][1] = error,
            Format::OpenAiChat => h[at + 1]["content"] = json!("Error: it failed"),
            _ => h[at + 1 + 3]["output"] = json!("Error: it failed"),
        }
        for (what, place) in [("later in the history", 0), ("right after the error", 1)] {
            let mut h = h.clone();
            match (place, fmt) {
                (0, _) => h
                    .as_array_mut()
                    .unwrap()
                    .push(result_entry(fmt, "call_0_1", "tool_1", real)),
                (_, Format::Anthropic) => h[at]["content"]
                    .as_array_mut()
                    .unwrap()
                    .push(result_piece(fmt, "call_0_1", "tool_1", real)),
                (_, Format::Gemini) => h[at]["parts"]
                    .as_array_mut()
                    .unwrap()
                    .push(result_piece(fmt, "call_0_1", "tool_1", real)),
                (_, Format::OpenAiChat) => h
                    .as_array_mut()
                    .unwrap()
                    .insert(at + 2, result_entry(fmt, "call_0_1", "tool_1", real)),
                _ => h
                    .as_array_mut()
                    .unwrap()
                    .insert(at + 5, result_entry(fmt, "call_0_1", "tool_1", real)),
            }
            let found = check(fmt, &h, &opts(true)).unwrap();
            let dup = found
                .findings
                .iter()
                .find(|f| f.kind == Damage::DuplicateResult)
                .unwrap_or_else(|| panic!("{}: {what}: {}", fmt.name(), found.report_json()));
            assert!(
                dup.repair.as_deref().unwrap_or("").contains("error"),
                "{}: {what}: the report does not say the error was dropped: {}",
                fmt.name(),
                found.report_json()
            );
            assert_found_and_repaired(fmt, &h, Damage::DuplicateResult, what);
            let repaired = found.repaired.unwrap().to_string();
            assert_eq!(
                repaired.matches(real).count(),
                1,
                "{}: {what}: {repaired}",
                fmt.name()
            );
            assert!(
                !repaired.contains("it failed"),
                "{}: {what}: {repaired}",
                fmt.name()
            );
        }
    }
}

/// `capstan_format_check_history` with `CAPSTAN_HISTORY_REPAIR` on `text`:
/// the repaired history's JSON text.
fn repair_text(fmt: Format, text: &str) -> String {
    use capstan::ffi::*;
    let code = match fmt {
        Format::OpenAiChat => CAPSTAN_FORMAT_OPENAI_CHAT,
        Format::OpenAiResponses => CAPSTAN_FORMAT_OPENAI_RESPONSES,
        Format::Anthropic => CAPSTAN_FORMAT_ANTHROPIC,
        _ => CAPSTAN_FORMAT_GEMINI,
    };
    let (mut report, mut report_len) = (std::ptr::null_mut(), 0);
    let (mut repaired, mut repaired_len) = (std::ptr::null_mut(), 0);
    let st = unsafe {
        capstan_format_check_history(
            code,
            text.as_ptr().cast(),
            text.len(),
            CAPSTAN_HISTORY_REPAIR,
            &mut report,
            &mut report_len,
            &mut repaired,
            &mut repaired_len,
        )
    };
    assert_eq!(st, CAPSTAN_OK, "{}: {text}", fmt.name());
    let out = unsafe { std::slice::from_raw_parts(repaired.cast::<u8>(), repaired_len) };
    let out = String::from_utf8(out.to_vec()).unwrap();
    unsafe {
        capstan_string_free(report);
        capstan_string_free(repaired);
    }
    out
}

/// Repair changes nothing it does not repair: a clean history comes back
/// byte for byte (numbers past 64 bits, `1.10`, `1E2`, key order, spacing;
/// as an array or in a request body), and a renamed id is spliced into its
/// call and its result alone, their neighbours not written again.
#[test]
fn repair_leaves_every_byte_it_does_not_repair() {
    for fmt in FORMATS {
        let (user, call, result) = match fmt {
            Format::OpenAiChat => (
                r#"{"role":"user","content":"hi", "n": 1E2}"#,
                r#"{"role":"assistant","content":null,"tool_calls":[{"id":"ID","type":"function","function":{"name":"f","arguments":"{\"big\": 123456789012345678901234567890}"}, "n": 1.10}], "x": 123456789012345678901234567890}"#,
                r#"{"role":"tool", "tool_call_id":"ID","content":"1.10", "x": 1.10}"#,
            ),
            Format::OpenAiResponses => (
                r#"{"role":"user","content":"hi", "n": 1E2}"#,
                r#"{"type":"function_call","call_id":"ID", "name":"f","arguments":"{}", "n": 123456789012345678901234567890}"#,
                r#"{"type":"function_call_output","call_id":"ID","output":"ok", "n": 1.10}"#,
            ),
            Format::Anthropic => (
                r#"{"role":"user","content":"hi", "n": 1E2}"#,
                r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s", "n": 1E2},{"type":"tool_use","id":"ID","name":"f","input":{"big": 123456789012345678901234567890, "f": 1.10}}]}"#,
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"ID","content":"ok", "n": 1E2}, {"type":"text","text":"more", "n": 1.10}]}"#,
            ),
            _ => (
                r#"{"role":"user","parts":[{"text":"hi", "n": 1E2}]}"#,
                r#"{"role":"model","parts":[{"functionCall":{"id":"ID","name":"f","args":{"big": 123456789012345678901234567890, "e": 1E2}},"thoughtSignature":"s"}]}"#,
                r#"{"role":"user","parts":[{"functionResponse":{"id":"ID","name":"f","response":{"output": 1.10}}}]}"#,
            ),
        };
        let history = |ids: [&str; 4]| {
            format!(
                "[{user},{},{},{},{}]",
                call.replace("ID", ids[0]),
                result.replace("ID", ids[1]),
                call.replace("ID", ids[2]),
                result.replace("ID", ids[3])
            )
        };
        let clean = history(["c1", "c1", "c2", "c2"]);
        assert_eq!(
            repair_text(fmt, &clean),
            clean,
            "{}: a clean history changed",
            fmt.name()
        );
        let key = match fmt {
            Format::OpenAiResponses => "input",
            Format::Gemini => "contents",
            _ => "messages",
        };
        let body =
            format!(r#"{{"model": "m", "temperature": 1.10, "{key}": {clean}, "max": 1E2}}"#);
        assert_eq!(
            repair_text(fmt, &body),
            body,
            "{}: a clean body changed",
            fmt.name()
        );
        let repeated = history(["c1", "c1", "c1", "c1"]);
        assert_eq!(
            repair_text(fmt, &repeated),
            history(["c1", "c1", "c1_2", "c1_2"]),
            "{}: a rename changed more than the id",
            fmt.name()
        );
    }
}

/// The properties of the fuzz target `repair_results`
/// (`capstan::history::fuzz`: every real result survives repair, numbers
/// come back as written) on its seeds and on 1,000 generated programs.
#[test]
fn repair_keeps_every_real_result_and_every_number_on_generated_histories() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/repair_results");
    let mut inputs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            (path.display().to_string(), std::fs::read(&path).unwrap())
        })
        .collect();
    assert!(!inputs.is_empty(), "no seeds in {}", dir.display());
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for n in 0..1_000 {
        let len = 2 + (next() % 40) as usize;
        let program: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        inputs.push((format!("generated {n}"), program));
    }
    for (name, data) in &inputs {
        capstan::history::fuzz::repair_results(data)
            .unwrap_or_else(|e| panic!("{name} {data:?}: {e}"));
    }
}
