//! Parameters schemas: compiled once when a tool is registered, then used for
//! every call to validate the arguments, fill in defaults and, when asked,
//! coerce strings to the scalars the schema wants.
//!
//! Rules (each has a test in `tests/schema_rules.rs`):
//! - The root of a parameters schema is an object schema: `"type": "object"`
//!   (or `["object"]`), or no `"type"` but `"properties"`, which many hosts
//!   write. In the second case capstan itself rejects arguments that are not
//!   an object, so a tool always receives an object. `{}`, `true` and
//!   non-object roots are refused: a provider could not describe them.
//! - Draft 2020-12 unless `$schema` names draft-07, 2019-09, draft-06 or
//!   draft-04. `format` follows the draft: an assertion up to draft-07, an
//!   annotation from 2019-09 on.
//! - `$ref` resolves only inside the schema. Anything else (http, https, file,
//!   a relative URI, an unknown `$schema`) is refused at compile time by a
//!   retriever that never touches the network or the file system.
//! - `pattern` and `patternProperties` run on the linear-time `regex` engine;
//!   a pattern it cannot compile (backreferences, look-around) is an invalid
//!   schema.
//! - Validation reports every error (see [`ArgumentErrors`] for the text).
//! - Defaults are filled after validation, for properties missing from the
//!   root object and from nested objects that are present (through `properties`,
//!   array `items`, local `$ref` and `allOf`; not through `anyOf`/`oneOf`, where
//!   the branch is ambiguous). Defaults are not validated again.
//! - Coercion, when asked for, is tried only if the arguments are invalid as
//!   sent, and only where the schema's `type` excludes "string".
//! - A schema nested deeper than serde_json parses (128 levels) is refused
//!   rather than risk the compiler's stack.

mod message;
mod shape;

use jsonschema::{PatternOptions, Retrieve, Uri, Validator};
use serde_json::Value;

use crate::error::Error;

pub use message::{ArgumentError, ArgumentErrors};
use shape::Shape;

/// A compiled parameters schema. `Send + Sync`: one per tool, shared by every call.
#[derive(Clone, Debug)]
pub struct Schema {
    source: Value,
    validator: Validator,
    shape: Shape,
    /// Compiled by [`Schema::compile`]: arguments must be an object.
    object_root: bool,
}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Schema>();
};

impl Schema {
    /// Compiles the parameters schema of a tool: [`Schema::compile_any`] plus the
    /// rule that the root is an object schema.
    ///
    /// Errors: [`Error::InvalidSchema`] with a message naming the problem and where.
    pub fn compile(parameters: &Value) -> Result<Schema, Error> {
        check_object_root(parameters)?;
        let mut schema = Schema::compile_any(parameters)?;
        schema.object_root = true;
        Ok(schema)
    }

    /// Compiles any JSON Schema (boolean or object, any root type) under the
    /// same rules otherwise: local `$ref` only, linear-time regexes.
    ///
    /// Errors: [`Error::InvalidSchema`].
    pub fn compile_any(schema: &Value) -> Result<Schema, Error> {
        if nests_deeper_than(schema, MAX_SCHEMA_DEPTH) {
            return Err(Error::InvalidSchema(format!(
                "schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
            )));
        }
        let validator = jsonschema::options()
            .with_retriever(LocalOnly)
            .with_pattern_options(PatternOptions::regex())
            .build(schema)
            .map_err(|e| Error::InvalidSchema(message::schema_error_text(&e)))?;
        Ok(Schema {
            source: schema.clone(),
            validator,
            shape: Shape::build(schema),
            object_root: false,
        })
    }

    /// The schema as registered.
    pub fn source(&self) -> &Value {
        &self.source
    }

    /// Whether `value` is valid, without defaults, coercion or error text.
    pub fn is_valid(&self, value: &Value) -> bool {
        self.validator.is_valid(value)
    }

    /// Validates `args`. On success returns them with the schema's defaults filled
    /// in for missing properties (of the root object and of nested objects that
    /// are present). With `coerce`, strings where the schema asks for an integer,
    /// number or boolean are read as one first ("3", "2.5", "true").
    ///
    /// On failure returns every error, as text a model can act on.
    pub fn validate(&self, mut args: Value, coerce: bool) -> Result<Value, ArgumentErrors> {
        if self.object_root && !args.is_object() {
            return Err(ArgumentErrors::not_an_object(&args));
        }
        // A valid call pays for one `is_valid` only. Coercion touches strings only
        // where the schema excludes strings, so it cannot change a valid call.
        if !self.validator.is_valid(&args) {
            let fixed = coerce && self.shape.coerce(&mut args) && self.validator.is_valid(&args);
            if !fixed {
                return Err(ArgumentErrors::collect(
                    self.validator.iter_errors(&args),
                    &self.source,
                ));
            }
        }
        self.shape.fill(&mut args);
        Ok(args)
    }
}

/// serde_json parses no deeper than this; a deeper schema (built in code) could
/// exhaust the stack of the recursive compiler.
const MAX_SCHEMA_DEPTH: usize = 128;

fn nests_deeper_than(value: &Value, limit: usize) -> bool {
    let mut stack = vec![(value, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth > limit {
            return true;
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

fn check_object_root(parameters: &Value) -> Result<(), Error> {
    let got = match parameters {
        Value::Object(map) => match map.get("type") {
            Some(Value::String(t)) if t == "object" => return Ok(()),
            Some(Value::Array(ts)) if !ts.is_empty() && ts.iter().all(|t| t == "object") => {
                return Ok(())
            }
            None if map.contains_key("properties") => return Ok(()),
            Some(t) => format!("\"type\": {}", message::preview(t)),
            None => "a schema with neither \"type\" nor \"properties\"".to_owned(),
        },
        Value::Bool(b) => format!("the boolean schema {b}"),
        other => message::received(other),
    };
    Err(Error::InvalidSchema(format!(
        "parameters schema root must be an object schema (\"type\": \"object\"), got {got}"
    )))
}

/// Refuses every retrieval: capstan resolves `$ref` only inside the schema, and
/// compiling a schema never reaches the network or the file system.
struct LocalOnly;

impl Retrieve for LocalOnly {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("{uri} is not inside the schema, and capstan never fetches references").into())
    }
}
