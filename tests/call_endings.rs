//! Exactly one result per call, however the call ends (issue #31): for every
//! provider format, a response whose calls end every way there is (ok, tool
//! error, invalid arguments, unknown tool, timeout, approval denied, approval
//! never decided before the batch deadline, registry closed mid-turn), with
//! repeated and empty ids, gives a history the provider's rules accept (as
//! `capstan::history::check` states them) once the model's message is
//! repaired, with no result invented or lost.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use capstan::history::{check, CheckOptions, Damage};
use capstan::providers::Format;
use capstan::turn::run_turn;
use capstan::{Approval, ExecOptions, Registry, ToolDef, ToolFlags};
use serde_json::{json, Value};

fn def(name: &str, schema: Value, f: impl Fn(capstan::Call) + Send + Sync + 'static) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: format!("{name} tool"),
        parameters: schema,
        handler: Box::new(f),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    }
}

/// Tools for every ending; `held` receives the calls of `held` (never completed).
fn registry(held: Arc<Mutex<Vec<capstan::Call>>>) -> (Registry, Arc<Mutex<Vec<Approval>>>) {
    let reg = Registry::default();
    let obj = json!({"type": "object"});
    reg.register(def("ok", obj.clone(), |c| c.complete_text("fine").unwrap()))
        .unwrap();
    reg.register(def("fails", obj.clone(), |c| c.fail("boom").unwrap()))
        .unwrap();
    reg.register(def(
        "strict",
        json!({"type": "object", "required": ["x"], "properties": {"x": {"type": "integer"}}}),
        |c| c.complete_text("ran").unwrap(),
    ))
    .unwrap();
    let mut hang = def("hang", obj.clone(), |_c| {});
    hang.timeout_ms = 20;
    reg.register(hang).unwrap();
    let mut deny = def("deny_me", obj.clone(), |c| c.complete_text("ran").unwrap());
    deny.flags = ToolFlags(ToolFlags::REQUIRES_APPROVAL);
    reg.register(deny).unwrap();
    let mut undecided = def("undecided", obj.clone(), |c| {
        c.complete_text("ran").unwrap()
    });
    undecided.flags = ToolFlags(ToolFlags::REQUIRES_APPROVAL);
    reg.register(undecided).unwrap();
    reg.register(def("held", obj, move |c| held.lock().unwrap().push(c)))
        .unwrap();
    let pending = Arc::new(Mutex::new(Vec::new()));
    let p2 = pending.clone();
    reg.set_approver(Some(Arc::new(move |a: Approval| {
        if a.tool() == "deny_me" {
            a.deny("not today").unwrap();
        } else {
            p2.lock().unwrap().push(a); // never decided
        }
    })))
    .unwrap();
    (reg, pending)
}

/// (id, tool, arguments) of the response's calls.
fn calls() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("c_ok", "ok", json!({})),
        ("c_fails", "fails", json!({})),
        ("c_strict", "strict", json!({"x": "not a number"})),
        ("c_unknown", "no_such_tool", json!({})),
        ("c_hang", "hang", json!({})),
        ("c_deny", "deny_me", json!({})),
        ("c_undecided", "undecided", json!({})),
        ("dup", "ok", json!({})),
        ("dup", "fails", json!({})),
        ("", "ok", json!({})),
    ]
}

