//! The boundary itself: panic guard, last error, pointer and text checks,
//! owned output strings.

use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::types::*;
use crate::error::Error;

/// Why a C call failed.
pub(crate) enum Fail {
    Null(&'static str),
    Utf8(&'static str),
    BadArgument(String),
    Core(Error),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Core(e)
    }
}

/// The last failure on a thread, as `capstan_error_json` shows it.
#[derive(Default, Clone)]
pub(crate) struct LastError {
    pub(crate) status: capstan_status,
    pub(crate) message: String,
    /// `(kind, provider's message, detail)` of a provider error.
    pub(crate) provider: Option<(String, String, crate::error::ProviderDetail)>,
    /// JSON Pointer into the schema of an INVALID_SCHEMA failure.
    pub(crate) pointer: Option<String>,
}

thread_local! {
    static LAST_ERROR: RefCell<LastError> = RefCell::new(LastError::default());
}

/// Records the calling thread's last error. On a thread whose locals are
/// already gone (capstan called from a thread-exit destructor) the message
/// is dropped: never a panic, which would abort the host.
fn set_last_error(error: LastError) {
    let _ = LAST_ERROR.try_with(|e| {
        if let Ok(mut e) = e.try_borrow_mut() {
            *e = error;
        }
    });
}

/// A success empties the calling thread's last error (header: Conventions).
/// `try_with`: this runs outside the panic guard, possibly from a
/// thread-exit destructor after the thread-local is gone; then there is
/// nothing to clear.
fn clear_last_error() {
    let _ = LAST_ERROR.try_with(|e| {
        if let Ok(mut e) = e.try_borrow_mut() {
            if e.status != CAPSTAN_OK {
                *e = LastError::default();
            }
        }
    });
}

/// The calling thread's last error; on a thread whose locals are gone, a
/// message saying so.
pub(crate) fn last_error() -> LastError {
    LAST_ERROR
        .try_with(|e| e.try_borrow().map(|e| e.clone()).unwrap_or_default())
        .unwrap_or_else(|_| LastError {
            status: CAPSTAN_ERR_INTERNAL,
            message: "no error message: capstan was called while this thread was exiting".into(),
            ..LastError::default()
        })
}

/// The JSON Pointer a schema error message starts with (`at /properties/x:
/// ...`, the form of `schema::message`), `""` for `schema root: ...`.
fn schema_pointer(message: &str) -> Option<String> {
    if message.starts_with("schema root") {
        return Some(String::new());
    }
    let rest = message.strip_prefix("at /")?;
    let end = rest.find(": ").unwrap_or(rest.len());
    Some(format!("/{}", &rest[..end]))
}

fn status_of(e: &Error) -> capstan_status {
    match e {
        Error::InvalidArgument(_) => CAPSTAN_ERR_INVALID_ARGUMENT,
        Error::InvalidName(_) => CAPSTAN_ERR_INVALID_NAME,
        Error::InvalidSchema(_) => CAPSTAN_ERR_INVALID_SCHEMA,
        Error::InvalidCalls(_) => CAPSTAN_ERR_INVALID_CALLS,
        Error::InvalidResults(_) => CAPSTAN_ERR_INVALID_RESULTS,
        Error::InvalidResponse(_) => CAPSTAN_ERR_INVALID_RESPONSE,
        Error::ProviderError { .. } => CAPSTAN_ERR_PROVIDER_ERROR,
        Error::InvalidContent(_) => CAPSTAN_ERR_INVALID_CONTENT,
        Error::NotFound(_) => CAPSTAN_ERR_NOT_FOUND,
        Error::AlreadyCompleted(_) => CAPSTAN_ERR_ALREADY_COMPLETED,
        Error::StaleHandle(_) => CAPSTAN_ERR_STALE_HANDLE,
        Error::Timeout(_) => CAPSTAN_ERR_TIMEOUT,
        Error::ShuttingDown(_) => CAPSTAN_ERR_SHUTTING_DOWN,
        Error::WrongContext(_) => CAPSTAN_ERR_WRONG_CONTEXT,
        Error::Internal(_) => CAPSTAN_ERR_INTERNAL,
        Error::Unsupported(_) => CAPSTAN_ERR_UNSUPPORTED,
        Error::Transport(_) => CAPSTAN_ERR_TRANSPORT,
        Error::StreamTruncated(_) => CAPSTAN_ERR_STREAM_TRUNCATED,
        Error::StreamTooLarge(_) => CAPSTAN_ERR_STREAM_TOO_LARGE,
        Error::McpConnect(_) => CAPSTAN_ERR_MCP_CONNECT,
    }
}

fn record(fail: Fail) -> capstan_status {
    let error = match fail {
        Fail::Null(name) => LastError {
            status: CAPSTAN_ERR_NULL_PARAMETER,
            message: format!("{name} must not be NULL"),
            ..LastError::default()
        },
        Fail::Utf8(name) => LastError {
            status: CAPSTAN_ERR_INVALID_UTF8,
            message: format!("{name} is not valid UTF-8"),
            ..LastError::default()
        },
        Fail::BadArgument(message) => LastError {
            status: CAPSTAN_ERR_INVALID_ARGUMENT,
            message,
            ..LastError::default()
        },
        Fail::Core(e) => {
            let provider = match &e {
                Error::ProviderError {
                    kind,
                    message,
                    detail,
                } => Some((kind.clone(), message.clone(), (**detail).clone())),
                _ => None,
            };
            let pointer = match &e {
                Error::InvalidSchema(message) => schema_pointer(message),
                _ => None,
            };
            LastError {
                status: status_of(&e),
                message: e.to_string(),
                provider,
                pointer,
            }
        }
    };
    let status = error.status;
    set_last_error(error);
    status
}

fn panicked() -> LastError {
    LastError {
        status: CAPSTAN_ERR_PANIC,
        message: "internal panic caught at the capstan boundary".into(),
        ..LastError::default()
    }
}

/// Runs an exported body: catches panics, records the error of a failure,
/// clears it on success.
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Fail>) -> capstan_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => {
            clear_last_error();
            CAPSTAN_OK
        }
        Ok(Err(fail)) => record(fail),
        Err(_) => {
            set_last_error(panicked());
            CAPSTAN_ERR_PANIC
        }
    }
}

