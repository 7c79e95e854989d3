//! `capstan_<struct>_init`: the `_INIT` macros as functions, for hosts
//! without a C preprocessor (Go's cgo shim, Python ctypes, Swift, Node,
//! Java). Each fills the whole struct: `struct_size` = the size this library
//! knows, every other field zero (the defaults), exactly what the struct's
//! `CAPSTAN_<STRUCT>_INIT` macro gives. As many bytes as this library's
//! struct has: a binding for an older header that called one into its own,
//! smaller struct would have it overrun; such a binding fills its struct
//! itself (the Java binding does so for every struct).

use super::boundary::*;
use super::mcp_client::capstan_mcp_mount_options;
use super::mcp_server::capstan_mcp_server_options;
use super::search::{capstan_search_options, capstan_search_tool_options};
use super::stream::capstan_stream_sink;
use super::types::*;

/// Writes a zeroed `T` with its leading `uint32_t struct_size` set.
///
/// # Safety
/// `ptr` must be NULL or point to a writable `T`; all-zero bytes must be a
/// valid `T` whose first field is a `u32`.
unsafe fn init<T>(ptr: *mut T) -> capstan_status {
    guard(|| {
        non_null(ptr, "opts")?;
        std::ptr::write_bytes(ptr, 0, 1);
        *ptr.cast::<u32>() = std::mem::size_of::<T>() as u32;
        Ok(())
    })
}

/// Fills `*def` as `CAPSTAN_TOOL_DEF_INIT` does: `struct_size` set, every
/// other field zero/NULL. NULL_PARAMETER if `def` is NULL. Any thread.
#[no_mangle]
pub unsafe extern "C" fn capstan_tool_def_init(def: *mut capstan_tool_def) -> capstan_status {
    init(def)
}

/// Fills `*opts` as `CAPSTAN_REGISTRY_OPTIONS_INIT` does (the defaults).
/// NULL_PARAMETER if `opts` is NULL. Any thread.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_options_init(
    opts: *mut capstan_registry_options,
) -> capstan_status {
    init(opts)
}

/// Fills `*opts` as `CAPSTAN_EXEC_OPTIONS_INIT` does (the defaults).
/// NULL_PARAMETER if `opts` is NULL. Any thread.
#[no_mangle]
pub unsafe extern "C" fn capstan_exec_options_init(
    opts: *mut capstan_exec_options,
) -> capstan_status {
    init(opts)
}

/// Fills `*cbs` as `CAPSTAN_JOURNAL_CALLBACKS_INIT` does (no callbacks).
/// NULL_PARAMETER if `cbs` is NULL. Any thread.
#[no_mangle]
pub unsafe extern "C" fn capstan_journal_callbacks_init(
    cbs: *mut super::journal::capstan_journal_callbacks,
) -> capstan_status {
    init(cbs)
}

/// Fills `*opts` as `CAPSTAN_EXPORT_OPTIONS_INIT` does (the defaults).
/// NULL_PARAMETER if `opts` is NULL. Any thread.
#[no_mangle]
pub unsafe extern "C" fn capstan_export_options_init(
    opts: *mut capstan_export_options,
) -> capstan_status {
    init(opts)
}

/// Fills `*sink` as `CAPSTAN_STREAM_SINK_INIT` does (no callbacks).
/// NULL_PARAMETER if `sink` is NULL. Any thread.
#[no_mangle]
pub unsafe extern "C" fn capstan_stream_sink_init(
    sink: *mut capstan_stream_sink,
) -> capstan_status {
    init(sink)
}

/// Fills `*opts` as `CAPSTAN_MCP_SERVER_OPTIONS_INIT` does (the defaults).
/// NULL_PARAMETER if `opts` is NULL. Any thread; also without feature `mcp`.
#[no_mangle]
pub unsafe extern "C" fn capstan_mcp_server_options_init(
    opts: *mut capstan_mcp_server_options,
) -> capstan_status {
    init(opts)
}

/// Fills `*opts` as `CAPSTAN_MCP_MOUNT_OPTIONS_INIT` does (no server set
/// yet: set `argv` or `url`). NULL_PARAMETER if `opts` is NULL. Any thread;
/// also without feature `mcp`.
#[no_mangle]
pub unsafe extern "C" fn capstan_mcp_mount_options_init(
    opts: *mut capstan_mcp_mount_options,
) -> capstan_status {
    init(opts)
}

/// Fills `*opts` as `CAPSTAN_RUNTIME_OPTIONS_INIT` does (the defaults: 256
/// pool threads, 10 s keep-alive). NULL_PARAMETER if `opts` is NULL. Any
/// thread.
#[no_mangle]
pub unsafe extern "C" fn capstan_runtime_options_init(
    opts: *mut super::runtime::capstan_runtime_options,
) -> capstan_status {
    init(opts)
}

/// Fills `*opts` as `CAPSTAN_SEARCH_OPTIONS_INIT` does (the defaults: words,
/// 5 results). NULL_PARAMETER if `opts` is NULL. Any thread.
#[no_mangle]
pub unsafe extern "C" fn capstan_search_options_init(
    opts: *mut capstan_search_options,
) -> capstan_status {
    init(opts)
}

/// Fills `*opts` as `CAPSTAN_SEARCH_TOOL_OPTIONS_INIT` does (the defaults:
/// "tool_search", its default description, 5 results, words).
/// NULL_PARAMETER if `opts` is NULL. Any thread.
#[no_mangle]
pub unsafe extern "C" fn capstan_search_tool_options_init(
    opts: *mut capstan_search_tool_options,
) -> capstan_status {
    init(opts)
}
