//! Durable calls at the C ABI (issue #47): journals (a JSON Lines file, an
//! SQLite database, a host's own store through callbacks) and a registry's
//! use of one.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

use super::boundary::*;
use super::registry::registry_ref;
use super::types::*;
use crate::error::Error;
use crate::exec::journal::{Attached, Found, Journal, JournalError, Mode, Record};

/// A journal: where a registry records its calls and finds them again
/// (see `capstan_registry_set_journal`). Opened by a `capstan_journal_open_*`
/// function or `capstan_journal_new`, freed with `capstan_journal_free`;
/// a registry using it keeps what it needs alive, so the two may be freed
/// in any order. Thread-safe.
pub struct capstan_journal {
    _private: [u8; 0],
}

/// `capstan_registry_set_journal` flag: replay only. No tool runs at all;
/// a call missing from the journal (or whose outcome it left unknown)
/// fails with an error result naming it. Nothing is written.
pub const CAPSTAN_JOURNAL_REPLAY: u32 = 1;

/// `capstan_journal_open_sqlite` flag: fsync every commit (SQLite
/// `synchronous=FULL`). Without it (`NORMAL`) a record survives the process
/// ending at any point, but the last ones may be lost if the machine stops.
pub const CAPSTAN_JOURNAL_FULL_SYNC: u32 = 1;

/// Where a host's `lookup` callback writes what it found (see
/// `capstan_journal_answer_set`). Valid during that callback only.
pub struct capstan_journal_answer {
    _private: [u8; 0],
}

/// A journal kept by the host (its own database or durable engine). Every
/// record is one JSON object (the README's "Durable calls" gives the
/// shape; the same text a JSON Lines journal holds per line).
///
/// - `record(user_data, record_json, len)`: stores the record durably
///   before returning; a later `completed` record of a (run, call) key
///   replaces its `started`. Returns 0 on success; anything else fails the
///   call (a `started` that fails keeps the tool from running).
/// - `lookup(user_data, run_id, run_len, call_id, call_len, answer)`: if the
///   key has a record (`completed` if any, else `started`), hands its JSON
///   to `capstan_journal_answer_set(answer, ...)`; returns 0 (found or not),
///   anything else fails the call without running it.
///
/// Both run on the thread running the call (any thread, several at once),
/// must not call into this journal's registry, and are never called while
/// capstan holds a lock. `destroy(user_data)` runs exactly once: when the
/// journal and every registry using it are gone, or at once if
/// `capstan_journal_new` fails.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct capstan_journal_callbacks {
    /// `sizeof(capstan_journal_callbacks)`.
    pub struct_size: u32,
    pub record: capstan_journal_record_fn,
    pub lookup: capstan_journal_lookup_fn,
    pub user_data: *mut c_void,
    pub destroy: capstan_destroy_fn,
}

/// Stores one record of a host's journal (see `capstan_journal_callbacks`).
pub type capstan_journal_record_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, record_json: *const c_char, len: usize) -> i32,
>;

/// Finds the record of a call in a host's journal (see
/// `capstan_journal_callbacks`); the strings are not NUL-terminated.
pub type capstan_journal_lookup_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        run_id: *const c_char,
        run_len: usize,
        call_id: *const c_char,
        call_len: usize,
        answer: *mut capstan_journal_answer,
    ) -> i32,
>;

/// What a `capstan_journal` handle points at.
struct Handle(Arc<dyn Journal>);

fn journal_fail(e: JournalError) -> Fail {
    Fail::Core(Error::InvalidArgument(e.0))
}

unsafe fn hand_out(journal: Arc<dyn Journal>, out: *mut *mut capstan_journal) {
    *out = Box::into_raw(Box::new(Handle(journal))).cast();
}

/// Opens (creating it if absent) a JSON Lines journal at `path` (UTF-8,
/// `path_len` or `CAPSTAN_NTS`): record/replay fixtures a test checks in.
/// One process at a time. INVALID_ARGUMENT if the file cannot be opened or
/// holds a line that is not a record (the message names the line; the file
/// is left as it was). On success `*out` owns the journal. Any thread.
#[no_mangle]
pub unsafe extern "C" fn capstan_journal_open_jsonl(
    path: *const c_char,
    path_len: usize,
    out: *mut *mut capstan_journal,
) -> capstan_status {
    guard(|| {
        non_null(out, "out")?;
        let path = text(path, path_len, "path")?;
        let journal = ::capstan_journal::JsonlJournal::open(path).map_err(journal_fail)?;
        hand_out(Arc::new(journal), out);
        Ok(())
    })
}

