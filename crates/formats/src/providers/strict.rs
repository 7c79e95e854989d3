//! OpenAI strict mode (structured outputs) for function parameters.
//!
//! OpenAI's structured-outputs guide ("Supported schemas") asks that every
//! object set `additionalProperties: false`, that every property be listed in
//! `required` (an optional one is emulated with a union with null), that the
//! root be an object and not `anyOf`, and it lists keywords that are not
//! supported: `allOf`, `not`, `dependentRequired`, `dependentSchemas`, `if`,
//! `then`, `else` (and, for fine-tuned models, `patternProperties`). Its only
//! composition keyword is `anyOf`.
//!
//! [`strict_schema`] rewrites a schema that way: all properties required,
//! optional ones made nullable, `additionalProperties: false` on every object
//! that did not set it, `default` removed. It refuses, with the reasons, what
//! cannot be made strict without changing what the tool accepts: an object
//! that allows keys it does not list (`additionalProperties` true or a schema,
//! `patternProperties`, an object without `properties`), the unsupported
//! keywords above plus `oneOf`, a schema without a type, a root that is not a
//! plain object.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::gemini_schema::child;

/// Keywords strict mode rejects, and why.
const UNSUPPORTED: &[(&str, &str)] = &[
    ("allOf", "allOf is not supported in strict mode"),
    (
        "oneOf",
        "oneOf is not supported in strict mode (only anyOf is)",
    ),
    ("not", "not is not supported in strict mode"),
    ("if", "if/then/else is not supported in strict mode"),
    ("then", "if/then/else is not supported in strict mode"),
    ("else", "if/then/else is not supported in strict mode"),
    (
        "dependentRequired",
        "dependentRequired is not supported in strict mode",
    ),
    (
        "dependentSchemas",
        "dependentSchemas is not supported in strict mode",
    ),
    (
        "dependencies",
        "dependencies is not supported in strict mode",
    ),
    (
        "patternProperties",
        "patternProperties allows keys that are not listed; strict mode accepts only listed keys",
    ),
];

/// The schema normalized for OpenAI strict mode, or why it cannot be:
/// each entry reads `"<JSON Pointer>: <reason>"` (`(root)` for the root).
pub fn strict_schema(schema: &Value) -> Result<Value, Vec<String>> {
    normalize(schema).map_err(|problems| {
        problems
            .into_iter()
            .map(|(pointer, message)| {
                let at = if pointer.is_empty() {
                    "(root)"
                } else {
                    pointer.as_str()
                };
                format!("{at}: {message}")
            })
            .collect()
    })
}

