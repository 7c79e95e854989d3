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
    // The report as a C host reads it (capstan_export_tools' report).
    assert_exact(
        &export.report_json(),
        &json!([{
            "tool": "tag",
            "pointer": "/properties/tags/additionalProperties",
            "message": "not strict: additionalProperties: true allows keys that are not listed; strict mode requires false"
        }]),
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

#[test]
fn strict_mode_refuses_a_root_of_another_type() {
    let problems = strict_schema(&json!({"type": "string"})).unwrap_err();
    assert_eq!(problems, ["(root): the root must be of type object"]);
    let problems = strict_schema(&json!({"type": ["object", "null"]})).unwrap_err();
    assert_eq!(problems, ["(root): the root must be of type object"]);
}

#[test]
fn strict_mode_closes_objects_in_items_union_branches_and_type_lists() {
    let schema = json!({
        "type": "object",
        "properties": {
            "rows": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
            "either": {"anyOf": [
                {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
                {"type": "string"}
            ]},
            "maybe": {"type": ["object", "null"], "additionalProperties": false},
            "word": {"type": ["string", "null"]}
        },
        "required": ["rows", "either", "maybe", "word"]
    });
    assert_exact(
        &strict_schema(&schema).unwrap(),
        &json!({
            "type": "object",
            "properties": {
                "rows": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"a": {"type": ["string", "null"]}},
                    "required": ["a"],
                    "additionalProperties": false
                }},
                "either": {"anyOf": [
                    {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"], "additionalProperties": false},
                    {"type": "string"}
                ]},
                "maybe": {"type": ["object", "null"], "additionalProperties": false, "properties": {}, "required": []},
                "word": {"type": ["string", "null"]}
            },
            "required": ["rows", "either", "maybe", "word"],
            "additionalProperties": false
        }),
    );
}

#[test]
fn strict_mode_refuses_open_objects_inside_items_and_union_branches() {
    let schema = json!({
        "type": "object",
        "properties": {
            "rows": {"type": "array", "items": {"type": "object", "additionalProperties": true}},
            "either": {"anyOf": [{"type": "string"}, {"type": "object"}]},
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}
        },
        "required": ["rows", "either", "pair"]
    });
    assert_eq!(
        strict_schema(&schema).unwrap_err(),
        [
            "/properties/rows/items/additionalProperties: additionalProperties: true allows keys that are not listed; strict mode requires false",
            "/properties/either/anyOf/1: an object without \"properties\" accepts any keys; strict mode would accept only {}",
            "/properties/pair/items: items as an array (a tuple) is not supported in strict mode",
        ]
    );
}

#[test]
fn strict_mode_keeps_the_key_order_of_each_object() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "description": "after the properties",
        "additionalProperties": false,
        "title": "last"
    });
    let out = serde_json::to_string(&strict_schema(&schema).unwrap()).unwrap();
    assert_eq!(
        out,
        r#"{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"description":"after the properties","additionalProperties":false,"title":"last"}"#
    );
}

#[test]
fn strict_mode_passes_object_keywords_of_other_types_through() {
    // Not an object: its stray object keywords are left as written.
    let schema = json!({
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}, "required": ["x"], "additionalProperties": false}},
        "required": ["tags"]
    });
    let out = strict_schema(&schema).unwrap();
    assert_exact(
        &out["properties"]["tags"],
        &json!({"type": "array", "items": {"type": "string"}, "required": ["x"], "additionalProperties": false}),
    );
}

#[test]
fn strict_mode_makes_each_kind_of_optional_property_nullable_once() {
    let schema = json!({
        "type": "object",
        "properties": {
            "nothing": {"type": "null"},
            "several": {"type": ["string", "integer"], "enum": ["a", 1]},
            "already": {"type": ["string", "null"]},
            "union": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "open_union": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "pick": {"enum": ["x", "y"]}
        }
    });
    let out = strict_schema(&schema).unwrap();
    assert_exact(
        &out["properties"],
        &json!({
            "nothing": {"type": "null"},
            "several": {"type": ["string", "integer", "null"], "enum": ["a", 1, null]},
            "already": {"type": ["string", "null"]},
            "union": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "open_union": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
            "pick": {"anyOf": [{"enum": ["x", "y"]}, {"type": "null"}]}
        }),
    );
}

#[test]
fn strict_nulls_are_kept_where_the_property_schema_accepts_null() {
    let schema = json!({
        "type": "object",
        "properties": {
            "any": true,
            "untyped": {"description": "anything"},
            "null_in_enum": {"enum": ["a", null]},
            "null_const": {"const": null},
            "null_branch": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "null_one_of": {"oneOf": [{"type": "integer"}, {"$ref": "#/$defs/nothing"}]},
            "enum": {"enum": ["a", "b"]},
            "const": {"const": "a"},
            "types": {"type": ["string", "integer"]},
            "branches": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "one_of": {"oneOf": [{"type": "string"}, {"type": "integer"}]}
        },
        "$defs": {"nothing": {"type": "null"}}
    });
    let mut args = json!({
        "any": null, "untyped": null, "null_in_enum": null, "null_const": null,
        "null_branch": null, "null_one_of": null,
        "enum": null, "const": null, "types": null, "branches": null, "one_of": null
    });
    drop_strict_nulls(&schema, &mut args);
    assert_exact(
        &args,
        &json!({
            "any": null, "untyped": null, "null_in_enum": null, "null_const": null,
            "null_branch": null, "null_one_of": null
        }),
    );
}

