//! Every untrusted input has a bounded cost (issue 17): one test per bound,
//! asserting time and memory loosely (ten times the target, so that it holds
//! on a loaded machine and in a debug build); `benches/limits.rs` prints
//! the real figures.

#[path = "../benches/common/heap.rs"]
mod heap;
#[path = "../benches/common/hostile.rs"]
mod hostile;

use std::time::{Duration, Instant};

use capstan::schema::Schema;
use serde_json::{json, Value};

use hostile::*;

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

/// Runs `f` on this thread; returns its result, wall time and peak extra heap.
fn measure<T>(f: impl FnOnce() -> T) -> (T, Duration, usize) {
    let base = heap::mark();
    let start = Instant::now();
    let out = f();
    let took = start.elapsed();
    let peak = heap::peak_since(base);
    (out, took, peak.max(0) as usize)
}

/// The time unit of these tests: validating a small valid call 1,000 times
/// (best of three). About 0.5 ms in a release build on an idle machine, so
/// the 10 ms target of issue 17 is 20 units; the tests allow ten times that.
/// Measured in the same build and under the same load as what it bounds.
fn unit() -> Duration {
    let schema = compile(&weather_schema());
    (0..3)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..1_000 {
                let _ = schema.validate(json!({"city": "Paris", "days": 3}), false);
            }
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// The 10 ms target, times ten, in units of [`unit`].
const TARGET_UNITS: u32 = 20;
const LOOSE: u32 = 10;
/// The 64 MB target, times ten.
const MEMORY_BOUND: usize = 640 << 20;

/// Best of three runs of `f` (so a burst of load does not fail the test),
/// and the peak heap of one; panics with the figures past the bounds.
fn bounded<T>(what: &str, units: u32, mut f: impl FnMut() -> T) -> T {
    let bound = unit() * units * LOOSE;
    let (out, first, peak) = measure(&mut f);
    let mut best = first;
    if best > bound {
        for _ in 0..2 {
            best = best.min(measure(&mut f).1);
        }
    }
    assert!(best <= bound, "{what}: took {best:?}, bound {bound:?}");
    assert!(peak <= MEMORY_BOUND, "{what}: peak heap {peak} bytes");
    out
}

fn compile(schema: &Value) -> Schema {
    Schema::compile(schema).unwrap_or_else(|e| panic!("{schema} should compile: {e}"))
}

fn invalid_text(what: &str, schema: &Schema, args: &Value) -> String {
    match bounded(what, TARGET_UNITS, || schema.validate(args.clone(), false)) {
        Err(errors) => errors.to_string(),
        Ok(v) => panic!("{what}: should be invalid, got {v}"),
    }
}

#[test]
fn recursive_any_of_arguments_validate_within_budget() {
    let schema = compile(&calculator_schema());
    // 20 levels deep, an invalid leaf: 40 s and 12 GB before the budget.
    let args = calculator_args(20, json!("x"), false);
    assert!(args.to_string().len() < 600);
    let text = invalid_text("calculator, invalid leaf", &schema, &args);
    // The model still learns where: the branch that came closest, down to the leaf.
    let leaf = format!("/expr{}/args/1: expected number", "/args/1".repeat(19));
    assert!(text.contains(&leaf), "{text}");
}

#[test]
fn missing_required_property_in_recursive_arguments_is_cheap() {
    let schema = compile(&calculator_schema());
    let args = calculator_args(20, json!(2), true);
    let text = invalid_text("calculator, op missing", &schema, &args);
    assert!(text.contains("missing required property \"op\""), "{text}");
}

#[test]
fn any_of_chains_through_ref_validate_within_budget() {
    for depth in [20, 24, 40] {
        let schema = compile(&anyof_chain_schema(depth));
        let text = invalid_text(
            &format!("chain {depth} deep"),
            &schema,
            &json!({"x": "not a number"}),
        );
        assert!(text.starts_with("Invalid arguments:"), "{text}");
        // Valid arguments are found at once (the first branch of each step).
        assert_eq!(schema.validate(json!({"x": 3}), false), Ok(json!({"x": 3})));
    }
}

#[test]
fn chains_below_unknown_keywords_are_metered_too() {
    // `$ref` may point anywhere in the document, not only into `$defs`.
    let chain = anyof_chain_schema(30)
        .to_string()
        .replace("$defs", "x-defs");
    let schema = compile(&serde_json::from_str(&chain).unwrap());
    let text = invalid_text("chain below x-defs", &schema, &json!({"x": "s"}));
    assert!(text.starts_with("Invalid arguments:"), "{text}");
    assert_eq!(schema.validate(json!({"x": 3}), false), Ok(json!({"x": 3})));
}

#[test]
fn arguments_past_the_budget_are_refused_as_too_complex() {
    let schema = compile(&anyof_chain_schema(40));
    let text = invalid_text("chain 40 deep", &schema, &json!({"x": "not a number"}));
    assert!(text.contains("too complex"), "{text}");
    assert!(!schema.is_valid(&json!({"x": "not a number"})));
}

#[test]
fn large_ordinary_arguments_fit_the_budget() {
    // 64 KB of records against a union of three record shapes: well within.
    let record = |i: usize| json!({"kind": "point", "x": i, "y": i, "label": format!("p{i}")});
    let items: Vec<Value> = (0..1_400).map(record).collect();
    let args = json!({ "items": items });
    assert!(args.to_string().len() > 60_000);
    let shape = |kind: &str| {
        json!({"type": "object", "properties": {
            "kind": {"const": kind}, "x": {"type": "number"}, "y": {"type": "number"},
            "label": {"type": "string", "maxLength": 40}
        }, "required": ["kind"]})
    };
    let schema = compile(&json!({"type": "object", "properties": {"items": {
        "type": "array", "items": {"anyOf": [shape("line"), shape("circle"), shape("point")]}
    }}}));
    let valid = bounded("64 KB of records", TARGET_UNITS, || {
        schema.validate(args.clone(), false)
    });
    assert!(valid.is_ok(), "{valid:?}");
}

#[test]
fn errors_are_capped() {
    let mut properties = serde_json::Map::new();
    let mut args = serde_json::Map::new();
    for i in 0..5_000 {
        properties.insert(format!("p{i}"), json!({"type": "integer"}));
        args.insert(format!("p{i}"), json!("x"));
    }
    let schema = compile(&json!({"type": "object", "properties": properties}));
    let args = Value::Object(args);
    let errors = bounded("5,000 errors", TARGET_UNITS, || {
        schema.validate(args.clone(), false)
    })
    .expect_err("every property is a string");
    assert_eq!(errors.0.len(), capstan::schema::MAX_ERRORS + 1);
    assert!(errors.0.last().unwrap().message.contains("stopped early"));
}

#[test]
fn strict_nulls_on_any_of_chains_are_linear() {
    // 28 deep: more than 84 s before each subschema's answer was remembered.
    let schema = anyof_chain_schema(28);
    let mut args = json!({"x": null});
    bounded("strict nulls, chain 28 deep", TARGET_UNITS, || {
        let mut a = args.clone();
        capstan::providers::drop_strict_nulls(&schema, &mut a);
        a
    });
    capstan::providers::drop_strict_nulls(&schema, &mut args);
    assert_eq!(
        args,
        json!({}),
        "x takes no null: the null stands for left out"
    );
}

#[test]
fn gemini_lowering_refuses_exponential_inlining() {
    use capstan::providers::{export_tools, ExportOptions, Format};
    // 24 deep: 31 MB of output, 3.7 s and 1.85 GB before the bound.
    let spec = capstan::ToolSpec {
        name: "chain".into(),
        description: String::new(),
        parameters: anyof_chain_schema(24),
        flags: capstan::ToolFlags::default(),
        timeout_ms: 0,
        max_output_chars: 0,
        warnings: Vec::new(),
        mcp: Default::default(),
    };
    let options = ExportOptions {
        gemini_lower: true,
        ..ExportOptions::default()
    };
    let export = bounded("Gemini lowering, chain 24 deep", TARGET_UNITS, || {
        export_tools(std::slice::from_ref(&spec), Format::Gemini, &options)
    });
    let decl = &export.tools[0]["functionDeclarations"][0];
    assert_eq!(decl["parametersJsonSchema"], spec.parameters, "{decl}");
    assert!(decl.get("parameters").is_none());
    assert!(
        export
            .report
            .iter()
            .any(|n| n.message.contains("not lowered")),
        "{:?}",
        export.report
    );
    // An ordinary schema is still lowered.
    let small = capstan::ToolSpec {
        parameters: anyof_chain_schema(3),
        ..spec.clone()
    };
    let export = export_tools(std::slice::from_ref(&small), Format::Gemini, &options);
    assert!(export.tools[0]["functionDeclarations"][0]
        .get("parameters")
        .is_some());
}

fn noop_tool(name: String) -> capstan::ToolDef {
    capstan::ToolDef {
        name,
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(|call: capstan::Call| {
            let _ = call.complete_text("ok");
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: capstan::ToolFlags::default(),
    }
}

#[test]
fn unknown_tool_suggestions_cost_no_more_than_known_calls() {
    use capstan::{execute, CallRequest, ExecOptions, Outcome, Registry};
    let registry = Registry::default();
    for name in many_tool_names(10_000) {
        registry.register(noop_tool(name)).unwrap();
    }
    let calls = |suffix: &str| -> Vec<CallRequest> {
        (0..10_000)
            .map(|i| CallRequest::new(format!("c{i}"), format!("tool_{i:05}_{suffix}"), json!({})))
            .collect()
    };
    let sequential = ExecOptions {
        parallel: false,
        ..ExecOptions::default()
    };
    let best = |batch: Vec<CallRequest>| {
        (0..3)
            .map(|_| measure(|| execute(&registry, batch.clone(), &sequential)))
            .min_by_key(|(_, took, _)| *took)
            .unwrap()
    };
    let (_, known, _) = best(calls("fetch"));
    // 10k unknown calls against 10k tools: 36 s before; the target is 100 ms,
    // about what the same batch of known calls costs.
    let (results, unknown, _) = best(calls("fecth"));
    assert!(
        unknown <= known * LOOSE,
        "unknown {unknown:?}, known {known:?}"
    );
    assert_eq!(results[4217].outcome, Outcome::UnknownTool);
    assert!(
        results[4217]
            .content
            .contains("Did you mean \"tool_04217_fetch\"?"),
        "{}",
        results[4217].content
    );
    // A typo at the start, a case slip, and a 1 MB name.
    for (name, meant) in [
        ("tol_00042_fetch", Some("tool_00042_fetch")),
        ("TOOL_00042_FETCH", Some("tool_00042_fetch")),
    ] {
        let r = &execute(
            &registry,
            vec![CallRequest::new("1", name, json!({}))],
            &sequential,
        )[0];
        let expected = meant.map(|m| format!("Did you mean \"{m}\"?"));
        assert!(
            r.content.contains(expected.as_deref().unwrap_or("")),
            "{}",
            r.content
        );
    }
    let long = vec![CallRequest::new("1", "tool_".repeat(200_000), json!({}))];
    let results = bounded("1 MB unknown name", TARGET_UNITS, || {
        execute(&registry, long.clone(), &sequential)
    });
    assert!(
        results[0].content.len() < 2_000,
        "the name is cut in the text"
    );
}

#[test]
fn oversized_counted_repetition_is_refused_with_a_size_message() {
    for pattern in ["\\p{L}{500}", "(?:\\w{1000}){50}"] {
        let schema =
            json!({"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}});
        let message = match bounded("refusing a huge pattern", TARGET_UNITS, || {
            Schema::compile(&schema)
        }) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{pattern} should be refused"),
        };
        assert!(message.contains("compiles to more than"), "{message}");
        assert!(!message.contains("backreferences"), "{message}");
    }
    // Counted repetition within the limit registers, and matching stays linear.
    let schema = compile(
        &json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^(?:\\w{100}){10}$"}}}),
    );
    let long = json!({"s": "a".repeat(64 * 1024)});
    let result = bounded("a large pattern on 64 KB", TARGET_UNITS, || {
        schema.validate(long.clone(), false)
    });
    assert!(result.is_err());
}

#[test]
fn a_pattern_key_inside_data_is_not_compiled_as_a_regex() {
    // A default, const, enum or example value may be an object with a
    // "pattern" key: it is data the validator never compiles, so its size
    // must not refuse the schema.
    let huge = json!({"pattern": "\\p{L}{500}"});
    for keyword in ["default", "const", "examples", "enum"] {
        let data = if matches!(keyword, "examples" | "enum") {
            json!([huge.clone()])
        } else {
            huge.clone()
        };
        let schema =
            json!({"type": "object", "properties": {"a": {"type": "object", keyword: data}}});
        if let Err(e) = Schema::compile(&schema) {
            panic!("{keyword}: a data value was taken for a pattern: {e}");
        }
    }
    // A property *named* like a data keyword still holds a schema, and its
    // pattern is still checked.
    let named = json!({"type": "object", "properties": {"default": {"type": "string", "pattern": "\\p{L}{500}"}}});
    let message = match Schema::compile(&named) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a property named default must have its pattern checked"),
    };
    assert!(message.contains("compiles to more than"), "{message}");
}

#[test]
fn a_too_big_pattern_is_refused_wherever_a_schema_may_sit() {
    // The size check walks every place a schema goes: inside arrays of
    // schemas (anyOf, prefixItems), under keywords holding one schema (items,
    // not) and under name maps (properties, $defs), and names where it found
    // the pattern.
    let big = json!({"type": "string", "pattern": "\\p{L}{500}"});
    let cases = [
        (
            json!({"type": "object", "properties": {"s": {"anyOf": [{"type": "integer"}, big.clone()]}}}),
            "at /properties/s/anyOf/1/pattern",
        ),
        (
            json!({"type": "object", "properties": {"t": {"type": "array", "prefixItems": [big.clone()]}}}),
            "at /properties/t/prefixItems/0/pattern",
        ),
        (
            json!({"type": "object", "properties": {"t": {"type": "array", "items": big.clone()}}}),
            "at /properties/t/items/pattern",
        ),
        (
            json!({"type": "object", "properties": {"n": {"not": big.clone()}}}),
            "at /properties/n/not/pattern",
        ),
        (
            json!({"type": "object", "$defs": {"word": big.clone()}, "properties": {"w": {"$ref": "#/$defs/word"}}}),
            "at /$defs/word/pattern",
        ),
    ];
    for (schema, at) in cases {
        let message = match Schema::compile(&schema) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{schema}: the pattern {at} should be refused"),
        };
        assert!(
            message.contains(at) && message.contains("compiles to more than"),
            "{schema}: {message}"
        );
    }
}

#[test]
fn wide_all_of_compiles_in_linear_time() {
    // allOf of 100k {}: 1.4 s in capstan's own setup before (quadratic), paid
    // at registration and again at the first call. Now a fraction of what the
    // validator itself takes to compile it.
    let schema = wide_all_of(100_000);
    // Best of two each, interleaved, so that a burst of load does not decide.
    let (mut validator_alone, mut ours) = (Duration::MAX, Duration::MAX);
    for _ in 0..2 {
        validator_alone = validator_alone.min(measure(|| jsonschema::validator_for(&schema)).1);
        let (compiled, took, _) = measure(|| Schema::compile(&schema));
        assert!(compiled.is_ok());
        ours = ours.min(took);
    }
    assert!(
        ours <= validator_alone * 4,
        "capstan {ours:?}, the validator alone {validator_alone:?}"
    );
}

// --- streams (issue 29, rows 6 and 7) ----------------------------------------

use capstan::providers::Format;
use capstan::stream::{Stream, StreamOptions};
use capstan::Registry;

fn sse(data: &Value) -> String {
    format!("data: {data}\n\n")
}

fn chat_delta(delta: Value) -> String {
    sse(&json!({"choices": [{"index": 0, "delta": delta}]}))
}

/// One chat call as one chunk.
fn chat_call(i: usize) -> String {
    chat_delta(
        json!({"tool_calls": [{"index": i, "id": format!("call_{i}"), "type": "function",
        "function": {"name": "f", "arguments": "{}"}}]}),
    )
}

fn anthropic_call(i: usize) -> String {
    [
        sse(&json!({"type": "content_block_start", "index": i,
            "content_block": {"type": "tool_use", "id": format!("toolu_{i}"), "name": "f", "input": {}}})),
        sse(&json!({"type": "content_block_stop", "index": i})),
    ]
    .concat()
}

fn anthropic_text(text: &str) -> String {
    sse(&json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "text_delta", "text": text}}))
}

