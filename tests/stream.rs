//! Streaming (`capstan_stream_*` and `capstan::stream`): fixtures written
//! from each provider's documented event format (tests/fixtures/stream),
//! fed at every split and at random chunk sizes; early dispatch; cut,
//! dropped and failing streams; the memory cap.

use std::ffi::{c_char, c_void, CStr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use capstan::ffi::*;
use capstan::providers::Format;
use capstan::stream::{Finished, ResultFn, Stream, StreamOptions, TextFn};
use capstan::{ExecOptions, Outcome, Registry, ToolDef, ToolFlags, ToolResult};
use serde_json::{json, Value};

#[path = "common/wait.rs"]
mod wait;
use wait::eventually;

const FORMATS: [(Format, &str); 4] = [
    (Format::OpenAiChat, "openai_chat"),
    (Format::OpenAiResponses, "openai_responses"),
    (Format::Anthropic, "anthropic"),
    (Format::Gemini, "gemini"),
];
const COMPLETE_CASES: [&str; 3] = ["parallel", "text_then_calls", "unicode_escapes"];
const TEXT: &str = "Let me check that for you. Un instant… ☕";

fn fixture(dir: &str, name: &str) -> Vec<u8> {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests/fixtures/stream",
        dir,
        name,
    ]
    .iter()
    .collect();
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `capstan_parse_calls` on a non-streamed body, through the C ABI.
fn parse_calls(fmt: Format, body: &[u8]) -> Value {
    let (mut out, mut len) = (std::ptr::null_mut(), 0);
    let st = unsafe {
        capstan_parse_calls(
            fmt as u32,
            body.as_ptr().cast(),
            body.len(),
            &mut out,
            &mut len,
        )
    };
    assert_eq!(st, CAPSTAN_OK, "{}", last_error());
    let text = unsafe { std::slice::from_raw_parts(out.cast::<u8>(), len) }.to_vec();
    unsafe { capstan_free(out) };
    serde_json::from_slice(&text).unwrap()
}

fn last_error() -> String {
    let mut buf = vec![0u8; 1024];
    let n = unsafe { capstan_last_error(buf.as_mut_ptr().cast(), buf.len()) };
    buf.truncate(n.min(1023));
    String::from_utf8_lossy(&buf).into_owned()
}

fn calls_json(f: &Finished) -> Value {
    Value::Array(f.calls.iter().map(|c| c.to_json()).collect())
}

/// Feeds `body` in the given chunks to a new stream and finishes it.
fn run(
    reg: &Registry,
    fmt: Format,
    options: StreamOptions,
    chunks: &[&[u8]],
) -> (Result<Finished, capstan::Error>, String) {
    let text = Arc::new(Mutex::new(String::new()));
    let t = text.clone();
    let on_text: TextFn = Box::new(move |d: &str| t.lock().unwrap().push_str(d));
    let mut stream = Stream::new(fmt, options, Some(on_text), None).unwrap();
    for chunk in chunks {
        if let Err(e) = stream.feed(reg, chunk) {
            let _ = stream.finish(reg);
            return (Err(e), text.lock().unwrap().clone());
        }
    }
    let finished = stream.finish(reg);
    let text = text.lock().unwrap().clone();
    (finished, text)
}

/// Feeds `body` in one piece to a stream of `fmt` (default options) over
/// `counting_registry` and finishes it: what finish gave, the ids of the
/// calls that ran, and the text.
fn run_whole(fmt: Format, body: &str) -> (Finished, Vec<String>, String) {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let (got, text) = run(&reg, fmt, StreamOptions::default(), &[body.as_bytes()]);
    let got = got.unwrap_or_else(|e| panic!("{}: {e}", fmt.name()));
    let ran = ran.lock().unwrap().clone();
    (got, ran, text)
}

/// A small deterministic generator (xorshift), for chunk sizes.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn cases() -> Vec<(Format, &'static str, String)> {
    let mut out = Vec::new();
    for (fmt, dir) in FORMATS {
        for case in COMPLETE_CASES {
            out.push((fmt, dir, case.to_owned()));
        }
    }
    out.push((Format::Gemini, "gemini", "truncated".to_owned()));
    out
}

/// Every split offset of one fixture, on two threads (a debug build parses
/// a few thousand bodies a second). tests/c/test_stream.c does every
/// fixture at every offset against the release library, under ASan.
fn every_split(fmt: Format, dir: &str, case: &str) {
    let body = fixture(dir, &format!("{case}.sse"));
    let want = parse_calls(fmt, &fixture(dir, &format!("{case}.json")));
    assert!(!want.as_array().unwrap().is_empty(), "{dir}/{case}");
    let want_text = if case == "text_then_calls" { TEXT } else { "" };
    std::thread::scope(|scope| {
        for part in 0..2 {
            let (body, want) = (&body, &want);
            scope.spawn(move || {
                let reg = Registry::default();
                for cut in (part..=body.len()).step_by(2) {
                    let chunks = [&body[..cut], &body[cut..]];
                    let (got, text) = run(&reg, fmt, StreamOptions::default(), &chunks);
                    let got = got.unwrap_or_else(|e| panic!("{dir}/{case} cut at {cut}: {e}"));
                    assert_eq!(calls_json(&got), *want, "{dir}/{case} cut at {cut}");
                    assert_eq!(text, want_text, "{dir}/{case} cut at {cut}");
                    assert_eq!(got.text, want_text);
                    assert!(got.cut.is_empty());
                }
            });
        }
    });
}

#[test]
fn openai_chat_calls_with_unicode_and_escapes_assemble_at_every_split_offset() {
    every_split(Format::OpenAiChat, "openai_chat", "unicode_escapes");
}

#[test]
fn openai_responses_calls_with_unicode_and_escapes_assemble_at_every_split_offset() {
    every_split(
        Format::OpenAiResponses,
        "openai_responses",
        "unicode_escapes",
    );
}

#[test]
fn anthropic_calls_with_unicode_and_escapes_assemble_at_every_split_offset() {
    every_split(Format::Anthropic, "anthropic", "unicode_escapes");
}

#[test]
fn gemini_calls_with_unicode_and_escapes_assemble_at_every_split_offset() {
    every_split(Format::Gemini, "gemini", "unicode_escapes");
    every_split(Format::Gemini, "gemini", "text_then_calls");
}

