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
