//! How deep capstan fills defaults and coerces strings: arguments built in
//! code (not parsed, so deeper than serde_json's 128 levels) are walked down
//! to 256 levels below the root and no further, so that a cyclic schema and a
//! deep value cannot exhaust the stack.

use capstan::schema::Schema;
use serde_json::{json, Value};

/// How far below the root the walks go.
const WALKED: usize = 256;

/// Runs `f` on a thread with room for the validator's recursion.
fn deep<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("no panic")
}

/// `{"next": {"next": ...}}`, `objects` objects deep, `leaf` merged into the
/// object at depth `at` (the root is at depth 0).
fn chain(objects: usize, at: usize, leaf: &Value) -> Value {
    let mut value = json!({});
    for depth in (0..objects).rev() {
        let mut object = serde_json::Map::new();
        if depth + 1 < objects {
            object.insert("next".into(), value);
        }
        if depth == at {
            object.extend(leaf.as_object().cloned().unwrap_or_default());
        }
        value = Value::Object(object);
    }
    value
}

/// The depths of the objects along "next" (or "kids"/0) that hold "tag".
fn tagged(mut value: &Value) -> Vec<usize> {
    let mut out = Vec::new();
    let mut depth = 0;
    loop {
        if value.get("tag").is_some() {
            out.push(depth);
        }
        if let Some(next) = value.get("next") {
            value = next;
            depth += 1;
        } else if let Some(item) = value.get("kids").and_then(|k| k.get(0)) {
            value = item;
            depth += 2;
        } else {
            return out;
        }
    }
}

#[test]
fn defaults_are_filled_down_to_256_levels() {
    let filled = deep(|| {
        let schema = Schema::compile(&json!({"type": "object", "properties": {
            "tag": {"default": 1}, "next": {"$ref": "#"}
        }}))
        .unwrap();
        let args = chain(300, usize::MAX, &json!({}));
        tagged(&schema.validate(args, false).unwrap())
    });
    assert_eq!(filled, (0..=WALKED).collect::<Vec<_>>());
}

#[test]
fn defaults_in_array_items_are_filled_down_to_256_levels() {
    let filled = deep(|| {
        let schema = Schema::compile(&json!({"type": "object", "properties": {
            "tag": {"default": 1},
            "kids": {"type": "array", "items": {"$ref": "#"}}
        }}))
        .unwrap();
        // 200 objects, each the only item of its parent's "kids".
        let mut args = json!({});
        for _ in 1..200 {
            args = json!({ "kids": [args] });
        }
        tagged(&schema.validate(args, false).unwrap())
    });
    assert_eq!(filled, (0..=WALKED).step_by(2).collect::<Vec<_>>());
}

#[test]
fn strings_are_coerced_down_to_256_levels() {
    let results = deep(|| {
        let schema = Schema::compile(&json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "next": {"$ref": "#"}
        }}))
        .unwrap();
        // "n" of the object at depth d is at depth d + 1.
        [WALKED - 1, WALKED].map(|at| schema.validate(chain(300, at, &json!({"n": "7"})), true))
    });
    let [last, past] = results;
    let coerced = last.expect("coerced at depth 256");
    let mut value = &coerced;
    for _ in 0..WALKED - 1 {
        value = &value["next"];
    }
    assert_eq!(value["n"], json!(7));
    assert_eq!(
        past.expect_err("not coerced at depth 257").to_string(),
        format!(
            "Invalid arguments:\n- {}/n: expected integer, got string \"7\"",
            "/next".repeat(WALKED)
        )
    );
}

#[test]
fn strings_in_array_items_are_coerced_down_to_256_levels() {
    let results = deep(|| {
        let schema = Schema::compile(&json!({"type": "object", "properties": {
            "n": {"type": "integer"},
            "kids": {"type": "array", "items": {"$ref": "#"}}
        }}))
        .unwrap();
        // 200 objects, each the only item of its parent's "kids": object k is
        // at depth 2k, its "n" at 2k + 1.
        let args = |with_n: usize| {
            let mut value = json!({});
            for k in (0..200).rev() {
                let mut object = serde_json::Map::new();
                if k + 1 < 200 {
                    object.insert("kids".into(), json!([value]));
                }
                if k == with_n {
                    object.insert("n".into(), json!("7"));
                }
                value = Value::Object(object);
            }
            value
        };
        [127, 128].map(|k| schema.validate(args(k), true).is_ok())
    });
    assert_eq!(results, [true, false]);
}

