//! The MCP server on stdin/stdout: one client, until stdin closes or the
//! registry does.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::service::ServerInitializeError;
use rmcp::ServiceExt;
use tokio::sync::Notify;

use super::{new_state, runtime, Bridge, ServerOptions, DEFAULT_MAX_REQUESTS_IN_FLIGHT};
use capstan_core::error::Error;
use capstan_core::registry::Registry;

mod wire;

/// The stack of the thread `serve_stdio` serves on.
const STDIO_STACK_BYTES: usize = 8 * 1024 * 1024;

/// Serves `registry` on this process's stdin/stdout until stdin closes (the
/// client went away) or the registry is closed (`Registry::close`, from
/// another thread). Blocks the calling thread.
///
/// The server runs on a thread of its own, which this one joins: rmcp
/// builds each request's future on the stack of the thread that polls it,
/// and a host's thread may have little stack (Node.js runs a blocking FFI
/// call on a thread of 128 KB: serving there overflowed it at the second
/// request). That thread runs no host code (calls run on the pool).
pub fn serve_stdio(registry: &Registry, options: &ServerOptions) -> Result<(), Error> {
    let (registry, options) = (registry.clone(), options.clone());
    let server = std::thread::Builder::new()
        .name("capstan-mcp-stdio".into())
        .stack_size(STDIO_STACK_BYTES)
        .spawn(move || serve_stdio_here(&registry, &options))
        .map_err(|e| Error::Internal(format!("stdio server thread: {e}")))?;
    server
        .join()
        .unwrap_or_else(|_| Err(Error::Internal("the stdio server panicked".into())))
}

fn serve_stdio_here(registry: &Registry, options: &ServerOptions) -> Result<(), Error> {
    // A client that closed stdout must not kill the host with SIGPIPE.
    capstan_core::runtime::pool::runtime_thread::block_sigpipe();
    let rt = runtime(0)?;
    let (state, listener) = new_state(registry, options)?;
    // `close` marks the registry closed, then reports a change: the server
    // hears it here instead of looking every few milliseconds (an idle
    // stdio server wakes for nothing).
    let closing = Arc::new(Notify::new());
    let on_change = closing.clone();
    let close_listener = registry.add_change_listener(Arc::new(move || on_change.notify_one()));
    let result = rt.block_on(async {
        tokio::spawn(state.clone().announce_changes());
        // stdin's end is seen here, not only when rmcp's loop ends (which
        // waited 5 s for the calls in flight whatever stop_timeout_ms said).
        let eof = Arc::new(Notify::new());
        let stdin = EofWatch {
            inner: tokio::io::stdin(),
            eof: eof.clone(),
        };
        let ledger = wire::Ledger::new(match options.max_requests_in_flight {
            0 => DEFAULT_MAX_REQUESTS_IN_FLIGHT,
            n => n,
        });
        let service = wire::Counted {
            inner: Bridge::new(state.clone()),
            ledger: ledger.clone(),
        };
        let service = match service
            .serve(wire::Wire::new(stdin, tokio::io::stdout(), ledger))
            .await
        {
            Ok(service) => service,
            // stdin ended before a client initialized: the end the header
            // promises OK for, not a transport failure.
            Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(e) => return Err(Error::Transport(format!("stdio: {e}"))),
        };
        let mut stop = Some(service.cancellation_token());
        let closed = async {
            while !state.registry.is_closed() {
                closing.notified().await;
            }
        };
        let waiting = service.waiting();
        tokio::pin!(waiting);
        let mut ended = false;
        tokio::select! {
            r = &mut waiting => {
                ended = true;
                r.map_err(|e| Error::Internal(format!("stdio server: {e}")))?;
            }
            _ = closed => {
                if let Some(stop) = stop.take() {
                    stop.cancel();
                }
            }
            _ = eof.notified() => {}
        }
        let deadline = Instant::now() + Duration::from_millis(u64::from(options.stop_timeout_ms));
        state.drain(deadline).await;
        if !ended {
            // The answers of the calls that ended get until the deadline to
            // be written (a client that does not read its input holds
            // serve_stdio no longer).
            if let Some(stop) = stop.take() {
                stop.cancel();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let _ = tokio::time::timeout(left, &mut waiting).await;
        }
        Ok(())
    });
    registry.remove_change_listener(listener);
    registry.remove_change_listener(close_listener);
    // tokio's stdin read cannot be interrupted: do not wait for it.
    rt.shutdown_background();
    result
}

/// stdin, telling when it ends (a read of 0 bytes, or an error).
struct EofWatch<R> {
    inner: R,
    eof: Arc<Notify>,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for EofWatch<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let wanted = buf.remaining() > 0;
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            std::task::Poll::Ready(Ok(())) if wanted && buf.filled().len() == before => {
                self.eof.notify_one()
            }
            std::task::Poll::Ready(Err(_)) => self.eof.notify_one(),
            _ => {}
        }
        polled
    }
}
