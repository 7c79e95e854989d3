//! A host batch: the batch API of a host that runs its quick tools itself,
//! on its own thread (a managed binding's event loop or interpreter), one
//! crossing each way per batch, not several per call.
//!
//! `HostBatch::begin` parses nothing (the caller did) and checks every call
//! as `execute` would (unknown tool, arguments validated, coerced, defaults
//! filled, approval asked). The checked calls of `HOST_RUN` tools come back
//! as one list (`calls`, `calls_json`); calls of every other tool (a native
//! callback, a slow or blocking tool) run meanwhile on the pool, under the
//! batch's limit. The host runs its calls and hands all their answers back
//! at once (`finish`, one JSON array); capstan renders each (output caps,
//! content kinds, errors) and returns every result in call order.
//!
//! Two batches underneath, one per side: the host's calls in a batch
//! started inline on the calling thread (no hop), the others in a batch
//! submitted to the pool. Both share the options, so one deadline bounds
//! both: a host that never answers gets `timeout` results at the deadline.

mod answers;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use super::batch::{BatchInner, Sink};
use super::cell::Call;
use super::handout::Handout;
use super::options::ExecOptions;
use super::state::{ExecState, Tracked};
use crate::call::{CallRequest, Outcome, ToolResult};
use crate::error::Error;
use crate::registry::Registry;
use crate::wire;
pub use answers::Answer;

/// A checked call the host runs itself: its index in the batch, and the call
/// (id, tool name, validated arguments with defaults filled).
pub struct HostCall {
    pub index: usize,
    pub call: Call,
}

/// One side of the batch: its calls' indexes in the whole batch.
struct Side {
    batch: Arc<BatchInner>,
    index: Vec<usize>,
}

/// See the module's doc. Answer once (`finish`); drop it at any time.
pub struct HostBatch {
    len: usize,
    pool: Option<Side>,
    here: Option<Side>,
    handed: Vec<HostCall>,
    /// A thread is inside `finish` (one crossing at a time).
    crossing: AtomicBool,
    /// `finish` took the answers.
    answered: AtomicBool,
    /// `finish` returned the results.
    finished: AtomicBool,
}

/// Releases the `crossing` flag when the crossing ends.
struct Crossing<'a>(&'a AtomicBool);

impl Drop for Crossing<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

fn tracked(batch: &Arc<BatchInner>) -> Weak<dyn Tracked> {
    let weak: Weak<BatchInner> = Arc::downgrade(batch);
    weak
}

