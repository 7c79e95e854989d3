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
    let message = last_error();
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
