//! Which tool names each provider accepts.
//!
//! - OpenAI (chat and Responses): `^[a-zA-Z0-9_-]{1,64}$` ("Must be a-z, A-Z,
//!   0-9, or contain underscores and dashes, with a maximum length of 64").
//! - Anthropic: `^[a-zA-Z0-9_-]{1,64}$` as the tool-use guide states. (The
//!   API reference now lists a 128-character limit; 64 is the documented rule
//!   and passing it passes both.)
//! - Gemini: starts with a letter or an underscore; then letters, digits,
//!   `_ . : -`; at most 64 characters.
//! - MCP (2025-11-25 "Tool names"): 1 to 128 of `A-Z a-z 0-9 _ - .`.

use serde_json::{json, Value};

use super::Format;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Provider {
    OpenAi,
    Anthropic,
    Gemini,
    Mcp,
}

const PROVIDERS: [Provider; 4] = [
    Provider::OpenAi,
    Provider::Anthropic,
    Provider::Gemini,
    Provider::Mcp,
];

struct Rule {
    key: &'static str,
    max: usize,
    allowed: fn(char) -> bool,
    allowed_text: &'static str,
    first_letter_or_underscore: bool,
}

fn word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn gemini_char(c: char) -> bool {
    word_char(c) || c == '.' || c == ':'
}

fn mcp_char(c: char) -> bool {
    word_char(c) || c == '.'
}

fn rule(provider: Provider) -> Rule {
    match provider {
        Provider::OpenAi => Rule {
            key: "openai",
            max: 64,
            allowed: word_char,
            allowed_text: "A-Z a-z 0-9 _ -",
            first_letter_or_underscore: false,
        },
        Provider::Anthropic => Rule {
            key: "anthropic",
            max: 64,
            allowed: word_char,
            allowed_text: "A-Z a-z 0-9 _ -",
            first_letter_or_underscore: false,
        },
        Provider::Gemini => Rule {
            key: "gemini",
            max: 64,
            allowed: gemini_char,
            allowed_text: "A-Z a-z 0-9 _ . : -",
            first_letter_or_underscore: true,
        },
        Provider::Mcp => Rule {
            key: "mcp",
            max: 128,
            allowed: mcp_char,
            allowed_text: "A-Z a-z 0-9 _ - .",
            first_letter_or_underscore: false,
        },
    }
}

/// The provider whose naming rule a format follows (`describe` has none).
pub(crate) fn provider_of(fmt: Format) -> Option<Provider> {
    match fmt {
        Format::Describe => None,
        Format::OpenAiChat | Format::OpenAiResponses => Some(Provider::OpenAi),
        Format::Anthropic => Some(Provider::Anthropic),
        Format::Gemini => Some(Provider::Gemini),
        Format::Mcp => Some(Provider::Mcp),
    }
}

/// Why `provider` would refuse `name`; empty when it accepts it.
pub(crate) fn problems_for(provider: Provider, name: &str) -> Vec<String> {
    let rule = rule(provider);
    let mut problems = Vec::new();
    let len = name.chars().count();
    if len == 0 {
        problems.push("is empty".to_owned());
        return problems;
    }
    if len > rule.max {
        problems.push(format!("is {len} characters long, more than {}", rule.max));
    }
    let mut bad: Vec<char> = Vec::new();
    for c in name.chars() {
        if !(rule.allowed)(c) && !bad.contains(&c) {
            bad.push(c);
        }
    }
    if !bad.is_empty() {
        let listed: Vec<String> = bad.iter().map(|c| format!("{c:?}")).collect();
        problems.push(format!(
            "contains {} (allowed: {})",
            listed.join(", "),
            rule.allowed_text
        ));
    }
    if rule.first_letter_or_underscore {
        if let Some(first) = name.chars().next() {
            if !(first.is_ascii_alphabetic() || first == '_') {
                problems.push("must start with a letter or an underscore".to_owned());
            }
        }
    }
    problems
}

/// Every provider's problems with `name`, each prefixed with the provider.
pub fn name_problems(name: &str) -> Vec<String> {
    PROVIDERS
        .iter()
        .flat_map(|&p| {
            let key = rule(p).key;
            problems_for(p, name)
                .into_iter()
                .map(move |problem| format!("{key}: {problem}"))
        })
        .collect()
}

/// Which providers accept each name:
/// `[{"name", "openai", "anthropic", "gemini", "mcp", "problems": [...]}]`.
pub fn name_report(names: &[&str]) -> Value {
    let rows = names.iter().map(|name| {
        let mut row = serde_json::Map::new();
        row.insert("name".into(), json!(name));
        for p in PROVIDERS {
            row.insert(rule(p).key.into(), json!(problems_for(p, name).is_empty()));
        }
        row.insert("problems".into(), json!(name_problems(name)));
        Value::Object(row)
    });
    Value::Array(rows.collect())
}
