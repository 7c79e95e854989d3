// size: one pass over a history (`Pass`, about 560 of these lines) whose
// steps share its state (the turns seen, the calls open, the repairs made);
// cut into files it would be one impl spread across them. The rules, the
// reports and the entry points stay with it so the file reads in order.

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
//! Repair returns a history of the same shape where: a result present but
//! misplaced (after another message, before its call, among another turn's
//! results) is moved right after its call; a call with no result anywhere
//! gets an error result saying the call never finished; of two results for
//! a call the real outcome is kept (a success over an error, else the
//! first); a result no call has is dropped; a duplicate or illegal call id
//! is renamed (with its result) by [`ids::Ids::assign`]; results are put in
//! call order; a missing Gemini signature gets the placeholder Google
//! documents for that case. Every repair is listed in the report. The
//! repaired history is the input's text edited in place ([`raw`]): what
//! repair does not change comes back byte for byte. Cost: linear in the
//! history's size.

#[doc(hidden)]
pub mod fuzz;
pub mod ids;
pub(crate) mod raw;
pub(crate) mod turn;
mod wire;

use std::collections::{HashMap, VecDeque};

use serde_json::{json, Map, Value};

use crate::providers::Format;
use capstan_core::error::Error;
use raw::Step;
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
        report_json(&self.findings)
    }
}

fn report_json(findings: &[Finding]) -> Value {
    json!({
        "ok": findings.is_empty(),
        "findings": findings.iter().map(Finding::to_json).collect::<Vec<_>>(),
    })
}

/// What [`check_text`] found, and the repaired history's JSON text when
/// asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedText {
    pub findings: Vec<Finding>,
    pub repaired: Option<String>,
}

impl CheckedText {
    /// See [`Checked::report_json`].
    pub fn report_json(&self) -> Value {
        report_json(&self.findings)
    }
}

/// Checks `history` (an array of messages, input items or contents, or a
/// request body holding one under `messages` / `input` / `contents`) against
/// `fmt`'s rules. Errors (`InvalidArgument`) only for a format without
/// conversations (describe, MCP) or a history of the wrong shape. The
/// repaired history is `history` as JSON text repaired by [`check_text`],
/// read back.
pub fn check(fmt: Format, history: &Value, opts: &CheckOptions) -> Result<Checked, Error> {
    let checked = check_text(fmt, &history.to_string(), opts)?;
    let repaired = match checked.repaired {
        Some(text) => Some(serde_json::from_str(&text).map_err(|e| {
            Error::InvalidArgument(format!("the repaired history does not read back: {e}"))
        })?),
        None => None,
    };
    Ok(Checked {
        findings: checked.findings,
        repaired,
    })
}

/// [`check`] on the history's JSON text. The repaired history is that text
/// edited in place: every entry the repair does not change comes back byte
/// for byte (numbers as written, key order, spacing), and a renamed id or a
/// moved result changes nothing around it.
pub fn check_text(fmt: Format, text: &str, opts: &CheckOptions) -> Result<CheckedText, Error> {
    let history: Value = serde_json::from_str(text)
        .map_err(|e| Error::InvalidArgument(format!("history is not valid JSON: {e}")))?;
    let (entries, key) = wire::entries(fmt, &history).map_err(Error::InvalidArgument)?;
    let whole = text.trim();
    let raw_list = match key {
        Some(key) => raw::member(whole, key),
        None => Some(whole),
    };
    let raw_entries = raw_list.and_then(raw::elements).unwrap_or_default();
    if raw_entries.len() != entries.len() {
        return Err(Error::InvalidArgument(
            "history: its entries could not be read as JSON text".into(),
        ));
    }
    let kinds = entries
        .iter()
        .enumerate()
        .map(|(i, e)| wire::kind(fmt, e, i))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Error::InvalidArgument)?;
    // Anthropic and Gemini entries' blocks / parts, read once.
    let pieces: Vec<Option<Vec<&str>>> = match fmt {
        Format::Anthropic | Format::Gemini => raw_entries
            .iter()
            .map(|e| raw::member(e, wire::pieces_key(fmt)).and_then(raw::elements))
            .collect(),
        _ => vec![None; raw_entries.len()],
    };
    let mut pass = Pass {
        fmt,
        opts: *opts,
        entries,
        raw: &raw_entries,
        pieces: &pieces,
        kinds: &kinds,
        ids: ids::Ids::default(),
        calls_seen: 0,
        findings: Vec::new(),
        turns: Vec::new(),
        loose: Vec::new(),
        in_region: vec![false; entries.len()],
    };
    pass.plan();
    pass.place_loose();
    pass.report_missing();
    let repaired = opts.repair.then(|| {
        let items = raw::array(&pass.write());
        match (key, raw_list) {
            (Some(_), Some(list)) => raw::splice(whole, list, &items),
            _ => items,
        }
    });
    Ok(CheckedText {
        findings: pass.findings,
        repaired,
    })
}

