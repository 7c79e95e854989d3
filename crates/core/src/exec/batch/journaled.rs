//! A batch's calls and the registry's journal (`crate::exec::journal`): a
//! call with a completed record is answered from it without running; one
//! whose record changed or whose outcome is unknown fails naming why; the
//! rest are recorded `started` just before their callback runs and
//! `completed` as their result is handed over, before the host sees it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::run::Ready;
use super::BatchInner;
use crate::call::{Outcome, ToolResult};
use crate::exec::journal::{
    hash_json, Attached, Fingerprint, Found, Mode, Record, RecordKind, Slot,
};
use crate::observe::{Event, EventKind};
use crate::registry::{Registry, Tool};

/// The journal of one batch: the registry's, under the batch's run id.
pub(crate) struct BatchJournal {
    attached: Attached,
    run: Arc<str>,
    /// Per call: its fingerprint, once the journal let it run.
    prints: Vec<OnceLock<Fingerprint>>,
    /// Per call: its `started` record was written.
    started: Vec<AtomicBool>,
    /// Schema hashes of the batch's tools (name, hash): one hash per tool.
    schemas: Arc<Vec<(String, String)>>,
    hashed_late: Mutex<Vec<(String, String)>>,
}

impl BatchJournal {
    /// The journal of a batch of `calls` calls run under `run`, if the
    /// registry has one; records the registry's tool list under the
    /// batch's first call id (`first`) when recording.
    pub(crate) fn new(
        registry: &Registry,
        slot: &Slot,
        run: Option<&Arc<str>>,
        first: Option<&str>,
        calls: usize,
    ) -> Option<BatchJournal> {
        let run = run?.clone();
        let attached = slot.get()?;
        let (generation, schemas) = tool_hashes(registry, slot);
        let fresh = {
            let mut last = slot
                .tools_recorded
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let same = last
                .as_ref()
                .is_some_and(|(r, g)| *g == generation && **r == *run);
            *last = Some((run.clone(), generation));
            !same
        };
        if let (Mode::Record, Some(first), true) = (attached.mode, first, fresh) {
            // A failure here loses only the audit list: each call's own
            // record still says its schema, and its own write reports.
            let _ = attached.journal.record(&Record {
                run: run.to_string(),
                call: first.to_string(),
                kind: RecordKind::Tools(schemas.as_ref().clone()),
            });
        }
        Some(BatchJournal {
            attached,
            run,
            prints: (0..calls).map(|_| OnceLock::new()).collect(),
            started: (0..calls).map(|_| AtomicBool::new(false)).collect(),
            schemas,
            hashed_late: Mutex::new(Vec::new()),
        })
    }

    fn schema_hash(&self, tool: &Tool) -> String {
        let name = tool.meta.name.as_str();
        if let Ok(i) = self.schemas.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
            return self.schemas[i].1.clone();
        }
        // Registered after the batch began.
        let mut late = self.hashed_late.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, h)) = late.iter().find(|(n, _)| n == name) {
            return h.clone();
        }
        let h = schema_hash_of(tool);
        late.push((name.to_string(), h.clone()));
        h
    }
}

fn schema_hash_of(tool: &Tool) -> String {
    let value = serde_json::from_str(tool.parameters_text()).unwrap_or(serde_json::Value::Null);
    hash_json(&value)
}

/// The registry's generation, and its tools with their schema hashes,
/// hashed again only after the set of tools changed.
fn tool_hashes(registry: &Registry, slot: &Slot) -> (u64, Arc<Vec<(String, String)>>) {
    let generation = registry.shared.generation();
    let mut cache = slot.tools.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((g, list)) = cache.as_ref() {
        if *g == generation {
            return (generation, list.clone());
        }
    }
    let mut list: Vec<(String, String)> = registry
        .names()
        .into_iter()
        .filter_map(|name| {
            let tool = registry.get(&name)?;
            Some((name, schema_hash_of(&tool)))
        })
        .collect();
    list.sort();
    let list = Arc::new(list);
    *cache = Some((generation, list.clone()));
    (generation, list)
}

/// The error text of a call whose outcome is unknown: the tool started in
/// an earlier process and never completed. Starts with a phrase hosts and
/// models can look for.
pub(crate) fn unknown_text(run: &str, id: &str, tool: &str, why: &str) -> String {
    format!(
        "Outcome unknown: call \"{id}\" of tool \"{tool}\" (run \"{run}\") started before and never completed (the process may have stopped while it ran). {why} Check whether its effect happened before calling it again with a new call id."
    )
}

