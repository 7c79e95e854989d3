//! Approval: calls of tools that require it wait for the host's yes or no.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{fence, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use super::batch::{BatchInner, Origin};
use super::run::PendingRun;
use super::state::ExecState;
use crate::call::Outcome;
use crate::error::Error;
use crate::handles::HandleTable;
use crate::registry::{replace_hook, Registry};

/// Decides calls of tools flagged `REQUIRES_APPROVAL`. Receives each such call
/// and must approve or deny it exactly once, now or later, from any thread.
pub type Approver = Arc<dyn Fn(Approval) + Send + Sync>;

impl Registry {
    /// Sets (or with `None` removes) the approver: it receives every call of a
    /// tool flagged `REQUIRES_APPROVAL` that the batch did not pre-approve.
    /// Without one, such calls are `denied`. The replaced approver is dropped
    /// once its last invocation returned (see `set_event_hook`).
    pub fn set_approver(&self, approver: Option<Approver>) -> Result<(), Error> {
        let state = ExecState::of(self);
        replace_hook(self, &state.approver, approver, |_| {})
    }
}

static HANDLES: LazyLock<HandleTable<ApprovalCell>> = LazyLock::new(HandleTable::new);

pub(crate) struct ApprovalCell {
    run: Mutex<Option<PendingRun>>,
    id: String,
    name: String,
    arguments: String,
    /// What a binding keeps with the approval (see `Approval::binding_data`).
    binding: OnceLock<Box<dyn Any + Send + Sync>>,
    handle: AtomicUsize,
}

impl ApprovalCell {
    fn new(run: PendingRun) -> Arc<ApprovalCell> {
        Arc::new(ApprovalCell {
            id: run.id.clone(),
            name: run.name.clone(),
            arguments: run.arguments.to_string(),
            run: Mutex::new(Some(run)),
            binding: OnceLock::new(),
            handle: AtomicUsize::new(0),
        })
    }

    /// Takes the waiting call: exactly one decision (or cancellation) gets it.
    fn take(&self) -> Option<PendingRun> {
        let run = self.run.lock().ok()?.take()?;
        HANDLES.withdraw(&self.handle);
        Some(run)
    }

    /// Reports the call timed out if it is still waiting for a decision when
    /// its batch's deadline of `deadline_ms` passes.
    pub(crate) fn expire(&self, deadline_ms: u32) {
        if let Some(run) = self.take() {
            let text = format!(
                "Tool \"{}\" timed out: the batch deadline of {deadline_ms} ms passed while \
                 it waited for approval; it was not run.",
                run.name
            );
            run.finish_unrun(Outcome::Timeout, text);
        }
    }

    /// Reports the call cancelled if it is still waiting for a decision.
    pub(crate) fn cancel(&self) {
        if let Some(run) = self.take() {
            run.finish_unrun(
                Outcome::Cancelled,
                "Cancelled while waiting for approval.".into(),
            );
        }
    }
}

/// The approval step of a call's way through: hands `run` to the registry's
/// approver, or denies it if there is none. The call goes on from the
/// decision (`Approval::approve`, `deny`), or ends at its batch's
/// cancellation or deadline.
pub(crate) fn request(batch: &Arc<BatchInner>, run: PendingRun) {
    let Some(approver) = batch.exec.approver() else {
        let text = format!(
            "Tool \"{}\" requires approval and no approver is set; the call was not run.",
            run.name
        );
        return run.finish_unrun(Outcome::Denied, text);
    };
    let index = run.index;
    let cell = ApprovalCell::new(run);
    batch.watch_approval(index, &cell);
    fence(Ordering::SeqCst);
    if batch.is_cancelled() {
        return cell.cancel();
    }
    if batch.deadline_passed() {
        return cell.expire(batch.deadline_ms());
    }
    let approval = Approval { cell };
    batch.registry.run_callback(|| {
        if catch_unwind(AssertUnwindSafe(|| approver(approval.clone()))).is_err() {
            let _ = approval.deny("the approver failed");
        }
    });
}

/// A call waiting for approval, as the approver sees it.
#[derive(Clone)]
pub struct Approval {
    cell: Arc<ApprovalCell>,
}

impl Approval {
    pub fn id(&self) -> &str {
        &self.cell.id
    }
    pub fn tool(&self) -> &str {
        &self.cell.name
    }
    /// The validated arguments (defaults filled) as compact JSON.
    pub fn arguments_text(&self) -> &str {
        &self.cell.arguments
    }

    /// Data a binding keeps with the approval for as long as it lives (the C
    /// ABI's NUL-terminated copies of its texts): made by `init` on first
    /// use; `None` if a `T` is not what the first use stored.
    pub fn binding_data<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> Option<&T> {
        self.cell
            .binding
            .get_or_init(|| Box::new(init()))
            .downcast_ref::<T>()
    }

    fn decided() -> Error {
        Error::AlreadyCompleted("this call was already approved, denied or cancelled".into())
    }

    /// Lets the call run.
    pub fn approve(&self) -> Result<(), Error> {
        let run = self.cell.take().ok_or_else(Self::decided)?;
        let batch = run.batch.clone();
        batch.dispatch_pending(run, Origin::Decision);
        Ok(())
    }

    /// Refuses the call: its result is `denied`, with `reason` for the model.
    pub fn deny(&self, reason: &str) -> Result<(), Error> {
        let run = self.cell.take().ok_or_else(Self::decided)?;
        let text = if reason.trim().is_empty() {
            format!(
                "The user denied this call of \"{}\"; it was not run.",
                run.name
            )
        } else {
            format!("The user denied this call of \"{}\": {reason}", run.name)
        };
        run.finish_unrun(Outcome::Denied, text);
        Ok(())
    }

    /// A handle a C host can pass around; resolves until decided.
    pub fn handle(&self) -> Result<usize, Error> {
        let cell = &self.cell;
        let decided = || cell.run.lock().map(|r| r.is_none()).unwrap_or(true);
        HANDLES
            .handle_in(&cell.handle, cell, decided)
            .ok_or_else(|| Error::Internal("too many pending approvals".into()))
    }

    pub fn from_handle(handle: usize) -> Result<Approval, Error> {
        HANDLES
            .get(handle)
            .map(|cell| Approval { cell })
            .ok_or_else(|| {
                Error::StaleHandle(
                "approval handle is not live: the call was already approved, denied or cancelled"
                    .into(),
            )
            })
    }
}
