//! How to run a batch: the options every entry point takes.

/// Default cap on calls of one batch running at once.
pub const DEFAULT_LIMIT: usize = 8;

/// How to run a batch.
#[derive(Clone, Debug)]
pub struct ExecOptions {
    /// Run calls at the same time (default true). False means one by one, in order.
    pub parallel: bool,
    /// At most this many calls of the batch run at once (0 = default, 8).
    pub limit: usize,
    /// Overrides every tool's own timeout when > 0. A timeout runs from the
    /// call's start (its callback about to run), not from the batch's.
    pub timeout_ms: u32,
    /// Bounds every call of the batch from the moment it is submitted, waits
    /// included (for a free worker, for approval, for a main thread to pump),
    /// when > 0: a call without a result by then ends `timeout`, with a text
    /// saying what it was waiting for.
    pub deadline_ms: u32,
    /// Without a deadline: how long the batch's main-thread calls wait for
    /// a thread to pump the registry, counted from the last one queued, in
    /// ms (0 = 60 s, `PUMP_WAIT_MS`). Past it they end `timeout`, saying
    /// that no thread called `pump`. A deadline replaces it. The C ABI
    /// always has the default (a C host sets `deadline_ms`).
    pub pump_wait_ms: u32,
    /// Drop `null` for optional arguments before validation: the model was
    /// given OpenAI strict-mode schemas, where "omitted" is sent as `null`.
    pub strict_nulls: bool,
    /// Ids of calls the user already approved (tools flagged `REQUIRES_APPROVAL`).
    pub approved: Vec<String>,
    /// `submit` only: start every call on the submitting thread before
    /// returning, without waiting for the ones a tool completes later (async
    /// tools of an event loop). The limit does not apply.
    pub start_inline: bool,
    /// `submit` only: the host will wait for the batch (`Batch::wait` with
    /// no time limit), and its calls start on the waiting thread then
    /// (caller-runs: no hand-off to a pool thread). Pool threads join if
    /// calls are still waiting to start `JOIN_AFTER` (50 us) after the
    /// submit, also when no one waits. Without it (the default) the calls
    /// start on pool threads at once.
    pub start_on_wait: bool,
    /// Hears the progress the batch's calls report (`Call::report_progress`).
    pub progress: Option<crate::progress::ProgressListener>,
    /// Hears the log messages the batch's calls send (`Call::log`).
    pub log: Option<crate::log::LogListener>,
    /// What the caller gave besides the arguments, and what it can be asked
    /// (`Call::input`, `Call::require_input`): an MCP client's answers.
    pub input: Option<std::sync::Arc<crate::input::CallInput>>,
    /// Hears each call whose tool callback returned with the call still
    /// open (the tool completes it later, from another thread or an event
    /// loop): the MCP server makes such a call a task.
    pub on_defer: Option<DeferListener>,
    /// The run (a conversation, a workflow) the calls belong to: with a
    /// journal on the registry (`set_journal`), each call is recorded and
    /// answered under this id plus its own. `None`: no journal is used.
    pub run_id: Option<std::sync::Arc<str>>,
}

/// Hears a call of a batch (its index) whose callback returned before the
/// call was complete. Runs on the thread that ran the callback; must be
/// quick.
#[derive(Clone)]
pub struct DeferListener(pub std::sync::Arc<dyn Fn(usize) + Send + Sync>);

impl std::fmt::Debug for DeferListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeferListener")
    }
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            parallel: true,
            limit: DEFAULT_LIMIT,
            timeout_ms: 0,
            deadline_ms: 0,
            pump_wait_ms: 0,
            strict_nulls: false,
            approved: Vec::new(),
            start_inline: false,
            start_on_wait: false,
            progress: None,
            log: None,
            input: None,
            on_defer: None,
            run_id: None,
        }
    }
}

impl ExecOptions {
    pub(crate) fn workers(&self, calls: usize) -> usize {
        let limit = match (self.parallel, self.limit) {
            (false, _) => 1,
            (true, 0) => DEFAULT_LIMIT,
            (true, n) => n,
        };
        limit.min(calls)
    }
}