fn responses_call(i: usize) -> String {
    let item = |kind: &str| {
        sse(&json!({"type": kind, "output_index": i,
            "item": {"id": format!("fc_{i}"), "type": "function_call", "call_id": format!("call_{i}"),
                     "name": "f", "arguments": "{}"}}))
    };
    item("response.output_item.added") + &item("response.output_item.done")
}

fn responses_text(text: &str) -> String {
    sse(&json!({"type": "response.output_text.delta", "output_index": 0, "delta": text}))
}

/// Feeds `body` to a new stream (no early dispatch: what is measured is
/// reading the stream); the first error, if any.
fn feed_stream(
    fmt: Format,
    options: &StreamOptions,
    body: &[u8],
) -> Result<Stream, capstan::Error> {
    let reg = Registry::default();
    let mut stream = Stream::new(fmt, options.clone(), None, None)?;
    for chunk in body.chunks(64 * 1024) {
        stream.feed(&reg, chunk)?;
    }
    Ok(stream)
}

/// Feeding `hostile` costs at most ten times feeding `benign` (as many
/// events, about as many bytes, of a shape that was always linear): best of
/// two each, interleaved, in the same build and under the same load.
fn linear_like(what: &str, fmt: Format, hostile: &str, benign: &str) {
    let options = StreamOptions::default();
    let (mut bad, mut good) = (Duration::MAX, Duration::MAX);
    for _ in 0..2 {
        let (fed, took, _) = measure(|| feed_stream(fmt, &options, benign.as_bytes()).map(drop));
        fed.unwrap_or_else(|e| panic!("{what}: the baseline fails: {e}"));
        good = good.min(took);
        let (fed, took, _) = measure(|| feed_stream(fmt, &options, hostile.as_bytes()).map(drop));
        fed.unwrap_or_else(|e| panic!("{what}: {e}"));
        bad = bad.min(took);
    }
    assert!(
        bad <= good * LOOSE,
        "{what}: {bad:?}, against {good:?} for as many text events"
    );
}

