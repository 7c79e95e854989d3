//! A `tools/call`: its rounds (a tool that asks its client for input runs
//! again with the answers), and, for a tool that may run as a task, the
//! moment it becomes one.
//!
//! A call of a task-supporting tool from a client that declared the Tasks
//! extension starts as a plain call. It becomes a task (the answer is a
//! `CreateTaskResult`, `super::super::tasks`) as soon as its tool's
//! callback returns with the call still open (the tool completes it later,
//! from another thread or an event loop), or once it has run for
//! `TASK_AFTER` without a result (a tool that works inside its callback,
//! one waiting for an approver or a pump). A tool that completes inside its
//! callback answers the request itself: its result, or the
//! `InputRequiredResult` of a tool that asks first and escalates on a later
//! round (the spec's "immediate result" and "MRTR then task" paths).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use super::super::input::{ask_legacy_client, AskBounds, Unanswered};
use super::{one_result, request_id_text, CancelOnDrop, InFlight, State};
use crate::result::render;
use capstan_core::call::{CallRequest, Outcome, ToolResult};
use capstan_core::exec::{self, DeferListener, ExecOptions};
use capstan_core::input::CallInput;
use capstan_core::progress::{Progress, ProgressListener};
use capstan_core::tool_meta::TaskSupport;

/// How long a call that may run as a task runs as a plain call before it
/// becomes one, when its tool has not deferred it sooner.
pub(crate) const TASK_AFTER: Duration = Duration::from_secs(1);

/// How a round ended.
enum Round {
    Done(ToolResult),
    /// Still running, and to become a task: its batch and result.
    Escalated(super::super::tasks::Running),
}

/// Where the progress of a call that may become a task goes: to the
/// requesting client until it is a task, then to the task, which starts
/// with the latest report made before.
#[derive(Default)]
struct Route {
    to: Option<ProgressListener>,
    last: Option<(usize, Progress)>,
}

type SharedRoute = Arc<Mutex<Route>>;

fn routed(route: &SharedRoute) -> ProgressListener {
    let route = route.clone();
    ProgressListener(Arc::new(move |index, p: &Progress| {
        let to = match route.lock() {
            Ok(mut r) => {
                r.last = Some((index, p.clone()));
                r.to.clone()
            }
            Err(_) => None,
        };
        if let Some(to) = to {
            (to.0)(index, p);
        }
    }))
}

/// Sends the rest of the call's progress to `to`, starting with the latest
/// report.
fn reroute(route: &SharedRoute, to: ProgressListener) {
    let last = match route.lock() {
        Ok(mut r) => {
            r.to = Some(to.clone());
            r.last.take()
        }
        Err(_) => None,
    };
    if let Some((index, p)) = last {
        (to.0)(index, &p);
    }
}

/// A receiver that already holds `result`.
fn ready(result: ToolResult) -> tokio::sync::oneshot::Receiver<ToolResult> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let _ = tx.send(result);
    rx
}

/// A 2026-07-28 call whose tool asked for what the client did not declare
/// (its `require_input` refused) and then failed: the spec's answer is
/// MissingRequiredClientCapability (-32021, HTTP 400) naming what it needed,
/// not a tool error (the client can declare it and call again).
fn missing_capabilities(input: &CallInput) -> Option<ErrorData> {
    let missing = input.missing.lock().ok()?;
    if missing.is_empty() {
        return None;
    }
    let required: serde_json::Map<String, Value> = missing
        .iter()
        .map(|capability| ((*capability).to_owned(), Value::Object(Default::default())))
        .collect();
    let required = serde_json::from_value(Value::Object(required)).ok()?;
    Some(ErrorData::missing_required_client_capability(required))
}

/// How much of a deadline is left, in ms: at least 1 (0 would mean none).
fn left_ms(deadline: Instant) -> u32 {
    let left = deadline
        .saturating_duration_since(Instant::now())
        .as_millis();
    u32::try_from(left).unwrap_or(u32::MAX).max(1)
}

/// The end of a call whose legacy client did not answer what its tool asked
/// (the server stopping, or the call's time up): cancelled or timed out,
/// saying which request went unanswered.
fn unanswered(round: &ToolResult, ended: Unanswered) -> ToolResult {
    let (outcome, text) = match ended {
        Unanswered::TimedOut { method } => (
            Outcome::Timeout,
            format!(
                "Tool \"{}\" timed out: the client did not answer its {method} request \
                 within the call's timeout",
                round.name
            ),
        ),
        _ => (
            Outcome::Cancelled,
            format!(
                "Tool \"{}\" was cancelled: the server is stopping",
                round.name
            ),
        ),
    };
    ToolResult::new(&round.id, &round.name, outcome, text)
}