#[test]
fn assembled_calls_equal_parse_calls_at_random_chunk_sizes() {
    let reg = Registry::default();
    for (fmt, dir, case) in cases() {
        let body = fixture(dir, &format!("{case}.sse"));
        let want = parse_calls(fmt, &fixture(dir, &format!("{case}.json")));
        for seed in 1..=40u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let max = [1, 3, 17, 64, 500][seed as usize % 5];
            let mut chunks = Vec::new();
            let mut at = 0;
            while at < body.len() {
                let n = (1 + rng.below(max)).min(body.len() - at);
                chunks.push(&body[at..at + n]);
                at += n;
            }
            let (got, _) = run(&reg, fmt, StreamOptions::default(), &chunks);
            let got = got.unwrap_or_else(|e| panic!("{dir}/{case} seed {seed}: {e}"));
            assert_eq!(calls_json(&got), want, "{dir}/{case} seed {seed}");
        }
    }
}

fn counting_registry(ran: Arc<Mutex<Vec<String>>>, flags: u32) -> Registry {
    let reg = Registry::default();
    for name in ["get_weather", "get_time", "search"] {
        let ran = ran.clone();
        reg.register(ToolDef {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            handler: Box::new(move |call: capstan::Call| {
                ran.lock().unwrap().push(call.id().to_owned());
                call.complete_text(format!("ran {}", call.id())).unwrap();
            }),
            timeout_ms: 0,
            max_output_chars: 0,
            flags: ToolFlags(flags),
        })
        .unwrap();
    }
    reg
}

#[test]
fn a_call_cut_by_the_token_limit_is_never_run_and_gets_an_error_result() {
    for (fmt, dir) in &FORMATS[..3] {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let reg = counting_registry(ran.clone(), 0);
        let body = fixture(dir, "truncated.sse");
        for early in [false, true] {
            ran.lock().unwrap().clear();
            let options = StreamOptions {
                early_dispatch: early,
                ..Default::default()
            };
            let (got, _) = run(&reg, *fmt, options, &[&body]);
            let got = got.unwrap_or_else(|e| panic!("{dir}: {e}"));
            assert_eq!(got.cut, vec![1], "{dir}");
            assert_eq!(got.results.len(), 2);
            assert_eq!(got.results[0].outcome, Outcome::Ok, "{dir}");
            assert_eq!(got.results[1].outcome, Outcome::InvalidArguments, "{dir}");
            assert!(
                got.results[1].content.starts_with("Not run"),
                "{dir}: {}",
                got.results[1].content
            );
            assert_eq!(got.results[1].id, "call_t2");
            assert_eq!(*ran.lock().unwrap(), vec!["call_w1".to_owned()], "{dir}");
        }
    }
}

#[test]
fn a_stream_that_ends_before_its_closing_event_is_stream_truncated_and_runs_no_cut_call() {
    for (fmt, dir) in FORMATS {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let reg = counting_registry(ran.clone(), 0);
        let body = fixture(dir, "dropped.sse");
        // Cut also inside the last line: the half line is dropped.
        for end in [body.len(), body.len() - 5] {
            ran.lock().unwrap().clear();
            let (got, _) = run(&reg, fmt, StreamOptions::default(), &[&body[..end]]);
            match got {
                Err(capstan::Error::StreamTruncated(m)) => assert!(m.contains("last event"), "{m}"),
                other => panic!("{dir}: {other:?}"),
            }
            assert!(
                ran.lock().unwrap().is_empty(),
                "{dir}: a call ran without early dispatch"
            );
        }
    }
}

#[test]
fn a_provider_error_event_gives_the_non_streamed_parsers_error_and_sticks() {
    let reg = Registry::default();
    for (fmt, dir) in FORMATS {
        let body = fixture(dir, "error.sse");
        let text = String::from_utf8(body.clone()).unwrap();
        let last = text.trim_end().rsplit("data: ").next().unwrap().trim();
        let (mut out, mut len) = (std::ptr::null_mut(), 0);
        let st = unsafe {
            capstan_parse_calls(
                fmt as u32,
                last.as_ptr().cast(),
                last.len(),
                &mut out,
                &mut len,
            )
        };
        assert_eq!(st, CAPSTAN_ERR_PROVIDER_ERROR, "{dir}");
        let want = last_error();
        let mut stream = Stream::new(fmt, StreamOptions::default(), None, None).unwrap();
        let err = stream.feed(&reg, &body).unwrap_err();
        assert_eq!(err.to_string(), want, "{dir}");
        assert_eq!(
            stream.feed(&reg, b"\n").unwrap_err(),
            err,
            "{dir}: not sticky"
        );
        assert_eq!(stream.finish(&reg).unwrap_err(), err, "{dir}: not sticky");
    }
}

/// Feeds `chunks` one by one until a feed fails: it must fail, and with
/// `StreamTooLarge`.
#[track_caller]
fn feed_until_too_large<C: AsRef<[u8]>>(
    stream: &mut Stream,
    reg: &Registry,
    chunks: impl IntoIterator<Item = C>,
) {
    let failed = chunks
        .into_iter()
        .find_map(|c| stream.feed(reg, c.as_ref()).err());
    assert!(
        matches!(failed, Some(capstan::Error::StreamTooLarge(_))),
        "{failed:?}"
    );
}

#[test]
fn past_the_buffer_cap_feed_fails_with_stream_too_large() {
    let reg = Registry::default();
    let options = StreamOptions {
        max_buffered: 1000,
        ..Default::default()
    };
    // One line that never ends.
    let mut stream = Stream::new(Format::OpenAiChat, options.clone(), None, None).unwrap();
    let line = vec![b'a'; 600];
    stream.feed(&reg, b"data: ").unwrap();
    stream.feed(&reg, &line).unwrap();
    let err = stream.feed(&reg, &line).unwrap_err();
    assert!(matches!(err, capstan::Error::StreamTooLarge(_)), "{err}");
    // Arguments that never end, in small events.
    let mut stream = Stream::new(Format::Anthropic, options.clone(), None, None).unwrap();
    stream
        .feed(&reg, br#"data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"b","input":{}}}

"#)
        .unwrap();
    let delta = b"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1\"}}\n\n";
    feed_until_too_large(&mut stream, &reg, (0..40).map(|_| delta));
    // One whole event over the cap, in one feed, even one the stream ignores.
    let mut stream = Stream::new(Format::Anthropic, options, None, None).unwrap();
    let ping = format!(
        "event: ping\ndata: {{\"type\":\"ping\",\"pad\":\"{}\"}}\n\n",
        "x".repeat(1500)
    );
    let err = stream.feed(&reg, ping.as_bytes()).unwrap_err();
    assert!(matches!(err, capstan::Error::StreamTooLarge(_)), "{err}");
}

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

// --- early dispatch ----------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Ev {
    Result(usize, String),
    StreamEnd,
}

