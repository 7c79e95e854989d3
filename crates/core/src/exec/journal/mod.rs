//! Durable calls (issue #47): the journal the executor consults for every
//! call of a registry that has one and of a batch that names a run.
//!
//! The key of a call is the host's run id (a conversation, a workflow) plus
//! the provider's call id. Beside it a record keeps a fingerprint of what
//! ran: the tool's name, a hash of its schema and a hash of the validated
//! arguments, so a replay whose tool, schema or arguments changed fails that
//! call naming what changed instead of returning a stale result.
//!
//! Two kinds of call record: `started` (written before the tool's callback
//! runs) and `completed` (the result as the model read it, outcome kept).
//! A third, `tools`, keeps each batch's tool list (names and schema hashes).
//! The stores (JSON Lines, SQLite, a host's callbacks) live outside the
//! core (crates/journal, the C ABI): they only store and find these records.

mod fingerprint;
mod record;

use std::sync::Arc;

pub use fingerprint::{canonical_json, hash_json, Fingerprint};
pub use record::{Found, Record, RecordKind};

/// A completed record's result is refused past this many bytes of JSON
/// (the default of `Journal::max_result_bytes`): an engine's payload limit
/// is a few MB at most, and a refused result is an error, never cut.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 1 << 20;

/// The size of `result` as a completed record holds it (bytes of JSON),
/// what `Journal::max_result_bytes` bounds.
pub fn result_size(result: &crate::call::ToolResult) -> usize {
    crate::text::json_len(&record::result_json(result))
}

/// Why a store could not read or write a record. The text names the store
/// and, for a bad record, which one (e.g. its line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JournalError(pub String);

/// Where records are kept. Implementations must be safe to call from any
/// thread at once; each `record` must be durable when it returns.
pub trait Journal: Send + Sync {
    /// The record of call `call` of run `run`: `completed` if there is one,
    /// else `started`, else `None`.
    fn lookup(&self, run: &str, call: &str) -> Result<Option<Found>, JournalError>;
    /// Stores one record (a later `completed` of a key wins over its `started`).
    fn record(&self, record: &Record) -> Result<(), JournalError>;
    /// The bound on a result's JSON, in bytes.
    fn max_result_bytes(&self) -> usize {
        DEFAULT_MAX_RESULT_BYTES
    }
    /// Stores `started` records as claims on their keys, all at once (a
    /// batch's calls: a store with transactions commits them in one), and
    /// answers per record whether this process may run the call. A record
    /// with `rerun` false claims a key the caller found empty: if another
    /// process wrote the key meanwhile, the claim is lost (`Claim::Completed`
    /// or `Claim::Running`) and nothing is written for it. With `rerun`
    /// true (an idempotent tool whose earlier start never completed) it is
    /// written over a `started`, never over a `completed`. `tools` records
    /// are stored as they are (`Claim::Won`). The default looks each key
    /// up and stores the record with `record` where it may: right for a
    /// store one process uses (between its look and its write another
    /// process could write the key).
    fn claim(&self, records: &[(Record, bool)]) -> Result<Vec<Claim>, JournalError> {
        records
            .iter()
            .map(|(record, rerun)| {
                if matches!(record.kind, RecordKind::Started(_)) {
                    match self.lookup(&record.run, &record.call)? {
                        Some(found) if found.result.is_some() => {
                            return Ok(Claim::Completed(found))
                        }
                        Some(_) if !rerun => return Ok(Claim::Running),
                        _ => {}
                    }
                }
                self.record(record).map(|()| Claim::Won)
            })
            .collect()
    }
}

/// What `Journal::claim` answered for one `started` record.
#[derive(Clone, Debug, PartialEq)]
pub enum Claim {
    /// Written: this process runs the call.
    Won,
    /// Another process completed the call first: its result.
    Completed(Found),
    /// Another process started the call first and has not completed it.
    Running,
}

/// What the executor does with a call missing from the journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Runs it and records it (`started`, then `completed`).
    #[default]
    Record,
    /// Runs no tool at all: a call missing from the recording fails. For
    /// tests that run an agent offline from a recorded session.
    Replay,
}

/// A journal as a registry holds it.
#[derive(Clone)]
pub struct Attached {
    pub journal: Arc<dyn Journal>,
    pub mode: Mode,
}

/// A registry's journal and its tool list as last hashed, in the executor's
/// state of the registry.
#[derive(Default)]
pub(crate) struct Slot {
    pub(crate) attached: std::sync::RwLock<Option<Attached>>,
    /// The tool list of the registry generation it was hashed at.
    pub(crate) tools: std::sync::Mutex<Option<(u64, ToolList)>>,
    /// The run and registry generation whose tool list was recorded last:
    /// a batch of the same run over the same tools records none (one
    /// transaction less per turn; the list in force is the latest before).
    pub(crate) tools_recorded: std::sync::Mutex<Option<(Arc<str>, u64)>>,
}

/// Tools with their schema hashes, sorted by name.
pub type ToolList = Arc<Vec<(String, String)>>;

impl Slot {
    pub(crate) fn get(&self) -> Option<Attached> {
        self.attached.read().ok()?.clone()
    }
}
