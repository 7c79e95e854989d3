//! Execution functions of the C ABI.

use std::ffi::c_char;

use super::boundary::*;
use super::registry::registry_ref;
use super::types::*;
use crate::call::{results_to_json, CallRequest};
use crate::exec::{self, ExecOptions};

pub(crate) unsafe fn exec_options(opts: *const capstan_exec_options) -> Result<ExecOptions, Fail> {
    let Some(o) = read_options(opts, std::mem::size_of::<capstan_exec_options>(), "opts")? else {
        return Ok(ExecOptions::default());
    };
    if o.flags & !CAPSTAN_EXEC_SEQUENTIAL != 0 {
        return Err(Fail::BadArgument(format!(
            "unknown exec flags 0x{:x}",
            o.flags & !CAPSTAN_EXEC_SEQUENTIAL
        )));
    }
    Ok(ExecOptions {
        parallel: o.flags & CAPSTAN_EXEC_SEQUENTIAL == 0,
        limit: o.limit as usize,
        timeout_ms: o.timeout_ms,
    })
}

/// Runs calls and blocks until each has its one result. `calls_json` is one
/// normalized call `{"id","name","arguments"}` or an array of them
/// (`arguments` may be an object or a string holding one). On success
/// `*results_json` (free with `capstan_free`) is an array of normalized results
/// `{"id","name","content","is_error","outcome","duration_us"}` in call order.
/// Tool failures, invalid arguments, unknown tools, timeouts are results, not
/// statuses; INVALID_CALLS only when `calls_json` itself is malformed. Any
/// thread, including inside a tool callback (nested execution).
#[no_mangle]
pub unsafe extern "C" fn capstan_execute(
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
        let options = exec_options(opts)?;
        let calls = CallRequest::list_from_str(calls)?;
        let results = exec::execute(registry, calls, &options);
        let json = results_to_json(&results).to_string();
        write_text(&json, results_json, results_len)
    })
}
