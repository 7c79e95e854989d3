//! Conversation integrity: a history the host assembled, checked against the
//! provider's rules for tool calls and results, and repaired on request.
//!
//! Rules per format (what the provider refuses; each is a [`Damage`]):
//! - every call has exactly one result, in the entries right after the model
//!   turn that made it: OpenAI Chat, the run of `tool` messages after the
//!   assistant message; OpenAI Responses, the run of `function_call_output`
//!   items after the run of `function_call` (and `reasoning`) items;
//!   Anthropic, the `tool_result` blocks of the next (user) message, before
//!   any other block; Gemini, the `functionResponse` parts of the next (user)
//!   content (matched by `id`, or by name and position when the call has
//!   none);
//! - a result answers a call of that turn (no orphans, no second result);
//! - call ids are unique in the conversation and legal for the provider
//!   (see [`ids`]);
//! - results come in call order (Anthropic: all before other blocks);
//! - Gemini 3 (opt-in): the first `functionCall` part of each model content
//!   carries a `thoughtSignature`.
//!
//! Repair returns a history of the same shape where: a missing result is an
//! error result saying the call never finished; an orphan or second result
//! is dropped; a duplicate or illegal call id is renamed (with its result)
//! by [`ids::Ids::assign`]; results are put in call order; a missing Gemini
//! signature gets the placeholder Google documents for that case. Every
//! repair is listed in the report. Cost: linear in the history's size.

pub mod ids;
pub(crate) mod turn;
mod wire;

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::providers::Format;
use wire::{CallAt, Kind};

/// A kind of damage a history can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Damage {
    MissingResult,
    OrphanResult,
    DuplicateResult,
    DuplicateCallId,
    IllegalId,
    OutOfOrder,
    MissingSignature,
}

/// cbindgen:ignore
impl Damage {
    pub const ALL: [Damage; 7] = [
        Damage::MissingResult,
        Damage::OrphanResult,
        Damage::DuplicateResult,
        Damage::DuplicateCallId,
        Damage::IllegalId,
        Damage::OutOfOrder,
        Damage::MissingSignature,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Damage::MissingResult => "missing_result",
            Damage::OrphanResult => "orphan_result",
            Damage::DuplicateResult => "duplicate_result",
            Damage::DuplicateCallId => "duplicate_call_id",
            Damage::IllegalId => "illegal_id",
            Damage::OutOfOrder => "out_of_order",
            Damage::MissingSignature => "missing_signature",
        }
    }
}

/// One thing found wrong, and what the repair did about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub kind: Damage,
    /// Index of the history entry (message, item, content) it is about.
    pub entry: usize,
    /// The call id concerned, as the history has it ("" when none).
    pub call_id: String,
    pub message: String,
    /// What the repair did (set only when repairing).
    pub repair: Option<String>,
}

impl Finding {
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), json!(self.kind.as_str()));
        m.insert("entry".into(), json!(self.entry));
        m.insert("call_id".into(), json!(self.call_id));
        m.insert("message".into(), json!(self.message));
        if let Some(r) = &self.repair {
            m.insert("repair".into(), json!(r));
        }
        Value::Object(m)
    }
}

/// How to check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckOptions {
    /// Also build the repaired history.
    pub repair: bool,
    /// Gemini only: require a `thoughtSignature` on the first `functionCall`
    /// part of each model content (Gemini 3 models refuse a history without).
    pub gemini_signatures: bool,
}

/// What a check found, and the repaired history when asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    pub findings: Vec<Finding>,
    pub repaired: Option<Value>,
}

impl Checked {
    /// `{"ok": bool, "findings": [{"kind", "entry", "call_id", "message", "repair"?}]}`.
    pub fn report_json(&self) -> Value {
        json!({
            "ok": self.findings.is_empty(),
            "findings": self.findings.iter().map(Finding::to_json).collect::<Vec<_>>(),
        })
    }
}

