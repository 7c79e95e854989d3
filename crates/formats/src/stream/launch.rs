//! Starting a stream's calls: what other threads reach ([`Control`]), the
//! results kept in call order, and the calls the limit holds back. A held
//! call starts as soon as a running call of the stream finishes (on that
//! call's thread), not at the next event the host feeds.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::ResultFn;
use capstan_core::call::{CallRequest, ToolResult};
use capstan_core::exec::{self, Batch, ExecOptions, Sink};
use capstan_core::registry::Registry;

/// The part of a stream other threads reach: cancellation and its batches.
#[derive(Default)]
pub struct Control {
    cancelled: AtomicBool,
    batches: Mutex<Vec<Arc<Batch>>>,
    held: Mutex<Held>,
    /// Held calls taken off the queue whose batch is not in `batches` yet.
    launching: AtomicUsize,
}

/// Complete calls waiting for a free slot, in the order they became ready.
#[derive(Default)]
struct Held {
    calls: VecDeque<(usize, CallRequest)>,
    /// Where they run; kept only while calls are held.
    registry: Option<Registry>,
    /// No held call starts any more: `finish` took them, or the stream is
    /// being freed.
    closed: bool,
}

impl Control {
    /// Stops the stream: no call starts any more (those not started end
    /// `cancelled` at `finish`), running calls see cancellation, later feeds
    /// fail. Any thread, any time, also inside a sink callback.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        if let Ok(batches) = self.batches.lock() {
            for b in batches.iter() {
                b.cancel();
            }
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// No result callback runs after this returns (the stream is being
    /// freed), and no held call starts.
    pub fn detach(&self) {
        self.close_held();
        if let Ok(batches) = self.batches.lock() {
            for b in batches.iter() {
                b.detach();
            }
        }
    }

    fn held(&self) -> Option<MutexGuard<'_, Held>> {
        self.held.lock().ok()
    }

    /// Closes the queue of held calls and returns them, once no held call
    /// is still on its way into `batches`.
    fn close_held(&self) -> Vec<(usize, CallRequest)> {
        let calls = match self.held() {
            Some(mut held) => {
                held.closed = true;
                held.registry = None;
                held.calls.drain(..).collect()
            }
            None => Vec::new(),
        };
        while self.launching.load(Ordering::SeqCst) > 0 {
            std::thread::yield_now();
        }
        calls
    }

    fn add(&self, batch: Batch) {
        if let Ok(mut batches) = self.batches.lock() {
            if self.is_cancelled() {
                batch.cancel();
            }
            batches.push(Arc::new(batch));
        }
    }

    /// Waits for every batch started so far to hand over all its results.
    /// The list stays in place (a cancel meanwhile reaches every batch); the
    /// lock is not held while waiting.
    pub(super) fn wait_all(&self) {
        let batches: Vec<Arc<Batch>> = match self.batches.lock() {
            Ok(b) => b.clone(),
            Err(_) => return,
        };
        for b in &batches {
            b.wait(None);
        }
    }
}

/// Starts a stream's calls within its limit and keeps their results.
pub(super) struct Launcher {
    pub(super) control: Arc<Control>,
    /// By position.
    results: Mutex<Vec<Option<ToolResult>>>,
    /// Calls started and not yet delivered.
    running: AtomicUsize,
    on_result: Option<ResultFn>,
    exec: ExecOptions,
    /// At most this many calls of the stream run at once.
    limit: usize,
}

impl Launcher {
    pub(super) fn new(exec: ExecOptions, on_result: Option<ResultFn>) -> Arc<Launcher> {
        let limit = match (exec.parallel, exec.limit) {
            (false, _) => 1,
            (true, 0) => exec::DEFAULT_LIMIT,
            (true, n) => n,
        };
        Arc::new(Launcher {
            control: Arc::new(Control::default()),
            results: Mutex::new(Vec::new()),
            running: AtomicUsize::new(0),
            on_result,
            exec,
            limit,
        })
    }

