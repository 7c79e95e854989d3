//! The text a model reads when its arguments are rejected, exactly: one test
//! per rule of this module (the wording, the caps on previews and lists, the
//! count of lines shown), through `Schema::validate` as a host calls it.
//! `tests/schema_rules.rs` has the rules of validation itself. Unit tests, so
//! that mutation testing of this module rebuilds one test binary per mutant.

use crate::schema::{ArgumentErrors, Schema};
use serde_json::{json, Value};

#[path = "../../../../../benches/common/hostile.rs"]
mod hostile;

fn compile(schema: Value) -> Schema {
    Schema::compile(&schema).unwrap_or_else(|e| panic!("{schema} should compile: {e}"))
}

fn errors(schema: &Schema, args: Value) -> ArgumentErrors {
    match schema.validate(args.clone(), false) {
        Err(errors) => errors,
        Ok(v) => panic!("{args} should be invalid, got Ok({v})"),
    }
}

/// The lines of the errors, in the validator's order, `pointer: message`.
fn lines(schema: Value, args: Value) -> Vec<String> {
    errors(&compile(schema), args)
        .0
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// The single line of the only error.
fn line(schema: Value, args: Value) -> String {
    match lines(schema.clone(), args.clone()).as_slice() {
        [only] => only.clone(),
        more => panic!("{schema} with {args}: expected one error, got {more:?}"),
    }
}

/// One property `v` with the given schema.
fn prop(schema: Value) -> Value {
    json!({"type": "object", "properties": {"v": schema}})
}

#[test]
fn unique_items_names_the_first_equal_pair() {
    let schema = prop(json!({"type": "array", "uniqueItems": true}));
    assert_eq!(
        line(schema.clone(), json!({"v": [1, 2, 1]})),
        "/v: array items must be unique (items 0 and 2 are equal)"
    );
    assert_eq!(
        line(schema.clone(), json!({"v": ["a", "b", "c", "b", "a"]})),
        "/v: array items must be unique (items 0 and 4 are equal)"
    );
    assert_eq!(
        line(schema.clone(), json!({"v": [{"k": 1}, 7, 8, 9, 7]})),
        "/v: array items must be unique (items 1 and 4 are equal)"
    );
}

#[test]
fn unique_items_past_the_first_256_items_is_not_located() {
    // The search for the pair is bounded: only the first 256 items are compared.
    let schema = prop(json!({"type": "array", "uniqueItems": true}));
    let mut items: Vec<i64> = (0..300).collect();
    items[299] = 280;
    assert_eq!(
        line(schema.clone(), json!({ "v": items })),
        "/v: array items must be unique"
    );
    let mut items: Vec<i64> = (0..300).collect();
    items[255] = 3;
    assert_eq!(
        line(schema, json!({ "v": items })),
        "/v: array items must be unique (items 3 and 255 are equal)"
    );
}

#[test]
fn property_counts_at_the_root_need_no_prefix() {
    let base = json!({"type": "object", "minProperties": 2, "maxProperties": 3});
    assert_eq!(
        line(base.clone(), json!({"a": 1})),
        "object has fewer than 2 properties"
    );
    assert_eq!(
        line(base, json!({"a": 1, "b": 2, "c": 3, "d": 4})),
        "object has more than 3 properties"
    );
    // One property, singular.
    let one = json!({"type": "object", "minProperties": 1, "maxProperties": 1});
    assert_eq!(
        line(one.clone(), json!({})),
        "object has fewer than 1 property"
    );
    assert_eq!(
        line(one, json!({"a": 1, "b": 2})),
        "object has more than 1 property"
    );
}

#[test]
fn other_errors_at_the_root_say_arguments() {
    let schema = json!({"type": "object", "not": {"required": ["a"]}});
    assert_eq!(
        line(schema, json!({"a": 1})),
        "arguments: {\"a\":1} is not allowed here (it matches the \"not\" schema)"
    );
}

#[test]
fn alternatives_over_enums_merge_into_one_list() {
    assert_eq!(
        line(
            prop(json!({"anyOf": [{"enum": ["a", "b"]}, {"enum": ["c"]}]})),
            json!({"v": "z"})
        ),
        "/v: \"z\" is not one of \"a\", \"b\", \"c\""
    );
    assert_eq!(
        line(
            prop(json!({"oneOf": [{"enum": [1, 2]}, {"const": 3}]})),
            json!({"v": 4})
        ),
        "/v: 4 is not one of 1, 2, 3"
    );
}

#[test]
fn alternatives_over_types_merge_into_one_list() {
    assert_eq!(
        line(
            prop(
                json!({"oneOf": [{"type": ["null", "integer"]}, {"type": "string"}, {"type": "integer"}]})
            ),
            json!({"v": true})
        ),
        "/v: expected integer, string or null, got boolean true"
    );
}

#[test]
fn alternatives_mixing_types_and_values_name_the_closest() {
    // Neither every type nor every value: the one with the right type is closest.
    assert_eq!(
        line(
            prop(json!({"anyOf": [{"type": "string"}, {"enum": [1, 2]}]})),
            json!({"v": 3})
        ),
        "/v: 3 does not match any of the 2 alternatives (anyOf); closest: 3 is not one of 1, 2"
    );
    assert_eq!(
        line(
            prop(json!({"oneOf": [{"const": 1}, {"type": "string"}]})),
            json!({"v": 3})
        ),
        "/v: 3 does not match any of the 2 alternatives (oneOf); closest: expected 1, got 3"
    );
}

#[test]
fn closest_alternative_is_the_one_that_reached_deepest() {
    // Deepest wins even with more errors; its first deepest error is named.
    let schema = prop(json!({"anyOf": [
        {"type": "object", "required": ["a"]},
        {"type": "object", "properties": {"x": {"type": "object", "properties": {
            "y": {"type": "integer"}, "z": {"type": "integer"}
        }}}}
    ]}));
    assert_eq!(
        line(schema, json!({"v": {"x": {"y": "s", "z": "t"}}})),
        "/v: {\"x\":{\"y\":\"s\",\"z\":\"t\"}} does not match any of the 2 alternatives \
         (anyOf); closest: /v/x/y: expected integer, got string \"s\""
    );
}

#[test]
fn depth_counts_through_nested_alternatives() {
    // The second branch reaches /v/x/y only inside its own anyOf.
    let schema = prop(json!({"anyOf": [
        {"type": "object", "required": ["a"]},
        {"anyOf": [
            {"type": "object", "properties": {"x": {"type": "object", "properties": {"y": {"type": "integer"}}}}},
            {"type": "array"}
        ]}
    ]}));
    assert_eq!(
        line(schema, json!({"v": {"x": {"y": "s"}}})),
        "/v: {\"x\":{\"y\":\"s\"}} does not match any of the 2 alternatives (anyOf); \
         closest: /v/x/y: expected integer, got string \"s\""
    );
}

#[test]
fn closest_alternative_prefers_fewer_errors_then_the_first() {
    let fewer = prop(json!({"anyOf": [
        {"type": "object", "required": ["a", "b"]},
        {"type": "object", "required": ["c"]}
    ]}));
    assert_eq!(
        line(fewer, json!({"v": {}})),
        "/v: {} does not match any of the 2 alternatives (anyOf); \
         closest: missing required property \"c\""
    );
    let first = prop(json!({"anyOf": [
        {"type": "object", "required": ["a"]},
        {"type": "object", "required": ["c"]}
    ]}));
    assert_eq!(
        line(first, json!({"v": {}})),
        "/v: {} does not match any of the 2 alternatives (anyOf); \
         closest: missing required property \"a\""
    );
}

#[test]
fn closest_alternative_is_followed_into_nested_alternatives() {
    let schema = prop(json!({"anyOf": [
        {"type": "string"},
        {"anyOf": [{"type": "object", "required": ["a"]}, {"type": "array"}]}
    ]}));
    assert_eq!(
        line(schema, json!({"v": {}})),
        "/v: {} does not match any of the 2 alternatives (anyOf); \
         closest: missing required property \"a\""
    );
}

#[test]
fn unexpected_property_lists_the_known_ones_or_none() {
    let none = json!({"type": "object", "properties": {}, "additionalProperties": false});
    assert_eq!(
        line(none, json!({"x": 1})),
        "unexpected property \"x\" (known properties: none)"
    );
    let two =
        json!({"type": "object", "properties": {"a": {}, "b": {}}, "additionalProperties": false});
    assert_eq!(
        line(two, json!({"x": 1, "y": 2})),
        "unexpected properties \"x\", \"y\" (known properties: \"a\", \"b\")"
    );
    // Names matched by a pattern are not a list the model could use.
    let pattern = json!({"type": "object", "properties": {"a": {}},
        "patternProperties": {"^p_": {}}, "additionalProperties": false});
    assert_eq!(line(pattern, json!({"x": 1})), "unexpected property \"x\"");
}

#[test]
fn received_values_are_cut_at_60_characters() {
    let schema = prop(json!({"type": "integer"}));
    let exactly = "x".repeat(60);
    assert_eq!(
        line(schema.clone(), json!({ "v": exactly })),
        format!("/v: expected integer, got string \"{exactly}\"")
    );
    let over = "é".repeat(61);
    assert_eq!(
        line(schema.clone(), json!({ "v": over })),
        format!("/v: expected integer, got string \"{}…\"", "é".repeat(60))
    );
    // An array of exactly 60 characters of JSON is shown whole; one more is cut.
    let array60: Vec<u32> = (0..20).map(|i| i % 10).collect(); // [0,1,...]: 41 chars
    let mut array60 = json!(array60);
    array60.as_array_mut().unwrap().push(json!("y".repeat(16))); // + ,"yyy..." = 60
    assert_eq!(array60.to_string().chars().count(), 60);
    assert_eq!(
        line(schema.clone(), json!({ "v": array60 })),
        format!("/v: expected integer, got array {array60}")
    );
    let mut array61 = array60.clone();
    array61[20] = json!("y".repeat(17));
    let text = array61.to_string();
    assert_eq!(
        line(schema.clone(), json!({ "v": array61 })),
        format!("/v: expected integer, got array {}…", &text[..60])
    );
    // A huge object costs no more than its preview.
    let big: serde_json::Map<String, Value> =
        (0..10_000).map(|i| (format!("k{i}"), json!(i))).collect();
    let text = Value::Object(big.clone()).to_string();
    assert_eq!(
        line(schema, json!({ "v": big })),
        format!("/v: expected integer, got object {}…", &text[..60])
    );
}

#[test]
fn previews_count_characters_not_bytes() {
    let schema = prop(json!({"type": "integer"}));
    let wide = json!(["😀".repeat(100)]);
    let shown: String = wide.to_string().chars().take(60).collect();
    assert_eq!(
        line(schema, json!({ "v": wide })),
        format!("/v: expected integer, got array {shown}…")
    );
}

#[test]
fn the_first_value_of_a_list_is_shown_however_long() {
    // Control characters escape to six characters each: a 360-character preview.
    let first = "\u{1}".repeat(60);
    let text = line(prop(json!({ "enum": [first, "b"] })), json!({"v": "z"}));
    assert_eq!(
        text,
        format!(
            "/v: \"z\" is not one of {}, … (1 more)",
            json!("\u{1}".repeat(60))
        )
    );
}

#[test]
fn value_lists_are_cut_at_200_characters_with_a_count() {
    // "00" previews as 4 characters, ", " joins: with the 34th option the
    // list, before its separator, holds exactly 200 characters: still shown.
    let options: Vec<String> = (0..40).map(|i| format!("{:02}", i)).collect();
    let shown: Vec<String> = options[..34].iter().map(|o| format!("\"{o}\"")).collect();
    let shown = shown.join(", ");
    assert_eq!(shown.chars().count(), 202);
    assert_eq!(
        line(prop(json!({ "enum": options })), json!({"v": "zz"})),
        format!("/v: \"zz\" is not one of {shown}, … (6 more)")
    );
    let options: Vec<String> = (0..34).map(|i| format!("{:02}", i)).collect();
    assert_eq!(
        line(prop(json!({ "enum": options })), json!({"v": "zz"})),
        format!("/v: \"zz\" is not one of {shown}")
    );
}

#[test]
fn display_shows_20_errors_and_counts_the_rest() {
    let schema = compile(prop(json!({"items": {"type": "string"}})));
    let shown = |n: i32| errors(&schema, json!({ "v": (0..n).collect::<Vec<_>>() })).to_string();
    let twenty = shown(20);
    assert_eq!(twenty.lines().count(), 21, "{twenty}");
    assert!(!twenty.contains("more error"), "{twenty}");
    assert!(
        twenty.ends_with("\n- /v/19: expected string, got number 19"),
        "{twenty}"
    );
    let twenty_one = shown(21);
    assert_eq!(twenty_one.lines().count(), 22, "{twenty_one}");
    assert!(
        twenty_one.ends_with("\n- /v/19: expected string, got number 19\n- … and 1 more error"),
        "{twenty_one}"
    );
    assert!(shown(22).ends_with("\n- … and 2 more errors"));
}

#[test]
fn counts_and_bounds_name_the_limit() {
    let cases = [
        (
            json!({"minLength": 2}),
            json!("a"),
            "/v: string is shorter than 2 characters",
        ),
        (
            json!({"minLength": 1}),
            json!(""),
            "/v: string is shorter than 1 character",
        ),
        (
            json!({"maxLength": 1}),
            json!("ab"),
            "/v: string is longer than 1 character",
        ),
        (
            json!({"minItems": 2}),
            json!([1]),
            "/v: array has fewer than 2 items",
        ),
        (
            json!({"minItems": 1}),
            json!([]),
            "/v: array has fewer than 1 item",
        ),
        (
            json!({"maxItems": 1}),
            json!([1, 2]),
            "/v: array has more than 1 item",
        ),
        (
            json!({"maxItems": 2}),
            json!([1, 2, 3]),
            "/v: array has more than 2 items",
        ),
        (
            json!({"maximum": 3}),
            json!(4),
            "/v: 4 is greater than the maximum of 3",
        ),
        (
            json!({"exclusiveMinimum": 3}),
            json!(3),
            "/v: 3 must be greater than 3",
        ),
        (
            json!({"exclusiveMaximum": 3}),
            json!(3),
            "/v: 3 must be less than 3",
        ),
        (
            json!({"multipleOf": 2}),
            json!(3),
            "/v: 3 is not a multiple of 2",
        ),
        (
            json!({"const": "on"}),
            json!("off"),
            "/v: expected \"on\", got \"off\"",
        ),
        (
            json!({"pattern": "^a+$"}),
            json!("b"),
            "/v: \"b\" does not match the pattern ^a+$",
        ),
        (
            json!({"contains": {"type": "string"}}),
            json!([1]),
            "/v: array has no item that matches the \"contains\" schema",
        ),
        (
            json!({"oneOf": [{"type": "integer"}, {"minimum": 0}]}),
            json!(1),
            "/v: 1 matches more than one alternative (oneOf); it must match exactly one",
        ),
        (
            json!(false),
            json!(1),
            "/v: no value is allowed here, got number 1",
        ),
    ];
    for (schema, value, expected) in cases {
        assert_eq!(
            line(prop(schema.clone()), json!({ "v": value })),
            expected,
            "{schema}"
        );
    }
    // Draft-07's additionalItems after a tuple of items.
    let tuple = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "properties": {"v": {"items": [{}, {}], "additionalItems": false}}});
    assert_eq!(
        line(tuple, json!({"v": [1, 2, 3]})),
        "/v: array has more than 2 items"
    );
}

