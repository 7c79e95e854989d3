//! Values and names as the model reads them: compact JSON, cut to a few
//! dozen characters, lists cut with a count of the rest.

use std::io;

use serde_json::Value;

use super::{LIST_CHARS, PREVIEW_CHARS};

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
pub(super) fn name(property: &Value) -> String {
    preview(property)
}

pub(super) fn name_list<S: AsRef<str>>(names: &[S]) -> String {
    let quoted: Vec<Value> = names
        .iter()
        .map(|n| Value::String(n.as_ref().to_owned()))
        .collect();
    value_list(&quoted)
}

/// `"a", "b", "c"`, cut to about [`LIST_CHARS`] characters with a count of the rest.
pub(super) fn value_list(values: &[Value]) -> String {
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

pub(super) fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    }
}

pub(super) fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

pub(super) fn props(n: u64) -> &'static str {
    if n == 1 {
        "property"
    } else {
        "properties"
    }
}