fn escalated(batch: CancelOnDrop, rx: tokio::sync::oneshot::Receiver<ToolResult>) -> Round {
    let batch = batch.into_inner();
    Round::Escalated(super::super::tasks::Running { batch, rx })
}

impl State {
    pub(super) async fn call(
        self: &Arc<Self>,
        mut request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        session_level: &super::super::log::SessionLevel,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.stopping.is_cancelled() {
            return Err(ErrorData::internal_error("the server is stopping", None));
        }
        let name = request.name.to_string();
        // Once the registry is closed (freed by the host: header "Children")
        // its tools are gone; the call ends cancelled as the executor ends
        // it, not as an unknown tool (`close` marks the registry closed
        // before it drops the tools, hence this order).
        let tool = self.registry.get(&name);
        if tool.is_none() && !self.registry.is_closed() {
            // The spec's answer for an unknown tool: a protocol error (-32602).
            let text = self.registry.unknown_tool_text(&name);
            return Err(ErrorData::invalid_params(text, None));
        }
        let support = tool
            .as_ref()
            .map_or(TaskSupport::Forbidden, |t| t.task_support());
        let declared = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        let may_be_task = super::super::tasks::as_task(support, declared)?;
        // A modern client answers what the tool asks in its next request
        // (or, once the call is a task, with `tasks/update`); a legacy
        // session's client is asked by capstan itself.
        let modern = super::super::era::is_modern(&context.meta);
        let mut input =
            super::super::input::call_input(&self.codec, &mut request, context, modern)?;
        let legacy = !modern;
        if legacy {
            input = Some(super::super::input::legacy_input(context));
        }
        let can_ask = input
            .as_ref()
            .map(|i| i.can_ask.clone())
            .unwrap_or_default();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let (log, logs) = super::super::log::requested(context, modern, session_level)
            .map(|min| super::super::log::serve(context, min, &name))
            .unzip();
        let (run_id, call_id) = super::journal::key(&context.meta)?;
        let call = CallRequest::new(
            call_id.unwrap_or_else(|| request_id_text(&context.id)),
            name,
            arguments,
        );
        let (progress, forwarder) = super::super::progress::serve(context).unzip();

        let route: Option<SharedRoute> = may_be_task.then(|| {
            Arc::new(Mutex::new(Route {
                to: progress.clone(),
                last: None,
            }))
        });
        let progress = match &route {
            Some(route) => Some(routed(route)),
            None => progress,
        };
        let mut rounds = 0;
        // `call_timeout_ms` bounds the whole call from its arrival: its
        // rounds and the waits for a legacy client's answers between them.
        let deadline = (self.options.call_timeout_ms > 0).then(|| {
            Instant::now() + Duration::from_millis(u64::from(self.options.call_timeout_ms))
        });
        let tool_timeout_ms = tool.as_ref().map_or(0, |t| t.meta.timeout_ms);
        // The last round's input: what its tool asked and was refused.
        let mut last_input: Option<Arc<CallInput>>;
        let result = loop {
            last_input = input.take().map(Arc::new);
            let options = ExecOptions {
                // A later round gets what is left (the first, all of it:
                // its timeout text names the host's figure).
                deadline_ms: match rounds {
                    0 => self.options.call_timeout_ms,
                    _ => deadline.map_or(0, left_ms),
                },
                progress: progress.clone(),
                log: log.clone(),
                input: last_input.clone(),
                // The journal keys the call's first round only: a later
                // round (with the client's answers) is the same call again.
                run_id: if rounds == 0 { run_id.clone() } else { None },
                ..ExecOptions::default()
            };
            let this_can_ask = options.input.as_ref().map(|i| i.can_ask.clone());
            let result = match self
                .run_round(call.clone(), options, context, may_be_task)
                .await?
            {
                Round::Done(result) => result,
                Round::Escalated(running) => {
                    if let Some(forwarder) = forwarder {
                        forwarder.finish().await;
                    }
                    if let Some(logs) = logs {
                        logs.finish().await;
                    }
                    let next = self.next_rounds(call, progress);
                    let (created, listener) =
                        self.tasks.adopt(running, next, can_ask, &self.stopping)?;
                    if let Some(route) = &route {
                        reroute(route, listener);
                    }
                    return Ok(CallToolResponse::Task(created));
                }
            };
            match (&result.input_required, this_can_ask) {
                (Some(asked), Some(can_ask))
                    if legacy && rounds < super::super::input::MAX_DRIVEN_ROUNDS =>
                {
                    rounds += 1;
                    // Without a call timeout, the tool's own bounds each wait.
                    let until = deadline.or_else(|| {
                        (tool_timeout_ms > 0).then(|| {
                            Instant::now() + Duration::from_millis(u64::from(tool_timeout_ms))
                        })
                    });
                    let bounds = AskBounds {
                        until,
                        gone: &context.ct,
                        stopping: &self.stopping,
                    };
                    match ask_legacy_client(&context.peer, asked, &can_ask, &bounds).await {
                        Ok(answers) => input = Some(answers),
                        Err(Unanswered::Gone) => {
                            // As a cancelled call: no answer is sent.
                            return Err(ErrorData::internal_error("cancelled by the client", None));
                        }
                        Err(ended) => break unanswered(&result, ended),
                    }
                }
                _ => break result,
            }
        };
        if let Some(forwarder) = forwarder {
            forwarder.finish().await;
        }
        if let Some(logs) = logs {
            logs.finish().await;
        }
        if modern && result.outcome == Outcome::ToolError {
            if let Some(error) = last_input.as_deref().and_then(missing_capabilities) {
                return Err(error);
            }
        }
        if let Some(asked) = &result.input_required {
            let answer = if legacy {
                Err(format!(
                    "{} (asked {} rounds in a row: capstan gave up)",
                    result.content,
                    super::super::input::MAX_DRIVEN_ROUNDS + 1
                ))
            } else {
                super::super::input::input_required(&self.codec, &result.name, asked)
            };
            match answer {
                Ok(answer) => return Ok(CallToolResponse::InputRequired(answer)),
                Err(why) => {
                    let failed = ToolResult::new(&result.id, &result.name, Outcome::ToolError, why);
                    return render(&failed).map(CallToolResponse::from);
                }
            }
        }
        render(&result).map(CallToolResponse::from)
    }