fn recording_stream(fmt: Format, early: bool, log: Arc<Mutex<Vec<Ev>>>) -> Stream {
    let on_result: ResultFn = Arc::new(move |i: usize, r: &ToolResult| {
        log.lock().unwrap().push(Ev::Result(i, r.id.clone()));
    });
    let options = StreamOptions {
        early_dispatch: early,
        ..Default::default()
    };
    Stream::new(fmt, options, None, Some(on_result)).unwrap()
}

/// The body of `fixture` in pieces: each ends where the next call starts,
/// so a paced feeder can wait between calls.
fn pieces_by_call(fmt: Format, body: &[u8]) -> Vec<Vec<u8>> {
    let marker: &[u8] = match fmt {
        Format::OpenAiChat => b"\"id\": \"call_",
        Format::OpenAiResponses => b"event: response.output_item.added",
        Format::Anthropic => b"event: content_block_start",
        Format::Gemini => b"data: ",
        _ => unreachable!(),
    };
    let mut starts: Vec<usize> = body
        .windows(marker.len())
        .enumerate()
        .filter(|(_, w)| *w == marker)
        .map(|(i, _)| {
            body[..i]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
        })
        .collect();
    starts.dedup();
    starts.push(body.len());
    let mut out = vec![body[..starts[0]].to_vec()];
    for w in starts.windows(2) {
        out.push(body[w[0]..w[1]].to_vec());
    }
    out
}

fn wait_for(log: &Mutex<Vec<Ev>>, what: impl Fn(&[Ev]) -> bool) -> bool {
    eventually(Duration::from_secs(30), || what(&log.lock().unwrap()))
}

#[test]
fn with_early_dispatch_the_first_result_comes_before_the_stream_ends() {
    for (fmt, dir) in FORMATS {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let reg = counting_registry(ran.clone(), 0);
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut stream = recording_stream(fmt, true, log.clone());
        let pieces = pieces_by_call(fmt, &fixture(dir, "parallel.sse"));
        for (i, piece) in pieces.iter().enumerate() {
            if i > 0 {
                std::thread::sleep(Duration::from_millis(200));
            }
            if i == pieces.len() - 1 {
                // Before the last piece: the first call's result arrives
                // without the stream having ended.
                assert!(
                    wait_for(&log, |l| l.iter().any(|e| matches!(e, Ev::Result(0, _)))),
                    "{dir}: no early result"
                );
            }
            stream.feed(&reg, piece).unwrap();
        }
        log.lock().unwrap().push(Ev::StreamEnd);
        let done = stream.finish(&reg).unwrap();
        let log = log.lock().unwrap().clone();
        let end = log.iter().position(|e| *e == Ev::StreamEnd).unwrap();
        let first = log
            .iter()
            .position(|e| matches!(e, Ev::Result(0, _)))
            .unwrap();
        assert!(first < end, "{dir}: {log:?}");
        // Every call has exactly one result, and the final results are in call order.
        assert_eq!(log.len(), 4, "{dir}: {log:?}");
        let ids: Vec<&str> = done.results.iter().map(|r| r.id.as_str()).collect();
        let want: Vec<&str> = done.calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, want, "{dir}");
        assert_eq!(ids.len(), 3);
        assert_eq!(ran.lock().unwrap().len(), 3);
    }
}

#[test]
fn without_early_dispatch_no_call_starts_before_finish() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut stream = recording_stream(Format::OpenAiChat, false, log.clone());
    stream
        .feed(&reg, &fixture("openai_chat", "parallel.sse"))
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(ran.lock().unwrap().is_empty());
    assert!(log.lock().unwrap().is_empty());
    let done = stream.finish(&reg).unwrap();
    assert_eq!(done.results.len(), 3);
    assert_eq!(log.lock().unwrap().len(), 3);
}

#[test]
fn a_tool_flagged_wait_for_response_starts_only_at_finish_even_with_early_dispatch() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), ToolFlags::WAIT_FOR_RESPONSE);
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut stream = recording_stream(Format::Anthropic, true, log.clone());
    stream
        .feed(&reg, &fixture("anthropic", "parallel.sse"))
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(ran.lock().unwrap().is_empty());
    let done = stream.finish(&reg).unwrap();
    assert!(done.results.iter().all(|r| r.outcome == Outcome::Ok));
    assert_eq!(ran.lock().unwrap().len(), 3);
}

#[test]
fn results_are_in_call_order_when_calls_finish_in_another_order() {
    let reg = Registry::default();
    for (name, ms) in [("get_weather", 150u64), ("get_time", 0)] {
        reg.register(ToolDef {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            handler: Box::new(move |call: capstan::Call| {
                std::thread::sleep(Duration::from_millis(ms));
                call.complete_text(call.id().to_owned()).unwrap();
            }),
            timeout_ms: 0,
            max_output_chars: 0,
            flags: ToolFlags::default(),
        })
        .unwrap();
    }
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut stream = recording_stream(Format::OpenAiChat, true, log.clone());
    stream
        .feed(&reg, &fixture("openai_chat", "parallel.sse"))
        .unwrap();
    let done = stream.finish(&reg).unwrap();
    let messages = done.to_json(Format::OpenAiChat)["messages"].clone();
    let ids: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_w1", "call_t2", "call_w3"]);
}

#[test]
fn a_sequential_stream_starts_a_call_early_only_after_the_previous_one_finished() {
    let reg = Registry::default();
    let running = Arc::new(AtomicUsize::new(0));
    let overlap = Arc::new(AtomicUsize::new(0));
    for name in ["get_weather", "get_time"] {
        let (running, overlap) = (running.clone(), overlap.clone());
        reg.register(ToolDef {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            handler: Box::new(move |call: capstan::Call| {
                if running.fetch_add(1, Ordering::SeqCst) > 0 {
                    overlap.fetch_add(1, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(30));
                running.fetch_sub(1, Ordering::SeqCst);
                call.complete_text("ok").unwrap();
            }),
            timeout_ms: 0,
            max_output_chars: 0,
            flags: ToolFlags::default(),
        })
        .unwrap();
    }
    let options = StreamOptions {
        early_dispatch: true,
        exec: ExecOptions {
            parallel: false,
            ..Default::default()
        },
        ..Default::default()
    };
    let body = fixture("openai_chat", "parallel.sse");
    let (got, _) = run(
        &reg,
        Format::OpenAiChat,
        options,
        &[&body[..body.len() / 2], &body[body.len() / 2..]],
    );
    assert!(got
        .unwrap()
        .results
        .iter()
        .all(|r| r.outcome == Outcome::Ok));
    assert_eq!(overlap.load(Ordering::SeqCst), 0);
}

#[test]
fn after_cancel_feeds_fail_and_calls_not_started_end_cancelled() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let body = fixture("openai_chat", "parallel.sse");
    let mut stream = Stream::new(Format::OpenAiChat, StreamOptions::default(), None, None).unwrap();
    stream.feed(&reg, &body[..body.len() / 2]).unwrap();
    stream.control().cancel();
    assert!(matches!(
        stream.feed(&reg, &body[body.len() / 2..]),
        Err(capstan::Error::WrongContext(_))
    ));
    let done = stream.finish(&reg).unwrap();
    assert!(done.cancelled);
    // The first call was complete and never started; the second was cut.
    assert_eq!(
        done.results[0].outcome,
        Outcome::Cancelled,
        "{:?}",
        done.results
    );
    assert!(
        done.results[0]
            .content
            .contains("the stream was cancelled before this call started"),
        "{}",
        done.results[0].content
    );
    assert!(done.results.iter().all(|r| r.is_error()));
    assert!(ran.lock().unwrap().is_empty());
}

