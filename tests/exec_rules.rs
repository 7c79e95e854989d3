//! Executor rules a host relies on that the larger suites (exec, submit,
//! host) reach only through the C ABI or not at all: found by mutation
//! testing of `src/exec` (issue 18), each test named after its rule.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use capstan::exec::release_calls;
use capstan::{
    execute, submit, Call, CallRequest, ExecOptions, Outcome, Registry, Sink, ToolDef, ToolFlags,
    ToolResult,
};
use serde_json::json;

#[path = "common/wait.rs"]
mod wait;
use wait::eventually;

/// Long enough for a loaded machine; the tests end as soon as it holds.
const PATIENCE: Duration = Duration::from_secs(30);

fn def(
    name: &str,
    timeout_ms: u32,
    flags: u32,
    f: impl Fn(Call) + Send + Sync + 'static,
) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(f),
        timeout_ms,
        max_output_chars: 0,
        flags: ToolFlags(flags),
    }
}

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

/// A tool whose calls each wait (at most `PATIENCE`) until `n` calls have
/// started, then report whether they all had: "together" only if the calls
/// ran side by side.
fn rendezvous_tool(name: &str, n: usize) -> ToolDef {
    let started = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    def(name, 0, 0, move |call| {
        use std::sync::atomic::Ordering;
        started.fetch_add(1, Ordering::SeqCst);
        let together = eventually(PATIENCE / 4, || started.load(Ordering::SeqCst) >= n);
        call.complete_text(if together { "together" } else { "alone" })
            .unwrap();
    })
}

#[test]
fn a_submitted_batch_nobody_waits_for_runs_its_calls_side_by_side() {
    // Rounds from one thread: the first batch of a thread and one after a
    // batch that ran without it start on the pool in different ways; both
    // fan out to the limit. The third needs more threads than went idle.
    for (round, n) in [4, 4, 8].into_iter().enumerate() {
        let reg = Registry::default();
        reg.register(rendezvous_tool("meet", n)).unwrap();
        let calls = (0..n)
            .map(|i| CallRequest::new(format!("m{i}"), "meet", json!({})))
            .collect();
        let batch = submit(&reg, calls, &ExecOptions::default(), Sink::Queue, None);
        assert_eq!((batch.len(), batch.is_empty()), (n, false));
        // Not a wait that runs calls: only watch the results arrive.
        assert!(
            eventually(PATIENCE, || batch.is_done()),
            "round {round}: the batch ends"
        );
        let results = batch.poll(10);
        assert_eq!(results.len(), n);
        for (_, result) in results {
            assert_eq!(result.content, "together", "round {round}: {result:?}");
        }
    }
    let reg = Registry::default();
    let empty = submit(&reg, Vec::new(), &ExecOptions::default(), Sink::Queue, None);
    assert_eq!((empty.len(), empty.is_empty()), (0, true));
}

#[test]
fn a_thread_that_pumped_runs_its_own_batch_s_main_thread_calls_while_it_waits() {
    let reg = Registry::default();
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    let record = ran_on.clone();
    reg.register(def("ui", 0, ToolFlags::MAIN_THREAD, move |call| {
        record.lock().unwrap().push(std::thread::current().id());
        call.complete_text("drawn").unwrap();
    }))
    .unwrap();
    // Pumping once makes this thread a main thread of the registry: no one
    // else would run its batch's main-thread calls while it waits.
    assert_eq!(capstan::exec::pump(&reg, Duration::ZERO), 0);
    let calls = (0..3)
        .map(|i| CallRequest::new(format!("u{i}"), "ui", json!({})))
        .collect();
    let results = execute(&reg, calls, &ExecOptions::default());
    assert!(
        results.iter().all(|r| r.outcome == Outcome::Ok),
        "{results:?}"
    );
    let me = std::thread::current().id();
    let ran_on = ran_on.lock().unwrap().clone();
    assert_eq!(ran_on, vec![me; 3]);
}

