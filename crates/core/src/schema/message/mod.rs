//! Validation failures as text a model can act on: where (a JSON Pointer),
//! what was received, what was expected. One short line per failure.

mod describe;
mod preview;
#[cfg(test)]
mod schema_tests;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::fmt;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ReferencingError, ValidationError};
use serde_json::Value;

use describe::describe;
use preview::{plural, truncate_chars};
pub(crate) use preview::{preview, received};

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
                crate::schema::budget::VALIDATION_STEPS
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
                crate::schema::MAX_ERRORS
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
            // Too big a pattern never gets here: `check_pattern_sizes` refuses
            // it first, with `too_big_text`.
            format!(
                "{location}: pattern {pattern} is not a valid regular expression for \
                 capstan's linear-time engine (backreferences and look-around are not \
                 supported)"
            )
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
        crate::schema::MAX_REGEX_BYTES / 1024
    )
}

/// Whether `pattern` is refused for its compiled size alone (the build stops
/// at the limit, so this costs no more than the limit).
pub(crate) fn compiles_too_big(pattern: &str) -> bool {
    let build = |unicode: bool| {
        regex::RegexBuilder::new(pattern)
            .unicode(unicode)
            .size_limit(crate::schema::MAX_REGEX_BYTES)
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
