//! A mounted server's tasks (issue #33). A mount declares the Tasks
//! extension (`io.modelcontextprotocol/tasks`), so a server may answer a
//! forwarded `tools/call` with a task handle (`CreateTaskResult`). capstan
//! then drives the task, and the host sees an ordinary call: `tasks/get` at
//! the server's `pollIntervalMs` (kept within `MIN_POLL`..`MAX_POLL`; without
//! one, from `FIRST_POLL` doubling up to `MAX_POLL`) until the task ends;
//! `tasks/cancel` when the capstan call is cancelled or times out or the
//! mount goes away. A task that asks for input (`input_required`) has the
//! host answer (`client::HostInput`): the answers go back with
//! `tasks/update`, each request once, and polling goes on; at most
//! `answer::MAX_ROUNDS` rounds. Without a host that answers, the task is
//! cancelled.

use std::future::Future;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, CancelTaskParams, CreateTaskResult, GetTaskParams, TaskPayload,
    UpdateTaskParams,
};
use rmcp::{Peer, RoleClient};
use serde_json::Value;

/// Bounds on the wait between two `tasks/get` of one task.
const MIN_POLL: Duration = Duration::from_millis(10);
const MAX_POLL: Duration = Duration::from_secs(5);
/// The first wait when the server suggests none (doubled after each poll).
const FIRST_POLL: Duration = Duration::from_millis(50);
/// How long a `tasks/cancel` may take (it is sent after the call ended).
const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);

/// The wait before the next poll: the server's suggestion, within bounds,
/// else twice the last wait (`FIRST_POLL` at first).
fn next_wait(suggested: Option<u64>, last: Option<Duration>) -> Duration {
    match suggested {
        Some(ms) => Duration::from_millis(ms).clamp(MIN_POLL, MAX_POLL),
        None => last.map_or(FIRST_POLL, |d| (d * 2).min(MAX_POLL)),
    }
}

/// Sends `tasks/cancel` on its own (the call does not wait for the ack).
fn cancel(peer: &Peer<RoleClient>, task_id: &str) {
    let peer = peer.clone();
    let params = CancelTaskParams::new(task_id.to_owned());
    tokio::spawn(async move {
        let _ = tokio::time::timeout(CANCEL_TIMEOUT, peer.cancel_task(params)).await;
    });
}

/// Who answers a task's input requests: the host's answerer, for the
/// call of the mounted tool `tool`.
pub(crate) struct Answering<'a> {
    pub(crate) host: &'a super::answer::HostInput,
    pub(crate) tool: &'a str,
}

/// Drives the task `created` to its end: its `CallToolResult`, or why
/// there is none. `stop` resolves (with why) when the call should stop.
pub(crate) async fn drive(
    peer: &Peer<RoleClient>,
    created: CreateTaskResult,
    stop: impl Future<Output = &'static str>,
    answering: Option<Answering<'_>>,
) -> Result<CallToolResult, String> {
    let id = created.task.task_id;
    let mut wait = next_wait(created.task.poll_interval_ms, None);
    // The keys answered so far (a poll may still list them until the
    // server has taken the update in), and how many rounds that took.
    let mut answered = std::collections::BTreeSet::new();
    let mut rounds = 0;
    tokio::pin!(stop);
    loop {
        let polled = tokio::select! {
            polled = async {
                tokio::time::sleep(wait).await;
                peer.get_task(GetTaskParams::new(id.clone())).await
            } => polled,
            why = &mut stop => {
                cancel(peer, &id);
                return Err(format!("the call was cancelled: {why} (task {id} cancelled)"));
            }
        };
        let state = polled.map_err(|e| format!("tasks/get of its task {id} failed: {e}"))?;
        wait = next_wait(state.task.task.poll_interval_ms, Some(wait));
        match state.task.payload {
            TaskPayload::Completed { result } => {
                return serde_json::from_value::<CallToolResult>(Value::Object(result)).map_err(
                    |e| format!("its task {id} ended with a result that is no CallToolResult: {e}"),
                );
            }
            TaskPayload::Failed { error } => {
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no message");
                return Err(format!("its task {id} failed: {message}"));
            }
            TaskPayload::Cancelled => {
                return Err(format!("its task {id} was cancelled by the server"))
            }
            TaskPayload::InputRequired { input_requests } => {
                let Some(answering) = &answering else {
                    cancel(peer, &id);
                    return Err(format!(
                        "its task {id} asks for input (input_required), and this mount's host \
                         does not answer: the task was cancelled"
                    ));
                };
                let new: rmcp::model::InputRequests = input_requests
                    .into_iter()
                    .filter(|(key, _)| !answered.contains(key))
                    .collect();
                if new.is_empty() {
                    continue;
                }
                rounds += 1;
                if rounds > super::answer::MAX_ROUNDS {
                    cancel(peer, &id);
                    return Err(format!(
                        "its task {id} asked for input more than {} times; capstan gave up on \
                         it (the task was cancelled)",
                        super::answer::MAX_ROUNDS
                    ));
                }
                let answers = tokio::select! {
                    answers = answering.host.answer_all(answering.tool, &new) => answers,
                    why = &mut stop => {
                        cancel(peer, &id);
                        return Err(format!("the call was cancelled: {why} (task {id} cancelled)"));
                    }
                };
                let answers = match answers {
                    Ok(answers) => answers,
                    Err(why) => {
                        cancel(peer, &id);
                        return Err(format!(
                            "its task {id} asks for input, and the host could not answer: \
                             {why} (the task was cancelled)"
                        ));
                    }
                };
                answered.extend(new.into_keys());
                peer.update_task(UpdateTaskParams::new(id.clone(), answers))
                    .await
                    .map_err(|e| format!("tasks/update of its task {id} failed: {e}"))?;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_follow_the_servers_interval_within_bounds_else_back_off() {
        assert_eq!(next_wait(Some(250), None), Duration::from_millis(250));
        assert_eq!(next_wait(Some(0), None), MIN_POLL);
        assert_eq!(next_wait(Some(3_600_000), None), MAX_POLL);
        assert_eq!(next_wait(None, None), FIRST_POLL);
        assert_eq!(next_wait(None, Some(FIRST_POLL)), FIRST_POLL * 2);
        assert_eq!(next_wait(None, Some(MAX_POLL)), MAX_POLL);
    }
}
