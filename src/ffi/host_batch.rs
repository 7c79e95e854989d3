//! Host batches of the C ABI: the one-crossing-per-batch path of a host that
//! runs its quick tools itself (see `crate::exec::HostBatch`).

use std::ffi::c_char;
use std::sync::{Arc, LazyLock, OnceLock};
use std::time::Duration;

use super::boundary::*;
use super::exec::exec_options;
use super::flags::exec_flags;
use super::registry::registry_ref;
use super::types::*;
use crate::call::{results_into_string, CallRequest};
use crate::exec::HostBatch;
use crate::handles::HandleTable;

/// A batch whose `CAPSTAN_TOOL_HOST_RUN` calls the host runs itself. Made by
/// `capstan_host_batch_begin`, freed by `capstan_host_batch_free`; any use
/// after that is CAPSTAN_ERR_STALE_HANDLE (it is a checked handle, not a
/// pointer to memory). It keeps its registry's state alive.
pub struct capstan_host_batch {
    _private: [u8; 0],
}

/// A host batch and the text it lends the host.
struct Entry {
    batch: HostBatch,
    /// The handed-out calls, NUL-terminated.
    calls: String,
    /// The results `finish` returned, NUL-terminated.
    results: OnceLock<String>,
}

static BATCHES: LazyLock<HandleTable<Entry>> = LazyLock::new(HandleTable::new);

fn entry(batch: *const capstan_host_batch) -> Result<Arc<Entry>, Fail> {
    non_null(batch, "batch")?;
    BATCHES.get(batch as usize).ok_or_else(|| {
        Fail::Core(crate::Error::StaleHandle(
            "host batch handle is not live: it was freed (capstan_host_batch_free)".into(),
        ))
    })
}

/// Lends `text` (NUL-terminated) through `out`/`out_len` (length without the NUL).
unsafe fn lend(text: &str, out: *mut *const c_char, out_len: *mut usize) {
    *out = text.as_ptr().cast::<c_char>();
    if !out_len.is_null() {
        *out_len = text.len() - 1;
    }
}

/// Starts a batch whose calls of `CAPSTAN_TOOL_HOST_RUN` tools the host runs
/// itself: one crossing hands out all of them, checked; one crossing
/// (`capstan_host_batch_finish`) takes all their answers.
///
/// `calls_json` as for `capstan_registry_execute`. Every call is checked
/// here, on this thread, as execute checks it (unknown tool, arguments
/// validated, coerced, defaults filled, approval asked); calls of every
/// other tool (a native callback, a slow or blocking tool) start on the
/// pool at once, under `opts->limit`. On success `*out` is the batch and
/// `*calls_json_out` (length in `*calls_len`, which may be NULL) lends the
/// calls the host must run, by index, as one JSON array
/// `[{"index","id","name","arguments"}]` (`arguments` an object, defaults
/// filled), valid until `capstan_host_batch_free`: do not free it. Calls
/// that cannot run (unknown, invalid, denied) are not in it: they already
/// have their result. A host-run call not checked before this returns (one
/// waiting for an approver's later decision, a `CAPSTAN_TOOL_SERIAL`
/// tool's) runs its tool's callback instead, on a pool thread.
/// `opts` takes `CAPSTAN_EXEC_SEQUENTIAL` (the pool's calls one at a time;
/// the host runs its own as it likes, meanwhile) and
/// `CAPSTAN_EXEC_STRICT_NULLS`; `opts->deadline_ms` bounds the whole batch,
/// the host's answers included: a call unanswered by then ends `timeout`.
/// Any thread; the calls lent are the host's to run on this thread (no
/// hop), and a handed-out call has no `capstan_call` (no progress, log or
/// input requests: a tool that needs them is not `CAPSTAN_TOOL_HOST_RUN`).
#[no_mangle]
pub unsafe extern "C" fn capstan_host_batch_begin(
    reg: *mut capstan_registry,
    calls_json: *const c_char,
    len: usize,
    opts: *const capstan_exec_options,
    out: *mut *mut capstan_host_batch,
    calls_json_out: *mut *const c_char,
    calls_len: *mut usize,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        non_null(out, "out")?;
        non_null(calls_json_out, "calls_json_out")?;
        let calls = text(calls_json, len, "calls_json")?;
        let options = exec_options(opts, exec_flags::EXECUTE, "capstan_host_batch_begin")?;
        let calls = CallRequest::list_from_str(calls)?;
        let batch = HostBatch::begin(registry, calls, &options);
        let mut calls = batch.calls_json();
        calls.push('\0');
        let entry = Arc::new(Entry {
            batch,
            calls,
            results: OnceLock::new(),
        });
        let handle = BATCHES.insert(entry.clone()).ok_or_else(|| {
            Fail::Core(crate::Error::Internal("too many live host batches".into()))
        })?;
        *out = handle as *mut capstan_host_batch;
        lend(&entry.calls, calls_json_out, calls_len);
        Ok(())
    })
}

