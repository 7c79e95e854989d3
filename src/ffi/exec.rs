//! Execution functions of the C ABI.

use std::ffi::{c_char, c_void};
use std::time::Duration;

use super::boundary::*;
use super::flags::exec_flags;
use super::registry::registry_ref;
use super::types::*;
use crate::call::ToolResult;
use crate::call::{results_into_string, CallRequest};
use crate::exec::{self, Batch, ExecOptions, Sink};

/// The size of the first `capstan_exec_options` (struct_size, flags, limit,
/// timeout_ms): a host built against it still works; later fields read as zero.
const EXEC_OPTIONS_V1: usize = std::mem::offset_of!(capstan_exec_options, approved_ids);

/// Checks `flags` against the flags `function` uses (`allowed`): the first
/// flag it does not use, or an unknown bit, is INVALID_ARGUMENT naming it.
pub(crate) fn check_flags(
    flags: u32,
    allowed: u32,
    names: &[(u32, &str, &str)],
    function: &str,
) -> Result<(), Fail> {
    let extra = flags & !allowed;
    if extra == 0 {
        return Ok(());
    }
    let bit = extra & extra.wrapping_neg();
    Err(Fail::BadArgument(
        match names.iter().find(|(flag, _, _)| *flag == bit) {
            Some((_, name, user)) => {
                format!("{name} does not apply to {function} (it is for {user})")
            }
            None => format!("unknown flag 0x{bit:x} passed to {function}"),
        },
    ))
}

pub(crate) unsafe fn exec_options(
    opts: *const capstan_exec_options,
    allowed: u32,
    function: &str,
) -> Result<ExecOptions, Fail> {
    Ok(read_exec_options(opts, allowed, function)?.0)
}

/// The options, and their raw flags for what only the C ABI reads (delivery).
pub(crate) unsafe fn read_exec_options(
    opts: *const capstan_exec_options,
    allowed: u32,
    function: &str,
) -> Result<(ExecOptions, u32), Fail> {
    let Some(o) = read_options(opts, EXEC_OPTIONS_V1, "opts")? else {
        return Ok((ExecOptions::default(), 0));
    };
    check_flags(o.flags, allowed, exec_flags::NAMES, function)?;
    let options = ExecOptions {
        parallel: o.flags & CAPSTAN_EXEC_SEQUENTIAL == 0,
        limit: o.limit as usize,
        timeout_ms: o.timeout_ms,
        deadline_ms: o.deadline_ms,
        pump_wait_ms: 0,
        strict_nulls: o.flags & CAPSTAN_EXEC_STRICT_NULLS != 0,
        approved: approved_ids(o.approved_ids, o.approved_count)?,
        start_inline: o.flags & CAPSTAN_EXEC_START_INLINE != 0,
        start_on_wait: o.flags & CAPSTAN_EXEC_START_ON_WAIT != 0,
        progress: None,
        log: None,
        input: None,
        on_defer: None,
        run_id: match o.run_id.is_null() {
            true => None,
            false => Some(text(o.run_id, o.run_id_len, "opts->run_id")?.into()),
        },
    };
    Ok((options, o.flags))
}

/// Runs calls and blocks until each has its one result. `calls_json` is one
/// normalized call `{"id","name","arguments"}` or an array of them
/// (`arguments` may be an object or a string holding one). On success
/// `*results_json` (free with `capstan_string_free`) is an array of normalized results
/// `{"id","name","content","is_error","outcome","duration_us"}` in call order.
/// Tool failures, invalid arguments, unknown tools, timeouts are results, not
/// statuses; INVALID_CALLS only when `calls_json` itself is malformed. Any
/// thread, including inside a tool callback (nested execution). On a thread
/// that ever called `capstan_registry_pump` on `reg`, main-thread tools of
/// the batch run on this thread while it waits; from any other thread they
/// wait for a pump: 60 s at most in a batch without `opts->deadline_ms`
/// (then they end `timeout`, saying that no thread called
/// `capstan_registry_pump`), or until the deadline.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_execute(
    reg: *mut capstan_registry,
    calls_json: *const c_char,
    len: usize,
    opts: *const capstan_exec_options,
    results_json: *mut *mut c_char,
    results_len: *mut usize,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        non_null(results_json, "results_json")?;
        let calls = text(calls_json, len, "calls_json")?;
        let options = exec_options(opts, exec_flags::EXECUTE, "capstan_registry_execute")?;
        let calls = CallRequest::list_from_str(calls)?;
        let results = exec::execute(registry, calls, &options);
        let json = results_into_string(results);
        write_text(&json, results_json, results_len)
    })
}

