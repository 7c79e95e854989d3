//! Coercion rules found untested by mutation testing (docs/testing.md, "Test strength").

use capstan::schema::Schema;
use serde_json::json;

#[test]
fn coercion_that_fixes_only_some_arguments_still_rejects_the_call() {
    let schema = Schema::compile(&json!({"type": "object", "properties": {
        "n": {"type": "integer"}, "m": {"type": "integer"}
    }}))
    .unwrap();
    // "3" is read as 3; "x" is no integer: the call stays invalid, and says why.
    let errors = schema
        .validate(json!({"n": "3", "m": "x"}), true)
        .unwrap_err();
    assert_eq!(
        errors.to_string(),
        "Invalid arguments:\n- /m: expected integer, got string \"x\""
    );
    assert_eq!(
        schema.validate(json!({"n": "3", "m": "4"}), true),
        Ok(json!({"n": 3, "m": 4}))
    );
}

#[test]
fn a_boolean_property_reads_only_true_and_false() {
    let schema = Schema::compile(&json!({"type": "object", "properties": {
        "flag": {"type": "boolean"}
    }}))
    .unwrap();
    // "1" reads as a number, which a boolean-only property does not take:
    // the string is reported as it was sent.
    assert_eq!(
        schema
            .validate(json!({"flag": "1"}), true)
            .unwrap_err()
            .to_string(),
        "Invalid arguments:\n- /flag: expected boolean, got string \"1\""
    );
    assert_eq!(
        schema.validate(json!({"flag": " true "}), true),
        Ok(json!({"flag": true}))
    );
}

#[test]
fn coercion_inside_array_items_alone_fixes_the_call() {
    let schema = Schema::compile(&json!({"type": "object", "properties": {
        "ids": {"type": "array", "items": {"type": "integer"}}
    }}))
    .unwrap();
    assert_eq!(
        schema.validate(json!({"ids": [1, "2"]}), true),
        Ok(json!({"ids": [1, 2]}))
    );
    assert_eq!(
        schema.validate(json!({"ids": ["1", "2", 3]}), true),
        Ok(json!({"ids": [1, 2, 3]}))
    );
}
