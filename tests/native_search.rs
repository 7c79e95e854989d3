//! Provider-native deferred loading (issue #32, item 3): OpenAI Responses'
//! client-executed `tool_search` (`tool_search_call` in, `tool_search_output`
//! out) and Anthropic's `defer_loading` with `tool_reference` results.
//!
//! Calls come from fixtures written after the providers' SDK types
//! (tests/fixtures/providers/*_tool_search.json); capstan's output must equal
//! tests/fixtures/providers/native_search_expected.json, which
//! bindings/python/tests/test_native_search_shapes.py validates against the
//! openai and anthropic SDK models.

use capstan::export::ExportTools;
use capstan::providers::{parse_calls, ExportOptions, Format, NATIVE_SEARCH_CALL};
use capstan::search_tool::SearchToolOptions;
use capstan::{ExecOptions, Registry, ToolDef, ToolFlags};
use serde_json::{json, Value};

fn def(name: &str, description: &str, flags: u32) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: description.into(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        handler: Box::new(|call: capstan::Call| {
            let city = call.arguments()["city"].as_str().unwrap_or("?").to_string();
            call.complete_text(format!("sunny in {city}")).unwrap()
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags(flags),
    }
}

/// One plain tool, three deferred ones, and (optionally) the search tool
/// listing at most 2 tools.
fn registry(with_search_tool: bool) -> Registry {
    let reg = Registry::default();
    reg.register(def("always_here", "A tool always shown", 0))
        .unwrap();
    let deferred = ToolFlags::DEFERRED;
    reg.register(def(
        "forecast_weather",
        "Weather forecast for a city",
        deferred,
    ))
    .unwrap();
    reg.register(def("weather_history", "Past weather of a city", deferred))
        .unwrap();
    reg.register(def("send_email", "Send an email to someone", deferred))
        .unwrap();
    if with_search_tool {
        reg.add_search_tool(SearchToolOptions {
            limit: 2,
            ..Default::default()
        })
        .unwrap();
    }
    reg
}

fn fixture(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/providers")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn native() -> ExportOptions {
    ExportOptions {
        native_search: true,
        ..ExportOptions::default()
    }
}

fn names(tools: &Value) -> Vec<&str> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect()
}

#[test]
fn openai_native_export_defers_tools_and_adds_one_client_tool_search() {
    let reg = registry(true);
    let tools = reg.export_tools(Format::OpenAiResponses, &native()).tools;
    assert_eq!(
        tools,
        fixture("native_search_expected.json")["openai_responses_tools"]
    );
    // Every tool is listed, deferred ones marked; the search tool is not a
    // function but the one tool_search tool, last.
    assert_eq!(
        names(&tools),
        [
            "always_here",
            "forecast_weather",
            "send_email",
            "weather_history"
        ]
    );
    assert!(tools[0].get("defer_loading").is_none());
    for t in &tools.as_array().unwrap()[1..4] {
        assert_eq!(t["defer_loading"], true, "{t}");
    }
    let search = &tools[4];
    assert_eq!(search["type"], "tool_search");
    assert_eq!(search["execution"], "client");
    assert_eq!(
        search["description"],
        capstan::search_tool::DEFAULT_TOOL_DESCRIPTION
    );
    assert_eq!(search["parameters"]["required"], json!(["query"]));

    // Without the option, deferred tools not found are left out as before.
    let hidden = reg
        .export_tools(Format::OpenAiResponses, &ExportOptions::default())
        .tools;
    assert_eq!(names(&hidden), ["always_here", "tool_search"]);
}

