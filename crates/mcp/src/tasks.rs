//! Tools run as MCP tasks (issue #33): the Tasks extension
//! `io.modelcontextprotocol/tasks` (SEP-2663, the 2026-07-28 revision's
//! tasks), served by capstan's MCP server.
//!
//! A `tools/call` may run as a task when the tool allows it
//! (`McpMeta::task_support`, the MCP `execution.taskSupport`) and the
//! request declares the extension in its client capabilities (per request
//! in `_meta`, or at `initialize` for a 2025-11-25 session). It starts as a
//! plain call and becomes a task when its tool defers it, or after
//! `server::call::TASK_AFTER` (`adopt`); the answer is then a
//! `CreateTaskResult` (`resultType: "task"`), the call goes on through the
//! executor as any other (validation, approval, timeouts), and `tasks/get`
//! reports it: `working` (with the tool's latest progress as
//! `statusMessage`, and a `pollIntervalMs` of a quarter of the task's age,
//! 50 ms to 1 s), `input_required` with the requests its tool asked
//! (`Call::require_input`) until `tasks/update` has answered them all (the
//! tool then runs again with the answers and its state), then `completed`
//! with the `CallToolResult` a plain call would have got (a tool error
//! included), `cancelled`, or `failed` (no result could be had). `tasks/cancel` cancels the
//! call's batch: the tool sees `capstan_call_cancelled`. A `Required` tool
//! called without the extension gets -32021 naming it; `Optional` and
//! `Forbidden` ones run as plain calls.
//!
//! The 2025-11-25 revision's own (experimental) tasks, with a `task` param
//! on the request and `tasks/result`/`tasks/list`, are not served: rmcp
//! 3.11 reads neither, and capstan does not declare the `tasks` capability
//! of that revision, so its clients make no task requests.
//!
//! Bounds (docs/limits.md): at most `max_tasks` tasks are kept per server,
//! running or ended (a call past it gets an error); an ended task is kept
//! `task_keep_ms` after it ended, then forgotten (`tasks/get` answers
//! "unknown task"). What the tasks hold (ended tasks' results, the requests
//! of tasks waiting for input and the answers given so far) is bounded by
//! `max_task_bytes` in all, counted as JSON text: past it, ended tasks'
//! results are dropped oldest first (each task stays, completed with a tool
//! error saying its result was dropped and why); a result larger than the
//! bound alone is kept as such a tool error; a `tasks/update` whose answers
//! find no room is refused (-32602 saying so), and a task whose tool asks
//! for input that finds none completes with a tool error. Task ids are
//! random v4 UUIDs: whoever has one may poll or cancel its task (the spec's
//! model; the bearer token, if any, still guards every request).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rmcp::model::{
    ClientCapabilities, CreateTaskResult, DetailedTask, InputRequests, InputResponses, JsonObject,
    Task, TaskPayload, TaskStatus,
};
use rmcp::task_manager::current_timestamp;
use rmcp::ErrorData;
use tokio_util::sync::CancellationToken;

use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::input::MAX_DRIVEN_ROUNDS;
use capstan_core::text::json_len as json_size;
use room::dropped_result;

mod room;
use capstan_core::call::{Outcome, ToolResult};
use capstan_core::exec;
use capstan_core::input::CallInput;
use capstan_core::progress::{Progress, ProgressListener};
use capstan_core::tool_meta::TaskSupport;

/// Default cap on the tasks one server keeps, running or ended.
pub(crate) const DEFAULT_MAX_TASKS: usize = 1024;
/// Default time an ended task's result is kept (5 minutes).
pub(crate) const DEFAULT_TASK_KEEP_MS: u32 = 300_000;
/// Default bound on the bytes the tasks of one server hold (64 MiB).
pub(crate) const DEFAULT_MAX_TASK_BYTES: usize = 64 * 1024 * 1024;
/// The `pollIntervalMs` suggested to clients: a quarter of the task's age,
/// within these bounds (a short task is polled soon, a long one rarely).
const MIN_POLL_MS: u64 = 50;
const MAX_POLL_MS: u64 = 1000;

fn poll_interval_ms(age: Duration) -> u64 {
    (duration_ms(age) / 4).clamp(MIN_POLL_MS, MAX_POLL_MS)
}

/// Whether a `tools/call` of a tool with `support` runs as a task, for a
/// request that did (`declared`) or did not declare the Tasks extension.
/// A `Required` tool without it: -32021 with the extension in
/// `data.requiredCapabilities`, as the spec says.
pub(crate) fn as_task(support: TaskSupport, declared: bool) -> Result<bool, ErrorData> {
    match (support, declared) {
        (TaskSupport::Forbidden, _) => Ok(false),
        (_, true) => Ok(true),
        (TaskSupport::Optional, false) => Ok(false),
        (TaskSupport::Required, false) => Err(ErrorData::missing_required_client_capability(
            ClientCapabilities::builder().enable_tasks().build(),
        )),
    }
}

