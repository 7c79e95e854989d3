//! What the journal adds per call (issue #47): one quick tool call per
//! batch through `execute`, without a journal and with each store, every
//! call a new key (a lookup, a `started` and a `completed` record).
//! Prints microseconds per call. The SQLite rows need the `journal-sqlite`
//! feature (`make bench` passes it). Goal: <= 50 us per call with
//! synchronous commits.

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

/// Mean microseconds per call over `calls` calls (after 200 warm-up calls).
fn per_call(journal: Option<Arc<dyn Journal>>, calls: usize, run: &str) -> f64 {
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
    let one = |i: usize| {
        let call = CallRequest::new(format!("c{i}"), "echo", json!({"n": i}));
        execute(&reg, vec![call], &opts);
    };
    for i in 0..200 {
        one(i);
    }
    let start = Instant::now();
    for i in 200..200 + calls {
        one(i);
    }
    start.elapsed().as_secs_f64() * 1e6 / calls as f64
}

fn main() {
    let dir = std::env::temp_dir().join(format!("capstan-journal-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let calls = 2000;
    println!("journal: one call per execute, {calls} calls, microseconds per call");
    let base = per_call(None, calls, "none");
    println!("  no journal                          {base:8.1} us");
    let mut jsonl = capstan_journal::JsonlJournal::open(dir.join("nosync.jsonl")).unwrap();
    jsonl.set_sync(false);
    let t = per_call(Some(Arc::new(jsonl)), calls, "r");
    println!(
        "  JSON Lines, no fsync                {t:8.1} us (+{:.1})",
        t - base
    );
    let jsonl = capstan_journal::JsonlJournal::open(dir.join("sync.jsonl")).unwrap();
    let t = per_call(Some(Arc::new(jsonl)), calls / 4, "r");
    println!(
        "  JSON Lines, fsync per record        {t:8.1} us (+{:.1})",
        t - base
    );
    sqlite(&dir, calls, base);
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "journal-sqlite")]
fn sqlite(dir: &std::path::Path, calls: usize, base: f64) {
    for (name, full) in [
        ("NORMAL (WAL)", false),
        ("FULL (WAL, fsync per commit)", true),
    ] {
        let j = capstan_journal::SqliteJournal::open(dir.join(format!("{full}.db")), full).unwrap();
        let n = if full { calls / 4 } else { calls };
        let t = per_call(Some(Arc::new(j)), n, "r");
        println!(
            "  SQLite synchronous={name:<30} {t:8.1} us (+{:.1})",
            t - base
        );
    }
}

#[cfg(not(feature = "journal-sqlite"))]
fn sqlite(_: &std::path::Path, _: usize, _: f64) {
    println!("  SQLite: built without the journal-sqlite feature");
}
