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
//!   a pattern it cannot compile (backreferences, look-around) or that
//!   compiles to more than [`MAX_REGEX_BYTES`] is an invalid schema.
//! - Validation has a bounded cost (`budget.rs`): arguments that take more
//!   than [`VALIDATION_STEPS`] to check are refused as too complex, never
//!   accepted. It reports up to [`MAX_ERRORS`] errors, found within a budget
//!   of their own (see [`ArgumentErrors`] for the text); for `anyOf`/`oneOf`,
//!   the alternative that came closest.
//! - Defaults are filled after validation, for properties missing from the
//!   root object and from nested objects that are present (through `properties`,
//!   array `items`, local `$ref` and `allOf`; not through `anyOf`/`oneOf`, where
//!   the branch is ambiguous). Each default is checked once, at compile time,
//!   against the schema where it would be filled: one that fails is never
//!   filled, and [`Schema::warnings`] says so.
//! - Coercion, when asked for, is tried only if the arguments are invalid as
//!   sent, and only where the schema's `type` excludes "string".
//! - A schema nested deeper than serde_json parses (128 levels) is refused
//!   rather than risk the compiler's stack.

mod budget;
mod keywords;
mod message;
mod nulls;
mod shape;

use jsonschema::{PatternOptions, Retrieve, Uri, ValidationError, Validator};
use std::sync::Arc;

use serde_json::Value;

use crate::error::Error;

use budget::Meter;
pub use budget::{ERROR_SIZE, ERROR_STEPS, VALIDATION_STEPS};
pub use message::{ArgumentError, ArgumentErrors};
pub use nulls::drop_strict_nulls;
use shape::Shape;

/// A compiled parameters schema. `Send + Sync`: one per tool, shared by every call.
#[derive(Clone, Debug)]
pub struct Schema {
    source: Value,
    /// Compiled from the metered copy of `source` (see `budget.rs`), or,
    /// when `metered` is false, from `source` itself.
    validator: Validator,
    metered: bool,
    prepared: Prepared,
    /// Compiled by [`Schema::compile`]: arguments must be an object.
    object_root: bool,
}

/// What compiling a schema works out besides the validator: its defaults and
/// coercions, and the warnings about it. Kept by a registered tool so that its
/// first call compiles the validator alone.
#[derive(Clone, Debug)]
pub struct Prepared {
    shape: Arc<Shape>,
    /// The defaults' warnings, then the misspelled keywords'.
    warnings: Arc<[String]>,
    /// How many of `warnings` are about defaults.
    default_warnings: usize,
}

impl Prepared {
    /// See [`Schema::warnings`].
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
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

    /// [`Schema::compile`] again, for a schema that compiled before and gave
    /// `prepared`: the defaults and warnings are not worked out again.
    pub fn compile_prepared(parameters: &Value, prepared: &Prepared) -> Result<Schema, Error> {
        check_object_root(parameters)?;
        let (validator, metered) = validator(parameters)?;
        Ok(Schema {
            source: parameters.clone(),
            validator,
            metered,
            prepared: prepared.clone(),
            object_root: true,
        })
    }

    /// Compiles any JSON Schema (boolean or object, any root type) under the
    /// same rules otherwise: local `$ref` only, linear-time regexes.
    ///
    /// Errors: [`Error::InvalidSchema`].
    pub fn compile_any(schema: &Value) -> Result<Schema, Error> {
        let (validator, metered) = validator(schema)?;
        let mut compiled = Schema {
            source: schema.clone(),
            validator,
            metered,
            prepared: Prepared {
                shape: Arc::new(Shape::default()),
                warnings: Arc::from(Vec::new()),
                default_warnings: 0,
            },
            object_root: false,
        };
        let mut shape = Shape::build(schema);
        let mut warnings = compiled.check_defaults(&mut shape);
        let default_warnings = warnings.len();
        warnings.extend(keywords::near_misses(schema));
        compiled.prepared = Prepared {
            shape: Arc::new(shape),
            warnings: warnings.into(),
            default_warnings,
        };
        Ok(compiled)
    }

    /// What [`Schema::compile_prepared`] takes.
    pub fn prepared(&self) -> &Prepared {
        &self.prepared
    }

    /// Problems that do not stop the schema from working, each naming where in
    /// the schema (a JSON Pointer): a `default` that fails its own schema (it is
    /// never filled in), then a key one or two edits from a keyword
    /// (`requried`: it checks nothing; see `keywords.rs`).
    pub fn warnings(&self) -> &[String] {
        &self.prepared.warnings
    }

    /// The warnings about defaults (what `strict_defaults` refuses).
    pub fn default_warnings(&self) -> &[String] {
        &self.prepared.warnings[..self.prepared.default_warnings]
    }

    /// The warnings about misspelled keywords (what `strict_keywords` refuses).
    pub fn keyword_warnings(&self) -> &[String] {
        &self.prepared.warnings[self.prepared.default_warnings..]
    }