#[test]
fn chat_argument_fragments_ending_in_a_brace_cost_what_other_fragments_cost() {
    // 8,000 fragments of 64 bytes, each ending in `}` inside a string: each
    // used to re-parse all the argument text so far (quadratic: 0.93 s for
    // 2.2 MB in a release build).
    let fragments = 8_000;
    let piece = |last: char| format!("{}{last}", "x".repeat(63));
    let body = |last: char| {
        let mut body = chat_delta(
            json!({"tool_calls": [{"index": 0, "id": "call_0", "type": "function",
            "function": {"name": "f", "arguments": "{\"a\":\""}}]}),
        );
        for _ in 0..fragments {
            body.push_str(&chat_delta(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": piece(last)}}]}),
            ));
        }
        body
    };
    linear_like(
        "chat fragments ending in }",
        Format::OpenAiChat,
        &body('}'),
        &body('x'),
    );
}

#[test]
fn a_call_costs_the_same_however_many_calls_came_before_it() {
    // 20,000 calls of one event each (two for Anthropic and Responses):
    // each used to look at every call before it.
    let n = 20_000;
    let text = "x".repeat(40);
    type Case = (Format, fn(usize) -> String, String);
    let cases: [Case; 3] = [
        (
            Format::OpenAiChat,
            chat_call,
            chat_delta(json!({"content": text})),
        ),
        (
            Format::Anthropic,
            anthropic_call,
            anthropic_text(&text).repeat(2),
        ),
        (
            Format::OpenAiResponses,
            responses_call,
            responses_text(&text).repeat(2),
        ),
    ];
    for (fmt, call, text_event) in cases {
        let calls: String = (0..n).map(call).collect();
        let texts = text_event.repeat(n);
        linear_like(&format!("{n} {} calls", fmt.name()), fmt, &calls, &texts);
    }
}

