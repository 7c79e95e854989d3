//! A journal in an SQLite database: WAL mode, one transaction per record
//! (and one for all the `started` records of a batch, `claim`), safe for
//! several processes on one file (SQLite's own locking; a writer waits up
//! to `BUSY_MS` for another). A `started` record claims its key: of two
//! processes starting the same call at once, one writes it and runs the
//! tool, the other is told the call is running or completed elsewhere.

use std::path::Path;
use std::sync::Mutex;

use crate::owner;
use capstan_core::exec::journal::{
    Claim, Found, Journal, JournalError, Record, RecordKind, DEFAULT_MAX_RESULT_BYTES,
};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

/// How long a write waits for another process's transaction.
pub const BUSY_MS: u64 = 10_000;

pub struct SqliteJournal {
    conn: Mutex<Connection>,
    name: String,
}

fn err(name: &str) -> impl Fn(rusqlite::Error) -> JournalError + '_ {
    move |e| JournalError(format!("journal database {name}: {e}"))
}

impl SqliteJournal {
    /// Opens (creating it if absent) the journal database at `path`.
    /// `full_sync`: each commit is fsynced (SQLite `synchronous=FULL`);
    /// otherwise (`NORMAL`, WAL's usual) a commit survives the process
    /// ending at any point but the last ones may be lost with the machine.
    pub fn open(path: impl AsRef<Path>, full_sync: bool) -> Result<SqliteJournal, JournalError> {
        let name = path.as_ref().display().to_string();
        let label = name.clone();
        let e = err(&label);
        let mut conn = Connection::open(path.as_ref()).map_err(&e)?;
        conn.busy_timeout(std::time::Duration::from_millis(BUSY_MS))
            .map_err(&e)?;
        // Turning a new file to WAL takes its lock without SQLite's busy
        // handler: of processes opening one new file at once, all but one
        // are told "database is locked" at once. They wait here instead, up
        // to the same `BUSY_MS` a write waits.
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(BUSY_MS);
        while let Err(x) = conn.pragma_update(None, "journal_mode", "WAL") {
            let busy = matches!(
                x.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            );
            if !busy || std::time::Instant::now() >= deadline {
                return Err(e(x));
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        conn.pragma_update(
            None,
            "synchronous",
            if full_sync { "FULL" } else { "NORMAL" },
        )
        .map_err(&e)?;
        // The tables and the migration in one write transaction: two
        // processes opening an old file at once add the column once.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&e)?;
        tx.execute_batch(
            // WITHOUT ROWID: the rows live in the key's own B-tree, so a
            // record is one tree's pages in the WAL, not a table's and an
            // index's. The claiming process (`owner`) sits in the call's row:
            // a claim writes one row.
            "CREATE TABLE IF NOT EXISTS capstan_calls (
                 run TEXT NOT NULL, call TEXT NOT NULL, kind TEXT NOT NULL,
                 record TEXT NOT NULL, owner TEXT, PRIMARY KEY (run, call)) WITHOUT ROWID;
             CREATE TABLE IF NOT EXISTS capstan_tools (
                 run TEXT NOT NULL, call TEXT NOT NULL,
                 record TEXT NOT NULL, PRIMARY KEY (run, call)) WITHOUT ROWID;",
        )
        .map_err(&e)?;
        // A file made before calls carried their owner gains the column (its
        // started records then have no owner: after a crash they follow the
        // tool's policy, as before).
        let has_owner = tx
            .prepare("SELECT 1 FROM pragma_table_info('capstan_calls') WHERE name = 'owner'")
            .and_then(|mut s| s.exists([]))
            .map_err(&e)?;
        if !has_owner {
            tx.execute_batch("ALTER TABLE capstan_calls ADD COLUMN owner TEXT")
                .map_err(&e)?;
        }
        tx.commit().map_err(&e)?;
        Ok(SqliteJournal {
            conn: Mutex::new(conn),
            name,
        })
    }
}

impl Journal for SqliteJournal {
    fn lookup(&self, run: &str, call: &str) -> Result<Option<Found>, JournalError> {
        let conn = self
            .conn
            .lock()
            .map_err(|_| JournalError("journal connection poisoned".into()))?;
        let row: Option<(String, String)> = conn
            .prepare_cached("SELECT kind, record FROM capstan_calls WHERE run = ?1 AND call = ?2")
            .and_then(|mut s| {
                s.query_row(params![run, call], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .map_err(err(&self.name))?;
        let Some((kind, text)) = row else {
            return Ok(None);
        };
        let elsewhere =
            kind == "started" && started_by_running(&conn, run, call).map_err(err(&self.name))?;
        drop(conn);
        let record = Record::from_line(&text).map_err(|e| {
            JournalError(format!(
                "journal database {}: record of run \"{run}\" call \"{call}\": {e}",
                self.name
            ))
        })?;
        Ok(record.found().map(|f| Found { elsewhere, ..f }))
    }

    fn record(&self, record: &Record) -> Result<(), JournalError> {
        let conn = self
            .conn
            .lock()
            .map_err(|_| JournalError("journal connection poisoned".into()))?;
        write(&conn, record, None).map_err(err(&self.name))
    }

    fn claim(&self, records: &[(Record, bool)]) -> Result<Vec<Claim>, JournalError> {
        let mut conn = self
            .conn
            .lock()
            .map_err(|_| JournalError("journal connection poisoned".into()))?;
        let e = err(&self.name);
        // IMMEDIATE: the write lock from the first read, so no other
        // process writes a key between this one's look and its write.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&e)?;
        let mut claims = Vec::with_capacity(records.len());
        for (record, rerun) in records {
            if !matches!(record.kind, RecordKind::Started(_)) {
                write(&tx, record, None).map_err(&e)?;
                claims.push(Claim::Won);
                continue;
            }
            let now: Option<(String, String)> = tx
                .prepare_cached(
                    "SELECT kind, record FROM capstan_calls WHERE run = ?1 AND call = ?2",
                )
                .and_then(|mut s| {
                    s.query_row(params![record.run, record.call], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                    .optional()
                })
                .map_err(&e)?;
            let claim = match now {
                None => Claim::Won,
                Some((kind, _)) if kind == "started" && *rerun => {
                    if started_by_running(&tx, &record.run, &record.call).map_err(&e)? {
                        Claim::Running
                    } else {
                        Claim::Won
                    }
                }
                Some((kind, text)) if kind == "completed" => {
                    let found = Record::from_line(&text).ok().and_then(|r| r.found());
                    match found {
                        Some(found) => Claim::Completed(found),
                        None => {
                            return Err(JournalError(format!(
                                "journal database {}: the completed record of run \"{}\" call \"{}\" is not a record",
                                self.name, record.run, record.call
                            )))
                        }
                    }
                }
                Some(_) => Claim::Running,
            };
            if claim == Claim::Won {
                write(&tx, record, owner::this_process().as_deref()).map_err(&e)?;
            }
            claims.push(claim);
        }
        tx.commit().map_err(&e)?;
        Ok(claims)
    }

    fn max_result_bytes(&self) -> usize {
        DEFAULT_MAX_RESULT_BYTES
    }
}

/// Writes one record on `conn` (a connection or a transaction); `owner`,
/// the process claiming a `started` record (a `completed` clears it).
fn write(conn: &Connection, record: &Record, owner: Option<&str>) -> Result<(), rusqlite::Error> {
    let line = record.to_line();
    if record.kind_name() == "tools" {
        conn.prepare_cached(
            "INSERT OR REPLACE INTO capstan_tools (run, call, record) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![record.run, record.call, line])?;
        return Ok(());
    }
    // A `started` never replaces a `completed` (another process's).
    conn.prepare_cached(
        "INSERT INTO capstan_calls (run, call, kind, record, owner) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (run, call) DO UPDATE SET kind = excluded.kind, record = excluded.record,
         owner = excluded.owner
         WHERE capstan_calls.kind <> 'completed' OR excluded.kind = 'completed'",
    )?
    .execute(params![
        record.run,
        record.call,
        record.kind_name(),
        line,
        owner
    ])?;
    Ok(())
}

/// Whether the `started` record of (run, call) was claimed by a process
/// that is still running (see `owner`).
fn started_by_running(conn: &Connection, run: &str, call: &str) -> Result<bool, rusqlite::Error> {
    let owner: Option<String> = conn
        .prepare_cached("SELECT owner FROM capstan_calls WHERE run = ?1 AND call = ?2")?
        .query_row(params![run, call], |r| r.get::<_, Option<String>>(0))
        .optional()?
        .flatten();
    Ok(owner.is_some_and(|o| owner::is_running(&o)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_core::exec::journal::Fingerprint;

    /// Processes starting together open one new file at once: each open
    /// waits for the others' setup instead of failing with "database is
    /// locked" (threads with their own connections take the same locks).
    #[test]
    fn many_opening_one_new_file_at_once_all_open() {
        let dir = std::env::temp_dir().join(format!("capstan-sqlite-race-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for round in 0..40 {
            let path = dir.join(format!("race-{round}.db"));
            let gate = std::sync::Arc::new(std::sync::Barrier::new(6));
            let opened: Vec<_> = (0..6)
                .map(|_| {
                    let (path, gate) = (path.clone(), gate.clone());
                    std::thread::spawn(move || {
                        gate.wait();
                        SqliteJournal::open(&path, false).map(|_| ())
                    })
                })
                .collect();
            for t in opened {
                if let Err(e) = t.join().unwrap() {
                    panic!("round {round}: {}", e.0);
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A file made before calls carried their owner (a rowid table, no
    /// `owner` column) opens, gains the column, and claims and answers as a
    /// new one does: the first claim wins, a second one in this (running)
    /// process reads as running elsewhere.
    #[test]
    fn a_file_without_the_owner_column_gains_it_and_claims_work() {
        let dir = std::env::temp_dir().join(format!("capstan-sqlite-old-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("old.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch(
                "CREATE TABLE capstan_calls (run TEXT NOT NULL, call TEXT NOT NULL, kind TEXT NOT NULL,
                     record TEXT NOT NULL, PRIMARY KEY (run, call));
                 CREATE TABLE capstan_tools (run TEXT NOT NULL, call TEXT NOT NULL,
                     record TEXT NOT NULL, PRIMARY KEY (run, call));",
            )
            .unwrap();
        let journal = SqliteJournal::open(&path, false).unwrap();
        let print = Fingerprint::new("t", &serde_json::json!({}), &serde_json::json!({}));
        let started = Record {
            run: "r".into(),
            call: "c".into(),
            kind: RecordKind::Started(print),
        };
        let first = journal.claim(&[(started.clone(), true)]).unwrap();
        assert_eq!(first, vec![Claim::Won]);
        let again = journal.claim(&[(started, true)]).unwrap();
        assert_eq!(
            again,
            vec![Claim::Running],
            "this process claimed it and runs"
        );
        let found = journal.lookup("r", "c").unwrap().unwrap();
        assert!(found.elsewhere && found.result.is_none(), "{found:?}");
        drop(journal);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
