//! Durable calls (issue #47): a journal answers a completed call without
//! running its tool, refuses a replay whose tool, schema or arguments
//! changed, resolves a crash by the tool's policy, bounds results, and
//! reads a corrupt file as a clear error.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use capstan::exec::journal::{Attached, Journal, Mode};
use capstan::exec::set_journal;
use capstan::{ContentKind, EventKind, Outcome, Registry, ToolDef, ToolFlags};
use capstan_journal::JsonlJournal;
use serde_json::{json, Value};

#[path = "common/journal.rs"]
mod common;
use common::{run, temp};

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
        attach(
            &reg,
            Arc::new(JsonlJournal::open(&path).unwrap()),
            Mode::Record,
        );
        run(&reg, "r1", &calls)
    };
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(first[0].outcome, Outcome::Ok);
    assert_eq!(first[1].outcome, Outcome::ToolError);

    // A new process: the same run id and calls.
    let reg = registry(false, runs.clone());
    attach(
        &reg,
        Arc::new(JsonlJournal::open(&path).unwrap()),
        Mode::Record,
    );
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    reg.set_event_hook(Some(Arc::new(move |e: &capstan::Event| {
        seen.lock().unwrap().push((e.kind, e.id.to_string()));
    })))
    .unwrap();
    let again = run(&reg, "r1", &calls);
    assert_eq!(runs.load(Ordering::SeqCst), 2, "no tool ran again");
    for (a, b) in first.iter().zip(&again) {
        assert_eq!(
            (a.outcome, &a.content, &a.id),
            (b.outcome, &b.content, &b.id)
        );
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
        attach(
            &reg,
            Arc::new(JsonlJournal::open(&path).unwrap()),
            Mode::Record,
        );
        run(&reg, "r", &[("c1", "charge", json!({"amount": 5}))]);
    }
    let reg = registry(true, runs.clone());
    attach(
        &reg,
        Arc::new(JsonlJournal::open(&path).unwrap()),
        Mode::Record,
    );
    let r = run(&reg, "r", &[("c1", "charge", json!({"amount": 5}))]);
    assert_eq!(r[0].outcome, Outcome::ToolError);
    assert!(
        r[0].content
            .contains("the schema of tool \"charge\" changed"),
        "{}",
        r[0].content
    );
    assert!(
        !r[0].content.contains("arguments changed"),
        "{}",
        r[0].content
    );

    let reg = registry(false, runs.clone());
    attach(
        &reg,
        Arc::new(JsonlJournal::open(&path).unwrap()),
        Mode::Record,
    );
    let r = run(&reg, "r", &[("c1", "charge", json!({"amount": 6}))]);
    assert!(
        r[0].content.contains("its arguments changed"),
        "{}",
        r[0].content
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "a refused replay runs nothing"
    );
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
    attach(
        &reg,
        Arc::new(JsonlJournal::open(&path).unwrap()),
        Mode::Record,
    );
    let r = run(
        &reg,
        "r",
        &[
            ("c1", "charge", json!({"amount": 5})),
            ("c2", "fetch", json!({})),
        ],
    );
    assert!(
        r[0].content.starts_with("Outcome unknown:"),
        "{}",
        r[0].content
    );
    assert!(r[0].is_error());
    assert_eq!((r[1].outcome, r[1].content.as_str()), (Outcome::Ok, "page"));
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "only the idempotent tool ran"
    );
}

