//! Durable calls (issue #47): how `started` records claim their keys. A
//! batch of several calls claims all it can run in one go (one SQLite
//! transaction, not one per call); of two processes sending the same run
//! and call id at once exactly one runs the tool and the other is told the
//! call is in progress elsewhere (or gets its result once completed); a
//! crash in the middle of a batch claimed together still resolves by each
//! tool's policy.

#[cfg(feature = "journal-sqlite")]
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use capstan::exec::journal::{
    Attached, Claim, Found, Journal, JournalError, Mode, Record, RecordKind,
};
use capstan::exec::set_journal;
use capstan::{ContentKind, Outcome, Registry, ToolDef, ToolFlags};
use serde_json::{json, Value};

#[path = "common/journal.rs"]
mod common;
use common::run;
#[cfg(feature = "journal-sqlite")]
use common::temp;

fn tool(
    name: &str,
    flags: ToolFlags,
    f: impl Fn(capstan::Call) + Send + Sync + 'static,
) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: name.into(),
        parameters: json!({"type": "object", "properties": {"amount": {"type": "integer"}}}),
        handler: Box::new(f),
        timeout_ms: 0,
        max_output_chars: 0,
        flags,
    }
}

/// A store in memory that logs each write: `claim` (with how many
/// `started` records) or `record` (with the kind), and counts lookups.
#[derive(Default)]
struct Logged {
    records: Mutex<Vec<Record>>,
    writes: Mutex<Vec<String>>,
    lookups: AtomicUsize,
}

impl Logged {
    fn find(records: &[Record], run: &str, call: &str) -> Option<Found> {
        let mine = records.iter().filter(|r| r.run == run && r.call == call);
        let completed = mine
            .clone()
            .find(|r| matches!(r.kind, RecordKind::Completed(..)));
        completed
            .or_else(|| mine.clone().next_back())
            .and_then(Record::found)
    }
}

impl Journal for Logged {
    fn lookup(&self, run: &str, call: &str) -> Result<Option<Found>, JournalError> {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        Ok(Logged::find(&self.records.lock().unwrap(), run, call))
    }

    fn record(&self, record: &Record) -> Result<(), JournalError> {
        self.writes
            .lock()
            .unwrap()
            .push(format!("record {}", record.kind_name()));
        self.records.lock().unwrap().push(record.clone());
        Ok(())
    }

    fn claim(&self, records: &[(Record, bool)]) -> Result<Vec<Claim>, JournalError> {
        let started = records
            .iter()
            .filter(|(r, _)| r.kind_name() == "started")
            .count();
        self.writes.lock().unwrap().push(format!("claim {started}"));
        let mut all = self.records.lock().unwrap();
        let mut claims = Vec::new();
        for (r, rerun) in records {
            let claim = match Logged::find(&all, &r.run, &r.call) {
                Some(found) if found.result.is_some() => Claim::Completed(found),
                Some(_) if !rerun && r.kind_name() == "started" => Claim::Running,
                _ => Claim::Won,
            };
            if claim == Claim::Won {
                all.push(r.clone());
            }
            claims.push(claim);
        }
        Ok(claims)
    }
}

#[test]
fn a_batchs_started_records_are_claimed_together_and_completed_one_by_one() {
    let runs = Arc::new(AtomicUsize::new(0));
    let reg = Registry::default();
    let r = runs.clone();
    reg.register(tool("charge", ToolFlags::default(), move |call| {
        r.fetch_add(1, Ordering::SeqCst);
        call.complete(ContentKind::Text, "charged").unwrap();
    }))
    .unwrap();
    let journal = Arc::new(Logged::default());
    set_journal(
        &reg,
        Some(Attached {
            journal: journal.clone(),
            mode: Mode::Record,
        }),
    );
    let calls: Vec<(String, Value)> = (0..5)
        .map(|i| (format!("c{i}"), json!({"amount": i})))
        .collect();
    let calls: Vec<(&str, &str, Value)> = calls
        .iter()
        .map(|(id, a)| (id.as_str(), "charge", a.clone()))
        .collect();
    let results = run(&reg, "batch", &calls);
    assert!(results.iter().all(|r| r.outcome == Outcome::Ok));
    assert_eq!(runs.load(Ordering::SeqCst), 5);
    let writes = journal.writes.lock().unwrap().clone();
    assert_eq!(
        writes[0], "claim 5",
        "the batch's starts, in one claim: {writes:?}"
    );
    assert_eq!(
        writes.iter().filter(|w| w.starts_with("claim")).count(),
        1,
        "{writes:?}"
    );
    assert_eq!(
        writes.iter().filter(|w| *w == "record completed").count(),
        5,
        "{writes:?}"
    );

    // The same batch again: answered from the journal, nothing claimed.
    journal.writes.lock().unwrap().clear();
    run(&reg, "batch", &calls);
    assert_eq!(runs.load(Ordering::SeqCst), 5);
    assert!(journal.writes.lock().unwrap().is_empty());

    // A lone call claims its key alone, just before it runs, without
    // looking it up first (the claim answers what a look would).
    journal.lookups.store(0, Ordering::SeqCst);
    run(&reg, "batch", &[("c9", "charge", json!({"amount": 9}))]);
    assert_eq!(
        *journal.writes.lock().unwrap(),
        ["claim 1", "record completed"]
    );
    assert_eq!(journal.lookups.load(Ordering::SeqCst), 0);
    assert_eq!(runs.load(Ordering::SeqCst), 6);

    // Sent again, the claim finds it completed: replayed, not run.
    let again = run(&reg, "batch", &[("c9", "charge", json!({"amount": 9}))]);
    assert_eq!(runs.load(Ordering::SeqCst), 6);
    assert_eq!(again[0].outcome, Outcome::Ok);
    assert_eq!(again[0].content, "charged");
}

