//! Tool output -> the text the model reads: JSON compacted, output capped.

use serde_json::Value;

use crate::error::Error;

/// What kind of content a tool returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentKind {
    /// Passed through as is.
    Text,
    /// Checked and rendered compact, non-ASCII kept; JSON `null` renders as "null".
    Json,
    /// MCP content blocks (see `crate::parts`): a JSON array of them, or
    /// `{"content": [...], "structuredContent": {...}}`. A call completed
    /// with them keeps the parts (`ToolResult::parts`); `render` gives only
    /// their text (`Parts::text`).
    Parts,
}

/// Renders tool content for the model.
pub fn render(kind: ContentKind, content: &str) -> Result<String, Error> {
    match kind {
        ContentKind::Text => Ok(content.to_owned()),
        ContentKind::Json => {
            let bad = |e: serde_json::Error| {
                Error::InvalidContent(format!("content is not valid JSON: {e}"))
            };
            let trimmed = content.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
            if !trimmed.starts_with('"') && is_compact(trimmed) {
                // Already what we would write: check it, keep it.
                serde_json::from_str::<serde::de::IgnoredAny>(trimmed).map_err(bad)?;
                return Ok(trimmed.to_owned());
            }
            let value: Value = serde_json::from_str(content).map_err(bad)?;
            Ok(render_value(&value))
        }
        ContentKind::Parts => Ok(crate::parts::Parts::parse(content, 0)?.text()),
    }
}

/// True if `json` has no whitespace outside strings and no `\u` escape
/// (which serde_json would write back as the character).
fn is_compact(json: &str) -> bool {
    let mut in_string = false;
    let mut escaped = false;
    for b in json.bytes() {
        if in_string {
            if escaped {
                if b == b'u' {
                    return false;
                }
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            return false;
        }
    }
    true
}

/// Renders a JSON value compactly. Strings render as their text, not quoted,
/// because a model reads a bare string better than a JSON literal.
pub fn render_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub use crate::text::cap;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_compacted_and_keeps_non_ascii() {
        let out = render(
            ContentKind::Json,
            "{ \"city\" : \"Zürich\",\n \"t\": [1, 2] }",
        )
        .unwrap();
        assert_eq!(out, r#"{"city":"Zürich","t":[1,2]}"#);
    }

    #[test]
    fn compact_json_passes_unchanged_but_is_still_checked() {
        let s = r#"{"a":[1,2.5,"x y"],"b":{"c":null}}"#;
        assert_eq!(render(ContentKind::Json, s).unwrap(), s);
        assert!(render(ContentKind::Json, r#"{"a":1}}"#).is_err());
        assert!(render(ContentKind::Json, r#"{"a":tru}"#).is_err());
        // An escaped character is written back as itself.
        assert_eq!(
            render(ContentKind::Json, r#"{"a":"\u00fc"}"#).unwrap(),
            r#"{"a":"ü"}"#
        );
    }

    #[test]
    fn whitespace_after_a_string_is_removed() {
        assert_eq!(
            render(ContentKind::Json, r#"{"ab" :1}"#).unwrap(),
            r#"{"ab":1}"#
        );
        assert_eq!(
            render(ContentKind::Json, r#"{"a":"b" }"#).unwrap(),
            r#"{"a":"b"}"#
        );
        assert_eq!(
            render(ContentKind::Json, "[\"x\"\t,\"y\"\r\n]").unwrap(),
            r#"["x","y"]"#
        );
    }

    #[test]
    fn unicode_escape_in_the_middle_of_a_string_is_written_as_the_character() {
        assert_eq!(
            render(ContentKind::Json, r#"{"a":"Z\u00fcrich"}"#).unwrap(),
            r#"{"a":"Zürich"}"#
        );
        assert_eq!(
            render(ContentKind::Json, r#"["ok","a\u00e9b"]"#).unwrap(),
            r#"["ok","aéb"]"#
        );
    }

    #[test]
    fn escaped_quotes_and_backslashes_do_not_end_a_string() {
        // Spaces inside strings are content; 1e5 shows the text was kept as
        // sent (a re-serialized copy would read 100000.0).
        let s = r#"{"q":"say \"hi there\"","p":"C:\\my dir","n":1e5}"#;
        assert_eq!(render(ContentKind::Json, s).unwrap(), s);
        // An escaped backslash before "u" is not a \u escape.
        let s = r#"{"p":"C:\\u00fc x","n":1e5}"#;
        assert_eq!(render(ContentKind::Json, s).unwrap(), s);
    }

    #[test]
    fn whitespace_around_json_content_is_dropped() {
        assert_eq!(
            render(ContentKind::Json, " \t\r\n{\"a\":1e5}\n\r\t ").unwrap(),
            r#"{"a":1e5}"#
        );
    }

    #[test]
    fn json_null_renders_as_null() {
        assert_eq!(render(ContentKind::Json, " null ").unwrap(), "null");
    }

    #[test]
    fn json_string_renders_as_its_text() {
        assert_eq!(render(ContentKind::Json, "\"hi\"").unwrap(), "hi");
    }

    #[test]
    fn invalid_json_content_is_an_error() {
        assert!(matches!(
            render(ContentKind::Json, "{nope"),
            Err(Error::InvalidContent(_))
        ));
    }

    #[test]
    fn text_passes_through() {
        assert_eq!(render(ContentKind::Text, " {x ").unwrap(), " {x ");
    }

    #[test]
    fn cap_counts_characters_not_bytes() {
        let s = "héllo wörld".to_string(); // 11 chars, 13 bytes
        assert_eq!(cap(s.clone(), 11), s);
        assert_eq!(cap(s, 5), "héllo\n[truncated: 6 more characters]");
    }

    #[test]
    fn cap_never_splits_a_character() {
        let out = cap("😀😀😀".into(), 2);
        assert_eq!(out, "😀😀\n[truncated: 1 more characters]");
    }

    #[test]
    fn cap_zero_means_no_cap() {
        let long = "x".repeat(10_000);
        assert_eq!(cap(long.clone(), 0), long);
    }
}
