//! Search over the registry's tools: the index (`crate::search`) kept beside
//! the tools, built on the first search and updated with every change.

use std::sync::Arc;

use super::{Registry, Tool};
use crate::error::Error;
use crate::search::{check, Index, SearchHit, SearchMode, SearchOptions, ToolText};
use crate::search::{NativeState, ToolConfig, MAX_REGEX_COMPILED_BYTES};

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
    pub fn search_tool_config(&self) -> Option<ToolConfig> {
        let config = self.shared.search.tool.lock().ok()?.clone()?;
        self.get(&config.name).map(|_| config)
    }

    /// How the last exports showed deferred tools.
    pub fn native_state(&self) -> NativeState {
        self.shared
            .search
            .native
            .lock()
            .map(|n| n.clone())
            .unwrap_or_default()
    }

    /// Whether one of `names` is the search tool's (set by
    /// `set_search_tool`, registered or not): a cheap look, no clone.
    pub fn names_search_tool<'n>(&self, mut names: impl Iterator<Item = &'n str>) -> bool {
        self.shared
            .search
            .tool
            .lock()
            .ok()
            .is_some_and(|tool| tool.as_ref().is_some_and(|t| names.any(|n| n == t.name)))
    }
}