/// The response in `fmt`, and the history entries of the model's turn.
fn response(fmt: Format, calls: &[(&str, &str, Value)]) -> (Value, Vec<Value>) {
    match fmt {
        Format::OpenAiChat => {
            let tool_calls: Vec<Value> = calls
                .iter()
                .map(|(id, name, args)| {
                    json!({
                        "id": id, "type": "function",
                        "function": {"name": name, "arguments": args.to_string()}
                    })
                })
                .collect();
            let message = json!({"role": "assistant", "content": null, "tool_calls": tool_calls});
            (
                json!({"choices": [{"index": 0, "message": message.clone(), "finish_reason": "tool_calls"}]}),
                vec![message],
            )
        }
        Format::OpenAiResponses => {
            let items: Vec<Value> = calls.iter().map(|(id, name, args)| json!({
                "type": "function_call", "call_id": id, "name": name, "arguments": args.to_string()
            })).collect();
            (
                json!({"object": "response", "output": items.clone()}),
                items,
            )
        }
        Format::Anthropic => {
            let blocks: Vec<Value> = calls
                .iter()
                .map(|(id, name, args)| {
                    json!({
                        "type": "tool_use", "id": id, "name": name, "input": args
                    })
                })
                .collect();
            let message = json!({"role": "assistant", "content": blocks});
            (message.clone(), vec![message])
        }
        Format::Gemini => {
            let parts: Vec<Value> = calls
                .iter()
                .map(|(id, name, args)| {
                    let mut f = json!({"name": name, "args": args});
                    // capstan's synthesized ids stand for calls the model sent without one.
                    if !id.is_empty() && !id.starts_with("gemini_call_") {
                        f["id"] = json!(id);
                    }
                    json!({"functionCall": f})
                })
                .collect();
            let content = json!({"role": "model", "parts": parts});
            (
                json!({"candidates": [{"content": content.clone()}]}),
                vec![content],
            )
        }
        Format::Mcp => {
            let reqs: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, (_, name, args))| {
                    json!({
                        "jsonrpc": "2.0", "id": i, "method": "tools/call",
                        "params": {"name": name, "arguments": args}
                    })
                })
                .collect();
            (Value::Array(reqs), Vec::new())
        }
        Format::Describe => unreachable!(),
    }
}

/// The conversation: user text, the model's turn, the results.
fn history(fmt: Format, model: Vec<Value>, results: &Value) -> Value {
    let mut h = vec![match fmt {
        Format::Gemini => json!({"role": "user", "parts": [{"text": "go"}]}),
        _ => json!({"role": "user", "content": "go"}),
    }];
    h.extend(model);
    match results {
        Value::Array(items) => h.extend(items.iter().cloned()),
        one => h.push(one.clone()),
    }
    Value::Array(h)
}

/// Every call of the response has exactly one result: the history checks
/// clean, except for the model's own repeated and empty ids, and repairing
/// those renames the calls onto the results run_turn wrote (nothing added,
/// nothing dropped).
fn assert_one_result_per_call(fmt: Format, model: Vec<Value>, results: &Value, n: usize) {
    if fmt == Format::Mcp {
        assert_eq!(results.as_array().unwrap().len(), n);
        return;
    }
    let h = history(fmt, model, results);
    let found = check(
        fmt,
        &h,
        &CheckOptions {
            repair: true,
            gemini_signatures: false,
        },
    )
    .unwrap();
    for f in &found.findings {
        assert!(
            matches!(f.kind, Damage::DuplicateCallId | Damage::IllegalId),
            "{}: {}\n{h:#}",
            fmt.name(),
            found.report_json()
        );
    }
    let repaired = found.repaired.unwrap();
    let again = check(fmt, &repaired, &CheckOptions::default()).unwrap();
    assert!(
        again.findings.is_empty(),
        "{}: {}",
        fmt.name(),
        again.report_json()
    );
    assert!(
        !repaired.to_string().contains("never finished"),
        "{}: a result was lost: {repaired:#}",
        fmt.name()
    );
}

const FORMATS: [Format; 5] = [
    Format::OpenAiChat,
    Format::OpenAiResponses,
    Format::Anthropic,
    Format::Gemini,
    Format::Mcp,
];

