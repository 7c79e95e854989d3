//! Streaming functions of the C ABI: a provider's streamed response in,
//! text deltas and call results out as they come.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

use super::boundary::*;
use super::exec::exec_options;
use super::flags::{exec_flags, CAPSTAN_EXEC_EARLY_DISPATCH};
use super::registry::registry_ref;
use super::types::*;
use crate::call::ToolResult;
use crate::providers::Format;
use crate::stream::{Control, Stream, StreamOptions};

/// A streamed response being read (`capstan_stream_new`).
pub struct capstan_stream {
    _private: [u8; 0],
}

/// Cap on the bytes one stream holds at once (16 MiB): the line and event
/// being read, the arguments of calls, the response's text kept for
/// `capstan_stream_finish`. Past it, feed fails with
/// `CAPSTAN_ERR_STREAM_TOO_LARGE` (and so does every later feed and the finish).
pub const CAPSTAN_STREAM_MAX_BUFFERED: usize = 16777216;

// The core's default, spelled as a literal above for cbindgen.
const _: () = assert!(CAPSTAN_STREAM_MAX_BUFFERED == crate::stream::DEFAULT_MAX_BUFFERED);

/// Receives a piece of the model's text as it streams. `text` is UTF-8 (never
/// a partial character), NOT NUL-terminated, borrowed for the call. Runs on
/// the thread calling `capstan_stream_feed` (or `capstan_stream_finish`, for
/// text in the body's last lines), inside it. It may call
/// `capstan_stream_cancel` but not feed or finish the same stream.
pub type capstan_text_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, text: *const c_char, len: usize)>;

/// Where a stream delivers what it reads. NULL means nothing is delivered.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct capstan_stream_sink {
    /// `sizeof(capstan_stream_sink)`.
    pub struct_size: u32,
    /// Text deltas (may be NULL).
    pub on_text: capstan_text_fn,
    /// Call results as each call ends (may be NULL), `result->index` being
    /// the call's position in the response. Runs on the thread that finished
    /// the call (a pool thread for a call started early; see
    /// `capstan_result_fn`), possibly on several at once, or inside
    /// `capstan_stream_finish`. Every call of the response gets exactly one;
    /// then, inside `capstan_stream_finish` (whatever it returns), one last
    /// call with `result == NULL`.
    pub on_result: capstan_result_fn,
    /// Passed to both. Must stay valid until `capstan_stream_finish` or
    /// `capstan_stream_free` returned: no callback of the stream runs after
    /// either. capstan never frees it.
    pub user_data: *mut c_void,
}

struct Host {
    text: capstan_text_fn,
    result: capstan_result_fn,
    user_data: *mut c_void,
}
// The host promises (header: "Thread safety") that its callbacks and
// user_data may be used from any thread.
unsafe impl Send for Host {}
unsafe impl Sync for Host {}

struct StreamBox {
    /// A share of the registry (header: "Children"): the stream stays
    /// usable after `capstan_registry_free`; its calls then end cancelled.
    registry: crate::registry::Registry,
    fmt: Format,
    core: Mutex<Stream>,
    control: Arc<Control>,
    host: Arc<Host>,
}

fn stream_ref<'a>(stream: *mut capstan_stream) -> Result<&'a StreamBox, Fail> {
    non_null(stream, "stream")?;
    // SAFETY: a non-NULL capstan_stream* is a Box<StreamBox> from capstan_stream_new.
    Ok(unsafe { &*stream.cast::<StreamBox>() })
}

fn busy() -> Fail {
    Fail::Core(crate::Error::WrongContext(
        "the stream is being fed or finished on another thread, or from its own text callback"
            .into(),
    ))
}

