//! Search over a registry's tools (issue #32) in the C ABI.

use std::ffi::c_char;

use super::boundary::*;
use super::flags::CAPSTAN_SEARCH_REGEX;
use super::registry::registry_ref;
use super::types::*;
use crate::search::{self, SearchMode, SearchOptions};
use crate::search_tool::SearchToolOptions;

/// Options of `capstan_registry_search_json`. NULL means defaults (words,
/// 5 results).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct capstan_search_options {
    /// `sizeof(capstan_search_options)`.
    pub struct_size: u32,
    /// `CAPSTAN_SEARCH_*` flags.
    pub flags: u32,
    /// At most this many results (1 to 100); 0 = 5.
    pub limit: u32,
}

/// The registered tools that best match `query` (UTF-8, `query_len` bytes or
/// `CAPSTAN_NTS`), best first:
/// `{"query","mode":"words"|"regex","results":[{"name","description","score"}]}`.
/// Words are matched against tool names (split at `_`, `-`, `.`, case
/// changes and digits), descriptions, and parameter names and descriptions,
/// plurals and -ing/-ed forms meeting their stem; ranked by BM25, a word in
/// the name weighing most. Tools registered, replaced or removed (mounted MCP
/// tools included) are found, or no longer found, by the next search.
///
/// The index is built on the registry's first search (cost proportional to
/// its tools) and updated with each registration from then on.
/// Bounds (docs/limits.md): a query of 1 to 1024 bytes, at most 100 results,
/// a regular expression compiling to at most 1 MiB.
///
/// `*out` is owned by the caller (`capstan_string_free`), written only on
/// success. Any thread, also from inside a tool callback.
/// Fails with NULL_PARAMETER (reg, query, out), INVALID_UTF8 (query),
/// INVALID_ARGUMENT (empty or too long query, limit past 100, unknown flag,
/// a pattern that does not compile; the message says which).
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_search_json(
    reg: *const capstan_registry,
    query: *const c_char,
    query_len: usize,
    opts: *const capstan_search_options,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        non_null(query, "query")?;
        non_null(out, "out")?;
        let query = text(query, query_len, "query")?;
        let opts = read_options(opts, std::mem::size_of::<capstan_search_options>(), "opts")?;
        let flags = opts.map(|o| o.flags).unwrap_or(0);
        super::flags::check(flags, &super::flags::SEARCH)?;
        let options = SearchOptions {
            limit: opts.map(|o| o.limit as usize).unwrap_or(0),
            mode: if flags & CAPSTAN_SEARCH_REGEX != 0 {
                SearchMode::Regex
            } else {
                SearchMode::Words
            },
        };
        let hits = registry.search(query, &options)?;
        let json = search::hits_json(query, options.mode, &hits).to_string();
        write_text(&json, out, out_len)
    })
}

/// Options of `capstan_registry_add_search_tool`. NULL means defaults.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct capstan_search_tool_options {
    /// `sizeof(capstan_search_tool_options)`.
    pub struct_size: u32,
    /// `CAPSTAN_SEARCH_*` flags: how the model's query is read.
    pub flags: u32,
    /// Tools listed per search (1 to 100); 0 = 5.
    pub limit: u32,
    /// The tool's name (NUL-terminated UTF-8); NULL = "tool_search".
    pub name: *const c_char,
    /// The tool's description (NUL-terminated UTF-8); NULL = a default that
    /// tells the model to search by what a tool does and that found tools
    /// are callable from its next turn.
    pub description: *const c_char,
}

/// Registers the built-in search tool in `reg` (replacing a tool of its
/// name): a tool the model calls, in any format, with `{"query": "..."}` to
/// find tools it was not shown. Its result is `{"tools":[{"name",
/// "description"}]}`: the best matches (as `capstan_registry_search_json`
/// finds them), the search tool itself left out. Every deferred tool
/// (`CAPSTAN_TOOL_DEFERRED`) it lists is loaded: exported by
/// `capstan_registry_tools_json` from then on, so a host that exports the
/// tools before each request (as after `capstan_registry_run_turn`) shows
/// the model what it found on its next turn. Loaded tools are per registry;
/// `capstan_registry_unload_tools` forgets them (a new conversation).
///
/// Strings are copied. Any thread. Fails with NULL_PARAMETER (reg),
/// INVALID_ARGUMENT (limit past 100, unknown flag, struct_size), INVALID_UTF8,
/// INVALID_NAME (name), SHUTTING_DOWN (closed registry).
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_add_search_tool(
    reg: *const capstan_registry,
    opts: *const capstan_search_tool_options,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        let opts = read_options(
            opts,
            std::mem::size_of::<capstan_search_tool_options>(),
            "opts",
        )?;
        let flags = opts.map(|o| o.flags).unwrap_or(0);
        super::flags::check(flags, &super::flags::SEARCH_TOOL)?;
        let (name, description) = match opts {
            Some(o) => (
                c_text(o.name, "opts->name")?.unwrap_or_default(),
                c_text(o.description, "opts->description")?.unwrap_or_default(),
            ),
            None => ("", ""),
        };
        registry.add_search_tool(SearchToolOptions {
            name: name.to_string(),
            description: description.to_string(),
            limit: opts.map(|o| o.limit as usize).unwrap_or(0),
            mode: if flags & CAPSTAN_SEARCH_REGEX != 0 {
                SearchMode::Regex
            } else {
                SearchMode::Words
            },
        })?;
        Ok(())
    })
}

/// Forgets the tools the search tool has loaded: deferred tools are left
/// out of the provider exports again until found. Any thread. Fails with
/// NULL_PARAMETER (reg) only.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_unload_tools(
    reg: *const capstan_registry,
) -> capstan_status {
    guard(|| {
        registry_ref(reg)?.unload_tools();
        Ok(())
    })
}