#[test]
fn a_client_tool_search_call_is_answered_by_capstan_beside_function_calls() {
    let reg = registry(true);
    let exported = reg.export_tools(Format::OpenAiResponses, &native()).tools;
    let response = fixture("openai_responses_tool_search.json");

    let calls = parse_calls(Format::OpenAiResponses, &response).unwrap();
    let read: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect();
    // The server-executed search is the server's: skipped.
    assert_eq!(
        read,
        [
            ("call_Search1", NATIVE_SEARCH_CALL),
            ("call_Here1", "always_here")
        ]
    );

    let items = capstan::run_turn(
        &reg,
        Format::OpenAiResponses,
        &response,
        &ExecOptions::default(),
    )
    .unwrap();
    assert_eq!(
        items,
        fixture("native_search_expected.json")["openai_responses_turn"]
    );
    assert_eq!(items[0]["type"], "tool_search_output");
    assert_eq!(items[0]["call_id"], "call_Search1");
    assert_eq!(items[0]["execution"], "client");
    // The found tools' full definitions, as exported (limit 2: the search
    // tool's own), best first.
    let found = items[0]["tools"].as_array().unwrap();
    assert_eq!(
        names(&items[0]["tools"]),
        ["forecast_weather", "weather_history"]
    );
    assert_eq!(found[0], exported[1]);
    assert_eq!(items[1]["type"], "function_call_output");
    assert_eq!(items[1]["output"], "sunny in Oslo");
    assert_eq!(reg.loaded_tools(), ["forecast_weather", "weather_history"]);
}

#[test]
fn without_a_search_tool_the_native_search_uses_the_defaults() {
    let reg = registry(false);
    let tools = reg.export_tools(Format::OpenAiResponses, &native()).tools;
    let last = tools.as_array().unwrap().last().unwrap();
    assert_eq!(last["type"], "tool_search");
    assert_eq!(
        last["description"],
        capstan::search_tool::DEFAULT_TOOL_DESCRIPTION
    );
    let response = json!({"output": [{"type": "tool_search_call", "id": "tsc_1",
        "call_id": "c1", "execution": "client", "status": "completed",
        "arguments": {"goal": "send email"}}]});
    let items = capstan::run_turn(
        &reg,
        Format::OpenAiResponses,
        &response,
        &ExecOptions::default(),
    )
    .unwrap();
    // Not "query": the string arguments are the query.
    assert_eq!(names(&items[0]["tools"])[0], "send_email");
}

#[test]
fn a_native_search_that_cannot_run_lists_no_tools_and_is_incomplete() {
    let reg = registry(true);
    let response = json!({"type": "tool_search_call", "id": "tsc_1", "call_id": "c1",
        "execution": "client", "status": "completed", "arguments": {"query": "  "}});
    let items = capstan::run_turn(
        &reg,
        Format::OpenAiResponses,
        &response,
        &ExecOptions::default(),
    )
    .unwrap();
    assert_eq!(
        items,
        json!([{"type": "tool_search_output", "call_id": "c1", "execution": "client",
            "status": "incomplete", "tools": []}])
    );
}

#[test]
fn a_strict_native_export_makes_the_found_tools_strict_too() {
    let reg = registry(true);
    let strict = ExportOptions {
        strict: true,
        ..native()
    };
    let exported = reg.export_tools(Format::OpenAiResponses, &strict).tools;
    assert_eq!(exported[1]["strict"], true);
    let response = fixture("openai_responses_tool_search.json");
    let items = capstan::run_turn(
        &reg,
        Format::OpenAiResponses,
        &response,
        &ExecOptions::default(),
    )
    .unwrap();
    assert_eq!(items[0]["tools"][0], exported[1]);
}

#[test]
fn anthropic_native_export_defers_tools_and_keeps_the_search_tool_plain() {
    let reg = registry(true);
    let export = reg.export_tools(Format::Anthropic, &native());
    assert!(export.report.is_empty(), "{:?}", export.report);
    let tools = export.tools;
    assert_eq!(
        tools,
        fixture("native_search_expected.json")["anthropic_tools"]
    );
    assert_eq!(
        names(&tools),
        [
            "always_here",
            "forecast_weather",
            "send_email",
            "tool_search",
            "weather_history"
        ]
    );
    for t in tools.as_array().unwrap() {
        let deferred = ["forecast_weather", "send_email", "weather_history"]
            .contains(&t["name"].as_str().unwrap());
        assert_eq!(
            t.get("defer_loading") == Some(&json!(true)),
            deferred,
            "{t}"
        );
    }
}

