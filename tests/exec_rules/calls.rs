//! A call seen by its tool and by its host: handles after the registry is
//! freed, the tool registered when it starts.

use super::*;

/// A tool that takes a handle, as a C host does, keeps it in `held` and
/// never completes the call.
fn holding_tool(name: &str, timeout_ms: u32, held: &Arc<Mutex<Vec<usize>>>) -> ToolDef {
    let held = held.clone();
    def(name, timeout_ms, 0, move |call| {
        held.lock().unwrap().push(call.handle().unwrap());
    })
}

#[test]
fn freeing_a_registry_releases_the_calls_its_host_still_holds() {
    let reg = Registry::default();
    let held = Arc::new(Mutex::new(Vec::new()));
    reg.register(holding_tool("abandon", 5, &held)).unwrap();
    reg.register(holding_tool("pending", 0, &held)).unwrap();
    // Keeps its call (no handle) and never completes it.
    let kept: Arc<Mutex<Option<Call>>> = Arc::default();
    let keep = kept.clone();
    reg.register(def("quiet", 0, 0, move |call| {
        *keep.lock().unwrap() = Some(call);
    }))
    .unwrap();
    // One call timed out while the host held it (its batch is over), one is
    // still running in a submitted batch.
    let results = execute(
        &reg,
        vec![CallRequest::new("a", "abandon", json!({}))],
        &ExecOptions::default(),
    );
    assert_eq!(results[0].outcome, Outcome::Timeout);
    let batch = submit(
        &reg,
        vec![CallRequest::new("p", "pending", json!({}))],
        &ExecOptions::default(),
        Sink::Collect,
        None,
    );
    let quiet = submit(
        &reg,
        vec![CallRequest::new("q", "quiet", json!({}))],
        &ExecOptions::default(),
        Sink::Collect,
        None,
    );
    assert!(
        eventually(PATIENCE, || held.lock().unwrap().len() == 2
            && kept.lock().unwrap().is_some()),
        "the tools ran"
    );
    let handles = held.lock().unwrap().clone();
    for &h in &handles {
        assert!(Call::from_handle(h).is_ok(), "a held call resolves");
    }
    release_calls(&reg);
    for &h in &handles {
        let err = Call::from_handle(h).err().expect("released handle");
        assert!(err.to_string().contains("registry was freed"), "{err}");
    }
    // A running call whose tool had not taken a handle yet: one taken now
    // names nothing either.
    let late = kept.lock().unwrap().take().expect("the quiet tool ran");
    let handle = late.handle().unwrap();
    assert!(
        Call::from_handle(handle).is_err(),
        "a handle after the free resolved"
    );
    batch.cancel();
    quiet.cancel();
}

#[test]
fn a_call_runs_the_tool_registered_when_it_starts_even_mid_batch() {
    let reg = Arc::new(Registry::default());
    let replacer = Arc::downgrade(&reg);
    reg.register(def("f", 0, 0, move |call| {
        // The first version replaces itself while its batch runs.
        if let Some(reg) = replacer.upgrade() {
            let mut new = def("f", 0, 0, |call| call.complete_text("new").unwrap());
            new.flags = capstan::ToolFlags(capstan::ToolFlags::REPLACE);
            reg.register(new).unwrap();
        }
        call.complete_text("old").unwrap();
    }))
    .unwrap();
    let sequential = ExecOptions {
        parallel: false,
        ..ExecOptions::default()
    };
    let calls = vec![
        CallRequest::new("1", "f", json!({})),
        CallRequest::new("2", "f", json!({})),
    ];
    let results = execute(&reg, calls, &sequential);
    let texts: Vec<&str> = results.iter().map(|r| r.content.as_str()).collect();
    assert_eq!(texts, ["old", "new"]);
}

#[test]
fn a_tool_sees_its_call_and_once_completed_the_call_counts_as_done_and_cancelled() {
    let reg = Registry::default();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    reg.register(def("observe", 0, 0, move |call| {
        let mut s = record.lock().unwrap();
        s.push(format!(
            "{} {} {}",
            call.id(),
            call.tool(),
            call.arguments_text()
        ));
        s.push(format!("{}", call.arguments()["x"]));
        // Binding data: made once, shared by every view of the call.
        let made = call.binding_data(|| String::from("first")).cloned();
        let again = call
            .clone()
            .binding_data(|| String::from("second"))
            .cloned();
        let other = call.binding_data(|| 7u32).is_none();
        s.push(format!("{made:?} {again:?} {other}"));
        let keep = call.clone();
        s.push(format!("{} {}", keep.is_done(), keep.is_cancelled()));
        call.complete_text("done").unwrap();
        // Completed: whatever the tool still does is no longer wanted.
        s.push(format!("{} {}", keep.is_done(), keep.is_cancelled()));
    }))
    .unwrap();
    let results = execute(
        &reg,
        vec![CallRequest::new("o", "observe", json!({"x": 1}))],
        &ExecOptions::default(),
    );
    assert_eq!(results[0].content, "done");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            r#"o observe {"x":1}"#,
            "1",
            r#"Some("first") Some("first") true"#,
            "false false",
            "true true",
        ]
    );
}
