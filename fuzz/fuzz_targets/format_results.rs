//! `capstan_format_write_results` for every format (and unknown format values).
//! Input: one byte choosing the format, then the results JSON. Output must
//! be JSON; `describe` output read back must not change.
#![no_main]

use capstan::ffi::*;
use capstan_fuzz::*;
use libfuzzer_sys::fuzz_target;

fn format(fmt: capstan_format, results: &[u8]) -> (capstan_status, Option<String>) {
    let (mut out, mut len) = (std::ptr::null_mut(), 0);
    let st = unsafe {
        capstan_format_write_results(
            fmt,
            results.as_ptr().cast(),
            results.len(),
            &mut out,
            &mut len,
        )
    };
    (st, take_text(st, out, len, "capstan_format_write_results"))
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, results)) = data.split_first() else {
        return;
    };
    let fmt = capstan_format::from(selector % 8);
    let (st, out) = format(fmt, results);
    if fmt > CAPSTAN_FORMAT_MCP {
        assert_eq!(
            st, CAPSTAN_ERR_INVALID_ARGUMENT,
            "unknown format {fmt} accepted"
        );
    }
    let Some(out) = out else { return };
    serde_json::from_str::<serde_json::Value>(&out).expect("formatted results are not JSON");
    if fmt == CAPSTAN_FORMAT_DESCRIBE {
        let (st, again) = format(CAPSTAN_FORMAT_DESCRIBE, out.as_bytes());
        assert_eq!(
            st,
            CAPSTAN_OK,
            "describe refused its own output: {out}: {}",
            last_error()
        );
        assert_eq!(
            again.as_deref(),
            Some(out.as_str()),
            "normalized results are not a fixed point"
        );
    }
});