unsafe fn approved_ids(ids: *const *const c_char, count: usize) -> Result<Vec<String>, Fail> {
    if count == 0 {
        return Ok(Vec::new());
    }
    non_null(ids, "opts.approved_ids")?;
    (0..count)
        .map(|i| {
            c_text(*ids.add(i), "opts.approved_ids[i]")?
                .map(str::to_owned)
                .ok_or(Fail::Null("opts.approved_ids[i]"))
        })
        .collect()
}

/// Calls a host result callback with a borrowed view of `result`.
unsafe fn hand_over(
    f: unsafe extern "C" fn(*mut c_void, *const capstan_result),
    user_data: *mut c_void,
    index: usize,
    result: &ToolResult,
) {
    with_result_view(index, result, |view| f(user_data, view));
}

type ResultFn = HostFn<unsafe extern "C" fn(*mut c_void, *const capstan_result)>;

impl ResultFn {
    fn result(&self, index: usize, result: &ToolResult) {
        // SAFETY: the host gave us f and user_data to call with results.
        unsafe { hand_over(self.f, self.user_data, index, result) }
    }

    fn done(&self) {
        // SAFETY: as above; NULL marks the end of the batch.
        unsafe { (self.f)(self.user_data, std::ptr::null()) }
    }
}

fn batch_ref<'a>(batch: *const capstan_batch) -> Result<&'a Batch, Fail> {
    non_null(batch, "batch")?;
    // SAFETY: a non-NULL capstan_batch* is a Box<Batch> from capstan_batch_submit.
    Ok(unsafe { &*batch.cast::<Batch>() })
}

/// Starts running calls and returns at once; `*out` (free with
/// `capstan_batch_free`) is the batch. `calls_json` as for `capstan_registry_execute`.
/// Results go to `on_result` (with `user_data`) as each call finishes, each
/// carrying its index; after the last, `on_result` is called once with NULL.
/// With `CAPSTAN_EXEC_DELIVER_POLL` results are queued instead, for
/// `capstan_batch_poll` (and `on_result` here is unused and may be NULL).
/// `on_result` may be NULL: results are dropped, `capstan_batch_wait` still works.
/// Calls start on pool threads at once (up to the batch's limit; while every
/// call so far is of a tool whose last 4 calls each ended within 20 us, on one
/// pool thread, which calls the others in when calls still wait 50 us after
/// it began: two quick calls wake one thread, not two). With
/// `CAPSTAN_EXEC_START_ON_WAIT` they start on the thread that waits with
/// `capstan_batch_wait(batch, UINT32_MAX)` instead (no hand-off: the
/// cheapest way to run a batch of quick calls), or on pool threads about
/// 50 us after the submit for those no waiting thread took by then (a
/// timer: no thread polls for it). With `CAPSTAN_EXEC_START_INLINE` they
/// start on the calling thread before this returns; the two flags together
/// are INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn capstan_batch_submit(
    reg: *mut capstan_registry,
    calls_json: *const c_char,
    len: usize,
    opts: *const capstan_exec_options,
    on_result: capstan_result_fn,
    user_data: *mut c_void,
    out: *mut *mut capstan_batch,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        non_null(out, "out")?;
        let calls = text(calls_json, len, "calls_json")?;
        let (options, flags) = read_exec_options(opts, exec_flags::SUBMIT, "capstan_batch_submit")?;
        if options.start_inline && options.start_on_wait {
            return Err(Fail::BadArgument(
                "CAPSTAN_EXEC_START_INLINE and CAPSTAN_EXEC_START_ON_WAIT exclude each other \
                 (calls start on the submitting thread, or on the waiting one)"
                    .into(),
            ));
        }
        let poll = flags & CAPSTAN_EXEC_DELIVER_POLL != 0;
        let calls = CallRequest::list_from_str(calls)?;
        let host = on_result.map(|f| HostFn { f, user_data });
        let (sink, on_done): (Sink, Option<Box<dyn Fn() + Send + Sync>>) = match (poll, host) {
            (true, _) => (Sink::Queue, None),
            (false, Some(h)) => (
                Sink::Callback(Box::new(move |index, result| h.result(index, &result))),
                Some(Box::new(move || h.done())),
            ),
            (false, None) => (Sink::Callback(Box::new(|_, _| {})), None),
        };
        let batch = exec::submit(registry, calls, &options, sink, on_done);
        *out = Box::into_raw(Box::new(batch)).cast::<capstan_batch>();
        Ok(())
    })
}

