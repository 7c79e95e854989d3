//! What the fuzz targets share: C ABI wrappers that check the promises every
//! entry point makes (outputs written only on success, NUL-terminated UTF-8
//! text, a message for every failure, no caught panic), a registry of
//! well-behaved tools, and the realistic schemas.
//!
//! Every target goes through the C ABI (`capstan::ffi`), the contract, so
//! that refactoring the core does not break the targets.
#![allow(clippy::missing_safety_doc)]
// take_text and take_json read what a capstan function has just written through
// `char **out`: that pointer is capstan's promise, which is what they check.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, OnceLock};

use capstan::ffi::*;
use serde_json::Value;

/// A registry pointer that the targets keep in statics.
#[derive(Clone, Copy)]
pub struct Reg(pub *mut capstan_registry);
// SAFETY: a capstan_registry may be used from any thread (header: Thread safety).
unsafe impl Send for Reg {}
unsafe impl Sync for Reg {}

/// The message of the last failure on this thread; checks that it is
/// NUL-terminated UTF-8 of the length `capstan_error_message` reports.
pub fn last_error() -> String {
    unsafe {
        let n = capstan_error_message(std::ptr::null_mut(), 0);
        let mut buf = vec![0x55u8; n + 1];
        let again = capstan_error_message(buf.as_mut_ptr().cast(), buf.len());
        assert_eq!(
            n, again,
            "capstan_error_message changed length between two reads"
        );
        assert_eq!(buf[n], 0, "capstan_error_message did not NUL-terminate");
        buf.truncate(n);
        String::from_utf8(buf).expect("capstan_error_message wrote invalid UTF-8")
    }
}

/// A status from any entry point: a caught panic or an internal failure is a
/// bug; any other failure must come with a message.
pub fn check_status(st: capstan_status, what: &str) {
    assert!(
        st != CAPSTAN_ERR_PANIC && st != CAPSTAN_ERR_INTERNAL,
        "{what} returned status {st}: {}",
        last_error()
    );
    if st != CAPSTAN_OK {
        assert!(
            !last_error().is_empty(),
            "{what} failed with status {st} and no message"
        );
    }
}

/// Takes a `char **out, size_t *out_len` pair after a call: on success the
/// text (checked, then freed with `capstan_string_free`); on failure checks that
/// nothing was written.
pub fn take_text(st: capstan_status, out: *mut c_char, len: usize, what: &str) -> Option<String> {
    check_status(st, what);
    if st != CAPSTAN_OK {
        assert!(
            out.is_null(),
            "{what} failed with status {st} but wrote its output"
        );
        return None;
    }
    assert!(!out.is_null(), "{what} succeeded without output");
    unsafe {
        let bytes = CStr::from_ptr(out).to_bytes();
        assert_eq!(
            bytes.len(),
            len,
            "{what}: out_len disagrees with the NUL terminator"
        );
        let text = std::str::from_utf8(bytes)
            .unwrap_or_else(|_| panic!("{what} returned invalid UTF-8"))
            .to_owned();
        capstan_string_free(out);
        Some(text)
    }
}

/// Like [`take_text`], and the text must be JSON.
pub fn take_json(st: capstan_status, out: *mut c_char, len: usize, what: &str) -> Option<Value> {
    take_text(st, out, len, what).map(|text| {
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{what} returned non-JSON ({e}): {text}"))
    })
}

/// A NUL-terminated copy of `bytes` up to their first NUL.
pub fn c_string(bytes: &[u8]) -> CString {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    CString::new(&bytes[..end]).unwrap_or_default()
}

pub fn new_registry(flags: u32) -> Reg {
    let opts = capstan_registry_options {
        struct_size: std::mem::size_of::<capstan_registry_options>() as u32,
        flags,
        max_result_bytes: 0,
    };
    let mut reg = std::ptr::null_mut();
    let st = unsafe { capstan_registry_new(&opts, &mut reg) };
    assert_eq!(st, CAPSTAN_OK, "capstan_registry_new: {}", last_error());
    Reg(reg)
}

/// Registers a tool; returns the status (checked).
pub fn register(
    reg: Reg,
    name: &CStr,
    parameters: Option<&CStr>,
    callback: unsafe extern "C" fn(*mut c_void, *mut capstan_call),
    timeout_ms: u32,
    flags: u32,
) -> capstan_status {
    let def = capstan_tool_def {
        struct_size: std::mem::size_of::<capstan_tool_def>() as u32,
        name: name.as_ptr(),
        description: c"A tool of the fuzz targets.".as_ptr(),
        parameters: parameters.map_or(std::ptr::null(), CStr::as_ptr),
        callback: Some(callback),
        user_data: std::ptr::null_mut(),
        destroy: None,
        timeout_ms,
        max_output_chars: 0,
        flags,
        mcp_meta: std::ptr::null(),
    };
    let st = unsafe { capstan_registry_add_tool(reg.0, &def) };
    check_status(st, "capstan_registry_add_tool");
    st
}