#[test]
fn more_than_100_errors_end_with_a_line_saying_validation_stopped_early() {
    let schema = compile(prop(json!({"items": {"type": "integer"}})));
    let found = errors(&schema, json!({ "v": vec!["x"; 150] }));
    assert_eq!(found.0.len(), 101);
    assert_eq!(
        found.0[99].to_string(),
        "/v/99: expected integer, got string \"x\""
    );
    assert_eq!(
        found.0[100].to_string(),
        "validation stopped early (more than 100 errors or its budget spent): \
         fix these and there may be more"
    );
    assert!(found.to_string().ends_with("\n- … and 81 more errors"));
    // 100 errors are all there is: no such line.
    let found = errors(&schema, json!({ "v": vec!["x"; 100] }));
    assert_eq!(found.0.len(), 100);
    assert_eq!(
        found.0[99].to_string(),
        "/v/99: expected integer, got string \"x\""
    );
}

#[test]
fn arguments_past_the_budget_with_no_error_found_get_the_too_complex_line() {
    let schema = compile(hostile::anyof_chain_schema(40));
    let found = errors(&schema, json!({"x": "not a number"}));
    assert_eq!(
        found.to_string(),
        "Invalid arguments:\n- arguments are too complex to check against this schema within \
         capstan's validation budget (200000 steps); send simpler (shallower or smaller) arguments"
    );
}

