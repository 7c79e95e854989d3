//! Registry rules a host relies on: change listeners, "did you mean" after
//! the tool set changed, options reaching the checks, hooks let go at close.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use capstan::check::{check_call, Checked};
use capstan::{Arguments, Outcome, Registry, RegistryOptions, ToolDef, ToolFlags};
use serde_json::json;

fn def(name: &str) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        handler: Box::new(|call: capstan::Call| call.complete_text("ok").unwrap()),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    }
}

#[test]
fn change_listeners_hear_every_register_and_unregister_until_removed() {
    let reg = Registry::default();
    let (a, b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (a2, b2) = (a.clone(), b.clone());
    let id_a = reg.add_change_listener(Arc::new(move || {
        a2.fetch_add(1, Ordering::SeqCst);
    }));
    let id_b = reg.add_change_listener(Arc::new(move || {
        b2.fetch_add(1, Ordering::SeqCst);
    }));
    assert_ne!(id_a, id_b, "each listener has its own id");
    reg.register(def("one")).unwrap();
    reg.unregister("one").unwrap();
    assert_eq!(a.load(Ordering::SeqCst), 2);
    assert_eq!(b.load(Ordering::SeqCst), 2);
    reg.remove_change_listener(id_a);
    reg.register(def("two")).unwrap();
    assert_eq!(
        a.load(Ordering::SeqCst),
        2,
        "a removed listener hears nothing"
    );
    assert_eq!(b.load(Ordering::SeqCst), 3, "the others still hear");
}

fn unknown_text(reg: &Registry, name: &str) -> String {
    match check_call(reg, name, Arguments::Value(json!({})), false) {
        Checked::Answer(Outcome::UnknownTool, text) => text,
        Checked::Answer(outcome, text) => panic!("{outcome:?}: {text}"),
        Checked::Valid(v) => panic!("valid: {v}"),
    }
}

#[test]
fn did_you_mean_knows_the_tools_registered_after_an_earlier_unknown_call() {
    let reg = Registry::default();
    reg.register(def("get_weather")).unwrap();
    assert!(unknown_text(&reg, "get_wether").contains("get_weather"));
    reg.register(def("search_files")).unwrap();
    let text = unknown_text(&reg, "search_file");
    assert!(text.contains("search_files"), "{text}");
    reg.unregister("get_weather").unwrap();
    let text = unknown_text(&reg, "get_wether");
    assert!(!text.contains("get_weather"), "{text}");
}

#[test]
fn a_batch_worker_sees_a_tool_replaced_between_two_batches() {
    let reg = Registry::default();
    reg.register(def("f")).unwrap();
    let call = || vec![capstan::CallRequest::new("c", "f", json!({}))];
    let first = capstan::execute(&reg, call(), &capstan::ExecOptions::default());
    assert_eq!(first[0].content, "ok");
    let mut replaced = def("f");
    replaced.handler = Box::new(|call: capstan::Call| call.complete_text("new").unwrap());
    replaced.flags = capstan::ToolFlags(capstan::ToolFlags::REPLACE);
    reg.register(replaced).unwrap();
    let second = capstan::execute(&reg, call(), &capstan::ExecOptions::default());
    assert_eq!(second[0].content, "new");
}

#[test]
fn a_second_registration_of_a_name_is_refused_unless_it_asks_to_replace() {
    let reg = Registry::default();
    reg.register(def("f")).unwrap();
    let call = || vec![capstan::CallRequest::new("c", "f", json!({}))];
    let mut again = def("f");
    again.handler = Box::new(|call: capstan::Call| call.complete_text("new").unwrap());
    let err = reg.register(again).unwrap_err();
    assert!(matches!(err, capstan::Error::InvalidArgument(_)), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("\"f\" is already registered"), "{text}");
    assert!(text.contains("CAPSTAN_TOOL_REPLACE"), "{text}");
    // Refused: the old tool stays and still runs.
    let out = capstan::execute(&reg, call(), &capstan::ExecOptions::default());
    assert_eq!(out[0].content, "ok");
    assert_eq!(reg.names(), ["f"]);
    // The flag is how to register, not part of the tool.
    let mut replaced = def("f");
    replaced.flags = capstan::ToolFlags(capstan::ToolFlags::REPLACE | capstan::ToolFlags::SERIAL);
    reg.register(replaced).unwrap();
    let flags = reg.get("f").unwrap().spec().flags;
    assert_eq!(flags, capstan::ToolFlags(capstan::ToolFlags::SERIAL));
}

#[test]
fn the_registry_coerce_option_reaches_check_call() {
    let reg = Registry::new(RegistryOptions {
        coerce: true,
        ..Default::default()
    });
    reg.register(def("f")).unwrap();
    assert!(reg.options().coerce);
    match check_call(&reg, "f", Arguments::Value(json!({"n": "5"})), false) {
        Checked::Valid(v) => assert_eq!(v, json!({"n": 5})),
        Checked::Answer(o, text) => panic!("{o:?}: {text}"),
    }
    let plain = Registry::default();
    plain.register(def("f")).unwrap();
    assert!(matches!(
        check_call(&plain, "f", Arguments::Value(json!({"n": "5"})), false),
        Checked::Answer(Outcome::InvalidArguments, _)
    ));
}

#[test]
fn close_lets_go_of_the_approver() {
    let reg = Registry::default();
    let held = Arc::new(());
    let in_approver = held.clone();
    reg.set_approver(Some(Arc::new(move |approval: capstan::Approval| {
        let _ = &in_approver;
        approval.approve().unwrap();
    })))
    .unwrap();
    assert_eq!(Arc::strong_count(&held), 2);
    assert!(reg.close(Duration::from_secs(5)));
    assert_eq!(
        Arc::strong_count(&held),
        1,
        "the approver was dropped at close"
    );
}

#[test]
fn names_and_specs_come_sorted_and_len_counts_the_tools() {
    let reg = Registry::default();
    assert!(reg.is_empty());
    assert_eq!(reg.len(), 0);
    for name in ["zeta", "alpha", "mid"] {
        reg.register(def(name)).unwrap();
    }
    assert!(!reg.is_empty());
    assert_eq!(reg.len(), 3);
    assert_eq!(reg.names(), ["alpha", "mid", "zeta"]);
    let specs = reg.specs();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["alpha", "mid", "zeta"]);
    assert_eq!(specs[0].parameters, def("alpha").parameters);
    assert!(!reg.is_closed());
    assert!(reg.close(Duration::from_secs(5)));
    assert!(reg.is_closed());
    assert!(reg.is_empty(), "close drops the tools");
}

