//! Approval, events and stats in the C ABI.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use super::boundary::*;
use super::lent::{self, Field};
use super::registry::registry_ref;
use super::types::outcome_code;
use super::types::*;
use crate::exec::Approval;
use crate::observe::{Event, EventKind};

type HostApprover = OwnedHostFn<unsafe extern "C" fn(*mut c_void, *mut capstan_approval)>;

impl HostApprover {
    fn ask(&self, approval: Approval) {
        match approval.handle() {
            // SAFETY: the host registered f to be called with user_data.
            Ok(h) => unsafe { (self.f)(self.user_data, h as *mut capstan_approval) },
            Err(e) => {
                let _ = approval.deny(&e.to_string());
            }
        }
    }
}

/// Sets (NULL `approver`: removes) the registry's approver. It receives every
/// call of a `CAPSTAN_TOOL_REQUIRES_APPROVAL` tool not listed in the batch's
/// `approved_ids`. Without an approver such calls end `denied`.
///
/// `destroy` (may be NULL) runs exactly once with `user_data`, after the last
/// invocation of this `approver` has returned: when it is replaced or removed
/// (NULL `approver`), when the registry is closed or freed, or before this
/// returns if `approver` is NULL or the call fails (NULL_PARAMETER;
/// SHUTTING_DOWN after `capstan_registry_close`). Approvals the approver
/// still holds stay decidable after its destroy ran. Runs on the thread that
/// replaced the approver or on the thread of that last invocation.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_set_approver(
    reg: *mut capstan_registry,
    approver: capstan_approver_fn,
    user_data: *mut c_void,
    destroy: capstan_destroy_fn,
) -> capstan_status {
    let Some(f) = approver else {
        destroy_now(user_data, destroy);
        return guard(|| Ok(registry_ref(reg)?.set_approver(None)?));
    };
    let host = HostApprover::new(f, user_data, destroy);
    guard(move || {
        let registry = registry_ref(reg)?;
        registry.set_approver(Some(Arc::new(move |a: Approval| host.ask(a))))?;
        Ok(())
    })
}

fn resolve(approval: *const capstan_approval) -> Result<Approval, Fail> {
    non_null(approval, "approval")?;
    Ok(Approval::from_handle(approval as usize)?)
}

/// The waiting call's tool name, id or validated arguments (compact JSON),
/// NUL-terminated; `*len` (if not NULL) gets the length. Valid until the
/// decision. NULL if the handle is not live.
#[no_mangle]
pub unsafe extern "C" fn capstan_approval_tool(
    approval: *const capstan_approval,
    len: *mut usize,
) -> *const c_char {
    approval_text(approval, len, Field::Tool)
}

/// See `capstan_approval_tool`.
#[no_mangle]
pub unsafe extern "C" fn capstan_approval_id(
    approval: *const capstan_approval,
    len: *mut usize,
) -> *const c_char {
    approval_text(approval, len, Field::Id)
}

/// See `capstan_approval_tool`.
#[no_mangle]
pub unsafe extern "C" fn capstan_approval_arguments(
    approval: *const capstan_approval,
    len: *mut usize,
) -> *const c_char {
    approval_text(approval, len, Field::Arguments)
}

unsafe fn approval_text(
    approval: *const capstan_approval,
    len: *mut usize,
    field: Field,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        let a = resolve(approval)?;
        let s = lent::approval_text(&a, field)?;
        if !len.is_null() {
            *len = s.len() - 1;
        }
        // The cell outlives this Arc clone: the handle table holds it until the decision.
        Ok(s.as_ptr().cast::<c_char>())
    })
}

/// Approves (`approve` true: the call runs) or denies (its result is `denied`,
/// with `reason` for the model; may be NULL) a waiting call. Once, from any
/// thread; a second decision, or one after the call ended otherwise (its
/// batch cancelled, its deadline passed, the registry closed), returns
/// ALREADY_COMPLETED or STALE_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn capstan_approval_decide(
    approval: *mut capstan_approval,
    approve: bool,
    reason: *const c_char,
    len: usize,
) -> capstan_status {
    guard(|| {
        let a = resolve(approval)?;
        if approve {
            a.approve()?;
        } else {
            let reason = if reason.is_null() {
                ""
            } else {
                text(reason, len, "reason")?
            };
            a.deny(reason)?;
        }
        Ok(())
    })
}

type HostHook = OwnedHostFn<unsafe extern "C" fn(*mut c_void, *const capstan_event)>;

impl HostHook {
    fn call(&self, e: &Event) {
        let message = match e.log {
            Some((_, message)) => Some(message),
            None => e.progress.and_then(|p| p.message.as_deref()),
        };
        let view = capstan_event {
            kind: match e.kind {
                EventKind::Started => CAPSTAN_EVENT_STARTED,
                EventKind::Finished => CAPSTAN_EVENT_FINISHED,
                EventKind::TimedOut => CAPSTAN_EVENT_TIMED_OUT,
                EventKind::Cancelled => CAPSTAN_EVENT_CANCELLED,
                EventKind::Progress => CAPSTAN_EVENT_PROGRESS,
                EventKind::Log => CAPSTAN_EVENT_LOG,
                EventKind::Replayed => CAPSTAN_EVENT_REPLAYED,
            },
            tool: e.tool.as_ptr().cast(),
            tool_len: e.tool.len(),
            id: e.id.as_ptr().cast(),
            id_len: e.id.len(),
            index: e.index,
            outcome: e.outcome.map(outcome_code).unwrap_or(0),
            duration_us: e.duration_us,
            progress: e.progress.map_or(0.0, |p| p.progress),
            total: e.progress.and_then(|p| p.total).unwrap_or(0.0),
            message: message.map_or(std::ptr::null(), |m| m.as_ptr().cast()),
            message_len: message.map_or(0, str::len),
            level: e.log.map_or(0, |(level, _)| level.index()),
        };
        // SAFETY: the host registered f to be called with user_data.
        unsafe { (self.f)(self.user_data, &view) }
    }
}

/// Sets (NULL `hook`: removes) the registry's event hook. Replaces any
/// previous one; an invocation of the old hook may still be running on
/// another thread when this returns.
///
/// `destroy` (may be NULL) runs exactly once with `user_data`, after the last
/// invocation of this `hook` has returned: when it is replaced or removed
/// (NULL `hook`), when the registry is closed or freed, or before this returns
/// if `hook` is NULL or the call fails (NULL_PARAMETER; SHUTTING_DOWN after
/// `capstan_registry_close`). It runs on the thread that replaced the hook or
/// on the thread of that last invocation: free `user_data` there, never
/// right after this function returns.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_set_event_hook(
    reg: *mut capstan_registry,
    hook: capstan_event_fn,
    user_data: *mut c_void,
    destroy: capstan_destroy_fn,
) -> capstan_status {
    let Some(f) = hook else {
        destroy_now(user_data, destroy);
        return guard(|| Ok(registry_ref(reg)?.set_event_hook(None)?));
    };
    let host = HostHook::new(f, user_data, destroy);
    guard(move || {
        let registry = registry_ref(reg)?;
        registry.set_event_hook(Some(Arc::new(move |e: &Event| host.call(e))))?;
        Ok(())
    })
}

/// Per-tool statistics as JSON, owned by the caller:
/// `{"tools":{"<name>":{"calls","outcomes":{"ok",...},"in_flight","p50_us","p99_us"}}}`.
/// Latency percentiles are bucket bounds (within 25%); null before any call ran.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_stats_json(
    reg: *const capstan_registry,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        non_null(out, "out")?;
        write_text(&registry.stats_json().to_string(), out, out_len)
    })
}
