//! Coercion rules found untested by mutation testing (README "Test strength").

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
