//! Streaming: a provider's streamed response in, at any split of its bytes;
//! text deltas and tool calls out as they complete, each call started the
//! moment its arguments are whole when the host allows it (early dispatch).
//!
//! Layers: `sse` frames the bytes into events; one assembler per provider
//! turns events into text deltas and calls (each module documents its event
//! format and when a call counts as complete); [`Stream`] dispatches calls,
//! keeps their results in call order, bounds memory and reports the end.
//!
//! Rules (the C header states them again for `capstan_stream_*`):
//! - A call is never run before its arguments are complete. A call the
//!   response cut (token limit, content filter, input that is not whole
//!   JSON) is never run: it gets an `invalid_arguments` error result saying
//!   why, in its place, and `cut_calls` lists it.
//! - A body that ends without the response's closing event (a dropped
//!   connection) is `Error::StreamTruncated`: the calls not started never
//!   run; calls already started finish and deliver their results first.
//! - A provider error event is `Error::ProviderError`, read by the
//!   non-streamed parser of the format (same kind and message).
//! - Bytes held at once (the line being read, the event being built,
//!   arguments and text kept for the end) are capped: past the cap the
//!   stream fails with `Error::StreamTooLarge`.
//! - Every error is sticky: later feeds and the finish return it again.

mod anthropic;
mod emit;
mod gemini;
mod launch;
mod openai_chat;
mod openai_responses;
mod sse;

use std::sync::Arc;

use serde_json::{json, Value};

pub use emit::CutCall;
pub use launch::Control;

use crate::providers::{self, Format};
use capstan_core::call::{results_to_json, CallRequest, Outcome, ToolResult};
use capstan_core::error::Error;
use capstan_core::exec::ExecOptions;
use capstan_core::registry::Registry;
use emit::{Assembler, Emit};
use launch::Launcher;

/// How a stream runs its calls.
#[derive(Clone, Debug, Default)]
pub struct StreamOptions {
    /// How calls run (limit, timeouts, approvals...). `limit` also caps the
    /// calls started early and still running (the others start, in order,
    /// when one ends, or at `finish`); `parallel: false` starts a call early
    /// only when every earlier call has finished.
    pub exec: ExecOptions,
    /// Start each call as soon as its arguments are complete, unless its
    /// tool is flagged `WAIT_FOR_RESPONSE`. False: every call starts at
    /// `finish`, as `run_turn` would run them.
    pub early_dispatch: bool,
    /// Cap on the bytes held at once (0 = `DEFAULT_MAX_BUFFERED`, the C
    /// ABI's `CAPSTAN_STREAM_MAX_BUFFERED`).
    pub max_buffered: usize,
}

/// The cap on the bytes a stream holds at once unless set (16 MiB).
pub const DEFAULT_MAX_BUFFERED: usize = 16 * 1024 * 1024;

/// Receives a result: the call's position in the response, and its result.
/// Runs on the thread that finished the call, possibly several at once.
pub type ResultFn = Arc<dyn Fn(usize, &ToolResult) + Send + Sync>;
/// Receives a text delta, on the thread feeding the stream.
pub type TextFn = Box<dyn FnMut(&str) + Send>;

/// What `finish` gives: the response's calls and what to send back.
#[derive(Clone, Debug, PartialEq)]
pub struct Finished {
    /// Every call of the response, in order (cut ones with the arguments
    /// that arrived, as text).
    pub calls: Vec<CallRequest>,
    /// One result per call, in call order.
    pub results: Vec<ToolResult>,
    /// Positions of the calls the response cut (never run).
    pub cut: Vec<usize>,
    /// The text of the response (every text delta joined).
    pub text: String,
    /// The provider's stop / finish reason, if it gave one.
    pub stop_reason: Option<String>,
    /// The stream was cancelled before it finished.
    pub cancelled: bool,
}

impl Finished {
    /// `{"calls", "results", "messages", "text", "stop_reason", "cut_calls",
    /// "cancelled"}`; `messages` are the results as format `fmt` takes them.
    pub fn to_json(&self, fmt: Format) -> Value {
        json!({
            "calls": self.calls.iter().map(CallRequest::to_json).collect::<Vec<_>>(),
            "results": results_to_json(&self.results),
            "messages": providers::format_results(fmt, &self.results),
            "text": self.text,
            "stop_reason": self.stop_reason,
            "cut_calls": self.cut,
            "cancelled": self.cancelled,
        })
    }
}