#[test]
fn main_thread_calls_wait_for_the_main_thread_not_for_any_thread_that_waits() {
    let reg = Arc::new(Registry::default());
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    let record = ran_on.clone();
    reg.register(def("ui", 0, ToolFlags::MAIN_THREAD, move |call| {
        record.lock().unwrap().push(std::thread::current().id());
        call.complete_text("drawn").unwrap();
    }))
    .unwrap();
    assert_eq!(capstan::exec::pump(&reg, Duration::ZERO), 0);
    let main = std::thread::current().id();
    // Other threads run batches and wait (one submits, one executes, so it
    // starts the call itself): they never pumped, so they must not run the
    // calls; this main thread does, when it pumps.
    let submitter = {
        let reg = reg.clone();
        std::thread::spawn(move || {
            let batch = submit(
                &reg,
                vec![CallRequest::new("w", "ui", json!({}))],
                &ExecOptions::default(),
                Sink::Collect,
                None,
            );
            batch.wait(Some(PATIENCE))
        })
    };
    let executor = {
        let reg = reg.clone();
        std::thread::spawn(move || {
            let results = execute(
                &reg,
                vec![CallRequest::new("x", "ui", json!({}))],
                &ExecOptions::default(),
            );
            results[0].outcome == Outcome::Ok
        })
    };
    let mut ran = 0;
    assert!(
        eventually(PATIENCE, || {
            ran += capstan::exec::pump(&reg, Duration::from_millis(1));
            ran == 2
        }),
        "the calls reached the pump"
    );
    assert!(submitter.join().unwrap(), "the submitted batch ended");
    assert!(executor.join().unwrap(), "the executed batch ended");
    assert_eq!(*ran_on.lock().unwrap(), vec![main; 2]);
}

#[test]
fn another_batch_s_main_thread_calls_wait_for_a_pump_while_a_main_thread_runs_its_own() {
    let reg = Arc::new(Registry::default());
    let ran = Arc::new(Mutex::new(Vec::new()));
    let record = ran.clone();
    reg.register(def("ui", 0, ToolFlags::MAIN_THREAD, move |call| {
        record.lock().unwrap().push(call.id().to_string());
        call.complete_text("drawn").unwrap();
    }))
    .unwrap();
    let queued = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = queued.clone();
    reg.set_notify(Some(Arc::new(move || {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    })))
    .unwrap();
    assert_eq!(capstan::exec::pump(&reg, Duration::ZERO), 0);
    let other = submit(
        &reg,
        vec![
            CallRequest::new("theirs", "ui", json!({})),
            CallRequest::new("theirs too", "ui", json!({})),
        ],
        &ExecOptions::default(),
        Sink::Collect,
        None,
    );
    // Submitted here but left to the pool: wait until both calls are queued
    // (the notifier hears each).
    assert!(eventually(PATIENCE, || queued
        .load(std::sync::atomic::Ordering::SeqCst)
        >= 2));
    // Its own batch, its call queued by a pool worker like the others: the
    // main thread's wait takes that one, not the older ones of `other`.
    let mine = submit(
        &reg,
        vec![CallRequest::new("mine", "ui", json!({}))],
        &ExecOptions::default(),
        Sink::Queue,
        None,
    );
    assert!(mine.wait(Some(PATIENCE)));
    assert_eq!(mine.poll(1)[0].1.outcome, Outcome::Ok);
    assert_eq!(
        *ran.lock().unwrap(),
        vec!["mine"],
        "only its own batch's call"
    );
    assert!(!other.is_done());
    // Within its budget, one pump runs every queued call.
    assert_eq!(capstan::exec::pump(&reg, PATIENCE), 2);
    assert!(other.wait(Some(PATIENCE)));
    let mut ran = ran.lock().unwrap().clone();
    ran[1..].sort();
    assert_eq!(ran, vec!["mine", "theirs", "theirs too"]);
}

