//! The searches of one turn (`run_turn`): a provider's own search calls
//! (OpenAI's client-executed `tool_search_call`) answered with the
//! registry's search, the search tool's results written as Anthropic's
//! `tool_reference` blocks under native deferred loading, and the bound on
//! what a turn's searches write. Provider formats live here, above the
//! registry: the registry only searches.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::providers::{tool_search_output_tools, Format, NATIVE_SEARCH_CALL, TOOL_REFERENCES};
use capstan_core::call::{Arguments, CallRequest, Outcome, ToolResult};
use capstan_core::registry::Registry;
use capstan_core::search::{SearchMode, SearchOptions, ToolConfig, DEFAULT_RESULTS, MAX_RESULTS};
use capstan_core::search::{TURN_SEARCH_EXPANSION, TURN_SEARCH_MIN_BYTES};

/// Answers a provider's own search call (`NATIVE_SEARCH_CALL`: OpenAI's
/// client-executed `tool_search_call`) as a turn of its own would (see
/// [`TurnSearches::answer_native`]), within `TURN_SEARCH_MIN_BYTES`.
pub fn answer_native_search(registry: &Registry, call: &CallRequest) -> ToolResult {
    TurnSearches::new(
        registry,
        Format::OpenAiResponses,
        || 0,
        std::slice::from_ref(call),
    )
    .answer_native(call)
}

impl<'a> TurnSearches<'a> {
    /// The searches among `calls`, the calls of one response of
    /// `body_bytes()` in format `fmt`: each has room kept for an error
    /// answer, so that what they write together stays within the turn's
    /// bound. A turn without searches (most) reads no configuration and
    /// counts no bytes: its `TurnSearches` has nothing to bound.
    pub(crate) fn new(
        registry: &'a Registry,
        fmt: Format,
        body_bytes: impl FnOnce() -> usize,
        calls: &[CallRequest],
    ) -> TurnSearches<'a> {
        // A native search answered in another format (a call named so by
        // hand) is a result like others: its content written as text.
        let items = fmt == Format::OpenAiResponses;
        let searched = calls.iter().any(|c| c.name == NATIVE_SEARCH_CALL)
            || registry.names_search_tool(calls.iter().map(|c| c.name.as_str()));
        if !searched {
            return TurnSearches {
                registry,
                strict: false,
                config: None,
                items,
                body_bytes: 0,
                budget: 0,
                left: 0,
                listed: HashSet::new(),
                sizes: HashMap::new(),
            };
        }
        let body_bytes = body_bytes();
        let budget = body_bytes
            .saturating_mul(TURN_SEARCH_EXPANSION)
            .max(TURN_SEARCH_MIN_BYTES);
        let config = registry.search_tool_config();
        let own = config.as_ref().map(|c| c.name.as_str());
        let kept: usize = calls
            .iter()
            .filter(|c| c.name == NATIVE_SEARCH_CALL || Some(c.name.as_str()) == own)
            .map(|c| error_cost(&c.id, items && c.name == NATIVE_SEARCH_CALL))
            .sum();
        TurnSearches {
            registry,
            strict: registry.native_state().openai_strict,
            config,
            items,
            body_bytes,
            budget,
            left: budget.saturating_sub(kept),
            listed: HashSet::new(),
            sizes: HashMap::new(),
        }
    }
}

/// Under Anthropic native deferred loading (the last Anthropic export),
/// marks the search tool's successful results that found tools so they
/// are written as `tool_reference` blocks (`TOOL_REFERENCES`).
pub fn mark_tool_references(registry: &Registry, results: &mut [ToolResult]) {
    if !registry.native_state().anthropic {
        return;
    }
    let Some(config) = registry.search_tool_config() else {
        return;
    };
    for r in results
        .iter_mut()
        .filter(|r| r.name == config.name && !r.is_error() && r.parts.is_none())
    {
        let Ok(found) = serde_json::from_str::<Value>(&r.content) else {
            continue;
        };
        let names: Vec<&str> = found
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .collect();
        if !names.is_empty() {
            let names = serde_json::json!(names).to_string();
            r.name = TOOL_REFERENCES.to_owned();
            r.content = names;
        }
    }
}

/// Bytes an answer to a search takes beside its id and content, at most
/// (in every format: the item or block around it, the tool's name, a comma).
const ANSWER_ENVELOPE_BYTES: usize = 192;
/// Longest error text of an answer to a search (`TurnSearches::past_bound`,
/// and the search's own errors: an empty or too long query, a bad pattern).
const ANSWER_ERROR_BYTES: usize = 256;

