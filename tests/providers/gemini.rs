//! Gemini.

use super::*;

#[test]
fn gemini_export_is_one_tool_with_json_schema_declarations() {
    let no_params = tool(
        "get_time",
        "Current time",
        json!({"type": "object", "properties": {}}),
    );
    let export = export_tools(&[weather_tool(), no_params], Format::Gemini, &no_options());
    assert_exact(
        &export.tools,
        &json!([{"functionDeclarations": [
            {"name": "get_weather", "description": "Current weather", "parametersJsonSchema": weather_tool().parameters},
            {"name": "get_time", "description": "Current time", "parametersJsonSchema": {"type": "object", "properties": {}}}
        ]}]),
    );
    assert!(export.report.is_empty());
}

#[test]
fn gemini_lowering_inlines_refs_and_reports_every_drop() {
    let spec = tool(
        "plan",
        "Plan a route",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "stops": {"type": "array", "items": {"$ref": "#/$defs/stop"}, "minItems": 1},
                "mode": {"const": "walk"},
                "note": {"type": ["string", "null"], "format": "uri"},
                "meta": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}, "additionalProperties": {"type": "string"}},
                "when": {"oneOf": [{"type": "string", "format": "date-time"}, {"type": "integer"}]}
            },
            "required": ["stops"],
            "additionalProperties": false,
            "$defs": {
                "stop": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "dwell": {"type": "integer", "exclusiveMinimum": 0}},
                    "required": ["name"],
                    "additionalProperties": false
                }
            }
        }),
    );
    let export = export_tools(&[spec], Format::Gemini, &lower_options());
    assert_exact(
        &export.tools,
        &json!([{"functionDeclarations": [{
            "name": "plan",
            "description": "Plan a route",
            "parameters": {
                "type": "OBJECT",
                "properties": {
                    "stops": {
                        "type": "ARRAY",
                        "items": {
                            "type": "OBJECT",
                            "properties": {"name": {"type": "STRING"}, "dwell": {"type": "INTEGER"}},
                            "required": ["name"]
                        },
                        "minItems": 1
                    },
                    "mode": {"enum": ["walk"], "type": "STRING"},
                    "note": {"nullable": true, "type": "STRING"},
                    "meta": {"type": "OBJECT"},
                    "when": {"anyOf": [{"type": "STRING", "format": "date-time"}, {"type": "INTEGER"}]}
                },
                "required": ["stops"]
            }
        }]}]),
    );
    let report: Vec<(&str, &str)> = export
        .report
        .iter()
        .map(|n| (n.pointer.as_str(), n.message.split(':').next().unwrap()))
        .collect();
    assert_eq!(
        report,
        [
            ("/$schema", "$schema dropped"),
            (
                "/$defs/stop/properties/dwell/exclusiveMinimum",
                "exclusiveMinimum dropped"
            ),
            (
                "/$defs/stop/additionalProperties",
                "additionalProperties dropped"
            ),
            ("/properties/note/format", "format dropped"),
            ("/properties/meta/propertyNames", "propertyNames dropped"),
            (
                "/properties/meta/additionalProperties",
                "additionalProperties dropped"
            ),
            ("/properties/when/oneOf", "oneOf lowered to anyOf"),
            ("/additionalProperties", "additionalProperties dropped"),
            ("/$defs", "$defs dropped"),
        ],
    );
    assert!(export.report.iter().all(|n| n.tool == "plan"));
}

#[test]
fn gemini_lowering_cuts_recursive_refs_and_omits_empty_parameters() {
    let tree = tool(
        "tree",
        "A tree",
        json!({"type": "object", "properties": {
            "root": {"$ref": "#/$defs/node"}
        }, "$defs": {"node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
        }}}}),
    );
    let none = tool(
        "ping",
        "Ping",
        json!({"type": "object", "additionalProperties": false}),
    );
    let export = export_tools(&[tree, none], Format::Gemini, &lower_options());
    let decls = &export.tools[0]["functionDeclarations"];
    assert_exact(
        &decls[0]["parameters"]["properties"]["root"],
        &json!({"type": "OBJECT", "properties": {"children": {"type": "ARRAY", "items": {"type": "OBJECT"}}}}),
    );
    assert_exact(&decls[1], &json!({"name": "ping", "description": "Ping"}));
    let recursive = export
        .report
        .iter()
        .find(|n| n.pointer == "/$defs/node/properties/children/items/$ref")
        .expect("recursive $ref reported");
    assert!(
        recursive.message.contains("recursive"),
        "{}",
        recursive.message
    );
}