#[test]
fn anthropic_search_results_are_tool_references_after_a_native_export() {
    let reg = registry(true);
    reg.export_tools(Format::Anthropic, &native());
    let response = fixture("anthropic_tool_search.json");
    let message =
        capstan::run_turn(&reg, Format::Anthropic, &response, &ExecOptions::default()).unwrap();
    assert_eq!(
        message,
        fixture("native_search_expected.json")["anthropic_turn"]
    );
    assert_eq!(
        message["content"][0]["content"],
        json!([
            {"type": "tool_reference", "tool_name": "forecast_weather"},
            {"type": "tool_reference", "tool_name": "weather_history"}
        ])
    );
    assert_eq!(message["content"][1]["content"], "sunny in Oslo");

    // After an export without the option, the search answers in JSON again.
    reg.export_tools(Format::Anthropic, &ExportOptions::default());
    let message =
        capstan::run_turn(&reg, Format::Anthropic, &response, &ExecOptions::default()).unwrap();
    let content = message["content"][0]["content"].as_str().unwrap();
    assert!(content.contains("\"forecast_weather\""), "{content}");
}

#[test]
fn an_anthropic_search_that_finds_nothing_says_so_in_text() {
    let reg = registry(true);
    reg.export_tools(Format::Anthropic, &native());
    let response = json!({"content": [{"type": "tool_use", "id": "toolu_1",
        "name": "tool_search", "input": {"query": "zzzz"}}]});
    let message =
        capstan::run_turn(&reg, Format::Anthropic, &response, &ExecOptions::default()).unwrap();
    assert_eq!(message["content"][0]["content"], "{\"tools\":[]}");
}

#[test]
fn an_anthropic_native_export_without_a_search_tool_is_reported() {
    let reg = registry(false);
    let export = reg.export_tools(Format::Anthropic, &native());
    assert_eq!(export.report.len(), 1);
    assert!(export.report[0].message.contains("no search tool"));
}

#[test]
fn other_formats_ignore_the_native_option() {
    let reg = registry(true);
    for fmt in [Format::OpenAiChat, Format::Gemini, Format::Mcp] {
        let tools = reg.export_tools(fmt, &native()).tools.to_string();
        assert!(!tools.contains("forecast_weather"), "{}", fmt.name());
        assert!(!tools.contains("defer_loading"), "{}", fmt.name());
    }
}

// --- what a turn's searches may write (issue 45, finding 12) ---------------

/// A turn's output stays within this many times the bytes of the response,
/// as `capstan_stream_finish`'s does (docs/limits.md, Search).
const TURN_EXPANSION: usize = 8;

/// `count` deferred tools, all found by the query "records", each with a
/// parameters schema of about 1 KB, and the search tool listing `limit`.
fn wide_registry(count: usize, limit: usize) -> Registry {
    let reg = Registry::default();
    let long = "A property of the record, described at some length. ".repeat(4);
    for i in 0..count {
        let properties: serde_json::Map<String, Value> = (0..4)
            .map(|p| {
                (
                    format!("field_{p}"),
                    json!({"type": "string", "description": long}),
                )
            })
            .collect();
        let mut d = def(
            &format!("records_op{i}"),
            &format!("Operation {i} on records"),
            ToolFlags::DEFERRED,
        );
        d.parameters = json!({"type": "object", "properties": properties});
        reg.register(d).unwrap();
    }
    reg.register(def("always_here", "A tool always shown", 0))
        .unwrap();
    reg.add_search_tool(SearchToolOptions {
        limit,
        ..Default::default()
    })
    .unwrap();
    reg
}

/// A Responses body of `searches` client tool searches, then one function
/// call. With `same`, each searches for "records"; else search `i` for
/// "records {i}", which finds tool `i` first.
fn many_openai_searches(searches: usize, same: bool) -> String {
    let mut output: Vec<Value> = (0..searches)
        .map(|i| {
            let query = if same {
                "records".to_owned()
            } else {
                format!("records {i}")
            };
            json!({"type": "tool_search_call", "call_id": format!("c{i}"),
                "execution": "client", "arguments": {"query": query}})
        })
        .collect();
    output.push(json!({"type": "function_call", "call_id": "here",
        "name": "always_here", "arguments": "{\"city\":\"Oslo\"}"}));
    json!({ "output": output }).to_string()
}