/// The id of an answer as written, at most: ids are kept, or made legal
/// and unique within 64 characters (`history::ids`).
fn id_bytes(id: &str) -> usize {
    id.len().max(64)
}

/// What an error answer to the search call `id` writes, at most
/// (`textless`: a `tool_search_output` item, which has no text).
fn error_cost(id: &str, textless: bool) -> usize {
    let text = if textless { 0 } else { ANSWER_ERROR_BYTES };
    ANSWER_ENVELOPE_BYTES + id_bytes(id) + text
}

/// The searches of one turn (`run_turn`): their answers together write at
/// most `TURN_SEARCH_EXPANSION` times the response's bytes (or
/// `TURN_SEARCH_MIN_BYTES`). Each search has room kept for an error answer;
/// an answer that does not fit in that room and what is left is that
/// error. A tool a `tool_search_output` of the turn defined is not defined
/// again by a later one.
pub(crate) struct TurnSearches<'a> {
    registry: &'a Registry,
    config: Option<ToolConfig>,
    /// The last OpenAI Responses export was strict.
    strict: bool,
    /// Native searches are answered as `tool_search_output` items (format
    /// `openai_responses`), which hold their tools as JSON and no text.
    items: bool,
    body_bytes: usize,
    budget: usize,
    /// Bytes free beyond the room kept for the searches not answered yet.
    left: usize,
    /// Tools whose definitions a `tool_search_output` of the turn listed.
    listed: HashSet<String>,
    /// Bytes of each definition built this turn (with its comma), so that
    /// an answer refused for its size is weighed, not rebuilt, next time.
    sizes: HashMap<String, usize>,
}