// --- tools ------------------------------------------------------------------

fn completed(st: capstan_status, what: &str) {
    // A call may time out or be cancelled at any moment: those are not bugs.
    assert!(
        matches!(
            st,
            CAPSTAN_OK | CAPSTAN_ERR_ALREADY_COMPLETED | CAPSTAN_ERR_STALE_HANDLE
        ),
        "{what} returned {st}: {}",
        last_error()
    );
}

/// Returns its arguments as JSON content.
pub unsafe extern "C" fn tool_echo(_: *mut c_void, call: *mut capstan_call) {
    let mut len = 0;
    let args = capstan_call_arguments(call, &mut len);
    if args.is_null() {
        return; // timed out or cancelled already
    }
    completed(
        capstan_call_return(call, CAPSTAN_CONTENT_JSON, args, len),
        "echo",
    );
}

/// Returns its arguments as content parts (`CAPSTAN_CONTENT_PARTS`): the
/// fuzzer writes `{"content": [...blocks...], "structuredContent": ...}`
/// into the arguments. Parts that fail their check still complete the call
/// (a tool error), with INVALID_CONTENT.
pub unsafe extern "C" fn tool_parts(_: *mut c_void, call: *mut capstan_call) {
    let mut len = 0;
    let args = capstan_call_arguments(call, &mut len);
    if args.is_null() {
        return; // timed out or cancelled already
    }
    let st = capstan_call_return(call, CAPSTAN_CONTENT_PARTS, args, len);
    if st != CAPSTAN_ERR_INVALID_CONTENT {
        completed(st, "parts");
    }
}

/// Fails with a message.
pub unsafe extern "C" fn tool_fail(_: *mut c_void, call: *mut capstan_call) {
    completed(
        capstan_call_fail(call, c"it failed".as_ptr(), CAPSTAN_NTS),
        "fail",
    );
}

/// Returns its id and name as text (non-ASCII included).
pub unsafe extern "C" fn tool_text(_: *mut c_void, call: *mut capstan_call) {
    let (mut id_len, mut name_len) = (0, 0);
    let id = capstan_call_id(call, &mut id_len);
    let name = capstan_call_tool(call, &mut name_len);
    if id.is_null() || name.is_null() {
        return;
    }
    let text = format!(
        "{} ran as {} ✓",
        String::from_utf8_lossy(std::slice::from_raw_parts(name.cast(), name_len)),
        String::from_utf8_lossy(std::slice::from_raw_parts(id.cast(), id_len)),
    );
    completed(
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, text.as_ptr().cast(), text.len()),
        "text",
    );
}

/// Never completes: ends by its timeout.
pub unsafe extern "C" fn tool_hang(_: *mut c_void, _: *mut capstan_call) {}

/// Waits (bounded) until cancelled or timed out, then returns anyway.
pub unsafe extern "C" fn tool_wait(_: *mut c_void, call: *mut capstan_call) {
    for _ in 0..200 {
        if capstan_call_cancelled(call) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    completed(
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, c"late".as_ptr(), CAPSTAN_NTS),
        "wait",
    );
}

fn completer() -> &'static Mutex<Sender<usize>> {
    static COMPLETER: OnceLock<Mutex<Sender<usize>>> = OnceLock::new();
    COMPLETER.get_or_init(|| {
        let (tx, rx) = channel::<usize>();
        std::thread::spawn(move || {
            for (i, call) in rx.into_iter().enumerate() {
                let call = call as *mut capstan_call;
                let st = unsafe {
                    if i % 2 == 0 {
                        capstan_call_return(
                            call,
                            CAPSTAN_CONTENT_JSON,
                            c"{\"later\":true}".as_ptr(),
                            CAPSTAN_NTS,
                        )
                    } else {
                        capstan_call_fail(call, c"failed later".as_ptr(), CAPSTAN_NTS)
                    }
                };
                completed(st, "deferred completion");
            }
        });
        Mutex::new(tx)
    })
}

/// Hands its call to another thread, which completes it later.
pub unsafe extern "C" fn tool_defer(_: *mut c_void, call: *mut capstan_call) {
    let sent = completer().lock().map(|tx| tx.send(call as usize));
    assert!(matches!(sent, Ok(Ok(()))), "the completer thread is gone");
}

/// Approves calls whose id has an even length; denies the others with a reason.
pub unsafe extern "C" fn approver(_: *mut c_void, approval: *mut capstan_approval) {
    let mut len = 0;
    let id = capstan_approval_id(approval, &mut len);
    assert!(
        !id.is_null(),
        "approval handle not live inside the approver"
    );
    let mut args_len = 0;
    let args = capstan_approval_arguments(approval, &mut args_len);
    assert!(!args.is_null(), "approval arguments missing");
    let st = capstan_approval_decide(approval, len % 2 == 0, c"not today".as_ptr(), CAPSTAN_NTS);
    assert_eq!(st, CAPSTAN_OK, "capstan_approval_decide: {}", last_error());
}