/// Opens (creating it if absent) an SQLite journal at `path`: WAL mode, one
/// transaction per record, safe for several processes on one file.
/// `flags`: `CAPSTAN_JOURNAL_FULL_SYNC` or 0. UNSUPPORTED in a library
/// built without the `journal-sqlite` feature; INVALID_ARGUMENT if the
/// database cannot be opened. On success `*out` owns the journal.
#[no_mangle]
pub unsafe extern "C" fn capstan_journal_open_sqlite(
    path: *const c_char,
    path_len: usize,
    flags: u32,
    out: *mut *mut capstan_journal,
) -> capstan_status {
    guard(|| {
        non_null(out, "out")?;
        let path = text(path, path_len, "path")?;
        if flags & !CAPSTAN_JOURNAL_FULL_SYNC != 0 {
            return Err(Fail::BadArgument(format!(
                "unknown flag 0x{:x} passed to capstan_journal_open_sqlite (it takes CAPSTAN_JOURNAL_FULL_SYNC)",
                flags & !CAPSTAN_JOURNAL_FULL_SYNC
            )));
        }
        open_sqlite(path, flags & CAPSTAN_JOURNAL_FULL_SYNC != 0, out)
    })
}

#[cfg(feature = "journal-sqlite")]
unsafe fn open_sqlite(path: &str, full: bool, out: *mut *mut capstan_journal) -> Result<(), Fail> {
    let journal = ::capstan_journal::SqliteJournal::open(path, full).map_err(journal_fail)?;
    hand_out(Arc::new(journal), out);
    Ok(())
}

#[cfg(not(feature = "journal-sqlite"))]
unsafe fn open_sqlite(_: &str, _: bool, _: *mut *mut capstan_journal) -> Result<(), Fail> {
    Err(Fail::Core(Error::Unsupported(
        "this libcapstan was built without the SQLite journal (cargo feature `journal-sqlite`); use capstan_journal_open_jsonl or capstan_journal_new".into(),
    )))
}

/// A journal kept by the host through `cbs` (see
/// `capstan_journal_callbacks`). NULL_PARAMETER if `cbs`, `out` or a
/// callback is NULL (then `cbs->destroy` runs at once, if `cbs` is not
/// NULL). On success `*out` owns the journal. Any thread.
#[no_mangle]
pub unsafe extern "C" fn capstan_journal_new(
    cbs: *const capstan_journal_callbacks,
    out: *mut *mut capstan_journal,
) -> capstan_status {
    guard(|| {
        non_null(cbs, "cbs")?;
        let size = std::mem::offset_of!(capstan_journal_callbacks, destroy)
            + std::mem::size_of::<capstan_destroy_fn>();
        let Some(c) = read_options(cbs, size, "cbs")? else {
            return Err(Fail::Null("cbs"));
        };
        let owned = Arc::new(OwnedHostFn::new(
            (c.record, c.lookup),
            c.user_data,
            c.destroy,
        ));
        if out.is_null() {
            return Err(Fail::Null("out"));
        }
        let (Some(record), Some(lookup)) = (c.record, c.lookup) else {
            return Err(Fail::Null("cbs->record and cbs->lookup"));
        };
        hand_out(
            Arc::new(HostJournal {
                record,
                lookup,
                owned,
            }),
            out,
        );
        Ok(())
    })
}

type RecordFn = unsafe extern "C" fn(*mut c_void, *const c_char, usize) -> i32;
type LookupFn = unsafe extern "C" fn(
    *mut c_void,
    *const c_char,
    usize,
    *const c_char,
    usize,
    *mut capstan_journal_answer,
) -> i32;

#[allow(clippy::type_complexity)]
struct HostJournal {
    record: RecordFn,
    lookup: LookupFn,
    /// Keeps `user_data` and runs `destroy` when the last user drops.
    owned: Arc<OwnedHostFn<(Option<RecordFn>, Option<LookupFn>)>>,
}

/// What `capstan_journal_answer_set` fills in.
struct Answer(Mutex<Option<Result<Record, JournalError>>>);

