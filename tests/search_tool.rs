//! The built-in search tool (issue #32): with 10,000 deferred tools
//! registered, a model in each format is shown only the search tool, calls
//! it, and on its next turn is shown and calls the tool it found.

use capstan::providers::{export_tools, ExportOptions, Format};
use capstan::search_tool::SearchToolOptions;
use capstan::{Error, ExecOptions, Registry, ToolDef, ToolFlags};
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

/// 10,000 deferred tools, one of which forecasts the weather.
fn big_registry() -> Registry {
    let reg = Registry::default();
    for i in 0..10_000 {
        let d = def(
            &format!("service{}_op{i}", i % 97),
            &format!("Operation {i} of service {} on records", i % 97),
            ToolFlags::DEFERRED,
        );
        reg.register(d).unwrap();
    }
    reg.register(def(
        "forecast_weather",
        "Weather forecast for a city",
        ToolFlags::DEFERRED,
    ))
    .unwrap();
    reg.add_search_tool(SearchToolOptions::default()).unwrap();
    reg
}

/// A response of `fmt` calling `name` with `args`.
fn response(fmt: Format, name: &str, args: Value) -> Value {
    let text = args.to_string();
    match fmt {
        Format::OpenAiChat => json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": name, "arguments": text}}]}),
        Format::OpenAiResponses => json!({"output": [
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": name, "arguments": text}]}),
        Format::Anthropic => json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": name, "input": args}]}),
        Format::Gemini => json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "fc-1", "name": name, "args": args}}]}}]}),
        Format::Mcp => json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": args}}),
        Format::Describe => json!({"id": "1", "name": name, "arguments": args}),
    }
}

fn exported(reg: &Registry, fmt: Format) -> String {
    export_tools(&reg.visible_specs(), fmt, &ExportOptions::default())
        .tools
        .to_string()
}

#[test]
fn a_model_in_every_format_finds_and_calls_a_tool_it_was_not_shown() {
    let reg = big_registry();
    for fmt in [
        Format::OpenAiChat,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::Gemini,
        Format::Mcp,
    ] {
        reg.unload_tools(); // a new conversation
        let before = exported(&reg, fmt);
        assert!(before.contains("\"tool_search\""), "{}", fmt.name());
        assert!(!before.contains("forecast_weather"), "{}", fmt.name());
        assert!(!before.contains("service1_op1"), "{}", fmt.name());

        let search = response(fmt, "tool_search", json!({"query": "weather forecast"}));
        let answer = capstan::run_turn(&reg, fmt, &search, &ExecOptions::default()).unwrap();
        let answer = answer.to_string();
        assert!(
            answer.contains("forecast_weather"),
            "{}: {answer}",
            fmt.name()
        );
        assert!(
            answer.contains("Weather forecast for a city"),
            "{}",
            fmt.name()
        );

        let after = exported(&reg, fmt);
        assert!(
            after.contains("\"forecast_weather\""),
            "{}: {after}",
            fmt.name()
        );
        assert!(!after.contains("service1_op1\""), "{}", fmt.name());

        let call = response(fmt, "forecast_weather", json!({"city": "Oslo"}));
        let answer = capstan::run_turn(&reg, fmt, &call, &ExecOptions::default()).unwrap();
        assert!(
            answer.to_string().contains("sunny in Oslo"),
            "{}: {answer}",
            fmt.name()
        );
    }
}

#[test]
fn the_search_tool_takes_its_name_description_and_limit_from_the_host() {
    let reg = Registry::default();
    for i in 0..10 {
        reg.register(def(&format!("weather_{i}"), "weather", ToolFlags::DEFERRED))
            .unwrap();
    }
    reg.register(def("always_here", "not deferred", 0)).unwrap();
    reg.add_search_tool(SearchToolOptions {
        name: "find_tools".into(),
        description: "Find more tools.".into(),
        limit: 3,
        ..Default::default()
    })
    .unwrap();
    let shown = exported(&reg, Format::Anthropic);
    assert!(shown.contains("\"find_tools\"") && shown.contains("Find more tools."));
    assert!(
        shown.contains("always_here"),
        "plain tools are always shown"
    );
    let search = response(Format::Anthropic, "find_tools", json!({"query": "weather"}));
    capstan::run_turn(&reg, Format::Anthropic, &search, &ExecOptions::default()).unwrap();
    assert_eq!(reg.loaded_tools(), ["weather_0", "weather_1", "weather_2"]);
    // The host's own description lists deferred tools and says so.
    let described = export_tools(&reg.specs(), Format::Describe, &ExportOptions::default());
    assert!(described
        .tools
        .to_string()
        .contains("\"flags\":[\"deferred\"]"));
}

#[test]
fn a_search_tool_limit_past_the_bound_is_refused() {
    let reg = Registry::default();
    let options = SearchToolOptions {
        limit: 101,
        ..Default::default()
    };
    assert!(matches!(
        reg.add_search_tool(options),
        Err(Error::InvalidArgument(_))
    ));
    assert!(reg.is_empty());
}

#[test]
fn the_search_tool_does_not_keep_its_registry_alive() {
    let reg = Registry::default();
    reg.add_search_tool(SearchToolOptions::default()).unwrap();
    let tool = reg.get("tool_search").unwrap();
    drop(reg);
    // The registry (and so its tool map) is gone; only this handle holds the tool.
    assert_eq!(std::sync::Arc::strong_count(&tool), 1);
}