#[test]
fn an_anthropic_block_event_without_a_numeric_index_is_an_invalid_response() {
    let reg = Registry::default();
    for event in [
        json!({"type": "content_block_start", "content_block": {"type": "tool_use", "id": "a", "name": "b", "input": {}}}),
        json!({"type": "content_block_delta", "index": "0", "delta": {"type": "text_delta", "text": "hi"}}),
        json!({"type": "content_block_stop"}),
    ] {
        let mut stream =
            Stream::new(Format::Anthropic, StreamOptions::default(), None, None).unwrap();
        let kind = event["type"].as_str().unwrap().to_owned();
        let err = stream
            .feed(&reg, anthropic_event(event).as_bytes())
            .unwrap_err();
        match err {
            capstan::Error::InvalidResponse(m) => {
                assert_eq!(m, format!("{kind} event has no numeric \"index\""))
            }
            other => panic!("{kind}: {other:?}"),
        }
    }
}

#[test]
fn after_detach_no_result_callback_runs_even_for_a_call_that_completes_later() {
    // What capstan_stream_free relies on: once a stream's batches are
    // detached, a call still running completes without reaching the sink.
    let held: Arc<Mutex<Vec<capstan::Call>>> = Arc::default();
    let reg = Registry::default();
    for name in ["get_weather", "get_time", "search"] {
        let held = held.clone();
        reg.register(ToolDef {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            handler: Box::new(move |call: capstan::Call| held.lock().unwrap().push(call)),
            timeout_ms: 0,
            max_output_chars: 0,
            flags: ToolFlags(0),
        })
        .unwrap();
    }
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut stream = recording_stream(Format::OpenAiChat, true, log.clone());
    let body = fixture("openai_chat", "parallel.sse");
    stream.feed(&reg, &body).unwrap();
    assert!(
        eventually(Duration::from_secs(30), || !held.lock().unwrap().is_empty()),
        "no call started early"
    );
    stream.control().detach();
    let calls: Vec<capstan::Call> = std::mem::take(&mut *held.lock().unwrap());
    for call in calls {
        call.complete_text("late").unwrap();
    }
    assert!(
        log.lock().unwrap().is_empty(),
        "a result reached a detached stream's sink: {:?}",
        log.lock().unwrap()
    );
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
        unsafe { capstan_free(out) };
        // The same response not streamed, through capstan_run_turn.
        let json = fixture(dir, "text_then_calls.json");
        let (mut turn, mut turn_len) = (std::ptr::null_mut(), 0);
        let st = unsafe {
            capstan_run_turn(
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
        unsafe { capstan_free(turn) };
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

/// Figures, not a test: `cargo test --release --test stream -- --ignored --nocapture`.
/// Time from the first byte to the first tool result, with calls arriving
/// 200 ms apart, streaming with early dispatch vs buffering the whole body
/// and running the turn at its end.
#[test]
#[ignore]
fn paced_time_to_first_result_figures() {
    for (fmt, dir) in FORMATS {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let reg = counting_registry(ran, 0);
        let pieces = pieces_by_call(fmt, &fixture(dir, "parallel.sse"));
        let mut figures = Vec::new();
        for early in [true, false] {
            let first = Arc::new(Mutex::new(None::<Instant>));
            let f = first.clone();
            let on_result: ResultFn = Arc::new(move |_, _| {
                f.lock().unwrap().get_or_insert_with(Instant::now);
            });
            let options = StreamOptions {
                early_dispatch: early,
                ..Default::default()
            };
            let mut stream = Stream::new(fmt, options, None, Some(on_result)).unwrap();
            let start = Instant::now();
            for (i, piece) in pieces.iter().enumerate() {
                if i > 0 {
                    std::thread::sleep(Duration::from_millis(200));
                }
                stream.feed(&reg, piece).unwrap();
            }
            let end = start.elapsed();
            stream.finish(&reg).unwrap();
            let first = first.lock().unwrap().unwrap() - start;
            figures.push((early, first, end));
        }
        for (early, first, end) in figures {
            let mode = if early {
                "streaming (early dispatch)"
            } else {
                "buffering (run at the end)"
            };
            println!(
                "{dir:17} {mode:27} first result after {:7.1} ms; body ended after {:7.1} ms",
                first.as_secs_f64() * 1e3,
                end.as_secs_f64() * 1e3
            );
        }
    }
}

#[test]
fn openai_chat_starts_a_call_as_soon_as_its_arguments_are_a_whole_object() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut stream = recording_stream(Format::OpenAiChat, true, log.clone());
    let body = fixture("openai_chat", "parallel.sse");
    // Up to (not including) the event that starts the second call.
    let second = pieces_by_call(Format::OpenAiChat, &body);
    let first_call: Vec<u8> = second[..2].concat();
    stream.feed(&reg, &first_call).unwrap();
    assert!(
        wait_for(&log, |l| l.iter().any(|e| matches!(e, Ev::Result(0, _)))),
        "the first call did not start before the second began"
    );
    stream.feed(&reg, &body[first_call.len()..]).unwrap();
    assert_eq!(stream.finish(&reg).unwrap().results.len(), 3);
}

/// A chat chunk adding `args` to the arguments of call `index`.
fn chat_chunk(index: u32, args: &str) -> String {
    let call = json!({"index": index, "function": {"arguments": args}});
    let chunk = json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]});
    format!("data: {chunk}\n\n")
}