struct Pass<'a> {
    fmt: Format,
    opts: CheckOptions,
    entries: &'a [Value],
    /// Each entry's JSON text, as the history has it.
    raw: &'a [&'a str],
    /// Each Anthropic or Gemini entry's blocks / parts, as the history has them.
    pieces: &'a [Option<Vec<&'a str>>],
    kinds: &'a [Kind],
    /// Call ids used so far in the conversation (as repaired).
    ids: ids::Ids,
    calls_seen: usize,
    findings: Vec<Finding>,
    turns: Vec<Turn>,
    /// Results not answering a call of the turn right before them.
    loose: Vec<Loose>,
    /// Entries that are a turn's results entries (written with the turn).
    in_region: Vec<bool>,
}

/// Where a result is: its entry and its piece (block, part) in it.
#[derive(Clone, Copy, PartialEq)]
struct Src {
    entry: usize,
    sub: usize,
    error: bool,
}

/// One model turn: its entries, its calls and the entries after it that
/// hold its results.
struct Turn {
    start: usize,
    end: usize,
    region: Vec<usize>,
    calls: Vec<TurnCall>,
    /// Model entries whose first call part gets the placeholder signature.
    signatures: Vec<(usize, usize)>,
}

/// One call of a model turn: where it is, its id before and after repair,
/// and the result that answers it.
struct TurnCall {
    entry: usize,
    at: CallAt,
    id: String,
    answer: Option<Src>,
}

struct Loose {
    src: Src,
    id: String,
    name: String,
    /// The turn whose results entries hold it, if any.
    turn: Option<usize>,
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