/// Checks `history` (an array of messages, input items or contents, or a
/// request body holding one under `messages` / `input` / `contents`) against
/// `fmt`'s rules. Errors (`InvalidArgument`) only for a format without
/// conversations (describe, MCP) or a history of the wrong shape.
pub fn check(fmt: Format, history: &Value, opts: &CheckOptions) -> Result<Checked, Error> {
    let (entries, key) = wire::entries(fmt, history).map_err(Error::InvalidArgument)?;
    let kinds = entries
        .iter()
        .enumerate()
        .map(|(i, e)| wire::kind(fmt, e, i))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Error::InvalidArgument)?;
    let mut pass = Pass {
        fmt,
        opts: *opts,
        entries,
        kinds: &kinds,
        ids: ids::Ids::default(),
        calls_seen: 0,
        findings: Vec::new(),
        out: Vec::new(),
    };
    let mut i = 0;
    while i < entries.len() {
        i = match &kinds[i] {
            Kind::Other => {
                pass.out.push(entries[i].clone());
                i + 1
            }
            Kind::Results(_) => {
                pass.stray_results(i);
                i + 1
            }
            Kind::Calls(_) => pass.turn(i),
        };
    }
    let repaired = opts.repair.then(|| {
        let items = Value::Array(std::mem::take(&mut pass.out));
        match (key, history) {
            (Some(key), Value::Object(obj)) => {
                let mut obj = obj.clone();
                obj.insert(key.into(), items);
                Value::Object(obj)
            }
            _ => items,
        }
    });
    Ok(Checked {
        findings: pass.findings,
        repaired,
    })
}

struct Pass<'a> {
    fmt: Format,
    opts: CheckOptions,
    entries: &'a [Value],
    kinds: &'a [Kind],
    /// Call ids used so far in the conversation (as repaired).
    ids: ids::Ids,
    calls_seen: usize,
    findings: Vec<Finding>,
    /// The repaired history so far.
    out: Vec<Value>,
}

/// One call of a model turn: where it is, its id before and after repair.
struct TurnCall {
    entry: usize,
    at: CallAt,
    id: String,
}