#[test]
fn close_lets_go_of_the_event_hook_and_the_notifier() {
    let reg = Registry::default();
    let held = Arc::new(());
    let (h1, h2) = (held.clone(), held.clone());
    reg.set_event_hook(Some(Arc::new(move |_: &capstan::Event| {
        let _ = &h1;
    })))
    .unwrap();
    reg.set_notify(Some(Arc::new(move || {
        let _ = &h2;
    })))
    .unwrap();
    assert_eq!(Arc::strong_count(&held), 3);
    assert!(reg.close(Duration::from_secs(5)));
    assert_eq!(Arc::strong_count(&held), 1, "both were dropped at close");
}

/// A call of a tool that blocks until released, running on its own thread.
struct Blocked {
    runner: std::thread::JoinHandle<Vec<capstan::ToolResult>>,
    release: std::sync::mpsc::Sender<()>,
    /// Set when the tool's callback is about to return.
    returned: Arc<AtomicUsize>,
}

/// Registers "block" and starts one call of it; returns once it is running.
fn block_one_call(reg: &Arc<Registry>) -> Blocked {
    let (entered_tx, entered_rx) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel::<()>();
    let release_rx = std::sync::Mutex::new(release_rx);
    let returned = Arc::new(AtomicUsize::new(0));
    let returned_in_tool = returned.clone();
    let mut blocking = def("block");
    blocking.handler = Box::new(move |call: capstan::Call| {
        entered_tx.send(()).unwrap();
        let _ = release_rx.lock().unwrap().recv();
        let _ = call.complete_text("done");
        returned_in_tool.store(1, Ordering::SeqCst);
    });
    reg.register(blocking).unwrap();
    let runner = {
        let reg = reg.clone();
        std::thread::spawn(move || {
            let calls = vec![capstan::CallRequest::new("c", "block", json!({}))];
            capstan::execute(&reg, calls, &capstan::ExecOptions::default())
        })
    };
    entered_rx.recv_timeout(Duration::from_secs(30)).unwrap();
    Blocked {
        runner,
        release,
        returned,
    }
}

#[test]
fn a_close_that_times_out_says_what_it_still_waits_for() {
    let reg = Arc::new(Registry::default());
    let blocked = block_one_call(&reg);
    assert!(!reg.close(Duration::from_millis(10)));
    let text = reg.close_outstanding();
    assert!(text.contains("1 callback(s)"), "{text}");
    blocked.release.send(()).unwrap();
    let results = blocked.runner.join().unwrap();
    assert_eq!(results[0].outcome, Outcome::Cancelled);
    assert!(reg.close(Duration::from_secs(30)));
}