#[test]
fn replay_mode_runs_no_tool_and_fails_a_call_missing_from_the_recording() {
    let path = temp("fixture.jsonl");
    let runs = Arc::new(AtomicUsize::new(0));
    {
        let reg = registry(false, runs.clone());
        attach(
            &reg,
            Arc::new(JsonlJournal::open(&path).unwrap()),
            Mode::Record,
        );
        run(&reg, "t", &[("c1", "fetch", json!({}))]);
    }
    let before = std::fs::read(&path).unwrap();
    let reg = registry(false, runs.clone());
    attach(
        &reg,
        Arc::new(JsonlJournal::open(&path).unwrap()),
        Mode::Replay,
    );
    let r = run(
        &reg,
        "t",
        &[("c9", "fetch", json!({})), ("c1", "fetch", json!({}))],
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert!(
        r[0].content.contains("is not in the recording"),
        "{}",
        r[0].content
    );
    assert_eq!(
        (r[1].id.as_str(), r[1].content.as_str()),
        ("c1", "page"),
        "call order kept"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "a replay writes nothing"
    );
}

#[test]
fn a_result_past_the_journals_bound_is_refused_not_cut() {
    let path = temp("big.jsonl");
    let reg = registry(false, Arc::default());
    attach(
        &reg,
        Arc::new(JsonlJournal::open(&path).unwrap()),
        Mode::Record,
    );
    let n = capstan::exec::journal::DEFAULT_MAX_RESULT_BYTES + 10;
    let r = run(&reg, "r", &[("c1", "big", json!({"n": n}))]);
    assert_eq!(r[0].outcome, Outcome::ToolError);
    assert!(
        r[0].content.contains("larger than the journal's bound"),
        "{}",
        r[0].content
    );
    // The refusal is what was recorded and what a replay answers.
    let reg = registry(false, Arc::default());
    attach(
        &reg,
        Arc::new(JsonlJournal::open(&path).unwrap()),
        Mode::Replay,
    );
    let again = run(&reg, "r", &[("c1", "big", json!({"n": n}))]);
    assert_eq!(again[0].content, r[0].content);
}

#[test]
fn a_corrupt_or_truncated_journal_file_is_an_error_naming_the_record() {
    let path = temp("corrupt.jsonl");
    {
        let reg = registry(false, Arc::default());
        attach(
            &reg,
            Arc::new(JsonlJournal::open(&path).unwrap()),
            Mode::Record,
        );
        run(
            &reg,
            "r",
            &[("c1", "fetch", json!({})), ("c2", "fetch", json!({}))],
        );
    }
    let good = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    assert_eq!(lines.len(), 5, "tools, then started and completed per call");
    let corrupt = format!("{}\n{}\n{{oops\n{}\n", lines[0], lines[1], lines[3]);
    std::fs::write(&path, &corrupt).unwrap();
    let e = JsonlJournal::open(&path).err().unwrap();
    assert!(e.0.contains("record at line 3"), "{e}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        corrupt,
        "the file is left as it was"
    );

    let truncated = &good[..good.len() - 10];
    std::fs::write(&path, truncated).unwrap();
    let e = JsonlJournal::open(&path).err().unwrap();
    assert!(
        e.0.contains("record at line 5") && e.0.contains("truncated"),
        "{e}"
    );
}

/// The child half of the crash test: records two calls completed and two
/// started whose tools never return, then waits to be killed.
fn crash_child(path: &str) {
    let reg = Registry::default();
    let charge_schema = json!({"type": "object", "properties": {"amount": {"type": "integer"}}});
    for (name, schema, flags) in [
        ("charge", charge_schema, ToolFlags::default()),
        (
            "fetch",
            json!({"type": "object"}),
            ToolFlags(ToolFlags::IDEMPOTENT),
        ),
    ] {
        reg.register(ToolDef {
            name: name.into(),
            description: name.into(),
            parameters: schema,
            handler: Box::new(move |call: capstan::Call| {
                if call.arguments().get("hang").is_some() || call.arguments()["amount"] == 7 {
                    // Dies here, between `started` and `completed`.
                    loop {
                        std::thread::park();
                    }
                }
                call.complete(ContentKind::Text, "done").unwrap();
            }),
            timeout_ms: 0,
            max_output_chars: 0,
            flags,
        })
        .unwrap();
    }
    attach(
        &reg,
        Arc::new(JsonlJournal::open(path).unwrap()),
        Mode::Record,
    );
    run(&reg, "crash", &crash_calls());
    unreachable!("two of the calls never return");
}

fn crash_calls() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("c1", "charge", json!({"amount": 5})),
        ("c2", "fetch", json!({})),
        ("c3", "charge", json!({"amount": 7})),
        ("c4", "fetch", json!({"hang": true})),
    ]
}