/// The tasks of one server.
pub(crate) struct Tasks {
    entries: Mutex<HashMap<String, Entry>>,
    max: usize,
    keep: Duration,
    max_bytes: usize,
}

struct Entry {
    task: Task,
    /// How the call ended, and when.
    end: Option<(TaskPayload, Instant)>,
    created: Instant,
    /// Cancels the call (`tasks/cancel`; a child of the server's `stopping`).
    cancel: CancellationToken,
    /// The tool's requests the client has not answered yet.
    waiting: Option<Waiting>,
    /// What this entry holds of `max_task_bytes`: its result, or its
    /// outstanding requests and the answers so far (JSON text bytes).
    bytes: usize,
}

/// A task waiting for its client's answers (`input_required`).
struct Waiting {
    /// The outstanding requests, by the key the client sees.
    requests: InputRequests,
    /// The client's key of each outstanding request -> the tool's.
    keys: HashMap<String, String>,
    /// The answers so far, by the tool's key.
    answers: Map<String, Value>,
    /// Gets the answers once every request has one.
    done: Option<oneshot::Sender<Map<String, Value>>>,
}

/// A round of a task's call in flight: its batch, and where its one result
/// arrives.
pub(crate) struct Running {
    pub(crate) batch: Option<exec::Batch>,
    pub(crate) rx: oneshot::Receiver<ToolResult>,
}

impl Running {
    fn cancel(&self) {
        if let Some(batch) = &self.batch {
            batch.cancel();
        }
    }
}

/// Starts a later round of a task's call, with the client's answers.
pub(crate) type NextRound = Box<dyn FnMut(CallInput) -> Running + Send>;

/// How long a task waits for its client to answer what its tool asked
/// (as long as a sealed state stays good for a plain call's client).
const ANSWER_WITHIN: Duration = super::input::STATE_TTL;

impl Entry {
    fn detailed(&self) -> DetailedTask {
        let mut task = self.task.clone();
        let payload = match &self.end {
            Some((payload, _)) => payload.clone(),
            None => {
                task.poll_interval_ms = Some(poll_interval_ms(self.created.elapsed()));
                match &self.waiting {
                    Some(w) => TaskPayload::InputRequired {
                        input_requests: w.requests.clone(),
                    },
                    None => TaskPayload::Working,
                }
            }
        };
        DetailedTask::new(task, payload)
    }
}

fn unknown(task_id: &str) -> ErrorData {
    // An id echoed back at most this long (ours are 36 characters).
    let shown: String = task_id.chars().take(64).collect();
    let cut = if shown.len() < task_id.len() {
        "..."
    } else {
        ""
    };
    ErrorData::invalid_params(
        format!("unknown task {shown:?}{cut}: no such task, or it ended and was forgotten (tasks are kept a while after they end)"),
        None,
    )
}

impl Tasks {
    /// `max`, `keep_ms` and `max_bytes` 0 mean the defaults.
    pub(crate) fn new(max: usize, keep_ms: u32, max_bytes: usize) -> Tasks {
        let max = if max == 0 { DEFAULT_MAX_TASKS } else { max };
        let keep_ms = if keep_ms == 0 {
            DEFAULT_TASK_KEEP_MS
        } else {
            keep_ms
        };
        Tasks {
            entries: Mutex::new(HashMap::new()),
            max,
            keep: Duration::from_millis(u64::from(keep_ms)),
            max_bytes: if max_bytes == 0 {
                DEFAULT_MAX_TASK_BYTES
            } else {
                max_bytes
            },
        }
    }