impl BatchInner {
    /// Step 1b (after `admit`): the call as the journal lets it run, or
    /// `None` once it has its result from the journal (replayed, changed,
    /// unknown, missing from a replay, or the journal failed).
    pub(super) fn journal_gate<'t>(&self, ready: Ready<'t>) -> Option<Ready<'t>> {
        let Some(j) = &self.journal else {
            return Some(ready);
        };
        let now = Fingerprint {
            tool: ready.name.clone(),
            schema: j.schema_hash(ready.tool),
            arguments: hash_json(&ready.arguments),
        };
        let fail = |text: String| self.journal_fail(&ready, text);
        let found = match j.attached.journal.lookup(&j.run, &ready.id) {
            Ok(found) => found,
            Err(e) => {
                fail(format!(
                    "The journal could not be read for call \"{}\" (run \"{}\"): {e}. The tool was not run.",
                    ready.id, j.run
                ));
                return None;
            }
        };
        let may_run = match found {
            Some(Found { print, result }) => {
                if let Some(change) = print.changes(&now) {
                    fail(format!(
                        "Replay of call \"{}\" (run \"{}\") refused: {change}. The recorded result was not returned and the tool was not run.",
                        ready.id, j.run
                    ));
                    return None;
                }
                if let Some(recorded) = result {
                    self.replay(ready, recorded);
                    return None;
                }
                match j.attached.mode {
                    Mode::Replay => {
                        fail(unknown_text(
                            &j.run,
                            &ready.id,
                            &ready.name,
                            "A replay runs no tool.",
                        ));
                        return None;
                    }
                    Mode::Record if !ready.tool.meta.flags.idempotent() => {
                        fail(unknown_text(
                            &j.run,
                            &ready.id,
                            &ready.name,
                            "It was not run again: the tool is not marked idempotent.",
                        ));
                        return None;
                    }
                    Mode::Record => true,
                }
            }
            None => j.attached.mode == Mode::Record,
        };
        if !may_run {
            fail(format!(
                "Call \"{}\" of tool \"{}\" is not in the recording of run \"{}\"; a replay runs no tool.",
                ready.id, ready.name, j.run
            ));
            return None;
        }
        let _ = j.prints[ready.index].set(now);
        Some(ready)
    }

    fn journal_fail(&self, ready: &Ready<'_>, text: String) {
        let result = ToolResult::new(
            ready.id.clone(),
            ready.name.clone(),
            Outcome::ToolError,
            text,
        );
        ready.tool.stats.finished(Outcome::ToolError, 0, false);
        self.deliver(ready.index, result);
    }

    /// Hands over a recorded result as this call's, marked replayed.
    fn replay(&self, ready: Ready<'_>, recorded: ToolResult) {
        let result = ToolResult {
            id: ready.id,
            name: ready.name,
            ..recorded
        };
        ready.tool.stats.replayed();
        ready.tool.stats.finished(result.outcome, 0, false);
        self.registry.observer.emit(Event {
            kind: EventKind::Replayed,
            tool: &result.name,
            id: &result.id,
            index: ready.index,
            outcome: Some(result.outcome),
            duration_us: result.duration_us,
            progress: None,
            log: None,
        });
        self.deliver(ready.index, result);
    }

    /// Writes call `index`'s `started` record, if the journal let it run;
    /// the error text if the write failed (the tool must then not run).
    pub(super) fn journal_started(&self, index: usize, call: &str) -> Result<(), String> {
        let Some(j) = &self.journal else {
            return Ok(());
        };
        let Some(print) = j.prints.get(index).and_then(OnceLock::get) else {
            return Ok(());
        };
        let record = Record {
            run: j.run.to_string(),
            call: call.to_string(),
            kind: RecordKind::Started(print.clone()),
        };
        match j.attached.journal.record(&record) {
            Ok(()) => {
                j.started[index].store(true, Ordering::SeqCst);
                Ok(())
            }
            Err(e) => Err(format!(
                "The journal could not record the start of call \"{call}\" (run \"{}\"): {e}. The tool was not run.",
                j.run
            )),
        }
    }

    /// Records call `index`'s result if its start was recorded, before the
    /// result is handed over. A result past the journal's bound is
    /// refused: the call's result becomes an error saying so (recorded too,
    /// so a replay answers the same).
    pub(super) fn journal_completed(&self, index: usize, result: ToolResult) -> ToolResult {
        let Some(j) = &self.journal else {
            return result;
        };
        if !j
            .started
            .get(index)
            .is_some_and(|s| s.swap(false, Ordering::SeqCst))
        {
            return result;
        }
        let Some(print) = j.prints.get(index).and_then(OnceLock::get) else {
            return result;
        };
        let bound = j.attached.journal.max_result_bytes();
        let size = crate::exec::journal::result_size(&result);
        let result = if size > bound {
            let text = format!(
                "The result of tool \"{}\" ({size} bytes of JSON) is larger than the journal's bound of {bound} bytes: it was refused, not recorded and not cut. The tool did run; make its result smaller or raise the journal's bound.",
                result.name
            );
            ToolResult::new(result.id, result.name, Outcome::ToolError, text)
        } else {
            result
        };
        let record = Record {
            run: j.run.to_string(),
            call: result.id.clone(),
            kind: RecordKind::Completed(print.clone(), result.clone()),
        };
        // A failed write leaves the call `started` only: a later run
        // reports its outcome unknown (or re-runs an idempotent tool). The
        // model still gets the result of the tool that did run.
        let _ = j.attached.journal.record(&record);
        result
    }
}
