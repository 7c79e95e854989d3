//! Pool thread hooks in the C ABI: host code run when capstan's pool threads
//! start and retire (e.g. to keep one interpreter thread state per thread).

use std::ffi::c_void;
use std::sync::Arc;

use super::boundary::*;
use super::types::*;
use crate::exec::pool::{self, ThreadHooks};

/// A pool thread hook: called with the `user_data` given to
/// `capstan_runtime_set_thread_hooks`, on the pool thread concerned.
pub type capstan_thread_hook_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

type HostHook = OwnedHostFn<(capstan_thread_hook_fn, capstan_thread_hook_fn)>;

impl HostHook {
    fn run(&self, hook: capstan_thread_hook_fn) {
        if let Some(f) = hook {
            // SAFETY: the host set f to be called with user_data on pool threads.
            unsafe { f(self.user_data) }
        }
    }
}

/// Sets the hooks run on capstan's own threads that run host code,
/// process-wide (the pool is): the pool threads and, with MCP, the
/// connection threads of mounted servers and of `capstan_mcp_server_start`
/// servers (they run result callbacks and event hooks for calls an MCP peer
/// answered or cancelled). `on_start` runs on each such thread before the
/// first tool callback, result callback or other host code that thread runs
/// (timeouts and deadlines end calls on pool threads too; capstan's timer
/// thread runs no host code), and again before the next one if the hooks
/// were replaced meanwhile (an MCP connection thread catches up when it next
/// wakes); `on_stop` runs on a thread that ran this `on_start`, when that
/// thread retires (an idle pool thread ends after a while, a server's
/// connection threads when it stops), or once these hooks were replaced or
/// cleared, before that thread runs its next host code (and the new
/// `on_start`). Threads are not joined at process exit: `on_stop` does not
/// run then. Either hook may be NULL (nothing runs in its place); both NULL
/// clears the hooks. The host's own threads never run them, even when
/// capstan runs host code on them: the caller of `capstan_registry_execute` (on
/// which a lone call may run), or of `capstan_mcp_server_serve_stdio` (which
/// serves on the calling thread).
///
/// Setting hooks replaces the previous ones; threads that ran the previous
/// `on_start` still run the previous `on_stop` as above, so a host that
/// keeps per-thread state in `on_start` sees it released by the matching
/// `on_stop`, on the same thread. A thread already running a callback when
/// the hooks are set switches before its next one.
///
/// `destroy` (may be NULL) runs exactly once with `user_data`: before this
/// returns if both hooks are NULL; otherwise once these hooks were replaced
/// or cleared and every thread that ran this `on_start` has run this
/// `on_stop` (on that last thread, or on the thread that replaced them), so
/// possibly never while a pool or MCP connection thread that ran them stays
/// alive.
///
/// Hooks run with no capstan lock held and may call any capstan function
/// except `capstan_runtime_set_thread_hooks` itself; a hook must return (it must
/// not end its thread). Any thread may call this. Returns OK.
#[no_mangle]
pub unsafe extern "C" fn capstan_runtime_set_thread_hooks(
    on_start: capstan_thread_hook_fn,
    on_stop: capstan_thread_hook_fn,
    user_data: *mut c_void,
    destroy: capstan_destroy_fn,
) -> capstan_status {
    if on_start.is_none() && on_stop.is_none() {
        destroy_now(user_data, destroy);
        return guard(|| {
            pool::set_thread_hooks(None);
            Ok(())
        });
    }
    let host = Arc::new(HostHook::new((on_start, on_stop), user_data, destroy));
    guard(move || {
        let stop = host.clone();
        pool::set_thread_hooks(Some(ThreadHooks {
            on_start: Box::new(move || host.run(host.f.0)),
            on_stop: Box::new(move || stop.run(stop.f.1)),
        }));
        Ok(())
    })
}

/// Stops the thread hooks for good, process-wide: from now on no thread runs
/// an `on_start` or `on_stop` again, not even the `on_stop` matching an
/// `on_start` it ran, and their `destroy` never runs. For a host runtime that
/// is ending and must not be entered any more (the Python binding calls it
/// at interpreter exit, while the interpreter is still whole: a thread that
/// entered it after would be ended by a forced unwind). What the hooks kept
/// per thread is left to the process's end.
///
/// Waits until no thread is inside a hook, up to `timeout_ms` (UINT32_MAX =
/// no limit): OK then, CAPSTAN_ERR_TIMEOUT if one still was (it finishes; no
/// hook starts after this returns either way). Do not call it from inside a
/// hook (it would wait for itself). `capstan_runtime_set_thread_hooks` still returns
/// OK afterwards, but its hooks never run. Any thread may call this.
#[no_mangle]
pub extern "C" fn capstan_runtime_abandon_thread_hooks(timeout_ms: u32) -> capstan_status {
    guard(|| {
        if pool::abandon_thread_hooks(wait_limit(timeout_ms)) {
            Ok(())
        } else {
            Err(crate::error::Error::Timeout(
                "a thread hook was still running when the time ran out".into(),
            )
            .into())
        }
    })
}