/// Hands capstan the host's answers to every handed-out call at once, waits
/// up to `timeout_ms` for the batch's other calls, and lends every result in
/// call order.
///
/// `answers_json`: one JSON array with one entry per handed-out call, any
/// order: `{"index": N, "text": "..."}`, `{"index": N, "json": <any JSON>}`,
/// `{"index": N, "parts": <MCP content blocks>}` or `{"index": N, "error":
/// "..."}` (a tool error the model reads). capstan renders each as a
/// callback's completion would be (output limits, content kinds). On
/// success `*results_json` lends the results array of
/// `capstan_registry_execute` (length in `*results_len`, may be NULL),
/// valid until `capstan_host_batch_free`: do not free it.
///
/// `timeout_ms`: how long to wait for the batch's pool calls (0 = not at
/// all, UINT32_MAX = no limit; bounded anyway by their timeouts and the
/// deadline). Still running then: CAPSTAN_ERR_TIMEOUT, the answers kept;
/// call again with `answers_json` NULL to wait again. The registry's
/// notifier and wake fd (`capstan_registry_set_notify`,
/// `capstan_registry_wake_fd`) fire when the pool's calls are done, so an
/// event loop need not block here.
///
/// The whole answer is checked before any call completes; on any problem
/// nothing changes and the host may answer again: INVALID_RESULTS for
/// malformed JSON (a wrong `len` included), an index not handed out, an
/// index answered twice, a call left unanswered, an entry without exactly
/// one of the four fields, or no answers (NULL) on the first call.
/// ALREADY_COMPLETED for answers given again, or any call once the results
/// were lent; WRONG_CONTEXT while another thread is inside this function on
/// the same batch; STALE_HANDLE for a freed batch. An answer for a call
/// that already ended (its timeout, the deadline,
/// `capstan_host_batch_cancel`) is dropped: its result says why it ended.
/// Any thread.
#[no_mangle]
pub unsafe extern "C" fn capstan_host_batch_finish(
    batch: *mut capstan_host_batch,
    answers_json: *const c_char,
    len: usize,
    timeout_ms: u32,
    results_json: *mut *const c_char,
    results_len: *mut usize,
) -> capstan_status {
    guard(|| {
        let entry = entry(batch)?;
        non_null(results_json, "results_json")?;
        let answers = if answers_json.is_null() {
            None
        } else {
            Some(text(answers_json, len, "answers_json")?)
        };
        let wait = (timeout_ms != u32::MAX).then(|| Duration::from_millis(u64::from(timeout_ms)));
        let results = entry.batch.finish(answers, wait)?;
        let mut json = results_into_string(results);
        json.push('\0');
        let json = entry.results.get_or_init(|| json);
        lend(json, results_json, results_len);
        Ok(())
    })
}

/// Cancels the batch: pool calls not started end `cancelled`, running ones
/// see `capstan_call_cancelled`; handed-out calls without an answer end
/// `cancelled` (a later answer for them is dropped). NULL or freed: no-op.
#[no_mangle]
pub unsafe extern "C" fn capstan_host_batch_cancel(batch: *mut capstan_host_batch) {
    guard_value((), || {
        if !batch.is_null() {
            if let Ok(entry) = entry(batch) {
                entry.batch.cancel();
            }
        }
        Ok(())
    })
}

/// Frees the batch and the text it lent; NULL or already freed: no-op.
/// Handed-out calls never answered end `cancelled`; pool calls still
/// running finish internally. A thread inside `capstan_host_batch_finish`
/// on it at the time keeps it alive until that returns (the text it lends
/// then goes with it). Consumes `batch`.
#[no_mangle]
pub unsafe extern "C" fn capstan_host_batch_free(batch: *mut capstan_host_batch) {
    guard_value((), || {
        if !batch.is_null() {
            drop(BATCHES.remove(batch as usize));
        }
        Ok(())
    })
}