#[test]
fn a_turn_of_many_searches_writes_at_most_8_times_its_bytes() {
    let reg = wide_registry(1_500, 10);
    reg.export_tools(Format::OpenAiResponses, &native());
    // 1,500 searches: a body of about 150 KB, past the 1 MiB that a turn's
    // searches may always write; each finds a tool no other one found.
    let body = many_openai_searches(1_500, false);
    let items = capstan::turn::run_turn_text(
        &reg,
        Format::OpenAiResponses,
        &body,
        &ExecOptions::default(),
    )
    .unwrap();
    let out = items.to_string().len();
    assert!(
        out <= body.len() * TURN_EXPANSION,
        "{} bytes in, {out} out",
        body.len()
    );
    let items = items.as_array().unwrap();
    assert_eq!(items.len(), 1_501);
    // The searches past the bound say so, with no tools; the ones before it
    // are whole; the function call is answered as usual.
    let first = &items[0];
    assert_eq!(first["status"], "completed");
    assert_eq!(first["tools"].as_array().unwrap().len(), 10);
    let last = &items[1_499];
    assert_eq!(last["type"], "tool_search_output");
    assert_eq!(last["call_id"], "c1499");
    assert_eq!(last["status"], "incomplete", "{last}");
    assert_eq!(last["tools"], json!([]));
    assert_eq!(items[1_500]["output"], "sunny in Oslo");
}

#[test]
fn a_tool_definition_is_listed_once_per_turn() {
    let reg = wide_registry(30, 10);
    reg.export_tools(Format::OpenAiResponses, &native());
    let body = many_openai_searches(3, true);
    let items = capstan::turn::run_turn_text(
        &reg,
        Format::OpenAiResponses,
        &body,
        &ExecOptions::default(),
    )
    .unwrap();
    let mut listed = std::collections::HashSet::new();
    for item in &items.as_array().unwrap()[..3] {
        assert_eq!(item["status"], "completed", "{item}");
        for name in names(&item["tools"]) {
            assert!(listed.insert(name.to_owned()), "{name} listed twice");
        }
    }
    // The first search listed the 10 best; the same query again found them
    // again, and its answer does not repeat them.
    assert_eq!(listed.len(), 10);
    assert_eq!(names(&items[1]["tools"]), Vec::<&str>::new());
    assert_eq!(reg.loaded_tools().len(), 10);
}

/// An Anthropic body of `searches` calls of the search tool for "records".
fn many_anthropic_searches(searches: usize) -> String {
    let content: Vec<Value> = (0..searches)
        .map(|i| {
            json!({"type": "tool_use", "id": format!("t{i}"), "name": "tool_search",
                "input": {"query": "records"}})
        })
        .collect();
    json!({"role": "assistant", "content": content}).to_string()
}

#[test]
fn anthropic_search_answers_of_a_turn_write_at_most_8_times_its_bytes() {
    // Tool references (after a native export) and JSON names and
    // descriptions (after another) alike.
    let reg = wide_registry(400, 100);
    let body = many_anthropic_searches(2_500);
    for options in [native(), ExportOptions::default()] {
        reg.export_tools(Format::Anthropic, &options);
        let message =
            capstan::turn::run_turn_text(&reg, Format::Anthropic, &body, &ExecOptions::default())
                .unwrap();
        let out = message.to_string().len();
        assert!(
            out <= body.len() * TURN_EXPANSION,
            "native {}: {} bytes in, {out} out",
            options.native_search,
            body.len()
        );
        let blocks = message["content"].as_array().unwrap();
        assert_eq!(blocks.len(), 2_500);
        assert!(blocks[0].get("is_error").is_none(), "{}", blocks[0]);
        let last = &blocks[2_499];
        assert_eq!(last["is_error"], true, "{last}");
        let text = last["content"].as_str().unwrap();
        assert!(text.contains("this turn's searches"), "{text}");
    }
}
