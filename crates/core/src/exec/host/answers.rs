//! The host's answers to a host batch's calls, as one JSON array, checked
//! as a whole before any call is completed:
//! `[{"index": 0, "text": "..."}, {"index": 1, "json": {...}},
//!   {"index": 2, "parts": [...]}, {"index": 3, "error": "..."}]`:
//! one entry per handed-out call, any order, each with exactly one of
//! `text` (plain text), `json` (any JSON value, rendered compact), `parts`
//! (MCP content blocks) and `error` (a tool error the model reads).

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::HostCall;
use crate::error::Error;
use crate::exec::cell::Call;
use crate::render::ContentKind;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry<'a> {
    index: usize,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    json: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    parts: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<Cow<'a, str>>,
}

/// A field that is there, `null` included (JSON `null` is content too).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// One call's answer.
pub enum Answer<'a> {
    Text(Cow<'a, str>),
    Json(&'a RawValue),
    Parts(&'a RawValue),
    Error(Cow<'a, str>),
}

impl Answer<'_> {
    /// Completes `call` with it: rendered and capped like a callback's
    /// completion. Err when the call already ended (or the content is not
    /// what it says: the call then ends as a tool error saying so).
    pub(crate) fn complete(self, call: &Call) -> Result<(), Error> {
        match self {
            Answer::Text(t) => call.complete(ContentKind::Text, &t),
            Answer::Json(j) => call.complete(ContentKind::Json, j.get()),
            Answer::Parts(p) => call.complete(ContentKind::Parts, p.get()),
            Answer::Error(e) => call.fail(e.into_owned()),
        }
    }
}

const SHAPE: &str =
    "a JSON array of {\"index\": N, and one of \"text\", \"json\", \"parts\", \"error\"}";

fn bad(message: String) -> Error {
    Error::InvalidResults(message)
}

/// The answers, each with its call's position in `handed`; exactly one per
/// handed-out call, or `InvalidResults` naming the first problem.
pub(crate) fn parse<'a>(
    text: &'a str,
    handed: &[HostCall],
) -> Result<Vec<(usize, Answer<'a>)>, Error> {
    let entries: Vec<Entry<'a>> =
        serde_json::from_str(text).map_err(|e| bad(format!("the answers are not {SHAPE}: {e}")))?;
    let mut seen = vec![false; handed.len()];
    let mut out = Vec::with_capacity(entries.len());
    for (k, e) in entries.into_iter().enumerate() {
        let index = e.index;
        let answer = match (e.text, e.json, e.parts, e.error) {
            (Some(t), None, None, None) => Answer::Text(t),
            (None, Some(j), None, None) => Answer::Json(j),
            (None, None, Some(p), None) => Answer::Parts(p),
            (None, None, None, Some(m)) => Answer::Error(m),
            _ => {
                return Err(bad(format!(
                    "answers[{k}] (index {index}) must have exactly one of \"text\", \"json\", \
                     \"parts\", \"error\""
                )))
            }
        };
        let Ok(pos) = handed.binary_search_by_key(&index, |c| c.index) else {
            return Err(bad(format!(
                "answers[{k}]: index {index} is not a call this batch handed out to the host \
                 ({})",
                handed_list(handed)
            )));
        };
        if std::mem::replace(&mut seen[pos], true) {
            return Err(bad(format!(
                "answers[{k}]: a second answer for index {index}; give one per call"
            )));
        }
        out.push((pos, answer));
    }
    if let Some(pos) = seen.iter().position(|s| !s) {
        let c = &handed[pos].call;
        return Err(bad(format!(
            "no answer for index {} (id \"{}\", tool \"{}\"): give one per handed-out call ({})",
            handed[pos].index,
            c.id(),
            c.tool(),
            handed_list(handed)
        )));
    }
    Ok(out)
}

/// "it handed out 3: indexes 0, 2, 5", the first 10 at most.
fn handed_list(handed: &[HostCall]) -> String {
    if handed.is_empty() {
        return "it handed out none".into();
    }
    let shown: Vec<String> = handed
        .iter()
        .take(10)
        .map(|c| c.index.to_string())
        .collect();
    let more = if handed.len() > 10 { ", ..." } else { "" };
    format!(
        "it handed out {}: indexes {}{more}",
        handed.len(),
        shown.join(", ")
    )
}