#[test]
fn more_than_whitespace_after_whole_arguments_fails_a_started_call_and_revises_one_not_started() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let start = r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"UTC\"}"}}]}}]}"#.to_owned() + "\n\n";
    let space = chat_chunk(0, "  ");
    let junk = chat_chunk(0, "}");
    let end = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    // Whitespace after whole arguments: fine, early or not; the text keeps it.
    for early in [false, true] {
        let options = StreamOptions {
            early_dispatch: early,
            ..Default::default()
        };
        let body = [start.as_bytes(), space.as_bytes(), end.as_bytes()];
        let done = run(&reg, Format::OpenAiChat, options, &body).0.unwrap();
        assert_eq!(
            done.calls[0].to_json()["arguments"],
            json!("{\"tz\":\"UTC\"}  ")
        );
    }
    // More than whitespace: not started yet, the call gets the whole text
    // (and fails as invalid arguments, as the non-streamed body would).
    let body = [start.as_bytes(), junk.as_bytes(), end.as_bytes()];
    let done = run(&reg, Format::OpenAiChat, StreamOptions::default(), &body)
        .0
        .unwrap();
    assert_eq!(done.results[0].outcome, Outcome::InvalidArguments);
    // Already started with the whole object: the stream fails.
    let options = StreamOptions {
        early_dispatch: true,
        ..Default::default()
    };
    let err = run(&reg, Format::OpenAiChat, options, &body).0.unwrap_err();
    assert!(
        matches!(err, capstan::Error::InvalidResponse(ref m) if m.contains("whole JSON object")),
        "{err}"
    );
}

// --- which calls start early -----------------------------------------------

fn chat_start(index: u32, id: &str, name: &str, args: &str) -> String {
    let call = json!({"index": index, "id": id, "type": "function",
        "function": {"name": name, "arguments": args}});
    let chunk = json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]});
    format!("data: {chunk}\n\n")
}

fn chat_end() -> String {
    let last = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]});
    format!("data: {last}\n\ndata: [DONE]\n\n")
}

fn early(parallel: bool) -> StreamOptions {
    StreamOptions {
        early_dispatch: true,
        exec: ExecOptions {
            parallel,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Waits (bounded) until `ran` holds `id`.
fn started(ran: &Mutex<Vec<String>>, id: &str) -> bool {
    eventually(Duration::from_secs(10), || {
        ran.lock().unwrap().iter().any(|r| r == id)
    })
}

fn responses_event(data: Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap()
    )
}

fn responses_item(event: &str, index: u64, call_id: &str, name: &str, args: &str) -> String {
    responses_event(json!({"type": event, "output_index": index,
        "item": {"id": format!("fc_{index}"), "type": "function_call",
                 "call_id": call_id, "name": name, "arguments": args}}))
}

#[test]
fn a_call_complete_before_an_earlier_one_starts_early_only_in_a_parallel_stream() {
    // Responses items may interleave: c1's arguments are whole while c0's
    // are still arriving.
    let c0 = responses_item("response.output_item.added", 0, "c0", "get_time", "");
    let c1 = responses_item("response.output_item.added", 1, "c1", "get_weather", "")
        + &responses_item("response.output_item.done", 1, "c1", "get_weather", "{}");
    let end = responses_item(
        "response.output_item.done",
        0,
        "c0",
        "get_time",
        "{\"tz\":\"UTC\"}",
    ) + &responses_event(json!({"type": "response.completed", "response":
            {"id": "r", "object": "response", "status": "completed", "output": []}}));

    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let mut stream = Stream::new(Format::OpenAiResponses, early(true), None, None).unwrap();
    stream.feed(&reg, c0.as_bytes()).unwrap();
    stream.feed(&reg, c1.as_bytes()).unwrap();
    assert!(started(&ran, "c1"), "a parallel stream starts c1 at once");
    assert!(!ran.lock().unwrap().contains(&"c0".to_owned()));
    stream.feed(&reg, end.as_bytes()).unwrap();
    let done = stream.finish(&reg).unwrap();
    assert!(
        done.results.iter().all(|r| r.outcome == Outcome::Ok),
        "{:?}",
        done.results
    );

    // Sequential: nothing starts past a call whose arguments are incomplete.
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let mut stream = Stream::new(Format::OpenAiResponses, early(false), None, None).unwrap();
    stream.feed(&reg, c0.as_bytes()).unwrap();
    stream.feed(&reg, c1.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(ran.lock().unwrap().is_empty(), "{:?}", ran.lock().unwrap());
    stream.feed(&reg, end.as_bytes()).unwrap();
    stream.finish(&reg).unwrap();
    assert_eq!(*ran.lock().unwrap(), ["c0", "c1"]);
}

#[test]
fn in_a_sequential_stream_a_call_the_response_cut_holds_back_nothing_after_it() {
    // An Anthropic block whose input is not whole JSON at its stop is cut
    // (never run); the next call still starts early.
    let cut = [
        anthropic_event(json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "a", "name": "get_time", "input": {}}})),
        anthropic_event(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{\"tz\":"}})),
        anthropic_event(json!({"type": "content_block_stop", "index": 0})),
        anthropic_event(json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "tool_use", "id": "b", "name": "get_weather", "input": {}}})),
        anthropic_event(json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "{}"}})),
        anthropic_event(json!({"type": "content_block_stop", "index": 1})),
    ]
    .concat();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let mut stream = Stream::new(Format::Anthropic, early(false), None, None).unwrap();
    stream.feed(&reg, cut.as_bytes()).unwrap();
    assert!(
        started(&ran, "b"),
        "the call after the cut one starts early"
    );
    stream
        .feed(
            &reg,
            anthropic_event(json!({"type": "message_stop"})).as_bytes(),
        )
        .unwrap();
    let done = stream.finish(&reg).unwrap();
    assert_eq!(done.cut, [0]);
    assert_eq!(*ran.lock().unwrap(), ["b"]);
}

