//! The runtime in the C ABI: capstan's own threads, process-wide.

use std::time::Duration;

use super::boundary::*;
use super::types::*;
use crate::runtime::{self, RuntimeOptions};

/// Options of `capstan_runtime_configure`, process-wide. NULL means
/// defaults; every field 0 means its default too.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct capstan_runtime_options {
    /// `sizeof(capstan_runtime_options)`.
    pub struct_size: u32,
    /// Cap on pool threads, the threads that run tool and result callbacks
    /// (0 = 256): at most this many plus one (the timer thread, see
    /// `capstan_runtime_configure`) of capstan's threads run host code,
    /// besides the MCP bridge's connection threads and the host's own
    /// threads that capstan runs calls on (`capstan_registry_execute`,
    /// `capstan_batch_wait`, `capstan_registry_pump`).
    pub threads: u32,
    /// How long an idle pool thread waits for work before it ends, in ms
    /// (0 = 10,000). Past one idle thread per core, idle threads end after at
    /// most 1,000 ms. Once every pool thread ended, capstan's pool holds no
    /// thread until the next call needs one.
    pub keep_alive_ms: u32,
}

/// Sets how capstan runs its own threads, process-wide, at any time (also
/// after threads started). Pool threads start on demand, up to
/// `opts->threads`; lowering the cap lets threads over it end once their
/// current callback returns; a new keep-alive applies from each idle
/// thread's next wait.
///
/// The cap is hard: at most `opts->threads` pool threads exist at once, and
/// at most `opts->threads + 1` threads of capstan's run host code (tool,
/// result and end-of-batch callbacks, event hooks): the pool threads, and
/// capstan's timer thread, which delivers a timeout's or a deadline's results
/// itself (running no thread hook) when every pool thread is busy, since
/// they may all be waiting for them; the MCP bridge's connection threads
/// come on top (2 for every mount together, and those of each MCP server).
/// The replacement of a worker stuck in a timed-out callback waits for a
/// free pool thread, ahead of other queued work; a call that timed out sees
/// `capstan_call_cancelled` at once; a call with a timeout that the waiting
/// caller would hand to a full pool runs on the caller's thread instead. The host's own threads also run calls
/// (`capstan_registry_execute`, `capstan_batch_wait`, `capstan_registry_pump`).
///
/// NULL restores the defaults. Any thread; OK, or INVALID_ARGUMENT for a
/// `struct_size` smaller than this struct's first version.
#[no_mangle]
pub unsafe extern "C" fn capstan_runtime_configure(
    opts: *const capstan_runtime_options,
) -> capstan_status {
    guard(|| {
        let options =
            match read_options(opts, std::mem::size_of::<capstan_runtime_options>(), "opts")? {
                None => RuntimeOptions::default(),
                Some(o) => RuntimeOptions {
                    threads: o.threads as usize,
                    keep_alive: Duration::from_millis(u64::from(o.keep_alive_ms)),
                },
            };
        runtime::configure(&options)?;
        Ok(())
    })
}

/// Stops every thread capstan started and joins it, process-wide: the pool
/// threads (they first finish the work queued and running), the timer
/// thread, and the MCP client's connection threads. Waits up to
/// `timeout_ms` (UINT32_MAX = no limit) for what still runs; cancels
/// nothing itself.
///
/// OK when no capstan thread is left: the library may then be unloaded
/// (`dlclose`, `FreeLibrary`) once the host holds no capstan object and no
/// call of its runs on another thread. CAPSTAN_ERR_TIMEOUT otherwise, with a
/// message (`capstan_error_message`) naming what still runs: pool threads in a
/// callback, armed timers (a call with a timeout or a batch with a deadline
/// that is still running), mounts not yet freed, MCP servers not yet stopped
/// (`capstan_mcp_server_stop` first). A thread still running then is left
/// running.
///
/// capstan keeps working after this, whatever it returned: the next call
/// that needs a thread starts it again (and `capstan_runtime_configure`'s
/// options stay in force).
///
/// Call it from a host thread outside any callback. From inside a tool,
/// result or approval callback capstan runs (on any thread, the host's own
/// included), or on one of capstan's threads (a pool thread, in a thread
/// hook too, the timer thread, an MCP connection thread), it would wait for
/// itself: it returns CAPSTAN_ERR_WRONG_CONTEXT at once, stopping nothing,
/// whatever `timeout_ms`.
#[no_mangle]
pub extern "C" fn capstan_runtime_shutdown(timeout_ms: u32) -> capstan_status {
    guard(|| {
        let timeout =
            (timeout_ms != u32::MAX).then(|| Duration::from_millis(u64::from(timeout_ms)));
        runtime::shutdown(timeout)?;
        Ok(())
    })
}