    /// Starts the complete call at `position` now if a slot is free and no
    /// held call is before it; holds it otherwise.
    pub(super) fn start_or_hold(
        self: &Arc<Self>,
        registry: &Registry,
        position: usize,
        call: CallRequest,
    ) {
        {
            let Some(mut held) = self.control.held() else {
                return;
            };
            if held.closed {
                return;
            }
            if !held.calls.is_empty() || self.running.load(Ordering::SeqCst) >= self.limit {
                held.calls.push_back((position, call));
                held.registry.get_or_insert_with(|| registry.clone());
                return;
            }
            self.running.fetch_add(1, Ordering::SeqCst);
        }
        self.start(registry, vec![(position, call)]);
    }

    /// Starts `calls` as one batch (counted in `running` already).
    fn start(self: &Arc<Self>, registry: &Registry, calls: Vec<(usize, CallRequest)>) {
        let (positions, calls): (Vec<usize>, Vec<CallRequest>) = calls.into_iter().unzip();
        let sink = self.sink(move |i| positions.get(i).copied().unwrap_or(usize::MAX));
        let batch = exec::submit(registry, calls, &self.exec, sink, None);
        self.control.add(batch);
    }

    /// Starts held calls while slots are free (after a call finished).
    fn start_held(self: &Arc<Self>) {
        loop {
            let (next, registry) = {
                let Some(mut held) = self.control.held() else {
                    return;
                };
                if held.closed
                    || self.control.is_cancelled()
                    || self.running.load(Ordering::SeqCst) >= self.limit
                {
                    return;
                }
                let (Some(next), Some(registry)) = (held.calls.pop_front(), held.registry.clone())
                else {
                    held.registry = None;
                    return;
                };
                if held.calls.is_empty() {
                    held.registry = None;
                }
                self.running.fetch_add(1, Ordering::SeqCst);
                self.control.launching.fetch_add(1, Ordering::SeqCst);
                (next, registry)
            };
            self.start(&registry, vec![next]);
            self.control.launching.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// The calls still held, for `finish` to run or report: none starts
    /// after this.
    pub(super) fn take_held(&self) -> Vec<(usize, CallRequest)> {
        self.control.close_held()
    }

    /// Starts the calls `finish` runs at the end, as one batch.
    pub(super) fn start_rest(
        self: &Arc<Self>,
        registry: &Registry,
        calls: Vec<(usize, CallRequest)>,
    ) {
        self.running.fetch_add(calls.len(), Ordering::SeqCst);
        self.start(registry, calls);
    }

    /// A batch sink: stores each result at its call's position, hands it to
    /// the host, then starts held calls. `position_of` maps the batch's
    /// index to the position.
    fn sink(
        self: &Arc<Self>,
        position_of: impl Fn(usize) -> usize + Send + Sync + 'static,
    ) -> Sink {
        let me = Arc::downgrade(self);
        Sink::Callback(Box::new(move |index, result| {
            if let Some(me) = me.upgrade() {
                me.deliver(position_of(index), result);
            }
        }))
    }

    /// A result for `position` without running anything (cut, cancelled).
    pub(super) fn deliver_now(self: &Arc<Self>, position: usize, result: ToolResult) {
        self.running.fetch_add(1, Ordering::SeqCst);
        self.deliver(position, result);
    }

    fn deliver(self: &Arc<Self>, position: usize, result: ToolResult) {
        if let Some(f) = &self.on_result {
            f(position, &result);
        }
        if let Ok(mut r) = self.results.lock() {
            if r.len() <= position {
                r.resize(position + 1, None);
            }
            r[position] = Some(result);
        }
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.start_held();
    }

    /// Every result stored so far, by position (taken).
    pub(super) fn take_results(&self) -> Option<Vec<Option<ToolResult>>> {
        self.results
            .lock()
            .ok()
            .map(|mut r| std::mem::take(&mut *r))
    }
}
