//! `capstan_stream_feed` for the four streaming formats: a body cut into
//! fuzzed chunk sizes must read exactly as the same body fed at once (same
//! status; same calls, text, stop reason and cut calls), and every call
//! gets one result. Input: one byte choosing the format (bits 0-1) and
//! early dispatch (bit 2), one byte seeding the chunk sizes, then the body.
//! Seeds: the fixtures of tests/fixtures/stream, each behind two bytes.
#![no_main]

use std::sync::atomic::{AtomicUsize, Ordering};

use capstan::ffi::*;
use capstan_fuzz::*;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const FORMATS: [capstan_format; 4] = [
    CAPSTAN_FORMAT_OPENAI_CHAT,
    CAPSTAN_FORMAT_OPENAI_RESPONSES,
    CAPSTAN_FORMAT_ANTHROPIC,
    CAPSTAN_FORMAT_GEMINI,
];

static RESULTS: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count(_: *mut std::ffi::c_void, result: *const capstan_result) {
    if !result.is_null() {
        RESULTS.fetch_add(1, Ordering::SeqCst);
    }
}

/// Feeds `chunks`, finishes; the status and the output without results.
fn run(
    reg: Reg,
    fmt: capstan_format,
    early: bool,
    chunks: &[&[u8]],
) -> (capstan_status, Option<Value>) {
    let opts = capstan_exec_options {
        struct_size: std::mem::size_of::<capstan_exec_options>() as u32,
        flags: if early {
            CAPSTAN_EXEC_EARLY_DISPATCH
        } else {
            0
        },
        limit: 0,
        timeout_ms: 20,
        approved_ids: std::ptr::null(),
        approved_count: 0,
        deadline_ms: 200,
        run_id: std::ptr::null(),
        run_id_len: 0,
    };
    let sink = capstan_stream_sink {
        struct_size: std::mem::size_of::<capstan_stream_sink>() as u32,
        on_text: None,
        on_result: Some(count),
        user_data: std::ptr::null_mut(),
    };
    let mut stream = std::ptr::null_mut();
    let st = unsafe { capstan_stream_new(reg.0, fmt, &opts, &sink, &mut stream) };
    assert_eq!(st, CAPSTAN_OK, "capstan_stream_new: {}", last_error());
    RESULTS.store(0, Ordering::SeqCst);
    let mut fed = CAPSTAN_OK;
    for chunk in chunks {
        fed = unsafe { capstan_stream_feed(stream, chunk.as_ptr().cast(), chunk.len()) };
        check_status(fed, "capstan_stream_feed");
        if fed != CAPSTAN_OK {
            break;
        }
    }
    let (mut out, mut len) = (std::ptr::null_mut(), 0);
    let st = unsafe { capstan_stream_finish(stream, &mut out, &mut len) };
    if fed != CAPSTAN_OK {
        assert_eq!(st, fed, "a failed feed is not sticky: {}", last_error());
    }
    // Checked before capstan_stream_free, whose success clears the last error.
    let value = take_json(st, out, len, "capstan_stream_finish");
    unsafe { capstan_stream_free(stream) };
    let Some(mut value) = value else {
        return (st, None);
    };
    let calls = value["calls"].as_array().map_or(0, Vec::len);
    let results = value["results"].as_array().map_or(0, Vec::len);
    assert_eq!(calls, results, "one result per call: {value}");
    assert_eq!(
        RESULTS.load(Ordering::SeqCst),
        calls,
        "the sink missed results: {value}"
    );
    if let Some(obj) = value.as_object_mut() {
        obj.remove("results");
        obj.remove("messages");
    }
    (st, Some(value))
}

fuzz_target!(|data: &[u8]| {
    let [selector, seed, body @ ..] = data else {
        return;
    };
    let fmt = FORMATS[usize::from(selector & 3)];
    let early = selector & 4 != 0;
    let reg = shared_tool_registry();
    let whole = run(reg, fmt, early, &[body]);
    let mut chunks = Vec::new();
    let mut state = u32::from(*seed) | 1;
    let mut at = 0;
    while at < body.len() {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let n = (1 + (state >> 16) as usize % 64).min(body.len() - at);
        chunks.push(&body[at..at + n]);
        at += n;
    }
    let split = run(reg, fmt, early, &chunks);
    assert_eq!(
        whole,
        split,
        "split at {:?} reads differently",
        chunks.iter().map(|c| c.len()).collect::<Vec<_>>()
    );
});

fn shared_tool_registry() -> Reg {
    static REG: std::sync::OnceLock<Reg> = std::sync::OnceLock::new();
    *REG.get_or_init(|| tool_registry(0))
}
