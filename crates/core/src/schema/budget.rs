//! A bounded cost for validating any arguments against any schema.
//!
//! JSON Schema validation is not linear: `anyOf` branches that each recurse
//! into the same arguments (a calculator's expression tree), or chains of
//! `anyOf` through `$ref`, make the work grow exponentially with the depth of
//! the arguments or of the schema, and collecting every error of every failed
//! branch (what `anyOf` reports) grows with it, in time and memory.
//!
//! capstan compiles a *metered* copy of each schema instead: every subschema
//! that leads on to more subschemas (one with an applicator keyword or a
//! `$ref`) is wrapped in a gate,
//! `{"if": {"x-capstan-fuel": <weight>}, "then": <subschema>}`. The gate's
//! keyword takes fuel from a per-thread meter armed for one validation; once
//! the fuel is gone every gate lets its subschema pass unchecked, so the walk
//! ends quickly. A run that ran out of fuel never accepts arguments: the
//! caller sees [`Meter::exhausted`] and rejects them as too complex.
//!
//! What the gates cost: a valid call walks the same subschemas as before, plus
//! one custom keyword per gated subschema.

use std::cell::Cell;

use jsonschema::{Keyword, ValidationError};
use serde_json::{json, Map, Value};

/// The keyword the gates test. Its name cannot clash with a real keyword.
pub(crate) const FUEL_KEYWORD: &str = "x-capstan-fuel";

/// Fuel of one `is_valid` over the arguments. A gated subschema applied to a
/// value costs (1 + the subschemas it holds directly) x (1 + the value's
/// elements or members, or 1 per 64 bytes of a string).
/// cbindgen:ignore
pub const VALIDATION_STEPS: u64 = 200_000;
/// Fuel of the walk that collects the error text, counted the same way.
/// cbindgen:ignore
pub const ERROR_STEPS: u64 = 5_000;
/// And a second fuel of that walk: the size (values, and 32 bytes of string
/// each) of what gated subschemas are applied to, since the errors under
/// `anyOf` and `oneOf` keep a copy of it. About 64 bytes of heap each.
/// cbindgen:ignore
pub const ERROR_SIZE: u64 = 500_000;

/// The fuel armed on a thread.
#[derive(Clone, Copy)]
struct Tank {
    steps: u64,
    /// `None`: sizes are not counted.
    size: Option<u64>,
    spent: bool,
}

thread_local! {
    /// `None` when no run is armed on this thread: gates always pass.
    static TANK: Cell<Option<Tank>> = const { Cell::new(None) };
}

/// A validation run's fuel on this thread, from `arm` until dropped.
pub(crate) struct Meter {
    previous: Option<Tank>,
}

impl Meter {
    /// `size`: also count the size of what each gate applies to (the error walk).
    pub(crate) fn arm(steps: u64, size: Option<u64>) -> Meter {
        let tank = Tank {
            steps,
            size,
            spent: false,
        };
        // After thread-local destruction (a thread-exit destructor) the run is
        // simply unmetered: nothing here may panic.
        let previous = TANK.try_with(|t| t.replace(Some(tank))).unwrap_or(None);
        Meter { previous }
    }

    /// Whether the run ran out of fuel: its answer cannot be trusted.
    pub(crate) fn exhausted(&self) -> bool {
        TANK.try_with(Cell::get)
            .ok()
            .flatten()
            .is_some_and(|t| t.spent)
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        let _ = TANK.try_with(|t| t.set(self.previous));
    }
}

/// Takes the cost of applying one subschema of `weight` to `value`; false
/// when the fuel is gone.
fn burn(weight: u64, value: &Value) -> bool {
    let Ok(Some(mut tank)) = TANK.try_with(Cell::get) else {
        return true; // unmetered
    };
    if tank.spent {
        return false;
    }
    let width = 1 + match value {
        Value::Array(items) => items.len() as u64,
        Value::Object(map) => map.len() as u64,
        Value::String(s) => s.len() as u64 / 64,
        _ => 0,
    };
    let steps = weight.saturating_mul(width);
    let mut ok = steps <= tank.steps;
    tank.steps = tank.steps.saturating_sub(steps);
    if let (true, Some(left)) = (ok, tank.size) {
        let size = size(value, left);
        ok = size <= left;
        tank.size = Some(left.saturating_sub(size));
    }
    tank.spent = !ok;
    let _ = TANK.try_with(|t| t.set(Some(tank)));
    ok
}

/// Values in `value` (a string counts one more per 32 bytes), counted up to `cap` + 1.
fn size(value: &Value, cap: u64) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total += 1;
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            Value::String(s) => total += s.len() as u64 / 32,
            _ => {}
        }
        if total > cap {
            break;
        }
    }
    total
}

/// The gates' keyword; its value is the gated subschema's [`weight`].
pub(crate) struct Fuel(u64);

impl Fuel {
    pub(crate) fn new(value: &Value) -> Fuel {
        Fuel(value.as_u64().unwrap_or(1).max(1))
    }
}