impl HostBatch {
    /// Checks `calls` and starts those of non-`HOST_RUN` tools on the pool;
    /// returns with the checked calls the host must run (`calls`). Calls
    /// that cannot run (unknown tool, invalid arguments, denied) already
    /// have their result and are not handed out. A `HOST_RUN` call that is
    /// not checked on this thread before this returns (one waiting for
    /// approval, a `SERIAL` tool's) runs its tool's callback instead.
    pub fn begin(registry: &Registry, calls: Vec<CallRequest>, options: &ExecOptions) -> HostBatch {
        let len = calls.len();
        let mut to_pool = (Vec::new(), Vec::new());
        let mut to_here = (Vec::new(), Vec::new());
        let mut last: Option<(String, bool)> = None;
        for (i, call) in calls.into_iter().enumerate() {
            let host_run = match &last {
                Some((name, host_run)) if *name == call.name => *host_run,
                _ => {
                    // Unknown tools are checked here too: their result is
                    // the unknown-tool text, at no cost to the pool.
                    let h = registry
                        .get(&call.name)
                        .is_none_or(|t| t.meta.flags.host_run());
                    last = Some((call.name.clone(), h));
                    h
                }
            };
            let side = if host_run { &mut to_here } else { &mut to_pool };
            side.0.push(call);
            side.1.push(i);
        }
        let state = ExecState::of(registry);
        let start = |calls: Vec<CallRequest>, options: &ExecOptions| {
            // A host on an event loop learns that the pool's calls are done
            // through the registry's notifier or wake fd (see `finish`).
            let shared = registry.shared.clone();
            let on_done: Box<dyn Fn() + Send + Sync> = Box::new(move || shared.wake.signal());
            let batch = BatchInner::new(
                registry,
                state.clone(),
                calls,
                options,
                Sink::Collect,
                Some(on_done),
            );
            state.track(tracked(&batch));
            batch.arm_deadline();
            batch
        };
        let pool = (!to_pool.0.is_empty()).then(|| {
            let workers = options.workers(to_pool.0.len());
            let batch = start(to_pool.0, options);
            if workers > 1 {
                batch.start_on_lead();
            } else {
                batch.call_helpers();
            }
            Side {
                batch,
                index: to_pool.1,
            }
        });
        let mut handed = Vec::new();
        let here = (!to_here.0.is_empty()).then(|| {
            let inline = ExecOptions {
                start_inline: true,
                start_on_wait: false,
                ..options.clone()
            };
            let handout = Arc::new(Handout::new());
            let batch = BatchInner::new(
                registry,
                state.clone(),
                to_here.0,
                &inline,
                Sink::Collect,
                None,
            );
            batch.hand_out_to(handout.clone());
            state.track(tracked(&batch));
            batch.arm_deadline();
            batch.drive(true);
            handed = handout
                .close()
                .into_iter()
                .map(|(i, call)| HostCall {
                    index: to_here.1[i],
                    call,
                })
                .collect();
            Side {
                batch,
                index: to_here.1,
            }
        });
        handed.sort_by_key(|c| c.index);
        HostBatch {
            len,
            pool,
            here,
            handed,
            crossing: AtomicBool::new(false),
            answered: AtomicBool::new(false),
            finished: AtomicBool::new(false),
        }
    }

    /// How many calls the batch has (handed out or not).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The calls the host runs, by index.
    pub fn calls(&self) -> &[HostCall] {
        &self.handed
    }

    /// The calls the host runs as one JSON array, by index:
    /// `[{"index","id","name","arguments"}]`, `arguments` an object.
    pub fn calls_json(&self) -> String {
        let size: usize = self
            .handed
            .iter()
            .map(|c| c.call.id().len() + c.call.tool().len() + 64)
            .sum();
        let mut out = Vec::with_capacity(size + 3);
        out.push(b'[');
        wire::write_items(&mut out, &self.handed, |out, c| {
            out.extend_from_slice(b"{\"index\":");
            wire::write_u64(out, c.index as u64);
            out.extend_from_slice(b",\"id\":");
            wire::write_str(out, c.call.id());
            out.extend_from_slice(b",\"name\":");
            wire::write_str(out, c.call.tool());
            out.extend_from_slice(b",\"arguments\":");
            wire::write_value(out, c.call.arguments());
            out.push(b'}');
        });
        out.push(b']');
        wire::into_string(out)
    }

