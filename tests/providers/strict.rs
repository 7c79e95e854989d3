//! OpenAI strict mode.

use super::*;

#[test]
fn strict_mode_requires_every_property_and_makes_optional_ones_nullable() {
    let example = corpus("openai_chat_completion_openapi_example_functions.json");
    let params = &example["request"]["tools"][0]["function"]["parameters"];
    assert_exact(
        &strict_schema(params).unwrap(),
        &json!({
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                "unit": {"type": ["string", "null"], "enum": ["celsius", "fahrenheit", null]}
            },
            "required": ["location", "unit"],
            "additionalProperties": false
        }),
    );
}

#[test]
fn strict_mode_closes_nested_objects_and_removes_defaults() {
    let schema = json!({
        "type": "object",
        "properties": {
            "filter": {
                "type": "object",
                "properties": {"tag": {"type": "string", "default": "all"}},
                "required": ["tag"]
            },
            "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "string"}]}
        },
        "required": ["filter", "steps"],
        "$defs": {
            "step": {"type": "object", "properties": {"say": {"type": "string"}, "wait": {"type": "number"}}, "required": ["say"]}
        }
    });
    assert_exact(
        &strict_schema(&schema).unwrap(),
        &json!({
            "type": "object",
            "properties": {
                "filter": {
                    "type": "object",
                    "properties": {"tag": {"type": "string"}},
                    "required": ["tag"],
                    "additionalProperties": false
                },
                "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}},
                "limit": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}
            },
            "required": ["filter", "steps", "limit"],
            "$defs": {
                "step": {
                    "type": "object",
                    "properties": {"say": {"type": "string"}, "wait": {"type": ["number", "null"]}},
                    "required": ["say", "wait"],
                    "additionalProperties": false
                }
            },
            "additionalProperties": false
        }),
    );
}

#[test]
fn strict_mode_refuses_open_objects_and_unsupported_keywords_with_reasons() {
    let schema = json!({
        "type": "object",
        "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "extra": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true},
            "meta": {"type": "object"},
            "headers": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}},
            "range": {"allOf": [{"type": "integer"}, {"minimum": 0}]},
            "anything": {}
        }
    });
    let problems = strict_schema(&schema).unwrap_err();
    let starts: Vec<&str> = problems
        .iter()
        .map(|p| p.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        starts,
        [
            "/properties/labels/additionalProperties",
            "/properties/extra/additionalProperties",
            "/properties/meta",
            "/properties/headers/patternProperties",
            "/properties/range/allOf",
            "/properties/anything",
        ],
        "{problems:#?}"
    );
    assert!(
        problems[0].contains("additionalProperties as a schema"),
        "{}",
        problems[0]
    );
    assert!(
        problems[2].contains("without \"properties\""),
        "{}",
        problems[2]
    );
    assert!(problems[5].contains("no type"), "{}", problems[5]);
}

#[test]
fn strict_mode_refuses_a_root_that_is_a_union() {
    let example = corpus("mcp_spec_examples/mcp_Tool__tool-with-composition-input-schema.json");
    let problems = strict_schema(&example["inputSchema"]).unwrap_err();
    assert_eq!(
        problems,
        ["/oneOf: oneOf is not supported in strict mode (only anyOf is)"]
    );
    let any_of = json!({"anyOf": [{"type": "object", "properties": {}}]});
    let problems = strict_schema(&any_of).unwrap_err();
    assert_eq!(problems[0], "(root): the root must be an object, not anyOf");
}

#[test]
fn strict_export_marks_strict_tools_and_reports_the_others() {
    let loose = tool(
        "tag",
        "Tag things",
        json!({"type": "object", "properties": {"tags": {"type": "object", "additionalProperties": true}}}),
    );
    let export = export_tools(
        &[weather_tool(), loose.clone()],
        Format::OpenAiChat,
        &strict_options(),
    );
    assert_exact(
        &export.tools,
        &json!([
            {"type": "function", "function": {
                "name": "get_weather",
                "description": "Current weather",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "description": "City name"},
                        "unit": {"type": ["string", "null"], "enum": ["c", "f", null]}
                    },
                    "required": ["city", "unit"],
                    "additionalProperties": false
                },
                "strict": true
            }},
            {"type": "function", "function": {
                "name": "tag",
                "description": "Tag things",
                "parameters": loose.parameters
            }}
        ]),
    );
    assert_eq!(
        export.report,
        [ExportNote {
            tool: "tag".into(),
            pointer: "/properties/tags/additionalProperties".into(),
            message: "not strict: additionalProperties: true allows keys that are not listed; strict mode requires false".into(),
        }]
    );

    let responses = export_tools(
        &[weather_tool(), loose],
        Format::OpenAiResponses,
        &strict_options(),
    );
    assert_eq!(responses.tools[0]["strict"], json!(true));
    assert_eq!(
        responses.tools[0]["parameters"]["additionalProperties"],
        json!(false)
    );
    assert_eq!(responses.tools[1]["strict"], json!(false));
    assert_eq!(responses.report.len(), 1);
}

#[test]
fn strict_nulls_for_left_out_properties_are_dropped_before_validation() {
    let schema = json!({
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string"},
            "note": {"type": ["string", "null"]},
            "step": {"$ref": "#/$defs/step"}
        },
        "required": ["city"],
        "$defs": {"step": {"type": "object", "properties": {"wait": {"type": "number"}}}}
    });
    let mut args = json!({"city": null, "unit": null, "note": null, "step": {"wait": null}});
    drop_strict_nulls(&schema, &mut args);
    // A required null and a nullable property keep their null: validation decides.
    assert_exact(&args, &json!({"city": null, "note": null, "step": {}}));
}