    fn lock(&self) -> Result<MutexGuard<'_, HashMap<String, Entry>>, ErrorData> {
        self.entries
            .lock()
            .map_err(|_| ErrorData::internal_error("the task table is unusable", None))
    }

    /// Forgets the tasks that ended more than `keep` ago.
    fn sweep(&self, entries: &mut HashMap<String, Entry>) {
        let keep = self.keep;
        entries.retain(|_, e| e.end.as_ref().is_none_or(|(_, at)| at.elapsed() < keep));
    }

    /// Makes `running`, a call's round in flight, a task, and returns its
    /// seed state once `tasks/get` knows it, with the listener its progress
    /// is to go to from now on. `next` starts the call's later rounds when
    /// its tool asks for input (`can_ask`: what the client can answer);
    /// `stopping` cancels the call. Too many tasks: an error, and the round
    /// is cancelled.
    pub(crate) fn adopt(
        self: &Arc<Self>,
        running: Running,
        next: NextRound,
        can_ask: Vec<&'static str>,
        stopping: &CancellationToken,
    ) -> Result<(CreateTaskResult, ProgressListener), ErrorData> {
        let task_id = uuid::Uuid::new_v4().to_string();
        let now = current_timestamp();
        let mut task = Task::new(task_id.clone(), TaskStatus::Working, now.clone(), now);
        // At least this long from creation: a task is never forgotten
        // before it ends, nor sooner than `keep` after.
        task.ttl_ms = Some(duration_ms(self.keep));
        task.poll_interval_ms = Some(MIN_POLL_MS);
        let cancel = stopping.child_token();
        {
            let mut entries = match self.lock() {
                Ok(entries) => entries,
                Err(e) => {
                    running.cancel();
                    return Err(e);
                }
            };
            self.sweep(&mut entries);
            if entries.len() >= self.max {
                running.cancel();
                return Err(ErrorData::internal_error(
                    format!(
                        "too many tasks: this server keeps {} (running, or ended less than {} ms ago); try again when one is done",
                        self.max,
                        self.keep.as_millis()
                    ),
                    None,
                ));
            }
            entries.insert(
                task_id.clone(),
                Entry {
                    task: task.clone(),
                    end: None,
                    created: Instant::now(),
                    cancel: cancel.clone(),
                    waiting: None,
                    bytes: 0,
                },
            );
        }
        // The spec sends no progress notifications for tasks: the latest
        // report is the task's statusMessage instead.
        let this = Arc::downgrade(self);
        let id = task_id.clone();
        let listener = ProgressListener(Arc::new(move |_, p: &Progress| {
            if let Some(tasks) = this.upgrade() {
                tasks.report(&id, p);
            }
        }));
        tokio::spawn(self.clone().drive(task_id, running, next, can_ask, cancel));
        Ok((CreateTaskResult::new(task), listener))
    }

    /// Runs a task's call to its end: each round's result, and while the
    /// tool asks for input, the wait for the client's answers
    /// (`tasks/update`) and the next round with them.
    async fn drive(
        self: Arc<Self>,
        task_id: String,
        mut running: Running,
        mut next: NextRound,
        can_ask: Vec<&'static str>,
        cancel: CancellationToken,
    ) {
        let mut round = 0usize;
        let payload = loop {
            let (result, cancelled) = tokio::select! {
                r = &mut running.rx => (r, false),
                _ = cancel.cancelled() => {
                    running.cancel();
                    ((&mut running.rx).await, true)
                }
            };
            // Cancelled before its result was in: the task is cancelled,
            // whatever the tool returned on seeing it (as a cancelled plain
            // call gets no answer).
            let result = match result {
                Ok(_) if cancelled => break TaskPayload::Cancelled,
                Ok(result) if result.outcome == Outcome::Cancelled => break TaskPayload::Cancelled,
                Ok(result) => result,
                Err(_) => {
                    break TaskPayload::Failed {
                        error: to_object(&ErrorData::internal_error(
                            "the call ended without result",
                            None,
                        )),
                    }
                }
            };
            let Some(asked) = &result.input_required else {
                break completed(&result);
            };
            round += 1;
            let failed = |why: String| {
                completed(&ToolResult::new(
                    &result.id,
                    &result.name,
                    Outcome::ToolError,
                    why,
                ))
            };
            if round > MAX_DRIVEN_ROUNDS {
                break failed(format!(
                    "{} (asked {round} rounds in a row: capstan gave up)",
                    result.content
                ));
            }
            let requests = match super::input::input_requests(&result.name, asked) {
                Ok(requests) => requests,
                Err(why) => break failed(why),
            };
            let responses = if requests.is_empty() {
                None
            } else {
                let answers = match self.park(&task_id, round, requests) {
                    Ok(answers) => answers,
                    Err(Some(why)) => break failed(format!("{} ({why})", result.content)),
                    // Forgotten: nothing to report to.
                    Err(None) => break TaskPayload::Cancelled,
                };
                tokio::select! {
                    a = answers => match a {
                        Ok(answers) => Some(Value::Object(answers)),
                        Err(_) => break TaskPayload::Cancelled,
                    },
                    _ = cancel.cancelled() => break TaskPayload::Cancelled,
                    _ = tokio::time::sleep(ANSWER_WITHIN) => break failed(format!(
                        "{} (no answer within {} s: capstan gave up)",
                        result.content,
                        ANSWER_WITHIN.as_secs()
                    )),
                }
            };
            running = next(CallInput {
                responses,
                state: asked.state.clone(),
                can_ask: can_ask.clone(),
                ..Default::default()
            });
        };
        self.end(&task_id, payload);
    }

    /// Marks the task `input_required` with `requests` (keyed for the client
    /// by round, so a key is never reused in one task); the receiver gets
    /// the answers by the tool's keys once every request has one. `Err`
    /// with why when the requests find no room in `max_bytes`, without when
    /// the task is forgotten.
    fn park(
        &self,
        task_id: &str,
        round: usize,
        requests: InputRequests,
    ) -> Result<oneshot::Receiver<Map<String, Value>>, Option<String>> {
        let mut entries = self.entries.lock().map_err(|_| None)?;
        let size = json_size(&requests);
        if !entries.contains_key(task_id) {
            return Err(None);
        }
        if !self.make_room(&mut entries, size) {
            return Err(Some(format!(
                "its requests ({size} bytes) find no room: this server keeps at most {} bytes \
                 for its tasks (max_task_bytes)",
                self.max_bytes
            )));
        }
        let entry = entries.get_mut(task_id).ok_or(None)?;
        let (tx, rx) = oneshot::channel();
        let mut keys = HashMap::new();
        let mut outstanding = InputRequests::new();
        for (key, request) in requests {
            let shown = format!("{round}-{key}");
            keys.insert(shown.clone(), key);
            outstanding.insert(shown, request);
        }
        entry.waiting = Some(Waiting {
            requests: outstanding,
            keys,
            answers: Map::new(),
            done: Some(tx),
        });
        entry.task.status = TaskStatus::InputRequired;
        entry.task.last_updated_at = current_timestamp();
        entry.bytes = size;
        Ok(rx)
    }

    fn report(&self, task_id: &str, p: &Progress) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        let Some(entry) = entries.get_mut(task_id).filter(|e| e.end.is_none()) else {
            return;
        };
        let mut text = match p.total {
            Some(total) => format!("{}/{}", p.progress, total),
            None => p.progress.to_string(),
        };
        if let Some(message) = &p.message {
            text.push_str(": ");
            text.push_str(message);
        }
        entry.task.status_message = Some(text);
        entry.task.last_updated_at = current_timestamp();
    }

    fn end(&self, task_id: &str, payload: TaskPayload) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        let Some(entry) = entries.get_mut(task_id) else {
            return;
        };
        entry.bytes = 0;
        // The requests and partial answers of a task that ended waiting go.
        entry.waiting = None;
        // Only a result is counted (a failure or a cancellation is small).
        let size = match &payload {
            TaskPayload::Completed { result } => json_size(result),
            _ => 0,
        };
        let (payload, kept) = if size > self.max_bytes {
            let text = format!(
                "The task's result was {size} bytes, more than this server keeps for its tasks \
                 ({} bytes, max_task_bytes): it was dropped.",
                self.max_bytes
            );
            (dropped_result(text), 0)
        } else if self.make_room(&mut entries, size) {
            (payload, size)
        } else {
            let text = format!(
                "The task's result ({size} bytes) was dropped: tasks waiting for input hold the \
                 room this server keeps for its tasks ({} bytes, max_task_bytes).",
                self.max_bytes
            );
            (dropped_result(text), 0)
        };
        let Some(entry) = entries.get_mut(task_id) else {
            return;
        };
        entry.bytes = kept;
        let now = Instant::now();
        entry.task.status = payload.status();
        entry.task.last_updated_at = current_timestamp();
        // Kept `keep` past its end: the TTL from creation grows to match.
        entry.task.ttl_ms = Some(duration_ms(now.duration_since(entry.created) + self.keep));
        entry.end = Some((payload, now));
    }

    /// `tasks/get`.
    pub(crate) fn get(&self, task_id: &str) -> Result<DetailedTask, ErrorData> {
        let mut entries = self.lock()?;
        self.sweep(&mut entries);
        entries
            .get(task_id)
            .map(Entry::detailed)
            .ok_or_else(|| unknown(task_id))
    }

    /// `tasks/cancel`: cancels the call (an ended task stays as it ended).
    pub(crate) fn cancel(&self, task_id: &str) -> Result<(), ErrorData> {
        let mut entries = self.lock()?;
        self.sweep(&mut entries);
        let entry = entries.get(task_id).ok_or_else(|| unknown(task_id))?;
        entry.cancel.cancel();
        Ok(())
    }

    /// `tasks/update`: the client's answers to the task's outstanding
    /// requests. An answer to a key that is not outstanding is ignored (the
    /// spec's rule); each must be an object (-32602 naming the key). Once
    /// every request has its answer the tool runs again with them.
    pub(crate) fn update(&self, task_id: &str, responses: InputResponses) -> Result<(), ErrorData> {
        super::input::check_responses(&responses)?;
        let mut entries = self.lock()?;
        self.sweep(&mut entries);
        let entry = entries.get_mut(task_id).ok_or_else(|| unknown(task_id))?;
        let Some(waiting) = &entry.waiting else {
            return Ok(());
        };
        // The answers to outstanding requests take room until the last one
        // comes (then they go to the tool's next round).
        let need: usize = responses
            .iter()
            .filter(|(key, _)| waiting.requests.contains_key(*key))
            .map(|(key, answer)| key.len() + json_size(answer))
            .sum();
        if need > 0 && !self.make_room(&mut entries, need) {
            return Err(ErrorData::invalid_params(
                format!(
                    "tasks/update refused: its answers ({need} bytes) find no room, this server \
                     keeps at most {} bytes for its tasks (max_task_bytes); answer in smaller parts \
                     or cancel a task waiting for input",
                    self.max_bytes
                ),
                None,
            ));
        }
        let entry = entries.get_mut(task_id).ok_or_else(|| unknown(task_id))?;
        entry.bytes = entry.bytes.saturating_add(need);
        let Some(waiting) = &mut entry.waiting else {
            return Ok(());
        };
        for (key, answer) in responses {
            if waiting.requests.remove(&key).is_some() {
                if let Some(tool_key) = waiting.keys.remove(&key) {
                    waiting.answers.insert(tool_key, answer);
                }
            }
        }
        if waiting.requests.is_empty() {
            let answers = std::mem::take(&mut waiting.answers);
            if let Some(done) = waiting.done.take() {
                let _ = done.send(answers);
            }
            entry.waiting = None;
            entry.bytes = 0;
            entry.task.status = TaskStatus::Working;
            entry.task.last_updated_at = current_timestamp();
        }
        Ok(())
    }
}