impl<'i> Keyword<'i> for Fuel {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        if burn(self.0, instance) {
            Ok(())
        } else {
            Err(ValidationError::custom("validation budget exhausted"))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        burn(self.0, instance)
    }
}

// --- the metered copy --------------------------------------------------------

/// How a keyword holds subschemas.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Holds {
    /// One subschema.
    One,
    /// An array of subschemas.
    List,
    /// A map of names to subschemas.
    Named,
    Nothing,
}

pub(super) fn holds(keyword: &str, value: &Value) -> Holds {
    match keyword {
        "not"
        | "if"
        | "then"
        | "else"
        | "additionalItems"
        | "additionalProperties"
        | "contains"
        | "propertyNames"
        | "unevaluatedItems"
        | "unevaluatedProperties"
        | "contentSchema" => Holds::One,
        "items" if value.is_array() => Holds::List,
        "items" => Holds::One,
        "allOf" | "anyOf" | "oneOf" | "prefixItems" => Holds::List,
        "$defs" | "definitions" | "dependentSchemas" | "dependencies" | "properties"
        | "patternProperties" => Holds::Named,
        // Values, not schemas.
        "const" | "enum" | "default" | "examples" | "example" | "$vocabulary"
        | "dependentRequired" | "discriminator" => Holds::Nothing,
        // Any other object may be a `$ref` target ("#/x-defs/a", or below an
        // unknown keyword): read as a schema, so that no chain escapes the gates.
        _ if value.is_object() => Holds::One,
        _ => Holds::Nothing,
    }
}

/// Keywords through which a subschema leads to further subschemas.
fn leads_on(schema: &Map<String, Value>) -> bool {
    schema.iter().any(|(k, v)| {
        holds(k, v) != Holds::Nothing
            || matches!(k.as_str(), "$ref" | "$dynamicRef" | "$recursiveRef")
    })
}

/// Whether the subschema at a position is wrapped in a gate: when it leads
/// on to other subschemas. A leaf's work is local, and charged to the gate
/// of the subschema that applies it (see [`weight`]).
fn gated(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => leads_on(map),
        _ => false,
    }
}

/// What a gate charges per unit of its value: one, plus one per subschema
/// the gated subschema holds directly (its leaves are checked under this gate).
fn weight(schema: &Map<String, Value>) -> u64 {
    let held: usize = schema
        .iter()
        .map(|(k, v)| match (holds(k, v), v) {
            (Holds::One, _) => 1,
            (Holds::List, Value::Array(items)) => items.len(),
            (Holds::Named, Value::Object(named)) => named.len(),
            _ => 0,
        })
        .sum();
    1 + held as u64
}

/// Whether the metered copy of `root` would hold any gate: a schema whose
/// subschemas are all leaves validates in one pass over the arguments, and is
/// compiled as it is.
pub(crate) fn needs_gates(root: &Value) -> bool {
    let Value::Object(map) = root else {
        return false;
    };
    map.iter()
        .any(|(key, value)| match (holds(key, value), value) {
            (Holds::One, sub) => gated(sub),
            (Holds::List, Value::Array(items)) => items.iter().any(gated),
            (Holds::Named, Value::Object(named)) => named.values().any(gated),
            _ => false,
        })
}

/// The metered copy of `root` (its root itself is not gated: `$schema`, `$id`
/// and the root's definitions stay where they are).
pub(crate) fn metered(root: &Value) -> Value {
    let mut out = copy(root, root);
    if let Value::Object(map) = &mut out {
        upgrade_draft(map);
    }
    out
}

/// `if`/`then` exist from draft-07 on: a draft-04 or draft-06 schema is
/// checked as draft-07, which reads it the same once draft-04's boolean
/// `exclusiveMaximum`/`exclusiveMinimum` and `id` are written the new way.
fn upgrade_draft(root: &mut Map<String, Value>) {
    let draft = root.get("$schema").and_then(Value::as_str).unwrap_or("");
    let four = draft.contains("draft-04");
    if !(four || draft.contains("draft-06")) {
        return;
    }
    root.insert(
        "$schema".into(),
        json!("http://json-schema.org/draft-07/schema#"),
    );
    if four {
        draft04_to_07(root);
    }
}

fn draft04_to_07(schema: &mut Map<String, Value>) {
    for (bound, limit) in [
        ("exclusiveMaximum", "maximum"),
        ("exclusiveMinimum", "minimum"),
    ] {
        match schema.get(bound) {
            Some(Value::Bool(true)) => {
                if let Some(n) = schema.remove(limit) {
                    schema.insert(bound.into(), n);
                } else {
                    schema.remove(bound);
                }
            }
            Some(Value::Bool(false)) => {
                schema.remove(bound);
            }
            _ => {}
        }
    }
    if let Some(Value::String(id)) = schema.get("id").cloned() {
        if !schema.contains_key("$id") {
            schema.insert("$id".into(), Value::String(id));
        }
    }
    for value in schema.values_mut() {
        match value {
            Value::Object(map) => draft04_to_07(map),
            Value::Array(items) => {
                for item in items.iter_mut().filter_map(Value::as_object_mut) {
                    draft04_to_07(item);
                }
            }
            _ => {}
        }
    }
}

