//! `capstan_format_parse_calls` for every format (and unknown format values).
//! Input: one byte choosing the format, then the response body. What it
//! returns must be normalized call JSON that `describe` reads back unchanged.
#![no_main]

use capstan::ffi::*;
use capstan_fuzz::*;
use libfuzzer_sys::fuzz_target;

fn parse(fmt: capstan_format, body: &[u8]) -> (capstan_status, Option<String>) {
    let (mut out, mut len) = (std::ptr::null_mut(), 0);
    let st =
        unsafe { capstan_format_parse_calls(fmt, body.as_ptr().cast(), body.len(), &mut out, &mut len) };
    (st, take_text(st, out, len, "capstan_format_parse_calls"))
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let fmt = capstan_format::from(selector % 8); // 6 and 7 are unknown formats
    let (st, calls) = parse(fmt, body);
    if fmt > CAPSTAN_FORMAT_MCP {
        assert_eq!(
            st, CAPSTAN_ERR_INVALID_ARGUMENT,
            "unknown format {fmt} accepted"
        );
    }
    let Some(calls) = calls else { return };
    let value: serde_json::Value = serde_json::from_str(&calls).expect("calls are not JSON");
    assert!(value.is_array(), "calls are not an array: {calls}");
    let (st, again) = parse(CAPSTAN_FORMAT_DESCRIBE, calls.as_bytes());
    assert_eq!(
        st,
        CAPSTAN_OK,
        "describe refused parse_calls' own output: {calls}: {}",
        last_error()
    );
    assert_eq!(
        again.as_deref(),
        Some(calls.as_str()),
        "normalized calls are not a fixed point"
    );
});