/// A task's end with the call's result (a tool error included); `failed`
/// if it cannot be rendered.
fn completed(result: &ToolResult) -> TaskPayload {
    match crate::result::render(result) {
        Ok(rendered) => TaskPayload::Completed {
            result: to_object(&rendered),
        },
        Err(e) => TaskPayload::Failed {
            error: to_object(&e),
        },
    }
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `value` as a JSON object (empty if it does not serialize as one).
fn to_object(value: &impl serde::Serialize) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_task_id_is_named_in_the_error_and_a_long_one_cut() {
        let tasks = Tasks::new(0, 0, 0);
        let e = tasks.get("nope").err().map(|e| e.message.to_string());
        assert!(
            e.as_deref().is_some_and(|m| m.contains("\"nope\"")),
            "{e:?}"
        );
        let long = "x".repeat(10_000);
        let e = tasks.cancel(&long).err().map(|e| e.message.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|m| m.len() < 300 && m.contains("...")),
            "{e:?}"
        );
        let e = tasks
            .update("nope", InputResponses::new())
            .err()
            .map(|e| e.code.0);
        assert_eq!(e, Some(-32602));
    }

    #[test]
    fn the_suggested_poll_interval_grows_with_the_tasks_age_within_bounds() {
        assert_eq!(poll_interval_ms(Duration::ZERO), MIN_POLL_MS);
        assert_eq!(poll_interval_ms(Duration::from_millis(800)), 200);
        assert_eq!(poll_interval_ms(Duration::from_secs(3600)), MAX_POLL_MS);
    }

    #[test]
    fn a_tool_runs_as_a_task_only_if_it_allows_it_and_the_request_declares_the_extension() {
        assert!(!as_task(TaskSupport::Forbidden, true).unwrap_or(true));
        assert!(!as_task(TaskSupport::Forbidden, false).unwrap_or(true));
        assert!(as_task(TaskSupport::Optional, true).unwrap_or(false));
        assert!(!as_task(TaskSupport::Optional, false).unwrap_or(true));
        assert!(as_task(TaskSupport::Required, true).unwrap_or(false));
        let e = as_task(TaskSupport::Required, false)
            .err()
            .map(|e| serde_json::to_value(&e).unwrap_or_default());
        let e = e.unwrap_or_default();
        assert_eq!(e["code"], -32021, "{e}");
        assert!(
            e["data"]["requiredCapabilities"]["extensions"]
                .get("io.modelcontextprotocol/tasks")
                .is_some(),
            "{e}"
        );
    }
}
