//! The validation budget (`src/schema/budget.rs`), as a host and a model see
//! it: what checking arguments may cost, and the text past the budget.
//!
//! Costs are exact, so each rule is pinned at its boundary: a subschema that
//! leads on to others (here a `not`) applied to a value costs (1 + the
//! subschemas it holds directly) x (1 + the value's items or members, or one
//! per 64 bytes of a string); a check may spend [`VALIDATION_STEPS`]. The walk
//! that collects the error text may also hold at most [`ERROR_SIZE`] values
//! (and one per 32 bytes of string) of what those subschemas apply to.

use capstan::schema::{Schema, ERROR_SIZE, VALIDATION_STEPS};
use serde_json::{json, Value};

fn compile(schema: Value) -> Schema {
    Schema::compile(&schema).unwrap_or_else(|e| panic!("{schema} should compile: {e}"))
}

fn refused_text(schema: &Schema, args: Value) -> String {
    match schema.validate(args, false) {
        Err(errors) => errors.to_string(),
        Ok(_) => panic!("arguments should be refused"),
    }
}

const TOO_COMPLEX: &str = "Invalid arguments:\n- arguments are too complex to check against \
     this schema within capstan's validation budget (200000 steps); send simpler (shallower \
     or smaller) arguments";

const STOPPED_EARLY: &str = "\n- validation stopped early (more than 100 errors or its budget \
     spent): fix these and there may be more";

#[test]
fn the_budget_is_the_documented_figure() {
    assert_eq!(VALIDATION_STEPS, 200_000);
    assert_eq!(ERROR_SIZE, 500_000);
}

/// The largest count of items or members that fits: 4n + 2 <= 200,000
/// (the gate around the array or object costs 2 x (1 + n), each item 2 x 1).
const FITS: usize = 49_999;

#[test]
fn every_array_item_costs_its_share_of_the_budget() {
    let schema = compile(json!({"type": "object", "properties": {
        "xs": {"type": "array", "items": {"not": {"type": "null"}}}
    }}));
    let args = |n: usize| json!({ "xs": vec![0; n] });
    assert_eq!(schema.validate(args(FITS), false), Ok(args(FITS)));
    assert!(schema.is_valid(&args(FITS)));
    assert_eq!(refused_text(&schema, args(FITS + 1)), TOO_COMPLEX);
    assert!(!schema.is_valid(&args(FITS + 1)));
}

#[test]
fn every_object_member_costs_its_share_of_the_budget() {
    let schema = compile(json!({"type": "object", "properties": {
        "o": {"type": "object", "additionalProperties": {"not": {"type": "null"}}}
    }}));
    let args = |n: usize| {
        let members: serde_json::Map<String, Value> =
            (0..n).map(|i| (format!("k{i}"), json!(i))).collect();
        json!({ "o": members })
    };
    assert!(schema.validate(args(FITS), false).is_ok());
    assert_eq!(refused_text(&schema, args(FITS + 1)), TOO_COMPLEX);
}

#[test]
fn every_64_bytes_of_a_string_cost_a_step_of_the_budget() {
    // 2 x (1 + len / 64) <= 200,000: up to 6,399,999 bytes.
    let schema = compile(json!({"type": "object", "properties": {
        "s": {"type": "string", "not": {"const": ""}}
    }}));
    let args = |len: usize| json!({ "s": "x".repeat(len) });
    assert!(schema.validate(args(6_399_999), false).is_ok());
    assert_eq!(refused_text(&schema, args(6_400_000)), TOO_COMPLEX);
}

#[test]
fn the_error_text_walk_holds_at_most_its_size_of_arguments() {
    // The gate around "xs" costs 4 steps of the error walk's 5,000, and holds
    // 2 + n values: the outer array, the inner one and its n numbers.
    let schema = compile(json!({"type": "object",
        "properties": {"xs": {"not": {"type": "null"}}},
        "required": ["id"]
    }));
    let args = |n: usize| json!({ "xs": [vec![0; n]] });
    let missing = "Invalid arguments:\n- missing required property \"id\"";
    let n = ERROR_SIZE as usize - 2;
    assert_eq!(refused_text(&schema, args(n)), missing);
    assert_eq!(
        refused_text(&schema, args(n + 1)),
        format!("{missing}{STOPPED_EARLY}")
    );
}

#[test]
fn data_that_looks_like_a_schema_is_compared_as_written() {
    // The `anyOf` has capstan meter this schema (wrap the subschemas that lead
    // on in gates); a `const` holds data, which must reach the validator as
    // the host wrote it.
    let schema = compile(json!({"type": "object", "properties": {
        "mode": {"anyOf": [{"const": {"not": {"type": "null"}}}, {"type": "integer"}]}
    }}));
    let args = json!({"mode": {"not": {"type": "null"}}});
    assert_eq!(schema.validate(args.clone(), false), Ok(args));
    // Nor is a string that reads like a reference into the schema.
    let schema = compile(json!({"type": "object",
        "properties": {"to": {"anyOf": [{"const": "#/$defs/d"}, {"$ref": "#/$defs/d"}]}},
        "$defs": {"d": {"anyOf": [{"type": "integer"}]}}
    }));
    for args in [json!({"to": "#/$defs/d"}), json!({"to": 3})] {
        assert_eq!(schema.validate(args.clone(), false), Ok(args));
    }
}

#[test]
fn older_drafts_keep_their_meaning_and_their_budget() {
    // Metering writes subschemas in `if`/`then` gates, which draft-04 and
    // draft-06 do not know: capstan checks such schemas as draft-07, with
    // draft-04's boolean exclusive bounds and `id` written the draft-07 way.
    let items = json!({"type": "array", "items": {"not": {"type": "null"}}});
    let draft4 = compile(json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {
            "xs": items,
            "n": {"anyOf": [
                {"type": "number", "maximum": 5, "exclusiveMaximum": true,
                 "minimum": 1, "exclusiveMinimum": false},
                {"type": "string"}
            ]},
            "ref": {"$ref": "#item"}
        },
        "definitions": {"item": {"id": "#item", "type": "integer"}}
    }));
    for fits in [
        json!({"n": 4.5}),
        json!({"n": 1}),
        json!({"n": "s"}),
        json!({"ref": 3}),
    ] {
        assert!(draft4.is_valid(&fits), "{fits}");
    }
    for wrong in [json!({"n": 5}), json!({"n": 0.5}), json!({"ref": "s"})] {
        assert!(!draft4.is_valid(&wrong), "{wrong}");
    }
    let xs = |n: usize| json!({ "xs": vec![0; n] });
    assert!(draft4.is_valid(&xs(FITS)));
    assert_eq!(refused_text(&draft4, xs(FITS + 1)), TOO_COMPLEX);

    let draft6 = compile(json!({
        "$schema": "http://json-schema.org/draft-06/schema#",
        "type": "object",
        "properties": {"xs": items, "n": {"anyOf": [{"type": "number", "exclusiveMaximum": 5}]}}
    }));
    assert!(draft6.is_valid(&json!({"n": 4})));
    assert!(!draft6.is_valid(&json!({"n": 5})));
    assert_eq!(refused_text(&draft6, xs(FITS + 1)), TOO_COMPLEX);
}
