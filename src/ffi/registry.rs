//! Registry functions of the C ABI.

use std::ffi::{c_char, c_void};
use std::time::Duration;

use super::boundary::*;
use super::types::*;
use crate::exec::{self, Call};
use crate::exec::{Handler, ToolDef};
use crate::registry::{Registry, RegistryOptions};
use crate::tool::ToolFlags;

/// A C tool: its callback, `user_data`, and `destroy`, run when this drops.
struct CTool {
    callback: capstan_tool_fn,
    user_data: *mut c_void,
    destroy: capstan_destroy_fn,
}

// The host promises (header: "Thread safety") that user_data may be used from
// any thread; capstan never touches it itself.
unsafe impl Send for CTool {}
unsafe impl Sync for CTool {}

impl Handler for CTool {
    fn invoke(&self, call: Call) {
        let Some(callback) = self.callback else {
            let _ = call.fail("tool has no callback");
            return;
        };
        match call.handle() {
            Ok(handle) => unsafe { callback(self.user_data, handle as *mut capstan_call) },
            Err(e) => {
                let _ = call.fail(e.to_string());
            }
        }
    }
}

impl Drop for CTool {
    fn drop(&mut self) {
        if let Some(destroy) = self.destroy.take() {
            unsafe { destroy(self.user_data) }
        }
    }
}

pub(crate) unsafe fn registry_ref<'a>(reg: *const capstan_registry) -> Result<&'a Registry, Fail> {
    non_null(reg, "reg")?;
    Ok(&*reg.cast::<Registry>())
}

/// Creates a registry. `opts` may be NULL (defaults). On success `*out` owns
/// the registry; free it with `capstan_registry_free`.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_new(
    opts: *const capstan_registry_options,
    out: *mut *mut capstan_registry,
) -> capstan_status {
    guard(|| {
        non_null(out, "out")?;
        let opts = read_options(
            opts,
            std::mem::offset_of!(capstan_registry_options, max_result_bytes),
            "opts",
        )?;
        let flags = opts.map(|o| o.flags).unwrap_or(0);
        super::flags::check(flags, &super::flags::REGISTRY)?;
        let registry = Registry::new(RegistryOptions {
            coerce: flags & CAPSTAN_REGISTRY_COERCE != 0,
            strict_defaults: flags & CAPSTAN_REGISTRY_STRICT_DEFAULTS != 0,
            strict_keywords: flags & CAPSTAN_REGISTRY_STRICT_KEYWORDS != 0,
            max_result_bytes: opts.map(|o| o.max_result_bytes).unwrap_or(0),
        });
        *out = Box::into_raw(Box::new(registry)).cast::<capstan_registry>();
        Ok(())
    })
}

/// Frees a registry; NULL is a no-op. Calls not yet started are cancelled,
/// calls in flight are reported cancelled (their handles stop resolving), and
/// each tool's destroy runs. Waits, without limit, until no tool or result
/// callback of this registry runs on another thread and every destroy has run:
/// after it returns, no callback of this registry is called. Called from inside
/// one of this registry's own callbacks it does not wait (that would deadlock):
/// the rest finishes after that callback returns. After
/// `capstan_registry_close` it does not wait again: what `close` reported
/// still running may then call back after free returns. Batches stay valid
/// until `capstan_batch_free`. Every call handle of the registry stops
/// resolving, and the text lent by `capstan_call_arguments`, `_id` and
/// `_tool` is freed (see `capstan_call_arguments`). The event hook, notifier
/// and approver are removed; their destroys have run when this returns,
/// unless an invocation of theirs still runs on another thread (after a
/// `close` that timed out), which then runs it.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_free(reg: *mut capstan_registry) {
    guard_value((), || {
        if reg.is_null() {
            return Ok(());
        }
        let registry = Box::from_raw(reg.cast::<Registry>());
        if !registry.is_closed() {
            registry.close(Duration::MAX);
        }
        exec::release_calls(&registry);
        Ok(())
    })
}

/// Shuts a registry down without freeing it, waiting at most `timeout_ms`
/// (UINT32_MAX: no limit) for callbacks running on other threads: calls not
/// started are cancelled, calls in flight are reported cancelled, tools are
/// destroyed once their callbacks return. OK when everything finished in
/// time, CAPSTAN_ERR_TIMEOUT otherwise (what still runs finishes in the
/// background). Afterwards calls on the registry end `cancelled`, registering
/// is SHUTTING_DOWN, and `capstan_registry_free` must still be called (it
/// then does not wait again). From inside one of the registry's own callbacks
/// it does not wait and returns CAPSTAN_ERR_TIMEOUT. For hosts that must not
/// hang at exit on a stuck tool.
///
/// May race any other function on the registry (but free): a
/// `capstan_registry_add_tool` that runs at the same time either returns
/// SHUTTING_DOWN (its destroy has run) or registers a tool that this close
/// removes and destroys. It returns as soon as the work is done (never a
/// TIMEOUT for work that finished; with UINT32_MAX it returns once the last
/// callback returned and the last destroy ran). The event hook, notifier and
/// approver are removed, after the cancellations were reported to them; their
/// destroys run once their last invocation has returned; setting one
/// afterwards returns SHUTTING_DOWN. The TIMEOUT message says what was still
/// outstanding (callbacks running, tools not yet destroyed).
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_close(
    reg: *mut capstan_registry,
    timeout_ms: u32,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        if registry.close(wait_limit(timeout_ms)) {
            Ok(())
        } else {
            Err(Fail::Core(crate::Error::Timeout(format!(
                "after {timeout_ms} ms {}",
                registry.close_outstanding()
            ))))
        }
    })
}

