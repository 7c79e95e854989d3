//! A journal in a JSON Lines file: one record per line, appended. Opening
//! reads the whole file; a line that is not a record fails the open with
//! an error naming the file and the line, and the file is left as it was.
//! One process at a time (use SQLite for several).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use capstan_core::exec::journal::{
    Found, Journal, JournalError, Record, RecordKind, DEFAULT_MAX_RESULT_BYTES,
};

/// A line longer than this (the result bound plus room for the key and
/// the hashes) is refused as a bad record rather than parsed.
pub fn max_line_bytes(max_result_bytes: usize) -> usize {
    max_result_bytes.saturating_add(64 * 1024)
}

pub struct JsonlJournal {
    path: PathBuf,
    file: Mutex<File>,
    /// (run, call) -> what a lookup answers; a `completed` is never
    /// replaced by a `started`.
    index: Mutex<HashMap<(String, String), Found>>,
    max_result_bytes: usize,
    sync: bool,
}

/// Reads every record of a JSON Lines journal. An empty line is skipped;
/// anything else that is not a record is an error naming its line (from 1).
pub fn read_records(bytes: &[u8], max_line: usize) -> Result<Vec<Record>, JournalError> {
    let mut records = Vec::new();
    let ends_complete = bytes.is_empty() || bytes.ends_with(b"\n");
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let count = lines.len();
    for (i, line) in lines.into_iter().enumerate() {
        let number = i + 1;
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let last = i + 1 == count;
        let fail = |why: String| {
            let cut = if last && !ends_complete {
                " (the last line has no newline: the file looks truncated)"
            } else {
                ""
            };
            JournalError(format!("record at line {number}{cut}: {why}"))
        };
        if line.len() > max_line {
            return Err(fail(format!(
                "{} bytes, past the bound of {max_line}",
                line.len()
            )));
        }
        let text = std::str::from_utf8(line).map_err(|e| fail(format!("not UTF-8: {e}")))?;
        records.push(Record::from_line(text).map_err(|e| fail(e.0))?);
    }
    Ok(records)
}

impl JsonlJournal {
    /// Opens (creating it if absent) the journal at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<JsonlJournal, JournalError> {
        let path = path.as_ref().to_path_buf();
        let name = path.display().to_string();
        let io = |e: std::io::Error| JournalError(format!("journal file {name}: {e}"));
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(io)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        let records = read_records(&bytes, max_line_bytes(DEFAULT_MAX_RESULT_BYTES))
            .map_err(|e| JournalError(format!("journal file {name}: {e}")))?;
        let mut index = HashMap::new();
        for record in &records {
            insert(&mut index, record);
        }
        Ok(JsonlJournal {
            path,
            file: Mutex::new(file),
            index: Mutex::new(index),
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            sync: true,
        })
    }

    /// Whether each record is flushed to disk (`fsync`) before `record`
    /// returns (default true). Without it a record survives the process
    /// ending but not the machine's.
    pub fn set_sync(&mut self, sync: bool) {
        self.sync = sync;
    }
}

fn insert(index: &mut HashMap<(String, String), Found>, record: &Record) {
    let Some(found) = record.found() else { return };
    let key = (record.run.clone(), record.call.clone());
    if matches!(record.kind, RecordKind::Started(_))
        && index.get(&key).is_some_and(|f| f.result.is_some())
    {
        return;
    }
    index.insert(key, found);
}

impl Journal for JsonlJournal {
    fn lookup(&self, run: &str, call: &str) -> Result<Option<Found>, JournalError> {
        let index = self
            .index
            .lock()
            .map_err(|_| JournalError("journal index poisoned".into()))?;
        Ok(index.get(&(run.to_string(), call.to_string())).cloned())
    }

    fn record(&self, record: &Record) -> Result<(), JournalError> {
        let mut line = record.to_line();
        line.push('\n');
        {
            let mut file = self
                .file
                .lock()
                .map_err(|_| JournalError("journal file lock poisoned".into()))?;
            let io = |e: std::io::Error| {
                JournalError(format!("journal file {}: {e}", self.path.display()))
            };
            // One write per record: a process that dies leaves whole lines.
            file.write_all(line.as_bytes()).map_err(io)?;
            if self.sync {
                file.sync_data().map_err(io)?;
            }
        }
        if let Ok(mut index) = self.index.lock() {
            insert(&mut index, record);
        }
        Ok(())
    }

    fn max_result_bytes(&self) -> usize {
        self.max_result_bytes
    }
}
