//! Lowering a JSON Schema to the OpenAPI subset of Gemini's `Schema` object.
//!
//! Gemini's `parameters` field takes a "select subset of an OpenAPI 3.0
//! schema object": `type` (STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT,
//! NULL), `format`, `title`, `description`, `nullable`, `enum` (strings),
//! `properties`, `required`, `items`, `anyOf`, `minItems`, `maxItems`,
//! `minLength`, `maxLength`, `pattern`, `minimum`, `maximum`,
//! `minProperties`, `maxProperties`, `example`, `default`, `propertyOrdering`.
//! Everything else is dropped and reported (pointer + keyword). Capstan still
//! validates arguments against the registered schema, so a drop loosens only
//! what the model is told, never what is accepted.
//!
//! Rewrites that keep the meaning are not reported: local `$ref`s are
//! inlined, a `type` list with "null" becomes `nullable`, `const` becomes a
//! one-value `enum`, a one-element `allOf` is merged.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

/// Keywords Gemini's Schema takes as they are.
const KEPT: &[&str] = &[
    "title",
    "description",
    "nullable",
    "required",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "minProperties",
    "maxProperties",
    "example",
    "default",
    "propertyOrdering",
];

/// Formats the Gemini API accepts per type; any other makes it fail the request.
fn format_supported(format: &str) -> bool {
    matches!(
        format,
        "enum" | "date-time" | "float" | "double" | "int32" | "int64"
    )
}

/// Inlining `$ref`s can make the lowered schema exponentially larger than the
/// registered one (a chain of definitions each used twice by the next): past
/// this many subschemas (and enum values) written, lowering is refused.
/// cbindgen:ignore
pub const MAX_LOWERED_SIZE: usize = 10_000;

/// The lowered schema (`None` when it would pass [`MAX_LOWERED_SIZE`]) and
/// (pointer, message) for every drop, or for the refusal.
pub(crate) fn lower(schema: &Value) -> (Option<Value>, Vec<(String, String)>) {
    let mut lowering = Lowering {
        root: schema,
        notes: Vec::new(),
        noted: HashSet::new(),
        inlining: Vec::new(),
        written: 0,
    };
    let out = lowering.schema(schema, "");
    if lowering.written > MAX_LOWERED_SIZE {
        let refusal = format!(
            "not lowered: inlining its $refs would write more than {MAX_LOWERED_SIZE} \
             subschemas (definitions used many times over); exported as \
             parametersJsonSchema instead"
        );
        return (None, vec![(String::new(), refusal)]);
    }
    (Some(out), lowering.notes)
}

struct Lowering<'a> {
    root: &'a Value,
    notes: Vec<(String, String)>,
    /// Pointers already reported: a `$defs` entry inlined twice reports once.
    noted: HashSet<String>,
    /// `$ref`s being inlined, to stop on recursion.
    inlining: Vec<String>,
    /// Subschemas and enum values written so far.
    written: usize,
}

