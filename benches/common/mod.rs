//! Fixtures shared by the benches, and the floor: the work any tool runtime
//! must do for one call, done directly with serde_json and jsonschema.
//!
//! The same call, schema and content are used by `bench/c/abi_bench.c`, so
//! that the floor and the ABI figure measure the same job.

pub mod heap;
pub mod hostile;

use serde_json::{json, Value};

/// `get_weather`: 3 properties, an enum, a default.
pub const WEATHER_SCHEMA: &str = r#"{"type":"object","properties":{"city":{"type":"string","minLength":1,"description":"City name, e.g. Paris"},"units":{"type":"string","enum":["celsius","fahrenheit"],"default":"celsius"},"days":{"type":"integer","minimum":1,"maximum":14}},"required":["city"],"additionalProperties":false}"#;

/// One normalized call to `get_weather` (`units` left to its default).
pub const WEATHER_CALL: &str =
    r#"{"id":"call_1","name":"get_weather","arguments":{"city":"Paris","days":3}}"#;

/// The constant JSON the tool returns.
pub const WEATHER_RESULT: &str =
    r#"{"city":"Paris","temperature":21.5,"units":"celsius","conditions":"partly cloudy"}"#;

pub fn weather_schema() -> Value {
    serde_json::from_str(WEATHER_SCHEMA).expect("fixture schema is JSON")
}

/// A compiled validator for the floor.
pub fn floor_validator() -> jsonschema::Validator {
    jsonschema::validator_for(&weather_schema()).expect("fixture schema compiles")
}

/// The call as the floor parses it: typed, borrowing the text where it can.
#[derive(serde::Deserialize)]
struct FloorCall<'a> {
    #[serde(borrow)]
    id: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    name: std::borrow::Cow<'a, str>,
    arguments: Value,
}

/// The honest floor for one call (issue #10): parse the call into a typed
/// struct, validate its arguments (`is_valid`), fill the schema's one
/// default, check and compact the tool's JSON content, write the result
/// array. No lookup, no threads, no handles, no intermediate `Value` for the
/// output: what is left is work any runtime with these semantics must do,
/// done the fast way serde_json offers (`to_writer` into a `Vec`).
pub fn floor(validator: &jsonschema::Validator, call_text: &str, content: &str) -> String {
    let mut call: FloorCall = serde_json::from_str(call_text).expect("fixture call is JSON");
    assert!(
        validator.is_valid(&call.arguments),
        "fixture arguments are valid"
    );
    if let Some(args) = call.arguments.as_object_mut() {
        if !args.contains_key("units") {
            args.insert("units".into(), Value::from("celsius"));
        }
    }
    let content: Value = serde_json::from_str(content).expect("fixture content is JSON");
    let content = serde_json::to_string(&content).expect("a Value serializes");
    let mut out = Vec::with_capacity(96 + content.len());
    out.extend_from_slice(br#"[{"id":"#);
    serde_json::to_writer(&mut out, &*call.id).expect("a str serializes");
    out.extend_from_slice(br#","name":"#);
    serde_json::to_writer(&mut out, &*call.name).expect("a str serializes");
    out.extend_from_slice(br#","content":"#);
    serde_json::to_writer(&mut out, &content).expect("a str serializes");
    out.extend_from_slice(br#","is_error":false,"outcome":"ok","duration_us":0}]"#);
    std::hint::black_box(&call.arguments);
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// A realistic tool schema (about 1 KB): nested object, array, enums,
/// bounds, defaults, descriptions. `i` varies the text.
pub fn realistic_schema(i: usize) -> Value {
    json!({
        "type": "object",
        "description": format!("Search the catalogue, variant {i}"),
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 500,
                      "description": format!("Free text to look for (tool {i})")},
            "category": {"type": "string", "enum": ["books", "music", "film", "games", "other"],
                         "default": "other", "description": "Restrict to one category"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10,
                      "description": "How many results to return"},
            "sort": {"type": "string", "enum": ["relevance", "price", "date"], "default": "relevance"},
            "include_out_of_stock": {"type": "boolean", "default": false},
            "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z0-9-]+$"},
                     "maxItems": 10, "uniqueItems": true},
            "price": {"type": "object",
                      "properties": {"min": {"type": "number", "minimum": 0},
                                     "max": {"type": "number", "minimum": 0},
                                     "currency": {"type": "string", "enum": ["EUR", "USD", "GBP"]}},
                      "required": ["currency"], "additionalProperties": false}
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

/// Median of `samples` (sorted in place).
pub fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}
