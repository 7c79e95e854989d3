//! Fed garbage, capstan answers with an error or a result, never a panic:
//! mutated provider bodies, calls and results, thousands of them.

use capstan::providers::{format_results, parse_calls, parse_calls_text, Format};
use capstan::{execute, CallRequest, ExecOptions, Registry, ToolDef, ToolFlags, ToolResult};
use serde_json::{json, Value};

/// A small deterministic generator (no dependency, same inputs every run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Rounds per test: `CAPSTAN_GARBAGE_SCALE=N` multiplies them (for long local runs).
fn rounds(base: usize) -> usize {
    let scale = std::env::var("CAPSTAN_GARBAGE_SCALE")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(1);
    base * scale.max(1)
}

/// The seed: `CAPSTAN_GARBAGE_SEED` varies it (for long local runs).
fn seed(base: u64) -> u64 {
    let extra = std::env::var("CAPSTAN_GARBAGE_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0);
    (base ^ extra.wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1
}

const SPICE: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "null",
    "true",
    "1e999",
    "-0",
    "\\u0000",
    "\\ud800",
    "ü",
    "😀",
    "\"name\"",
    "\"id\"",
    "\"arguments\"",
    "\"{\\\"a\\\":\"",
    "{}",
    "[]",
    "\"\"",
    "0",
    " ",
];

/// Mutates `text`: deletes, duplicates or inserts pieces, at char boundaries.
fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut s: Vec<char> = text.chars().collect();
    for _ in 0..1 + rng.below(4) {
        let at = if s.is_empty() { 0 } else { rng.below(s.len()) };
        match rng.below(3) {
            0 if !s.is_empty() => {
                let len = 1 + rng.below(8.min(s.len() - at));
                s.drain(at..at + len);
            }
            1 if !s.is_empty() => {
                let len = 1 + rng.below(16.min(s.len() - at));
                let piece: Vec<char> = s[at..at + len].to_vec();
                s.splice(at..at, piece);
            }
            _ => {
                let piece = SPICE[rng.below(SPICE.len())];
                s.splice(at..at, piece.chars());
            }
        }
    }
    s.into_iter().collect()
}

fn samples() -> Vec<(Format, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/providers");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let fmt = if name.starts_with("openai_chat") {
            Format::OpenAiChat
        } else if name.starts_with("openai_responses") {
            Format::OpenAiResponses
        } else if name.starts_with("anthropic") {
            Format::Anthropic
        } else if name.starts_with("gemini") {
            Format::Gemini
        } else if name.starts_with("mcp") {
            Format::Mcp
        } else {
            continue;
        };
        out.push((fmt, std::fs::read_to_string(&path).unwrap()));
    }
    assert!(out.len() >= 5, "fixtures for every format");
    out
}

#[test]
fn mutated_provider_bodies_parse_or_fail_cleanly() {
    let mut rng = Rng(seed(0x5eed_cafe_f00d_1234));
    let samples = samples();
    let (mut parsed, mut refused) = (0, 0);
    for _ in 0..rounds(4000) {
        let (fmt, text) = &samples[rng.below(samples.len())];
        let body = mutate(&mut rng, text);
        // The text path (what the C ABI uses) takes any text, JSON or not.
        if let Ok(calls) = parse_calls_text(*fmt, &body) {
            for (i, c) in calls.into_iter().enumerate() {
                assert_eq!(CallRequest::from_json(c.to_json(), i).unwrap(), c);
            }
        }
        let Ok(value) = serde_json::from_str::<Value>(&body) else {
            refused += 1;
            continue;
        };
        match parse_calls(*fmt, &value) {
            Ok(calls) => {
                parsed += 1;
                for (i, c) in calls.into_iter().enumerate() {
                    // What was parsed is a normalized call that reads back as itself.
                    let again = CallRequest::from_json(c.to_json(), i).unwrap();
                    assert_eq!(again, c);
                }
            }
            Err(e) => {
                refused += 1;
                assert!(!e.to_string().is_empty(), "an error says what is wrong");
            }
        }
    }
    assert!(
        parsed > 0 && refused > 0,
        "both paths exercised: {parsed} parsed, {refused} refused"
    );
}

#[test]
fn mutated_calls_execute_to_one_result_each_or_are_refused() {
    let reg = Registry::default();
    reg.register(ToolDef {
        name: "get_weather".into(),
        description: String::new(),
        parameters: json!({"type":"object","properties":{"city":{"type":"string","minLength":1},
            "units":{"enum":["c","f"],"default":"c"}},"required":["city"],"additionalProperties":false}),
        handler: Box::new(|c: capstan::Call| {
            let _ = c.complete_text(c.arguments_text().to_string());
        }),
        timeout_ms: 1000,
        max_output_chars: 64,
        flags: ToolFlags::default(),
    })
    .unwrap();
    let base = r#"[{"id":"1","name":"get_weather","arguments":"{\"city\":\"Oslo\"}"},{"id":"2","name":"get_weather","arguments":{"city":"Rome","units":"f"}}]"#;
    let mut rng = Rng(seed(0xdead_beef_0bad_f00d));
    let (mut ran, mut refused) = (0, 0);
    for _ in 0..rounds(3000) {
        let text = mutate(&mut rng, base);
        match CallRequest::list_from_str(&text) {
            Ok(calls) => {
                let n = calls.len();
                let results = execute(&reg, calls, &ExecOptions::default());
                assert_eq!(results.len(), n, "one result per call for {text}");
                ran += 1;
            }
            Err(capstan::Error::InvalidCalls(m)) => {
                assert!(!m.is_empty());
                refused += 1;
            }
            Err(other) => panic!("unexpected error kind for {text}: {other:?}"),
        }
    }
    assert!(ran > 100 && refused > 100, "{ran} ran, {refused} refused");
}

#[test]
fn mutated_results_format_or_fail_cleanly() {
    let base = r#"[{"id":"a","name":"t","content":"{\"x\":1}","is_error":false,"outcome":"ok","duration_us":3},{"id":"b","name":"t","content":"boom","is_error":true,"outcome":"tool_error"}]"#;
    let mut rng = Rng(seed(0x0123_4567_89ab_cdef));
    for _ in 0..rounds(3000) {
        let text = mutate(&mut rng, base);
        let Ok(value) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if let Ok(results) = ToolResult::list_from_json(&value) {
            for fmt in Format::ALL {
                let out = format_results(fmt, &results);
                assert!(out.is_array() || out.is_object(), "{fmt:?}: {out}");
            }
        }
    }
}