    /// What a task runs for each of its later rounds: the call again, with
    /// the round's input, its progress going where `progress` routes it.
    fn next_rounds(
        self: &Arc<Self>,
        call: CallRequest,
        progress: Option<ProgressListener>,
    ) -> super::super::tasks::NextRound {
        let state = self.clone();
        Box::new(move |input: CallInput| {
            let options = ExecOptions {
                deadline_ms: state.options.call_timeout_ms,
                progress: progress.clone(),
                input: Some(Arc::new(input)),
                ..ExecOptions::default()
            };
            let (sink, rx) = one_result(InFlight::enter(&state));
            let batch = exec::submit(&state.registry, vec![call.clone()], &options, sink, None);
            super::super::tasks::Running {
                batch: Some(batch),
                rx,
            }
        })
    }

    /// Runs one round of a call and waits for its result; the client leaving
    /// cancels it (no answer is sent then), the server stopping too (its
    /// result is then the cancellation). With `may_be_task`, a round whose
    /// tool deferred it, or that ran `TASK_AFTER`, is handed back running.
    async fn run_round(
        self: &Arc<Self>,
        call: CallRequest,
        mut options: ExecOptions,
        context: &RequestContext<RoleServer>,
        may_be_task: bool,
    ) -> Result<Round, ErrorData> {
        // Set (before the result is delivered) when the tool defers the call.
        let deferred = Arc::new((AtomicBool::new(false), tokio::sync::Notify::new()));
        if may_be_task {
            let deferred = deferred.clone();
            options.on_defer = Some(DeferListener(Arc::new(move |_| {
                deferred.0.store(true, Ordering::SeqCst);
                deferred.1.notify_one();
            })));
        }
        let (sink, rx) = one_result(InFlight::enter(self));
        let batch = CancelOnDrop(Some(exec::submit(
            &self.registry,
            vec![call],
            &options,
            sink,
            None,
        )));
        let mut rx = rx;
        let escalate = async {
            tokio::select! {
                _ = deferred.1.notified() => {}
                _ = tokio::time::sleep(TASK_AFTER) => {}
            }
        };
        let result = tokio::select! {
            biased;
            r = &mut rx => r,
            _ = context.ct.cancelled() => {
                // The client gave up: the tool sees capstan_call_cancelled; no
                // response is sent for a cancelled request.
                drop(batch);
                return Err(ErrorData::internal_error("cancelled by the client", None));
            }
            _ = self.stopping.cancelled() => {
                batch.cancel();
                rx.await
            }
            _ = escalate, if may_be_task => {
                // A result that came in meanwhile is handed over with it.
                let rx = match rx.try_recv() {
                    Ok(result) => ready(result),
                    Err(_) => rx,
                };
                return Ok(escalated(batch, rx));
            }
        };
        // A call its tool deferred is a task even if its result is in by now
        // (the decision does not depend on how fast that thread was).
        if may_be_task && deferred.0.load(Ordering::SeqCst) {
            if let Ok(result) = result {
                return Ok(escalated(batch, ready(result)));
            }
        }
        result
            .map(Round::Done)
            .map_err(|_| ErrorData::internal_error("the call ended without result", None))
    }
}
