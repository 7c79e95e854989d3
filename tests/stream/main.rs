//! Streaming (`capstan_stream_*` and `capstan::stream`): fixtures written
//! from each provider's documented event format (tests/fixtures/stream),
//! fed at every split and at random chunk sizes; early dispatch; cut,
//! dropped and failing streams; the memory cap. The helpers every part
//! uses live here; the tests are split by subject: `assembly`, `early`,
//! `order`, `cap`, `events`, `cabi`.

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

#[path = "../common/wait.rs"]
mod wait;
use wait::eventually;

mod assembly;
mod cabi;
mod cap;
mod early;
mod events;
mod order;

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

/// `capstan_format_parse_calls` on a non-streamed body, through the C ABI.
fn parse_calls(fmt: Format, body: &[u8]) -> Value {
    let (mut out, mut len) = (std::ptr::null_mut(), 0);
    let st = unsafe {
        capstan_format_parse_calls(
            fmt as u32,
            body.as_ptr().cast(),
            body.len(),
            &mut out,
            &mut len,
        )
    };
    assert_eq!(st, CAPSTAN_OK, "{}", last_error());
    let text = unsafe { std::slice::from_raw_parts(out.cast::<u8>(), len) }.to_vec();
    unsafe { capstan_string_free(out) };
    serde_json::from_slice(&text).unwrap()
}

fn last_error() -> String {
    let mut buf = vec![0u8; 1024];
    let n = unsafe { capstan_error_message(buf.as_mut_ptr().cast(), buf.len()) };
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

fn wait_for(log: &Mutex<Vec<Ev>>, what: impl Fn(&[Ev]) -> bool) -> bool {
    eventually(Duration::from_secs(30), || what(&log.lock().unwrap()))
}

/// A chat chunk adding `args` to the arguments of call `index`.
fn chat_chunk(index: u32, args: &str) -> String {
    let call = json!({"index": index, "function": {"arguments": args}});
    let chunk = json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]});
    format!("data: {chunk}\n\n")
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

fn gemini_chunk(data: Value) -> String {
    format!("data: {data}\r\n\r\n")
}
