//! Entry point of the fuzz target `repair_results` (fuzz/fuzz_targets), with
//! the properties it checks, so that its seeds and a sweep of generated
//! inputs run as a plain test too (tests/history_rules.rs). Not a public API.
//!
//! The input is a program that writes a conversation in which every result
//! is known: byte 0 picks the format (low 2 bits) and whether the history
//! comes in a request body (bit 2); each further byte adds an entry (low 3
//! bits: user text, model text, a model turn of 1 to 3 calls, a result, an
//! error result, either one joined to the previous results entry when the
//! format has results entries of several results) with ids from `a`, `b`,
//! `c` and numbers that a JSON round trip would rewrite
//! (`123456789012345678901234567890`, `1.10`, `1E2`, `2.50e-3`).
//!
//! Properties, after `check_text` with repair:
//! - every real result survives: for each id, as many results as it has
//!   calls (or results, if fewer) are kept, successes before errors: a
//!   result is never replaced by the made-up "never finished" one;
//! - numbers are unchanged: every text entry comes back byte for byte, and
//!   every number in the repaired history is written as in the input;
//! - the repaired history checks clean and repairs to itself.

use std::collections::HashMap;

use serde_json::Value;

use super::{check_text, CheckOptions};
use crate::providers::Format;

const IDS: [&str; 3] = ["a", "b", "c"];
const NUMBERS: [&str; 4] = ["123456789012345678901234567890", "1.10", "1E2", "2.50e-3"];

/// The generated history's text, and per id (calls, successes, errors),
/// with the markers of each result.
struct Program {
    fmt: Format,
    entries: Vec<String>,
    texts: Vec<String>,
    /// Per id: calls, and the markers of its successes and its errors.
    ids: HashMap<&'static str, (usize, Vec<String>, Vec<String>)>,
    /// Whether the last entry is a results entry new results can join.
    joinable: bool,
    /// Whether the last entry is a model turn (Anthropic and Gemini put its
    /// results into the user entry after it, which then changes).
    after_turn: bool,
    /// Results written so far (each result's marker is unique).
    results: usize,
}