impl Journal for HostJournal {
    fn lookup(&self, run: &str, call: &str) -> Result<Option<Found>, JournalError> {
        let answer = Answer(Mutex::new(None));
        let code = unsafe {
            (self.lookup)(
                self.owned.user_data,
                run.as_ptr().cast(),
                run.len(),
                call.as_ptr().cast(),
                call.len(),
                (&answer as *const Answer).cast_mut().cast(),
            )
        };
        if code != 0 {
            return Err(JournalError(format!("the host's lookup returned {code}")));
        }
        let got = answer.0.into_inner().ok().flatten();
        match got {
            None => Ok(None),
            Some(Err(e)) => Err(JournalError(format!("the host's lookup answered: {e}"))),
            Some(Ok(record)) if record.run != run || record.call != call => Err(JournalError(
                format!(
                    "the host's lookup of run \"{run}\" call \"{call}\" answered the record of run \"{}\" call \"{}\"",
                    record.run, record.call
                ),
            )),
            Some(Ok(record)) => Ok(record.found()),
        }
    }

    fn record(&self, record: &Record) -> Result<(), JournalError> {
        let line = record.to_line();
        let code = unsafe { (self.record)(self.owned.user_data, line.as_ptr().cast(), line.len()) };
        if code != 0 {
            return Err(JournalError(format!("the host's record returned {code}")));
        }
        Ok(())
    }
}

/// From inside a `lookup` callback: the record found (its JSON, `len` or
/// `CAPSTAN_NTS`; copied). INVALID_ARGUMENT if it is not a record (the
/// lookup then fails the call, saying why). The callback's thread only.
#[no_mangle]
pub unsafe extern "C" fn capstan_journal_answer_set(
    answer: *mut capstan_journal_answer,
    record_json: *const c_char,
    len: usize,
) -> capstan_status {
    guard(|| {
        non_null(answer, "answer")?;
        let json = text(record_json, len, "record_json")?;
        let answer = &*answer.cast::<Answer>();
        let parsed = Record::from_line(json);
        let fail = parsed.as_ref().err().cloned();
        if let Ok(mut slot) = answer.0.lock() {
            *slot = Some(parsed);
        }
        match fail {
            Some(e) => Err(Fail::BadArgument(e.0)),
            None => Ok(()),
        }
    })
}

/// Frees a journal. NULL is a no-op. Registries using it keep it until
/// they stop (`capstan_registry_set_journal` with NULL, or their free).
#[no_mangle]
pub unsafe extern "C" fn capstan_journal_free(journal: *mut capstan_journal) {
    if journal.is_null() {
        return;
    }
    let _ = guard(|| {
        drop(Box::from_raw(journal.cast::<Handle>()));
        Ok(())
    });
}

/// Makes `reg` use `journal` (NULL: none) for every batch run with a run id
/// (`capstan_exec_options.run_id`), from the next batch on: a call whose
/// (run id, call id) has a completed record is answered from it without
/// running its tool (outcome and content as recorded; a
/// `CAPSTAN_EVENT_REPLAYED` event; `"replayed"` in the stats); one whose
/// tool, schema or validated arguments changed fails naming what changed;
/// one that started in an earlier process and never completed is run again
/// if its tool is `CAPSTAN_TOOL_IDEMPOTENT`, else fails with content
/// beginning "Outcome unknown:"; any other call is recorded `started`
/// before its callback runs and `completed` before its result is handed
/// over. `flags`: `CAPSTAN_JOURNAL_REPLAY` or 0. Any thread.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_set_journal(
    reg: *mut capstan_registry,
    journal: *const capstan_journal,
    flags: u32,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        if flags & !CAPSTAN_JOURNAL_REPLAY != 0 {
            return Err(Fail::BadArgument(format!(
                "unknown flag 0x{:x} passed to capstan_registry_set_journal (it takes CAPSTAN_JOURNAL_REPLAY)",
                flags & !CAPSTAN_JOURNAL_REPLAY
            )));
        }
        let attached = (!journal.is_null()).then(|| Attached {
            journal: (*journal.cast::<Handle>()).0.clone(),
            mode: if flags & CAPSTAN_JOURNAL_REPLAY != 0 {
                Mode::Replay
            } else {
                Mode::Record
            },
        });
        crate::exec::set_journal(registry, attached);
        Ok(())
    })
}
