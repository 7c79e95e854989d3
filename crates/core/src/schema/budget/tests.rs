//! The metered copy and the cost model of `budget.rs`, exactly: which
//! subschemas are gated and what each gate charges.

use serde_json::{json, Value};

use super::*;

fn gate(weight: u64, then: Value) -> Value {
    json!({"if": {FUEL_KEYWORD: weight}, "then": then})
}

#[test]
fn a_string_counts_one_value_more_per_32_bytes() {
    assert_eq!(size(&json!("x".repeat(31)), 100), 1);
    assert_eq!(size(&json!("x".repeat(64)), 100), 3);
}

#[test]
fn arrays_and_objects_count_every_value_inside() {
    assert_eq!(size(&json!([1, {"a": 2, "b": [3, "x"]}]), 100), 7);
}

#[test]
fn counting_stops_one_past_the_cap() {
    assert_eq!(size(&json!(vec![0; 10]), 4), 5);
    assert_eq!(size(&json!(vec![0; 10]), 100), 11);
}

#[test]
fn every_subschema_that_leads_on_is_gated_with_its_weight() {
    let schema = json!({
        "type": "object",
        "properties": {
            "plain": {"type": "string"},
            "closed": {"type": "object", "additionalProperties": false},
            "none": {"items": false},
            "nested": {"properties": {"a": {"type": "string"}, "b": {}}},
            "tuple": {"items": [
                {"anyOf": [{"type": "null"}, {"type": "integer"}]},
                {"type": "string"}
            ]},
            "list": {"items": {"not": {"type": "null"}}},
            "data": {"const": {"not": {"type": "null"}}, "enum": [{"anyOf": []}]},
            "hidden": {"x-defs": {"a": {"not": {}}}}
        }
    });
    let expected = json!({
        "type": "object",
        "properties": {
            "plain": {"type": "string"},
            "closed": gate(2, json!({"type": "object", "additionalProperties": false})),
            "none": gate(2, json!({"items": false})),
            "nested": gate(3, json!({"properties": {"a": {"type": "string"}, "b": {}}})),
            "tuple": gate(3, json!({"items": [
                gate(3, json!({"anyOf": [{"type": "null"}, {"type": "integer"}]})),
                {"type": "string"}
            ]})),
            "list": gate(2, json!({"items": gate(2, json!({"not": {"type": "null"}}))})),
            "data": {"const": {"not": {"type": "null"}}, "enum": [{"anyOf": []}]},
            "hidden": gate(2, json!({"x-defs": gate(2, json!({"a": gate(2, json!({"not": {}}))}))}))
        }
    });
    assert_eq!(metered(&schema), expected);
}

#[test]
fn a_schema_of_leaves_only_needs_no_gates() {
    assert!(!needs_gates(&json!(true)));
    assert!(!needs_gates(
        &json!({"type": "object", "properties": {"a": {"type": "string"}},
        "additionalProperties": false, "items": [{"type": "string"}]})
    ));
    assert!(needs_gates(&json!({"not": {"not": {}}})));
    assert!(needs_gates(&json!({"items": [{"not": {}}]})));
    assert!(needs_gates(&json!({"properties": {"a": {"not": {}}}})));
}

#[test]
fn a_local_ref_points_into_the_metered_copy() {
    let root = json!({
        "properties": {"x": {"$ref": "#/$defs/d"}},
        "$defs": {
            "d": {"anyOf": [{"$ref": "#/$defs/e"}, {"type": "null"}]},
            "e": {"type": "integer"},
            "a/b": {"not": {}}
        }
    });
    assert_eq!(
        relocate("#/$defs/d", &root).as_deref(),
        Some("#/$defs/d/then")
    );
    assert_eq!(relocate("#/$defs/e", &root).as_deref(), Some("#/$defs/e"));
    assert_eq!(
        relocate("#/$defs/d/anyOf/0", &root).as_deref(),
        Some("#/$defs/d/then/anyOf/0/then")
    );
    assert_eq!(
        relocate("#/$defs/a~1b", &root).as_deref(),
        Some("#/$defs/a~1b/then")
    );
    assert_eq!(
        relocate("#/$defs/a%7E1b", &root).as_deref(),
        Some("#/$defs/a%7E1b/then")
    );
    // Not a JSON Pointer into this document: left as written.
    assert_eq!(relocate("#", &root), None);
    assert_eq!(relocate("#anchor", &root), None);
    assert_eq!(relocate("other.json#/a", &root), None);
    let copy = metered(&root);
    assert_eq!(
        copy["properties"]["x"],
        gate(1, json!({"$ref": "#/$defs/d/then"}))
    );
    assert_eq!(
        copy["$defs"]["d"]["then"]["anyOf"][0],
        gate(1, json!({"$ref": "#/$defs/e"}))
    );
}

#[test]
fn an_error_location_in_the_metered_copy_is_reported_in_the_schema_as_written() {
    let root = json!({"properties": {
        "opts": {"properties": {"depth": {"not": {}}}, "additionalProperties": false},
        "then": {"type": "string"},
        "a/b": {"not": {}},
        "cond": {"if": {"type": "string"}, "then": {"minLength": 1}}
    }});
    for (metered_at, written_at) in [
        (
            "/properties/opts/then/additionalProperties",
            "/properties/opts/additionalProperties",
        ),
        (
            "/properties/opts/then/properties/depth/then/not",
            "/properties/opts/properties/depth/not",
        ),
        ("/properties/then/type", "/properties/then/type"),
        ("/properties/a~1b/then/not", "/properties/a~1b/not"),
        (
            "/properties/cond/then/then/minLength",
            "/properties/cond/then/minLength",
        ),
        ("", ""),
    ] {
        assert_eq!(
            source_location(&root, metered_at),
            written_at,
            "{metered_at}"
        );
    }
}

#[test]
fn below_an_id_a_local_ref_is_relative_to_that_subschema() {
    let root = json!({"properties": {"item": {
        "$id": "http://example.com/item",
        "properties": {"x": {"$ref": "#/$defs/d/anyOf/0"}},
        "$defs": {"d": {"anyOf": [{"type": "integer"}]}}
    }}});
    let copy = metered(&root);
    assert_eq!(
        copy["properties"]["item"]["then"]["properties"]["x"],
        gate(1, json!({"$ref": "#/$defs/d/then/anyOf/0"}))
    );
}