    /// Checks every default against the schema where it would be filled in;
    /// forgets those that fail, and says why. One validation per object that
    /// has defaults, each within the error budget.
    fn check_defaults(&self, shape: &mut Shape) -> Vec<String> {
        let sites = shape.defaults();
        let mut warnings = Vec::new();
        let mut start = 0;
        while start < sites.len() {
            let node = sites[start].node;
            let end = start + sites[start..].iter().take_while(|d| d.node == node).count();
            let group = &sites[start..end];
            start = end;
            // The object with this node's defaults in it, where they would be filled.
            let object: serde_json::Map<String, Value> = group
                .iter()
                .filter_map(|d| Some((shape_name(shape, d)?, d.value.clone())))
                .collect();
            let mut instance = Value::Object(object);
            let mut pointer = String::new();
            for step in group[0].object.iter().rev() {
                instance = match step {
                    shape::Step::Property(name) => {
                        let mut map = serde_json::Map::new();
                        map.insert(name.clone(), instance);
                        Value::Object(map)
                    }
                    shape::Step::Item => Value::Array(vec![instance]),
                };
            }
            for step in &group[0].object {
                pointer.push('/');
                match step {
                    shape::Step::Property(name) => pointer.push_str(&escape(name)),
                    shape::Step::Item => pointer.push('0'),
                }
            }
            // Filled in as a call would be: a default object gets its own
            // properties' defaults before it is judged.
            shape.fill(&mut instance);
            let meter = Meter::arm(ERROR_STEPS, Some(ERROR_SIZE));
            // Only errors inside one of the defaults are about them (the
            // object itself may lack required siblings): text for those alone.
            let below = format!("{pointer}/");
            let errors: Vec<_> = self
                .validator
                .iter_errors(&instance)
                .filter(|e| e.instance_path().as_str().starts_with(&below))
                .collect();
            drop(meter);
            if errors.is_empty() {
                continue;
            }
            let errors = ArgumentErrors::collect(errors.into_iter(), &self.source, self.metered);
            for site in group {
                let Some(name) = shape_name(shape, site) else {
                    continue;
                };
                let at = format!("{pointer}/{}", escape(&name));
                let inside = format!("{at}/");
                let Some(first) = errors
                    .0
                    .iter()
                    .find(|e| e.pointer == at || e.pointer.starts_with(&inside))
                else {
                    continue;
                };
                warnings.push(format!(
                    "default at {} ({}) does not match its schema ({}); it is never filled in",
                    site.schema_at,
                    message::preview(&site.value),
                    first.message
                ));
                shape.forget_default(site.node, site.prop);
            }
        }
        warnings
    }

    /// The schema as registered.
    pub fn source(&self) -> &Value {
        &self.source
    }

    /// Whether `value` is valid, without defaults, coercion or error text.
    /// False also when checking it would take more than the validation budget.
    pub fn is_valid(&self, value: &Value) -> bool {
        let meter = Meter::arm(VALIDATION_STEPS, None);
        self.validator.is_valid(value) && !meter.exhausted()
    }

    /// Validates `args`. On success returns them with the schema's defaults filled
    /// in for missing properties (of the root object and of nested objects that
    /// are present). With `coerce`, strings where the schema asks for an integer,
    /// number or boolean are read as one first ("3", "2.5", "true").
    ///
    /// On failure returns the errors (at most [`MAX_ERRORS`]), as text a model
    /// can act on. Arguments that take more than the validation budget to check
    /// are refused, whatever they hold (see `budget.rs`).
    pub fn validate(&self, mut args: Value, coerce: bool) -> Result<Value, ArgumentErrors> {
        if self.object_root && !args.is_object() {
            return Err(ArgumentErrors::not_an_object(&args));
        }
        // A valid call pays for one `is_valid` only. Coercion touches strings only
        // where the schema excludes strings, so it cannot change a valid call.
        let (valid, mut too_complex) = self.check(&args);
        if !valid {
            let fixed = coerce && self.prepared.shape.coerce(&mut args) && {
                let (valid, again) = self.check(&args);
                too_complex = again;
                valid
            };
            if !fixed {
                return Err(self.errors(&args, too_complex));
            }
        }
        self.prepared.shape.fill(&mut args);
        Ok(args)
    }

    /// (valid, ran out of budget). Never valid when out of budget.
    fn check(&self, args: &Value) -> (bool, bool) {
        let meter = Meter::arm(VALIDATION_STEPS, None);
        let valid = self.validator.is_valid(args);
        let spent = meter.exhausted();
        (valid && !spent, spent)
    }

    /// The error text for invalid `args`: a walk of its own budget, whose
    /// errors stop at [`MAX_ERRORS`].
    fn errors(&self, args: &Value, too_complex: bool) -> ArgumentErrors {
        let meter = Meter::arm(ERROR_STEPS, Some(ERROR_SIZE));
        let collected: Vec<_> = self.validator.iter_errors(args).collect();
        let cut = meter.exhausted() || collected.len() > MAX_ERRORS;
        drop(meter);
        let mut errors = ArgumentErrors::collect(
            collected.into_iter().take(MAX_ERRORS),
            &self.source,
            self.metered,
        );
        let found = !errors.is_generic();
        if too_complex && !found {
            errors = ArgumentErrors::too_complex();
        } else if cut || too_complex {
            errors.stopped_early();
        }
        errors
    }
}