/// A registry with a main-thread tool `ui` that counts its runs, and a
/// submitted batch of `n` of its calls with `options`, queued for a pump
/// that never comes.
fn unpumped_batch(
    options: &ExecOptions,
    n: usize,
) -> (Registry, capstan::Batch, Arc<Mutex<usize>>) {
    let reg = Registry::default();
    let runs = Arc::new(Mutex::new(0));
    let count = runs.clone();
    reg.register(def("ui", 0, ToolFlags::MAIN_THREAD, move |call| {
        *count.lock().unwrap() += 1;
        call.complete_text("drawn").unwrap();
    }))
    .unwrap();
    let calls = (0..n)
        .map(|i| CallRequest::new(format!("u{i}"), "ui", json!({})))
        .collect();
    let batch = submit(&reg, calls, options, Sink::Queue, None);
    (reg, batch, runs)
}

#[test]
fn cancelling_a_batch_ends_its_calls_still_waiting_for_a_pump() {
    let (_reg, batch, runs) = unpumped_batch(&ExecOptions::default(), 2);
    std::thread::sleep(Duration::from_millis(20));
    assert!(!batch.is_done(), "main-thread calls wait for a pump");
    batch.cancel();
    assert!(
        batch.wait(Some(PATIENCE)),
        "cancel ends them without a pump"
    );
    let results: Vec<_> = batch.poll(10).into_iter().map(|(_, r)| r).collect();
    assert_eq!(results.len(), 2);
    assert!(
        results.iter().all(|r| r.outcome == Outcome::Cancelled),
        "{results:?}"
    );
    assert_eq!(*runs.lock().unwrap(), 0, "no tool ran");
}

#[test]
fn a_batch_deadline_ends_calls_still_waiting_for_a_pump_and_says_so() {
    let options = ExecOptions {
        deadline_ms: 20,
        ..ExecOptions::default()
    };
    let (_reg, batch, runs) = unpumped_batch(&options, 2);
    assert!(batch.wait(Some(PATIENCE)), "the deadline ends them");
    let results: Vec<_> = batch.poll(10).into_iter().map(|(_, r)| r).collect();
    assert_eq!(results.len(), 2);
    for r in &results {
        assert_eq!(r.outcome, Outcome::Timeout, "{r:?}");
        assert!(
            r.content.contains("deadline of 20 ms") && r.content.contains("capstan_registry_pump"),
            "{r:?}"
        );
    }
    assert_eq!(*runs.lock().unwrap(), 0, "no tool ran");
}

/// The registry of `echo` (answers its call id), for batch rules.
fn echo_registry() -> Registry {
    let reg = Registry::default();
    reg.register(def("echo", 0, 0, |call| {
        let id = call.id().to_string();
        call.complete_text(id).unwrap();
    }))
    .unwrap();
    reg
}

fn echo_calls(n: usize) -> Vec<CallRequest> {
    (0..n)
        .map(|i| CallRequest::new(format!("e{i}"), "echo", json!({})))
        .collect()
}

#[test]
fn a_wait_returns_only_after_the_end_callback_returned_and_inside_it_does_not_wait() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::OnceLock;
    // Its calls wait until the batch is kept where the end callback finds it.
    let gate = Arc::new(AtomicBool::new(false));
    let open = gate.clone();
    let reg = Registry::default();
    reg.register(def("gated", 0, 0, move |call| {
        assert!(eventually(PATIENCE, || open.load(Ordering::SeqCst)));
        call.complete_text("ok").unwrap();
    }))
    .unwrap();
    let calls = (0..3)
        .map(|i| CallRequest::new(format!("g{i}"), "gated", json!({})))
        .collect();
    let ended = Arc::new(AtomicBool::new(false));
    let inside = Arc::new(OnceLock::<bool>::new());
    let this: Arc<OnceLock<capstan::Batch>> = Arc::default();
    let (end, seen, me) = (ended.clone(), inside.clone(), this.clone());
    let batch = submit(
        &reg,
        calls,
        &ExecOptions::default(),
        Sink::Callback(Box::new(|_, _| {})),
        Some(Box::new(move || {
            // Waiting on its own batch here would wait for itself: inside its
            // end callback the batch counts as finished.
            if let Some(me) = me.get() {
                let _ = seen.set(me.wait(Some(PATIENCE)) && me.is_done());
            }
            std::thread::sleep(Duration::from_millis(50));
            end.store(true, Ordering::SeqCst);
        })),
    );
    let kept = this.set(batch).is_ok();
    assert!(kept);
    gate.store(true, Ordering::SeqCst);
    // Not a caller-runs wait: the batch may end on the pool meanwhile.
    let batch = this.get().unwrap();
    assert!(batch.wait(Some(PATIENCE)));
    assert!(
        ended.load(Ordering::SeqCst),
        "wait returned before the end callback did"
    );
    assert_eq!(inside.get(), Some(&true));
}

