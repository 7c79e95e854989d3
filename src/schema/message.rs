//! Validation failures as text a model can act on: where (a JSON Pointer),
//! what was received, what was expected. One short line per failure.

use std::collections::HashSet;
use std::fmt;
use std::io;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ReferencingError, ValidationError};
use serde_json::Value;

/// Received values longer than this (in characters) are cut, with "…".
const PREVIEW_CHARS: usize = 60;
/// Lists of options or names longer than this (in characters) are cut.
const LIST_CHARS: usize = 200;
const GENERIC: &str = "arguments do not match the parameters schema";
/// Lines `Display` shows; the rest are counted.
const SHOWN_ERRORS: usize = 20;
/// Messages taken from the validator as they are are cut to this.
const FALLBACK_CHARS: usize = 200;

/// One reason the arguments were rejected.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgumentError {
    /// JSON Pointer to the offending argument; `""` for the arguments object itself.
    pub pointer: String,
    /// What is wrong, without the pointer: received value and expectation.
    pub message: String,
}

/// Every reason the arguments were rejected, in the validator's order. Never empty
/// when returned by [`crate::schema::Schema::validate`].
#[derive(Debug, Clone, PartialEq)]
pub struct ArgumentErrors(pub Vec<ArgumentError>);

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.pointer, self.message)
        }
    }
}

/// The text the model reads:
///
/// ```text
/// Invalid arguments:
/// - /units: "kelvin" is not one of "celsius", "fahrenheit"
/// - missing required property "city"
/// ```
impl fmt::Display for ArgumentErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Invalid arguments:")?;
        for error in self.0.iter().take(SHOWN_ERRORS) {
            write!(f, "\n- {error}")?;
        }
        if self.0.len() > SHOWN_ERRORS {
            let more = self.0.len() - SHOWN_ERRORS;
            write!(f, "\n- … and {more} more error{}", plural(more as u64))?;
        }
        Ok(())
    }
}

impl std::error::Error for ArgumentErrors {}

impl ArgumentErrors {
    /// Converts the validator's errors, dropping exact duplicates.
    /// `metered`: the errors come from the metered copy of `schema` (their
    /// keyword locations hold the gates).
    pub(crate) fn collect<'a>(
        errors: impl Iterator<Item = ValidationError<'a>>,
        schema: &Value,
        metered: bool,
    ) -> ArgumentErrors {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for error in errors {
            let converted = argument_error(&error, Subject::Arguments(schema, metered));
            if seen.insert((converted.pointer.clone(), converted.message.clone())) {
                out.push(converted);
            }
        }
        if out.is_empty() {
            out.push(ArgumentError {
                pointer: String::new(),
                message: GENERIC.to_owned(),
            });
        }
        ArgumentErrors(out)
    }

    /// Only the catch-all line: no error was pinned down.
    pub(crate) fn is_generic(&self) -> bool {
        matches!(self.0.as_slice(), [only] if only.pointer.is_empty() && only.message == GENERIC)
    }

    /// Checking the arguments would take more than the validation budget.
    pub(crate) fn too_complex() -> ArgumentErrors {
        ArgumentErrors(vec![ArgumentError {
            pointer: String::new(),
            message: format!(
                "arguments are too complex to check against this schema within capstan's \
                 validation budget ({} steps); send simpler (shallower or smaller) arguments",
                super::budget::VALIDATION_STEPS
            ),
        }])
    }

    /// Says, last, that the walk stopped before it saw everything.
    pub(crate) fn stopped_early(&mut self) {
        self.0.push(ArgumentError {
            pointer: String::new(),
            message: format!(
                "validation stopped early (more than {} errors or its budget spent): \
                 fix these and there may be more",
                super::MAX_ERRORS
            ),
        });
    }

    /// The arguments of an object-rooted schema were not an object.
    pub(crate) fn not_an_object(args: &Value) -> ArgumentErrors {
        ArgumentErrors(vec![ArgumentError {
            pointer: String::new(),
            message: format!("arguments: expected object, got {}", received(args)),
        }])
    }
}

/// Whether the text is about a call's arguments or about a schema being compiled
/// (then the "instance" is the schema and the root is not "the arguments").
#[derive(Clone, Copy)]
enum Subject<'s> {
    /// Carries the schema, to name the known properties of an object, and
    /// whether error locations are in its metered copy.
    Arguments(&'s Value, bool),
    Schema,
}

