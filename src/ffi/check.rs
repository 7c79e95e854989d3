//! Checking a call without running it, in the C ABI.

use std::ffi::c_char;

use super::boundary::*;
use super::registry::registry_ref;
use super::types::outcome_code;
use super::types::*;
use crate::call::{Arguments, CallRequest};
use crate::check::{check_call, check_calls, checked_list_json, Checked};

/// Checks one call without running it: looks the tool up and validates the
/// arguments as `capstan_registry_execute` would before calling the tool, on the
/// calling thread, with no callback, thread or timer. For hosts that then
/// run the tool themselves (e.g. a binding's coroutine on its event loop).
///
/// `arguments` is the arguments' JSON text, an object, as a model sends it
/// (empty text: `{}`). `flags`: 0, or `CAPSTAN_EXEC_STRICT_NULLS`.
///
/// On OK, `*outcome` says what was found and `*out` (owned by the caller,
/// freed with `capstan_string_free`; `out_len` may be NULL) holds:
/// - `CAPSTAN_OUTCOME_OK`: the validated arguments, compact JSON, defaults
///   filled in (coerced where the registry coerces);
/// - `CAPSTAN_OUTCOME_INVALID_ARGUMENTS`, `CAPSTAN_OUTCOME_UNKNOWN_TOOL` or
///   `CAPSTAN_OUTCOME_CANCELLED` (the registry was closed): the result text a
///   batch would give the call, word for word.
///
/// Approval, timeouts, output caps, stats of the run and events are the
/// host's to apply when it runs the tool itself. Fails (outputs untouched)
/// with NULL_PARAMETER, INVALID_UTF8, INVALID_ARGUMENT (unknown flags).
/// Any thread, also inside a callback.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_check_call(
    reg: *const capstan_registry,
    name: *const c_char,
    name_len: usize,
    arguments: *const c_char,
    arguments_len: usize,
    flags: u32,
    outcome: *mut capstan_outcome,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        let name = text(name, name_len, "name")?;
        let arguments = text(arguments, arguments_len, "arguments")?;
        non_null(outcome, "outcome")?;
        non_null(out, "out")?;
        super::exec::check_flags(
            flags,
            CAPSTAN_EXEC_STRICT_NULLS,
            super::flags::exec_flags::NAMES,
            "capstan_registry_check_call",
        )?;
        let strict_nulls = flags & CAPSTAN_EXEC_STRICT_NULLS != 0;
        let (code, body) = match check_call(
            registry,
            name,
            Arguments::Text(arguments.to_owned()),
            strict_nulls,
        ) {
            Checked::Valid(v) => (CAPSTAN_OUTCOME_OK, v.to_string()),
            Checked::Answer(o, text) => (outcome_code(o), text),
        };
        write_text(&body, out, out_len)?;
        *outcome = code;
        Ok(())
    })
}

/// Checks every call of a batch without running any, as
/// `capstan_registry_check_call` checks one, in one crossing: for hosts that
/// run a batch of tools themselves (a binding's batch of quick tools on the
/// calling thread).
///
/// `calls_json` is what `capstan_registry_execute` takes: one normalized
/// call `{"id","name","arguments"}` or an array of them (`id` is not used;
/// `arguments` an object or a string holding one). `flags`: 0, or
/// `CAPSTAN_EXEC_STRICT_NULLS`.
///
/// On OK, `*out` (owned by the caller, freed with `capstan_string_free`;
/// `out_len` may be NULL) is an array with a pair per call, in call order:
/// - `["ok",{...}]`: the validated arguments, defaults filled in (coerced
///   where the registry coerces);
/// - `["invalid_arguments"|"unknown_tool"|"cancelled","..."]`: the result
///   text a batch would give the call, word for word (cancelled: the
///   registry was closed).
///
/// Invalid calls count in their tool's stats as `capstan_registry_check_call`
/// counts them. Approval, timeouts, output caps, stats of the runs and events
/// are the host's to apply. Fails (outputs untouched) with NULL_PARAMETER,
/// INVALID_UTF8, INVALID_ARGUMENT (unknown flags), INVALID_CALLS (`calls_json`
/// is not calls). Any thread, also inside a callback; linear in the calls,
/// each bounded as in `capstan_registry_check_call` (docs/limits.md).
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_check_calls(
    reg: *const capstan_registry,
    calls_json: *const c_char,
    len: usize,
    flags: u32,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        let calls = text(calls_json, len, "calls_json")?;
        non_null(out, "out")?;
        super::exec::check_flags(
            flags,
            CAPSTAN_EXEC_STRICT_NULLS,
            super::flags::exec_flags::NAMES,
            "capstan_registry_check_calls",
        )?;
        let calls = CallRequest::list_from_str(calls)?;
        let checked = check_calls(registry, calls, flags & CAPSTAN_EXEC_STRICT_NULLS != 0);
        write_text(&checked_list_json(&checked), out, out_len)
    })
}