/// Starts reading a streamed response in `fmt` (`CAPSTAN_FORMAT_OPENAI_CHAT`,
/// `_OPENAI_RESPONSES`, `_ANTHROPIC` or `_GEMINI`; the others are
/// INVALID_ARGUMENT): the body of a server-sent-events response (Gemini:
/// `streamGenerateContent?alt=sse`). `opts` (NULL: defaults) say how calls
/// run, as for `capstan_registry_execute`, plus `CAPSTAN_EXEC_EARLY_DISPATCH`;
/// any other exec flag is INVALID_ARGUMENT naming it (`DELIVER_POLL`: results
/// go to the sink).
/// `sink` may be NULL. The stream keeps what it needs of `reg` (header:
/// "Children"): `capstan_registry_free` before the stream is defined, and
/// calls fed after it end `CAPSTAN_OUTCOME_CANCELLED`. `*out` (free with
/// `capstan_stream_free`) is written only on OK.
///
/// One thread at a time may feed or finish a stream; `capstan_stream_cancel`
/// may be called from any thread at any time.
#[no_mangle]
pub unsafe extern "C" fn capstan_stream_new(
    reg: *mut capstan_registry,
    fmt: capstan_format,
    opts: *const capstan_exec_options,
    sink: *const capstan_stream_sink,
    out: *mut *mut capstan_stream,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?.clone();
        non_null(out, "out")?;
        let format = super::providers::format_of(fmt)?;
        let exec = exec_options(opts, exec_flags::STREAM, "capstan_stream_new")?;
        let flags = if opts.is_null() { 0 } else { (*opts).flags };
        let sink = read_options(sink, std::mem::size_of::<capstan_stream_sink>(), "sink")?;
        let host = Arc::new(match sink {
            Some(s) => Host {
                text: s.on_text,
                result: s.on_result,
                user_data: s.user_data,
            },
            None => Host {
                text: None,
                result: None,
                user_data: std::ptr::null_mut(),
            },
        });
        let on_text = host.text.map(|_| {
            let host = host.clone();
            Box::new(move |text: &str| {
                if let Some(f) = host.text {
                    // SAFETY: the host gave us f and user_data to call with text.
                    unsafe { f(host.user_data, text.as_ptr().cast(), text.len()) }
                }
            }) as crate::stream::TextFn
        });
        let on_result = host.result.map(|_| {
            let host = host.clone();
            Arc::new(move |index: usize, result: &ToolResult| {
                if let Some(f) = host.result {
                    // SAFETY: the host gave us f and user_data to call with results.
                    with_result_view(index, result, |view| unsafe { f(host.user_data, view) })
                }
            }) as crate::stream::ResultFn
        });
        let options = StreamOptions {
            exec,
            early_dispatch: flags & CAPSTAN_EXEC_EARLY_DISPATCH != 0,
            max_buffered: CAPSTAN_STREAM_MAX_BUFFERED,
        };
        let stream = Stream::new(format, options, on_text, on_result)?;
        let boxed = StreamBox {
            registry,
            fmt: format,
            control: stream.control(),
            core: Mutex::new(stream),
            host,
        };
        *out = Box::into_raw(Box::new(boxed)).cast::<capstan_stream>();
        Ok(())
    })
}

/// Reads the next `len` bytes of the response body, split anywhere (inside
/// a line, a UTF-8 character, a JSON string). Text deltas go to the sink
/// before it returns; with `CAPSTAN_EXEC_EARLY_DISPATCH` each call whose
/// arguments are complete starts now. `bytes` may be NULL when `len` is 0.
///
/// Errors, sticky (every later feed and the finish return the same status):
/// PROVIDER_ERROR for an error event of the provider (`capstan_error_message`
/// as for `capstan_format_parse_calls`), INVALID_RESPONSE for a line that is not
/// UTF-8, an event that is not the format's JSON, or (OpenAI Chat, where a
/// call counts as complete once its arguments form a whole JSON object)
/// more than whitespace added to arguments a call already started with,
/// STREAM_TOO_LARGE past
/// `CAPSTAN_STREAM_MAX_BUFFERED`. Calls already started keep running.
/// WRONG_CONTEXT after `capstan_stream_finish` or `capstan_stream_cancel`,
/// or while another feed/finish of the stream runs.
#[no_mangle]
pub unsafe extern "C" fn capstan_stream_feed(
    stream: *mut capstan_stream,
    bytes: *const c_void,
    len: usize,
) -> capstan_status {
    guard(|| {
        let s = stream_ref(stream)?;
        let bytes: &[u8] = if len == 0 {
            &[]
        } else {
            non_null(bytes, "bytes")?;
            std::slice::from_raw_parts(bytes.cast::<u8>(), len)
        };
        let mut core = s.core.try_lock().map_err(|_| busy())?;
        core.feed(&s.registry, bytes)?;
        Ok(())
    })
}

