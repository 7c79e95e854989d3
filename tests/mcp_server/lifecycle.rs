//! A server's end: the call timeout, stop and drop with calls in flight.

use crate::helpers::*;

#[test]
fn the_server_call_timeout_ends_a_slow_call_and_its_tool_sees_the_cancellation() {
    let served = served_registry();
    let options = ServerOptions {
        call_timeout_ms: 100,
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).expect("start");
    let client = Registry::default();
    let mount = mount(&client, server.url(), vec![]).expect("mount");
    let result = call(&client, "s_hold", json!({}));
    assert!(result.is_error(), "{result:?}");
    assert!(result.content.contains("100 ms"), "{result:?}");
    mount.unmount();
    assert!(server.stop());
}

#[test]
fn stop_cancels_calls_in_flight_and_a_mounted_client_s_call_ends() {
    let served = served_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let client = Registry::default();
    let mount = mount(&client, server.url(), vec![]).expect("mount");
    let results = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = results.clone();
    let batch = submit(
        &client,
        vec![CallRequest::new("h", "s_hold", json!({}))],
        &ExecOptions::default(),
        Sink::Callback(Box::new(move |_, r| record.lock().unwrap().push(r))),
        None,
    );
    // The call reached the server's tool: it is in flight there.
    std::thread::sleep(Duration::from_millis(200));
    assert!(!batch.is_done(), "hold runs until cancelled");
    assert!(
        server.stop(),
        "the cancelled tool returned within the stop timeout"
    );
    // The server is gone: the client's call ends (it does not wait for
    // an answer forever) and says why.
    assert!(batch.wait(Some(PATIENCE)), "the client's call ended");
    let results = results.lock().unwrap();
    assert_eq!(results[0].outcome, Outcome::ToolError, "{results:?}");
    assert!(
        results[0]
            .content
            .contains("closed the connection during the call"),
        "{results:?}"
    );
    mount.unmount();
    // Nothing is served any more.
    let again = mount_once(server.url());
    assert!(again.is_err(), "a stopped server accepted a new client");
}

#[test]
fn dropping_a_server_stops_it_as_stop_does() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let served = served_registry();
    // Notes that it ended, then completes, once cancelled.
    let ended = Arc::new(AtomicBool::new(false));
    let flag = ended.clone();
    served
        .register(def("note", json!({"type": "object"}), move |call| {
            eventually(PATIENCE, || call.is_cancelled());
            flag.store(true, Ordering::SeqCst);
            let _ = call.complete_text("cancelled");
        }))
        .unwrap();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url().to_string();
    let client = Registry::default();
    let mount = mount(&client, &url, vec![]).expect("mount");
    let batch = submit(
        &client,
        vec![CallRequest::new("n", "s_note", json!({}))],
        &ExecOptions::default(),
        Sink::Queue,
        None,
    );
    std::thread::sleep(Duration::from_millis(200));
    assert!(!batch.is_done(), "note is in flight");
    drop(server);
    // Like stop: the call in flight was cancelled and waited for.
    assert!(
        ended.load(Ordering::SeqCst),
        "drop returned before the call ended"
    );
    assert!(
        std::net::TcpStream::connect(address(&url)).is_err(),
        "a dropped server still accepts connections"
    );
    assert!(batch.wait(Some(PATIENCE)));
    mount.unmount();
}

#[test]
fn stop_returns_as_soon_as_cancelled_calls_end_and_says_when_one_outlives_it() {
    let served = served_registry();
    // Ignores the cancellation: runs 1.5 s whatever happens.
    served
        .register(def("stubborn", json!({"type": "object"}), |call| {
            std::thread::sleep(Duration::from_millis(1500));
            let _ = call.complete_text("done");
        }))
        .unwrap();
    for (tool, stop_timeout_ms, drained) in [("s_hold", 20_000, true), ("s_stubborn", 100, false)] {
        let options = ServerOptions {
            stop_timeout_ms,
            ..ServerOptions::default()
        };
        let server = HttpServer::start(&served, &options).expect("start");
        let client = Registry::default();
        let mount = mount(&client, server.url(), vec![]).expect("mount");
        let batch = submit(
            &client,
            vec![CallRequest::new("h", tool, json!({}))],
            &ExecOptions::default(),
            Sink::Queue,
            None,
        );
        std::thread::sleep(Duration::from_millis(200));
        assert!(!batch.is_done(), "{tool} is in flight");
        let began = std::time::Instant::now();
        assert_eq!(server.stop(), drained, "{tool}");
        if drained {
            // `hold` ends at its cancellation: stop does not wait out
            // its 20 s.
            assert!(
                began.elapsed() < Duration::from_secs(10),
                "stop took {:?}",
                began.elapsed()
            );
        }
        assert!(batch.wait(Some(PATIENCE)));
        mount.unmount();
    }
}

