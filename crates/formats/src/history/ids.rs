//! Call ids the next request will accept: unique within a conversation and
//! legal for the provider.
//!
//! Rules (checked against the published definitions, see docs/providers-and-turns.md):
//! - OpenAI Responses: `call_id` of a `function_call_output` is 1 to 64
//!   characters.
//! - Anthropic: `tool_use.id` and `tool_result.tool_use_id` match
//!   `^[a-zA-Z0-9_-]+$`.
//! - OpenAI Chat: `tool_call_id` is a non-empty string (no other limit is
//!   published).
//! - Gemini: `functionCall.id` is optional; calls without one are matched to
//!   their responses by name and position, never given an id on the wire.
//!
//! One rule makes an id legal and unique, used both by `run_turn` (ids inside
//! one response) and by the history repair, so that a result written under a
//! new id by one finds its call renamed the same way by the other.

use std::collections::{HashMap, HashSet};

use crate::providers::Format;

/// Longest id that every format takes (OpenAI Responses' limit).
const MAX_ID_LEN: usize = 64;

/// Why `id` would be refused in format `fmt`, or `None` when it is legal.
pub fn problem(fmt: Format, id: &str) -> Option<&'static str> {
    match fmt {
        Format::Gemini | Format::Describe | Format::Mcp => None,
        Format::OpenAiChat if id.is_empty() => Some("is empty"),
        Format::OpenAiChat => None,
        Format::OpenAiResponses if id.is_empty() => Some("is empty"),
        Format::OpenAiResponses if id.chars().count() > MAX_ID_LEN => {
            Some("is longer than 64 characters")
        }
        Format::OpenAiResponses => None,
        Format::Anthropic if id.is_empty() => Some("is empty"),
        Format::Anthropic if !id.bytes().all(anthropic_byte) => {
            Some("has characters outside [a-zA-Z0-9_-]")
        }
        Format::Anthropic => None,
    }
}

