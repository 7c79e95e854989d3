//! Misspelled keywords. JSON Schema ignores a keyword it does not know, so
//! `"requried": ["city"]` registers, validates nothing and reaches the model
//! as written: the model sees no required property. A key of a schema object
//! that is one or two edits from a keyword capstan knows (and is not itself a
//! known keyword or annotation) is reported as a warning with the keyword it
//! is probably meant to be. Keys far from every keyword are left alone:
//! vendor extensions (`x-...`, OpenAPI's `nullable`) are legitimate.
//!
//! The walk visits schema positions only (the members of `properties` are
//! property names, not keywords), at most [`MAX_SCHEMA_OBJECTS`] of them, and
//! reports at most [`MAX_WARNINGS`].

use serde_json::{Map, Value};

use super::budget::Holds;

/// Schema objects looked at per schema; the rest are not checked.
pub(crate) const MAX_SCHEMA_OBJECTS: usize = 10_000;
/// Warnings reported per schema.
pub(crate) const MAX_WARNINGS: usize = 20;

/// Keywords of drafts 4 to 2020-12 (assertions, applicators, annotations,
/// core and content vocabularies): the spellings a near miss is compared with.
const KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "$recursiveRef",
    "$recursiveAnchor",
    "id",
    "definitions",
    "type",
    "enum",
    "const",
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "required",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "minProperties",
    "maxProperties",
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Keys that are close to a keyword but meant as they are: OpenAPI's and
/// providers' extensions that tool schemas carry.
const ALSO_KNOWN: &[&str] = &[
    "example",
    "nullable",
    "discriminator",
    "externalDocs",
    "xml",
    "propertyOrdering",
    "strict",
    "markdownDescription",
    "enumDescriptions",
    "errorMessage",
];

/// The near misses in `schema`, each naming where (a JSON Pointer of the
/// schema object), the key as written and the keyword it is probably meant
/// to be.
pub(crate) fn near_misses(schema: &Value) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut pending: Vec<(&Value, String)> = vec![(schema, String::new())];
    let mut seen = 0;
    while let Some((node, at)) = pending.pop() {
        let Value::Object(object) = node else {
            continue;
        };
        seen += 1;
        if seen > MAX_SCHEMA_OBJECTS || warnings.len() >= MAX_WARNINGS {
            break;
        }
        check_object(object, &at, &mut warnings);
        // Children pushed in reverse so that warnings come in document order.
        let mut children = Vec::new();
        for (key, value) in object {
            // Known keywords only: `holds` reads any other object as a
            // schema (for `$ref` targets), where its keys may be names.
            if !KEYWORDS.contains(&key.as_str()) {
                continue;
            }
            let here = format!("{at}/{}", escape(key));
            match super::budget::holds(key, value) {
                Holds::One => children.push((value, here)),
                Holds::List => {
                    for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                        children.push((sub, format!("{here}/{i}")));
                    }
                }
                Holds::Named => {
                    for (name, sub) in value.as_object().into_iter().flatten() {
                        children.push((sub, format!("{here}/{}", escape(name))));
                    }
                }
                Holds::Nothing => {}
            }
        }
        pending.extend(children.into_iter().rev());
    }
    warnings.truncate(MAX_WARNINGS);
    warnings
}

fn check_object(object: &Map<String, Value>, at: &str, warnings: &mut Vec<String>) {
    for key in object.keys() {
        if KEYWORDS.contains(&key.as_str())
            || ALSO_KNOWN.contains(&key.as_str())
            || key.starts_with("x-")
        {
            continue;
        }
        let Some(meant) = closest(key) else {
            continue;
        };
        // The misspelling and the keyword both present: the key is something
        // else (a vendor's), not a slip.
        if object.contains_key(meant) {
            continue;
        }
        let place = if at.is_empty() { "the root" } else { at };
        warnings.push(format!(
            "unknown keyword {key:?} at {place}: did you mean {meant:?}? JSON Schema ignores unknown keywords, so it checks nothing and the model reads it as written"
        ));
        if warnings.len() >= MAX_WARNINGS {
            return;
        }
    }
}

/// The keyword `key` is one or two edits from (one for keywords of up to 5
/// characters, where two edits reach too many words), if any; case is ignored
/// when comparing, so `maxlength` finds `maxLength`.
fn closest(key: &str) -> Option<&'static str> {
    if key.len() > 64 || key.len() < 3 {
        return None;
    }
    let lower = key.to_ascii_lowercase();
    KEYWORDS
        .iter()
        .map(|k| (*k, strsim::osa_distance(&lower, &k.to_ascii_lowercase())))
        .filter(|(k, d)| *d <= if k.len() <= 5 { 1 } else { 2 })
        .min_by_key(|(_, d)| *d)
        .map(|(k, _)| k)
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn misspelled_keywords_are_named_with_the_keyword_meant() {
        let w = near_misses(&json!({
            "type": "object",
            "propertes": {"city": {"type": "string"}},
            "requried": ["city"],
        }));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].contains("\"propertes\" at the root: did you mean \"properties\""),
            "{w:?}"
        );
        assert!(
            w[1].contains("\"requried\" at the root: did you mean \"required\""),
            "{w:?}"
        );
    }

    #[test]
    fn nested_schemas_are_checked_and_property_names_are_not_keywords() {
        let w = near_misses(&json!({
            "type": "object",
            "properties": {
                "requried": {"type": "boolean"},
                "tpye": {"tpye": "string"},
                "list": {"type": "array", "itmes": {"type": "string"}},
                "choice": {"anyOf": [{"type": "string", "maxlength": 3}]},
            },
        }));
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            w.iter()
                .any(|m| m.contains("\"tpye\" at /properties/tpye: did you mean \"type\"")),
            "{w:?}"
        );
        assert!(
            w.iter()
                .any(|m| m.contains("\"itmes\" at /properties/list: did you mean \"items\"")),
            "{w:?}"
        );
        assert!(
            w.iter().any(|m| m.contains(
                "\"maxlength\" at /properties/choice/anyOf/0: did you mean \"maxLength\""
            )),
            "{w:?}"
        );
    }

    #[test]
    fn extensions_and_far_keys_are_not_reported() {
        let w = near_misses(&json!({
            "type": "object",
            "x-requried": true,
            "nullable": true,
            "example": {"a": 1},
            "propertyOrdering": ["a"],
            "my_vendor_key": 1,
            "properties": {"a": {"type": "string", "format": "date"}},
        }));
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn the_walk_and_the_warnings_are_bounded() {
        let mut props = Map::new();
        for i in 0..(MAX_SCHEMA_OBJECTS * 2) {
            props.insert(format!("p{i}"), json!({"tpye": "string"}));
        }
        let w = near_misses(&json!({"type": "object", "properties": props}));
        assert_eq!(w.len(), MAX_WARNINGS);
    }
}
