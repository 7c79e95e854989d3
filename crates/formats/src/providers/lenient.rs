//! Reading a response body in which one call's arguments cannot be a
//! `serde_json::Value`: a number past f64's range (`1e400`) or nesting past
//! serde_json's depth limit. serde_json refuses the whole body for either,
//! which would cost every other call of the response its result. Here such
//! a value is set aside: the body is read with a marker string in its place,
//! and the call whose arguments held it gets those arguments back as text,
//! which fails as that call's own `invalid_arguments` when it runs (the
//! same path as OpenAI's malformed argument strings).
//!
//! Bodies that serde_json reads are never touched: this runs only after a
//! parse failed, and only where the failure was one of those two.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::ops::Range;

use serde_json::Value;

use capstan_core::call::{Arguments, CallRequest};
use capstan_core::error::Error;

/// serde_json refuses a container opened at this nesting level (it counts
/// down from 128 and fails on reaching 0).
const SERDE_DEPTH: usize = 128;

/// A body and the values set aside in it.
pub(super) struct Body {
    pub(super) value: Value,
    /// Marker prefix (`\0capstan:<nonce>:`) and, by index, the raw text each
    /// marker stands for.
    prefix: String,
    raw: Vec<String>,
}

/// Parses `text`, setting aside what serde_json cannot hold (see the module).
/// Fails with serde_json's own error when the body is not JSON for any other
/// reason.
pub(super) fn parse(text: &str) -> Result<Body, serde_json::Error> {
    let error = match serde_json::from_str(text) {
        Ok(value) => {
            return Ok(Body {
                value,
                prefix: String::new(),
                raw: Vec::new(),
            })
        }
        Err(e) => e,
    };
    if !error.is_syntax() {
        return Err(error);
    }
    let spans = unreadable_spans(text);
    if spans.is_empty() {
        return Err(error);
    }
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_usize(text.len());
    let prefix = format!("\u{0}capstan:{:016x}:", hasher.finish());
    let mut patched = String::with_capacity(text.len());
    let mut raw = Vec::with_capacity(spans.len());
    let mut last = 0;
    for (i, span) in spans.into_iter().enumerate() {
        patched.push_str(&text[last..span.start]);
        patched.push_str(&Value::String(format!("{prefix}{i}")).to_string());
        raw.push(text[span.clone()].to_owned());
        last = span.end;
    }
    patched.push_str(&text[last..]);
    match serde_json::from_str(&patched) {
        Ok(value) => Ok(Body { value, prefix, raw }),
        Err(_) => Err(error),
    }
}

impl Body {
    /// Gives `call` (the `index`th of the body) back the text of values set
    /// aside in its arguments. A set-aside value where the id or the name
    /// should be is the response's own fault: `InvalidResponse`.
    pub(super) fn restore(&self, call: &mut CallRequest, index: usize) -> Result<(), Error> {
        if self.raw.is_empty() {
            return Ok(());
        }
        for (what, field) in [("id", &call.id), ("name", &call.name)] {
            if let Some(raw) = self.raw_of(field) {
                return Err(Error::InvalidResponse(format!(
                    "call {index}: the {what} is not a string but {}",
                    preview(raw)
                )));
            }
        }
        let text = match &call.arguments {
            Arguments::Text(s) => match self.raw_of(s) {
                Some(raw) => raw.to_owned(),
                None => return Ok(()),
            },
            Arguments::Value(v) => {
                if !self.holds_marker(v) {
                    return Ok(());
                }
                let mut text = v.to_string();
                for (i, raw) in self.raw.iter().enumerate() {
                    let marker = Value::String(format!("{}{i}", self.prefix)).to_string();
                    text = text.replace(&marker, raw);
                }
                text
            }
        };
        call.arguments = Arguments::Text(text);
        Ok(())
    }

    fn raw_of(&self, s: &str) -> Option<&str> {
        let i: usize = s.strip_prefix(self.prefix.as_str())?.parse().ok()?;
        self.raw.get(i).map(String::as_str)
    }

    fn holds_marker(&self, v: &Value) -> bool {
        // Iterative: set-aside values are exactly the deep ones.
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            match v {
                Value::String(s) if s.starts_with(self.prefix.as_str()) => return true,
                Value::Array(items) => stack.extend(items),
                Value::Object(map) => stack.extend(map.values()),
                _ => {}
            }
        }
        false
    }
}

fn preview(raw: &str) -> String {
    if raw.len() <= 40 {
        return raw.to_owned();
    }
    let mut end = 40;
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &raw[..end], raw.len())
}

/// Byte ranges of the values serde_json cannot hold: numbers whose value is
/// past f64's range, and containers opened at serde_json's depth limit (the
/// whole container). One linear pass, no recursion.
fn unreadable_spans(text: &str) -> Vec<Range<usize>> {
    let b = text.as_bytes();
    let mut spans = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => i = after_string(b, i),
            b'[' | b'{' if depth + 1 >= SERDE_DEPTH => {
                let end = after_container(b, i);
                spans.push(i..end);
                i = end;
            }
            b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                if text[start..i].parse::<f64>().is_ok_and(|f| f.is_infinite()) {
                    spans.push(start..i);
                }
            }
            _ => i += 1,
        }
    }
    spans
}

/// The index after the string that opens at `start` (or the end).
fn after_string(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The index after the container that opens at `start` (or the end).
fn after_container(b: &[u8], start: usize) -> usize {
    let mut level = 0usize;
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i = after_string(b, i);
                continue;
            }
            b'[' | b'{' => level += 1,
            b']' | b'}' => {
                level -= 1;
                if level == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}