/// `schema` with its subschemas gated and its local `$ref`s pointing into
/// the metered copy. `resource` is the schema "#" means here.
fn copy(schema: &Value, resource: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    // Below an `$id`, "#/..." is relative to that subschema.
    let resource = if has_id(map) && !std::ptr::eq(schema, resource) {
        schema
    } else {
        resource
    };
    let mut out = Map::with_capacity(map.len());
    for (key, value) in map {
        let copied = match (holds(key, value), value) {
            (Holds::One, _) => position(value, resource),
            (Holds::List, Value::Array(items)) => {
                Value::Array(items.iter().map(|item| position(item, resource)).collect())
            }
            // draft-04 `dependencies` also maps names to arrays of names: not gated.
            (Holds::Named, Value::Object(named)) => Value::Object(
                named
                    .iter()
                    .map(|(name, sub)| (name.clone(), position(sub, resource)))
                    .collect(),
            ),
            _ if key == "$ref" => match value.as_str().and_then(|r| relocate(r, resource)) {
                Some(moved) => Value::String(moved),
                None => value.clone(),
            },
            _ => value.clone(),
        };
        out.insert(key.clone(), copied);
    }
    Value::Object(out)
}

fn position(schema: &Value, resource: &Value) -> Value {
    let copied = copy(schema, resource);
    match schema {
        Value::Object(map) if gated(schema) => {
            json!({"if": {FUEL_KEYWORD: weight(map)}, "then": copied})
        }
        _ => copied,
    }
}

fn has_id(map: &Map<String, Value>) -> bool {
    map.get("$id")
        .or_else(|| map.get("id"))
        .is_some_and(Value::is_string)
}

/// A "#/json/pointer" reference rewritten for the metered copy: "then"
/// after every gated position it passes. Other references stay as they are.
fn relocate(reference: &str, resource: &Value) -> Option<String> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() || !pointer.starts_with('/') {
        return None;
    }
    let mut out = String::from("#");
    walk(resource, pointer, |token, gate| {
        out.push('/');
        out.push_str(token);
        if gate {
            out.push_str("/then");
        }
    });
    Some(out)
}

/// The location in the registered schema of a keyword location in its metered
/// copy (as a validation error reports it): the gates' "/then" taken out.
pub(crate) fn source_location(root: &Value, metered_location: &str) -> String {
    let tokens: Vec<&str> = metered_location.split('/').skip(1).collect();
    let mut out = String::new();
    let mut node = Some(root);
    let mut expect = Expect::Schema;
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        out.push('/');
        out.push_str(token);
        i += 1;
        let (next, gate, after) = step(node, expect, token);
        node = next;
        expect = after;
        if gate && tokens.get(i) == Some(&"then") {
            i += 1;
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Expect {
    /// At a schema: the next token is a keyword.
    Schema,
    /// In a list or map of subschemas: the next token picks one.
    Member,
    /// Outside subschemas: no more gates.
    Data,
}

/// One pointer step from `node`: the value reached, whether it is a gated
/// position, and what the next token means.
fn step<'a>(
    node: Option<&'a Value>,
    expect: Expect,
    token: &str,
) -> (Option<&'a Value>, bool, Expect) {
    let name = unescape(token);
    let next = node.and_then(|n| match n {
        Value::Object(map) => map.get(name.as_deref().unwrap_or(token)),
        Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    });
    match (expect, next) {
        (Expect::Schema, Some(value)) => match holds(name.as_deref().unwrap_or(token), value) {
            Holds::One => (next, gated(value), Expect::Schema),
            Holds::List | Holds::Named => (next, false, Expect::Member),
            Holds::Nothing => (next, false, Expect::Data),
        },
        (Expect::Member, Some(value)) => (next, gated(value), Expect::Schema),
        _ => (next, false, Expect::Data),
    }
}

/// Calls `visit(token, gated)` for each token of `pointer`, walked from `root`.
fn walk(root: &Value, pointer: &str, mut visit: impl FnMut(&str, bool)) {
    let mut node = Some(root);
    let mut expect = Expect::Schema;
    for token in pointer.split('/').skip(1) {
        let (next, gate, after) = step(node, expect, token);
        visit(token, gate);
        node = next;
        expect = after;
    }
}

/// A pointer token as a key: percent-decoded (URI fragments), then `~1` and `~0`.
fn unescape(token: &str) -> Option<String> {
    let decoded = super::shape::percent_decode(token)?;
    Some(decoded.replace("~1", "/").replace("~0", "~"))
}

#[cfg(test)]
mod tests;