/// Checks a tool name without registering it: OK if every provider accepts it
/// (`^[A-Za-z0-9_-]{1,64}$`, the rule of `capstan_registry_add_tool`), else
/// INVALID_NAME with a message saying why (INVALID_UTF8 for bad text).
#[no_mangle]
pub unsafe extern "C" fn capstan_name_check(name: *const c_char, len: usize) -> capstan_status {
    guard(|| {
        crate::registry::check_name(text(name, len, "name")?)?;
        Ok(())
    })
}

/// Registers a tool. A tool of the same name already registered makes it
/// fail with INVALID_ARGUMENT (the message names the tool; the registered
/// tool stays and still runs) unless `def->flags` has
/// `CAPSTAN_TOOL_REPLACE`: then it replaces that tool (the old tool's
/// destroy runs once its calls in flight are done). Whatever the outcome,
/// `def->destroy` runs exactly once for this `def->user_data`: later on
/// success, before this returns on failure (unless `def` itself is NULL, or
/// its `struct_size` does not even reach the `destroy` field).
/// Fails with INVALID_NAME, INVALID_SCHEMA (the message names the problem),
/// INVALID_UTF8, INVALID_ARGUMENT (struct_size, unknown flags, no callback,
/// a `mcp_meta` that is not JSON or has a field of the wrong shape, a name
/// already registered without `CAPSTAN_TOOL_REPLACE`).
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_add_tool(
    reg: *mut capstan_registry,
    def: *const capstan_tool_def,
) -> capstan_status {
    guard(|| {
        non_null(def, "def")?;
        // Own user_data first, so that every failure below runs destroy.
        let size = *def.cast::<u32>() as usize;
        // `mcp_meta` was appended: older hosts' struct_size ends before it.
        let min = std::mem::offset_of!(capstan_tool_def, mcp_meta);
        let known = std::mem::size_of::<capstan_tool_def>();
        if size < min {
            // Run destroy if struct_size covers it; fields past it are not ours to read.
            let covers = std::mem::offset_of!(capstan_tool_def, destroy)
                + std::mem::size_of::<capstan_destroy_fn>();
            if size >= covers {
                drop(CTool {
                    callback: None,
                    user_data: (*def).user_data,
                    destroy: (*def).destroy,
                });
            }
            return Err(Fail::BadArgument(format!(
                "def.struct_size is {size}, expected at least {min} (set it to sizeof(capstan_tool_def))"
            )));
        }
        if let Err(fail) = check_unknown_tail(def.cast::<u8>(), size, known, "capstan_tool_def") {
            drop(CTool {
                callback: None,
                user_data: (*def).user_data,
                destroy: (*def).destroy,
            });
            return Err(fail);
        }
        // Fields past the host's struct_size read as zero (NULL, none).
        let mut copy = std::mem::MaybeUninit::<capstan_tool_def>::zeroed();
        std::ptr::copy_nonoverlapping(
            def.cast::<u8>(),
            copy.as_mut_ptr().cast::<u8>(),
            size.min(known),
        );
        let d = copy.assume_init();
        let handler = CTool {
            callback: d.callback,
            user_data: d.user_data,
            destroy: d.destroy,
        };
        let registry = registry_ref(reg)?;
        if handler.callback.is_none() {
            return Err(Fail::BadArgument("def.callback must not be NULL".into()));
        }
        let name = c_text(d.name, "def.name")?.ok_or(Fail::Null("def.name"))?;
        super::flags::check(d.flags, &super::flags::TOOL)?;
        let description = c_text(d.description, "def.description")?.unwrap_or("");
        let parameters = c_text(d.parameters, "def.parameters")?.unwrap_or(r#"{"type":"object"}"#);
        let parameters: serde_json::Value = serde_json::from_str(parameters).map_err(|e| {
            Fail::Core(crate::Error::InvalidSchema(format!(
                "parameters of tool {name:?} are not valid JSON: {e}"
            )))
        })?;
        let mcp = match c_text(d.mcp_meta, "def.mcp_meta")? {
            Some(text) => {
                let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
                    Fail::BadArgument(format!("def.mcp_meta of tool {name:?} is not JSON: {e}"))
                })?;
                crate::tool_meta::McpMeta::from_value(&value, "def.mcp_meta")?
            }
            None => crate::tool_meta::McpMeta::default(),
        };
        registry.register_with_mcp(
            ToolDef {
                name: name.to_owned(),
                description: description.to_owned(),
                parameters,
                handler: Box::new(handler),
                timeout_ms: d.timeout_ms,
                max_output_chars: d.max_output_chars,
                flags: ToolFlags(d.flags),
            },
            mcp,
        )?;
        Ok(())
    })
}