/// The tools of [`tool_registry`], by name: what the seed corpora call.
pub const TOOL_NAMES: &[&str] = &[
    "echo", "fail", "text", "hang", "wait", "defer", "guarded", "serial",
];

/// A registry with one tool of each behaviour (ok, error, timeout, cancel,
/// deferred completion, approval, serial) and an approver.
pub fn tool_registry(flags: u32) -> Reg {
    let reg = new_registry(flags);
    let schema = c"{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"default\":1},\"s\":{\"type\":\"string\"}}}";
    let tools: [(
        &CStr,
        unsafe extern "C" fn(*mut c_void, *mut capstan_call),
        u32,
        u32,
    ); 9] = [
        (c"echo", tool_echo, 0, 0),
        (c"parts", tool_parts, 0, 0),
        (c"fail", tool_fail, 0, 0),
        (c"text", tool_text, 0, 0),
        (c"hang", tool_hang, 3, 0),
        (c"wait", tool_wait, 3, 0),
        (c"defer", tool_defer, 50, 0),
        (c"guarded", tool_echo, 0, CAPSTAN_TOOL_REQUIRES_APPROVAL),
        (c"serial", tool_echo, 0, CAPSTAN_TOOL_SERIAL),
    ];
    for (name, callback, timeout_ms, tool_flags) in tools {
        let st = register(reg, name, Some(schema), callback, timeout_ms, tool_flags);
        assert_eq!(st, CAPSTAN_OK, "registering {name:?}: {}", last_error());
    }
    let st =
        unsafe { capstan_registry_set_approver(reg.0, Some(approver), std::ptr::null_mut(), None) };
    assert_eq!(st, CAPSTAN_OK);
    reg
}

/// Execution options from one fuzzed byte: bits 0 and 2 flags, 3-4 limit,
/// 0x20 a 4 ms timeout, 0x40 approved ids, 0x80 a 3 ms batch deadline.
pub fn exec_options(byte: u8) -> capstan_exec_options {
    static APPROVED: [&CStr; 2] = [c"a", c"call_1"];
    static APPROVED_PTRS: OnceLock<[usize; 2]> = OnceLock::new();
    let ptrs = APPROVED_PTRS.get_or_init(|| APPROVED.map(|s| s.as_ptr() as usize));
    let with_ids = byte & 0x40 != 0;
    capstan_exec_options {
        struct_size: std::mem::size_of::<capstan_exec_options>() as u32,
        flags: u32::from(byte) & (CAPSTAN_EXEC_SEQUENTIAL | CAPSTAN_EXEC_STRICT_NULLS),
        limit: u32::from((byte >> 3) & 3),
        timeout_ms: if byte & 0x20 != 0 { 4 } else { 0 },
        approved_ids: if with_ids {
            ptrs.as_ptr().cast()
        } else {
            std::ptr::null()
        },
        approved_count: if with_ids { 2 } else { 0 },
        deadline_ms: if byte & 0x80 != 0 { 3 } else { 0 },
        run_id: std::ptr::null(),
        run_id_len: 0,
    }
}

/// How many calls capstan reads in `calls` (one object or an array of them),
/// or None if it is not JSON. Counted as capstan parses: a lone surrogate
/// escape (`"\ud800"`) in a field capstan ignores is accepted, as serde's
/// `IgnoredAny` accepts it, where `serde_json::Value` refuses it.
pub fn call_count(calls: &[u8]) -> Option<usize> {
    use serde::de::IgnoredAny;
    if let Ok(items) = serde_json::from_slice::<Vec<IgnoredAny>>(calls) {
        return Some(items.len());
    }
    serde_json::from_slice::<IgnoredAny>(calls).ok().map(|_| 1)
}

/// Checks normalized results: `n` of them, each with its fields, in order.
pub fn check_results(results: &Value, n: usize, what: &str) {
    let items = results
        .as_array()
        .unwrap_or_else(|| panic!("{what}: results are not an array"));
    assert_eq!(
        items.len(),
        n,
        "{what}: {} results for {n} calls",
        items.len()
    );
    for r in items {
        let outcome = r.get("outcome").and_then(Value::as_str);
        assert!(outcome.is_some(), "{what}: result without outcome: {r}");
        assert!(
            r.get("content").is_some_and(Value::is_string),
            "{what}: result without content: {r}"
        );
        let is_error = r.get("is_error").and_then(Value::as_bool);
        assert_eq!(
            is_error,
            Some(outcome != Some("ok")),
            "{what}: is_error disagrees with outcome: {r}"
        );
    }
}

/// The realistic schemas of the `validate` target, by tool name.
pub const SCHEMAS: &[(&CStr, &str)] = &[
    (c"get_weather", include_str!("../schemas/get_weather.json")),
    (c"edit_file", include_str!("../schemas/edit_file.json")),
    (c"sql_query", include_str!("../schemas/sql_query.json")),
    (c"calculate", include_str!("../schemas/calculate.json")),
    (c"send_email", include_str!("../schemas/send_email.json")),
];
