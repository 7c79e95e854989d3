//! The text of a schema the validator refuses at registration: where in the
//! schema, and why, exactly.

use crate::schema::Schema;
use serde_json::{json, Value};

fn schema_error(schema: Value) -> String {
    match Schema::compile_any(&schema) {
        Err(crate::error::Error::InvalidSchema(message)) => message,
        other => panic!("{schema}: expected InvalidSchema, got {other:?}"),
    }
}

#[test]
fn schema_errors_say_where_in_the_schema() {
    assert_eq!(
        schema_error(json!(3)),
        "schema root: expected boolean or object, got number 3"
    );
    assert_eq!(
        schema_error(json!({"type": "object", "minProperties": -1})),
        "at /minProperties: -1 is less than the minimum of 0"
    );
    assert_eq!(
        schema_error(json!({"type": "object", "properties": {"a": {"pattern": 5}}})),
        "at /properties/a/pattern: expected string, got number 5"
    );
    // A keyword in the wrong format names the format (only a bad pattern is
    // about the regular-expression engine).
    assert_eq!(
        schema_error(json!({"$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object", "properties": {"a": {"$id": "::: x"}}})),
        "at /properties/a/$id: \"::: x\" is not a valid uri-reference"
    );
}

#[test]
fn a_pattern_the_linear_engine_refuses_is_named_and_explained() {
    assert_eq!(
        schema_error(json!({"type": "object", "properties": {"a": {"pattern": "(a)\\1"}}})),
        "at /properties/a/pattern: pattern (a)\\1 is not a valid regular expression for \
         capstan's linear-time engine (backreferences and look-around are not supported)"
    );
    let long = format!("(a){}\\1", "b".repeat(60));
    assert_eq!(
        schema_error(json!({"type": "object", "properties": {"a": {"pattern": long}}})),
        format!(
            "at /properties/a/pattern: pattern {}… is not a valid regular expression for \
             capstan's linear-time engine (backreferences and look-around are not supported)",
            &long[..60]
        )
    );
    assert_eq!(
        schema_error(json!({"type": "object", "properties": {"a": {"pattern": "\\p{L}{500}"}}})),
        "at /properties/a/pattern: pattern \\p{L}{500} compiles to more than 256 KiB, \
         capstan's limit for a regular expression (counted repetition such as {500} multiplies \
         the size); use a smaller count or a simpler pattern"
    );
}

#[test]
fn refs_that_cannot_resolve_say_why() {
    let at = |reference: &str| {
        schema_error(json!({"type": "object", "properties": {"a": {"$ref": reference}}}))
    };
    assert_eq!(
        at("http://example.com/x.json"),
        "$ref \"http://example.com/x.json\" is not local: capstan resolves $ref only inside \
         the schema itself and never fetches remote (http/https) or file references; copy the \
         referenced schema under \"$defs\" (draft-07 and older: \"definitions\") and refer \
         to it with \"#/...\""
    );
    assert_eq!(
        at("#/$defs/gone"),
        "$ref target \"#/$defs/gone\" does not exist in the schema"
    );
    assert_eq!(
        at("#nowhere"),
        "$ref anchor \"nowhere\" does not exist in the schema"
    );
    // Any other reason: the validator's words (they are not capstan's to fix).
    let other = at("#/$defs/a%zz");
    assert!(other.starts_with("cannot resolve $ref: "), "{other}");
    assert!(other.contains("#/$defs/a%zz"), "{other}");
    assert_eq!(
        schema_error(
            json!({"$schema": "http://json-schema.org/draft-03/schema#", "type": "object"})
        ),
        "\"$schema\" \"http://json-schema.org/draft-03/schema#\" is not a supported draft: \
         capstan knows draft-04, draft-06, draft-07, 2019-09 and 2020-12, and never fetches \
         remote meta-schemas"
    );
}