#[test]
fn a_call_waiting_for_approval_is_not_claimed_with_its_batch() {
    let reg = Registry::default();
    reg.register(tool("charge", ToolFlags::default(), |call| {
        call.complete(ContentKind::Text, "charged").unwrap();
    }))
    .unwrap();
    reg.register(tool(
        "wire",
        ToolFlags(ToolFlags::REQUIRES_APPROVAL),
        |call| {
            call.complete(ContentKind::Text, "wired").unwrap();
        },
    ))
    .unwrap();
    let journal = Arc::new(Logged::default());
    set_journal(
        &reg,
        Some(Attached {
            journal: journal.clone(),
            mode: Mode::Record,
        }),
    );
    // No approver: the approval call is denied and must leave no record.
    let r = run(
        &reg,
        "appr",
        &[("a", "charge", json!({})), ("b", "wire", json!({}))],
    );
    assert_eq!(r[1].outcome, Outcome::Denied);
    assert_eq!(journal.writes.lock().unwrap()[0], "claim 1");
    assert!(
        journal.lookup("appr", "b").unwrap().is_none(),
        "a denied call left a record"
    );
}

#[cfg(feature = "journal-sqlite")]
mod sqlite {
    use super::*;
    use capstan_journal::SqliteJournal;
    use std::process::{Child, Command, Stdio};

    const CHILD: &str = "CAPSTAN_CLAIMS_CHILD";