#[test]
fn a_wait_for_response_call_holds_back_only_itself_in_parallel_and_all_after_it_in_sequence() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = Registry::default();
    for (name, flags) in [
        ("get_weather", ToolFlags::WAIT_FOR_RESPONSE),
        ("get_time", 0),
    ] {
        let ran = ran.clone();
        reg.register(ToolDef {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            handler: Box::new(move |call: capstan::Call| {
                ran.lock().unwrap().push(call.id().to_owned());
                call.complete_text("ok").unwrap();
            }),
            timeout_ms: 0,
            max_output_chars: 0,
            flags: ToolFlags(flags),
        })
        .unwrap();
    }
    let first = chat_start(0, "w", "get_weather", "{}");
    let second = chat_start(1, "t", "get_time", "{}");
    let mut stream = Stream::new(Format::OpenAiChat, early(true), None, None).unwrap();
    stream.feed(&reg, first.as_bytes()).unwrap();
    stream.feed(&reg, second.as_bytes()).unwrap();
    assert!(started(&ran, "t"), "the tool without the flag starts early");
    assert_eq!(*ran.lock().unwrap(), ["t"]);
    stream.feed(&reg, chat_end().as_bytes()).unwrap();
    stream.finish(&reg).unwrap();
    assert_eq!(*ran.lock().unwrap(), ["t", "w"]);

    ran.lock().unwrap().clear();
    let mut stream = Stream::new(Format::OpenAiChat, early(false), None, None).unwrap();
    stream.feed(&reg, first.as_bytes()).unwrap();
    stream.feed(&reg, second.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(ran.lock().unwrap().is_empty(), "{:?}", ran.lock().unwrap());
    stream.feed(&reg, chat_end().as_bytes()).unwrap();
    stream.finish(&reg).unwrap();
    assert_eq!(*ran.lock().unwrap(), ["w", "t"]);
}

// --- what the cap counts ----------------------------------------------------

fn anthropic_event(data: Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap()
    )
}

fn capped(max_buffered: usize) -> StreamOptions {
    StreamOptions {
        max_buffered,
        ..Default::default()
    }
}

#[test]
fn text_and_arguments_kept_for_the_end_count_against_the_cap_and_nothing_else_does() {
    let reg = Registry::default();
    // Text deltas, each small, together over the cap.
    let start = anthropic_event(json!({"type": "content_block_start", "index": 0,
        "content_block": {"type": "text", "text": ""}}));
    let delta = anthropic_event(json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "text_delta", "text": "x".repeat(100)}}));
    let mut stream = Stream::new(Format::Anthropic, capped(2000), None, None).unwrap();
    stream.feed(&reg, start.as_bytes()).unwrap();
    feed_until_too_large(&mut stream, &reg, (0..40).map(|_| delta.as_bytes()));

    // Ten calls: ids and names of 30 bytes, 34 bytes of arguments: about
    // 940 bytes kept, under a cap of 4000 (as long as each is counted once,
    // as the sum of its parts); eighty of them are over it.
    let call = |i: usize| {
        let id = format!("toolu_{i:024}");
        let name = format!("tool_{:025}", 0);
        [
            anthropic_event(json!({"type": "content_block_start", "index": i,
                "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})),
            anthropic_event(json!({"type": "content_block_delta", "index": i,
                "delta": {"type": "input_json_delta", "partial_json": format!("{{\"pad\":\"{}\"}}", "x".repeat(24))}})),
            anthropic_event(json!({"type": "content_block_stop", "index": i})),
        ]
        .concat()
    };
    let mut stream = Stream::new(Format::Anthropic, capped(4000), None, None).unwrap();
    for i in 0..10 {
        stream.feed(&reg, call(i).as_bytes()).unwrap();
    }
    let mut stream = Stream::new(Format::Anthropic, capped(4000), None, None).unwrap();
    feed_until_too_large(&mut stream, &reg, (0..80).map(call));
}

#[test]
fn anthropic_text_in_a_block_start_a_stray_delta_and_a_block_left_open_at_message_stop() {
    let tool_use = |index: u64, id: &str, name: &str| {
        anthropic_event(json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}))
    };
    let input = |index: u64, json: &str| {
        anthropic_event(json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": json}}))
    };
    let stop = |index: u64| anthropic_event(json!({"type": "content_block_stop", "index": index}));
    let body = [
        // Text may come in the block start itself.
        anthropic_event(json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": "Hello"}})),
        anthropic_event(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": " world"}})),
        stop(0),
        tool_use(1, "a", "get_time"),
        input(1, "{}"),
        stop(1),
        tool_use(2, "b", "get_weather"),
        // A delta for a block already stopped, or never started, is
        // ignored, not given to the block still open.
        input(1, "junk"),
        input(9, "junk"),
        input(2, "{\"city\":\"Oslo\"}"),
        stop(2),
        // Block 3 never stops: the response ends with it open.
        tool_use(3, "c", "search"),
        input(3, "{\"q\":"),
        anthropic_event(json!({"type": "message_delta",
            "delta": {"stop_reason": "max_tokens", "stop_sequence": null}})),
        anthropic_event(json!({"type": "message_stop"})),
    ]
    .concat();
    let (got, mut ran, text) = run_whole(Format::Anthropic, &body);
    assert_eq!(text, "Hello world");
    assert_eq!(got.text, "Hello world");
    assert_eq!(got.stop_reason.as_deref(), Some("max_tokens"));
    assert_eq!(got.cut, [2]);
    assert_eq!(got.results[0].outcome, Outcome::Ok);
    assert_eq!(
        got.results[1].outcome,
        Outcome::Ok,
        "{}",
        got.results[1].content
    );
    assert_eq!(
        got.calls[1].arguments.clone().into_value().unwrap(),
        json!({"city": "Oslo"})
    );
    assert_eq!(got.results[2].outcome, Outcome::InvalidArguments);
    assert!(
        got.results[2]
            .content
            .contains("the response ended (stop_reason \"max_tokens\") before this tool_use block was complete"),
        "{}",
        got.results[2].content
    );
    ran.sort();
    assert_eq!(ran, ["a", "b"]);
}

fn gemini_chunk(data: Value) -> String {
    format!("data: {data}\r\n\r\n")
}

#[test]
fn a_gemini_prompt_blocked_before_any_candidate_is_a_provider_error_and_usage_alone_is_not() {
    let reg = Registry::default();
    let blocked = gemini_chunk(json!({"promptFeedback": {"blockReason": "SAFETY"},
        "usageMetadata": {"promptTokenCount": 5}}));
    let mut stream = Stream::new(Format::Gemini, StreamOptions::default(), None, None).unwrap();
    match stream.feed(&reg, blocked.as_bytes()) {
        Err(capstan::Error::ProviderError { kind, .. }) => assert_eq!(kind, "SAFETY"),
        other => panic!("{other:?}"),
    }
    // Feedback next to candidates is no block; a usage-only chunk is no error.
    let body = [
        gemini_chunk(
            json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "", "name": "get_time", "args": {}}},
            {"functionCall": {"name": "get_time", "args": {}}}]}}],
            "promptFeedback": {"blockReason": "OTHER"}}),
        ),
        gemini_chunk(json!({"usageMetadata": {"totalTokenCount": 9}})),
        gemini_chunk(
            json!({"candidates": [{"content": {"role": "model", "parts": []},
            "finishReason": "STOP"}]}),
        ),
    ]
    .concat();
    let (got, _, _) = run_whole(Format::Gemini, &body);
    assert_eq!(got.stop_reason.as_deref(), Some("STOP"));
    // An empty id is replaced, as the non-streamed parser does.
    assert!(!got.calls[0].id.is_empty());
    assert_ne!(got.calls[0].id, got.calls[1].id);
    assert!(got.results.iter().all(|r| r.outcome == Outcome::Ok));
}