    /// Finds the turns, renames ids, matches each turn's results entries to
    /// its calls; what does not match becomes loose.
    fn plan(&mut self) {
        let mut i = 0;
        while i < self.entries.len() {
            i = match &self.kinds[i] {
                Kind::Other => i + 1,
                Kind::Results(results) => {
                    for r in results {
                        self.loose.push(Loose {
                            src: Src {
                                entry: i,
                                sub: r.sub,
                                error: r.error,
                            },
                            id: r.id.clone(),
                            name: r.name.clone(),
                            turn: None,
                        });
                    }
                    i + 1
                }
                Kind::Calls(_) => self.turn(i),
            };
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
        let mut signatures = Vec::new();
        for e in start..end {
            let Kind::Calls(list) = &self.kinds[e] else {
                continue;
            };
            for (n, at) in list.iter().enumerate() {
                let id = self.call_id(e, at);
                if fmt == Format::Gemini
                    && self.opts.gemini_signatures
                    && n == 0
                    && !wire::has_signature(&self.entries[e], at.sub)
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
                    signatures.push((e, at.sub));
                }
                calls.push(TurnCall {
                    entry: e,
                    at: at.clone(),
                    id,
                    answer: None,
                });
            }
        }

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
        for &r in &region {
            self.in_region[r] = true;
        }
        let index = self.turns.len();
        self.answer(index, &mut calls, &region);
        self.turns.push(Turn {
            start,
            end,
            region,
            calls,
            signatures,
        });
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

    /// Matches the results of `region` to `calls` (turn `turn`); reports
    /// results out of call order; what matches no call of the turn is loose.
    fn answer(&mut self, turn: usize, calls: &mut [TurnCall], region: &[usize]) {
        let fmt = self.fmt;
        let mut by_id: HashMap<&str, VecDeque<usize>> = HashMap::new();
        let mut by_name: HashMap<&str, VecDeque<usize>> = HashMap::new();
        // A result written under a call's id before a rename still answers it.
        let mut by_old: HashMap<&str, VecDeque<usize>> = HashMap::new();
        for (c, call) in calls.iter().enumerate() {
            if call.id.is_empty() {
                by_name
                    .entry(call.at.name.as_str())
                    .or_default()
                    .push_back(c);
            } else {
                by_id.entry(call.id.as_str()).or_default().push_back(c);
            }
            if call.id != call.at.id && !(fmt == Format::Gemini && call.at.id.is_empty()) {
                by_old.entry(call.at.id.as_str()).or_default().push_back(c);
            }
        }
        let mut answered: Vec<Option<Src>> = vec![None; calls.len()];
        let mut highest: Option<usize> = None;
        let mut disordered = false;
        let mut loose = Vec::new();
        for &r in region {
            let Kind::Results(results) = &self.kinds[r] else {
                continue;
            };
            if fmt == Format::Anthropic {
                let subs: Vec<usize> = results.iter().map(|x| x.sub).collect();
                let first_other = first_non_result(fmt, &self.entries[r], &subs);
                if first_other.is_some_and(|o| subs.iter().any(|s| *s > o)) {
                    disordered = true;
                }
            }
            for res in results {
                let src = Src {
                    entry: r,
                    sub: res.sub,
                    error: res.error,
                };
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
                        answered[c] = Some(src);
                    }
                    None => loose.push(Loose {
                        src,
                        id: res.id.clone(),
                        name: res.name.clone(),
                        turn: Some(turn),
                    }),
                }
            }
        }
        for (call, a) in calls.iter_mut().zip(answered) {
            call.answer = a;
        }
        self.loose.extend(loose);
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
    }

    /// Each loose result answers the first call of the history with its id
    /// (or, Gemini without ids, its name) that has none: it is moved there.
    /// A second result for a call keeps the real outcome (a success over an
    /// error; else the one the call has); only a result no call has is
    /// dropped. Linear: each list of calls is walked once by each cursor.
    fn place_loose(&mut self) {
        let fmt = self.fmt;
        // Calls by id (new and old) and, Gemini without ids, by name.
        let mut by_key: HashMap<(bool, String), Vec<(usize, usize)>> = HashMap::new();
        for (t, turn) in self.turns.iter().enumerate() {
            for (c, call) in turn.calls.iter().enumerate() {
                if call.id.is_empty() {
                    by_key
                        .entry((true, call.at.name.clone()))
                        .or_default()
                        .push((t, c));
                } else {
                    by_key
                        .entry((false, call.id.clone()))
                        .or_default()
                        .push((t, c));
                    if call.at.id != call.id {
                        by_key
                            .entry((false, call.at.id.clone()))
                            .or_default()
                            .push((t, c));
                    }
                }
            }
        }
        // How far each list is known answered (calls only gain answers),
        // and known to hold no error (during the successes, errors only
        // give way to successes).
        let mut cursor: HashMap<(bool, String), usize> = HashMap::new();
        let mut no_error: HashMap<(bool, String), usize> = HashMap::new();
        // Successes first: a success takes a call before any loose error can.
        let mut loose = std::mem::take(&mut self.loose);
        loose.sort_by_key(|l| l.src.error);
        for loose in loose {
            let key = if fmt == Format::Gemini && loose.id.is_empty() {
                (true, loose.name.clone())
            } else {
                (false, loose.id.clone())
            };
            let Some(list) = by_key.get(&key) else {
                let message = match loose.turn {
                    Some(_) => format!(
                        "no call \"{}\" in the model turn before this result",
                        loose.id
                    ),
                    None => format!(
                        "a result for call \"{}\" follows no model turn with that call",
                        loose.id
                    ),
                };
                self.find(
                    Damage::OrphanResult,
                    loose.src.entry,
                    &loose.id,
                    message,
                    "dropped the result: no call in the history has its id",
                );
                continue;
            };
            let answer = |turns: &[Turn], n: usize| turns[list[n].0].calls[list[n].1].answer;
            let at = cursor.entry(key.clone()).or_insert(0);
            while *at < list.len() && answer(&self.turns, *at).is_some() {
                *at += 1;
            }
            if let Some(&(t, c)) = list.get(*at) {
                let call_entry = self.turns[t].calls[c].entry;
                self.turns[t].calls[c].answer = Some(loose.src);
                self.find(
                    Damage::OrphanResult,
                    loose.src.entry,
                    &loose.id,
                    format!(
                        "the result for call \"{}\" is not among the results right after its call (entry {call_entry})",
                        loose.id
                    ),
                    &format!("moved the result to right after its call (entry {call_entry})"),
                );
                continue;
            }
            // Every call with this key has a result: a second result. A
            // success takes the place of an error.
            if !loose.src.error {
                let at = no_error.entry(key).or_insert(0);
                while *at < list.len() && answer(&self.turns, *at).is_some_and(|a| !a.error) {
                    *at += 1;
                }
                if let Some(&(t, c)) = list.get(*at) {
                    let call = &mut self.turns[t].calls[c];
                    let id = call.at.id.clone();
                    if let Some(kept) = call.answer.replace(loose.src) {
                        self.find(
                            Damage::DuplicateResult,
                            kept.entry,
                            &id,
                            format!("call \"{id}\" has two results: an error (here) and a success (entry {})", loose.src.entry),
                            &format!("dropped this error result and kept the successful one (entry {})", loose.src.entry),
                        );
                    }
                    continue;
                }
            }
            // Else the one it has stays: of the turn's own calls first,
            // else the first call with the key.
            let own = loose.turn.and_then(|turn| {
                let at = list.partition_point(|(t, _)| *t < turn);
                list.get(at).filter(|(t, _)| *t == turn)
            });
            let &(t, c) = own.unwrap_or(&list[0]);
            let call = &self.turns[t].calls[c];
            let id = call.at.id.clone();
            let kept = call.answer.map_or(0, |a| a.entry);
            self.find(
                Damage::DuplicateResult,
                loose.src.entry,
                &id,
                format!("call \"{id}\" already has a result (entry {kept})"),
                &format!("dropped this result and kept the one in entry {kept}"),
            );
        }
    }

    fn report_missing(&mut self) {
        let mut missing = Vec::new();
        for turn in &self.turns {
            for call in turn.calls.iter().filter(|c| c.answer.is_none()) {
                missing.push((call.entry, call.at.id.clone(), call.at.name.clone()));
            }
        }
        for (entry, id, name) in missing {
            self.find(
                Damage::MissingResult,
                entry,
                &id,
                format!("call \"{id}\" ({name}) has no result anywhere in the history"),
                "added an error result saying the call never finished",
            );
        }
    }

    /// The repaired entries as JSON texts.
    fn write(&self) -> Vec<String> {
        let fmt = self.fmt;
        let mut out: Vec<String> = Vec::with_capacity(self.raw.len());
        let mut t = 0;
        let mut i = 0;
        while i < self.raw.len() {
            if let Some(turn) = self.turns.get(t).filter(|turn| turn.start == i) {
                self.write_turn(turn, &mut out);
                i = turn.end.max(turn.region.last().map_or(0, |r| r + 1));
                t += 1;
                continue;
            }
            match &self.kinds[i] {
                Kind::Results(results) if !self.in_region[i] => {
                    // Its results answer calls elsewhere, or were dropped.
                    if self.is_anthropic_or_gemini() {
                        let subs: Vec<usize> = results.iter().map(|r| r.sub).collect();
                        let kept: Vec<String> = self
                            .other_pieces(i, &subs)
                            .into_iter()
                            .map(|(_, p)| p)
                            .collect();
                        if !kept.is_empty() {
                            let key = wire::pieces_key(fmt);
                            out.push(raw::set_member(self.raw[i], key, &raw::array(&kept)));
                        }
                    }
                }
                _ => out.push(self.raw[i].to_owned()),
            }
            i += 1;
        }
        out
    }

    fn write_turn(&self, turn: &Turn, out: &mut Vec<String>) {
        let fmt = self.fmt;
        let mut calls = turn.calls.iter().peekable();
        for e in turn.start..turn.end {
            let mut renames: Vec<(usize, &str)> = Vec::new();
            while let Some(call) = calls.next_if(|c| c.entry == e) {
                if call.id != call.at.id && !call.id.is_empty() {
                    renames.push((call.at.sub, &call.id));
                }
            }
            let mut text = if renames.is_empty() {
                self.raw[e].to_owned()
            } else {
                wire::rename_calls(fmt, self.raw[e], &renames)
            };
            for &(_, sub) in turn.signatures.iter().filter(|(s, _)| *s == e) {
                text = raw::set_at(
                    &text,
                    &[Step::Key("parts"), Step::Index(sub)],
                    "thoughtSignature",
                    &raw::string(wire::SKIP_SIGNATURE),
                );
            }
            out.push(text);
        }
        let elements: Vec<String> = turn
            .calls
            .iter()
            .map(|call| match call.answer {
                Some(src) => self.result_element(src, &call.id),
                None => wire::missing_element(fmt, &call.id, &call.at.name).to_string(),
            })
            .collect();
        if !self.is_anthropic_or_gemini() {
            out.extend(elements);
            return;
        }
        let key = wire::pieces_key(fmt);
        let Some(&r) = turn.region.first() else {
            let entry = format!(
                "{{\"role\":\"user\",{}:{}}}",
                raw::string(key),
                raw::array(&elements)
            );
            out.push(entry);
            return;
        };
        let subs: Vec<usize> = match &self.kinds[r] {
            Kind::Results(list) => list.iter().map(|x| x.sub).collect(),
            _ => Vec::new(),
        };
        // Each piece and where it was in this entry, if it was.
        let mut pieces: Vec<(Option<usize>, String)> = turn
            .calls
            .iter()
            .map(|call| call.answer.filter(|src| src.entry == r).map(|src| src.sub))
            .zip(elements)
            .collect();
        pieces.extend(self.other_pieces(r, &subs));
        match &self.pieces[r] {
            // Every piece where it was: only the changed ones are written.
            Some(original)
                if original.len() == pieces.len()
                    && pieces.iter().enumerate().all(|(n, (at, _))| *at == Some(n)) =>
            {
                let edits: Vec<(&str, &str)> = original
                    .iter()
                    .zip(&pieces)
                    .filter(|(o, (_, p))| **o != p.as_str())
                    .map(|(o, (_, p))| (*o, p.as_str()))
                    .collect();
                out.push(raw::splice_all(self.raw[r], &edits));
            }
            _ => {
                let texts: Vec<&str> = pieces.iter().map(|(_, p)| p.as_str()).collect();
                out.push(raw::set_member(self.raw[r], key, &raw::array(&texts)));
            }
        }
    }

    /// The result at `src`, answering under `id` (renamed only when it differs).
    fn result_element(&self, src: Src, id: &str) -> String {
        let fmt = self.fmt;
        let text = match fmt {
            Format::OpenAiChat | Format::OpenAiResponses => Some(self.raw[src.entry]),
            _ => self.pieces[src.entry]
                .as_ref()
                .and_then(|p| p.get(src.sub).copied()),
        };
        let text = text.unwrap_or("null");
        let current = match &self.kinds[src.entry] {
            Kind::Results(list) => list
                .binary_search_by_key(&src.sub, |r| r.sub)
                .ok()
                .map(|n| list[n].id.as_str()),
            _ => None,
        };
        if id.is_empty() || current == Some(id) {
            return text.to_owned();
        }
        let (path, key) = wire::result_id_at(fmt);
        raw::set_at(text, &path, key, &raw::string(id))
    }

    /// The pieces of entry `i` that are not results, as JSON texts with
    /// their index (an Anthropic string content as one new text block).
    fn other_pieces(&self, i: usize, results: &[usize]) -> Vec<(Option<usize>, String)> {
        let key = wire::pieces_key(self.fmt);
        let Some(value) = raw::member(self.raw[i], key) else {
            return Vec::new();
        };
        match &self.pieces[i] {
            Some(pieces) => pieces
                .iter()
                .enumerate()
                .filter(|(n, _)| results.binary_search(n).is_err())
                .map(|(n, p)| (Some(n), (*p).to_owned()))
                .collect(),
            None if self.fmt == Format::Anthropic && value.starts_with('"') => {
                vec![(None, format!("{{\"type\":\"text\",\"text\":{value}}}"))]
            }
            None => Vec::new(),
        }
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

fn first_non_result(fmt: Format, entry: &Value, results: &[usize]) -> Option<usize> {
    let pieces = entry.get(wire::pieces_key(fmt))?.as_array()?;
    (0..pieces.len()).find(|i| results.binary_search(i).is_err())
}
