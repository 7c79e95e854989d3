//! Search over a registry's tools (issue #32): ranked BM25 over names (split
//! at case changes and separators), descriptions and parameter names and
//! descriptions, or a regular expression over the same text.
//!
//! The index lives here; `registry/search.rs` keeps it beside the tools,
//! `search_tool.rs` makes the model's search tool of it.
//!
//! The index is built on a registry's first search and kept up to date from
//! then on as tools are registered, replaced and removed (mounted MCP tools
//! included: they are registry tools); a registry never searched pays nothing.

mod index;
mod tokens;

use crate::error::Error;

pub use index::MAX_TEXT_BYTES;
pub(crate) use index::{Index, ToolText};
pub use tokens::MAX_WORDS_PER_TEXT;

/// Longest query accepted, in bytes (either mode).
pub const MAX_QUERY_BYTES: usize = 1024;
/// Most results one search returns.
pub const MAX_RESULTS: usize = 100;
/// Results returned when the options ask for 0.
pub const DEFAULT_RESULTS: usize = 5;
/// Cap on a compiled regular expression (the `regex` crate's size limit).
pub const MAX_REGEX_COMPILED_BYTES: usize = 1 << 20;
/// What one turn's answers to searches may write together (`run_turn`: its
/// `tool_search_output` items, its search tool results, `tool_reference`
/// blocks included, as written): this many times the bytes of the model's
/// response, as a stream's output is bounded.
pub const TURN_SEARCH_EXPANSION: usize = 8;
/// What one turn's answers to searches may always write, whatever the
/// response's size: a search of typical tools at the largest limit fits.
pub const TURN_SEARCH_MIN_BYTES: usize = 1 << 20;

/// How the query is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SearchMode {
    /// Words, ranked by BM25 (names weigh most, then parameter names).
    #[default]
    Words,
    /// A regular expression (the `regex` crate's syntax, linear time),
    /// matched against each tool's name, description and parameter
    /// names and descriptions; a match in the name ranks first.
    Regex,
}

/// What to search for and how many results to return.
#[derive(Clone, Debug, Default)]
pub struct SearchOptions {
    /// At most this many results; 0 means `DEFAULT_RESULTS`; past
    /// `MAX_RESULTS` is an error.
    pub limit: usize,
    pub mode: SearchMode,
}

/// One tool found, best first.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    pub name: String,
    pub description: String,
    /// BM25 score (words), or 2 for a name match and 1 for another match (regex).
    pub score: f32,
}

/// The search tool's default name and description (`search_tool.rs`; also
/// the description of OpenAI's client-executed `tool_search` tool).
pub const DEFAULT_TOOL_NAME: &str = "tool_search";
pub const DEFAULT_TOOL_DESCRIPTION: &str = "Search the tools available beyond those listed, by \
what they do (a few keywords). Returns the best matches with their descriptions; the tools \
found can be called from your next turn on.";

/// The search tool's parameters: `{"query": string}`, described for `mode`.
pub fn tool_parameters(mode: SearchMode) -> serde_json::Value {
    let query_text = match mode {
        SearchMode::Words => "What the tool should do, in a few keywords.",
        SearchMode::Regex => "A regular expression matched against tool names and descriptions.",
    };
    serde_json::json!({
        "type": "object",
        "properties": {"query": {
            "type": "string",
            "description": query_text,
            "minLength": 1,
            "maxLength": MAX_QUERY_BYTES,
        }},
        "required": ["query"],
    })
}

/// The registered search tool: its name, result count and mode.
#[derive(Clone, Debug)]
pub struct ToolConfig {
    pub name: String,
    pub limit: usize,
    pub mode: SearchMode,
}

/// How the registry's last export in a provider format showed deferred
/// tools, which decides how the model's searches are answered in it.
#[derive(Clone, Debug, Default)]
pub struct NativeState {
    /// The last OpenAI Responses export was native: its `strict` option
    /// (the tools a `tool_search_output` lists are exported alike).
    pub openai_strict: bool,
    /// The last Anthropic export was native: the search tool's results are
    /// `tool_reference` blocks.
    pub anthropic: bool,
}

/// A registry's search state.
#[derive(Default)]
pub(crate) struct State {
    /// The index (None until the first search).
    pub(crate) index: std::sync::RwLock<Option<Index>>,
    /// Deferred tools the search tool has found (see `search_tool.rs`).
    pub(crate) loaded: std::sync::Mutex<std::collections::BTreeSet<String>>,
    /// The registered search tool, if any (`search_tool.rs`).
    pub(crate) tool: std::sync::Mutex<Option<ToolConfig>>,
    /// Provider-native deferred loading, per the last exports.
    pub(crate) native: std::sync::Mutex<NativeState>,
}

/// Checks a query and its options; the limit to use.
pub(crate) fn check(query: &str, options: &SearchOptions) -> Result<usize, Error> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(Error::InvalidArgument(format!(
            "the search query is {} bytes; at most {MAX_QUERY_BYTES} are accepted",
            query.len()
        )));
    }
    if query.trim().is_empty() {
        return Err(Error::InvalidArgument("the search query is empty".into()));
    }
    match options.limit {
        0 => Ok(DEFAULT_RESULTS),
        n if n > MAX_RESULTS => Err(Error::InvalidArgument(format!(
            "a search returns at most {MAX_RESULTS} results; {n} were asked for"
        ))),
        n => Ok(n),
    }
}

/// `{"query","mode","results":[{"name","description","score"}]}`.
pub fn hits_json(query: &str, mode: SearchMode, hits: &[SearchHit]) -> serde_json::Value {
    serde_json::json!({
        "query": query,
        "mode": match mode { SearchMode::Words => "words", SearchMode::Regex => "regex" },
        "results": hits.iter().map(|h| serde_json::json!({
            "name": h.name,
            "description": h.description,
            "score": (f64::from(h.score) * 1000.0).round() / 1000.0,
        })).collect::<Vec<_>>(),
    })
}