    fn enter(&self, what: &str) -> Result<Crossing<'_>, Error> {
        if self.crossing.swap(true, Ordering::SeqCst) {
            return Err(Error::WrongContext(format!(
                "another thread is inside a call on this host batch; {what} waits for no one: \
                 call it when that one returned"
            )));
        }
        Ok(Crossing(&self.crossing))
    }

    /// Takes the host's answers, one per handed-out call (JSON: see
    /// `answers`), completes those calls, waits up to `wait` (`None`: no
    /// limit) for the calls on the pool, and returns every result in call
    /// order. The whole answer is checked before any call is completed: an
    /// unknown or repeated index, a missing answer or malformed JSON is
    /// `InvalidResults` and changes nothing (answer again). Past `wait` with
    /// pool calls still running: `Timeout`, the answers kept; call again
    /// with no answers (`None`) to wait again (the registry's notifier
    /// fires when the pool's calls are done). Answers given twice, or a call
    /// after the results were returned, are `AlreadyCompleted`; a call
    /// while another thread is inside `finish` is `WrongContext`. An answer
    /// for a call that already ended (its timeout, the deadline, `cancel`)
    /// is dropped: that call's result says why it ended.
    pub fn finish(
        &self,
        answers: Option<&str>,
        wait: Option<Duration>,
    ) -> Result<Vec<ToolResult>, Error> {
        let _crossing = self.enter("finish")?;
        if self.finished.load(Ordering::SeqCst) {
            return Err(Error::AlreadyCompleted(
                "this host batch already returned its results".into(),
            ));
        }
        match (answers, self.answered.load(Ordering::SeqCst)) {
            (Some(_), true) => {
                return Err(Error::AlreadyCompleted(
                    "this host batch already has its answers: call finish again without answers \
                     to wait for its other calls"
                        .into(),
                ))
            }
            (None, false) => {
                return Err(Error::InvalidResults(
                    "no answers: the first finish of a host batch takes the answers to every \
                     handed-out call"
                        .into(),
                ))
            }
            (Some(text), false) => {
                let answers = answers::parse(text, &self.handed)?;
                for (pos, answer) in answers {
                    // Refused only when the call already ended: its result stands.
                    let _ = answer.complete(&self.handed[pos].call);
                }
                self.answered.store(true, Ordering::SeqCst);
            }
            (None, true) => {}
        }
        let deadline = wait.map(|w| Instant::now() + w);
        for side in [&self.here, &self.pool].into_iter().flatten() {
            // Every call has its result (`is_done`) before the pool side's
            // end callback wakes the host: a host woken by it finds it done.
            let b = &side.batch;
            if !b.is_done() && !b.wait_done(deadline) && !b.is_done() {
                return Err(Error::Timeout(format!(
                    "calls of this host batch are still running after {} ms (the answers were \
                     taken): call finish again without answers to wait",
                    wait.map_or(0, |w| w.as_millis())
                )));
            }
        }
        self.finished.store(true, Ordering::SeqCst);
        Ok(self.results_in_order())
    }

    /// Merges both sides' results by index (both done).
    fn results_in_order(&self) -> Vec<ToolResult> {
        let mut out: Vec<Option<ToolResult>> = (0..self.len).map(|_| None).collect();
        for side in [&self.here, &self.pool].into_iter().flatten() {
            for (result, &i) in side.batch.take_results().into_iter().zip(&side.index) {
                out[i] = Some(result);
            }
        }
        out.into_iter()
            .map(|r| {
                r.unwrap_or_else(|| ToolResult::new("", "", Outcome::Cancelled, "result lost"))
            })
            .collect()
    }

    /// Whether `finish` returned the results.
    pub fn is_finished(&self) -> bool {
        self.finished.load(Ordering::SeqCst)
    }

    /// Every handed-out call has its result (answered, or ended by a
    /// timeout or the deadline) and the pool's calls are done.
    pub fn is_done(&self) -> bool {
        [&self.here, &self.pool]
            .into_iter()
            .flatten()
            .all(|s| s.batch.is_done())
    }

    /// Cancels the batch: calls not started end `cancelled`, running ones
    /// see it; handed-out calls without an answer end `cancelled`.
    pub fn cancel(&self) {
        for side in [&self.here, &self.pool].into_iter().flatten() {
            side.batch.cancel();
        }
        for c in &self.handed {
            c.call.cell.cancel("Cancelled before the host answered.");
            c.call.cell.release();
        }
    }
}

/// Dropped unanswered: the handed-out calls end `cancelled` (so their batch
/// ends and frees); the pool's calls finish on their own.
impl Drop for HostBatch {
    fn drop(&mut self) {
        for c in &self.handed {
            if !c.call.is_done() {
                c.call
                    .cell
                    .cancel("The host freed the batch without answering this call.");
            }
            c.call.cell.release();
        }
    }
}