    /// Each child process: `charge` appends a line to `runs` and, for
    /// amount 7, waits until `release` exists (or, in the crash test,
    /// forever); `fetch` is idempotent. Runs `calls` (JSON) under `run`
    /// and writes the results' `outcome content` lines to `out`.
    fn child(spec: &str) {
        let spec: Value = serde_json::from_str(spec).unwrap();
        let s = |k: &str| spec[k].as_str().unwrap().to_string();
        let (db, runs, release, out) = (s("db"), s("runs"), s("release"), s("out"));
        let reg = Registry::default();
        for (name, flags) in [
            ("charge", ToolFlags::default()),
            ("fetch", ToolFlags(ToolFlags::IDEMPOTENT)),
        ] {
            let (runs, release) = (runs.clone(), release.clone());
            reg.register(tool(name, flags, move |call| {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(&runs)
                    .unwrap();
                // One write per line: an O_APPEND write is whole, while
                // `writeln!` may write the id and the newline apart and let
                // two tools' lines interleave.
                f.write_all(format!("{}\n", call.id()).as_bytes()).unwrap();
                if call.arguments()["amount"] == 7 {
                    while !std::path::Path::new(&release).exists() {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                }
                call.complete(ContentKind::Text, &format!("{} done", call.id()))
                    .unwrap();
            }))
            .unwrap();
        }
        let j = SqliteJournal::open(&db, false).unwrap();
        set_journal(
            &reg,
            Some(Attached {
                journal: Arc::new(j),
                mode: Mode::Record,
            }),
        );
        let calls: Vec<(String, String, Value)> =
            serde_json::from_value(spec["calls"].clone()).unwrap();
        let calls: Vec<(&str, &str, Value)> = calls
            .iter()
            .map(|(i, n, a)| (i.as_str(), n.as_str(), a.clone()))
            .collect();
        let results = run(&reg, &s("run"), &calls);
        let text: String = results
            .iter()
            .map(|r| format!("{} {}\n", r.outcome.as_str(), r.content))
            .collect();
        std::fs::write(&out, text).unwrap();
    }

    fn spawn(test: &str, spec: Value) -> Child {
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", test, "--nocapture"])
            .env(CHILD, spec.to_string())
            .stdout(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// Creates the release file when dropped.
    struct Release(PathBuf);

    impl Drop for Release {
        fn drop(&mut self) {
            let _ = std::fs::write(&self.0, "");
        }
    }

    fn lines(path: &PathBuf) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }

    fn wait_for(mut ready: impl FnMut() -> bool, children: &mut [&mut Child]) {
        while !ready() {
            for c in children.iter_mut() {
                if let Some(status) = c.try_wait().unwrap() {
                    assert!(status.success(), "a child failed: {status}");
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    #[test]
    fn two_processes_sending_the_same_call_at_once_run_it_once() {
        const TEST: &str = "sqlite::two_processes_sending_the_same_call_at_once_run_it_once";
        if let Ok(spec) = std::env::var(CHILD) {
            return child(&spec);
        }
        let (db, runs, release) = (temp("same.db"), temp("same.runs"), temp("same.release"));
        let spec = |out: &PathBuf| {
            json!({"db": db, "runs": runs, "release": release, "out": out, "run": "conv",
                   "calls": [["pay", "charge", {"amount": 7}]]})
        };
        let (out_a, out_b) = (temp("same.a"), temp("same.b"));
        // Should this test fail, the children still end.
        let _release = Release(release.clone());
        let mut a = spawn(TEST, spec(&out_a));
        let mut b = spawn(TEST, spec(&out_b));
        // One of them runs the tool (it holds until released); the other
        // answers at once, without running it.
        wait_for(
            || {
                assert!(lines(&runs).len() < 2, "both processes ran the tool");
                out_a.exists() || out_b.exists()
            },
            &mut [&mut a, &mut b],
        );
        let (loser, winner_out) = if out_a.exists() {
            (&out_a, &out_b)
        } else {
            (&out_b, &out_a)
        };
        let said = lines(loser).join("\n");
        assert!(
            said.starts_with("tool_error In progress elsewhere:"),
            "{said}"
        );
        wait_for(|| lines(&runs).len() == 1, &mut [&mut a, &mut b]);
        std::fs::write(&release, "").unwrap();
        assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
        assert_eq!(lines(winner_out), ["ok pay done"]);
        assert_eq!(lines(&runs), ["pay"], "the tool ran once");
        // Sent again once completed: the first's result, from the journal.
        let out_c = temp("same.c");
        let mut c = spawn(TEST, spec(&out_c));
        assert!(c.wait().unwrap().success());
        assert_eq!(lines(&out_c), ["ok pay done"]);
        assert_eq!(lines(&runs).len(), 1);
    }

    #[test]
    fn a_crash_in_a_batch_claimed_together_resolves_by_each_tools_policy() {
        const TEST: &str =
            "sqlite::a_crash_in_a_batch_claimed_together_resolves_by_each_tools_policy";
        if let Ok(spec) = std::env::var(CHILD) {
            return child(&spec);
        }
        let (db, runs, release) = (temp("crash.db"), temp("crash.runs"), temp("crash.never"));
        let spec = |out: &PathBuf| {
            json!({"db": db, "runs": runs, "release": release, "out": out, "run": "crash",
                   "calls": [["c1", "charge", {"amount": 1}], ["c2", "fetch", {"amount": 2}],
                             ["c3", "charge", {"amount": 7}], ["c4", "fetch", {"amount": 7}]]})
        };
        let out = temp("crash.out");
        let mut first = spawn(TEST, spec(&out));
        // Killed once c1 and c2 completed and c3, c4 are in their tools.
        let completed = || {
            let j = SqliteJournal::open(&db, false).unwrap();
            ["c1", "c2"].iter().all(|c| {
                matches!(
                    j.lookup("crash", c),
                    Ok(Some(Found {
                        result: Some(_),
                        ..
                    }))
                )
            })
        };
        wait_for(|| lines(&runs).len() == 4 && completed(), &mut [&mut first]);
        first.kill().unwrap();
        first.wait().unwrap();

        // The re-run of c4 (amount 7) may finish this time.
        std::fs::write(&release, "").unwrap();
        let mut again = spawn(TEST, spec(&out));
        assert!(again.wait().unwrap().success());
        let said = lines(&out);
        assert_eq!(said[0], "ok c1 done", "replayed");
        assert_eq!(said[1], "ok c2 done", "replayed");
        assert!(
            said[2].starts_with("tool_error Outcome unknown:"),
            "{}",
            said[2]
        );
        assert_eq!(said[3], "ok c4 done", "the idempotent one ran again");
        let mut ran = lines(&runs);
        ran.sort();
        assert_eq!(
            ran,
            ["c1", "c2", "c3", "c4", "c4"],
            "only the idempotent unknown call ran again"
        );
    }
}
