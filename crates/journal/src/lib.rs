//! Stores for capstan's journal (`capstan_core::exec::journal::Journal`):
//! a JSON Lines file (record/replay fixtures a test checks in) and, with the
//! `sqlite` feature, an SQLite database (WAL, one transaction per record,
//! several processes on one file). Kept out of the core so that SQLite
//! never enters it.

pub mod jsonl;
#[cfg(feature = "sqlite")]
mod owner;
#[cfg(feature = "sqlite")]
pub mod sqlite;

pub use capstan_core::exec::journal::{
    Attached, Claim, Found, Journal, JournalError, Mode, Record, RecordKind,
};
pub use jsonl::JsonlJournal;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteJournal;
