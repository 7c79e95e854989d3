//! Both protocol eras (issue #33) between capstan's server and capstan's
//! mount: one HTTP endpoint serves a 2026-07-28 mount (stateless, no
//! `initialize`) and a 2025-11-25 one (a session) at once, and each mount
//! says in its info which it got.

use crate::helpers::*;

fn mount_asking(client: &Registry, url: &str, version: Option<&str>) -> Mount {
    let mut options = mount_options(url, vec![]);
    options.protocol_version = version.map(str::to_owned);
    Mount::connect(client, options).expect("mount")
}

#[test]
fn one_endpoint_serves_a_modern_and_a_legacy_mount_at_once_and_each_says_its_era() {
    let served = served_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let (modern_reg, legacy_reg, asked_reg) = (
        Registry::default(),
        Registry::default(),
        Registry::default(),
    );
    // By default a mount asks server/discover first: capstan answers it.
    let modern = mount_asking(&modern_reg, server.url(), None);
    let legacy = mount_asking(&legacy_reg, server.url(), Some("2025-11-25"));
    let asked = mount_asking(&asked_reg, server.url(), Some("2026-07-28"));
    for (mount, version, era) in [
        (&modern, "2026-07-28", "modern"),
        (&legacy, "2025-11-25", "legacy"),
        (&asked, "2026-07-28", "modern"),
    ] {
        let info = mount.info();
        assert_eq!(info["protocol_version"], version, "{info}");
        assert_eq!(info["era"], era, "{info}");
        assert_eq!(info["server"]["name"], "capstan", "{info}");
        assert_eq!(
            info["server"]["version"],
            env!("CARGO_PKG_VERSION"),
            "{info}"
        );
    }
    for (reg, a) in [(&modern_reg, 1), (&legacy_reg, 2), (&asked_reg, 3)] {
        let r = call(reg, "s_add", json!({"a": a, "b": 40}));
        assert_eq!(r.outcome, Outcome::Ok, "{r:?}");
        assert_eq!(r.content, (a + 40).to_string());
        let r = call(reg, "s_boom", json!({}));
        assert_eq!(r.outcome, Outcome::ToolError, "{r:?}");
        assert!(r.content.contains("the boom tool exploded"), "{r:?}");
    }
    // A change of the served registry reaches both: the legacy mount
    // unasked, the modern one on its subscriptions/listen stream.
    served
        .register(def("late", json!({"type": "object"}), |call| {
            let _ = call.complete_text("late here");
        }))
        .unwrap();
    for reg in [&modern_reg, &legacy_reg] {
        assert!(
            eventually(PATIENCE, || reg.get("s_late").is_some()),
            "s_late never appeared: {:?}",
            reg.names()
        );
        assert_eq!(call(reg, "s_late", json!({})).content, "late here");
    }
    served.unregister("late").unwrap();
    for reg in [&modern_reg, &legacy_reg] {
        assert!(
            eventually(PATIENCE, || reg.get("s_late").is_none()),
            "s_late never went away"
        );
    }
    modern.unmount();
    legacy.unmount();
    asked.unmount();
    assert!(server.stop());
}

#[test]
fn a_modern_call_is_cancelled_on_the_server_when_the_mount_gives_up_on_it() {
    let served = Registry::default();
    let saw = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = saw.clone();
    served
        .register(def("wait", json!({"type": "object"}), move |call| {
            if eventually(PATIENCE, || call.is_cancelled()) {
                seen.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            let _ = call.complete_text("ended");
        }))
        .unwrap();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let client = Registry::default();
    let mount = mount_asking(&client, server.url(), Some("2026-07-28"));
    let options = ExecOptions {
        deadline_ms: 300,
        ..ExecOptions::default()
    };
    let r = execute(
        &client,
        vec![CallRequest::new("c1", "s_wait", json!({}))],
        &options,
    )
    .remove(0);
    assert_eq!(r.outcome, Outcome::Timeout, "{r:?}");
    // No session to send notifications/cancelled in: the request's stream
    // ends, and capstan's server cancels the call then.
    assert!(
        eventually(PATIENCE, || saw.load(std::sync::atomic::Ordering::SeqCst)),
        "the served tool never saw its cancellation"
    );
    mount.unmount();
    assert!(server.stop());
}