/// Like `guard`, for functions that return a value; `fallback` on failure.
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> Result<T, Fail>) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => {
            clear_last_error();
            v
        }
        Ok(Err(fail)) => {
            record(fail);
            fallback
        }
        Err(_) => {
            set_last_error(panicked());
            fallback
        }
    }
}

/// A non-NULL pointer, or `Fail::Null(name)`.
/// A C `timeout_ms` where UINT32_MAX means "no limit", as a wait bound
/// (`Duration::MAX` for no limit).
pub(crate) fn wait_limit(timeout_ms: u32) -> std::time::Duration {
    match timeout_ms {
        u32::MAX => std::time::Duration::MAX,
        ms => std::time::Duration::from_millis(u64::from(ms)),
    }
}

pub(crate) fn non_null<T>(ptr: *const T, name: &'static str) -> Result<*const T, Fail> {
    if ptr.is_null() {
        Err(Fail::Null(name))
    } else {
        Ok(ptr)
    }
}

/// Borrows `(ptr, len)` text; `len == CAPSTAN_NTS` means NUL-terminated.
///
/// # Safety
/// `ptr` must point to `len` readable bytes (or a NUL-terminated string).
pub(crate) unsafe fn text<'a>(
    ptr: *const c_char,
    len: usize,
    name: &'static str,
) -> Result<&'a str, Fail> {
    if ptr.is_null() {
        if len == 0 {
            return Ok("");
        }
        return Err(Fail::Null(name));
    }
    let bytes = if len == CAPSTAN_NTS {
        CStr::from_ptr(ptr).to_bytes()
    } else {
        std::slice::from_raw_parts(ptr.cast::<u8>(), len)
    };
    std::str::from_utf8(bytes).map_err(|_| Fail::Utf8(name))
}

/// Borrows an optional NUL-terminated string (NULL gives `None`).
///
/// # Safety
/// `ptr` must be NULL or a NUL-terminated string.
pub(crate) unsafe fn c_text<'a>(
    ptr: *const c_char,
    name: &'static str,
) -> Result<Option<&'a str>, Fail> {
    if ptr.is_null() {
        return Ok(None);
    }
    let bytes = CStr::from_ptr(ptr).to_bytes();
    std::str::from_utf8(bytes)
        .map(Some)
        .map_err(|_| Fail::Utf8(name))
}

/// Copies `s` into a fresh `malloc`ed, NUL-terminated buffer owned by the
/// caller (freed with `capstan_string_free`), and writes the outputs.
///
/// # Safety
/// `out` must be writable; `out_len` NULL or writable.
pub(crate) unsafe fn write_text(
    s: &str,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> Result<(), Fail> {
    let buf = libc::malloc(s.len() + 1).cast::<u8>();
    if buf.is_null() {
        return Err(Fail::Core(Error::Internal("out of memory".into())));
    }
    std::ptr::copy_nonoverlapping(s.as_ptr(), buf, s.len());
    *buf.add(s.len()) = 0;
    *out = buf.cast::<c_char>();
    if !out_len.is_null() {
        *out_len = s.len();
    }
    Ok(())
}

/// The C name of a versioned struct type (`capstan_exec_options`), for messages.
pub(crate) fn struct_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    full.rsplit("::").next().unwrap_or(full)
}

/// The largest `struct_size` accepted: a bound on what capstan reads from a
/// host that set a wild value (Linux's copy_struct_from_user bounds its
/// reads by a page the same way).
pub(crate) const MAX_STRUCT_SIZE: usize = 4096;