#[test]
fn gemini_synthesizes_stable_ids_from_position_when_none_are_sent() {
    let body = fixture("gemini_parallel.json");
    let expected = vec![
        call(
            "gemini_call_0_1",
            "set_light",
            json!({"room": "kök", "level": {"brightness": 25, "warm": true}}),
        ),
        call("gemini_call_0_2", "get_time", json!({})),
    ];
    assert_eq!(parse_calls(Format::Gemini, &body).unwrap(), expected);
    let content = &body["candidates"][0]["content"];
    assert_eq!(parse_calls(Format::Gemini, content).unwrap(), expected);
    assert_eq!(
        parse_calls(Format::Gemini, &content["parts"]).unwrap(),
        expected
    );
}

#[test]
fn gemini_keeps_ids_it_is_sent_and_echoes_them_back() {
    let body = fixture("gemini_with_ids.json");
    let calls = parse_calls(Format::Gemini, &body).unwrap();
    assert_eq!(
        calls,
        vec![
            call("fc-7d1e", "get_weather", json!({"city": "Paris"})),
            call("fc-8a2f", "get_weather", json!({"city": "London"})),
        ]
    );
    let results = [
        ok(
            "fc-7d1e",
            "get_weather",
            "{\"temp\": 18, \"sky\": \"cloudy\"}",
        ),
        failed(
            "fc-8a2f",
            "get_weather",
            Outcome::ToolError,
            "upstream returned 503",
        ),
    ];
    assert_exact(
        &format_results(Format::Gemini, &results),
        &json!({"role": "user", "parts": [
            {"functionResponse": {"id": "fc-7d1e", "name": "get_weather", "response": {"output": {"temp": 18, "sky": "cloudy"}}}},
            {"functionResponse": {"id": "fc-8a2f", "name": "get_weather", "response": {"error": "upstream returned 503"}}}
        ]}),
    );
}

#[test]
fn gemini_never_sends_back_ids_it_did_not_issue() {
    let results = [
        ok("gemini_call_0_1", "set_light", "done"),
        ok("gemini_call_0_2", "get_time", "[12, 0]"),
    ];
    assert_exact(
        &format_results(Format::Gemini, &results),
        &json!({"role": "user", "parts": [
            {"functionResponse": {"name": "set_light", "response": {"output": "done"}}},
            {"functionResponse": {"name": "get_time", "response": {"output": [12, 0]}}}
        ]}),
    );
}

#[test]
fn gemini_without_function_calls_gives_no_calls() {
    let text = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hi"}]}, "finishReason": "STOP"}]});
    assert!(parse_calls(Format::Gemini, &text).unwrap().is_empty());
    let blocked = json!({"candidates": [{"finishReason": "SAFETY"}]});
    assert!(parse_calls(Format::Gemini, &blocked).unwrap().is_empty());
    let prompt_blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}, "candidates": []});
    assert!(parse_calls(Format::Gemini, &prompt_blocked)
        .unwrap()
        .is_empty());
}

#[test]
fn gemini_missing_name_is_named_by_path() {
    let mut body = fixture("gemini_parallel.json");
    body["candidates"][0]["content"]["parts"][2]["functionCall"]
        .as_object_mut()
        .unwrap()
        .remove("name");
    assert_eq!(
        invalid_response(Format::Gemini, &body),
        "candidates[0].content.parts[2].functionCall: functionCall has no \"name\""
    );
}

