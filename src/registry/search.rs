//! Search over the registry's tools: the index (`crate::search`) kept beside
//! the tools, built on the first search and updated with every change.

use std::sync::Arc;

use serde_json::Value;

use super::{Registry, Tool};
use crate::call::{Arguments, CallRequest, Outcome, ToolResult};
use crate::error::Error;
use crate::providers::{tool_search_output_tools, NATIVE_SEARCH_CALL, TOOL_REFERENCES};
use crate::search::MAX_RESULTS;
use crate::search::{check, Index, SearchHit, SearchMode, SearchOptions, ToolText};
use crate::search::{NativeState, ToolConfig, DEFAULT_RESULTS, MAX_REGEX_COMPILED_BYTES};

/// Adds or replaces `tool` in `index`.
pub(crate) fn index_tool(index: &mut Index, tool: &Tool) {
    let parameters: serde_json::Value =
        serde_json::from_str(tool.parameters_text()).unwrap_or(serde_json::Value::Null);
    index.insert(&ToolText {
        name: &tool.meta.name,
        description: &tool.meta.description,
        parameters: &parameters,
    });
}

impl Registry {
    /// The registered tools that best match `query`, best first (see
    /// `SearchMode`). `InvalidArgument` for an empty or too long query, a
    /// limit past `MAX_RESULTS`, or a regular expression that does not
    /// compile (or compiles past `MAX_REGEX_COMPILED_BYTES`).
    pub fn search(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>, Error> {
        let limit = check(query, options)?;
        let hits = match options.mode {
            SearchMode::Words => self.with_search_index(|ix| ix.search_words(query, limit))?,
            SearchMode::Regex => {
                let re = regex::RegexBuilder::new(query)
                    .size_limit(MAX_REGEX_COMPILED_BYTES)
                    .build()
                    .map_err(|e| {
                        Error::InvalidArgument(format!("the search pattern is not valid: {e}"))
                    })?;
                self.with_search_index(|ix| ix.search_regex(&re, limit))?
            }
        };
        Ok(hits
            .into_iter()
            .filter_map(|h| {
                // A tool removed since the search is left out.
                let tool: Arc<Tool> = self.get(&h.name)?;
                Some(SearchHit {
                    name: tool.meta.name.clone(),
                    description: tool.meta.description.clone(),
                    score: h.score,
                })
            })
            .collect())
    }

    /// Bytes the search index holds on the heap (0 before the first search).
    pub fn search_index_bytes(&self) -> usize {
        self.shared
            .search
            .index
            .read()
            .ok()
            .and_then(|ix| ix.as_ref().map(Index::heap_bytes))
            .unwrap_or(0)
    }
}

impl Registry {
    /// The registered search tool's settings, if it is still registered.
    pub(crate) fn search_tool_config(&self) -> Option<ToolConfig> {
        let config = self.shared.search.tool.lock().ok()?.clone()?;
        self.get(&config.name).map(|_| config)
    }

    /// How the last exports showed deferred tools.
    pub(crate) fn native_state(&self) -> NativeState {
        self.shared
            .search
            .native
            .lock()
            .map(|n| n.clone())
            .unwrap_or_default()
    }

    /// Answers a provider's own search call (`NATIVE_SEARCH_CALL`: OpenAI's
    /// client-executed `tool_search_call`) with this registry's search, as
    /// the search tool would (its limit and mode; 5 and words without one),
    /// the search tool itself left out. Its query: the arguments' `query`
    /// string, else their string values joined (the model fills the
    /// parameters the export gave it). The result's content is the found
    /// tools' Responses definitions (a JSON array); they are loaded. A query
    /// that cannot run (empty, too long, a bad pattern) is a tool error,
    /// written as a `tool_search_output` listing no tools.
    pub fn answer_native_search(&self, call: &CallRequest) -> ToolResult {
        let (limit, mode, own) = match self.search_tool_config() {
            Some(c) => (c.limit, c.mode, Some(c.name)),
            None => (DEFAULT_RESULTS, SearchMode::Words, None),
        };
        let arguments = match &call.arguments {
            Arguments::Value(v) => v.clone(),
            Arguments::Text(t) => serde_json::from_str(t).unwrap_or(Value::String(t.clone())),
        };
        let query = match arguments.get("query") {
            Some(Value::String(q)) => q.clone(),
            _ => match &arguments {
                Value::Object(m) => {
                    let words: Vec<&str> = m.values().filter_map(Value::as_str).collect();
                    words.join(" ")
                }
                Value::String(s) => s.clone(),
                _ => String::new(),
            },
        };
        let options = SearchOptions {
            limit: (limit + 1).min(MAX_RESULTS),
            mode,
        };
        let mut result = ToolResult::new(&call.id, NATIVE_SEARCH_CALL, Outcome::Ok, "[]");
        match self.search(&query, &options) {
            Ok(hits) => {
                let specs: Vec<_> = hits
                    .iter()
                    .filter(|h| own.as_deref() != Some(h.name.as_str()))
                    .filter_map(|h| self.get(&h.name).map(|t| t.spec()))
                    .take(limit)
                    .collect();
                if let Ok(mut loaded) = self.shared.search.loaded.lock() {
                    loaded.extend(specs.iter().map(|s| s.name.clone()));
                }
                let strict = self.native_state().openai_strict;
                result.content = tool_search_output_tools(&specs, strict).to_string();
            }
            Err(e) => {
                result.outcome = Outcome::ToolError;
                result.content = e.to_string();
            }
        }
        result
    }

    /// Under Anthropic native deferred loading (the last Anthropic export),
    /// marks the search tool's successful results that found tools so they
    /// are written as `tool_reference` blocks (`TOOL_REFERENCES`).
    pub fn mark_tool_references(&self, results: &mut [ToolResult]) {
        if !self.native_state().anthropic {
            return;
        }
        let Some(config) = self.search_tool_config() else {
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
}
