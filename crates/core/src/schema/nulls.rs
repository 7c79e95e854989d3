//! Strict-mode nulls: a provider's strict mode makes every optional
//! property nullable, so a model sends `null` where it means "left out". The
//! schema knows which nulls stand for that; the argument check
//! (`crate::check`) and the providers' strict export both rely on it here,
//! in the schema layer, so the check needs no provider format.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// Removes from strict-mode arguments the nulls that stand for "left out".
///
/// Strict export makes optional properties nullable, so the model sends
/// `"unit": null` where it means no unit. Given the schema as registered,
/// this removes such a null wherever the property is optional and its own
/// schema does not accept null, in nested objects and array items too
/// (following local `$ref`s), so validation and defaults see what was meant.
///
/// Cost: linear in the arguments times the depth of `$ref`s followed; whether a
/// subschema accepts null is worked out once per subschema and call.
pub fn drop_strict_nulls(schema: &Value, args: &mut Value) {
    let mut nulls = NullMemo::default();
    drop_nulls(schema, schema, args, 0, &mut nulls);
}

/// Whether a subschema (by address) accepts null, for one call.
#[derive(Default)]
struct NullMemo {
    known: HashMap<*const Value, bool>,
    /// Subschemas being worked out: met again, they are a cycle and add nothing.
    open: HashSet<*const Value>,
    /// Subschemas looked at; past [`MAX_NULL_STEPS`] the answer is "no".
    steps: usize,
}

/// A bound on the work for one call, against cycles of `anyOf`s whose
/// answers cannot be remembered.
const MAX_NULL_STEPS: usize = 10_000;

/// Deep enough for any real arguments; a bound against recursive `$ref`s.
const MAX_DEPTH: usize = 64;

fn drop_nulls(root: &Value, schema: &Value, args: &mut Value, depth: usize, nulls: &mut NullMemo) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = resolve(root, schema);
    match args {
        Value::Object(values) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required: HashSet<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            values.retain(|name, value| {
                !(value.is_null()
                    && !required.contains(name.as_str())
                    && props
                        .get(name)
                        .is_some_and(|s| !accepts_null(root, s, 0, nulls).0))
            });
            for (name, value) in values.iter_mut() {
                if let Some(sub) = props.get(name) {
                    drop_nulls(root, sub, value, depth + 1, nulls);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                for item in items {
                    drop_nulls(root, item_schema, item, depth + 1, nulls);
                }
            }
        }
        _ => {}
    }
}

fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let mut schema = schema;
    for _ in 0..MAX_DEPTH {
        let Some(target) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| root.pointer(p))
        else {
            break;
        };
        schema = target;
    }
    schema
}

/// Whether `schema` accepts null, and whether the answer leaned on a cycle
/// (then it is not remembered: the cycle's start was not known yet).
fn accepts_null(root: &Value, schema: &Value, depth: usize, nulls: &mut NullMemo) -> (bool, bool) {
    nulls.steps += 1;
    if depth > MAX_DEPTH || nulls.steps > MAX_NULL_STEPS {
        return (false, true);
    }
    let schema = resolve(root, schema);
    let key = schema as *const Value;
    if let Some(&known) = nulls.known.get(&key) {
        return (known, false);
    }
    if !nulls.open.insert(key) {
        return (false, true);
    }
    let (accepts, cyclic) = match schema {
        Value::Bool(b) => (*b, false),
        Value::Object(map) => {
            let typed_null = match map.get("type") {
                Some(Value::String(t)) => t == "null",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
                None => !["enum", "const", "anyOf", "oneOf"]
                    .iter()
                    .any(|k| map.contains_key(*k)),
                Some(_) => false,
            };
            let enum_null = map
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|e| e.contains(&Value::Null));
            let const_null = map.get("const") == Some(&Value::Null);
            let mut branch_null = false;
            let mut cyclic = false;
            for key in ["anyOf", "oneOf"] {
                for branch in map.get(key).and_then(Value::as_array).into_iter().flatten() {
                    if branch_null {
                        break;
                    }
                    let (accepts, leaned) = accepts_null(root, branch, depth + 1, nulls);
                    branch_null |= accepts;
                    cyclic |= leaned;
                }
            }
            (
                typed_null || enum_null || const_null || branch_null,
                cyclic && !branch_null,
            )
        }
        _ => (false, false),
    };
    nulls.open.remove(&key);
    // "Accepts null" holds whatever the open cycle turns out to be.
    if accepts || !cyclic {
        nulls.known.insert(key, accepts);
    }
    (accepts, cyclic)
}
