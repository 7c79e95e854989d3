//! The thread hooks on an HTTP MCP server's own threads: each thread that
//! ran `on_start` runs `on_stop` when the server stops. A binary of its own:
//! the hooks are process-wide, and a mounted client's threads (which live
//! as long as the process) would be counted with the server's.

#[cfg(feature = "mcp")]
#[path = "common/wait.rs"]
mod wait;

#[cfg(feature = "mcp")]
#[test]
fn every_server_thread_that_ran_on_start_runs_on_stop_when_the_server_stops() {
    use std::sync::Mutex;
    use std::thread::ThreadId;
    use std::time::Duration;

    use capstan::mcp::server::{HttpServer, ServerOptions};
    use capstan::runtime::pool::{set_thread_hooks, ThreadHooks};
    use capstan::Registry;

    /// (thread, started: true / stopped: false), for threads named capstan-mcp.
    static SEEN: Mutex<Vec<(ThreadId, bool)>> = Mutex::new(Vec::new());
    fn record(started: bool) {
        let me = std::thread::current();
        if me.name() == Some("capstan-mcp") {
            SEEN.lock().unwrap().push((me.id(), started));
        }
    }
    set_thread_hooks(Some(ThreadHooks {
        on_start: Box::new(|| record(true)),
        on_stop: Box::new(|| record(false)),
    }));
    let reg = Registry::default();
    let server = HttpServer::start(&reg, &ServerOptions::default()).expect("start");
    let started = || -> Vec<ThreadId> {
        let seen = SEEN.lock().unwrap();
        seen.iter().filter(|(_, s)| *s).map(|(t, _)| *t).collect()
    };
    assert!(
        wait::eventually(Duration::from_secs(30), || !started().is_empty()),
        "the server's threads ran on_start"
    );
    assert!(server.stop());
    let all_stopped = || {
        let seen = SEEN.lock().unwrap();
        let stopped = |t: &ThreadId| seen.iter().any(|(u, s)| u == t && !*s);
        seen.iter().filter(|(_, s)| *s).all(|(t, _)| stopped(t))
    };
    assert!(
        wait::eventually(Duration::from_secs(30), all_stopped),
        "on_stop did not run on every server thread: {:?}",
        SEEN.lock().unwrap()
    );
    set_thread_hooks(None);
}