/// The stream fails with `StreamTooLarge` before it has read all of `body`,
/// holding at most a few times `cap` on the way.
fn too_large(what: &str, fmt: Format, cap: usize, body: &str) {
    let options = StreamOptions {
        max_buffered: cap,
        ..Default::default()
    };
    let (fed, _, peak) = measure(|| feed_stream(fmt, &options, body.as_bytes()).map(drop));
    assert!(
        matches!(fed, Err(capstan::Error::StreamTooLarge(_))),
        "{what}: {fed:?}"
    );
    assert!(
        peak <= cap * LOOSE as usize,
        "{what}: peak heap {peak} bytes, cap {cap}"
    );
}

#[test]
fn every_byte_a_stream_holds_counts_against_its_cap() {
    let cap = 1 << 20;
    let big = "x".repeat(20_000);
    // 100 tool_use blocks never stopped, each with 20 KB of input.
    let blocks: String = (0..100)
        .map(|i| {
            sse(&json!({"type": "content_block_start", "index": i,
                "content_block": {"type": "tool_use", "id": format!("t{i}"), "name": "f", "input": {}}}))
                + &sse(&json!({"type": "content_block_delta", "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": format!("{{\"a\":\"{big}")}}))
        })
        .collect();
    too_large("open Anthropic blocks", Format::Anthropic, cap, &blocks);
    // The same with the input in the start event.
    let starts: String = (0..100)
        .map(|i| {
            sse(&json!({"type": "content_block_start", "index": i,
                "content_block": {"type": "tool_use", "id": format!("t{i}"), "name": "f", "input": {"a": big}}}))
        })
        .collect();
    too_large("Anthropic start inputs", Format::Anthropic, cap, &starts);
    // 100 open Responses items with 20 KB names.
    let items: String = (0..100)
        .map(|i| {
            sse(&json!({"type": "response.output_item.added", "output_index": i,
                "item": {"id": format!("fc_{i}"), "type": "function_call", "call_id": format!("c{i}"),
                         "name": big, "arguments": ""}}))
        })
        .collect();
    too_large("open Responses items", Format::OpenAiResponses, cap, &items);
    // 100 Chat calls with 20 KB names, complete.
    let calls: String = (0..100)
        .map(|i| {
            chat_delta(
                json!({"tool_calls": [{"index": i, "id": format!("c{i}"), "type": "function",
                "function": {"name": big, "arguments": "{}"}}]}),
            )
        })
        .collect();
    too_large("Chat names", Format::OpenAiChat, cap, &calls);
    // Empty calls only: their bookkeeping counts too.
    let empty: String = (0..40_000).map(chat_call).collect();
    too_large("many empty Chat calls", Format::OpenAiChat, cap, &empty);
    // Whitespace added to arguments already whole.
    let mut revised = chat_call(0);
    let spaces = chat_delta(
        json!({"tool_calls": [{"index": 0, "function": {"arguments": " ".repeat(1000)}}]}),
    );
    revised.push_str(&spaces.repeat(2_000));
    too_large(
        "whitespace after whole Chat arguments",
        Format::OpenAiChat,
        cap,
        &revised,
    );
}