#[test]
fn detach_returns_only_after_a_result_callback_already_running_returned() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let reg = echo_registry();
    let (running, returned) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (r1, r2) = (running.clone(), returned.clone());
    let batch = submit(
        &reg,
        echo_calls(1),
        &ExecOptions::default(),
        Sink::Callback(Box::new(move |_, _| {
            r1.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(100));
            r2.store(true, Ordering::SeqCst);
        })),
        None,
    );
    assert!(eventually(PATIENCE, || running.load(Ordering::SeqCst)));
    batch.detach();
    assert!(
        returned.load(Ordering::SeqCst),
        "detach returned while the callback ran"
    );
}

#[test]
fn waiting_on_another_batch_inside_a_callback_still_waits_for_its_end_callback() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let reg = echo_registry();
    let (other_began, other_ended) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (began, ended) = (other_began.clone(), other_ended.clone());
    let other = Arc::new(submit(
        &reg,
        echo_calls(2),
        &ExecOptions::default(),
        Sink::Queue,
        Some(Box::new(move || {
            began.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(100));
            ended.store(true, Ordering::SeqCst);
        })),
    ));
    let saw = Arc::new(Mutex::new(None));
    let (waits_on, record) = (other.clone(), saw.clone());
    let outer = submit(
        &reg,
        echo_calls(1),
        &ExecOptions::default(),
        Sink::Callback(Box::new(move |_, _| {
            // The other batch has all its results and its end callback is
            // running on another thread: this wait must wait for it.
            assert!(eventually(PATIENCE, || other_began.load(Ordering::SeqCst)));
            let done = waits_on.wait(Some(PATIENCE));
            *record.lock().unwrap() = Some(done && other_ended.load(Ordering::SeqCst));
        })),
        None,
    );
    assert!(outer.wait(Some(PATIENCE)));
    assert_eq!(*saw.lock().unwrap(), Some(true));
}

#[test]
fn a_wait_with_a_time_limit_on_a_host_thread_runs_no_call_there() {
    let reg = Registry::default();
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    let record = ran_on.clone();
    reg.register(def("where", 0, 0, move |call| {
        record.lock().unwrap().push(std::thread::current().id());
        call.complete_text("ok").unwrap();
    }))
    .unwrap();
    for round in 0..20 {
        let calls = (0..4)
            .map(|i| CallRequest::new(format!("w{round}_{i}"), "where", json!({})))
            .collect();
        let batch = submit(&reg, calls, &ExecOptions::default(), Sink::Queue, None);
        // A call could outlast the limit: such a wait only watches.
        assert!(batch.wait(Some(PATIENCE)));
    }
    let me = std::thread::current().id();
    let ran_on = ran_on.lock().unwrap();
    assert_eq!(ran_on.len(), 80);
    assert!(
        ran_on.iter().all(|t| *t != me),
        "a call ran on the waiting thread"
    );
}

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