fn argument_error(error: &ValidationError<'_>, subject: Subject<'_>) -> ArgumentError {
    let pointer = error.instance_path().as_str().to_owned();
    let mut message = describe(error, subject);
    let self_describing = matches!(
        error.kind(),
        ValidationErrorKind::Required { .. }
            | ValidationErrorKind::AdditionalProperties { .. }
            | ValidationErrorKind::UnevaluatedProperties { .. }
            | ValidationErrorKind::MinProperties { .. }
            | ValidationErrorKind::MaxProperties { .. }
            | ValidationErrorKind::PropertyNames { .. }
    );
    if pointer.is_empty() && !self_describing {
        message.insert_str(0, "arguments: ");
    }
    ArgumentError { pointer, message }
}

/// Text for an error raised while compiling a schema: where in the schema, and what.
pub(crate) fn schema_error_text(error: &ValidationError<'_>) -> String {
    let location = error.instance_path().as_str();
    let location = if location.is_empty() {
        "schema root".to_owned()
    } else {
        format!("at {location}")
    };
    match error.kind() {
        ValidationErrorKind::Referencing(reference) => referencing_text(reference),
        ValidationErrorKind::Format { format } if format == "regex" => {
            let pattern = match error.instance().as_ref() {
                Value::String(s) => truncate_chars(s, PREVIEW_CHARS),
                other => preview(other),
            };
            let too_big = match error.instance().as_ref() {
                Value::String(s) => compiles_too_big(s),
                _ => false,
            };
            if too_big {
                too_big_text(&location, &pattern)
            } else {
                format!(
                    "{location}: pattern {pattern} is not a valid regular expression for \
                     capstan's linear-time engine (backreferences and look-around are not \
                     supported)"
                )
            }
        }
        _ => format!("{location}: {}", describe(error, Subject::Schema)),
    }
}

/// "<location>: pattern <pattern> compiles to more than N KiB, ...".
pub(crate) fn too_big_text(location: &str, pattern: &str) -> String {
    format!(
        "{location}: pattern {} compiles to more than {} KiB, capstan's limit for a regular \
         expression (counted repetition such as {{500}} multiplies the size); use a smaller \
         count or a simpler pattern",
        truncate_chars(pattern, PREVIEW_CHARS),
        super::MAX_REGEX_BYTES / 1024
    )
}

/// Whether `pattern` is refused for its compiled size alone (the build stops
/// at the limit, so this costs no more than the limit).
pub(crate) fn compiles_too_big(pattern: &str) -> bool {
    let build = |unicode: bool| {
        regex::RegexBuilder::new(pattern)
            .unicode(unicode)
            .size_limit(super::MAX_REGEX_BYTES)
            .build()
    };
    // As JSON Schema (ECMA-262) reads it: \w and \d are ASCII. A pattern that
    // needs Unicode mode (\p{L}, non-ASCII text) is measured in it.
    match build(false) {
        Err(regex::Error::CompiledTooBig(_)) => true,
        Ok(_) => false,
        Err(_) => matches!(build(true), Err(regex::Error::CompiledTooBig(_))),
    }
}

fn referencing_text(error: &ReferencingError) -> String {
    match error {
        ReferencingError::Unretrievable { uri, .. } => format!(
            "$ref \"{uri}\" is not local: capstan resolves $ref only inside the schema itself \
             and never fetches remote (http/https) or file references; copy the referenced \
             schema under \"$defs\" (draft-07 and older: \"definitions\") and refer to it \
             with \"#/...\""
        ),
        ReferencingError::UnknownSpecification { specification } => format!(
            "\"$schema\" \"{specification}\" is not a supported draft: capstan knows draft-04, \
             draft-06, draft-07, 2019-09 and 2020-12, and never fetches remote meta-schemas"
        ),
        ReferencingError::PointerToNowhere { pointer } => {
            format!("$ref target \"#{pointer}\" does not exist in the schema")
        }
        ReferencingError::NoSuchAnchor { anchor } => {
            format!("$ref anchor \"{anchor}\" does not exist in the schema")
        }
        other => truncate_chars(&format!("cannot resolve $ref: {other}"), FALLBACK_CHARS),
    }
}

