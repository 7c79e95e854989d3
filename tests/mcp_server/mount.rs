//! capstan's client mounting capstan's server: tools, results, errors,
//! list_changed, and what a mount does when its server goes away.

use crate::helpers::*;

#[test]
fn a_served_registry_mounts_in_another_with_its_tools_results_and_errors() {
    let served = served_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    assert!(server.url().starts_with("http://127.0.0.1:") && server.url().ends_with("/mcp"));
    let client = Registry::default();
    let mount = mount(&client, server.url(), vec![]).expect("mount");
    let info = mount.info();
    assert_eq!(
        info["tools"],
        json!({"s_add": "add", "s_boom": "boom", "s_hold": "hold"})
    );
    assert_eq!(info["problems"], json!([]), "{info}");
    assert_eq!(mount.tool_names(), ["s_add", "s_boom", "s_hold"]);
    // The schema travelled: the client checks arguments itself.
    let spec = client.get("s_add").expect("s_add");
    assert_eq!(spec.spec().parameters["required"], json!(["a", "b"]));
    assert_eq!(spec.spec().description, "add tool");

    let sum = call(&client, "s_add", json!({"a": 2, "b": 40}));
    assert_eq!(
        (sum.outcome, sum.content.as_str()),
        (Outcome::Ok, "42"),
        "{sum:?}"
    );
    let failed = call(&client, "s_boom", json!({}));
    assert_eq!(failed.outcome, Outcome::ToolError, "{failed:?}");
    assert!(
        failed.content.contains("the boom tool exploded"),
        "{failed:?}"
    );
    mount.unmount();
    assert!(server.stop(), "no call was left running");
    assert!(server.stop(), "a second stop returns true at once");
}

#[test]
fn tools_registered_on_a_served_registry_reach_a_mounted_client() {
    let served = served_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let client = Registry::default();
    let mount = mount(&client, server.url(), vec![]).expect("mount");
    served
        .register(def("late", json!({"type": "object"}), |call| {
            call.complete_text("here").unwrap();
        }))
        .unwrap();
    assert!(
        eventually(PATIENCE, || client.get("s_late").is_some()),
        "list_changed brought the new tool: {:?}",
        client.names()
    );
    assert_eq!(call(&client, "s_late", json!({})).content, "here");
    served.unregister("boom").unwrap();
    assert!(
        eventually(PATIENCE, || client.get("s_boom").is_none()),
        "list_changed took the removed tool away"
    );
    mount.unmount();
    assert!(server.stop());
}

#[test]
fn every_connected_client_hears_list_changed() {
    let served = served_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let (first, second) = (Registry::default(), Registry::default());
    let one = mount(&first, server.url(), vec![]).expect("mount one");
    let two = mount(&second, server.url(), vec![]).expect("mount two");
    served
        .register(def("late", json!({"type": "object"}), |call| {
            call.complete_text("here").unwrap();
        }))
        .unwrap();
    for (client, which) in [(&first, "first"), (&second, "second")] {
        assert!(
            eventually(PATIENCE, || client.get("s_late").is_some()),
            "the {which} client did not hear of the new tool"
        );
    }
    one.unmount();
    two.unmount();
    assert!(server.stop());
}

#[test]
fn a_call_to_a_mount_whose_server_went_away_says_whether_it_will_reconnect() {
    // A long backoff: the mount is still waiting to reconnect; one
    // attempt that fails at once: it gave up.
    for (max_reconnects, backoff_ms, says) in [
        (3, 60_000, "reconnecting"),
        (1, 20, "no reconnect will be tried"),
    ] {
        let served = served_registry();
        let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
        let client = Registry::default();
        let mount = mount_reconnecting(&client, server.url(), max_reconnects, backoff_ms);
        assert_eq!(call(&client, "s_add", json!({"a": 1, "b": 2})).content, "3");
        assert!(server.stop());
        // The first call after the stop finds the connection gone.
        let failed = call(&client, "s_add", json!({"a": 1, "b": 2}));
        assert!(failed.is_error(), "{failed:?}");
        assert!(
            eventually(PATIENCE, || !mount.is_connected()
                && (max_reconnects > 1 || mount.info()["gave_up"] == true)),
            "{}",
            mount.info()
        );
        let after = call(&client, "s_add", json!({"a": 1, "b": 2}));
        assert!(
            after.is_error() && after.content.contains("is not connected"),
            "{after:?}"
        );
        assert!(after.content.ends_with(says), "{says}: {after:?}");
        mount.unmount();
    }
}

#[test]
fn a_mount_with_a_reconnect_policy_comes_back_when_its_http_server_restarts() {
    let served = served_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url().to_string();
    let client = Registry::default();
    let mount = mount_reconnecting(&client, &url, 8, 100);
    assert!(server.stop());
    let failed = call(&client, "s_add", json!({"a": 1, "b": 2}));
    assert!(failed.is_error(), "{failed:?}");
    // The same address again: the mount reconnects on its own.
    let options = ServerOptions {
        address: address(&url).into(),
        ..ServerOptions::default()
    };
    let again = HttpServer::start(&served, &options).expect("restart");
    assert!(
        eventually(PATIENCE, || mount.is_connected()
            && mount.info()["reconnects"] == 1),
        "{}",
        mount.info()
    );
    assert_eq!(call(&client, "s_add", json!({"a": 1, "b": 2})).content, "3");
    mount.unmount();
    assert!(again.stop());
}

#[test]
fn reconnect_attempts_back_off_doubling_each_time() {
    let served = served_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let client = Registry::default();
    let mount = mount_reconnecting(&client, server.url(), 3, 200);
    assert!(server.stop());
    let began = std::time::Instant::now();
    let failed = call(&client, "s_add", json!({"a": 1, "b": 2}));
    assert!(failed.is_error(), "{failed:?}");
    assert!(
        eventually(PATIENCE, || mount.info()["gave_up"] == true),
        "{}",
        mount.info()
    );
    // Three attempts, after 200, 400 and 800 ms: no sooner than 1.4 s.
    let took = began.elapsed();
    assert!(
        took >= Duration::from_millis(1400),
        "gave up after {took:?}"
    );
    assert_eq!(mount.info()["reconnects"], 0);
    mount.unmount();
}

#[test]
fn by_default_a_mount_reconnects_when_its_http_server_restarts() {
    let served = served_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url().to_string();
    let client = Registry::default();
    // The default policy: 5 attempts, 0.2 s apart, doubled (6.2 s of waits).
    let mount = mount(&client, &url, vec![]).expect("mount");
    assert!(server.stop());
    let failed = call(&client, "s_add", json!({"a": 1, "b": 2}));
    assert!(failed.is_error(), "{failed:?}");
    let options = ServerOptions {
        address: address(&url).into(),
        ..ServerOptions::default()
    };
    let again = HttpServer::start(&served, &options).expect("restart");
    assert!(
        eventually(PATIENCE, || mount.is_connected()
            && mount.info()["reconnects"] == 1),
        "{}",
        mount.info()
    );
    assert_eq!(call(&client, "s_add", json!({"a": 1, "b": 2})).content, "3");
    mount.unmount();
    assert!(again.stop());
}
