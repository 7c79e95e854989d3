//! `capstan_registry_run_turn`: a fuzzed provider response run against tools of every
//! behaviour (ok, error, timeout, cancel, deferred, approval, serial).
//! Input: one byte choosing the format, one byte of execution options, then
//! the response. run_turn must fail exactly when parse_calls fails.
#![no_main]

use std::sync::OnceLock;

use capstan::ffi::*;
use capstan_fuzz::*;
use libfuzzer_sys::fuzz_target;

fn registry() -> Reg {
    static REG: OnceLock<Reg> = OnceLock::new();
    *REG.get_or_init(|| tool_registry(CAPSTAN_REGISTRY_COERCE))
}

fuzz_target!(|data: &[u8]| {
    let [selector, options, body @ ..] = data else {
        return;
    };
    let fmt = capstan_format::from(selector % 7);
    let opts = exec_options(*options);
    let reg = registry();
    let (mut out, mut len) = (std::ptr::null_mut(), 0);
    let st = unsafe {
        capstan_registry_run_turn(
            reg.0,
            fmt,
            body.as_ptr().cast(),
            body.len(),
            &opts,
            &mut out,
            &mut len,
        )
    };
    let messages = take_json(st, out, len, "capstan_registry_run_turn");

    let (mut calls, mut calls_len) = (std::ptr::null_mut(), 0);
    let parse_st = unsafe {
        capstan_format_parse_calls(
            fmt,
            body.as_ptr().cast(),
            body.len(),
            &mut calls,
            &mut calls_len,
        )
    };
    take_text(parse_st, calls, calls_len, "capstan_format_parse_calls");
    assert_eq!(
        st, parse_st,
        "run_turn and parse_calls disagree on the response"
    );
    if let Some(messages) = messages {
        assert!(!messages.is_null(), "run_turn returned null");
    }
});