fn describe(error: &ValidationError<'_>, subject: Subject<'_>) -> String {
    use ValidationErrorKind as K;
    let value = error.instance().as_ref();
    // One word at every level: the keys of the arguments object are
    // properties too, as the schema calls them.
    let (noun, nouns) = ("property", "properties");
    match error.kind() {
        K::Type { kind } => format!(
            "expected {}, got {}",
            join_or(&type_names(kind)),
            received(value)
        ),
        K::Enum { options } => format!(
            "{} is not one of {}",
            preview(value),
            value_list(options.as_array().map_or(&[][..], Vec::as_slice))
        ),
        K::Constant { expected_value } => format!(
            "expected {}, got {}",
            preview(expected_value),
            preview(value)
        ),
        K::Required { property } => format!("missing required {noun} {}", name(property)),
        K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => {
            let mut text = format!(
                "unexpected {} {}",
                if unexpected.len() == 1 { noun } else { nouns },
                name_list(unexpected)
            );
            if let Subject::Arguments(schema, metered) = subject {
                if let Some(known) = known_names(error, schema, metered) {
                    text.push_str(&format!(" (known {nouns}: {known})"));
                }
            }
            text
        }
        K::MinLength { limit } => {
            format!("string is shorter than {limit} character{}", plural(*limit))
        }
        K::MaxLength { limit } => {
            format!("string is longer than {limit} character{}", plural(*limit))
        }
        K::Minimum { limit } => format!("{} is less than the minimum of {limit}", preview(value)),
        K::Maximum { limit } => {
            format!("{} is greater than the maximum of {limit}", preview(value))
        }
        K::ExclusiveMinimum { limit } => {
            format!("{} must be greater than {limit}", preview(value))
        }
        K::ExclusiveMaximum { limit } => format!("{} must be less than {limit}", preview(value)),
        K::MultipleOf { multiple_of } => {
            format!("{} is not a multiple of {multiple_of}", preview(value))
        }
        K::MinItems { limit } => format!("array has fewer than {limit} item{}", plural(*limit)),
        K::MaxItems { limit } => format!("array has more than {limit} item{}", plural(*limit)),
        K::AdditionalItems { limit } => {
            format!("array has more than {limit} item{}", plural(*limit as u64))
        }
        K::MinProperties { limit } => format!("object has fewer than {limit} {}", props(*limit)),
        K::MaxProperties { limit } => format!("object has more than {limit} {}", props(*limit)),
        K::Pattern { pattern } => format!(
            "{} does not match the pattern {}",
            preview(value),
            truncate_chars(pattern, PREVIEW_CHARS)
        ),
        K::Format { format } => format!("{} is not a valid {format}", preview(value)),
        K::UniqueItems => unique_items_text(value),
        K::Contains => "array has no item that matches the \"contains\" schema".to_owned(),
        K::AnyOf { context } => alternatives(error, context, "anyOf", subject),
        K::OneOfNotValid { context } => alternatives(error, context, "oneOf", subject),
        K::OneOfMultipleValid { .. } => format!(
            "{} matches more than one alternative (oneOf); it must match exactly one",
            preview(value)
        ),
        K::Not { .. } => format!(
            "{} is not allowed here (it matches the \"not\" schema)",
            preview(value)
        ),
        K::FalseSchema => format!("no value is allowed here, got {}", received(value)),
        K::UnevaluatedItems { unexpected } => {
            format!(
                "array has items the schema does not allow: {}",
                name_list(unexpected)
            )
        }
        K::PropertyNames { error: inner } => {
            format!("invalid {noun} name: {}", describe(inner, Subject::Schema))
        }
        K::ContentEncoding { content_encoding } => {
            format!("{} is not valid {content_encoding}", preview(value))
        }
        K::ContentMediaType { content_media_type } => {
            format!("{} is not valid {content_media_type}", preview(value))
        }
        K::Referencing(reference) => referencing_text(reference),
        K::BacktrackLimitExceeded { .. }
        | K::RegexEngineFailure { .. }
        | K::FromUtf8 { .. }
        | K::Custom { .. } => truncate_chars(&error.to_string(), FALLBACK_CHARS),
    }
}