/// One streamed response being read.
pub struct Stream {
    framer: sse::Framer,
    state: State,
    /// The first error, returned again by every later feed and the finish.
    failed: Option<Error>,
    finished: bool,
}

struct State {
    fmt: Format,
    options: StreamOptions,
    assembler: Box<dyn Assembler>,
    emit: Emit,
    on_text: Option<TextFn>,
    /// By position: the complete call, or the cut one.
    calls: Vec<Option<CallRequest>>,
    cut: Vec<Option<CutCall>>,
    /// By position: started, held for a free slot, or given its result.
    started: Vec<bool>,
    launcher: Arc<Launcher>,
    control: Arc<Control>,
    text: String,
    /// Bytes of complete and cut calls (plus [`CALL_OVERHEAD`] each) and
    /// of `text`.
    kept: usize,
    /// Sequential early dispatch: the first position not started yet.
    next_in_order: usize,
}

/// What a call kept by a stream counts against the cap besides its id,
/// name and arguments: the bookkeeping of one call (so that a flood of
/// empty calls reaches the cap too).
pub(crate) const CALL_OVERHEAD: usize = 64;

/// The length of a call's arguments as text, without serializing a value twice.
fn arguments_len(call: &CallRequest) -> usize {
    match &call.arguments {
        capstan_core::call::Arguments::Text(t) => t.len(),
        capstan_core::call::Arguments::Value(v) => v.to_string().len(),
    }
}

fn assembler_for(fmt: Format) -> Result<Box<dyn Assembler>, Error> {
    Ok(match fmt {
        Format::OpenAiChat => Box::<openai_chat::Chat>::default(),
        Format::OpenAiResponses => Box::<openai_responses::Responses>::default(),
        Format::Anthropic => Box::<anthropic::Messages>::default(),
        Format::Gemini => Box::<gemini::Gemini>::default(),
        other => {
            return Err(Error::InvalidArgument(format!(
                "format {} has no stream: use openai_chat, openai_responses, anthropic or gemini",
                other.name()
            )))
        }
    })
}

impl Stream {
    /// A stream of a response in `fmt` (the four provider formats).
    pub fn new(
        fmt: Format,
        options: StreamOptions,
        on_text: Option<TextFn>,
        on_result: Option<ResultFn>,
    ) -> Result<Stream, Error> {
        let assembler = assembler_for(fmt)?;
        let launcher = Launcher::new(options.exec.clone(), on_result);
        let control = launcher.control.clone();
        Ok(Stream {
            framer: sse::Framer::default(),
            state: State {
                fmt,
                options,
                assembler,
                emit: Emit::default(),
                on_text,
                calls: Vec::new(),
                cut: Vec::new(),
                started: Vec::new(),
                launcher,
                control,
                text: String::new(),
                kept: 0,
                next_in_order: 0,
            },
            failed: None,
            finished: false,
        })
    }

    pub fn control(&self) -> Arc<Control> {
        self.state.control.clone()
    }

    pub fn format(&self) -> Format {
        self.state.fmt
    }

    /// Reads the next bytes of the body. Text deltas go to the text sink
    /// before this returns; complete calls start (early dispatch).
    pub fn feed(&mut self, registry: &Registry, bytes: &[u8]) -> Result<(), Error> {
        if self.finished {
            return Err(Error::WrongContext(
                "the stream was already finished".into(),
            ));
        }
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.state.control.is_cancelled() {
            return Err(Error::WrongContext("the stream was cancelled".into()));
        }
        let state = &mut self.state;
        let fed = self
            .framer
            .feed(bytes, &mut |event| {
                state.event(registry, &event.name, &event.data)
            })
            .and_then(|()| {
                let held = self.framer.buffered() + self.state.held();
                self.state.check_cap(held)
            });
        if let Err(e) = &fed {
            self.failed = Some(e.clone());
        }
        fed
    }