#[test]
fn strict_nulls_through_ref_cycles_are_kept_when_the_cycle_accepts_null() {
    // a -> A = anyOf[B, null]; b -> B = anyOf[A]: both accept null, whichever
    // property is looked at first.
    let schema = json!({
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/$defs/B"}, "c": {"$ref": "#/$defs/C"}},
        "$defs": {
            "A": {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "null"}]},
            "B": {"anyOf": [{"$ref": "#/$defs/A"}]},
            "C": {"anyOf": [{"$ref": "#/$defs/C"}, {"type": "string"}]}
        }
    });
    let mut args = json!({"a": null, "b": null, "c": null});
    drop_strict_nulls(&schema, &mut args);
    assert_exact(&args, &json!({"a": null, "b": null}));
}

#[test]
fn strict_nulls_are_dropped_in_array_items_down_to_64_levels() {
    // Objects sit at even depths (object, its array, the next object): the
    // ones at depth 0..=64 lose their null, the one at 66 keeps it.
    let schema = json!({
        "type": "object",
        "properties": {
            "v": {"type": "string"},
            "kids": {"type": "array", "items": {"$ref": "#"}}
        }
    });
    let mut args = json!({"v": null, "kids": []});
    for _ in 0..33 {
        args = json!({"v": null, "kids": [args]});
    }
    drop_strict_nulls(&schema, &mut args);
    let mut level = &args;
    for depth in (0..=66).step_by(2) {
        assert_eq!(
            level.get("v").is_some(),
            depth > 64,
            "object at depth {depth}"
        );
        match level["kids"].get(0) {
            Some(next) => level = next,
            None => assert_eq!(depth, 66),
        }
    }
}

/// A property `x` whose schema reaches `{"type": "null"}` through `links`
/// `anyOf`s, each in its own `$defs` entry.
fn null_at_the_end_of_a_ref_chain(links: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..links {
        defs.insert(
            format!("d{i}"),
            json!({"anyOf": [{"$ref": format!("#/$defs/d{}", i + 1)}]}),
        );
    }
    defs.insert(format!("d{links}"), json!({"type": "null"}));
    json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs})
}

#[test]
fn strict_nulls_follow_ref_chains_64_deep_and_long_chains_do_not_crash() {
    let kept = |links: usize| {
        let mut args = json!({"x": null});
        drop_strict_nulls(&null_at_the_end_of_a_ref_chain(links), &mut args);
        args.get("x").is_some()
    };
    assert!(kept(64), "64 links: the null is seen");
    assert!(!kept(65), "65 links: past the bound, taken as left out");
    // Far past the bound: an answer, not a stack overflow.
    assert!(!kept(9_000));
}

#[test]
fn strict_nulls_look_at_10000_subschemas_at_most() {
    // The root and 9,998 branches that take no null: the null branch is the
    // 10,000th subschema looked at, within the bound; one branch more and it
    // is past it, and the null is taken as left out.
    let kept = |others: usize| {
        let mut branches = vec![json!({"type": "string"}); others];
        branches.push(json!({"type": "null"}));
        let schema = json!({"type": "object", "properties": {"x": {"anyOf": branches}}});
        let mut args = json!({"x": null});
        drop_strict_nulls(&schema, &mut args);
        args.get("x").is_some()
    };
    assert!(kept(9_998));
    assert!(!kept(9_999));
}

#[test]
fn strict_nulls_remember_shared_subschemas_that_take_no_null() {
    // x: anyOf[d0, null], each d_i = anyOf[d_i+1, d_i+1]: 2^24 paths to the
    // bottom. Each d_i is worked out once, so the null branch is reached
    // within the bound and the null kept.
    let mut defs = serde_json::Map::new();
    for i in 0..24 {
        let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
        defs.insert(format!("d{i}"), json!({"anyOf": [next.clone(), next]}));
    }
    defs.insert("d24".into(), json!({"type": "string"}));
    let schema = json!({
        "type": "object",
        "properties": {"x": {"anyOf": [{"$ref": "#/$defs/d0"}, {"type": "null"}]}},
        "$defs": defs
    });
    let mut args = json!({"x": null});
    drop_strict_nulls(&schema, &mut args);
    assert_exact(&args, &json!({"x": null}));
}

#[test]
fn strict_nulls_on_a_tangle_of_ref_cycles_end_with_an_answer() {
    // 12 subschemas, each an anyOf of all the others, none taking null: the
    // answers lean on open cycles and cannot be remembered; the step bound
    // ends the search (12! paths otherwise).
    let mut defs = serde_json::Map::new();
    for i in 0..12 {
        let others: Vec<Value> = (0..12)
            .filter(|j| *j != i)
            .map(|j| json!({"$ref": format!("#/$defs/n{j}")}))
            .collect();
        defs.insert(format!("n{i}"), json!({"anyOf": others}));
    }
    let schema = json!({
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/n0"}},
        "$defs": defs
    });
    let mut args = json!({"x": null});
    drop_strict_nulls(&schema, &mut args);
    assert_exact(&args, &json!({}));
}
