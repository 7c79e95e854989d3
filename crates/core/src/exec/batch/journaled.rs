//! A batch's calls and the registry's journal (`crate::exec::journal`): a
//! call with a completed record is answered from it without running; one
//! whose record changed or whose outcome is unknown fails naming why; the
//! rest are recorded `started` before their callback runs and `completed`
//! as their result is handed over, before the host sees it.
//!
//! A `started` record claims its key (`Journal::claim`): a call whose key
//! another process claimed first gets that process's result, or an error
//! saying it is running elsewhere, and does not run. A batch of several
//! calls claims all the calls it can run at once when it begins (one
//! transaction with the SQLite store instead of one per call); a call that
//! waits for approval claims its key once approved.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::run::Ready;
use super::BatchInner;
use crate::call::{CallRequest, Outcome, ToolResult};
use crate::exec::journal::{
    hash_json, Attached, Claim, Fingerprint, Found, Mode, Record, RecordKind, Slot,
};
use crate::exec::options::ExecOptions;
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
    /// Per call: what the batch's claim at its start answered (`None`: the
    /// call was not claimed then; its gate looks it up).
    pre: Vec<Mutex<Option<PreClaim>>>,
    /// Per call: its gate found a `started` of an idempotent tool, so its
    /// claim may write over it.
    rerun: Vec<AtomicBool>,
}

/// A call's claim made with its batch's.
enum PreClaim {
    /// Its `started` is written (under `prints`' fingerprint).
    Won,
    /// Another process claimed the key first.
    Lost(Claim),
}

impl BatchJournal {
    /// The journal of a batch of `calls` calls run under `run`, if the
    /// registry has one; records the registry's tool list under the
    /// batch's first call id (`first`) when recording.
    pub(crate) fn new(
        registry: &Registry,
        slot: &Slot,
        options: &ExecOptions,
        requests: &[CallRequest],
    ) -> Option<BatchJournal> {
        let run = options.run_id.as_ref()?.clone();
        let first = requests.first().map(|c| c.id.as_str());
        let calls = requests.len();
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
        let j = BatchJournal {
            attached,
            run,
            prints: (0..calls).map(|_| OnceLock::new()).collect(),
            started: (0..calls).map(|_| AtomicBool::new(false)).collect(),
            schemas,
            hashed_late: Mutex::new(Vec::new()),
            pre: (0..calls).map(|_| Mutex::new(None)).collect(),
            rerun: (0..calls).map(|_| AtomicBool::new(false)).collect(),
        };
        let mut writes = Vec::new();
        if let (Mode::Record, Some(first), true) = (j.attached.mode, first, fresh) {
            writes.push((
                Record {
                    run: j.run.to_string(),
                    call: first.to_string(),
                    kind: RecordKind::Tools(j.schemas.as_ref().clone()),
                },
                false,
            ));
        }
        let mut claimed = Vec::new();
        if j.attached.mode == Mode::Record && calls > 1 {
            for (index, req) in requests.iter().enumerate() {
                if let Some((print, rerun)) = j.claimable(registry, options, req) {
                    let record = Record {
                        run: j.run.to_string(),
                        call: req.id.clone(),
                        kind: RecordKind::Started(print.clone()),
                    };
                    writes.push((record, rerun));
                    claimed.push((index, print));
                }
            }
        }
        if writes.is_empty() {
            return Some(j);
        }
        let tools = usize::from(writes.len() > claimed.len());
        // On an error nothing counts as claimed (a transaction is all or
        // nothing; the default store may have written some `started`
        // records, which each call's own claim writes again): each call
        // claims its key at its gate, whose own failure it reports. A lost
        // `tools` record loses only the audit list.
        if let Ok(answers) = j.attached.journal.claim(&writes) {
            for ((index, print), claim) in claimed.into_iter().zip(answers.into_iter().skip(tools))
            {
                let pre = match claim {
                    Claim::Won => {
                        // Whatever ends the call now (even a cancel
                        // before it starts) is recorded `completed`.
                        let _ = j.prints[index].set(print);
                        j.started[index].store(true, Ordering::SeqCst);
                        PreClaim::Won
                    }
                    lost => PreClaim::Lost(lost),
                };
                if let Ok(mut slot) = j.pre[index].lock() {
                    *slot = Some(pre);
                }
            }
        }
        Some(j)
    }

