//! Durable calls (issue #47): a journal answers a completed call without
//! running its tool, refuses a replay whose tool, schema or arguments
//! changed, resolves a crash by the tool's policy, bounds results, and
//! reads a corrupt file as a clear error.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use capstan::exec::journal::{Attached, Journal, Mode};
use capstan::exec::set_journal;
use capstan::{
    execute, CallRequest, ContentKind, EventKind, ExecOptions, Outcome, Registry, ToolDef,
    ToolFlags,
};
use capstan_journal::JsonlJournal;
use serde_json::{json, Value};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("capstan-journal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// A registry whose tools count their runs: `charge` (fails for amount 0),
/// `fetch` (idempotent) and `big` (a result of `n` bytes).
fn registry(schema_extra: bool, runs: Arc<AtomicUsize>) -> Registry {
    let reg = Registry::default();
    let mut props = json!({"amount": {"type": "integer"}});
    if schema_extra {
        props["note"] = json!({"type": "string"});
    }
    let r = runs.clone();
    reg.register(ToolDef {
        name: "charge".into(),
        description: "charge a card".into(),
        parameters: json!({"type": "object", "properties": props}),
        handler: Box::new(move |call: capstan::Call| {
            r.fetch_add(1, Ordering::SeqCst);
            let amount = call.arguments()["amount"].as_i64().unwrap_or(0);
            if amount == 0 {
                call.fail("nothing to charge").unwrap();
            } else {
                call.complete(ContentKind::Text, &format!("charged {amount}"))
                    .unwrap();
            }
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    })
    .unwrap();
    let r = runs.clone();
    reg.register(ToolDef {
        name: "fetch".into(),
        description: "read a page".into(),
        parameters: json!({"type": "object"}),
        handler: Box::new(move |call: capstan::Call| {
            r.fetch_add(1, Ordering::SeqCst);
            call.complete(ContentKind::Text, "page").unwrap();
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags(ToolFlags::IDEMPOTENT),
    })
    .unwrap();
    reg.register(ToolDef {
        name: "big".into(),
        description: "a big result".into(),
        parameters: json!({"type": "object"}),
        handler: Box::new(move |call: capstan::Call| {
            let n = call.arguments()["n"].as_u64().unwrap_or(0) as usize;
            call.complete(ContentKind::Text, &"x".repeat(n)).unwrap();
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    })
    .unwrap();
    reg
}

fn attach(reg: &Registry, journal: Arc<dyn Journal>, mode: Mode) {
    set_journal(reg, Some(Attached { journal, mode }));
}

fn run(reg: &Registry, run_id: &str, calls: &[(&str, &str, Value)]) -> Vec<capstan::ToolResult> {
    let calls = calls
        .iter()
        .map(|(id, name, args)| CallRequest::new(*id, *name, args.clone()))
        .collect();
    let opts = ExecOptions {
        run_id: Some(run_id.into()),
        ..ExecOptions::default()
    };
    execute(reg, calls, &opts)
}

#[test]
fn a_completed_call_is_answered_from_the_journal_without_running_its_tool() {
    let path = temp("replay.jsonl");
    let runs = Arc::new(AtomicUsize::new(0));
    let calls = [
        ("c1", "charge", json!({"amount": 5})),
        ("c2", "charge", json!({"amount": 0})),
    ];
    let first = {
        let reg = registry(false, runs.clone());
        attach(&reg, Arc::new(JsonlJournal::open(&path).unwrap()), Mode::Record);
        run(&reg, "r1", &calls)
    };
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(first[0].outcome, Outcome::Ok);
    assert_eq!(first[1].outcome, Outcome::ToolError);

    // A new process: the same run id and calls.
    let reg = registry(false, runs.clone());
    attach(&reg, Arc::new(JsonlJournal::open(&path).unwrap()), Mode::Record);
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    reg.set_event_hook(Some(Arc::new(move |e: &capstan::Event| {
        seen.lock().unwrap().push((e.kind, e.id.to_string()));
    })))
    .unwrap();
    let again = run(&reg, "r1", &calls);
    assert_eq!(runs.load(Ordering::SeqCst), 2, "no tool ran again");
    for (a, b) in first.iter().zip(&again) {
        assert_eq!((a.outcome, &a.content, &a.id), (b.outcome, &b.content, &b.id));
    }
    assert!(again[1].is_error(), "a recorded error replays as an error");
    let events = events.lock().unwrap();
    assert!(events.contains(&(EventKind::Replayed, "c1".into())));
    assert!(!events.iter().any(|(k, _)| *k == EventKind::Started));
    drop(events); // the hook locks it on the next run
    assert_eq!(reg.stats_json()["tools"]["charge"]["replayed"], json!(2));

    // Another run id is another conversation: its calls run.
    run(&reg, "r2", &calls[..1]);
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

#[test]
fn a_replay_whose_schema_or_arguments_changed_fails_naming_what_changed() {
    let path = temp("changed.jsonl");
    let runs = Arc::new(AtomicUsize::new(0));
    {
        let reg = registry(false, runs.clone());
        attach(&reg, Arc::new(JsonlJournal::open(&path).unwrap()), Mode::Record);
        run(&reg, "r", &[("c1", "charge", json!({"amount": 5}))]);
    }
    let reg = registry(true, runs.clone());
    attach(&reg, Arc::new(JsonlJournal::open(&path).unwrap()), Mode::Record);
    let r = run(&reg, "r", &[("c1", "charge", json!({"amount": 5}))]);
    assert_eq!(r[0].outcome, Outcome::ToolError);
    assert!(r[0].content.contains("the schema of tool \"charge\" changed"), "{}", r[0].content);
    assert!(!r[0].content.contains("arguments changed"), "{}", r[0].content);

    let reg = registry(false, runs.clone());
    attach(&reg, Arc::new(JsonlJournal::open(&path).unwrap()), Mode::Record);
    let r = run(&reg, "r", &[("c1", "charge", json!({"amount": 6}))]);
    assert!(r[0].content.contains("its arguments changed"), "{}", r[0].content);
    assert_eq!(runs.load(Ordering::SeqCst), 1, "a refused replay runs nothing");
}

#[test]
fn a_started_call_without_a_result_follows_its_tools_policy() {
    let path = temp("unknown.jsonl");
    let runs = Arc::new(AtomicUsize::new(0));
    // What a process that died inside both callbacks left behind.
    let reg = registry(false, runs.clone());
    let print = |tool: &str, schema: Value, args: Value| {
        capstan::exec::journal::Fingerprint::new(tool, &schema, &args)
    };
    let charge_schema = json!({"type": "object", "properties": {"amount": {"type": "integer"}}});
    let journal = JsonlJournal::open(&path).unwrap();
    for (call, p) in [
        ("c1", print("charge", charge_schema, json!({"amount": 5}))),
        ("c2", print("fetch", json!({"type": "object"}), json!({}))),
    ] {
        journal
            .record(&capstan::exec::journal::Record {
                run: "r".into(),
                call: call.into(),
                kind: capstan::exec::journal::RecordKind::Started(p),
            })
            .unwrap();
    }
    drop(journal);
    attach(&reg, Arc::new(JsonlJournal::open(&path).unwrap()), Mode::Record);
    let r = run(
        &reg,
        "r",
        &[("c1", "charge", json!({"amount": 5})), ("c2", "fetch", json!({}))],
    );
    assert!(r[0].content.starts_with("Outcome unknown:"), "{}", r[0].content);
    assert!(r[0].is_error());
    assert_eq!((r[1].outcome, r[1].content.as_str()), (Outcome::Ok, "page"));
    assert_eq!(runs.load(Ordering::SeqCst), 1, "only the idempotent tool ran");
}

#[test]
fn replay_mode_runs_no_tool_and_fails_a_call_missing_from_the_recording() {
    let path = temp("fixture.jsonl");
    let runs = Arc::new(AtomicUsize::new(0));
    {
        let reg = registry(false, runs.clone());
        attach(&reg, Arc::new(JsonlJournal::open(&path).unwrap()), Mode::Record);
        run(&reg, "t", &[("c1", "fetch", json!({}))]);
    }
    let before = std::fs::read(&path).unwrap();
    let reg = registry(false, runs.clone());
    attach(&reg, Arc::new(JsonlJournal::open(&path).unwrap()), Mode::Replay);
    let r = run(
        &reg,
        "t",
        &[("c9", "fetch", json!({})), ("c1", "fetch", json!({}))],
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert!(r[0].content.contains("is not in the recording"), "{}", r[0].content);
    assert_eq!((r[1].id.as_str(), r[1].content.as_str()), ("c1", "page"), "call order kept");
    assert_eq!(std::fs::read(&path).unwrap(), before, "a replay writes nothing");
}

#[test]
fn a_result_past_the_journals_bound_is_refused_not_cut() {
    let path = temp("big.jsonl");
    let reg = registry(false, Arc::default());
    attach(&reg, Arc::new(JsonlJournal::open(&path).unwrap()), Mode::Record);
    let n = capstan::exec::journal::DEFAULT_MAX_RESULT_BYTES + 10;
    let r = run(&reg, "r", &[("c1", "big", json!({"n": n}))]);
    assert_eq!(r[0].outcome, Outcome::ToolError);
    assert!(r[0].content.contains("larger than the journal's bound"), "{}", r[0].content);
    // The refusal is what was recorded and what a replay answers.
    let reg = registry(false, Arc::default());
    attach(&reg, Arc::new(JsonlJournal::open(&path).unwrap()), Mode::Replay);
    let again = run(&reg, "r", &[("c1", "big", json!({"n": n}))]);
    assert_eq!(again[0].content, r[0].content);
}

#[test]
fn a_corrupt_or_truncated_journal_file_is_an_error_naming_the_record() {
    let path = temp("corrupt.jsonl");
    {
        let reg = registry(false, Arc::default());
        attach(&reg, Arc::new(JsonlJournal::open(&path).unwrap()), Mode::Record);
        run(&reg, "r", &[("c1", "fetch", json!({})), ("c2", "fetch", json!({}))]);
    }
    let good = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    assert_eq!(lines.len(), 5, "tools, then started and completed per call");
    let corrupt = format!("{}\n{}\n{{oops\n{}\n", lines[0], lines[1], lines[3]);
    std::fs::write(&path, &corrupt).unwrap();
    let e = JsonlJournal::open(&path).err().unwrap();
    assert!(e.0.contains("record at line 3"), "{e}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), corrupt, "the file is left as it was");

    let truncated = &good[..good.len() - 10];
    std::fs::write(&path, truncated).unwrap();
    let e = JsonlJournal::open(&path).err().unwrap();
    assert!(e.0.contains("record at line 5") && e.0.contains("truncated"), "{e}");
}