#[test]
fn every_ending_gives_exactly_one_result_per_call_in_every_format() {
    for fmt in FORMATS {
        let held = Arc::new(Mutex::new(Vec::new()));
        let (reg, _pending) = registry(held);
        let calls = calls();
        let (body, model) = response(fmt, &calls);
        let options = ExecOptions {
            deadline_ms: 200,
            ..ExecOptions::default()
        };
        let results = run_turn(&reg, fmt, &body, &options).unwrap();
        let text = results.to_string();
        for want in ["fine", "boom", "not today", "no_such_tool"] {
            assert!(text.contains(want), "{}: no {want:?} in {text}", fmt.name());
        }
        assert_one_result_per_call(fmt, model, &results, calls.len());
    }
}

#[test]
fn a_registry_closed_mid_turn_still_answers_every_call() {
    for fmt in FORMATS {
        let held = Arc::new(Mutex::new(Vec::new()));
        let (reg, _pending) = registry(held.clone());
        let calls = vec![
            ("c_ok", "ok", json!({})),
            ("c_held", "held", json!({})),
            ("c_held2", "held", json!({})),
        ];
        let (body, model) = response(fmt, &calls);
        let reg2 = reg.clone();
        let turn = std::thread::spawn(move || {
            run_turn(&reg2, fmt, &body, &ExecOptions::default()).unwrap()
        });
        while held.lock().unwrap().len() < 2 {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(reg.close(Duration::from_secs(10)));
        let results = turn.join().unwrap();
        assert!(
            results.to_string().contains("ancel"),
            "{}: {results}",
            fmt.name()
        );
        assert_one_result_per_call(fmt, model, &results, calls.len());
    }
}

#[test]
fn repeated_and_empty_ids_are_answered_under_distinct_legal_ids() {
    let (reg, _p) = registry(Arc::new(Mutex::new(Vec::new())));
    let calls = vec![
        ("dup", "ok", json!({})),
        ("dup", "ok", json!({})),
        ("", "ok", json!({})),
    ];
    let (body, _) = response(Format::Anthropic, &calls);
    let results = run_turn(&reg, Format::Anthropic, &body, &ExecOptions::default()).unwrap();
    let ids: Vec<&str> = results["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["dup", "dup_2", "call_2"]);
}

fn stream_fixture(dir: &str, name: &str) -> Vec<u8> {
    let path: std::path::PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests/fixtures/stream",
        dir,
        name,
    ]
    .iter()
    .collect();
    std::fs::read(path).unwrap()
}

/// A finished stream answers every call it announced: complete ones run,
/// cut ones (the response stopped inside their arguments), and those a
/// cancel kept from starting.
#[test]
fn a_stream_answers_every_call_it_announced_cut_or_cancelled() {
    use capstan::stream::{Stream, StreamOptions};
    for fmt in [
        Format::OpenAiChat,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::Gemini,
    ] {
        for (case, cancel) in [
            ("parallel.sse", false),
            ("truncated.sse", false),
            ("parallel.sse", true),
        ] {
            let reg = Registry::default();
            let any = json!({"type": "object"});
            reg.register(def("get_weather", any.clone(), |c| {
                c.complete_text("sun").unwrap()
            }))
            .unwrap();
            reg.register(def("get_time", any, |c| c.complete_text("noon").unwrap()))
                .unwrap();
            let body = stream_fixture(fmt.name(), case);
            let mut stream = Stream::new(fmt, StreamOptions::default(), None, None).unwrap();
            if cancel {
                stream.feed(&reg, &body[..body.len() / 2]).unwrap();
                stream.control().cancel();
            } else {
                stream.feed(&reg, &body).unwrap();
            }
            let done = stream.finish(&reg).unwrap();
            assert!(!done.calls.is_empty(), "{} {case}", fmt.name());
            assert_eq!(done.calls.len(), done.results.len());
            let calls: Vec<(&str, &str, Value)> = done
                .calls
                .iter()
                .map(|c| (c.id.as_str(), c.name.as_str(), json!({})))
                .collect();
            let (_, model) = response(fmt, &calls);
            let messages = done.to_json(fmt)["messages"].clone();
            assert_one_result_per_call(fmt, model, &messages, calls.len());
        }
    }
}
