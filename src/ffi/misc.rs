//! Memory, errors and version.

use std::ffi::{c_char, c_void};

use super::boundary::*;
use super::types::*;

/// Frees text that capstan returned through a `char **out`. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn capstan_string_free(ptr: *mut c_char) {
    if !ptr.is_null() {
        libc::free(ptr.cast::<c_void>());
    }
}

/// Copies the message of the last failure on the calling thread into `buf`
/// (NUL-terminated, truncated on a UTF-8 boundary to fit `cap`; `buf` may be
/// NULL when `cap` is 0). Returns the message's full length in bytes, without
/// the NUL: call again with a bigger buffer if it is >= `cap`. Per OS thread;
/// 0 after a success (header: Conventions). Does not change the message.
#[no_mangle]
pub unsafe extern "C" fn capstan_error_message(buf: *mut c_char, cap: usize) -> usize {
    let message = last_error().message;
    if !buf.is_null() && cap > 0 {
        let mut n = message.len().min(cap - 1);
        while !message.is_char_boundary(n) {
            n -= 1;
        }
        std::ptr::copy_nonoverlapping(message.as_ptr(), buf.cast::<u8>(), n);
        *buf.add(n) = 0;
    }
    message.len()
}

/// The last failure on the calling thread as structured data, for hosts that
/// branch on it (the message is for people): `*out` (NUL-terminated, owned
/// by the caller, freed with `capstan_string_free`) gets
///
/// ```text
/// {"status": "CAPSTAN_ERR_PROVIDER_ERROR", "status_code": 18,
///  "message": "provider error (rate_limit_error): ...",
///  "provider": {"kind": "rate_limit_error", "message": "...",
///               "type": "rate_limit_error", "code": null,
///               "http_status": null, "retry_after_ms": null},
///  "pointer": null}
/// ```
///
/// `status`/`status_code`: the failing function's status (name and number;
/// `"CAPSTAN_OK"`/0 when the last call succeeded, the rest then empty or
/// null). `message`: what `capstan_error_message` returns. `provider`
/// (CAPSTAN_ERR_PROVIDER_ERROR only, else null): `kind` as the message shows
/// it, the provider's `message`, and each of `type` (its error type or status
/// name), `code` (text), `http_status` (a number, when the body carries one)
/// and `retry_after_ms` (when the body carries a retry delay) or null where
/// the provider sent none. `pointer` (CAPSTAN_ERR_INVALID_SCHEMA only, else
/// null): the JSON Pointer of the offending place in the tool's schema, `""`
/// for its root. Keys may be added in later versions, never removed.
///
/// Like `capstan_error_message` it reads and does not change the last error
/// (NULL `out` is NULL_PARAMETER, without recording it). Per OS thread.
#[no_mangle]
pub unsafe extern "C" fn capstan_error_json(
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    if out.is_null() {
        return CAPSTAN_ERR_NULL_PARAMETER;
    }
    // Not `guard`: that would replace the last error this reads.
    let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        write_text(&error_value(last_error()).to_string(), out, out_len).is_ok()
    }));
    match written {
        Ok(true) => CAPSTAN_OK,
        Ok(false) => CAPSTAN_ERR_INTERNAL,
        Err(_) => CAPSTAN_ERR_PANIC,
    }
}

/// The JSON of `capstan_error_json`.
fn error_value(error: LastError) -> serde_json::Value {
    let provider = error.provider.map(|(kind, message, d)| {
        serde_json::json!({
            "kind": kind,
            "message": message,
            "type": d.error_type,
            "code": d.code,
            "http_status": d.http_status,
            "retry_after_ms": d.retry_after_ms,
        })
    });
    // SAFETY: capstan_status_name returns a static NUL-terminated string.
    let name = unsafe { std::ffi::CStr::from_ptr(capstan_status_name(error.status)) };
    serde_json::json!({
        "status": name.to_str().unwrap_or("CAPSTAN_UNKNOWN_STATUS"),
        "status_code": error.status,
        "message": error.message,
        "provider": provider,
        "pointer": error.pointer,
    })
}

