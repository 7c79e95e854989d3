//! The C ABI of streams (`capstan_stream_*`), its cap included.

use super::*;

#[test]
fn the_c_abi_caps_a_stream_at_capstan_stream_max_buffered() {
    let reg = new_registry();
    let stream = new_stream(reg, CAPSTAN_FORMAT_OPENAI_CHAT, 0, std::ptr::null());
    let chunk = vec![b'x'; 1 << 20];
    let mut st = CAPSTAN_OK;
    let mut fed = 0;
    while st == CAPSTAN_OK && fed <= CAPSTAN_STREAM_MAX_BUFFERED + chunk.len() {
        st = unsafe { capstan_stream_feed(stream, chunk.as_ptr().cast(), chunk.len()) };
        fed += chunk.len();
    }
    assert_eq!(st, CAPSTAN_ERR_STREAM_TOO_LARGE, "{}", last_error());
    assert!(fed > CAPSTAN_STREAM_MAX_BUFFERED);
    let (mut out, mut len) = (std::ptr::null_mut(), 0);
    let st = unsafe { capstan_stream_finish(stream, &mut out, &mut len) };
    assert_eq!(st, CAPSTAN_ERR_STREAM_TOO_LARGE);
    assert!(out.is_null());
    unsafe {
        capstan_stream_free(stream);
        capstan_registry_free(reg);
    }
}

// --- the C ABI ---------------------------------------------------------------

fn new_registry() -> *mut capstan_registry {
    let mut reg = std::ptr::null_mut();
    assert_eq!(
        unsafe { capstan_registry_new(std::ptr::null(), &mut reg) },
        CAPSTAN_OK
    );
    reg
}

fn new_stream(
    reg: *mut capstan_registry,
    fmt: capstan_format,
    flags: u32,
    sink: *const capstan_stream_sink,
) -> *mut capstan_stream {
    let opts = capstan_exec_options {
        struct_size: std::mem::size_of::<capstan_exec_options>() as u32,
        flags,
        limit: 0,
        timeout_ms: 0,
        approved_ids: std::ptr::null(),
        approved_count: 0,
        deadline_ms: 0,
        run_id: std::ptr::null(),
        run_id_len: 0,
    };
    let mut stream = std::ptr::null_mut();
    let st = unsafe { capstan_stream_new(reg, fmt, &opts, sink, &mut stream) };
    assert_eq!(st, CAPSTAN_OK, "{}", last_error());
    stream
}

#[derive(Default)]
struct Seen {
    text: String,
    results: Vec<Option<usize>>,
}

unsafe extern "C" fn on_text(user: *mut c_void, text: *const c_char, len: usize) {
    let seen = &*(user as *const Mutex<Seen>);
    let bytes = std::slice::from_raw_parts(text.cast::<u8>(), len);
    seen.lock()
        .unwrap()
        .text
        .push_str(std::str::from_utf8(bytes).unwrap());
}

unsafe extern "C" fn on_result(user: *mut c_void, result: *const capstan_result) {
    let seen = &*(user as *const Mutex<Seen>);
    seen.lock()
        .unwrap()
        .results
        .push(result.as_ref().map(|r| r.index));
}