#[test]
fn a_call_runs_the_tool_registered_when_it_starts_even_mid_batch() {
    let reg = Arc::new(Registry::default());
    let replacer = Arc::downgrade(&reg);
    reg.register(def("f", 0, 0, move |call| {
        // The first version replaces itself while its batch runs.
        if let Some(reg) = replacer.upgrade() {
            reg.register(def("f", 0, 0, |call| call.complete_text("new").unwrap()))
                .unwrap();
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
fn a_call_stuck_past_its_timeout_is_replaced_and_does_not_raise_the_limit_once_it_returns() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let reg = Registry::default();
    let stuck_back = Arc::new(AtomicBool::new(false));
    let stuck_thread = Arc::new(Mutex::new(None));
    let (back, thread) = (stuck_back.clone(), stuck_thread.clone());
    // Ignores its 20 ms timeout and holds its thread for 150 ms.
    reg.register(def("stuck", 20, 0, move |call| {
        *thread.lock().unwrap() = Some(std::thread::current().id());
        std::thread::sleep(Duration::from_millis(150));
        back.store(true, Ordering::SeqCst);
        let _ = call.complete_text("late");
    }))
    .unwrap();
    // Steps: how many ran at once, how many ran on the stuck call's thread
    // after it came back, and how many finished while it was stuck.
    let (now, most, after_back, meanwhile) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let (n, m, o, w, b) = (
        now.clone(),
        most.clone(),
        after_back.clone(),
        meanwhile.clone(),
        stuck_back.clone(),
    );
    let thread = stuck_thread.clone();
    reg.register(def("step", 0, 0, move |call| {
        let inside = n.fetch_add(1, Ordering::SeqCst) + 1;
        m.fetch_max(inside, Ordering::SeqCst);
        if *thread.lock().unwrap() == Some(std::thread::current().id()) {
            o.fetch_add(1, Ordering::SeqCst);
        }
        std::thread::sleep(Duration::from_millis(30));
        if !b.load(Ordering::SeqCst) {
            w.fetch_add(1, Ordering::SeqCst);
        }
        n.fetch_sub(1, Ordering::SeqCst);
        call.complete_text("ok").unwrap();
    }))
    .unwrap();
    // Run by the batch's own thread (execute) and by pool workers only
    // (submit, and a wait that only watches).
    for (parallel, by_pool) in [(false, false), (true, false), (false, true)] {
        for counter in [&most, &after_back, &meanwhile] {
            counter.store(0, Ordering::SeqCst);
        }
        stuck_back.store(false, Ordering::SeqCst);
        *stuck_thread.lock().unwrap() = None;
        let options = ExecOptions {
            parallel,
            limit: 2,
            ..ExecOptions::default()
        };
        let mut calls = vec![CallRequest::new("s", "stuck", json!({}))];
        calls.extend((0..10).map(|i| CallRequest::new(format!("p{i}"), "step", json!({}))));
        let results: Vec<ToolResult> = if by_pool {
            let batch = submit(&reg, calls, &options, Sink::Queue, None);
            assert!(batch.wait(Some(PATIENCE)));
            let mut got = batch.poll(100);
            got.sort_by_key(|(i, _)| *i);
            got.into_iter().map(|(_, r)| r).collect()
        } else {
            execute(&reg, calls, &options)
        };
        assert_eq!(results[0].outcome, Outcome::Timeout);
        assert!(results[1..].iter().all(|r| r.outcome == Outcome::Ok));
        let case = format!("parallel={parallel} by_pool={by_pool}");
        // The batch went on without the stuck call once it timed out.
        assert!(
            meanwhile.load(Ordering::SeqCst) >= 1,
            "{case}: nothing ran meanwhile"
        );
        if by_pool {
            // The stuck worker, back, starts the one call it had already
            // claimed with the stuck one (calls are claimed in chunks), then
            // leaves: one step may overlap, no more.
            assert!(
                after_back.load(Ordering::SeqCst) <= 1,
                "{case}: {after_back:?} after_back"
            );
        } else {
            // No worker to replace: the batch's thread went on itself.
            let limit = if parallel { 2 } else { 1 };
            assert!(
                most.load(Ordering::SeqCst) <= limit,
                "{case}: {} steps ran at once",
                most.load(Ordering::SeqCst)
            );
        }
    }
}

#[test]
fn calls_the_batch_deadline_caught_before_they_started_say_they_never_ran() {
    let reg = Registry::default();
    reg.register(def("long", 0, 0, |call| {
        std::thread::sleep(Duration::from_millis(200));
        let _ = call.complete_text("finished late");
    }))
    .unwrap();
    reg.register(def("next", 0, 0, |call| call.complete_text("ran").unwrap()))
        .unwrap();
    let options = ExecOptions {
        parallel: false,
        deadline_ms: 50,
        ..ExecOptions::default()
    };
    let calls = vec![
        CallRequest::new("1", "long", json!({})),
        CallRequest::new("2", "next", json!({})),
        CallRequest::new("3", "next", json!({})),
    ];
    let results = execute(&reg, calls, &options);
    assert_eq!(results[0].outcome, Outcome::Timeout, "{results:?}");
    for r in &results[1..] {
        assert_eq!(r.outcome, Outcome::Timeout, "{r:?}");
        assert_eq!(
            r.content,
            "Tool \"next\" timed out: the batch deadline of 50 ms passed while it waited to \
             start (for a free worker or an earlier call of a serial tool); it was not run."
        );
    }
}

#[test]
fn at_the_batch_deadline_calls_not_started_report_at_once_not_when_a_worker_frees() {
    let delivered = Arc::new(Mutex::new(Vec::new()));
    let saw_them = Arc::new(Mutex::new(None));
    let reg = Registry::default();
    let (seen, saw) = (delivered.clone(), saw_them.clone());
    // Holds the batch's only worker until the other calls have their results.
    reg.register(def("long", 0, 0, move |call| {
        let others = eventually(PATIENCE, || seen.lock().unwrap().len() >= 2);
        *saw.lock().unwrap() = Some(others);
        let _ = call.complete_text("finished late");
    }))
    .unwrap();
    reg.register(def("next", 0, 0, |call| call.complete_text("ran").unwrap()))
        .unwrap();
    let options = ExecOptions {
        parallel: false,
        deadline_ms: 50,
        ..ExecOptions::default()
    };
    let record = delivered.clone();
    let batch = submit(
        &reg,
        vec![
            CallRequest::new("1", "long", json!({})),
            CallRequest::new("2", "next", json!({})),
            CallRequest::new("3", "next", json!({})),
        ],
        &options,
        Sink::Callback(Box::new(move |_, r| {
            if r.id != "1" {
                record.lock().unwrap().push(r.outcome);
            }
        })),
        None,
    );
    assert!(batch.wait(Some(PATIENCE)));
    // The batch ended at its deadline; its first callback returns after.
    assert!(eventually(PATIENCE, || saw_them.lock().unwrap().is_some()));
    assert_eq!(
        *saw_them.lock().unwrap(),
        Some(true),
        "the calls not started waited for the worker"
    );
    assert_eq!(*delivered.lock().unwrap(), [Outcome::Timeout; 2]);
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

#[test]
fn a_lone_call_without_a_timeout_runs_on_the_thread_that_executes_it() {
    let reg = Registry::default();
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    let record = ran_on.clone();
    reg.register(def("here", 0, 0, move |call| {
        record.lock().unwrap().push(std::thread::current().id());
        call.complete_text("ok").unwrap();
    }))
    .unwrap();
    for _ in 0..3 {
        execute(
            &reg,
            vec![CallRequest::new("1", "here", json!({}))],
            &ExecOptions::default(),
        );
    }
    let me = std::thread::current().id();
    assert_eq!(*ran_on.lock().unwrap(), vec![me; 3]);
}

#[test]
fn a_sequential_batch_of_calls_with_timeouts_runs_them_one_at_a_time() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let reg = Registry::default();
    let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (n, m) = (now.clone(), most.clone());
    // A timeout sends each call to the pool while the batch's thread waits
    // for its result before it starts the next.
    reg.register(def("timed", 10_000, 0, move |call| {
        m.fetch_max(n.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(10));
        n.fetch_sub(1, Ordering::SeqCst);
        call.complete_text("ok").unwrap();
    }))
    .unwrap();
    let calls = (0..6)
        .map(|i| CallRequest::new(format!("t{i}"), "timed", json!({})))
        .collect();
    let sequential = ExecOptions {
        parallel: false,
        ..ExecOptions::default()
    };
    let results = execute(&reg, calls, &sequential);
    assert!(
        results.iter().all(|r| r.outcome == Outcome::Ok),
        "{results:?}"
    );
    assert_eq!(most.load(Ordering::SeqCst), 1);
}
