//! Tools run as MCP tasks (issue #33): the Tasks extension
//! `io.modelcontextprotocol/tasks` (SEP-2663, the 2026-07-28 revision's
//! tasks), served by capstan's MCP server.
//!
//! A `tools/call` runs as a task when the tool allows it
//! (`McpMeta::task_support`, the MCP `execution.taskSupport`) and the
//! request declares the extension in its client capabilities (per request
//! in `_meta`, or at `initialize` for a 2025-11-25 session): the answer is
//! a `CreateTaskResult` (`resultType: "task"`) at once, the call runs
//! through the executor as any other (validation, approval, timeouts), and
//! `tasks/get` reports it: `working` (with the tool's latest progress as
//! `statusMessage`, and a `pollIntervalMs` of a quarter of the task's age,
//! 50 ms to 1 s), then `completed` with the `CallToolResult` a plain call
//! would have got (a tool error included), `cancelled`, or `failed` (the
//! server stopped). `tasks/cancel` cancels the call's batch: the tool sees
//! `capstan_call_cancelled`. A `Required` tool called without the extension
//! gets -32021 naming it; `Optional` and `Forbidden` ones run as plain calls.
//!
//! The 2025-11-25 revision's own (experimental) tasks, with a `task` param
//! on the request and `tasks/result`/`tasks/list`, are not served: rmcp
//! 3.11 reads neither, and capstan does not declare the `tasks` capability
//! of that revision, so its clients make no task requests.
//!
//! Bounds (README, Limits): at most `max_tasks` tasks are kept per server,
//! running or ended (a call past it gets an error); an ended task is kept
//! `task_keep_ms` after it ended, then forgotten (`tasks/get` answers
//! "unknown task"). Task ids are random v4 UUIDs: whoever has one may poll
//! or cancel its task (the spec's model; the bearer token, if any, still
//! guards every request).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rmcp::model::{
    ClientCapabilities, CreateTaskResult, DetailedTask, JsonObject, Task, TaskPayload, TaskStatus,
};
use rmcp::task_manager::current_timestamp;
use rmcp::ErrorData;
use tokio_util::sync::CancellationToken;

use crate::call::{CallRequest, Outcome};
use crate::exec::{self, ExecOptions};
use crate::progress::{Progress, ProgressListener};
use crate::registry::Registry;
use crate::tool_meta::TaskSupport;

/// Default cap on the tasks one server keeps, running or ended.
pub(crate) const DEFAULT_MAX_TASKS: usize = 1024;
/// Default time an ended task's result is kept (5 minutes).
pub(crate) const DEFAULT_TASK_KEEP_MS: u32 = 300_000;
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
}

struct Entry {
    task: Task,
    /// How the call ended, and when.
    end: Option<(TaskPayload, Instant)>,
    created: Instant,
    /// Cancels the call (`tasks/cancel`; a child of the server's `stopping`).
    cancel: CancellationToken,
}

impl Entry {
    fn detailed(&self) -> DetailedTask {
        let mut task = self.task.clone();
        let payload = match &self.end {
            Some((payload, _)) => payload.clone(),
            None => {
                task.poll_interval_ms = Some(poll_interval_ms(self.created.elapsed()));
                TaskPayload::Working
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
    /// `max` 0 and `keep_ms` 0 mean the defaults.
    pub(crate) fn new(max: usize, keep_ms: u32) -> Tasks {
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

    /// Starts `call` as a task and returns its seed state once `tasks/get`
    /// knows it. `counted` is dropped when the call's result is in (the
    /// server's count of calls in flight); `stopping` cancels the call.
    pub(crate) fn start<C: Send + 'static>(
        self: &Arc<Self>,
        registry: &Registry,
        call: CallRequest,
        mut options: ExecOptions,
        stopping: &CancellationToken,
        counted: C,
    ) -> Result<CreateTaskResult, ErrorData> {
        let task_id = uuid::Uuid::new_v4().to_string();
        let now = current_timestamp();
        let mut task = Task::new(task_id.clone(), TaskStatus::Working, now.clone(), now);
        // At least this long from creation: a task is never forgotten
        // before it ends, nor sooner than `keep` after.
        task.ttl_ms = Some(duration_ms(self.keep));
        task.poll_interval_ms = Some(MIN_POLL_MS);
        let cancel = stopping.child_token();
        {
            let mut entries = self.lock()?;
            self.sweep(&mut entries);
            if entries.len() >= self.max {
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
                },
            );
        }
        let (sink, rx) = super::server::one_result(counted);
        // The spec sends no progress notifications for tasks: the latest
        // report is the task's statusMessage instead.
        let this = Arc::downgrade(self);
        let id = task_id.clone();
        options.progress = Some(ProgressListener(Arc::new(move |_, p: &Progress| {
            if let Some(tasks) = this.upgrade() {
                tasks.report(&id, p);
            }
        })));
        let batch = exec::submit(registry, vec![call], &options, sink, None);
        let tasks = self.clone();
        let id = task_id.clone();
        tokio::spawn(async move {
            let mut rx = rx;
            let (result, cancelled) = tokio::select! {
                r = &mut rx => (r, false),
                _ = cancel.cancelled() => {
                    batch.cancel();
                    (rx.await, true)
                }
            };
            // Cancelled before its result was in: the task is cancelled,
            // whatever the tool returned on seeing it (as a cancelled plain
            // call gets no answer).
            let payload = match result {
                Ok(_) if cancelled => TaskPayload::Cancelled,
                Ok(result) if result.outcome == Outcome::Cancelled => TaskPayload::Cancelled,
                Ok(result) => match super::server::render(&result) {
                    Ok(rendered) => TaskPayload::Completed {
                        result: to_object(&rendered),
                    },
                    Err(e) => TaskPayload::Failed {
                        error: to_object(&e),
                    },
                },
                Err(_) => TaskPayload::Failed {
                    error: to_object(&ErrorData::internal_error(
                        "the call ended without result",
                        None,
                    )),
                },
            };
            tasks.end(&id, payload);
        });
        Ok(CreateTaskResult::new(task))
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

    /// `tasks/update`: a capstan tool never waits for input, so there is
    /// no outstanding request to answer; the responses are ignored, as the
    /// spec says of keys that are not outstanding.
    pub(crate) fn update(&self, task_id: &str) -> Result<(), ErrorData> {
        let mut entries = self.lock()?;
        self.sweep(&mut entries);
        match entries.contains_key(task_id) {
            true => Ok(()),
            false => Err(unknown(task_id)),
        }
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
        let tasks = Tasks::new(0, 0);
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
        let e = tasks.update("nope").err().map(|e| e.code.0);
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