fn mount_once(url: &str) -> Result<Mount, capstan::Error> {
    let client = Registry::default();
    let mut options = MountOptions::new(Endpoint::Http {
        url: url.into(),
        headers: vec![],
    });
    options.connect_timeout = Duration::from_secs(5);
    Mount::connect(&client, options)
}

/// Threads of this process (Linux).
#[cfg(target_os = "linux")]
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

/// Mounts tests/mcp_server/fail.py in `mode`; returns the error and the
/// pid the server wrote.
#[cfg(target_os = "linux")]
fn failed_mount(client: &Registry, mode: &str, n: usize) -> (String, u32) {
    let pidfile =
        std::env::temp_dir().join(format!("capstan-fail-{}-{mode}-{n}", std::process::id()));
    let _ = std::fs::remove_file(&pidfile);
    let mut options =
        crate::helpers::script_options("fail.py", &[mode, &pidfile.display().to_string()]);
    // Long enough for Python to start and write its pid on a loaded machine.
    options.connect_timeout = Duration::from_secs(3);
    let err = match Mount::connect(client, options) {
        Ok(_) => panic!("{mode}: mounted"),
        Err(e) => e.to_string(),
    };
    let pid = std::fs::read_to_string(&pidfile)
        .unwrap_or_else(|e| panic!("{mode}: no pid file: {e} ({err})"));
    let _ = std::fs::remove_file(&pidfile);
    (err, pid.trim().parse().expect("a pid"))
}

/// The check itself, run alone in a child test process (the thread count
/// of a test binary running tests side by side says nothing).
#[cfg(target_os = "linux")]
fn no_child_or_thread_left() {
    let client = Registry::default();
    // The first mount starts the mounts' runtime (its threads stay).
    let _ = failed_mount(&client, "exit", 0);
    std::thread::sleep(Duration::from_millis(200));
    let before = threads();
    for n in 1..=2 {
        for mode in ["exit", "error", "garbage", "silent", "flood"] {
            let (err, pid) = failed_mount(&client, mode, n);
            // Waited for, not a zombie: no /proc entry at all.
            let proc = std::path::PathBuf::from(format!("/proc/{pid}"));
            let stat = std::fs::read_to_string(proc.join("stat")).unwrap_or_default();
            assert!(
                !proc.exists(),
                "{mode}: child {pid} left ({stat}) after: {err}"
            );
        }
    }
    let after = threads();
    eprintln!("threads before 10 failed mounts: {before}, after: {after}");
    assert!(after <= before, "{before} threads before, {after} after");
    assert!(client.names().is_empty());
}

#[test]
#[cfg(target_os = "linux")]
fn a_failed_stdio_mount_leaves_no_child_process_and_no_thread() {
    if std::env::var_os("CAPSTAN_FAILED_MOUNT_ALONE").is_some() {
        no_child_or_thread_left();
        return;
    }
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "lifecycle::a_failed_stdio_mount_leaves_no_child_process_and_no_thread",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CAPSTAN_FAILED_MOUNT_ALONE", "1")
        .status()
        .expect("run the test alone");
    assert!(status.success(), "{status}");
}

#[test]
fn a_server_whose_registry_was_closed_answers_each_call_cancelled_not_unknown() {
    // Header "Children": the server outlives its registry (the C host's
    // capstan_registry_free closes it); a call then ends cancelled, an
    // isError result, not a -32602 "unknown tool" error.
    let served = served_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url().to_owned();
    let session = raw_session(&url);
    assert!(served.close(Duration::from_secs(5)));
    let request = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 2}}});
    let headers = [("Mcp-Session-Id", session.as_str())];
    let (status, _, body) = raw_exchange(&url, &headers, &request.to_string());
    let answer = message(&body);
    assert_eq!((status, answer["id"].clone()), (200, json!(9)), "{body}");
    assert!(answer.get("error").is_none(), "{body}");
    assert_eq!(answer["result"]["isError"], json!(true), "{body}");
    assert!(
        body.contains("Cancelled: the tool registry was shut down."),
        "{body}"
    );
    assert!(server.stop());
}