impl Pass<'_> {
    fn find(&mut self, kind: Damage, entry: usize, call_id: &str, message: String, repair: &str) {
        self.findings.push(Finding {
            kind,
            entry,
            call_id: call_id.to_owned(),
            message,
            repair: self.opts.repair.then(|| repair.to_owned()),
        });
    }

    fn is_anthropic_or_gemini(&self) -> bool {
        matches!(self.fmt, Format::Anthropic | Format::Gemini)
    }

    /// Results entry `i` that follows no model turn with calls.
    fn stray_results(&mut self, i: usize) {
        let Kind::Results(results) = &self.kinds[i] else {
            return;
        };
        for r in results {
            self.find(
                Damage::OrphanResult,
                i,
                &r.id,
                format!(
                    "a result for call \"{}\" follows no model turn with that call",
                    r.id
                ),
                "dropped the result",
            );
        }
        if self.is_anthropic_or_gemini() {
            let subs: Vec<usize> = results.iter().map(|r| r.sub).collect();
            if let Some(kept) = wire::without_pieces(self.fmt, &self.entries[i], &subs) {
                self.out.push(kept);
            }
        }
    }

    /// The model turn starting at entry `start` and the results after it;
    /// returns the index of the first entry after them.
    fn turn(&mut self, start: usize) -> usize {
        let fmt = self.fmt;
        // The model turn: one entry, or for Responses a run of function_call
        // items (reasoning items between them included).
        let mut end = start + 1;
        if fmt == Format::OpenAiResponses {
            while end < self.entries.len() {
                match &self.kinds[end] {
                    Kind::Calls(_) => end += 1,
                    Kind::Other
                        if is_reasoning(&self.entries[end])
                            && matches!(self.kinds.get(end + 1), Some(Kind::Calls(_))) =>
                    {
                        end += 2
                    }
                    _ => break,
                }
            }
        }
        let mut calls: Vec<TurnCall> = Vec::new();
        let mut model: Vec<Value> = Vec::new();
        for e in start..end {
            let mut entry = self.entries[e].clone();
            if let Kind::Calls(list) = &self.kinds[e] {
                for (n, at) in list.iter().enumerate() {
                    let id = self.call_id(e, at);
                    if id != at.id && !id.is_empty() {
                        wire::set_call_id(fmt, &mut entry, at.sub, &id);
                    }
                    if fmt == Format::Gemini
                        && self.opts.gemini_signatures
                        && n == 0
                        && !wire::has_signature(&entry, at.sub)
                    {
                        self.find(
                            Damage::MissingSignature,
                            e,
                            &at.id,
                            format!(
                                "the first functionCall part (parts[{}]) of this model content has no thoughtSignature",
                                at.sub
                            ),
                            "set thoughtSignature to Google's documented placeholder \"skip_thought_signature_validator\"",
                        );
                        wire::set_signature(&mut entry, at.sub);
                    }
                    calls.push(TurnCall {
                        entry: e,
                        at: at.clone(),
                        id,
                    });
                }
            }
            model.push(entry);
        }
        self.out.extend(model);

        // The results: a run of result entries (Chat, Responses) or the next
        // entry (Anthropic, Gemini; a user entry without results takes them).
        let mut region = Vec::new();
        let mut after = end;
        if self.is_anthropic_or_gemini() {
            if let Some(next) = self.entries.get(end) {
                let user = next.get("role").and_then(Value::as_str) == Some("user");
                if matches!(self.kinds[end], Kind::Results(_)) || (user && fmt_pieces(fmt, next)) {
                    region.push(end);
                    after = end + 1;
                }
            }
        } else {
            while after < self.entries.len() && matches!(self.kinds[after], Kind::Results(_)) {
                region.push(after);
                after += 1;
            }
        }
        self.answer(&calls, &region);
        after
    }

    /// The id call `at` (of entry `e`) answers under: its own, or a new one
    /// when it is a duplicate or illegal (reported).
    fn call_id(&mut self, e: usize, at: &CallAt) -> String {
        let index = self.calls_seen;
        self.calls_seen += 1;
        if self.fmt == Format::Gemini && at.id.is_empty() {
            return String::new();
        }
        let problem = ids::problem(self.fmt, &at.id);
        let duplicate = self.ids.is_taken(&at.id);
        if problem.is_none() && !duplicate {
            self.ids.take(&at.id);
            return at.id.clone();
        }
        let id = self.ids.assign(self.fmt, &at.id, index);
        let repair = format!("renamed the call and its result to \"{id}\"");
        if let Some(problem) = problem {
            self.find(
                Damage::IllegalId,
                e,
                &at.id,
                format!("call id \"{}\" {problem}", at.id),
                &repair,
            );
        } else {
            self.find(
                Damage::DuplicateCallId,
                e,
                &at.id,
                format!("call id \"{}\" is used by an earlier call", at.id),
                &repair,
            );
        }
        id
    }

    /// Matches the results of `region` to `calls`, reports what does not
    /// fit, and writes the repaired results.
    fn answer(&mut self, calls: &[TurnCall], region: &[usize]) {
        let fmt = self.fmt;
        let mut by_id: HashMap<&str, VecDeque<usize>> = HashMap::new();
        let mut by_name: HashMap<&str, VecDeque<usize>> = HashMap::new();
        for (c, call) in calls.iter().enumerate() {
            if call.id.is_empty() {
                by_name
                    .entry(call.at.name.as_str())
                    .or_default()
                    .push_back(c);
            } else {
                by_id.entry(call.id.as_str()).or_default().push_back(c);
            }
        }
        // A result written under a call's id before a rename still answers it.
        let mut by_old: HashMap<&str, VecDeque<usize>> = HashMap::new();
        for (c, call) in calls.iter().enumerate() {
            if call.id != call.at.id && !(fmt == Format::Gemini && call.at.id.is_empty()) {
                by_old.entry(call.at.id.as_str()).or_default().push_back(c);
            }
        }
        // Ids and names of the turn's calls, to tell a second result from an orphan.
        let known: HashSet<&str> = calls
            .iter()
            .flat_map(|k| [k.id.as_str(), k.at.id.as_str()])
            .collect();
        let names: HashSet<&str> = calls.iter().map(|k| k.at.name.as_str()).collect();
        let mut answered: Vec<Option<Value>> = vec![None; calls.len()];
        let mut highest: Option<usize> = None;
        let mut disordered = false;
        let mut others = Vec::new();
        for &r in region {
            let entry = &normalized_template(fmt, &self.entries[r]);
            let results = match &self.kinds[r] {
                Kind::Results(list) => list.clone(),
                _ => Vec::new(),
            };
            if self.is_anthropic_or_gemini() {
                let subs: Vec<usize> = results.iter().map(|x| x.sub).collect();
                let rest = wire::other_pieces(fmt, entry, &subs);
                let first_other = first_non_result(fmt, entry, &subs);
                if fmt == Format::Anthropic
                    && first_other.is_some_and(|o| subs.iter().any(|s| *s > o))
                {
                    disordered = true;
                }
                others.extend(rest);
            }
            for res in &results {
                let pick = |map: &mut HashMap<&str, VecDeque<usize>>, key: &str| {
                    let queue = map.get_mut(key)?;
                    while let Some(c) = queue.pop_front() {
                        if answered[c].is_none() {
                            return Some(c);
                        }
                    }
                    None
                };
                let mut c = pick(&mut by_id, &res.id).or_else(|| pick(&mut by_old, &res.id));
                if c.is_none() && fmt == Format::Gemini {
                    c = pick(&mut by_name, &res.name);
                }
                match c {
                    Some(c) => {
                        if highest.is_some_and(|h| c < h) {
                            disordered = true;
                        }
                        highest = highest.max(Some(c));
                        answered[c] = Some(wire::result_element(fmt, entry, res.sub, &calls[c].id));
                    }
                    None => {
                        let second = if fmt == Format::Gemini && res.id.is_empty() {
                            names.contains(res.name.as_str())
                        } else {
                            known.contains(res.id.as_str())
                        };
                        let (kind, message) = if second {
                            (
                                Damage::DuplicateResult,
                                format!("call \"{}\" already has a result", res.id),
                            )
                        } else {
                            (
                                Damage::OrphanResult,
                                format!(
                                    "no call \"{}\" in the model turn before this result",
                                    res.id
                                ),
                            )
                        };
                        self.find(kind, r, &res.id, message, "dropped the result");
                    }
                }
            }
        }
        if disordered {
            let at = region.first().copied().unwrap_or(0);
            let message = if fmt == Format::Anthropic {
                "results are not in call order, or not all before the message's other blocks"
            } else {
                "results are not in call order"
            };
            self.find(
                Damage::OutOfOrder,
                at,
                "",
                message.to_owned(),
                "put the results in call order",
            );
        }
        let mut elements = Vec::with_capacity(calls.len());
        for (c, call) in calls.iter().enumerate() {
            match answered[c].take() {
                Some(element) => elements.push(element),
                None => {
                    self.find(
                        Damage::MissingResult,
                        call.entry,
                        &call.at.id,
                        format!("call \"{}\" ({}) has no result", call.at.id, call.at.name),
                        "added an error result saying the call never finished",
                    );
                    elements.push(wire::missing_element(fmt, &call.id, &call.at.name));
                }
            }
        }
        let template = region.first().map(|&r| &self.entries[r]);
        let template = template.map(|t| normalized_template(fmt, t));
        self.out.extend(wire::region_entries(
            fmt,
            elements,
            template.as_ref(),
            others,
        ));
    }
}

fn is_reasoning(entry: &Value) -> bool {
    entry.get("type").and_then(Value::as_str) == Some("reasoning")
}

/// Whether a user entry can take result pieces (Anthropic: content array
/// or string; Gemini: parts array).
fn fmt_pieces(fmt: Format, entry: &Value) -> bool {
    match fmt {
        Format::Anthropic => matches!(
            entry.get("content"),
            Some(Value::Array(_) | Value::String(_))
        ),
        _ => matches!(entry.get("parts"), Some(Value::Array(_))),
    }
}

/// An Anthropic user message with string content, as a text block (so
/// results can go before it).
fn normalized_template(fmt: Format, entry: &Value) -> Value {
    let mut entry = entry.clone();
    if fmt == Format::Anthropic {
        if let Some(Value::String(text)) = entry.get("content").cloned() {
            entry["content"] = json!([{"type": "text", "text": text}]);
        }
    }
    entry
}

fn first_non_result(fmt: Format, entry: &Value, results: &[usize]) -> Option<usize> {
    let pieces = entry.get(wire::pieces_key(fmt))?.as_array()?;
    (0..pieces.len()).find(|i| results.binary_search(i).is_err())
}