/// As [`strict_schema`], with each problem as (pointer, reason).
pub(crate) fn normalize(schema: &Value) -> Result<Value, Vec<(String, String)>> {
    let mut problems = Vec::new();
    let root = match schema {
        Value::Object(map) => {
            let mut map = map.clone();
            if map.contains_key("anyOf") {
                problems.push((
                    String::new(),
                    "the root must be an object, not anyOf".into(),
                ));
            }
            match map.get("type") {
                None => {
                    // Tool arguments are always an object.
                    map.insert("type".into(), json!("object"));
                }
                Some(t) if t == "object" => {}
                Some(_) => problems.push((String::new(), "the root must be of type object".into())),
            }
            Value::Object(map)
        }
        _ => {
            return Err(vec![(
                String::new(),
                "the parameters schema must be a JSON object".into(),
            )])
        }
    };
    let out = walk(&root, "", &mut problems);
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

fn walk(schema: &Value, ptr: &str, problems: &mut Vec<(String, String)>) -> Value {
    let Value::Object(map) = schema else {
        problems.push((
            ptr.to_owned(),
            format!("the schema `{schema}` has no type; strict mode needs every value typed"),
        ));
        return schema.clone();
    };
    for (key, why) in UNSUPPORTED {
        if map.contains_key(*key) {
            problems.push((child(ptr, key), (*why).to_owned()));
        }
    }
    // allOf and oneOf are reported above; "no type" would say it twice.
    let typed = ["type", "anyOf", "$ref", "enum", "const", "allOf", "oneOf"]
        .iter()
        .any(|k| map.contains_key(*k));
    if !typed && !map.contains_key("properties") {
        problems.push((
            ptr.to_owned(),
            "the schema has no type; strict mode needs every value typed".into(),
        ));
    }
    let is_object = map.contains_key("properties")
        || match map.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
            _ => false,
        };

    let mut out = Map::new();
    for (key, value) in map {
        let here = child(ptr, key);
        match key.as_str() {
            "default" => {}
            // Placeholders keep the key order; `object_rules` fills them.
            "properties" | "required" | "additionalProperties" if is_object => {
                out.insert(key.clone(), Value::Null);
            }
            "items" => match value {
                Value::Array(_) => problems.push((
                    here,
                    "items as an array (a tuple) is not supported in strict mode".into(),
                )),
                _ => {
                    out.insert(key.clone(), walk(value, &here, problems));
                }
            },
            "anyOf" => {
                let branches = value.as_array().map(Vec::as_slice).unwrap_or_default();
                let lowered = branches
                    .iter()
                    .enumerate()
                    .map(|(i, b)| walk(b, &child(&here, &i.to_string()), problems));
                out.insert(key.clone(), Value::Array(lowered.collect()));
            }
            "$defs" | "definitions" => {
                let defs = value.as_object().cloned().unwrap_or_default();
                let lowered: Map<String, Value> = defs
                    .iter()
                    .map(|(name, d)| (name.clone(), walk(d, &child(&here, name), problems)))
                    .collect();
                out.insert(key.clone(), Value::Object(lowered));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if is_object {
        object_rules(map, ptr, &mut out, problems);
    }
    Value::Object(out)
}

/// Properties all required (optional ones nullable), no extra keys.
fn object_rules(
    map: &Map<String, Value>,
    ptr: &str,
    out: &mut Map<String, Value>,
    problems: &mut Vec<(String, String)>,
) {
    match map.get("additionalProperties") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => problems.push((
            child(ptr, "additionalProperties"),
            "additionalProperties: true allows keys that are not listed; strict mode requires false"
                .into(),
        )),
        Some(_) => problems.push((
            child(ptr, "additionalProperties"),
            "additionalProperties as a schema (a map of free keys) cannot be strict; strict mode requires false"
                .into(),
        )),
    }
    let properties = match map.get("properties") {
        Some(Value::Object(props)) => props.clone(),
        Some(_) => {
            problems.push((child(ptr, "properties"), "must be an object".into()));
            Map::new()
        }
        None if !ptr.is_empty()
            && !map.contains_key("additionalProperties")
            && !map.contains_key("patternProperties") =>
        {
            problems.push((
                ptr.to_owned(),
                "an object without \"properties\" accepts any keys; strict mode would accept only {}"
                    .into(),
            ));
            Map::new()
        }
        None => Map::new(),
    };
    let required: HashSet<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let props_ptr = child(ptr, "properties");
    let mut lowered = Map::new();
    for (name, sub) in &properties {
        let mut sub = walk(sub, &child(&props_ptr, name), problems);
        if !required.contains(name.as_str()) {
            sub = nullable(sub);
        }
        lowered.insert(name.clone(), sub);
    }
    let names: Vec<Value> = properties.keys().map(|k| json!(k)).collect();
    out.insert("properties".into(), Value::Object(lowered));
    out.insert("required".into(), Value::Array(names));
    out.insert("additionalProperties".into(), json!(false));
}

/// `schema` that also accepts null.
fn nullable(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    let with_null_enum = |map: &mut Map<String, Value>| {
        if let Some(Value::Array(values)) = map.get_mut("enum") {
            if !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
        }
    };
    match map.get_mut("type") {
        Some(Value::String(t)) if t == "null" => {}
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            map.insert("type".into(), json!([t, "null"]));
            with_null_enum(&mut map);
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t == "null") {
                types.push(json!("null"));
            }
            with_null_enum(&mut map);
        }
        _ => {
            if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
                if !branches.iter().any(accepts_null_branch) {
                    branches.push(json!({"type": "null"}));
                }
            } else {
                return json!({"anyOf": [Value::Object(map), {"type": "null"}]});
            }
        }
    }
    Value::Object(map)
}

fn accepts_null_branch(schema: &Value) -> bool {
    schema.get("type").is_some_and(|t| t == "null")
}