/// The parameters and the report (pointer, message) of one tool lowered for Gemini.
fn lowered(parameters: Value) -> (Value, Vec<(String, String)>) {
    let export = export_tools(
        &[tool("t", "T", parameters)],
        Format::Gemini,
        &lower_options(),
    );
    let params = export.tools[0]["functionDeclarations"][0]["parameters"].clone();
    let report = export
        .report
        .into_iter()
        .map(|n| (n.pointer, n.message))
        .collect();
    (params, report)
}

#[test]
fn gemini_lowering_keeps_its_formats_and_drops_the_others() {
    let formats = ["enum", "date-time", "float", "double", "int32", "int64"];
    let mut props = serde_json::Map::new();
    for f in formats {
        props.insert(f.into(), json!({"type": "string", "format": f}));
    }
    props.insert("uri".into(), json!({"type": "string", "format": "uri"}));
    let (params, report) = lowered(json!({"type": "object", "properties": props}));
    for f in formats {
        assert_eq!(params["properties"][f]["format"], json!(f), "{f}");
    }
    assert_eq!(params["properties"]["uri"], json!({"type": "STRING"}));
    assert_eq!(
        report,
        [(
            "/properties/uri/format".to_owned(),
            "format dropped: Gemini takes only enum, date-time, float, double, int32, int64"
                .to_owned()
        )]
    );
}

#[test]
fn gemini_lowering_turns_type_lists_into_nullable_or_any_of() {
    let (params, report) = lowered(json!({"type": "object", "properties": {
        "only_null": {"type": "null"},
        "null_list": {"type": ["null"]},
        "maybe": {"type": ["integer", "null"]},
        "either": {"type": ["string", "integer"]},
        "either_or_null": {"type": ["string", "null", "integer"]},
        "odd": {"type": ["string", "date"]},
        "n": {"type": "number"},
        "b": {"type": "boolean"}
    }}));
    assert_exact(
        &params["properties"],
        &json!({
            "only_null": {"type": "NULL"},
            "null_list": {"type": "NULL"},
            "maybe": {"nullable": true, "type": "INTEGER"},
            "either": {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]},
            "either_or_null": {"nullable": true, "anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]},
            "odd": {"type": "STRING"},
            "n": {"type": "NUMBER"},
            "b": {"type": "BOOLEAN"}
        }),
    );
    assert_eq!(
        report,
        [(
            "/properties/odd/type".to_owned(),
            "type dropped: unknown type \"date\"".to_owned()
        )]
    );
}

#[test]
fn gemini_lowering_reports_what_it_cannot_carry() {
    let (params, report) = lowered(json!({"type": "object", "properties": {
        "yes": true,
        "num": 5,
        "pair": {"type": "array", "items": [{"type": "string"}]},
        "both": {"allOf": [{"type": "string"}, {"minLength": 1}]},
        "one": {"allOf": [{"type": "string", "maxLength": 3}], "maxLength": 2},
        "seven": {"const": 7},
        "mixed": {"enum": ["a", 1]},
        "letters": {"enum": ["a", "b"]},
        "bad_props": {"type": "object", "properties": []},
        "bad_union": {"anyOf": {"type": "string"}},
        "far": {"$ref": "https://example.com/s.json"},
        "bad_ref": {"$ref": 3},
        "nowhere": {"$ref": "#/$defs/missing"}
    }}));
    assert_exact(
        &params["properties"],
        &json!({
            "yes": {},
            "num": {},
            "pair": {"type": "ARRAY"},
            "both": {},
            "one": {"type": "STRING", "maxLength": 2},
            "seven": {},
            "mixed": {},
            "letters": {"enum": ["a", "b"], "type": "STRING"},
            "bad_props": {"type": "OBJECT"},
            "bad_union": {},
            "far": {},
            "bad_ref": {},
            "nowhere": {}
        }),
    );
    let report: Vec<String> = report.iter().map(|(p, m)| format!("{p}: {m}")).collect();
    assert_eq!(
        report,
        [
            "/properties/yes: the schema `true` has no Gemini equivalent; left unconstrained",
            "/properties/num: not a schema; left unconstrained",
            "/properties/pair/items: items dropped: Gemini has no tuple arrays",
            "/properties/both/allOf: allOf dropped: Gemini has no allOf",
            "/properties/seven/const: const dropped: Gemini enums hold strings only",
            "/properties/mixed/enum: enum dropped: Gemini enums hold strings only",
            "/properties/bad_props/properties: properties dropped: not an object",
            "/properties/bad_union/anyOf: anyOf dropped: not an array",
            "/properties/far/$ref: $ref dropped: \"https://example.com/s.json\" is not a local reference capstan can inline",
            "/properties/bad_ref/$ref: $ref dropped: not a string",
            "/properties/nowhere/$ref: $ref dropped: \"#/$defs/missing\" is not a local reference capstan can inline",
        ]
    );
}