impl Lowering<'_> {
    fn note(&mut self, pointer: String, message: String) {
        if self.noted.insert(pointer.clone()) {
            self.notes.push((pointer, message));
        }
    }

    fn drop_keyword(&mut self, ptr: &str, key: &str, why: &str) {
        self.note(child(ptr, key), format!("{key} dropped: {why}"));
    }

    fn schema(&mut self, schema: &Value, ptr: &str) -> Value {
        self.written += 1 + schema
            .get("enum")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if self.written > MAX_LOWERED_SIZE {
            return Value::Null; // refused: stop here
        }
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(b) => {
                self.note(
                    ptr.to_owned(),
                    format!("the schema `{b}` has no Gemini equivalent; left unconstrained"),
                );
                return json!({});
            }
            _ => {
                self.note(ptr.to_owned(), "not a schema; left unconstrained".into());
                return json!({});
            }
        };
        let mut out = Map::new();
        if let Some(reference) = map.get("$ref") {
            if let Value::Object(target) = self.inline(reference, ptr) {
                out = target;
            }
        }
        let mut any_of: Vec<Value> = Vec::new();
        for (key, value) in map {
            let here = child(ptr, key);
            match key.as_str() {
                "$ref" => {}
                "type" => self.lower_type(value, ptr, &mut out, &mut any_of),
                "properties" => {
                    let Value::Object(props) = value else {
                        self.drop_keyword(ptr, key, "not an object");
                        continue;
                    };
                    let lowered: Map<String, Value> = props
                        .iter()
                        .map(|(name, sub)| (name.clone(), self.schema(sub, &child(&here, name))))
                        .collect();
                    out.insert(key.clone(), Value::Object(lowered));
                }
                "items" => match value {
                    Value::Object(_) | Value::Bool(_) => {
                        let items = self.schema(value, &here);
                        out.insert(key.clone(), items);
                    }
                    _ => self.drop_keyword(ptr, key, "Gemini has no tuple arrays"),
                },
                "anyOf" | "oneOf" => {
                    let Value::Array(branches) = value else {
                        self.drop_keyword(ptr, key, "not an array");
                        continue;
                    };
                    if key == "oneOf" {
                        self.note(
                            here.clone(),
                            "oneOf lowered to anyOf: Gemini has no oneOf".into(),
                        );
                    }
                    for (i, branch) in branches.iter().enumerate() {
                        let lowered = self.schema(branch, &child(&here, &i.to_string()));
                        any_of.push(lowered);
                    }
                }
                "allOf" => match value.as_array().map(Vec::as_slice) {
                    Some([only]) => {
                        if let Value::Object(merged) = self.schema(only, &child(&here, "0")) {
                            for (k, v) in merged {
                                out.entry(k).or_insert(v);
                            }
                        }
                    }
                    _ => self.drop_keyword(ptr, key, "Gemini has no allOf"),
                },
                "const" => match value {
                    Value::String(_) => {
                        out.insert("enum".into(), json!([value]));
                    }
                    _ => self.drop_keyword(ptr, key, "Gemini enums hold strings only"),
                },
                "enum" => match value.as_array() {
                    Some(values) if values.iter().all(Value::is_string) => {
                        out.insert(key.clone(), value.clone());
                    }
                    _ => self.drop_keyword(ptr, key, "Gemini enums hold strings only"),
                },
                "format" => match value.as_str() {
                    Some(f) if format_supported(f) => {
                        out.insert(key.clone(), value.clone());
                    }
                    _ => self.drop_keyword(
                        ptr,
                        key,
                        "Gemini takes only enum, date-time, float, double, int32, int64",
                    ),
                },
                "$defs" | "definitions" => {
                    self.drop_keyword(ptr, key, "local references are inlined instead")
                }
                "additionalProperties" if value == &Value::Bool(false) => self.drop_keyword(
                    ptr,
                    key,
                    "Gemini cannot forbid extra keys (capstan still rejects them)",
                ),
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                _ => self.drop_keyword(ptr, key, "not in Gemini's schema subset"),
            }
        }
        if !any_of.is_empty() {
            out.insert("anyOf".into(), Value::Array(any_of));
        }
        // Gemini enums are STRING enums; say so when the schema did not.
        if out.contains_key("enum") && !out.contains_key("type") && !out.contains_key("anyOf") {
            out.insert("type".into(), json!("STRING"));
        }
        Value::Object(out)
    }

    fn lower_type(
        &mut self,
        value: &Value,
        ptr: &str,
        out: &mut Map<String, Value>,
        any_of: &mut Vec<Value>,
    ) {
        let names: Vec<&str> = match value {
            Value::String(s) => vec![s.as_str()],
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let mut types = Vec::new();
        for name in &names {
            match gemini_type(name) {
                Some(t) => types.push(t),
                None => self.drop_keyword(ptr, "type", &format!("unknown type \"{name}\"")),
            }
        }
        if types.len() > 1 && types.contains(&"NULL") {
            types.retain(|t| *t != "NULL");
            out.insert("nullable".into(), json!(true));
        }
        match types.as_slice() {
            [] => {}
            [only] => {
                out.insert("type".into(), json!(only));
            }
            several => any_of.extend(several.iter().map(|t| json!({"type": t}))),
        }
    }

    /// The lowered target of a local `$ref`; a recursive one is cut to its type.
    fn inline(&mut self, reference: &Value, ptr: &str) -> Value {
        let Some(reference) = reference.as_str() else {
            self.drop_keyword(ptr, "$ref", "not a string");
            return Value::Null;
        };
        let target = reference
            .strip_prefix('#')
            .and_then(|pointer| self.root.pointer(pointer));
        let Some(target) = target else {
            self.drop_keyword(
                ptr,
                "$ref",
                &format!("\"{reference}\" is not a local reference capstan can inline"),
            );
            return Value::Null;
        };
        if self.inlining.iter().any(|r| r == reference) {
            let cut = match target.get("type") {
                Some(Value::String(t)) => gemini_type(t).map(|t| json!({"type": t})),
                _ => None,
            };
            self.note(
                child(ptr, "$ref"),
                format!("$ref dropped: \"{reference}\" is recursive and cannot be inlined"),
            );
            return cut.unwrap_or_else(|| json!({}));
        }
        self.inlining.push(reference.to_owned());
        let lowered = self.schema(target, &reference[1..]);
        self.inlining.pop();
        lowered
    }
}

fn gemini_type(json_type: &str) -> Option<&'static str> {
    Some(match json_type {
        "string" => "STRING",
        "number" => "NUMBER",
        "integer" => "INTEGER",
        "boolean" => "BOOLEAN",
        "array" => "ARRAY",
        "object" => "OBJECT",
        "null" => "NULL",
        _ => return None,
    })
}

/// `ptr` extended by one JSON Pointer token.
pub(crate) fn child(ptr: &str, token: &str) -> String {
    format!("{ptr}/{}", token.replace('~', "~0").replace('/', "~1"))
}