/// Checks the part of a versioned struct this capstan does not know: a
/// `size` (the host's `struct_size`) past `known` bytes is accepted only if
/// every byte from `known` to `size` is zero (a newer header's fields left at
/// their defaults), the rule of Linux's `copy_struct_from_user`. Else
/// INVALID_ARGUMENT naming the struct: the host asked for something this
/// version cannot do, and ignoring it would be silent misbehaviour.
///
/// # Safety
/// `ptr` must point to at least `size` readable bytes.
pub(crate) unsafe fn check_unknown_tail(
    ptr: *const u8,
    size: usize,
    known: usize,
    struct_name: &str,
) -> Result<(), Fail> {
    if size <= known {
        return Ok(());
    }
    if size > MAX_STRUCT_SIZE {
        return Err(Fail::BadArgument(format!(
            "{struct_name}.struct_size is {size}, more than any capstan struct can be \
             ({MAX_STRUCT_SIZE}): set it to sizeof({struct_name})"
        )));
    }
    let tail = std::slice::from_raw_parts(ptr.add(known), size - known);
    if let Some(at) = tail.iter().position(|&b| b != 0) {
        return Err(Fail::BadArgument(format!(
            "{struct_name} is {size} bytes (struct_size) but this capstan ({}) knows only \
             {known}, and byte {} past them is not zero: a field of a newer capstan is set \
             that this library cannot honour (use a library at least as new as the header)",
            env!("CARGO_PKG_VERSION"),
            at
        )));
    }
    Ok(())
}

/// Reads a versioned options struct: `struct_size` must cover at least
/// `min_size` bytes; fields past `struct_size` (a newer capstan's) are zero;
/// bytes past what this capstan knows must be zero (`check_unknown_tail`).
///
/// # Safety
/// `ptr` must be NULL or point to at least `struct_size` readable bytes, whose
/// first field is a `uint32_t struct_size`. All-zero bytes must be a valid `T`.
pub(crate) unsafe fn read_options<T: Copy>(
    ptr: *const T,
    min_size: usize,
    name: &'static str,
) -> Result<Option<T>, Fail> {
    if ptr.is_null() {
        return Ok(None);
    }
    let size = *ptr.cast::<u32>() as usize;
    if size < min_size {
        return Err(Fail::BadArgument(format!(
            "{name}.struct_size is {size}, expected at least {min_size} (set it to sizeof({}))",
            struct_name::<T>()
        )));
    }
    check_unknown_tail(
        ptr.cast::<u8>(),
        size,
        std::mem::size_of::<T>(),
        struct_name::<T>(),
    )?;
    let mut value = std::mem::MaybeUninit::<T>::zeroed();
    let n = size.min(std::mem::size_of::<T>());
    std::ptr::copy_nonoverlapping(ptr.cast::<u8>(), value.as_mut_ptr().cast::<u8>(), n);
    Ok(Some(value.assume_init()))
}

/// A host callback with its `user_data`, movable to the threads that call it.
/// The host promises (header: "Thread safety") that both may be used from any
/// thread; capstan never touches `user_data` itself.
pub(crate) struct HostFn<F> {
    pub(crate) f: F,
    pub(crate) user_data: *mut c_void,
}

impl<F: Copy> Clone for HostFn<F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F: Copy> Copy for HostFn<F> {}
unsafe impl<F> Send for HostFn<F> {}
unsafe impl<F> Sync for HostFn<F> {}

/// A host hook with its `user_data` and `destroy`: destroy runs once, when
/// this drops. The core holds it in an `Arc` and every invocation holds a
/// clone, so it drops (and destroy runs) after the last invocation returned.
pub(crate) struct OwnedHostFn<F> {
    pub(crate) f: F,
    pub(crate) user_data: *mut c_void,
    destroy: capstan_destroy_fn,
}

impl<F> OwnedHostFn<F> {
    pub(crate) fn new(f: F, user_data: *mut c_void, destroy: capstan_destroy_fn) -> Self {
        OwnedHostFn {
            f,
            user_data,
            destroy,
        }
    }
}

/// Runs `destroy(user_data)` now, for a hook that is not kept (NULL, or the
/// setter failed).
pub(crate) fn destroy_now(user_data: *mut c_void, destroy: capstan_destroy_fn) {
    drop(OwnedHostFn::new((), user_data, destroy));
}

impl<F> Drop for OwnedHostFn<F> {
    fn drop(&mut self) {
        if let Some(destroy) = self.destroy.take() {
            // SAFETY: the host handed us destroy to call once with user_data.
            unsafe { destroy(self.user_data) }
        }
    }
}

// As for HostFn: the host promises user_data may be used from any thread.
unsafe impl<F> Send for OwnedHostFn<F> {}
unsafe impl<F> Sync for OwnedHostFn<F> {}