#[test]
fn event_data_that_is_not_json_is_an_invalid_response_showing_its_start() {
    let reg = Registry::default();
    for (data, shown) in [
        ("x".repeat(200), format!("{}...", "x".repeat(80))),
        ("x".repeat(80), "x".repeat(80)),
        ("[1]".to_owned(), "[1]".to_owned()),
    ] {
        let mut stream =
            Stream::new(Format::OpenAiChat, StreamOptions::default(), None, None).unwrap();
        match stream.feed(&reg, format!("data: {data}\n\n").as_bytes()) {
            Err(capstan::Error::InvalidResponse(m)) => {
                assert!(m.ends_with(&format!(": {shown}")), "{m}")
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn chat_fragments_without_an_index_start_a_call_with_an_id_and_continue_the_last_without() {
    // Some OpenAI-compatible servers leave out "index".
    let fragment = |call: Value| {
        let chunk = json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]});
        format!("data: {chunk}\n\n")
    };
    let body = [
        fragment(json!({"id": "a", "type": "function",
            "function": {"name": "get_time", "arguments": "{\"tz\""}})),
        fragment(json!({"id": null, "function": {"arguments": ":\"UTC\"}"}})),
        fragment(json!({"id": "b", "type": "function",
            "function": {"name": "get_weather", "arguments": "{}"}})),
        chat_end(),
    ]
    .concat();
    let (got, _, _) = run_whole(Format::OpenAiChat, &body);
    let calls: Vec<(String, String, Value)> = got
        .calls
        .iter()
        .map(|c| {
            let args = c.arguments.clone().into_value().unwrap();
            (c.id.clone(), c.name.clone(), args)
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("a".into(), "get_time".into(), json!({"tz": "UTC"})),
            ("b".into(), "get_weather".into(), json!({}))
        ]
    );
}

#[test]
fn an_open_chat_call_counts_its_id_name_and_arguments_against_the_cap() {
    let reg = Registry::default();
    let id = format!("call_{}", "i".repeat(25));
    let name = format!("tool_{}", "n".repeat(25));
    let opening = chat_start(0, &id, &name, "{\"pad\":\"");
    let piece = chat_chunk(0, &"x".repeat(10));
    // About 60 + 8 + 580 bytes held for the open call: under a cap of 1000.
    let mut body = opening.clone();
    for _ in 0..58 {
        body.push_str(&piece);
    }
    body.push_str(&chat_chunk(0, "\"}"));
    body.push_str(&chat_end());
    let (got, _) = run(&reg, Format::OpenAiChat, capped(1000), &[body.as_bytes()]);
    let got = got.unwrap();
    assert_eq!(got.calls[0].id, id);
    // Arguments that never end pass the cap.
    let mut stream = Stream::new(Format::OpenAiChat, capped(1000), None, None).unwrap();
    stream.feed(&reg, opening.as_bytes()).unwrap();
    feed_until_too_large(&mut stream, &reg, (0..200).map(|_| piece.as_bytes()));
}

#[test]
fn responses_events_that_name_their_item_only_by_item_id_reach_that_item() {
    let delta = |item: &str, text: &str| {
        responses_event(json!({"type": "response.function_call_arguments.delta",
            "item_id": item, "delta": text}))
    };
    let done = |item: &str| {
        responses_event(json!({"type": "response.function_call_arguments.done", "item_id": item}))
    };
    let body = [
        responses_item("response.output_item.added", 0, "c0", "get_time", ""),
        responses_item("response.output_item.added", 1, "c1", "get_weather", ""),
        delta("fc_1", "{\"city\":"),
        delta("fc_0", "{\"tz\":"),
        delta("fc_1", "\"Oslo\"}"),
        delta("fc_0", "\"UTC\"}"),
        done("fc_0"),
        done("fc_1"),
        responses_event(json!({"type": "response.completed", "response":
            {"id": "r", "object": "response", "status": "completed", "output": []}})),
    ]
    .concat();
    let (got, _, _) = run_whole(Format::OpenAiResponses, &body);
    let args: Vec<Value> = got
        .calls
        .iter()
        .map(|c| c.arguments.clone().into_value().unwrap())
        .collect();
    assert_eq!(args, [json!({"tz": "UTC"}), json!({"city": "Oslo"})]);
}

#[test]
fn chat_arguments_split_across_feeds_start_only_once_whole_and_a_length_stop_cuts_the_open_call() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let mut stream = Stream::new(Format::OpenAiChat, early(true), None, None).unwrap();
    stream
        .feed(
            &reg,
            chat_start(0, "c0", "get_weather", "{\"city\":").as_bytes(),
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert!(
        ran.lock().unwrap().is_empty(),
        "started before its arguments were whole"
    );
    stream
        .feed(&reg, chat_chunk(0, "\"Oslo\"}").as_bytes())
        .unwrap();
    assert!(started(&ran, "c0"));
    stream.feed(&reg, chat_end().as_bytes()).unwrap();
    let done = stream.finish(&reg).unwrap();
    assert_eq!(
        done.calls[0].arguments.clone().into_value().unwrap(),
        json!({"city": "Oslo"})
    );
    assert_eq!(done.results[0].outcome, Outcome::Ok);

    // finish_reason "length" with a call still open: cut, never run.
    let length = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]});
    let body = chat_start(0, "c1", "get_time", "{\"tz\":")
        + &format!("data: {length}\n\ndata: [DONE]\n\n");
    let (got, ran, _) = run_whole(Format::OpenAiChat, &body);
    assert_eq!(got.cut, [0]);
    assert!(
        got.results[0].content.contains("finish_reason \"length\""),
        "{}",
        got.results[0].content
    );
    assert!(ran.is_empty());
}