impl Program {
    fn number(byte: u8) -> &'static str {
        NUMBERS[usize::from(byte >> 3) % NUMBERS.len()]
    }

    fn text(&mut self, user: bool, byte: u8) {
        let n = Self::number(byte);
        let k = self.entries.len();
        let entry = match (self.fmt, user) {
            (Format::Gemini, true) => {
                format!(r#"{{"role":"user","parts":[{{"text":"t{k}", "n": {n}}}]}}"#)
            }
            (Format::Gemini, false) => {
                format!(r#"{{"role":"model","parts":[{{"text":"t{k}","n":{n}}}]}}"#)
            }
            (_, true) => format!(r#"{{"role":"user","content":"t{k}", "n": {n}}}"#),
            (_, false) => format!(r#"{{"role": "assistant","content":"t{k}","n":{n}}}"#),
        };
        let takes_results =
            user && self.after_turn && matches!(self.fmt, Format::Anthropic | Format::Gemini);
        if !takes_results {
            self.texts.push(entry.clone());
        }
        self.entries.push(entry);
        self.joinable = false;
        self.after_turn = false;
    }

    fn turn(&mut self, byte: u8, more: &mut impl Iterator<Item = u8>) {
        let k = 1 + usize::from(byte >> 3) % 3;
        let n = Self::number(byte);
        let ids: Vec<&'static str> = (0..k)
            .map(|_| IDS[usize::from(more.next().unwrap_or(0)) % IDS.len()])
            .collect();
        for id in &ids {
            self.ids.entry(id).or_default().0 += 1;
        }
        let calls =
            |f: &dyn Fn(&str) -> String| ids.iter().map(|id| f(id)).collect::<Vec<_>>().join(",");
        match self.fmt {
            Format::OpenAiChat => self.entries.push(format!(
                r#"{{"role":"assistant","content":null,"tool_calls":[{}], "n": {n}}}"#,
                calls(&|id| format!(
                    r#"{{"id":"{id}","type":"function","function":{{"name":"f_{id}","arguments":"{{\"n\": {n}}}"}}}}"#
                ))
            )),
            Format::OpenAiResponses => {
                for id in &ids {
                    self.entries.push(format!(
                        r#"{{"type":"function_call","call_id":"{id}","name":"f_{id}","arguments":"{{}}", "n": {n}}}"#
                    ));
                }
            }
            Format::Anthropic => self.entries.push(format!(
                r#"{{"role":"assistant","content":[{}]}}"#,
                calls(&|id| format!(
                    r#"{{"type":"tool_use","id":"{id}","name":"f_{id}","input":{{"n": {n}}}}}"#
                ))
            )),
            _ => self.entries.push(format!(
                r#"{{"role":"model","parts":[{}]}}"#,
                calls(&|id| format!(
                    r#"{{"functionCall":{{"id":"{id}","name":"f_{id}","args":{{"n": {n}}}}}}}"#
                ))
            )),
        }
        self.joinable = false;
        self.after_turn = true;
    }

    fn result(&mut self, byte: u8, error: bool, join: bool) {
        self.after_turn = false;
        let id = IDS[usize::from(byte >> 3) % IDS.len()];
        self.results += 1;
        let marker = format!("<{}{}>", if error { "e" } else { "r" }, self.results);
        let n = Self::number(byte);
        let record = self.ids.entry(id).or_default();
        if error {
            record.2.push(marker.clone());
        } else {
            record.1.push(marker.clone());
        }
        let text = if error {
            format!("Error: {marker}")
        } else {
            marker
        };
        let piece = match self.fmt {
            Format::Anthropic if error => format!(
                r#"{{"type":"tool_result","tool_use_id":"{id}","content":"{text}","is_error":true, "n": {n}}}"#
            ),
            Format::Anthropic => {
                format!(
                    r#"{{"type":"tool_result","tool_use_id":"{id}","content":"{text}", "n": {n}}}"#
                )
            }
            Format::Gemini => format!(
                r#"{{"functionResponse":{{"id":"{id}","name":"f_{id}","response":{{"{}":"{text}","n": {n}}}}}}}"#,
                if error { "error" } else { "output" }
            ),
            Format::OpenAiChat => {
                format!(r#"{{"role":"tool","tool_call_id":"{id}","content":"{text}", "n": {n}}}"#)
            }
            _ => format!(
                r#"{{"type":"function_call_output","call_id":"{id}","output":"{text}", "n": {n}}}"#
            ),
        };
        let key = match self.fmt {
            Format::Anthropic => "content",
            Format::Gemini => "parts",
            _ => {
                self.entries.push(piece);
                return;
            }
        };
        if join && self.joinable {
            if let Some(last) = self.entries.last_mut() {
                // `...]}`: the piece joins the array before its closing bracket.
                last.truncate(last.len() - 2);
                last.push_str(&format!(",{piece}]}}"));
                return;
            }
        }
        self.entries
            .push(format!(r#"{{"role":"user","{key}":[{piece}]}}"#));
        self.joinable = true;
    }
}

/// Runs the program `data` (see the module) and checks the properties.
pub fn repair_results(data: &[u8]) -> Result<(), String> {
    let Some((&head, ops)) = data.split_first() else {
        return Ok(());
    };
    let fmt = [
        Format::OpenAiChat,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::Gemini,
    ][usize::from(head & 3)];
    let mut p = Program {
        fmt,
        entries: Vec::new(),
        texts: Vec::new(),
        ids: HashMap::new(),
        joinable: false,
        after_turn: false,
        results: 0,
    };
    let mut ops = ops.iter().copied().take(256);
    while let Some(op) = ops.next() {
        match op & 7 {
            0 | 7 => p.text(true, op),
            1 => p.text(false, op),
            2 => p.turn(op, &mut ops),
            3 => p.result(op, false, false),
            4 => p.result(op, true, false),
            5 => p.result(op, false, true),
            _ => p.result(op, true, true),
        }
    }
    let list = format!("[{}]", p.entries.join(","));
    let key = match fmt {
        Format::OpenAiResponses => "input",
        Format::Gemini => "contents",
        _ => "messages",
    };
    let history = if head & 4 != 0 {
        format!(r#"{{"model": "m", "temperature": 1.10, "{key}": {list}, "top": 1E2}}"#)
    } else {
        list
    };
    let opts = CheckOptions {
        repair: true,
        gemini_signatures: false,
    };
    let checked =
        check_text(fmt, &history, &opts).map_err(|e| format!("refused: {e}\n{history}"))?;
    let repaired = checked.repaired.ok_or("no repaired history")?;
    let broken = |what: String| {
        Err(format!(
            "{}: {what}\nhistory:  {history}\nrepaired: {repaired}",
            fmt.name()
        ))
    };

    // Every real result survives.
    for (id, (calls, successes, errors)) in &p.ids {
        let kept = |markers: &[String]| {
            markers
                .iter()
                .filter(|m| repaired.contains(m.as_str()))
                .count()
        };
        let (s, e) = (kept(successes), kept(errors));
        if s != successes.len().min(*calls) {
            return broken(format!(
                "{id}: {s} of {} successes kept for {calls} calls",
                successes.len()
            ));
        }
        if s + e != (successes.len() + errors.len()).min(*calls) {
            return broken(format!(
                "{id}: {s} successes and {e} errors kept of {} and {} for {calls} calls",
                successes.len(),
                errors.len()
            ));
        }
    }
    // Numbers unchanged: text entries byte for byte, no number rewritten.
    if let Some(text) = p.texts.iter().find(|t| !repaired.contains(t.as_str())) {
        return broken(format!("the entry {text} changed"));
    }
    if let Some(n) = numbers(&repaired)
        .into_iter()
        .find(|n| !NUMBERS.contains(n) && !n.chars().all(|c| c.is_ascii_digit()))
    {
        return broken(format!("the number {n} is not as written"));
    }
    // Clean, and a fixed point.
    let again = check_text(fmt, &repaired, &opts).map_err(|e| format!("repaired refused: {e}"))?;
    if !again.findings.is_empty() {
        return broken(format!("the repaired history has {}", again.report_json()));
    }
    if again.repaired.as_deref() != Some(repaired.as_str()) {
        return broken("repair is not a fixed point".into());
    }
    let _: Value = serde_json::from_str(&repaired).map_err(|e| format!("not JSON: {e}"))?;
    Ok(())
}

/// Every number of the repaired history `repaired` is written as in the
/// history `history` it was repaired from (the property the fuzz target
/// `check_history` adds to its own: repair writes no number again).
pub fn numbers_as_written(history: &str, repaired: &str) -> Result<(), String> {
    let written: std::collections::HashSet<&str> = numbers(history).into_iter().collect();
    match numbers(repaired).into_iter().find(|n| !written.contains(n)) {
        Some(n) => Err(format!(
            "the repaired history has the number {n}, not written so in the history"
        )),
        None => Ok(()),
    }
}

/// The numbers of the JSON text `text`, as written (outside strings).
fn numbers(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut in_string) = (0, false);
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
        } else if b == b'"' {
            in_string = true;
            i += 1;
        } else if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < bytes.len()
                && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
            {
                i += 1;
            }
            out.push(&text[start..i]);
        } else {
            i += 1;
        }
    }
    out
}
