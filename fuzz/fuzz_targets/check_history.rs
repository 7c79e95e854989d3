//! `capstan_format_check_history` for every format (and unknown format
//! values), with and without repair. Input: one byte choosing the format
//! (low 3 bits) and the flags (next 2 bits), then the history JSON.
//! Promises checked: the report is JSON with "ok" and "findings"; with
//! repair, the repaired history is JSON, checks clean, and repairs to itself,
//! and every number in it is written as in the history (repair edits the
//! text in place: `1.10`, `1E2` and integers past 64 bits stay as they are).
#![no_main]

use capstan::ffi::*;
use capstan_fuzz::*;
use libfuzzer_sys::fuzz_target;

fn check(fmt: capstan_format, history: &[u8], flags: u32) -> (capstan_status, Option<String>, Option<String>) {
    let (mut report, mut report_len) = (std::ptr::null_mut(), 0);
    let (mut repaired, mut repaired_len) = (std::ptr::null_mut(), 0);
    let st = unsafe {
        capstan_format_check_history(
            fmt,
            history.as_ptr().cast(),
            history.len(),
            flags,
            &mut report,
            &mut report_len,
            &mut repaired,
            &mut repaired_len,
        )
    };
    let report = take_text(st, report, report_len, "capstan_format_check_history");
    let repaired = if flags & CAPSTAN_HISTORY_REPAIR != 0 {
        take_text(st, repaired, repaired_len, "capstan_format_check_history")
    } else {
        assert!(repaired.is_null(), "repaired written without CAPSTAN_HISTORY_REPAIR");
        None
    };
    (st, report, repaired)
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, history)) = data.split_first() else {
        return;
    };
    let fmt = capstan_format::from(selector % 8);
    let flags = u32::from(selector >> 3) & 3;
    let (st, report, repaired) = check(fmt, history, flags);
    if fmt > CAPSTAN_FORMAT_MCP {
        assert_eq!(st, CAPSTAN_ERR_INVALID_ARGUMENT, "unknown format {fmt} accepted");
    }
    let Some(report) = report else { return };
    let report: serde_json::Value = serde_json::from_str(&report).expect("report is not JSON");
    assert!(report["ok"].is_boolean() && report["findings"].is_array(), "{report}");
    let Some(repaired) = repaired else { return };
    serde_json::from_str::<serde_json::Value>(&repaired).expect("repaired history is not JSON");
    if let Err(broken) = capstan::history::fuzz::numbers_as_written(&String::from_utf8_lossy(history), &repaired) {
        panic!("{broken}");
    }
    let (st, again, twice) = check(fmt, repaired.as_bytes(), flags);
    assert_eq!(st, CAPSTAN_OK, "the repaired history was refused: {}", last_error());
    let again: serde_json::Value = serde_json::from_str(&again.unwrap_or_default()).unwrap();
    assert_eq!(again["ok"], true, "the repaired history still has damage: {again}\n{repaired}");
    assert_eq!(twice.as_deref(), Some(repaired.as_str()), "repair is not a fixed point");
});