#[test]
fn arguments_past_the_budget_keep_the_errors_found_and_say_there_may_be_more() {
    // Before and after the costly part: the check may run out of budget first.
    for y_first in [true, false] {
        let mut source = hostile::anyof_chain_schema(40);
        let chain = source["properties"]["x"].clone();
        source["properties"] = if y_first {
            json!({"y": {"type": "string"}, "x": chain})
        } else {
            json!({"x": chain, "y": {"type": "string"}})
        };
        let args = if y_first {
            json!({"y": 5, "x": "not a number"})
        } else {
            json!({"x": "not a number", "y": 5})
        };
        let found = errors(&compile(source), args);
        assert_eq!(
            found.to_string(),
            "Invalid arguments:\n- /y: expected string, got number 5\n- validation stopped \
             early (more than 100 errors or its budget spent): fix these and there may be more",
            "y first: {y_first}"
        );
    }
}

#[test]
fn null_is_named_last_among_the_expected_types() {
    assert_eq!(
        line(
            prop(json!({"type": ["null", "string", "integer"]})),
            json!({"v": true})
        ),
        "/v: expected integer, string or null, got boolean true"
    );
    assert_eq!(
        line(
            prop(json!({"type": ["null", "integer"]})),
            json!({"v": "no"})
        ),
        "/v: expected integer or null, got string \"no\""
    );
}
