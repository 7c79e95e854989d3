//! The line for one validator error: received value and expectation, with
//! anyOf/oneOf reduced to what would have been accepted or the closest miss.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::ValidationError;
use serde_json::Value;

use super::preview::{
    name, name_list, plural, preview, props, received, truncate_chars, value_list,
};
use super::{referencing_text, Subject, FALLBACK_CHARS, PREVIEW_CHARS};

pub(super) fn describe(error: &ValidationError<'_>, subject: Subject<'_>) -> String {
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
        crate::schema::budget::source_location(schema, error.schema_path().as_str())
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