/// `finish`'s JSON (calls, results, messages) is at most
/// `FINISH_EXPANSION` times the body's bytes, whatever the calls look like:
/// the bound docs/limits.md gives.
const FINISH_EXPANSION: usize = 8;

#[test]
fn finish_expands_the_body_by_a_bounded_factor() {
    let reg = Registry::default();
    let name = "n".repeat(10_000);
    let bodies: [(Format, String); 3] = [
        // Open Responses items with long names, cut by the end.
        (Format::OpenAiResponses, {
            let mut b: String = (0..50)
                .map(|i| {
                    sse(&json!({"type": "response.output_item.added", "output_index": i,
                        "item": {"id": format!("fc_{i}"), "type": "function_call",
                                 "call_id": format!("c{i}"), "name": name, "arguments": "{\"a\":"}}))
                })
                .collect();
            b.push_str(&sse(&json!({"type": "response.incomplete",
                "response": {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}})));
            b
        }),
        // Many small calls.
        (Format::OpenAiChat, {
            let mut b: String = (0..5_000).map(chat_call).collect();
            b.push_str(&sse(
                &json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            ));
            b.push_str("data: [DONE]\n\n");
            b
        }),
        (Format::Anthropic, {
            let mut b: String = (0..5_000).map(anthropic_call).collect();
            b.push_str(&sse(&json!({"type": "message_stop"})));
            b
        }),
    ];
    for (fmt, body) in bodies {
        let mut stream = feed_stream(fmt, &StreamOptions::default(), body.as_bytes())
            .unwrap_or_else(|e| panic!("{}: {e}", fmt.name()));
        let finished = stream
            .finish(&reg)
            .unwrap_or_else(|e| panic!("{}: {e}", fmt.name()));
        let out = finished.to_json(fmt).to_string().len();
        assert!(
            out <= body.len() * FINISH_EXPANSION,
            "{}: {} bytes in, {out} out",
            fmt.name(),
            body.len()
        );
    }
}