#[test]
fn close_waits_until_every_tool_is_destroyed_and_says_so_when_it_times_out() {
    let reg = Registry::default();
    reg.register(def("f")).unwrap();
    // A host (or a binding) still holding a tool keeps it from being destroyed.
    let tool = reg.get("f").unwrap();
    assert!(!reg.close(Duration::from_millis(10)));
    let text = reg.close_outstanding();
    assert_eq!(
        text,
        "1 tool(s) were not yet destroyed (calls of theirs still in flight)"
    );
    drop(tool);
    assert!(reg.close(Duration::from_secs(30)));
}

#[test]
fn a_tool_of_one_registry_may_close_another_and_that_close_waits() {
    let a = Registry::default();
    let b = Arc::new(Registry::default());
    b.register(def("f")).unwrap();
    let b_in_tool = b.clone();
    let mut closer = def("close_b");
    closer.handler = Box::new(move |call: capstan::Call| {
        // Not inside one of b's own callbacks: b's close waits, and b is idle.
        let finished = b_in_tool.close(Duration::from_secs(30));
        call.complete_text(finished.to_string()).unwrap();
    });
    a.register(closer).unwrap();
    let results = capstan::execute(
        &a,
        vec![capstan::CallRequest::new("c", "close_b", json!({}))],
        &capstan::ExecOptions::default(),
    );
    assert_eq!(results[0].content, "true");
    assert!(b.is_closed());
}

#[test]
fn a_tool_keeps_its_schema_as_compact_json_text() {
    let reg = Registry::default();
    reg.register(def("f")).unwrap();
    let tool = reg.get("f").unwrap();
    assert_eq!(
        tool.parameters_text(),
        r#"{"type":"object","properties":{"n":{"type":"integer"}}}"#
    );
}

#[test]
fn close_waits_for_a_running_callback_to_return() {
    let reg = Arc::new(Registry::default());
    let blocked = block_one_call(&reg);
    let release = blocked.release.clone();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        release.send(()).unwrap();
    });
    assert!(
        reg.close(Duration::from_secs(60)),
        "{}",
        reg.close_outstanding()
    );
    assert_eq!(
        blocked.returned.load(Ordering::SeqCst),
        1,
        "close returned before the callback"
    );
    releaser.join().unwrap();
    blocked.runner.join().unwrap();
}

#[cfg(unix)]
#[test]
fn the_wake_fd_never_blocks_a_read_and_is_not_inherited_by_children() {
    let reg = Registry::default();
    let fd = reg.wake_fd().unwrap();
    assert_eq!(reg.wake_fd().unwrap(), fd, "one fd per registry");
    // SAFETY: fcntl on an fd the registry owns and keeps open.
    let (status, fd_flags) = unsafe {
        (
            libc::fcntl(fd, libc::F_GETFL),
            libc::fcntl(fd, libc::F_GETFD),
        )
    };
    assert!(status >= 0 && fd_flags >= 0);
    assert_ne!(
        status & libc::O_NONBLOCK,
        0,
        "a read with nothing queued returns at once"
    );
    assert_ne!(fd_flags & libc::FD_CLOEXEC, 0, "close-on-exec");
    let mut buf = [0u8; 8];
    // SAFETY: reading 8 bytes into an 8-byte buffer.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), 8) };
    assert_eq!(n, -1);
    assert_eq!(
        std::io::Error::last_os_error().raw_os_error(),
        Some(libc::EAGAIN)
    );
}

#[test]
fn check_calls_answers_each_call_as_check_call_does_in_call_order() {
    use capstan::check::{check_calls, checked_list_json};
    let reg = Registry::default();
    reg.register(def("f")).unwrap();
    let calls = vec![
        capstan::CallRequest::new("a", "f", json!({"n": 1})),
        capstan::CallRequest::new("b", "f", json!({"n": "x"})),
        capstan::CallRequest::new("c", "g", json!({})),
        capstan::CallRequest {
            id: "d".into(),
            name: "f".into(),
            arguments: Arguments::Text("{not json".into()),
        },
    ];
    let one_by_one: Vec<Checked> = calls
        .iter()
        .map(|c| check_call(&reg, &c.name, c.arguments.clone(), false))
        .collect();
    let checked = check_calls(&reg, calls, false);
    assert_eq!(checked, one_by_one);
    let list: serde_json::Value = serde_json::from_str(&checked_list_json(&checked)).unwrap();
    let expected: Vec<serde_json::Value> = one_by_one
        .iter()
        .map(|c| match c {
            Checked::Valid(v) => json!(["ok", v]),
            Checked::Answer(o, text) => json!([o.as_str(), text]),
        })
        .collect();
    assert_eq!(list, json!(expected));
    assert_eq!(list[0], json!(["ok", {"n": 1}]));
    assert_eq!(list[1][0], "invalid_arguments");
    assert_eq!(list[2][0], "unknown_tool");
    assert_eq!(list[3][0], "invalid_arguments");
    assert_eq!(checked_list_json(&[]), "[]");
}