fn anthropic_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// `id` made legal for every provider format: characters outside
/// `[a-zA-Z0-9_-]` become `_`, an empty id becomes `call_{index}`, an id past
/// 64 characters keeps its first 47 and ends in `_` and a 16-digit hash of
/// the whole (so two long ids sharing a prefix stay apart).
pub fn legal(id: &str, index: usize) -> String {
    if id.is_empty() {
        return format!("call_{index}");
    }
    let clean: String = id
        .chars()
        .map(|c| {
            if c.is_ascii() && anthropic_byte(c as u8) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.len() <= MAX_ID_LEN {
        return clean;
    }
    format!("{}_{:016x}", &clean[..47], fnv1a(id.as_bytes()))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Hands out ids that are unique among those already taken.
///
/// Linear: a renamed id's candidates `{prefix}_{n}` are tried from where the
/// last search for that prefix and suffix width stopped (every candidate
/// before it is taken, and taken ids stay taken), so 10,000 calls named `x`
/// cost 10,000 tries, not 50 million.
#[derive(Default)]
pub struct Ids {
    taken: HashSet<String>,
    /// (prefix, digits of n) -> the next n whose candidate may be free.
    next: HashMap<(String, usize), usize>,
    tries: usize,
}

impl Ids {
    /// Marks `id` as taken (an id kept as it is).
    pub fn take(&mut self, id: &str) -> bool {
        self.tries += 1;
        self.taken.insert(id.to_owned())
    }

    pub fn is_taken(&self, id: &str) -> bool {
        self.taken.contains(id)
    }

    /// How many ids were tried so far (the cost of [`Ids::assign`], for the
    /// tests that hold it linear).
    pub fn tries(&self) -> usize {
        self.tries
    }

    /// `id` if it is legal in `fmt` and free, else the first free of
    /// [`legal`]`(id)`, then `{legal}_2`, `{legal}_3`, ... (shortened to
    /// stay within 64 characters). The id returned is taken.
    pub fn assign(&mut self, fmt: Format, id: &str, index: usize) -> String {
        if problem(fmt, id).is_none() && !id.is_empty() && self.take(id) {
            return id.to_owned();
        }
        let base = legal(id, index);
        if self.take(&base) {
            return base;
        }
        // The candidates with a d-digit n share one prefix (the base cut to
        // leave room for `_n`): each (prefix, d) resumes where it stopped.
        let mut digits = 1;
        loop {
            let keep = base.len().min(MAX_ID_LEN - 1 - digits);
            let prefix = &base[..keep];
            let first = if digits == 1 {
                2
            } else {
                10usize.saturating_pow(digits as u32 - 1)
            };
            let end = 10usize.saturating_pow(digits as u32);
            let key = (prefix.to_owned(), digits);
            let mut n = self.next.get(&key).copied().unwrap_or(first);
            while n < end {
                let candidate = format!("{prefix}_{n}");
                n += 1;
                if self.take(&candidate) {
                    self.next.insert(key, n);
                    return candidate;
                }
            }
            self.next.insert(key, end);
            digits += 1;
        }
    }
}

/// The ids to answer the calls of one response under: each call keeps its
/// id when it is legal in `fmt` and not used by an earlier call of the
/// response; otherwise it gets the id [`Ids::assign`] gives. Gemini calls
/// without an id (capstan's synthesized `gemini_call_*`) keep theirs.
pub fn unique(fmt: Format, ids: &[&str]) -> Vec<String> {
    let mut taken = Ids::default();
    ids.iter()
        .enumerate()
        .map(|(i, id)| {
            if fmt == Format::Gemini || fmt == Format::Mcp || fmt == Format::Describe {
                // Gemini answers by name and position when ids are absent, and
                // MCP and describe ids belong to the host: only duplicates move.
                if taken.take(id) {
                    return (*id).to_owned();
                }
            }
            taken.assign(fmt, id, i)
        })
        .collect()
}

/// Writes each result under the id the next request answers its call with:
/// a result answers the call with its own id, and repeated, empty or
/// illegal ids are made unique and legal (see [`unique`]). Describe and MCP
/// results keep the host's ids.
pub fn answer_under_unique_ids(fmt: Format, results: &mut [capstan_core::call::ToolResult]) {
    if matches!(fmt, Format::Describe | Format::Mcp) {
        return;
    }
    let ids: Vec<String> = results.iter().map(|r| r.id.clone()).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    for (result, id) in results.iter_mut().zip(unique(fmt, &ids)) {
        result.id = id;
    }
}

/// `results` as format `fmt`'s next request takes them, each under the id
/// [`answer_under_unique_ids`] gives it: what `run_turn` and
/// `capstan_format_write_results` both write.
pub fn format_results(
    fmt: Format,
    mut results: Vec<capstan_core::call::ToolResult>,
) -> serde_json::Value {
    answer_under_unique_ids(fmt, &mut results);
    crate::providers::format_results(fmt, &results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_pattern_is_enforced() {
        assert!(problem(Format::Anthropic, "toolu_01A-b").is_none());
        assert!(problem(Format::Anthropic, "call.1").is_some());
        assert!(problem(Format::Anthropic, "").is_some());
        assert_eq!(legal("call.1:x", 0), "call_1_x");
    }

    #[test]
    fn responses_limit_is_64() {
        let long = "c".repeat(65);
        assert!(problem(Format::OpenAiResponses, &"c".repeat(64)).is_none());
        assert!(problem(Format::OpenAiResponses, &long).is_some());
        assert_eq!(legal(&long, 0).len(), 64);
        assert_ne!(legal(&long, 0), legal(&"c".repeat(66), 0));
    }

    #[test]
    fn duplicates_get_distinct_legal_ids() {
        let got = unique(Format::Anthropic, &["a", "a", "a_2", ""]);
        assert_eq!(got, ["a", "a_2", "a_2_2", "call_3"]);
        let long = "x".repeat(64);
        let got = unique(Format::OpenAiResponses, &[&long, &long]);
        assert_eq!(got[0], long);
        assert_ne!(got[1], long);
        assert!(got[1].len() <= 64);
    }

    /// 10,000 calls all named `x` (and as many named with 62 shared
    /// characters, whose renames share a prefix) cost a bounded number of
    /// tries each, in every format; the ids stay distinct and legal.
    #[test]
    fn renaming_repeated_ids_is_linear() {
        let long: Vec<String> = (0..100)
            .map(|i| format!("{}{i:02}", "y".repeat(62)))
            .collect();
        for fmt in [
            Format::OpenAiChat,
            Format::OpenAiResponses,
            Format::Anthropic,
            Format::Gemini,
        ] {
            let mut ids = Ids::default();
            let mut got = HashSet::new();
            for i in 0..10_000 {
                assert!(got.insert(ids.assign(fmt, "x", i)));
            }
            for i in 0..10_000 {
                let id = ids.assign(fmt, &long[i % long.len()], i);
                assert!(problem(fmt, &id).is_none() && id.len() <= 64, "{id}");
                assert!(got.insert(id));
            }
            assert!(
                ids.tries() <= 4 * 20_000,
                "{fmt:?}: {} tries for 20,000 ids",
                ids.tries()
            );
        }
    }
}