/// anyOf/oneOf with no match. When every alternative failed only on its type (or
/// only on a const/enum) at this very spot, say what would have been accepted;
/// otherwise name the alternative that came closest.
fn alternatives(
    error: &ValidationError<'_>,
    context: &[Vec<ValidationError<'static>>],
    keyword: &str,
    subject: Subject<'_>,
) -> String {
    let here = error.instance_path().as_str();
    let value = error.instance().as_ref();
    let mut types: Vec<&'static str> = Vec::new();
    let mut values: Vec<Value> = Vec::new();
    let (mut only_types, mut only_values) = (!context.is_empty(), !context.is_empty());
    for branch in context {
        let [single] = branch.as_slice() else {
            (only_types, only_values) = (false, false);
            break;
        };
        if single.instance_path().as_str() != here {
            (only_types, only_values) = (false, false);
            break;
        }
        match single.kind() {
            ValidationErrorKind::Type { kind } => {
                only_values = false;
                for t in type_names(kind) {
                    if !types.contains(&t) {
                        types.push(t);
                    }
                }
            }
            ValidationErrorKind::Constant { expected_value } => {
                only_types = false;
                values.push(expected_value.as_ref().clone());
            }
            ValidationErrorKind::Enum { options } => {
                only_types = false;
                values.extend(options.as_array().into_iter().flatten().cloned());
            }
            _ => {
                (only_types, only_values) = (false, false);
                break;
            }
        }
    }
    if only_types {
        types.sort_by_key(|n| *n == "null");
        return format!("expected {}, got {}", join_or(&types), received(value));
    }
    if only_values {
        return format!("{} is not one of {}", preview(value), value_list(&values));
    }
    let mut text = format!(
        "{} does not match any of the {} alternatives ({keyword})",
        preview(value),
        context.len()
    );
    if let Some(inner) = closest(context, here) {
        let at = inner.instance_path().as_str();
        let reason = describe(inner, subject);
        let closest = if at == here || at.is_empty() {
            reason
        } else {
            format!("{at}: {reason}")
        };
        text.push_str("; closest: ");
        text.push_str(&truncate_chars(&closest, FALLBACK_CHARS));
    }
    text
}

/// The error of the alternative that came closest, followed down through
/// nested alternatives to a plain error. Closest: the one whose errors reach
/// deepest into the arguments (it matched the most on the way), then one that
/// at least has the right type here (`here`: where the alternatives apply),
/// then the one with fewer errors, then the earliest.
fn closest<'e>(
    context: &'e [Vec<ValidationError<'static>>],
    here: &str,
) -> Option<&'e ValidationError<'static>> {
    let right_type = |branch: &[ValidationError<'_>]| {
        !branch.iter().all(|e| {
            matches!(e.kind(), ValidationErrorKind::Type { .. })
                && e.instance_path().as_str() == here
        })
    };
    let branch = context
        .iter()
        .filter(|branch| !branch.is_empty())
        .enumerate()
        .max_by_key(|(i, branch)| {
            (
                reach(branch),
                right_type(branch),
                std::cmp::Reverse(branch.len()),
                std::cmp::Reverse(*i),
            )
        })
        .map(|(_, branch)| branch)?;
    // The first of the errors that reach deepest.
    let first = branch
        .iter()
        .enumerate()
        .max_by_key(|(i, e)| (reach(std::slice::from_ref(*e)), std::cmp::Reverse(*i)))
        .map(|(_, e)| e)?;
    match first.kind() {
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            closest(context, first.instance_path().as_str()).or(Some(first))
        }
        _ => Some(first),
    }
}

