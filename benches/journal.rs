//! What the journal adds per call (issue #47): one quick tool call per
//! batch through `execute`, without a journal and with each store, every
//! call a new key (a lookup, a `started` and a `completed` record).
//! Prints microseconds per call, for one call per `execute` and for
//! batches of `BATCH` calls (whose `started` records are claimed in one
//! transaction), each the median of several rounds. The SQLite rows need the `journal-sqlite` feature (`make
//! bench` passes it). Goal: <= 50 us per call with synchronous commits.

use std::sync::Arc;
use std::time::Instant;

use capstan::exec::journal::{Attached, Journal, Mode};
use capstan::{execute, CallRequest, ContentKind, ExecOptions, Registry, ToolDef, ToolFlags};
use serde_json::json;

fn registry() -> Registry {
    let reg = Registry::default();
    reg.register(ToolDef {
        name: "echo".into(),
        description: "echo".into(),
        parameters: json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        handler: Box::new(|call: capstan::Call| {
            call.complete(ContentKind::Text, "ok").unwrap();
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    })
    .unwrap();
    reg
}

/// Calls per batch in the batched rows.
const BATCH: usize = 10;

/// Rounds each row's calls are split into; a row prints the median round.
const ROUNDS: usize = 7;

/// Microseconds per call over `calls` calls (after 200 warm-up calls),
/// `batch` calls per `execute`: the median of `ROUNDS` rounds, so that a
/// moment when another process holds the machine (it is shared) moves
/// one round, not the figure.
fn per_call(journal: Option<Arc<dyn Journal>>, calls: usize, run: &str, batch: usize) -> f64 {
    let reg = registry();
    if let Some(journal) = journal {
        capstan::exec::set_journal(
            &reg,
            Some(Attached {
                journal,
                mode: Mode::Record,
            }),
        );
    }
    let opts = ExecOptions {
        run_id: Some(run.into()),
        ..ExecOptions::default()
    };
    let some = |from: usize| {
        let calls = (from..from + batch)
            .map(|i| CallRequest::new(format!("c{i}"), "echo", json!({"n": i})))
            .collect();
        execute(&reg, calls, &opts);
    };
    for i in (0..200).step_by(batch) {
        some(i);
    }
    let per_round = (calls / ROUNDS).div_ceil(batch) * batch;
    let mut rounds: Vec<f64> = (0..ROUNDS)
        .map(|round| {
            let from = 200 + round * per_round;
            let start = Instant::now();
            for i in (from..from + per_round).step_by(batch) {
                some(i);
            }
            start.elapsed().as_secs_f64() * 1e6 / per_round as f64
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[ROUNDS / 2]
}

fn main() {
    let dir = std::env::temp_dir().join(format!("capstan-journal-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let calls = 2000;
    for batch in [1, BATCH] {
        let what = if batch == 1 {
            "one call per execute".to_string()
        } else {
            format!("batches of {batch} calls")
        };
        println!("journal: {what}, {calls} calls, microseconds per call");
        let base = per_call(None, calls, "none", batch);
        println!("  no journal                          {base:8.1} us");
        let mut jsonl =
            capstan_journal::JsonlJournal::open(dir.join(format!("nosync{batch}.jsonl"))).unwrap();
        jsonl.set_sync(false);
        let t = per_call(Some(Arc::new(jsonl)), calls, "r", batch);
        println!(
            "  JSON Lines, no fsync                {t:8.1} us (+{:.1})",
            t - base
        );
        let jsonl =
            capstan_journal::JsonlJournal::open(dir.join(format!("sync{batch}.jsonl"))).unwrap();
        let t = per_call(Some(Arc::new(jsonl)), calls / 4, "r", batch);
        println!(
            "  JSON Lines, fsync per record        {t:8.1} us (+{:.1})",
            t - base
        );
        sqlite(&dir, calls, base, batch);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "journal-sqlite")]
fn sqlite(dir: &std::path::Path, calls: usize, base: f64, batch: usize) {
    for (name, full) in [
        ("NORMAL (WAL)", false),
        ("FULL (WAL, fsync per commit)", true),
    ] {
        let j = capstan_journal::SqliteJournal::open(dir.join(format!("{full}{batch}.db")), full)
            .unwrap();
        let n = if full { calls / 4 } else { calls };
        let t = per_call(Some(Arc::new(j)), n, "r", batch);
        println!(
            "  SQLite synchronous={name:<30} {t:8.1} us (+{:.1})",
            t - base
        );
    }
}

#[cfg(not(feature = "journal-sqlite"))]
fn sqlite(_: &std::path::Path, _: usize, _: f64, _: usize) {
    println!("  SQLite: built without the journal-sqlite feature");
}
