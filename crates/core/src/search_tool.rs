//! The built-in search tool: a tool the model calls in any format to find
//! tools it was not shown. Tools registered `DEFERRED` are left out of the
//! provider exports until this tool has found them (`visible_specs`); from
//! then on they are exported with the others, so the model sees them on its
//! next request. The exports themselves are `capstan-formats`' (its
//! `export::ExportTools`).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::Error;
use crate::exec::{Call, ToolDef};
use crate::registry::Registry;
use crate::search::{tool_parameters, SearchMode, SearchOptions, ToolConfig};
use crate::search::{DEFAULT_RESULTS, MAX_RESULTS};

pub use crate::search::{DEFAULT_TOOL_DESCRIPTION, DEFAULT_TOOL_NAME};
use crate::tool::{ToolFlags, ToolSpec};

/// The search tool's name, description and result count.
#[derive(Clone, Debug)]
pub struct SearchToolOptions {
    /// Empty: `DEFAULT_TOOL_NAME`.
    pub name: String,
    /// Empty: `DEFAULT_TOOL_DESCRIPTION`.
    pub description: String,
    /// Tools listed per search; 0: `DEFAULT_RESULTS`; at most `MAX_RESULTS`.
    pub limit: usize,
    /// How the model's query is read (words by default).
    pub mode: SearchMode,
}

impl Default for SearchToolOptions {
    fn default() -> Self {
        SearchToolOptions {
            name: String::new(),
            description: String::new(),
            limit: 0,
            mode: SearchMode::Words,
        }
    }
}

impl Registry {
    /// Registers the search tool (replacing a tool of its name, on purpose:
    /// calling this again reconfigures it). Its calls
    /// take `{"query": string}` and return
    /// `{"tools":[{"name","description"}]}`, the search tool itself left
    /// out; every deferred tool listed is loaded (`loaded_tools`).
    pub fn add_search_tool(&self, options: SearchToolOptions) -> Result<(), Error> {
        let limit = match options.limit {
            0 => DEFAULT_RESULTS,
            n if n > MAX_RESULTS => {
                return Err(Error::InvalidArgument(format!(
                    "the search tool lists at most {MAX_RESULTS} tools; {n} were asked for"
                )))
            }
            n => n,
        };
        let name = if options.name.is_empty() {
            DEFAULT_TOOL_NAME.to_string()
        } else {
            options.name
        };
        let description = if options.description.is_empty() {
            DEFAULT_TOOL_DESCRIPTION.to_string()
        } else {
            options.description
        };
        // Weak: the registry holds this tool, the tool must not hold the registry.
        let weak = Arc::downgrade(&self.shared);
        let own_name = name.clone();
        let mode = options.mode;
        let handler = move |call: Call| {
            let Some(shared) = weak.upgrade() else {
                let _ = call.fail("the registry is closed");
                return;
            };
            let registry = Registry { shared };
            let query = call
                .arguments()
                .get("query")
                .and_then(Value::as_str)
                .unwrap_or_default();
            // One more than asked, in case the search tool is among them.
            let options = SearchOptions {
                limit: (limit + 1).min(MAX_RESULTS),
                mode,
            };
            match registry.search(query, &options) {
                Ok(hits) => {
                    let hits: Vec<_> = hits
                        .into_iter()
                        .filter(|h| h.name != own_name)
                        .take(limit)
                        .collect();
                    registry.load_tools(hits.iter().map(|h| h.name.clone()));
                    let tools: Vec<Value> = hits
                        .iter()
                        .map(|h| json!({"name": h.name, "description": h.description}))
                        .collect();
                    let _ = call.complete_value(&json!({ "tools": tools }));
                }
                Err(e) => {
                    let _ = call.fail(e.to_string());
                }
            }
        };
        let config = ToolConfig {
            name: name.clone(),
            limit,
            mode,
        };
        self.register(ToolDef {
            name,
            description,
            parameters: tool_parameters(mode),
            handler: Box::new(handler),
            timeout_ms: 0,
            max_output_chars: 0,
            flags: ToolFlags(ToolFlags::REPLACE),
        })?;
        if let Ok(mut tool) = self.shared.search.tool.lock() {
            *tool = Some(config);
        }
        Ok(())
    }

    /// Marks `names` as loaded: exported from now on though `DEFERRED`.
    pub fn load_tools(&self, names: impl IntoIterator<Item = String>) {
        if let Ok(mut loaded) = self.shared.search.loaded.lock() {
            loaded.extend(names);
        }
    }

    /// The tools the search tool (or `load_tools`) has loaded, sorted.
    pub fn loaded_tools(&self) -> Vec<String> {
        match self.shared.search.loaded.lock() {
            Ok(loaded) => loaded.iter().cloned().collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Forgets every loaded tool (a new conversation): deferred tools are
    /// left out of the exports again until found.
    pub fn unload_tools(&self) {
        if let Ok(mut loaded) = self.shared.search.loaded.lock() {
            loaded.clear();
        }
    }

    /// Remembers how the last export in a provider format showed deferred
    /// tools (`None`: that format's state is left as it is): whether the
    /// last OpenAI Responses export was native and strict, whether the
    /// last Anthropic export was native.
    pub fn note_native_export(&self, openai_strict: Option<bool>, anthropic: Option<bool>) {
        if let Ok(mut state) = self.shared.search.native.lock() {
            if let Some(strict) = openai_strict {
                state.openai_strict = strict;
            }
            if let Some(native) = anthropic {
                state.anthropic = native;
            }
        }
    }

    /// The specs a provider is shown: every tool but the deferred ones not
    /// loaded, sorted by name.
    pub fn visible_specs(&self) -> Vec<ToolSpec> {
        let loaded = match self.shared.search.loaded.lock() {
            Ok(loaded) => loaded.clone(),
            Err(_) => Default::default(),
        };
        self.specs()
            .into_iter()
            .filter(|s| !s.flags.deferred() || loaded.contains(&s.name))
            .collect()
    }
}