/// A root whose "next" chains through 150 definitions, alternating a `$ref`
/// and an inline object: every object along "next" has a "tag" default, and
/// the one at depth `bad` (if any) a default that fails its schema.
fn chained_schema(bad: usize) -> Value {
    let tag = |depth: usize| {
        if depth == bad {
            json!({"type": "integer", "default": "x"})
        } else {
            json!({"type": "integer", "default": 1})
        }
    };
    let mut defs = serde_json::Map::new();
    for j in 0..150 {
        // d{j} is the object at depth 2j + 1, its inline "next" at 2j + 2.
        let depth = 2 * j + 1;
        defs.insert(
            format!("d{j}"),
            json!({"type": "object", "properties": {
                "tag": tag(depth),
                "next": {"type": "object", "properties": {
                    "tag": tag(depth + 1),
                    "next": {"$ref": format!("#/$defs/d{}", j + 1)}
                }}
            }}),
        );
    }
    defs.insert("d150".into(), json!({"type": "object"}));
    json!({"type": "object",
        "properties": {"tag": tag(0), "next": {"$ref": "#/$defs/d0"}},
        "$defs": defs
    })
}

#[test]
fn defaults_through_a_chain_of_references_are_filled_down_to_256_levels() {
    let (filled, warnings) = deep(|| {
        let schema = Schema::compile(&chained_schema(usize::MAX)).unwrap();
        let filled = tagged(
            &schema
                .validate(chain(300, usize::MAX, &json!({})), false)
                .unwrap(),
        );
        (filled, schema.warnings().len())
    });
    assert_eq!(filled, (0..=WALKED).collect::<Vec<_>>());
    assert_eq!(warnings, 0);
}

#[test]
fn defaults_deeper_than_256_levels_are_not_checked() {
    let warnings = deep(|| {
        let near = Schema::compile(&chained_schema(WALKED)).unwrap();
        let far = Schema::compile(&chained_schema(WALKED + 1)).unwrap();
        [near.warnings().len(), far.warnings().len()]
    });
    assert_eq!(warnings, [1, 0]);
}

#[test]
fn below_a_nested_id_defaults_do_not_follow_references_to_the_root() {
    // Below "$id", "#/$defs/t" means the item's own definitions, which
    // capstan does not resolve for defaults: the root's "outer" must not be
    // filled in instead.
    let schema = Schema::compile(&json!({"type": "object",
        "properties": {"item": {
            "$id": "http://example.com/item",
            "type": "object",
            "properties": {
                "x": {"$ref": "#/$defs/t"},
                "xs": {"type": "array", "items": {"$ref": "#/$defs/t"}}
            },
            "allOf": [{"properties": {"y": {"$ref": "#/$defs/t"}}}],
            "$defs": {"t": {"type": "object", "properties": {"a": {"default": "inner"}}}}
        }},
        "allOf": [{"properties": {"z": {"$ref": "#/$defs/t"}}}],
        "$defs": {"t": {"type": "object", "properties": {"a": {"default": "outer"}}}}
    }))
    .unwrap();
    let args = json!({"item": {"x": {}, "xs": [{}], "y": {}}});
    assert_eq!(schema.validate(args.clone(), false), Ok(args));
    // Outside the item, the same reference in an `allOf` member is followed.
    assert_eq!(
        schema.validate(json!({"z": {}}), false),
        Ok(json!({"z": {"a": "outer"}}))
    );
}

#[test]
fn defaults_through_array_items_deeper_than_256_levels_are_not_checked() {
    // Objects along "kids"/0: the root at depth 0, e{j} at depth 2j + 2; the
    // one at depth `bad` has a default that fails its schema.
    let schema = |bad: usize| {
        let tag = |depth: usize| {
            let default = if depth == bad { json!("x") } else { json!(1) };
            json!({"type": "integer", "default": default})
        };
        let kids = |j: usize| json!({"type": "array", "items": {"$ref": format!("#/$defs/e{j}")}});
        let mut defs = serde_json::Map::new();
        for j in 0..150 {
            defs.insert(
                format!("e{j}"),
                json!({"type": "object", "properties": {"tag": tag(2 * j + 2), "kids": kids(j + 1)}}),
            );
        }
        defs.insert("e150".into(), json!({"type": "object"}));
        json!({"type": "object", "properties": {"tag": tag(0), "kids": kids(0)}, "$defs": defs})
    };
    let warnings = deep(move || {
        [WALKED - 2, WALKED].map(|bad| Schema::compile(&schema(bad)).unwrap().warnings().len())
    });
    assert_eq!(warnings, [1, 0]);
}