/// At most this many errors are reported for one call (the text shows 20).
/// cbindgen:ignore
pub const MAX_ERRORS: usize = 100;

/// A `pattern` (or `patternProperties` name) whose compiled program is larger
/// than this is refused at registration: the linear-time engine's work per
/// character of the string grows with it, and counted repetition
/// (`(?:\w{1000}){50}`) makes it huge from a short pattern.
/// cbindgen:ignore
pub const MAX_REGEX_BYTES: usize = 256 * 1024;

/// serde_json parses no deeper than this; a deeper schema (built in code) could
/// exhaust the stack of the recursive compiler.
const MAX_SCHEMA_DEPTH: usize = 128;

/// The validator: compiled from the metered copy, or (`false`) from the
/// schema itself when the copy does not compile.
fn validator(schema: &Value) -> Result<(Validator, bool), Error> {
    if nests_deeper_than(schema, MAX_SCHEMA_DEPTH) {
        return Err(Error::InvalidSchema(format!(
            "schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
        )));
    }
    // A schema the copy cannot compile is compiled as registered, for an error
    // message about what the host wrote.
    check_pattern_sizes(schema)?;
    if !budget::needs_gates(schema) {
        return build(schema)
            .map(|v| (v, false))
            .map_err(|e| Error::InvalidSchema(message::schema_error_text(&e)));
    }
    match build(&budget::metered(schema)) {
        Ok(validator) => Ok((validator, true)),
        Err(_) => build(schema)
            .map(|v| (v, false))
            .map_err(|e| Error::InvalidSchema(message::schema_error_text(&e))),
    }
}

/// Refuses a schema with a `pattern` or `patternProperties` name that
/// compiles to more than [`MAX_REGEX_BYTES`]. Each distinct pattern is
/// compiled once per process (the build stops at the limit); other regex
/// errors are left to the validator, which names them.
fn check_pattern_sizes(schema: &Value) -> Result<(), Error> {
    /// Keywords whose values are instance data, not schemas: a `"pattern"`
    /// inside them is a value the validator never compiles.
    const DATA: [&str; 4] = ["default", "const", "enum", "examples"];
    /// Keywords whose values map names to schemas: a key there is a name, so
    /// a property called `default` still holds a schema.
    const NAMED: [&str; 5] = [
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
    ];
    // (value, where, whether it sits where a schema goes). Anything not known
    // to be data is checked, so an unknown keyword can only over-refuse.
    let mut stack = vec![(schema, String::new(), true)];
    while let Some((value, at, is_schema)) = stack.pop() {
        match value {
            Value::Object(map) => {
                if is_schema {
                    if let Some(Value::String(pattern)) = map.get("pattern") {
                        check_pattern_size(pattern, &format!("{at}/pattern"))?;
                    }
                    if let Some(Value::Object(named)) = map.get("patternProperties") {
                        for pattern in named.keys() {
                            let here = format!("{at}/patternProperties/{}", escape(pattern));
                            check_pattern_size(pattern, &here)?;
                        }
                    }
                }
                for (key, child) in map {
                    if is_schema && DATA.contains(&key.as_str()) {
                        continue;
                    }
                    if child.is_object() || child.is_array() {
                        // The children of a name map are schemas; a name map
                        // itself is not one.
                        let child_is_schema = !(is_schema && NAMED.contains(&key.as_str()));
                        stack.push((child, format!("{at}/{}", escape(key)), child_is_schema));
                    }
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    if child.is_object() || child.is_array() {
                        stack.push((child, format!("{at}/{i}"), true));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn check_pattern_size(pattern: &str, at: &str) -> Result<(), Error> {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    /// Patterns known to fit; cleared when it grows past this many.
    const REMEMBERED: usize = 4096;
    static FITS: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let fits = FITS.get_or_init(|| Mutex::new(HashSet::new()));
    if fits.lock().is_ok_and(|f| f.contains(pattern)) {
        return Ok(());
    }
    if message::compiles_too_big(pattern) {
        return Err(Error::InvalidSchema(message::too_big_text(
            &format!("at {at}"),
            pattern,
        )));
    }
    if let Ok(mut f) = fits.lock() {
        if f.len() >= REMEMBERED {
            f.clear();
        }
        f.insert(pattern.to_owned());
    }
    Ok(())
}

fn shape_name(shape: &Shape, site: &shape::DefaultSite) -> Option<String> {
    shape.prop_name(site.node, site.prop)
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn build(schema: &Value) -> Result<Validator, ValidationError<'static>> {
    jsonschema::options()
        .with_retriever(LocalOnly)
        // No size limit here: with one, the validator compiles every pattern
        // at once instead of its fast matcher for plain sequences; the size
        // is checked before (`check_pattern_sizes`).
        .with_pattern_options(PatternOptions::regex())
        .with_keyword(budget::FUEL_KEYWORD, |_, value, _| {
            Ok(Box::new(budget::Fuel::new(value)))
        })
        .build(schema)
}

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
