//! Assembly: every fixture fed at every split offset and at random chunk
//! sizes gives the calls the non-streamed parser reads.

use super::*;

/// A small deterministic generator (xorshift), for chunk sizes.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn cases() -> Vec<(Format, &'static str, String)> {
    let mut out = Vec::new();
    for (fmt, dir) in FORMATS {
        for case in COMPLETE_CASES {
            out.push((fmt, dir, case.to_owned()));
        }
    }
    out.push((Format::Gemini, "gemini", "truncated".to_owned()));
    out
}

/// Every split offset of one fixture, on two threads (a debug build parses
/// a few thousand bodies a second). tests/c/test_stream.c does every
/// fixture at every offset against the release library, under ASan.
fn every_split(fmt: Format, dir: &str, case: &str) {
    let body = fixture(dir, &format!("{case}.sse"));
    let want = parse_calls(fmt, &fixture(dir, &format!("{case}.json")));
    assert!(!want.as_array().unwrap().is_empty(), "{dir}/{case}");
    let want_text = if case == "text_then_calls" { TEXT } else { "" };
    std::thread::scope(|scope| {
        for part in 0..2 {
            let (body, want) = (&body, &want);
            scope.spawn(move || {
                let reg = Registry::default();
                for cut in (part..=body.len()).step_by(2) {
                    let chunks = [&body[..cut], &body[cut..]];
                    let (got, text) = run(&reg, fmt, StreamOptions::default(), &chunks);
                    let got = got.unwrap_or_else(|e| panic!("{dir}/{case} cut at {cut}: {e}"));
                    assert_eq!(calls_json(&got), *want, "{dir}/{case} cut at {cut}");
                    assert_eq!(text, want_text, "{dir}/{case} cut at {cut}");
                    assert_eq!(got.text, want_text);
                    assert!(got.cut.is_empty());
                }
            });
        }
    });
}

#[test]
fn openai_chat_calls_with_unicode_and_escapes_assemble_at_every_split_offset() {
    every_split(Format::OpenAiChat, "openai_chat", "unicode_escapes");
}

#[test]
fn openai_responses_calls_with_unicode_and_escapes_assemble_at_every_split_offset() {
    every_split(
        Format::OpenAiResponses,
        "openai_responses",
        "unicode_escapes",
    );
}

#[test]
fn anthropic_calls_with_unicode_and_escapes_assemble_at_every_split_offset() {
    every_split(Format::Anthropic, "anthropic", "unicode_escapes");
}

#[test]
fn gemini_calls_with_unicode_and_escapes_assemble_at_every_split_offset() {
    every_split(Format::Gemini, "gemini", "unicode_escapes");
    every_split(Format::Gemini, "gemini", "text_then_calls");
}

#[test]
fn assembled_calls_equal_parse_calls_at_random_chunk_sizes() {
    let reg = Registry::default();
    for (fmt, dir, case) in cases() {
        let body = fixture(dir, &format!("{case}.sse"));
        let want = parse_calls(fmt, &fixture(dir, &format!("{case}.json")));
        for seed in 1..=40u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let max = [1, 3, 17, 64, 500][seed as usize % 5];
            let mut chunks = Vec::new();
            let mut at = 0;
            while at < body.len() {
                let n = (1 + rng.below(max)).min(body.len() - at);
                chunks.push(&body[at..at + n]);
                at += n;
            }
            let (got, _) = run(&reg, fmt, StreamOptions::default(), &chunks);
            let got = got.unwrap_or_else(|e| panic!("{dir}/{case} seed {seed}: {e}"));
            assert_eq!(calls_json(&got), want, "{dir}/{case} seed {seed}");
        }
    }
}