    /// The body ended: waits for every call's result and returns them, in
    /// call order. Calls not started yet start now. Runs the host's result
    /// callback for each result not yet delivered. Whatever it returns, no
    /// result callback runs after it.
    pub fn finish(&mut self, registry: &Registry) -> Result<Finished, Error> {
        if self.finished {
            return Err(Error::WrongContext(
                "the stream was already finished".into(),
            ));
        }
        self.finished = true;
        if let Some(e) = self.failed.take() {
            self.state.unhold();
            self.state.control.wait_all();
            return Err(e);
        }
        let state = &mut self.state;
        let ended = self
            .framer
            .end(&mut |event| state.event(registry, &event.name, &event.data));
        if let Err(e) = ended {
            self.state.unhold();
            self.state.control.wait_all();
            return Err(e);
        }
        self.state.finish(registry)
    }
}

impl State {
    fn held(&self) -> usize {
        self.kept
            + self.assembler.buffered()
            + self.emit.stop_reason.as_ref().map_or(0, String::len)
    }

    fn check_cap(&self, held: usize) -> Result<(), Error> {
        let cap = match self.options.max_buffered {
            0 => DEFAULT_MAX_BUFFERED,
            n => n,
        };
        if held > cap {
            return Err(Error::StreamTooLarge(format!(
                "the stream holds {held} bytes (partial line or event, arguments, text), over its cap of {cap}"
            )));
        }
        Ok(())
    }

    fn event(&mut self, registry: &Registry, name: &str, data: &str) -> Result<(), Error> {
        self.assembler.event(name, data, &mut self.emit)?;
        self.drain(registry)?;
        self.check_cap(self.held() + data.len())
    }

    fn place(&mut self, position: usize) {
        if self.calls.len() <= position {
            self.calls.resize(position + 1, None);
            self.cut.resize(position + 1, None);
            self.started.resize(position + 1, false);
        }
    }

    fn drain(&mut self, registry: &Registry) -> Result<(), Error> {
        for delta in std::mem::take(&mut self.emit.text) {
            self.kept += delta.len();
            self.text.push_str(&delta);
            if let Some(f) = self.on_text.as_mut() {
                f(&delta);
            }
        }
        let mut ready = std::mem::take(&mut self.emit.ready);
        ready.sort_by_key(|(position, _)| *position);
        let mut fresh = Vec::with_capacity(ready.len());
        for (position, call) in ready {
            self.place(position);
            self.kept += CALL_OVERHEAD + call.id.len() + call.name.len() + arguments_len(&call);
            self.calls[position] = Some(call);
            fresh.push(position);
        }
        for (position, call) in std::mem::take(&mut self.emit.cut) {
            self.place(position);
            self.kept += CALL_OVERHEAD
                + call.id.len()
                + call.name.len()
                + call.arguments.len()
                + call.reason.len();
            self.cut[position] = Some(call);
        }
        for (position, added, more) in std::mem::take(&mut self.emit.revised) {
            self.place(position);
            if more && self.started[position] {
                return Err(Error::InvalidResponse(format!(
                    "call {position}: more arguments came after they formed a whole JSON object, and the call had started with those"
                )));
            }
            if let Some(call) = self.calls[position].as_mut() {
                self.kept += added.len();
                match &mut call.arguments {
                    capstan_core::call::Arguments::Text(text) => text.push_str(&added),
                    capstan_core::call::Arguments::Value(v) => {
                        call.arguments = capstan_core::call::Arguments::Text(format!("{v}{added}"))
                    }
                }
            }
        }
        if self.options.early_dispatch {
            self.start_ready(registry, &fresh);
        }
        Ok(())
    }

    /// Whether the call at `position` waits for the end of the response.
    fn waits_for_response(&self, registry: &Registry, position: usize) -> bool {
        self.calls[position].as_ref().is_some_and(|call| {
            registry
                .get(&call.name)
                .is_some_and(|t| t.meta.flags.wait_for_response())
        })
    }

    /// Starts the complete calls that may start now (`fresh`: the positions
    /// that just became complete, in order); a call over the limit is held,
    /// in order, and starts when a running call finishes. Each call is
    /// looked at a bounded number of times over the stream, whatever the
    /// number of calls before it.
    fn start_ready(&mut self, registry: &Registry, fresh: &[usize]) {
        if self.control.is_cancelled() {
            return;
        }
        if self.options.exec.parallel {
            for &position in fresh {
                if self.started[position] || self.waits_for_response(registry, position) {
                    continue;
                }
                if let Some(call) = self.calls[position].clone() {
                    self.started[position] = true;
                    self.launcher.start_or_hold(registry, position, call);
                }
            }
            return;
        }
        // Sequential: in order, nothing after a call not yet complete or
        // waiting for the response.
        while self.next_in_order < self.calls.len() {
            let position = self.next_in_order;
            if self.started[position] {
                self.next_in_order += 1;
                continue;
            }
            let Some(call) = self.calls[position].as_ref() else {
                if self.cut[position].is_some() {
                    self.next_in_order += 1;
                    continue;
                }
                return;
            };
            if self.waits_for_response(registry, position) {
                return;
            }
            let call = call.clone();
            self.started[position] = true;
            self.next_in_order += 1;
            self.launcher.start_or_hold(registry, position, call);
        }
    }