#[test]
fn after_a_crash_nothing_completed_runs_twice_and_the_unknown_follow_their_policy() {
    if let Ok(path) = std::env::var("CAPSTAN_JOURNAL_CRASH_CHILD") {
        return crash_child(&path);
    }
    let path = temp("crash.jsonl");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "after_a_crash_nothing_completed_runs_twice_and_the_unknown_follow_their_policy",
            "--nocapture",
        ])
        .env("CAPSTAN_JOURNAL_CRASH_CHILD", &path)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait (no time limit on the machine's speed, only on a child that
    // died) until the child recorded 4 starts and 2 results, then kill it.
    let count = |kind: &str| {
        std::fs::read_to_string(&path)
            .unwrap_or_default()
            .matches(&format!("{{\"kind\":\"{kind}\""))
            .count()
    };
    while count("started") < 4 || count("completed") < 2 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the child ended before it was killed"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let runs = Arc::new(AtomicUsize::new(0));
    let reg = registry(false, runs.clone());
    attach(
        &reg,
        Arc::new(JsonlJournal::open(&path).unwrap()),
        Mode::Record,
    );
    let r = run(&reg, "crash", &crash_calls());
    assert_eq!(
        (r[0].outcome, r[0].content.as_str()),
        (Outcome::Ok, "done"),
        "replayed"
    );
    assert_eq!(
        (r[1].outcome, r[1].content.as_str()),
        (Outcome::Ok, "done"),
        "replayed"
    );
    assert!(
        r[2].content.starts_with("Outcome unknown:"),
        "{}",
        r[2].content
    );
    assert_eq!(
        (r[3].outcome, r[3].content.as_str()),
        (Outcome::Ok, "page"),
        "re-run"
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "only the idempotent unknown call ran"
    );
    // And its re-run is now completed: a third process runs nothing.
    let reg = registry(false, runs.clone());
    attach(
        &reg,
        Arc::new(JsonlJournal::open(&path).unwrap()),
        Mode::Record,
    );
    let again = run(&reg, "crash", &crash_calls());
    assert_eq!(again[3].content, "page");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[cfg(feature = "journal-sqlite")]
mod sqlite {
    use super::*;
    use capstan_journal::SqliteJournal;

    /// The child half: records `n` calls of its own run on the shared file.
    fn writer(path: &str, run_id: &str) {
        let reg = registry(false, Arc::default());
        attach(
            &reg,
            Arc::new(SqliteJournal::open(path, false).unwrap()),
            Mode::Record,
        );
        let calls: Vec<(String, Value)> = (0..50)
            .map(|i| (format!("c{i}"), json!({"amount": i + 1})))
            .collect();
        let calls: Vec<(&str, &str, Value)> = calls
            .iter()
            .map(|(id, a)| (id.as_str(), "charge", a.clone()))
            .collect();
        let r = run(&reg, run_id, &calls);
        assert!(r.iter().all(|r| r.outcome == Outcome::Ok));
    }

    #[test]
    fn two_processes_share_one_sqlite_journal() {
        if let (Ok(path), Ok(run_id)) = (
            std::env::var("CAPSTAN_JOURNAL_SQLITE_CHILD"),
            std::env::var("CAPSTAN_JOURNAL_SQLITE_RUN"),
        ) {
            return writer(&path, &run_id);
        }
        let path = temp("shared.db");
        let children: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|run_id| {
                std::process::Command::new(std::env::current_exe().unwrap())
                    .args(["--exact", "sqlite::two_processes_share_one_sqlite_journal"])
                    .env("CAPSTAN_JOURNAL_SQLITE_CHILD", &path)
                    .env("CAPSTAN_JOURNAL_SQLITE_RUN", run_id)
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
        // Every call of both runs is there, completed: nothing runs again.
        let runs = Arc::new(AtomicUsize::new(0));
        let reg = registry(false, runs.clone());
        attach(
            &reg,
            Arc::new(SqliteJournal::open(&path, false).unwrap()),
            Mode::Replay,
        );
        for run_id in ["a", "b"] {
            let calls: Vec<(String, Value)> = (0..50)
                .map(|i| (format!("c{i}"), json!({"amount": i + 1})))
                .collect();
            let calls: Vec<(&str, &str, Value)> = calls
                .iter()
                .map(|(id, a)| (id.as_str(), "charge", a.clone()))
                .collect();
            let r = run(&reg, run_id, &calls);
            for (i, r) in r.iter().enumerate() {
                assert_eq!(r.content, format!("charged {}", i + 1), "{run_id} {i}");
            }
        }
        assert_eq!(runs.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_completed_record_is_never_replaced_by_a_later_start() {
        let path = temp("order.db");
        let j = SqliteJournal::open(&path, true).unwrap();
        let print = capstan::exec::journal::Fingerprint::new("t", &json!({}), &json!({}));
        let rec = |kind| capstan::exec::journal::Record {
            run: "r".into(),
            call: "c".into(),
            kind,
        };
        use capstan::exec::journal::RecordKind;
        let result = capstan::ToolResult::new("c", "t", Outcome::ToolError, "no");
        j.record(&rec(RecordKind::Completed(print.clone(), result)))
            .unwrap();
        j.record(&rec(RecordKind::Started(print))).unwrap();
        let found = j.lookup("r", "c").unwrap().unwrap();
        let got = found.result.unwrap();
        assert_eq!(
            (got.outcome, got.content.as_str()),
            (Outcome::ToolError, "no")
        );
    }
}

#[test]
fn the_journal_reader_fuzz_seeds_keep_the_targets_properties() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/journal_reader");
    let whole = std::fs::read(dir.join("session.jsonl")).unwrap();
    let records = capstan_journal::jsonl::read_records(&whole, 1024).unwrap();
    assert_eq!(records.len(), 3);
    for r in &records {
        assert_eq!(
            &capstan::exec::journal::Record::from_line(&r.to_line()).unwrap(),
            r
        );
    }
    let cut = std::fs::read(dir.join("truncated.jsonl")).unwrap();
    let e = capstan_journal::jsonl::read_records(&cut, 1024).unwrap_err();
    assert!(
        e.0.starts_with("record at line 1 (the last line has no newline"),
        "{e}"
    );
    let long = [
        b"{\"kind\":\"x\",\"pad\":\"".as_slice(),
        &[b'a'; 2000],
        b"\"}\n",
    ]
    .concat();
    let e = capstan_journal::jsonl::read_records(&long, 1024).unwrap_err();
    assert!(e.0.contains("past the bound of 1024"), "{e}");
}

#[test]
fn each_turns_tool_list_is_recorded_when_it_changed() {
    let path = temp("tools.jsonl");
    let reg = registry(false, Arc::default());
    attach(
        &reg,
        Arc::new(JsonlJournal::open(&path).unwrap()),
        Mode::Record,
    );
    let tools_records = || -> Vec<Value> {
        std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["kind"] == "tools")
            .collect()
    };
    run(&reg, "r", &[("c1", "fetch", json!({}))]);
    run(&reg, "r", &[("c2", "fetch", json!({}))]);
    let first = tools_records();
    assert_eq!(first.len(), 1, "the same tools in the same run: one list");
    let names: Vec<&str> = first[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["big", "charge", "fetch"]);
    assert_eq!(first[0]["call"], "c1");
    reg.unregister("big").unwrap();
    run(&reg, "r", &[("c3", "fetch", json!({}))]);
    let after = tools_records();
    assert_eq!(after.len(), 2);
    assert_eq!(
        (
            after[1]["call"].as_str(),
            after[1]["tools"].as_array().unwrap().len()
        ),
        (Some("c3"), 2)
    );
}
