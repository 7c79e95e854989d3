//! Search over the registry (issue #32): what a host relies on.

use capstan::search::{SearchMode, SearchOptions, MAX_QUERY_BYTES, MAX_RESULTS};
use capstan::{Error, Registry, ToolDef, ToolFlags};
use serde_json::{json, Value};

fn def(name: &str, description: &str, parameters: Value) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: description.into(),
        parameters,
        handler: Box::new(|call: capstan::Call| call.complete_text("ok").unwrap()),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    }
}

fn no_params() -> Value {
    json!({"type": "object", "properties": {}})
}

fn registry() -> Registry {
    let reg = Registry::default();
    reg.register(def(
        "get_weather",
        "Current weather for a city.",
        json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}}
        }),
    ))
    .unwrap();
    reg.register(def(
        "sendEmail",
        "Sends a message to a recipient.",
        json!({
            "type": "object",
            "properties": {"to": {"type": "string", "description": "Address of the recipient"},
                           "subject": {"type": "string"}}
        }),
    ))
    .unwrap();
    reg.register(def(
        "list_files",
        "Lists the entries of a directory.",
        json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Directory to list"}}
        }),
    ))
    .unwrap();
    reg.register(def(
        "stock_price",
        "Latest quote of a ticker.",
        json!({
            "type": "object",
            "properties": {"symbol": {"type": "string", "description": "Ticker symbol, e.g. AAPL"}}
        }),
    ))
    .unwrap();
    reg
}

fn names(reg: &Registry, query: &str, options: &SearchOptions) -> Vec<String> {
    reg.search(query, options)
        .unwrap()
        .into_iter()
        .map(|h| h.name)
        .collect()
}

fn words(limit: usize) -> SearchOptions {
    SearchOptions {
        limit,
        mode: SearchMode::Words,
    }
}

fn regex(limit: usize) -> SearchOptions {
    SearchOptions {
        limit,
        mode: SearchMode::Regex,
    }
}

#[test]
fn words_find_a_tool_by_its_split_name_description_or_parameters() {
    let reg = registry();
    // Split camel case and plural: "send emails" meets sendEmail.
    assert_eq!(names(&reg, "send emails", &words(1)), ["sendEmail"]);
    // Description only.
    assert_eq!(names(&reg, "directory entries", &words(1)), ["list_files"]);
    // Parameter name and its description.
    assert_eq!(names(&reg, "AAPL symbol", &words(1)), ["stock_price"]);
    assert_eq!(names(&reg, "recipient", &words(1)), ["sendEmail"]);
}

#[test]
fn results_are_ranked_best_first_and_limited() {
    let reg = registry();
    reg.register(def("weather_alerts", "Severe weather alerts.", no_params()))
        .unwrap();
    let hits = reg.search("weather city", &words(5)).unwrap();
    assert_eq!(hits[0].name, "get_weather", "two words beat one");
    assert_eq!(hits[1].name, "weather_alerts");
    assert!(hits[0].score > hits[1].score);
    assert_eq!(hits[0].description, "Current weather for a city.");
    assert_eq!(names(&reg, "weather", &words(1)).len(), 1);
    // Nothing shared: no results.
    assert!(names(&reg, "zebra", &words(5)).is_empty());
}

#[test]
fn the_index_follows_tools_added_replaced_and_removed_after_a_search() {
    let reg = registry();
    assert!(names(&reg, "translate", &words(5)).is_empty());
    reg.register(def(
        "translate_text",
        "Translate text between languages.",
        no_params(),
    ))
    .unwrap();
    assert_eq!(names(&reg, "translate", &words(5)), ["translate_text"]);
    // Replaced: the old description no longer matches, the new one does.
    let mut replacement = def(
        "translate_text",
        "Convert prose into another tongue.",
        no_params(),
    );
    replacement.flags = capstan::ToolFlags(capstan::ToolFlags::REPLACE);
    reg.register(replacement).unwrap();
    assert_eq!(names(&reg, "languages", &words(5)), Vec::<String>::new());
    assert_eq!(names(&reg, "tongue", &words(5)), ["translate_text"]);
    reg.unregister("translate_text").unwrap();
    assert!(names(&reg, "translate tongue", &words(5)).is_empty());
    assert!(names(&reg, "translate", &regex(5)).is_empty());
}

#[test]
fn regex_matches_names_first_then_other_text() {
    let reg = registry();
    reg.register(def("city_guide", "Things to do.", no_params()))
        .unwrap();
    // "city" is in city_guide's name and in get_weather's description.
    assert_eq!(
        names(&reg, "(?i)city", &regex(5)),
        ["city_guide", "get_weather"]
    );
    // Parameter descriptions are searched too.
    assert_eq!(names(&reg, "AAPL", &regex(5)), ["stock_price"]);
    assert_eq!(names(&reg, "^send", &regex(5)), ["sendEmail"]);
}

#[test]
fn bad_queries_are_invalid_arguments_that_say_what_was_wrong() {
    let reg = registry();
    let err = |q: &str, o: &SearchOptions| match reg.search(q, o) {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("{q:?}: {other:?}"),
    };
    assert!(err("  ", &words(5)).contains("empty"));
    let long = "a".repeat(MAX_QUERY_BYTES + 1);
    assert!(err(&long, &words(5)).contains(&MAX_QUERY_BYTES.to_string()));
    assert!(err("weather", &words(MAX_RESULTS + 1)).contains("at most"));
    assert!(err("(unclosed", &regex(5)).contains("pattern is not valid"));
    // A pattern that would compile past the size cap.
    assert!(err("\\w{1000}\\w{1000}", &regex(5)).contains("pattern is not valid"));
    // At the bounds: accepted.
    let at_bound = "a".repeat(MAX_QUERY_BYTES);
    assert!(reg.search(&at_bound, &words(MAX_RESULTS)).is_ok());
}

#[test]
fn a_limit_of_zero_means_five() {
    let reg = Registry::default();
    for i in 0..8 {
        reg.register(def(&format!("tool_{i}"), "common words here", no_params()))
            .unwrap();
    }
    assert_eq!(names(&reg, "common", &words(0)).len(), 5);
}

#[test]
fn a_closed_registry_finds_nothing() {
    let reg = registry();
    assert!(!names(&reg, "weather", &words(5)).is_empty());
    reg.close(std::time::Duration::from_secs(5));
    assert!(names(&reg, "weather", &words(5)).is_empty());
}
