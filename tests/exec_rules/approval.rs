//! Calls waiting for approval: the deadline, handles, binding data, where
//! an approved call runs.

use super::*;

/// A registry whose `guarded` tool requires approval, and an approver that
/// keeps every approval it gets (deciding nothing) in the returned list.
fn approval_registry() -> (Registry, Arc<Mutex<Vec<capstan::Approval>>>) {
    let reg = Registry::default();
    reg.register(def("guarded", 0, ToolFlags::REQUIRES_APPROVAL, |call| {
        let thread = std::thread::current().id();
        call.complete_text(format!("ran on {thread:?}")).unwrap();
    }))
    .unwrap();
    let kept = Arc::new(Mutex::new(Vec::new()));
    let keep = kept.clone();
    reg.set_approver(Some(Arc::new(move |a| keep.lock().unwrap().push(a))))
        .unwrap();
    (reg, kept)
}

#[test]
fn a_batch_deadline_ends_a_call_still_waiting_for_approval_and_says_so() {
    let (reg, kept) = approval_registry();
    let options = ExecOptions {
        deadline_ms: 20,
        ..ExecOptions::default()
    };
    let results = execute(
        &reg,
        vec![CallRequest::new("g", "guarded", json!({}))],
        &options,
    );
    assert_eq!(results[0].outcome, Outcome::Timeout, "{results:?}");
    assert!(
        results[0].content.contains("deadline of 20 ms") && results[0].content.contains("approval"),
        "{results:?}"
    );
    let late = kept.lock().unwrap().pop().expect("the approver was asked");
    assert!(
        late.approve().is_err(),
        "a decision after the deadline is refused"
    );
}

#[test]
fn an_approval_handle_names_its_approval_until_decided_and_keeps_binding_data() {
    let (reg, kept) = approval_registry();
    let batch = submit(
        &reg,
        vec![CallRequest::new("g1", "guarded", json!({"x": 1}))],
        &ExecOptions::default(),
        Sink::Queue,
        None,
    );
    assert!(eventually(PATIENCE, || !kept.lock().unwrap().is_empty()));
    let approval = kept.lock().unwrap().pop().unwrap();
    let handle = approval.handle().unwrap();
    assert_ne!(handle, 0);
    assert_eq!(
        approval.handle().unwrap(),
        handle,
        "one handle per approval"
    );
    let found = capstan::Approval::from_handle(handle).expect("a pending approval resolves");
    assert_eq!((found.id(), found.tool()), ("g1", "guarded"));
    assert_eq!(found.arguments_text(), r#"{"x":1}"#);
    // Binding data is made once and shared by every view of the approval.
    let made = approval.binding_data(|| String::from("first")).cloned();
    assert_eq!(made.as_deref(), Some("first"));
    let again = found.binding_data(|| String::from("second")).cloned();
    assert_eq!(again.as_deref(), Some("first"));
    assert!(
        found.binding_data(|| 7u32).is_none(),
        "another type is not there"
    );
    // Approved from this thread: the call runs elsewhere (this may be a
    // host's UI thread), never here.
    found.approve().unwrap();
    assert!(
        capstan::Approval::from_handle(handle).is_err(),
        "decided: stale"
    );
    assert!(batch.wait(Some(PATIENCE)));
    let ran = batch.poll(1)[0].1.content.clone();
    let me = std::thread::current().id();
    assert!(
        ran.starts_with("ran on") && ran != format!("ran on {me:?}"),
        "{ran}"
    );
}
