//! Arbitrary bytes through every C entry point that takes text, with every
//! way of passing a length: exact (the fuzzer's buffer, no NUL after it, so
//! an over-read is an ASan error), CAPSTAN_NTS, NULL with 0, NULL with a
//! length, a pointer with 0. Inside tools and approvers too (call_return,
//! call_fail, approval_decide). After each entry, the last error is read
//! back through small buffers (truncation on a UTF-8 boundary).
//! Input: entry byte, length-mode byte, extra byte (format, content kind,
//! buffer size), then the text.
#![no_main]

use std::ffi::{c_char, c_void, CString};
use std::sync::{Mutex, OnceLock};

use capstan::ffi::*;
use capstan_fuzz::*;
use libfuzzer_sys::fuzz_target;

/// The text being fuzzed, for the tools and the approver that use it.
struct Text {
    bytes: Vec<u8>,
    nts: CString,
    mode: u8,
    extra: u8,
}

static CURRENT: Mutex<Option<Text>> = Mutex::new(None);

impl Text {
    /// The (ptr, len) pair this mode passes.
    fn arg(&self) -> (*const c_char, usize) {
        match self.mode % 5 {
            0 => (self.bytes.as_ptr().cast(), self.bytes.len()),
            1 => (self.nts.as_ptr(), CAPSTAN_NTS),
            2 => (std::ptr::null(), 0),
            3 => (std::ptr::null(), self.bytes.len().max(1)),
            _ => (self.bytes.as_ptr().cast(), 0),
        }
    }
}

fn with_text<R>(f: impl FnOnce(&Text) -> R) -> R {
    let guard = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.as_ref().expect("no current text"))
}

/// Completes its call with the fuzzed text: `extra` chooses return (text,
/// JSON, an unknown kind) or fail.
unsafe extern "C" fn tool_ret(_: *mut c_void, call: *mut capstan_call) {
    let (st, kind) = with_text(|t| {
        let (ptr, len) = t.arg();
        match t.extra % 4 {
            3 => (capstan_call_fail(call, ptr, len), None),
            k => (capstan_call_return(call, u32::from(k), ptr, len), Some(k)),
        }
    });
    check_status(st, "completing with fuzzed text");
    let again = capstan_call_fail(call, c"second".as_ptr(), CAPSTAN_NTS);
    match (st, kind) {
        (CAPSTAN_ERR_INVALID_ARGUMENT, Some(2)) => {
            assert_eq!(
                again, CAPSTAN_OK,
                "an unknown content kind did not leave the call open"
            )
        }
        (CAPSTAN_ERR_NULL_PARAMETER, _) => {
            assert!(matches!(
                again,
                CAPSTAN_OK | CAPSTAN_ERR_ALREADY_COMPLETED | CAPSTAN_ERR_STALE_HANDLE
            ))
        }
        _ => assert_ne!(
            again, CAPSTAN_OK,
            "a call completed twice (first: status {st})"
        ),
    }
}

/// Denies with the fuzzed reason.
unsafe extern "C" fn gate(_: *mut c_void, approval: *mut capstan_approval) {
    let st = with_text(|t| {
        let (ptr, len) = t.arg();
        capstan_approval_decide(approval, t.extra & 1 == 0, ptr, len)
    });
    check_status(st, "capstan_approval_decide");
    if st != CAPSTAN_OK {
        // A reason it refused leaves the approval waiting: decide it now.
        let again = capstan_approval_decide(approval, false, std::ptr::null(), 0);
        assert!(matches!(
            again,
            CAPSTAN_OK | CAPSTAN_ERR_STALE_HANDLE | CAPSTAN_ERR_ALREADY_COMPLETED
        ));
    }
}

fn registry() -> Reg {
    static REG: OnceLock<Reg> = OnceLock::new();
    *REG.get_or_init(|| {
        let reg = tool_registry(0);
        assert_eq!(register(reg, c"ret", None, tool_ret, 0, 0), CAPSTAN_OK);
        assert_eq!(
            register(
                reg,
                c"gate",
                None,
                tool_echo,
                0,
                CAPSTAN_TOOL_REQUIRES_APPROVAL
            ),
            CAPSTAN_OK
        );
        let st =
            unsafe { capstan_registry_set_approver(reg.0, Some(gate), std::ptr::null_mut(), None) };
        assert_eq!(st, CAPSTAN_OK);
        reg
    })
}

fn out_text(what: &str, f: impl FnOnce(*mut *mut c_char, *mut usize) -> capstan_status) {
    let (mut out, mut len) = (std::ptr::null_mut(), 0);
    let st = f(&mut out, &mut len);
    take_text(st, out, len, what);
}

fn execute(reg: Reg, calls: &str, opts: &capstan_exec_options) {
    out_text("capstan_registry_execute", |out, len| unsafe {
        capstan_registry_execute(reg.0, calls.as_ptr().cast(), calls.len(), opts, out, len)
    });
}