    /// Takes back the calls held for a free slot (none starts after this):
    /// they count as not started.
    fn unhold(&mut self) {
        for (position, _) in self.launcher.take_held() {
            self.started[position] = false;
        }
    }

    fn finish(&mut self, registry: &Registry) -> Result<Finished, Error> {
        let cancelled = self.control.is_cancelled();
        if !self.emit.terminal && !cancelled {
            self.unhold();
            self.control.wait_all();
            let started = self.started.iter().filter(|s| **s).count();
            return Err(Error::StreamTruncated(format!(
                "the {} stream ended before the response's last event (connection closed early?): {} call(s) seen, {} started early and finished, the rest not run",
                self.fmt.name(),
                self.emit.opened(),
                started
            )));
        }
        self.assembler.close(&mut self.emit);
        let drained = self.drain(registry);
        self.unhold();
        if let Err(e) = drained {
            self.control.wait_all();
            return Err(e);
        }
        let n = self.emit.opened();
        self.place(n.saturating_sub(1));
        let mut rest = Vec::new();
        for position in 0..n {
            if self.started[position] {
                continue;
            }
            self.started[position] = true;
            match (&self.calls[position], &self.cut[position]) {
                (Some(call), _) if cancelled => {
                    let result = ToolResult::new(
                        &call.id,
                        &call.name,
                        Outcome::Cancelled,
                        "Cancelled: the stream was cancelled before this call started.",
                    );
                    self.launcher.deliver_now(position, result);
                }
                (Some(call), _) => rest.push((position, call.clone())),
                (None, Some(cut)) => {
                    let result = ToolResult::new(
                        &cut.id,
                        &cut.name,
                        Outcome::InvalidArguments,
                        format!("Not run: {}.", cut.reason),
                    );
                    self.launcher.deliver_now(position, result);
                }
                (None, None) => {
                    let result = ToolResult::new(
                        "",
                        "",
                        Outcome::InvalidArguments,
                        "Not run: the response never completed this call.",
                    );
                    self.launcher.deliver_now(position, result);
                }
            }
        }
        if !rest.is_empty() {
            if !self.options.exec.parallel {
                // One by one, in order: after the calls started early.
                self.control.wait_all();
            }
            self.launcher.start_rest(registry, rest);
        }
        self.control.wait_all();
        let Some(stored) = self.launcher.take_results() else {
            return Err(Error::Internal(
                "a stream's results lock was poisoned".into(),
            ));
        };
        let mut calls = Vec::with_capacity(n);
        let mut results = Vec::with_capacity(n);
        let mut cut = Vec::new();
        for position in 0..n {
            let call = match (self.calls[position].take(), self.cut[position].take()) {
                (Some(call), _) => call,
                (None, Some(c)) => {
                    cut.push(position);
                    CallRequest {
                        id: c.id,
                        name: c.name,
                        arguments: capstan_core::call::Arguments::Text(c.arguments),
                    }
                }
                (None, None) => {
                    cut.push(position);
                    CallRequest {
                        id: String::new(),
                        name: String::new(),
                        arguments: capstan_core::call::Arguments::Text(String::new()),
                    }
                }
            };
            let result = stored.get(position).cloned().flatten().unwrap_or_else(|| {
                ToolResult::new(
                    &call.id,
                    &call.name,
                    Outcome::Cancelled,
                    "Cancelled: the call ended without a result.",
                )
            });
            calls.push(call);
            results.push(result);
        }
        // Each result under an id the provider takes (as run_turn does).
        crate::history::ids::answer_under_unique_ids(self.fmt, &mut results);
        Ok(Finished {
            calls,
            results,
            cut,
            text: std::mem::take(&mut self.text),
            stop_reason: self.emit.stop_reason.clone(),
            cancelled,
        })
    }
}