#[test]
fn the_c_abi_streams_a_turn_and_returns_what_run_turn_returns() {
    let reg = new_registry();
    let seen = Mutex::new(Seen::default());
    let sink = capstan_stream_sink {
        struct_size: std::mem::size_of::<capstan_stream_sink>() as u32,
        on_text: Some(on_text),
        on_result: Some(on_result),
        user_data: &seen as *const _ as *mut c_void,
    };
    for (fmt, dir) in FORMATS {
        seen.lock().unwrap().text.clear();
        seen.lock().unwrap().results.clear();
        let stream = new_stream(reg, fmt as u32, CAPSTAN_EXEC_EARLY_DISPATCH, &sink);
        let body = fixture(dir, "text_then_calls.sse");
        for chunk in body.chunks(5) {
            let st = unsafe { capstan_stream_feed(stream, chunk.as_ptr().cast(), chunk.len()) };
            assert_eq!(st, CAPSTAN_OK, "{}", last_error());
        }
        let (mut out, mut len) = (std::ptr::null_mut(), 0);
        assert_eq!(
            unsafe { capstan_stream_finish(stream, &mut out, &mut len) },
            CAPSTAN_OK
        );
        let got: Value =
            serde_json::from_slice(unsafe { std::slice::from_raw_parts(out.cast(), len) }).unwrap();
        unsafe { capstan_string_free(out) };
        // The same response not streamed, through capstan_registry_run_turn.
        let json = fixture(dir, "text_then_calls.json");
        let (mut turn, mut turn_len) = (std::ptr::null_mut(), 0);
        let st = unsafe {
            capstan_registry_run_turn(
                reg,
                fmt as u32,
                json.as_ptr().cast(),
                json.len(),
                std::ptr::null(),
                &mut turn,
                &mut turn_len,
            )
        };
        assert_eq!(st, CAPSTAN_OK);
        let turn_messages: Value =
            serde_json::from_slice(unsafe { std::slice::from_raw_parts(turn.cast(), turn_len) })
                .unwrap();
        unsafe { capstan_string_free(turn) };
        assert_eq!(got["messages"], turn_messages, "{dir}");
        assert_eq!(got["calls"], parse_calls(fmt, &json), "{dir}");
        assert_eq!(got["text"], TEXT);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.text, TEXT, "{dir}");
        assert_eq!(
            seen.results,
            vec![Some(0), None],
            "{dir}: one result, then NULL last"
        );
        drop(seen);
        // Once only.
        let st = unsafe { capstan_stream_finish(stream, &mut out, &mut len) };
        assert_eq!(st, CAPSTAN_ERR_WRONG_CONTEXT);
        let st = unsafe { capstan_stream_feed(stream, b"x".as_ptr().cast(), 1) };
        assert_eq!(st, CAPSTAN_ERR_WRONG_CONTEXT);
        unsafe { capstan_stream_free(stream) };
    }
    unsafe { capstan_registry_free(reg) };
}

#[test]
fn the_c_abi_reports_a_dropped_stream_as_stream_truncated() {
    let reg = new_registry();
    let stream = new_stream(reg, CAPSTAN_FORMAT_ANTHROPIC, 0, std::ptr::null());
    let body = fixture("anthropic", "dropped.sse");
    assert_eq!(
        unsafe { capstan_stream_feed(stream, body.as_ptr().cast(), body.len()) },
        CAPSTAN_OK
    );
    let (mut out, mut len) = (std::ptr::null_mut(), 0);
    assert_eq!(
        unsafe { capstan_stream_finish(stream, &mut out, &mut len) },
        CAPSTAN_ERR_STREAM_TRUNCATED
    );
    assert!(out.is_null());
    let name = unsafe { CStr::from_ptr(capstan_status_name(CAPSTAN_ERR_STREAM_TRUNCATED)) };
    assert_eq!(name.to_str().unwrap(), "CAPSTAN_ERR_STREAM_TRUNCATED");
    let name = unsafe { CStr::from_ptr(capstan_status_name(CAPSTAN_ERR_STREAM_TOO_LARGE)) };
    assert_eq!(name.to_str().unwrap(), "CAPSTAN_ERR_STREAM_TOO_LARGE");
    unsafe {
        capstan_stream_free(stream);
        capstan_registry_free(reg);
    }
}

#[test]
fn the_c_abi_refuses_formats_without_a_stream_and_poll_delivery() {
    let reg = new_registry();
    let mut stream = std::ptr::null_mut();
    for fmt in [CAPSTAN_FORMAT_DESCRIBE, CAPSTAN_FORMAT_MCP, 99] {
        let st = unsafe {
            capstan_stream_new(reg, fmt, std::ptr::null(), std::ptr::null(), &mut stream)
        };
        assert_eq!(st, CAPSTAN_ERR_INVALID_ARGUMENT, "format {fmt}");
        assert!(stream.is_null());
    }
    let opts = capstan_exec_options {
        struct_size: std::mem::size_of::<capstan_exec_options>() as u32,
        flags: CAPSTAN_EXEC_DELIVER_POLL,
        limit: 0,
        timeout_ms: 0,
        approved_ids: std::ptr::null(),
        approved_count: 0,
        deadline_ms: 0,
        run_id: std::ptr::null(),
        run_id_len: 0,
    };
    let st = unsafe {
        capstan_stream_new(
            reg,
            CAPSTAN_FORMAT_GEMINI,
            &opts,
            std::ptr::null(),
            &mut stream,
        )
    };
    assert_eq!(st, CAPSTAN_ERR_INVALID_ARGUMENT);
    assert_eq!(
        unsafe { capstan_stream_feed(std::ptr::null_mut(), std::ptr::null(), 0) },
        CAPSTAN_ERR_NULL_PARAMETER
    );
    unsafe {
        capstan_stream_cancel(std::ptr::null_mut());
        capstan_stream_free(std::ptr::null_mut());
        capstan_registry_free(reg);
    }
}