/// Reads the last error through a buffer of `cap` bytes: a NUL-terminated
/// prefix of the whole message, cut on a character boundary.
fn check_last_error_prefix(cap: usize) {
    let full = last_error();
    let mut buf = vec![0xffu8; cap];
    let n = unsafe {
        capstan_error_message(
            if cap == 0 {
                std::ptr::null_mut()
            } else {
                buf.as_mut_ptr().cast()
            },
            cap,
        )
    };
    assert_eq!(n, full.len(), "capstan_error_message length");
    if cap == 0 {
        return;
    }
    let end = buf
        .iter()
        .position(|&b| b == 0)
        .expect("capstan_error_message did not NUL-terminate");
    let prefix = std::str::from_utf8(&buf[..end]).expect("truncated error is not UTF-8");
    assert!(full.starts_with(prefix), "truncated error is not a prefix");
    assert!(
        end + 4 >= cap.min(full.len() + 1),
        "truncated more than one character: {end} of cap {cap}"
    );
}

fuzz_target!(|data: &[u8]| {
    let [entry, mode, extra, text @ ..] = data else {
        return;
    };
    let reg = registry();
    let t = Text {
        bytes: text.to_vec(),
        nts: c_string(text),
        mode: *mode,
        extra: *extra,
    };
    let (ptr, len) = t.arg();
    // The exact-length mode passes the fuzzer's own buffer: no NUL after it.
    let (ptr, len) = if mode % 5 == 0 {
        (text.as_ptr().cast::<c_char>(), text.len())
    } else {
        (ptr, len)
    };
    let fmt = capstan_format::from(extra % 7);
    let opts = exec_options(0);
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = Some(t);
    let nts = with_text(|t| t.nts.clone());
    let null_or = |s: &CString| {
        if mode % 5 == 2 {
            std::ptr::null()
        } else {
            s.as_ptr()
        }
    };

    match entry % 14 {
        0 => check_status(
            unsafe { capstan_name_check(ptr, len) },
            "capstan_name_check",
        ),
        1 => check_status(
            unsafe { capstan_registry_remove_tool(reg.0, ptr, len) },
            "capstan_registry_remove_tool",
        ),
        2 => out_text("capstan_format_parse_calls", |o, l| unsafe {
            capstan_format_parse_calls(fmt, ptr, len, o, l)
        }),
        3 => out_text("capstan_format_write_results", |o, l| unsafe {
            capstan_format_write_results(fmt, ptr, len, o, l)
        }),
        4 => out_text("capstan_registry_run_turn", |o, l| unsafe {
            capstan_registry_run_turn(reg.0, fmt, ptr, len, &opts, o, l)
        }),
        5 => out_text("capstan_registry_execute", |o, l| unsafe {
            capstan_registry_execute(reg.0, ptr, len, &opts, o, l)
        }),
        6 => out_text("capstan_registry_needs_approval", |o, l| unsafe {
            capstan_registry_needs_approval(reg.0, ptr, len, &opts, o, l)
        }),
        7 => {
            let mut batch = std::ptr::null_mut();
            let st = unsafe {
                capstan_batch_submit(
                    reg.0,
                    ptr,
                    len,
                    &opts,
                    None,
                    std::ptr::null_mut(),
                    &mut batch,
                )
            };
            check_status(st, "capstan_batch_submit");
            if st == CAPSTAN_OK {
                unsafe {
                    assert_eq!(capstan_batch_wait(batch, u32::MAX), CAPSTAN_OK);
                    capstan_batch_free(batch);
                }
            } else {
                assert!(batch.is_null(), "submit failed but wrote its batch");
            }
        }
        8 => execute(reg, r#"{"id":"r1","name":"ret","arguments":{}}"#, &opts),
        9 => execute(
            reg,
            r#"[{"id":"g1","name":"gate","arguments":{}},{"id":"g2","name":"gate"}]"#,
            &opts,
        ),
        10 => {
            // A fuzzed approved id: the call runs if it is "g1" exactly.
            let ids = [null_or(&nts)];
            let mut opts = exec_options(0);
            opts.approved_ids = ids.as_ptr();
            opts.approved_count = 1;
            execute(reg, r#"{"id":"g1","name":"gate","arguments":{}}"#, &opts);
        }
        e => {
            // A fuzzed name, description or parameters schema.
            let fixed_params = c"{\"type\":\"object\"}";
            let (name, description, parameters) = match e {
                11 => (null_or(&nts), c"d".as_ptr(), fixed_params.as_ptr()),
                12 => (c"fz".as_ptr(), null_or(&nts), fixed_params.as_ptr()),
                _ => (c"fz".as_ptr(), c"d".as_ptr(), null_or(&nts)),
            };
            let def = capstan_tool_def {
                struct_size: std::mem::size_of::<capstan_tool_def>() as u32,
                name,
                description,
                parameters,
                callback: Some(tool_echo),
                user_data: std::ptr::null_mut(),
                destroy: None,
                timeout_ms: 0,
                max_output_chars: u32::from(*extra),
                flags: 0,
                mcp_meta: std::ptr::null(),
            };
            let st = unsafe { capstan_registry_add_tool(reg.0, &def) };
            check_status(st, "capstan_registry_add_tool");
            if st == CAPSTAN_OK {
                execute(reg, r#"{"id":"f","name":"fz","arguments":{}}"#, &opts);
                let st = unsafe { capstan_registry_remove_tool(reg.0, name, CAPSTAN_NTS) };
                assert_eq!(
                    st,
                    CAPSTAN_OK,
                    "a registered name did not unregister: {}",
                    last_error()
                );
            }
        }
    }
    check_last_error_prefix(usize::from(extra % 16));
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = None;
});