/// How deep into the arguments `errors` (and the alternatives inside them) point.
fn reach(errors: &[ValidationError<'_>]) -> usize {
    errors
        .iter()
        .map(|e| {
            let own = e.instance_path().as_str().matches('/').count();
            let inner = match e.kind() {
                ValidationErrorKind::AnyOf { context }
                | ValidationErrorKind::OneOfNotValid { context } => {
                    context.iter().map(|b| reach(b)).max().unwrap_or(0)
                }
                _ => 0,
            };
            own.max(inner)
        })
        .max()
        .unwrap_or(0)
}

/// The `properties` names of the object schema whose `additionalProperties` (or
/// `unevaluatedProperties`) rejected a name, when they are the whole story.
fn known_names(error: &ValidationError<'_>, schema: &Value, metered: bool) -> Option<String> {
    let keyword_path = if metered {
        super::budget::source_location(schema, error.schema_path().as_str())
    } else {
        error.schema_path().as_str().to_owned()
    };
    let (parent, keyword) = keyword_path.rsplit_once('/')?;
    let object = schema.pointer(parent)?.as_object()?;
    // The schema path is canonical within the document; check it leads where we think.
    object.get(keyword)?;
    if object.contains_key("patternProperties") {
        return None;
    }
    let names = object.get("properties")?.as_object()?;
    if names.is_empty() {
        return (keyword == "additionalProperties").then(|| "none".to_owned());
    }
    let names: Vec<&String> = names.keys().collect();
    Some(name_list(&names))
}

fn unique_items_text(value: &Value) -> String {
    const SEARCHED: usize = 256;
    if let Value::Array(items) = value {
        let items = &items[..items.len().min(SEARCHED)];
        for (i, a) in items.iter().enumerate() {
            if let Some(j) = items[i + 1..].iter().position(|b| a == b) {
                return format!(
                    "array items must be unique (items {i} and {} are equal)",
                    i + 1 + j
                );
            }
        }
    }
    "array items must be unique".to_owned()
}

fn type_names(kind: &TypeKind) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = match kind {
        TypeKind::Single(t) => vec![t.as_str()],
        TypeKind::Multiple(set) => set.iter().map(|t| t.as_str()).collect(),
    };
    // "integer or null" reads better than the validator's "null or integer".
    names.sort_by_key(|n| *n == "null");
    names
}

fn join_or(words: &[&str]) -> String {
    match words {
        [] => "nothing".to_owned(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// `string "3"`, `number 2.5`, `null`, `object {"a":1}`: the kind and the value.
pub(crate) fn received(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".to_owned(),
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    format!("{kind} {}", preview(value))
}

/// Compact JSON of `value`, cut to [`PREVIEW_CHARS`] characters with "…".
pub(crate) fn preview(value: &Value) -> String {
    match value {
        Value::String(s) if s.chars().count() > PREVIEW_CHARS => {
            let cut: String = s.chars().take(PREVIEW_CHARS).collect();
            let quoted = Value::String(cut).to_string();
            // Keep the closing quote after the ellipsis: "abc…"
            format!("{}…\"", &quoted[..quoted.len() - 1])
        }
        Value::String(_) | Value::Null | Value::Bool(_) | Value::Number(_) => value.to_string(),
        Value::Array(_) | Value::Object(_) => {
            // Serialize at most a little more than we show: a huge value costs nothing.
            let mut out = Bounded {
                buf: Vec::new(),
                cap: PREVIEW_CHARS * 4 + 4,
            };
            let complete = serde_json::to_writer(&mut out, value).is_ok();
            let text = String::from_utf8_lossy(&out.buf);
            if complete && text.chars().count() <= PREVIEW_CHARS {
                text.into_owned()
            } else {
                let cut: String = text.chars().take(PREVIEW_CHARS).collect();
                format!("{cut}…")
            }
        }
    }
}

/// A writer that refuses to grow past `cap` bytes, which stops serialization.
struct Bounded {
    buf: Vec<u8>,
    cap: usize,
}

impl io::Write for Bounded {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let room = self.cap.saturating_sub(self.buf.len());
        if room == 0 {
            return Err(io::Error::new(io::ErrorKind::WriteZero, "preview is full"));
        }
        let taken = data.len().min(room);
        self.buf.extend_from_slice(&data[..taken]);
        Ok(taken)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A property name as the model wrote it: a JSON string.
fn name(property: &Value) -> String {
    preview(property)
}

fn name_list<S: AsRef<str>>(names: &[S]) -> String {
    let quoted: Vec<Value> = names
        .iter()
        .map(|n| Value::String(n.as_ref().to_owned()))
        .collect();
    value_list(&quoted)
}

/// `"a", "b", "c"`, cut to about [`LIST_CHARS`] characters with a count of the rest.
fn value_list(values: &[Value]) -> String {
    let mut out = String::new();
    for (i, value) in values.iter().enumerate() {
        let item = preview(value);
        if i > 0 && out.chars().count() + item.chars().count() > LIST_CHARS {
            out.push_str(&format!(", … ({} more)", values.len() - i));
            break;
        }
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&item);
    }
    if out.is_empty() {
        out.push_str("(no values)");
    }
    out
}

fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn props(n: u64) -> &'static str {
    if n == 1 {
        "property"
    } else {
        "properties"
    }
}