    /// The fingerprint a call the batch may claim at its start runs
    /// under, and whether its claim may write over an earlier `started`:
    /// `None` for a call that waits for approval, whose tool is unknown or
    /// arguments invalid, or that the journal answers (completed, changed,
    /// or of unknown outcome), each left to its gate.
    fn claimable(
        &self,
        registry: &Registry,
        options: &ExecOptions,
        req: &CallRequest,
    ) -> Option<(Fingerprint, bool)> {
        let tool = registry.get(&req.name)?;
        if tool.meta.flags.requires_approval() && !options.approved.contains(&req.id) {
            return None;
        }
        // The gate's validation, without counting an invalid call twice.
        let mut value = req.arguments.clone().into_value().ok()?;
        let schema = tool.schema().ok()?;
        if options.strict_nulls {
            crate::schema::drop_strict_nulls(schema.source(), &mut value);
        }
        let arguments = schema.validate(value, registry.options().coerce).ok()?;
        let print = Fingerprint {
            tool: req.name.clone(),
            schema: self.schema_hash(&tool),
            arguments: hash_json(&arguments),
        };
        match self.attached.journal.lookup(&self.run, &req.id).ok()? {
            None => Some((print, false)),
            Some(Found {
                print: was,
                result: None,
                elsewhere: false,
            }) if was == print && tool.meta.flags.idempotent() => Some((print, true)),
            Some(_) => None,
        }
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

/// The error text of a call another process claimed first and has not
/// completed. Starts with a phrase hosts and models can look for.
pub(crate) fn running_text(run: &str, id: &str, tool: &str) -> String {
    format!(
        "In progress elsewhere: call \"{id}\" of tool \"{tool}\" (run \"{run}\") was started elsewhere (by another process sharing the journal, or another batch of this one) and has not completed; it was not run here. Send the call again later to get its result from the journal."
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
        let pre = j.pre[ready.index].lock().ok().and_then(|mut p| p.take());
        let looked = match pre {
            Some(PreClaim::Won) => return Some(ready),
            Some(PreClaim::Lost(Claim::Running)) => {
                fail(running_text(&j.run, &ready.id, &ready.name));
                return None;
            }
            Some(PreClaim::Lost(Claim::Completed(found))) => Ok(Some(found)),
            None if j.pre.len() == 1 && self.journal_may_claim_at_once(&ready) => {
                // A lone call claims its key at once (one transaction, not
                // a look and then a claim): the usual empty key is won; a
                // key another process completed answers as a look would; a
                // `started` (running elsewhere, or left by a crash) is
                // looked up to tell which.
                match self.journal_claim_key(ready.index, &ready.id, &now) {
                    Ok(Claim::Won) => return Some(ready),
                    Ok(Claim::Completed(found)) => Ok(Some(found)),
                    Ok(Claim::Running) => j.attached.journal.lookup(&j.run, &ready.id),
                    Err(text) => {
                        fail(text);
                        return None;
                    }
                }
            }
            _ => j.attached.journal.lookup(&j.run, &ready.id),
        };
        let found = match looked {
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
            Some(Found {
                print,
                result,
                elsewhere,
            }) => {
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
                if elsewhere {
                    fail(running_text(&j.run, &ready.id, &ready.name));
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
                    Mode::Record => {
                        j.rerun[ready.index].store(true, Ordering::SeqCst);
                        true
                    }
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
        let _ = j.prints[ready.index].set(now.clone());
        if self.waits_for_approval(&ready) {
            return Some(ready);
        }
        match self.journal_claim(ready.index, &ready.id, now) {
            Ok(None) => Some(ready),
            Ok(Some(found)) => {
                // Another process completed it first.
                if let Some(change) = found.print.changes(&j.prints[ready.index].get()?.clone()) {
                    fail(format!(
                        "Replay of call \"{}\" (run \"{}\") refused: {change}. The recorded result was not returned and the tool was not run.",
                        ready.id, j.run
                    ));
                } else if let Some(recorded) = found.result {
                    self.replay(ready, recorded);
                }
                None
            }
            Err(text) => {
                fail(text);
                None
            }
        }
    }

    /// Whether the gate may claim `ready`'s key before looking it up: when
    /// recording, for a call that does not wait for its approver.
    fn journal_may_claim_at_once(&self, ready: &Ready<'_>) -> bool {
        let recording = self
            .journal
            .as_ref()
            .is_some_and(|j| j.attached.mode == Mode::Record);
        recording && !self.waits_for_approval(ready)
    }

    /// A call whose tool requires approval, not approved yet: its key is
    /// claimed once approved (`journal_started`), so a call denied or
    /// waiting for its approver never becomes "outcome unknown".
    fn waits_for_approval(&self, ready: &Ready<'_>) -> bool {
        ready.tool.meta.flags.requires_approval() && !self.rules.approved.contains(&ready.id)
    }

    /// Claims call `index`'s key with a `started` record: `Ok(None)` once
    /// written (the call runs), `Ok(Some(found))` if another process
    /// completed it first, `Err` with the call's error text if it runs
    /// elsewhere or the journal failed.
    fn journal_claim(
        &self,
        index: usize,
        call: &str,
        print: Fingerprint,
    ) -> Result<Option<Found>, String> {
        match self.journal_claim_key(index, call, &print)? {
            Claim::Won => Ok(None),
            Claim::Completed(found) => Ok(Some(found)),
            Claim::Running => {
                let run = self.journal.as_ref().map_or("", |j| &*j.run);
                Err(running_text(run, call, &print.tool))
            }
        }
    }

    /// Writes call `index`'s `started` record as a claim on its key (over
    /// an earlier `started` if its gate found the tool may run again): on
    /// `Claim::Won` the call is marked started under `print`. `Err` holds
    /// the call's error text when the journal failed or did not answer.
    fn journal_claim_key(
        &self,
        index: usize,
        call: &str,
        print: &Fingerprint,
    ) -> Result<Claim, String> {
        let Some(j) = &self.journal else {
            return Ok(Claim::Won);
        };
        let record = Record {
            run: j.run.to_string(),
            call: call.to_string(),
            kind: RecordKind::Started(print.clone()),
        };
        let rerun = j.rerun[index].load(Ordering::SeqCst);
        match j.attached.journal.claim(&[(record, rerun)]).map(|mut a| a.pop()) {
            Ok(Some(claim)) => {
                if claim == Claim::Won {
                    let _ = j.prints[index].set(print.clone());
                    j.started[index].store(true, Ordering::SeqCst);
                }
                Ok(claim)
            }
            Ok(None) => Err(format!(
                "The journal did not answer the claim of call \"{call}\" (run \"{}\"). The tool was not run.",
                j.run
            )),
            Err(e) => Err(format!(
                "The journal could not record the start of call \"{call}\" (run \"{}\"): {e}. The tool was not run.",
                j.run
            )),
        }
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
    /// (An approved call's claim; the others claimed theirs at their gate.)
    pub(super) fn journal_started(&self, index: usize, call: &str) -> Result<(), String> {
        let Some(j) = &self.journal else {
            return Ok(());
        };
        if j.started[index].load(Ordering::SeqCst) {
            return Ok(());
        }
        let Some(print) = j.prints.get(index).and_then(OnceLock::get) else {
            return Ok(());
        };
        match self.journal_claim(index, call, print.clone())? {
            None => Ok(()),
            Some(found) => Err(match found.result {
                Some(result) => format!(
                    "Call \"{call}\" (run \"{}\") was completed by another process while it waited for approval; the tool was not run here. Its recorded result: {}",
                    j.run, result.content
                ),
                None => running_text(&j.run, call, &print.tool),
            }),
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