/// Removes a tool by name. Its calls in flight finish; its destroy runs after
/// them. NOT_FOUND if no such tool.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_remove_tool(
    reg: *mut capstan_registry,
    name: *const c_char,
    name_len: usize,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        let name = text(name, name_len, "name")?;
        registry.unregister(name)?;
        Ok(())
    })
}

/// Runs main-thread tools (`CAPSTAN_TOOL_MAIN_THREAD`) queued on `reg`, on the
/// calling thread, for about `budget_ms` (at least one call if any is
/// queued). Call it from the host's main thread: a game frame, a UI idle
/// handler. Returns how many calls ran (0 if `reg` is NULL).
///
/// Every thread that ever called this on `reg` counts as a main thread of
/// `reg` from then on. A main thread that waits on a batch
/// (`capstan_registry_execute`, `capstan_registry_run_turn`, `capstan_batch_wait`, also nested
/// inside a main-thread tool) runs that batch's main-thread calls itself
/// while it waits, so it never deadlocks waiting for a pump that only it
/// would do. Other threads' main-thread calls still wait for a pump (in a
/// batch without a deadline, 60 s at most: then they end `timeout` saying
/// that no thread pumped).
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_pump(
    reg: *mut capstan_registry,
    budget_ms: u32,
) -> usize {
    guard_value(0, || {
        let registry = registry_ref(reg)?;
        Ok(exec::pump(
            registry,
            Duration::from_millis(u64::from(budget_ms)),
        ))
    })
}

type NotifyFn = OwnedHostFn<unsafe extern "C" fn(*mut c_void)>;

impl NotifyFn {
    fn call(&self) {
        // SAFETY: the host registered f to be called with user_data.
        unsafe { (self.f)(self.user_data) }
    }
}

/// Sets (or with NULL `notify`, removes) the wake-up callback of an event-loop
/// host: called on any thread when a result is queued for polling or a
/// main-thread call waits for `capstan_registry_pump`. Replaces any previous one.
///
/// `destroy` (may be NULL) runs exactly once with `user_data`, after the last
/// invocation of this `notify` has returned: when it is replaced or removed
/// (NULL `notify`), when the registry is closed or freed, or before this
/// returns if `notify` is NULL or the call fails (NULL_PARAMETER;
/// SHUTTING_DOWN after `capstan_registry_close`). It runs on the thread that
/// replaced, removed or closed, or on the thread of that last invocation.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_set_notify(
    reg: *mut capstan_registry,
    notify: capstan_notify_fn,
    user_data: *mut c_void,
    destroy: capstan_destroy_fn,
) -> capstan_status {
    let Some(f) = notify else {
        destroy_now(user_data, destroy);
        return guard(|| Ok(registry_ref(reg)?.set_notify(None)?));
    };
    let n = NotifyFn::new(f, user_data, destroy);
    guard(move || {
        let registry = registry_ref(reg)?;
        registry.set_notify(Some(std::sync::Arc::new(move || n.call())))?;
        Ok(())
    })
}

/// `*out` gets a file descriptor that becomes readable when a result is
/// queued for polling or a main-thread call waits for `capstan_registry_pump`.
/// Add it to epoll/kqueue/poll/select; when readable, reset it, then poll your
/// batches and pump. Made on first call; later calls return the same fd.
/// Owned by the registry (closed by `capstan_registry_free`): do not close it.
/// Any thread.
/// - Linux, Android: an eventfd; read 8 bytes to reset it.
/// - macOS, iOS, the BSDs: the read end of a non-blocking pipe; read until
///   read() fails with EAGAIN to reset it.
/// - Windows: UNSUPPORTED (use `capstan_registry_wake_handle`).
///
/// Fails with NULL_PARAMETER, INTERNAL if the OS refuses the fd (the message
/// says why).
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_wake_fd(
    reg: *mut capstan_registry,
    out: *mut i32,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        non_null(out, "out")?;
        *out = registry.wake_fd()?;
        Ok(())
    })
}

/// Windows: `*out` gets an event HANDLE (as `void *`) that is set when a
/// result is queued for polling or a main-thread call waits for
/// `capstan_registry_pump`. Wait on it with WaitForMultipleObjects or
/// MsgWaitForMultipleObjects: it is an auto-reset event, so the wait that
/// returns it also resets it; then poll your batches and pump. Made on first
/// call; later calls return the same HANDLE. Owned by the registry (closed by
/// `capstan_registry_free`): do not close it. Any thread.
/// Elsewhere: UNSUPPORTED (use `capstan_registry_wake_fd`).
///
/// Fails with NULL_PARAMETER, INTERNAL if the OS refuses the event (the
/// message says why).
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_wake_handle(
    reg: *mut capstan_registry,
    out: *mut *mut c_void,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        non_null(out, "out")?;
        *out = registry.wake_handle()?;
        Ok(())
    })
}