#[test]
fn gemini_lowering_says_why_each_keyword_is_dropped() {
    let (params, report) = lowered(json!({
        "type": "object",
        "properties": {
            "open": {"type": "object", "additionalProperties": true},
            "map": {"type": "object", "additionalProperties": {"type": "string"}}
        },
        "additionalProperties": false,
        "definitions": {"unused": {"type": "string"}}
    }));
    assert_exact(
        &params,
        &json!({"type": "OBJECT", "properties": {"open": {"type": "OBJECT"}, "map": {"type": "OBJECT"}}}),
    );
    let report: Vec<String> = report.iter().map(|(p, m)| format!("{p}: {m}")).collect();
    assert_eq!(
        report,
        [
            "/properties/open/additionalProperties: additionalProperties dropped: not in Gemini's schema subset",
            "/properties/map/additionalProperties: additionalProperties dropped: not in Gemini's schema subset",
            "/additionalProperties: additionalProperties dropped: Gemini cannot forbid extra keys (capstan still rejects them)",
            "/definitions: definitions dropped: local references are inlined instead",
        ]
    );
}

#[test]
fn gemini_lowering_writes_up_to_10000_subschemas_and_enum_values() {
    // The root, the property and its enum values: 2 + n written.
    let with_values = |n: usize| {
        let values: Vec<String> = (0..n).map(|i| format!("v{i}")).collect();
        lowered(json!({"type": "object", "properties": {"x": {"enum": values}}}))
    };
    let (params, report) = with_values(9_998);
    assert!(report.is_empty(), "{report:?}");
    assert_eq!(
        params["properties"]["x"]["enum"].as_array().map(Vec::len),
        Some(9_998)
    );
    let export = export_tools(
        &[tool(
            "t",
            "T",
            json!({"type": "object", "properties": {"x": {"enum": (0..9_999).map(|i| format!("v{i}")).collect::<Vec<_>>()}}}),
        )],
        Format::Gemini,
        &lower_options(),
    );
    let decl = &export.tools[0]["functionDeclarations"][0];
    assert!(decl.get("parameters").is_none(), "{decl}");
    assert!(decl.get("parametersJsonSchema").is_some(), "{decl}");
    assert_eq!(export.report.len(), 1);
    assert!(
        export.report[0]
            .message
            .starts_with("not lowered: inlining its $refs would write more than 10000 subschemas"),
        "{}",
        export.report[0].message
    );
}

#[test]
fn gemini_a_bare_function_call_part_is_one_call_and_an_empty_id_is_replaced() {
    let part = json!({"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}});
    let calls = parse_calls(Format::Gemini, &part).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "get_weather");
    assert_eq!(
        calls[0].arguments.clone().into_value().unwrap(),
        json!({"city": "Oslo"})
    );
    let body = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"id": "", "name": "a", "args": {}}},
        {"functionCall": {"id": "fc_7", "name": "b", "args": {}}}
    ]}}]});
    let calls = parse_calls(Format::Gemini, &body).unwrap();
    assert!(
        !calls[0].id.is_empty(),
        "an empty id is given a synthetic one"
    );
    assert_ne!(calls[0].id, calls[1].id);
    assert_eq!(calls[1].id, "fc_7");
}