/// Waits until every result of the batch was handed over (callback delivery:
/// every callback returned, the final `result == NULL` one included, so the
/// callback's `user_data` may be freed once this returns OK; poll delivery:
/// every result is queued), up to
/// `timeout_ms` (0 = just check, UINT32_MAX = no limit). OK when done,
/// CAPSTAN_ERR_TIMEOUT otherwise (the batch keeps running). Do not call from
/// inside the batch's own result callback. With no time limit (UINT32_MAX)
/// this thread runs the batch's calls no pool thread has started yet, rather
/// than sleep (their tool and result callbacks then run here); with a time
/// limit it only waits. On a thread that ever called
/// `capstan_registry_pump` on the batch's registry, the batch's main-thread
/// calls run on this thread while it waits.
#[no_mangle]
pub unsafe extern "C" fn capstan_batch_wait(
    batch: *mut capstan_batch,
    timeout_ms: u32,
) -> capstan_status {
    guard(|| {
        let batch = batch_ref(batch)?;
        let timeout =
            (timeout_ms != u32::MAX).then(|| Duration::from_millis(u64::from(timeout_ms)));
        if batch.wait(timeout) {
            Ok(())
        } else {
            Err(Fail::Core(crate::Error::Timeout(format!(
                "the batch is not done after {timeout_ms} ms"
            ))))
        }
    })
}

/// Hands up to `max` queued results (poll delivery) to `on_result` on the
/// calling thread, oldest first; after the last result of the batch it calls
/// `on_result` once with NULL. Returns how many results it handed over (0 for
/// a NULL batch or callback).
#[no_mangle]
pub unsafe extern "C" fn capstan_batch_poll(
    batch: *mut capstan_batch,
    on_result: capstan_result_fn,
    user_data: *mut c_void,
    max: usize,
) -> usize {
    guard_value(0, || {
        let batch = batch_ref(batch)?;
        let f = on_result.ok_or(Fail::Null("on_result"))?;
        let results = batch.poll(max);
        for (index, result) in &results {
            hand_over(f, user_data, *index, result);
        }
        if batch.poll_end() {
            f(user_data, std::ptr::null());
        }
        Ok(results.len())
    })
}

/// Cancels the batch: calls not yet started never start and report
/// `cancelled`; running calls see `capstan_call_cancelled` and still deliver
/// their own result. Every call still gets exactly one result. NULL: no-op.
#[no_mangle]
pub unsafe extern "C" fn capstan_batch_cancel(batch: *mut capstan_batch) {
    guard_value((), || {
        if !batch.is_null() {
            batch_ref(batch)?.cancel();
        }
        Ok(())
    })
}

/// Frees a batch at any point; NULL is a no-op. A batch still running finishes
/// its calls internally and releases its memory then. When this returns no
/// result callback of the batch is running or will run (called from inside
/// one, that one is the last). Consumes `batch`.
#[no_mangle]
pub unsafe extern "C" fn capstan_batch_free(batch: *mut capstan_batch) {
    guard_value((), || {
        if batch.is_null() {
            return Ok(());
        }
        let batch = Box::from_raw(batch.cast::<Batch>());
        batch.detach();
        Ok(())
    })
}

/// Which calls of `calls_json` would wait for approval (their tool is flagged
/// `CAPSTAN_TOOL_REQUIRES_APPROVAL` and their id is not in
/// `opts->approved_ids`): `*out` gets `[{"index","id","name"}]`, owned by the
/// caller. Runs nothing. `opts` are the options the calls will run with, so
/// it takes every flag a function running calls takes (execute, submit, run
/// turn, streams), to be passed the same struct; none changes its answer,
/// and a flag no function takes is INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_needs_approval(
    reg: *const capstan_registry,
    calls_json: *const c_char,
    len: usize,
    opts: *const capstan_exec_options,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        non_null(out, "out")?;
        let calls = CallRequest::list_from_str(text(calls_json, len, "calls_json")?)?;
        let options = exec_options(
            opts,
            exec_flags::NEEDS_APPROVAL,
            "capstan_registry_needs_approval",
        )?;
        let list: Vec<serde_json::Value> = exec::needs_approval(registry, &calls, &options)
            .into_iter()
            .map(|i| serde_json::json!({"index": i, "id": calls[i].id, "name": calls[i].name}))
            .collect();
        write_text(&serde_json::Value::Array(list).to_string(), out, out_len)
    })
}
