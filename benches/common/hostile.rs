//! Inputs whose cost used to explode (issue 17), shared by `tests/limits.rs`
//! (loose bounds) and `benches/limits.rs` (the real figures).

#![allow(dead_code)] // each user takes a different part

use serde_json::{json, Value};

/// A calculator: an expression is a number, a `+` node or a `*` node, each
/// with `args` holding two expressions (finding 1).
pub fn calculator_schema() -> Value {
    let node = |op: &str| {
        json!({
            "type": "object",
            "properties": {
                "op": {"const": op},
                "args": {"type": "array", "items": {"$ref": "#/$defs/expr"}, "minItems": 2, "maxItems": 2}
            },
            "required": ["op", "args"],
            "additionalProperties": false
        })
    };
    json!({
        "type": "object",
        "properties": {"expr": {"$ref": "#/$defs/expr"}},
        "required": ["expr"],
        "$defs": {"expr": {"anyOf": [{"type": "number"}, node("+"), node("*")]}}
    })
}

/// `{"expr": ...}` nested `depth` `+` nodes deep, `leaf` at the bottom; with
/// `drop_op`, the innermost node has no `"op"`.
pub fn calculator_args(depth: usize, leaf: Value, drop_op: bool) -> Value {
    let mut expr = leaf;
    for level in 0..depth {
        expr = if drop_op && level == 0 {
            json!({"args": [1, expr]})
        } else {
            json!({"op": "+", "args": [1, expr]})
        };
    }
    json!({ "expr": expr })
}

/// `depth` definitions, each an `anyOf` of two `$ref`s to the next (finding 2).
pub fn anyof_chain_schema(depth: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..depth {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"anyOf": [{"$ref": next}, {"$ref": next, "description": "again"}]}),
        );
    }
    defs.insert(format!("d{depth}"), json!({"type": "integer"}));
    json!({
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/d0"}},
        "$defs": defs
    })
}

/// 10,000 tool names like `tool_04217_fetch`.
pub fn many_tool_names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("tool_{i:05}_fetch")).collect()
}

/// An `allOf` of `n` empty schemas (finding 10).
pub fn wide_all_of(n: usize) -> Value {
    json!({"type": "object", "allOf": vec![json!({}); n]})
}

/// A small ordinary schema: the unit the tests measure against.
pub fn weather_schema() -> Value {
    json!({"type": "object", "properties": {
        "city": {"type": "string", "minLength": 1},
        "units": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14}
    }, "required": ["city"], "additionalProperties": false})
}