#[test]
fn a_responses_call_starts_at_its_arguments_done_event() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let mut stream = Stream::new(Format::OpenAiResponses, early(true), None, None).unwrap();
    let body = responses_item("response.output_item.added", 0, "c0", "get_time", "")
        + &responses_event(json!({"type": "response.function_call_arguments.delta",
            "output_index": 0, "item_id": "fc_0", "delta": "{}"}))
        + &responses_event(json!({"type": "response.function_call_arguments.done",
            "output_index": 0, "item_id": "fc_0", "arguments": "{}"}));
    stream.feed(&reg, body.as_bytes()).unwrap();
    assert!(
        started(&ran, "c0"),
        "the call starts before the response ends"
    );
    let end = responses_event(json!({"type": "response.completed", "response":
        {"id": "r", "object": "response", "status": "completed", "output": []}}));
    stream.feed(&reg, end.as_bytes()).unwrap();
    assert_eq!(stream.finish(&reg).unwrap().results[0].outcome, Outcome::Ok);
}

#[test]
fn chat_arguments_that_are_json_but_no_object_wait_for_the_finish_and_empty_ones_run_there() {
    // Only a whole JSON object completes a Chat call early: "5" may still
    // grow ("50"), so it completes when the next call starts; "" (a call
    // without arguments) completes at the finish_reason and runs.
    let log = Arc::new(Mutex::new(Vec::new()));
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let mut stream = recording_stream(Format::OpenAiChat, true, log.clone());
    stream
        .feed(&reg, chat_start(0, "n", "get_time", "5").as_bytes())
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(log.lock().unwrap().is_empty(), "{:?}", log.lock().unwrap());
    stream.feed(&reg, chat_chunk(0, "0").as_bytes()).unwrap();
    stream
        .feed(&reg, chat_start(1, "e", "get_time", "").as_bytes())
        .unwrap();
    stream.feed(&reg, chat_end().as_bytes()).unwrap();
    let done = stream.finish(&reg).unwrap();
    assert_eq!(
        done.calls[0].arguments,
        capstan::Arguments::Text("50".into())
    );
    assert_eq!(done.results[0].outcome, Outcome::InvalidArguments);
    assert!(done.cut.is_empty(), "{:?}", done.cut);
    assert_eq!(
        done.results[1].outcome,
        Outcome::Ok,
        "{}",
        done.results[1].content
    );
    assert_eq!(*ran.lock().unwrap(), ["e"]);
}

#[test]
fn sse_framing_skips_a_leading_bom_and_names_the_line_that_is_not_utf8() {
    let reg = Registry::default();
    // The first line carries the call, so a BOM left in place would lose it.
    let body = format!(
        "\u{feff}{}{}",
        chat_start(0, "c0", "get_time", "{}"),
        chat_end()
    );
    let (bom, _, _) = run_whole(Format::OpenAiChat, &body);
    assert_eq!(bom.calls.len(), 1);
    assert_eq!(bom.calls[0].id, "c0");

    let mut stream = Stream::new(Format::OpenAiChat, StreamOptions::default(), None, None).unwrap();
    let err = stream
        .feed(&reg, b": comment\n\ndata: \xff\xfe\n\n")
        .unwrap_err();
    assert!(
        err.to_string().contains("stream line 3 is not valid UTF-8"),
        "{err}"
    );
}

#[test]
fn an_event_still_being_built_counts_against_the_cap_and_so_do_open_responses_arguments() {
    let reg = Registry::default();
    // Data lines with no blank line to end the event, and no event name.
    let mut stream = Stream::new(Format::OpenAiChat, capped(1000), None, None).unwrap();
    let line = format!("data: {}\n", "x".repeat(100));
    feed_until_too_large(&mut stream, &reg, (0..40).map(|_| line.as_bytes()));
    // Responses arguments that never end.
    let mut stream = Stream::new(Format::OpenAiResponses, capped(1000), None, None).unwrap();
    stream
        .feed(
            &reg,
            responses_item("response.output_item.added", 0, "c0", "f", "").as_bytes(),
        )
        .unwrap();
    let delta = responses_event(json!({"type": "response.function_call_arguments.delta",
        "output_index": 0, "delta": "x".repeat(50)}));
    feed_until_too_large(&mut stream, &reg, (0..60).map(|_| delta.as_bytes()));
}

#[test]
fn a_responses_arguments_done_event_is_authoritative_over_its_deltas() {
    let body = responses_item("response.output_item.added", 0, "c0", "get_weather", "")
        + &responses_event(json!({"type": "response.function_call_arguments.delta",
            "output_index": 0, "delta": "{\"city\":\"Os"}))
        + &responses_event(json!({"type": "response.function_call_arguments.done",
            "output_index": 0, "arguments": "{\"city\":\"Oslo\"}"}))
        + &responses_event(json!({"type": "response.completed", "response":
            {"id": "r", "object": "response", "status": "completed", "output": []}}));
    let (got, _, _) = run_whole(Format::OpenAiResponses, &body);
    assert_eq!(
        got.calls[0].arguments.clone().into_value().unwrap(),
        json!({"city": "Oslo"})
    );
}

#[test]
fn a_call_held_back_by_the_limit_starts_when_a_running_call_finishes_not_at_the_next_event() {
    // `slow` runs until released; with a limit of 1 the second call waits
    // for it, then starts on its own: the host feeds nothing more meanwhile.
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let release = Arc::new(AtomicUsize::new(0));
    let gate = release.clone();
    reg.register(ToolDef {
        name: "slow".into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(move |call: capstan::Call| {
            assert!(eventually(Duration::from_secs(30), || gate
                .load(Ordering::SeqCst)
                > 0));
            call.complete_text("slow done").unwrap();
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    })
    .unwrap();
    for parallel in [true, false] {
        ran.lock().unwrap().clear();
        release.store(0, Ordering::SeqCst);
        let mut options = early(parallel);
        options.exec.limit = 1;
        let mut stream = Stream::new(Format::OpenAiChat, options, None, None).unwrap();
        let body = chat_start(0, "s", "slow", "{}")
            + &chat_start(1, "w1", "get_weather", "{}")
            + &chat_start(2, "w2", "get_time", "{}");
        stream.feed(&reg, body.as_bytes()).unwrap();
        // The third call's start completed the second's arguments: both wait.
        std::thread::sleep(Duration::from_millis(50));
        assert!(ran.lock().unwrap().is_empty(), "held by the limit");
        release.store(1, Ordering::SeqCst);
        assert!(
            started(&ran, "w1"),
            "parallel={parallel}: held call started"
        );
        stream.feed(&reg, chat_end().as_bytes()).unwrap();
        let finished = stream.finish(&reg).unwrap();
        let texts: Vec<&str> = finished
            .results
            .iter()
            .map(|r| r.content.as_str())
            .collect();
        assert_eq!(
            texts,
            ["slow done", "ran w1", "ran w2"],
            "parallel={parallel}"
        );
        assert_eq!(
            *ran.lock().unwrap(),
            ["w1", "w2"],
            "each ran once, in order"
        );
    }
}
