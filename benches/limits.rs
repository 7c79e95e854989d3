//! The bounds of issue 17, as figures: each hostile input's time (median of a
//! few runs) and the peak heap of one run, on the calling thread. Not part of
//! `make test`; `cargo bench --bench limits`. `tests/limits.rs` asserts loose
//! bounds on the same inputs.

#[allow(dead_code)]
mod common;

use std::time::{Duration, Instant};

use capstan::providers::Format;
use capstan::schema::Schema;
use capstan::stream::{Stream, StreamOptions};
use capstan::{execute, CallRequest, ExecOptions, Registry, ToolDef, ToolFlags};
use serde_json::{json, Value};

use common::heap;
use common::hostile::*;

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

/// Median time of `runs` runs of `f`, and the peak heap of one.
fn figure(name: &str, target: &str, runs: usize, mut f: impl FnMut()) {
    let base = heap::mark();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    let peak = heap::peak_since(base).max(0) as f64 / (1 << 20) as f64;
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "{name:<58} {:>10.3} ms {peak:>9.2} MiB   (target {target})",
        median.as_secs_f64() * 1e3
    );
}

fn compile(schema: &Value) -> Schema {
    Schema::compile(schema).expect("compiles")
}

fn tool(name: String, parameters: Value) -> ToolDef {
    ToolDef {
        name,
        description: String::new(),
        parameters,
        handler: Box::new(|call: capstan::Call| {
            let _ = call.complete_text("ok");
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` asks
    }
    // `cargo bench --bench limits -- repeated_ids`: that group alone.
    if std::env::args().any(|a| a == "repeated_ids") {
        repeated_ids();
        return;
    }
    println!("{:<58} {:>13} {:>13}", "input", "time", "peak heap");

    let calculator = compile(&calculator_schema());
    let deep = calculator_args(20, json!("x"), false);
    figure(
        "1. calculator, invalid leaf 20 deep (526 B)",
        "<= 10 ms, 64 MB",
        5,
        || {
            let _ = calculator.validate(deep.clone(), false);
        },
    );
    let no_op = calculator_args(20, json!(2), true);
    figure(
        "1. calculator, \"op\" missing 20 deep",
        "<= 10 ms, 64 MB",
        5,
        || {
            let _ = calculator.validate(no_op.clone(), false);
        },
    );
    let valid = calculator_args(20, json!(2), false);
    figure("1. calculator, valid 20 deep", "<= 10 ms", 5, || {
        let _ = calculator.validate(valid.clone(), false);
    });
    for depth in [20, 24] {
        let chain = compile(&anyof_chain_schema(depth));
        figure(
            &format!("2. anyOf/$ref chain {depth} deep, invalid"),
            "<= 10 ms, 64 MB",
            5,
            || {
                let _ = chain.validate(json!({"x": "s"}), false);
            },
        );
    }
    let chain = anyof_chain_schema(28);
    figure(
        "3. strict nulls, anyOf/$ref chain 28 deep",
        "bounded",
        5,
        || {
            let mut args = json!({"x": null});
            capstan::providers::drop_strict_nulls(&chain, &mut args);
        },
    );
    let chain_spec = capstan::ToolSpec {
        name: "chain".into(),
        description: String::new(),
        parameters: anyof_chain_schema(24),
        flags: ToolFlags::default(),
        timeout_ms: 0,
        max_output_chars: 0,
        warnings: Vec::new(),
        mcp: Default::default(),
    };
    let lower = capstan::providers::ExportOptions {
        gemini_lower: true,
        ..Default::default()
    };
    figure(
        "4. Gemini lowering, anyOf/$ref chain 24 deep",
        "bounded",
        5,
        || {
            let export = capstan::providers::export_tools(
                std::slice::from_ref(&chain_spec),
                capstan::providers::Format::Gemini,
                &lower,
            );
            std::hint::black_box(export);
        },
    );

    let registry = Registry::default();
    for name in many_tool_names(10_000) {
        registry
            .register(tool(name, json!({"type": "object"})))
            .expect("registers");
    }
    let unknown: Vec<CallRequest> = (0..10_000)
        .map(|i| CallRequest::new(format!("c{i}"), format!("tool_{i:05}_fecth"), json!({})))
        .collect();
    let sequential = ExecOptions {
        parallel: false,
        ..ExecOptions::default()
    };
    let known: Vec<CallRequest> = (0..10_000)
        .map(|i| CallRequest::new(format!("c{i}"), format!("tool_{i:05}_fetch"), json!({})))
        .collect();
    figure(
        "8. (baseline: 10k known calls, same batch path)",
        "-",
        3,
        || {
            std::hint::black_box(execute(&registry, known.clone(), &sequential));
        },
    );
    figure(
        "8. 10k unknown calls against 10k tools",
        "< 100 ms",
        3,
        || {
            std::hint::black_box(execute(&registry, unknown.clone(), &sequential));
        },
    );
    let long = vec![CallRequest::new("c", "x".repeat(1 << 20), json!({}))];
    figure(
        "8. one 1 MB unknown name against 10k tools",
        "bounded",
        3,
        || {
            std::hint::black_box(execute(&registry, long.clone(), &sequential));
        },
    );

    let pattern = compile(
        &json!({"type": "object", "properties": {"s": {"type": "string", "pattern": LARGEST_PATTERN}}}),
    );
    let text = json!({"s": "a".repeat(64 * 1024)});
    figure(
        "9. largest allowed counted repetition on 64 KB",
        "<= 10 ms",
        3,
        || {
            let _ = pattern.validate(text.clone(), false);
        },
    );
    figure(
        "9. (?:\\w{1000}){50} refused at registration",
        "bounded",
        3,
        || {
            let _ = Schema::compile(
                &json!({"type": "object", "properties": {"s": {"pattern": "(?:\\w{1000}){50}"}}}),
            );
        },
    );

    let wide = wide_all_of(100_000);
    figure(
        "10. (baseline: jsonschema alone compiles it)",
        "-",
        3,
        || {
            let _ = jsonschema::validator_for(&wide);
        },
    );
    figure("10. register allOf of 100k {}", "linear", 3, || {
        let _ = Schema::compile(&wide);
    });

    streams();
    repeated_ids();

    let weather = compile(&common::weather_schema());
    figure(
        "valid weather call (fast path, x1000)",
        "unchanged",
        5,
        || {
            for _ in 0..1000 {
                let _ = weather.validate(json!({"city": "Paris", "days": 3}), false);
            }
        },
    );
}

fn sse(data: &Value) -> String {
    format!("data: {data}\n\n")
}

fn chat_delta(delta: Value) -> String {
    sse(&json!({"choices": [{"index": 0, "delta": delta}]}))
}

/// Feeds `body` to a new stream of `fmt` in 64 KiB chunks.
fn feed(fmt: Format, body: &str) {
    let reg = Registry::default();
    let mut stream = Stream::new(fmt, StreamOptions::default(), None, None).expect("stream");
    for chunk in body.as_bytes().chunks(64 * 1024) {
        stream.feed(&reg, chunk).expect("feeds");
    }
}

/// Issue 29, row 6: feeding is linear however arguments and calls are split.
fn streams() {
    for fragments in [17_000, 34_000, 68_000] {
        let mut body = chat_delta(
            json!({"tool_calls": [{"index": 0, "id": "c", "type": "function",
            "function": {"name": "f", "arguments": "{\"a\":\""}}]}),
        );
        let piece = format!("{}}}", "x".repeat(63));
        for _ in 0..fragments {
            body.push_str(&chat_delta(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            ));
        }
        let name = format!(
            "stream: Chat fragments ending in }}, {:.1} MB of arguments",
            (fragments * 64) as f64 / 1e6
        );
        figure(&name, "linear", 3, || feed(Format::OpenAiChat, &body));
    }
    for n in [10_000, 20_000, 40_000] {
        let chat: String = (0..n)
            .map(|i| {
                chat_delta(
                    json!({"tool_calls": [{"index": i, "id": format!("call_{i}"),
                    "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
                )
            })
            .collect();
        let anthropic: String = (0..n)
            .map(|i| {
                sse(
                    &json!({"type": "content_block_start", "index": i, "content_block":
                    {"type": "tool_use", "id": format!("t{i}"), "name": "f", "input": {}}}),
                ) + &sse(&json!({"type": "content_block_stop", "index": i}))
            })
            .collect();
        let responses: String = (0..n)
            .map(|i| {
                let item = |kind: &str| {
                    sse(&json!({"type": kind, "output_index": i, "item": {"id": format!("fc_{i}"),
                        "type": "function_call", "call_id": format!("c{i}"), "name": "f", "arguments": "{}"}}))
                };
                item("response.output_item.added") + &item("response.output_item.done")
            })
            .collect();
        for (fmt, body) in [
            (Format::OpenAiChat, &chat),
            (Format::Anthropic, &anthropic),
            (Format::OpenAiResponses, &responses),
        ] {
            let name = format!("stream: {n} {} calls", fmt.name());
            figure(&name, "linear", 3, || feed(fmt, body));
        }
    }
}

/// Issue 45, finding 13: renaming repeated call ids is linear. `run_turn`
/// and a stream's finish with n calls all named `x` (no tool registered:
/// each call's result is `unknown_tool`, the cost is the ids'), and a
/// history repair of n calls named `x`, each with its result, in every
/// format. Doubling n should double the time (it took 7-10 s for 10,000 calls
/// and over 120 s for a repair of 40,000 before).
fn repeated_ids() {
    let reg = Registry::default();
    let opts = ExecOptions::default();
    for n in [10_000, 20_000, 40_000] {
        let chat_calls: Vec<Value> = (0..n)
            .map(|_| json!({"id": "x", "type": "function", "function": {"name": "f", "arguments": "{}"}}))
            .collect();
        let anthropic_calls: Vec<Value> = (0..n)
            .map(|_| json!({"type": "tool_use", "id": "x", "name": "f", "input": {}}))
            .collect();
        let responses_calls: Vec<Value> = (0..n)
            .map(|_| json!({"type": "function_call", "call_id": "x", "name": "f", "arguments": "{}"}))
            .collect();
        let gemini_calls: Vec<Value> = (0..n)
            .map(|_| json!({"functionCall": {"id": "x", "name": "f", "args": {}}}))
            .collect();
        let responses = [
            (
                Format::OpenAiChat,
                json!({"choices": [{"message": {"role": "assistant", "tool_calls": chat_calls}}]}),
            ),
            (Format::OpenAiResponses, json!({"output": responses_calls})),
            (
                Format::Anthropic,
                json!({"role": "assistant", "content": anthropic_calls}),
            ),
            (
                Format::Gemini,
                json!({"candidates": [{"content": {"role": "model", "parts": gemini_calls}}]}),
            ),
        ];
        for (fmt, response) in &responses {
            let text = response.to_string();
            let name = format!("run_turn: {n} {} calls named x", fmt.name());
            figure(&name, "linear", 3, || {
                let _ = capstan::turn::run_turn_text(&reg, *fmt, &text, &opts);
            });
            let name = format!("run_turn, whole turn: {n} {} calls named x", fmt.name());
            figure(&name, "linear", 3, || {
                let _ = capstan::turn::run_whole_turn_text(&reg, *fmt, &text, &opts);
            });
            // The whole turn is a history whose calls repeat `x`: repair
            // renames them back (the results already carry the new ids).
            let mut history = vec![json!({"role": "user", "content": "hi"})];
            if let Ok(whole) = capstan::turn::run_whole_turn_text(&reg, *fmt, &text, &opts) {
                let whole: Value = serde_json::from_str(&whole).expect("JSON");
                if *fmt == Format::Gemini {
                    history = vec![json!({"role": "user", "parts": [{"text": "hi"}]})];
                }
                history.extend(whole.as_array().cloned().unwrap_or_default());
            }
            // The model's own ids, as the model wrote them.
            let history = Value::Array(history)
                .to_string()
                .replace("\"x_", "\"x\",\"_was\":\"x_");
            let name = format!("history repair: {n} {} calls named x", fmt.name());
            let options = capstan::history::CheckOptions {
                repair: true,
                gemini_signatures: false,
            };
            figure(&name, "linear", 3, || {
                let _ = capstan::history::check_text(*fmt, &history, &options);
            });
        }
        let chat: String = (0..n)
            .map(|i| {
                chat_delta(
                    json!({"tool_calls": [{"index": i, "id": "x", "type": "function",
                    "function": {"name": "f", "arguments": "{}"}}]}),
                )
            })
            .collect();
        let name = format!("stream finish: {n} Chat calls named x");
        figure(&name, "linear", 3, || {
            let mut stream = Stream::new(Format::OpenAiChat, StreamOptions::default(), None, None)
                .expect("stream");
            for chunk in chat.as_bytes().chunks(64 * 1024) {
                stream.feed(&reg, chunk).expect("feeds");
            }
            let _ = stream.finish(&reg);
        });
    }
}

/// The largest counted repetition `tests/limits.rs` expects to register.
const LARGEST_PATTERN: &str = "^(?:\\w{100}){10}$";