/// The constant's name of a status (`"CAPSTAN_OK"`, ...), or
/// `"CAPSTAN_UNKNOWN_STATUS"`. Static; never NULL.
#[no_mangle]
pub extern "C" fn capstan_status_name(status: capstan_status) -> *const c_char {
    let name: &'static [u8] = match status {
        CAPSTAN_OK => b"CAPSTAN_OK\0",
        CAPSTAN_ERR_NULL_PARAMETER => b"CAPSTAN_ERR_NULL_PARAMETER\0",
        CAPSTAN_ERR_INVALID_ARGUMENT => b"CAPSTAN_ERR_INVALID_ARGUMENT\0",
        CAPSTAN_ERR_INVALID_UTF8 => b"CAPSTAN_ERR_INVALID_UTF8\0",
        CAPSTAN_ERR_INVALID_NAME => b"CAPSTAN_ERR_INVALID_NAME\0",
        CAPSTAN_ERR_INVALID_SCHEMA => b"CAPSTAN_ERR_INVALID_SCHEMA\0",
        CAPSTAN_ERR_INVALID_CALLS => b"CAPSTAN_ERR_INVALID_CALLS\0",
        CAPSTAN_ERR_INVALID_RESULTS => b"CAPSTAN_ERR_INVALID_RESULTS\0",
        CAPSTAN_ERR_INVALID_RESPONSE => b"CAPSTAN_ERR_INVALID_RESPONSE\0",
        CAPSTAN_ERR_INVALID_CONTENT => b"CAPSTAN_ERR_INVALID_CONTENT\0",
        CAPSTAN_ERR_NOT_FOUND => b"CAPSTAN_ERR_NOT_FOUND\0",
        CAPSTAN_ERR_ALREADY_COMPLETED => b"CAPSTAN_ERR_ALREADY_COMPLETED\0",
        CAPSTAN_ERR_STALE_HANDLE => b"CAPSTAN_ERR_STALE_HANDLE\0",
        CAPSTAN_ERR_TIMEOUT => b"CAPSTAN_ERR_TIMEOUT\0",
        CAPSTAN_ERR_SHUTTING_DOWN => b"CAPSTAN_ERR_SHUTTING_DOWN\0",
        CAPSTAN_ERR_WRONG_CONTEXT => b"CAPSTAN_ERR_WRONG_CONTEXT\0",
        CAPSTAN_ERR_PANIC => b"CAPSTAN_ERR_PANIC\0",
        CAPSTAN_ERR_INTERNAL => b"CAPSTAN_ERR_INTERNAL\0",
        CAPSTAN_ERR_PROVIDER_ERROR => b"CAPSTAN_ERR_PROVIDER_ERROR\0",
        CAPSTAN_ERR_UNSUPPORTED => b"CAPSTAN_ERR_UNSUPPORTED\0",
        CAPSTAN_ERR_TRANSPORT => b"CAPSTAN_ERR_TRANSPORT\0",
        CAPSTAN_ERR_STREAM_TRUNCATED => b"CAPSTAN_ERR_STREAM_TRUNCATED\0",
        CAPSTAN_ERR_STREAM_TOO_LARGE => b"CAPSTAN_ERR_STREAM_TOO_LARGE\0",
        CAPSTAN_ERR_MCP_CONNECT => b"CAPSTAN_ERR_MCP_CONNECT\0",
        _ => b"CAPSTAN_UNKNOWN_STATUS\0",
    };
    name.as_ptr().cast::<c_char>()
}

/// The library's version, e.g. "0.2.0". Static; never NULL.
#[no_mangle]
pub extern "C" fn capstan_version_string() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0")
        .as_ptr()
        .cast::<c_char>()
}

/// The library's version as one number, `MAJOR * 1000000 + MINOR * 1000 +
/// PATCH` (0.4.0 gives 4000): compare with `CAPSTAN_VERSION_NUMBER` (the
/// header's) at run time. Any thread; never fails.
#[no_mangle]
pub extern "C" fn capstan_version_number() -> u32 {
    // Checked at compile time against MAJOR/MINOR/PATCH (src/ffi/types.rs).
    CAPSTAN_VERSION_NUMBER
}

/// The optional features this build has, as `CAPSTAN_FEATURE_*` bits: test
/// a bit before using what it names, rather than calling and getting
/// CAPSTAN_ERR_UNSUPPORTED. Bits not defined by this header may be set by a
/// newer library; ignore them. Any thread; never fails.
#[no_mangle]
pub extern "C" fn capstan_features_mask() -> u32 {
    let mcp = if cfg!(feature = "mcp") {
        CAPSTAN_FEATURE_MCP_SERVER | CAPSTAN_FEATURE_MCP_MOUNT | CAPSTAN_FEATURE_MCP_HTTP
    } else {
        0
    };
    mcp | CAPSTAN_FEATURE_STREAM
}