impl TurnSearches<'_> {
    /// Answers a provider's own search call (`NATIVE_SEARCH_CALL`: OpenAI's
    /// client-executed `tool_search_call`) with the registry's search, as
    /// the search tool would (its limit and mode; 5 and words without one),
    /// the search tool itself left out. Its query: the arguments' `query`
    /// string, else their string values joined (the model fills the
    /// parameters the export gave it). The result's content is the found
    /// tools' Responses definitions (a JSON array), less those an earlier
    /// answer of the turn listed; they are loaded. A query that cannot run
    /// (empty, too long, a bad pattern), or an answer past what the turn's
    /// searches may write, is a tool error, written as a
    /// `tool_search_output` listing no tools.
    pub(crate) fn answer_native(&mut self, call: &CallRequest) -> ToolResult {
        let (limit, mode, own) = match &self.config {
            Some(c) => (c.limit, c.mode, Some(c.name.as_str())),
            None => (DEFAULT_RESULTS, SearchMode::Words, None),
        };
        let options = SearchOptions {
            limit: (limit + 1).min(MAX_RESULTS),
            mode,
        };
        let mut result = ToolResult::new(&call.id, NATIVE_SEARCH_CALL, Outcome::Ok, "[]");
        let hits = match self.registry.search(&native_query(call), &options) {
            Ok(hits) => hits,
            Err(e) => {
                result.outcome = Outcome::ToolError;
                result.content = e.to_string();
                return result;
            }
        };
        let fresh: Vec<String> = hits
            .into_iter()
            .map(|h| h.name)
            .filter(|n| own != Some(n.as_str()))
            .take(limit)
            .filter(|n| !self.listed.contains(n))
            .collect();
        // Weigh the definitions not weighed yet, then build the others only
        // if the whole answer fits.
        let mut texts: HashMap<String, String> = HashMap::new();
        let unweighed: Vec<&String> = fresh
            .iter()
            .filter(|n| !self.sizes.contains_key(*n))
            .collect();
        self.build(unweighed, &mut texts);
        let mut content = 1 + fresh
            .iter()
            .filter_map(|n| self.sizes.get(n))
            .sum::<usize>();
        if !self.items {
            // Written as a JSON string: escaping at most doubles it.
            content = 2 * content + 2;
        }
        let Some(left) = self.take(&call.id, self.items, content) else {
            result.outcome = Outcome::ToolError;
            result.content = self.past_bound(&call.id, self.items, content);
            return result;
        };
        let unbuilt: Vec<&String> = fresh.iter().filter(|n| !texts.contains_key(*n)).collect();
        self.build(unbuilt, &mut texts);
        let found: Vec<(&String, String)> = fresh
            .iter()
            .filter_map(|n| texts.remove(n).map(|t| (n, t)))
            .collect();
        self.left = left;
        self.listed.extend(found.iter().map(|(n, _)| (*n).clone()));
        self.registry
            .load_tools(found.iter().map(|(n, _)| (*n).clone()));
        let defs: Vec<String> = found.into_iter().map(|(_, t)| t).collect();
        result.content = format!("[{}]", defs.join(","));
        result
    }

    /// Builds the Responses definitions of the tools `names` into `texts`
    /// and records their sizes (a tool removed since is left out).
    fn build(&mut self, names: Vec<&String>, texts: &mut HashMap<String, String>) {
        let specs: Vec<_> = names
            .into_iter()
            .filter_map(|n| self.registry.get(n).map(|t| t.spec()))
            .collect();
        let Value::Array(defs) = tool_search_output_tools(&specs, self.strict) else {
            return;
        };
        for (spec, def) in specs.into_iter().zip(defs) {
            let text = def.to_string();
            self.sizes.insert(spec.name.clone(), text.len() + 1);
            texts.insert(spec.name, text);
        }
    }

    /// Bounds the search tool's results of the turn (after
    /// `mark_tool_references`: JSON names and descriptions, or
    /// `tool_reference` blocks) by what the turn's searches may still write:
    /// one past it becomes a tool error saying so. Results are taken in
    /// call order, after the provider's own searches.
    pub(crate) fn bound_results(&mut self, results: &mut [ToolResult]) {
        let Some(name) = self.config.as_ref().map(|c| c.name.clone()) else {
            return;
        };
        for r in results.iter_mut() {
            if !(r.name == name || r.name == TOOL_REFERENCES) || r.is_error() {
                continue;
            }
            let content = written_bytes(r);
            match self.take(&r.id, false, content) {
                Some(left) => self.left = left,
                None => {
                    r.content = self.past_bound(&r.id, false, content);
                    r.name = name.clone();
                    r.outcome = Outcome::ToolError;
                    r.parts = None;
                }
            }
        }
    }

    /// What is left once an answer to `id` (`textless`: see `error_cost`)
    /// with `content` bytes is written (its kept room freed), or `None`
    /// when it does not fit.
    fn take(&self, id: &str, textless: bool, content: usize) -> Option<usize> {
        let cost = ANSWER_ENVELOPE_BYTES + id_bytes(id) + content;
        (self.left + error_cost(id, textless)).checked_sub(cost)
    }

    /// The error of an answer to `id` with `content` bytes that does not fit.
    fn past_bound(&self, id: &str, textless: bool, content: usize) -> String {
        let room = self.left + error_cost(id, textless);
        let text = format!(
            "not answered: this turn's searches may write {} bytes ({TURN_SEARCH_EXPANSION} \
             times the response's {} bytes, or 1 MiB), and this answer needs {} of the {room} \
             left. Search again next turn, with fewer searches",
            self.budget,
            self.body_bytes,
            content + ANSWER_ENVELOPE_BYTES + id_bytes(id),
        );
        debug_assert!(text.len() <= ANSWER_ERROR_BYTES);
        text
    }
}

/// A native search call's query: the arguments' `query` string, else their
/// string values joined.
fn native_query(call: &CallRequest) -> String {
    let arguments = match &call.arguments {
        Arguments::Value(v) => v.clone(),
        Arguments::Text(t) => serde_json::from_str(t).unwrap_or(Value::String(t.clone())),
    };
    match arguments.get("query") {
        Some(Value::String(q)) => q.clone(),
        _ => match &arguments {
            Value::Object(m) => {
                let words: Vec<&str> = m.values().filter_map(Value::as_str).collect();
                words.join(" ")
            }
            Value::String(s) => s.clone(),
            _ => String::new(),
        },
    }
}

/// Bytes a search tool's result takes as written, at most: its
/// `tool_reference` blocks, or its content as a JSON string.
fn written_bytes(r: &ToolResult) -> usize {
    if r.name == TOOL_REFERENCES {
        if let Ok(names) = serde_json::from_str::<Vec<String>>(&r.content) {
            // {"type":"tool_reference","tool_name":""} and a comma.
            return 1 + names.iter().map(|n| n.len() + 41).sum::<usize>();
        }
    }
    serde_json::to_string(&r.content).map_or(r.content.len() * 6 + 2, |s| s.len())
}
