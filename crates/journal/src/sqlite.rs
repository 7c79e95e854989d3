//! A journal in an SQLite database: WAL mode, one transaction per record,
//! safe for several processes on one file (SQLite's own locking; a writer
//! waits up to `BUSY_MS` for another).

use std::path::Path;
use std::sync::Mutex;

use capstan_core::exec::journal::{Found, Journal, JournalError, Record, DEFAULT_MAX_RESULT_BYTES};
use rusqlite::{params, Connection, OptionalExtension};

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
        let conn = Connection::open(path.as_ref()).map_err(&e)?;
        conn.busy_timeout(std::time::Duration::from_millis(BUSY_MS))
            .map_err(&e)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(&e)?;
        conn.pragma_update(
            None,
            "synchronous",
            if full_sync { "FULL" } else { "NORMAL" },
        )
        .map_err(&e)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS capstan_calls (
                 run TEXT NOT NULL, call TEXT NOT NULL, kind TEXT NOT NULL,
                 record TEXT NOT NULL, PRIMARY KEY (run, call));
             CREATE TABLE IF NOT EXISTS capstan_tools (
                 run TEXT NOT NULL, call TEXT NOT NULL,
                 record TEXT NOT NULL, PRIMARY KEY (run, call));",
        )
        .map_err(&e)?;
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
        let text: Option<String> = conn
            .prepare_cached("SELECT record FROM capstan_calls WHERE run = ?1 AND call = ?2")
            .and_then(|mut s| s.query_row(params![run, call], |r| r.get(0)).optional())
            .map_err(err(&self.name))?;
        drop(conn);
        let Some(text) = text else { return Ok(None) };
        let record = Record::from_line(&text).map_err(|e| {
            JournalError(format!(
                "journal database {}: record of run \"{run}\" call \"{call}\": {e}",
                self.name
            ))
        })?;
        Ok(record.found())
    }

    fn record(&self, record: &Record) -> Result<(), JournalError> {
        let line = record.to_line();
        let conn = self
            .conn
            .lock()
            .map_err(|_| JournalError("journal connection poisoned".into()))?;
        let sql = match record.kind_name() {
            "tools" => {
                "INSERT OR REPLACE INTO capstan_tools (run, call, record) VALUES (?1, ?2, ?4)"
            }
            // A `started` never replaces a `completed` (another process's).
            _ => {
                "INSERT INTO capstan_calls (run, call, kind, record) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (run, call) DO UPDATE SET kind = excluded.kind, record = excluded.record
                 WHERE capstan_calls.kind <> 'completed' OR excluded.kind = 'completed'"
            }
        };
        conn.prepare_cached(sql)
            .and_then(|mut s| s.execute(params![record.run, record.call, record.kind_name(), line]))
            .map_err(err(&self.name))?;
        Ok(())
    }

    fn max_result_bytes(&self) -> usize {
        DEFAULT_MAX_RESULT_BYTES
    }
}