/// The body ended: starts the calls not started yet, waits (like
/// `capstan_registry_execute`) until every call has its result, and writes to `*out`
/// (free with `capstan_string_free`) a JSON object:
/// - `"calls"`: the response's calls in order, normalized as
///   `capstan_format_parse_calls` gives them for the same response not streamed;
/// - `"results"`: one normalized result per call, in call order;
/// - `"messages"`: those results as the provider's next request takes them
///   (what `capstan_registry_run_turn` returns);
/// - `"text"`: the response's text; `"stop_reason"`: the provider's stop or
///   finish reason (or null); `"cancelled"`: whether the stream was cancelled;
/// - `"cut_calls"`: positions of calls the response cut (`finish_reason`
///   `length`, `stop_reason` `max_tokens`, `response.incomplete`): a cut call
///   is NEVER run; its result is `CAPSTAN_OUTCOME_INVALID_ARGUMENTS` with
///   content saying why, and its arguments in `"calls"` are the text that
///   arrived.
///
/// Returns the feed's sticky error if one failed; STREAM_TRUNCATED when the
/// body ended before the response's closing event (nothing written; the
/// calls not started are not run). In every case no sink callback runs
/// after it returns, and `on_result(NULL)` was its last. Once only:
/// WRONG_CONTEXT the second time. After `capstan_stream_cancel`, calls not
/// started end `CAPSTAN_OUTCOME_CANCELLED` and the status is OK.
#[no_mangle]
pub unsafe extern "C" fn capstan_stream_finish(
    stream: *mut capstan_stream,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    guard(|| {
        let s = stream_ref(stream)?;
        non_null(out, "out")?;
        let finished = {
            let mut core = s.core.try_lock().map_err(|_| busy())?;
            core.finish(&s.registry)
        };
        if let Some(f) = s.host.result {
            f(s.host.user_data, std::ptr::null());
        }
        let json = finished?.to_json(s.fmt).to_string();
        write_text(&json, out, out_len)
    })
}

/// Cancels the stream: no call starts any more, running calls see
/// `capstan_call_cancelled`, later feeds return WRONG_CONTEXT. Still call
/// `capstan_stream_finish` to collect the results (calls never started end
/// `CAPSTAN_OUTCOME_CANCELLED`), or just `capstan_stream_free`. Any thread,
/// also inside a sink callback. NULL: no-op.
#[no_mangle]
pub unsafe extern "C" fn capstan_stream_cancel(stream: *mut capstan_stream) {
    guard_value((), || {
        if !stream.is_null() {
            stream_ref(stream)?.control.cancel();
        }
        Ok(())
    })
}

/// Frees a stream at any point (not while a feed or finish of it runs);
/// NULL is a no-op. Calls still running finish internally; when this returns
/// no sink callback of the stream is running or will run. Consumes `stream`.
#[no_mangle]
pub unsafe extern "C" fn capstan_stream_free(stream: *mut capstan_stream) {
    guard_value((), || {
        if stream.is_null() {
            return Ok(());
        }
        let s = Box::from_raw(stream.cast::<StreamBox>());
        s.control.detach();
        drop(s);
        Ok(())
    })
}
