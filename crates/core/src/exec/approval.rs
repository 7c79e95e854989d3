//! Approval: calls of tools that require it wait for the host's yes or no.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use super::waiting::Waiting;
use crate::call::Outcome;
use crate::error::Error;
use crate::handles::HandleTable;

/// Decides calls of tools flagged `REQUIRES_APPROVAL`. Receives each such call
/// and must approve or deny it exactly once, now or later, from any thread.
pub type Approver = Arc<dyn Fn(Approval) + Send + Sync>;

static HANDLES: LazyLock<HandleTable<ApprovalCell>> = LazyLock::new(HandleTable::new);

pub(crate) struct ApprovalCell {
    run: Mutex<Option<Box<dyn Waiting>>>,
    id: String,
    name: String,
    arguments: String,
    /// What a binding keeps with the approval (see `Approval::binding_data`).
    binding: OnceLock<Box<dyn Any + Send + Sync>>,
    handle: AtomicUsize,
}

impl ApprovalCell {
    /// The call `run` (`id` of tool `name`, with its validated arguments as
    /// compact JSON) waiting for a decision.
    pub(crate) fn new(
        id: String,
        name: String,
        arguments: String,
        run: Box<dyn Waiting>,
    ) -> Arc<ApprovalCell> {
        Arc::new(ApprovalCell {
            id,
            name,
            arguments,
            run: Mutex::new(Some(run)),
            binding: OnceLock::new(),
            handle: AtomicUsize::new(0),
        })
    }

    /// Takes the waiting call: exactly one decision (or cancellation) gets it.
    fn take(&self) -> Option<Box<dyn Waiting>> {
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
                self.name
            );
            run.end_unrun(Outcome::Timeout, text);
        }
    }

    /// Reports the call cancelled if it is still waiting for a decision.
    pub(crate) fn cancel(&self) {
        if let Some(run) = self.take() {
            run.end_unrun(
                Outcome::Cancelled,
                "Cancelled while waiting for approval.".into(),
            );
        }
    }
}

/// Hands the call waiting in `cell` to `approver`, on this thread: the
/// approval step of a call's way through (`batch::pipeline`). The call goes
/// on from the decision (`Approval::approve`, `deny`); an approver that
/// panics denies it.
pub(crate) fn ask(approver: &Approver, cell: Arc<ApprovalCell>) {
    let approval = Approval { cell };
    if catch_unwind(AssertUnwindSafe(|| approver(approval.clone()))).is_err() {
        let _ = approval.deny("the approver failed");
    }
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
        run.approved();
        Ok(())
    }

    /// Refuses the call: its result is `denied`, with `reason` for the model.
    pub fn deny(&self, reason: &str) -> Result<(), Error> {
        let run = self.cell.take().ok_or_else(Self::decided)?;
        let name = &self.cell.name;
        let text = if reason.trim().is_empty() {
            format!("The user denied this call of \"{name}\"; it was not run.")
        } else {
            format!("The user denied this call of \"{name}\": {reason}")
        };
        run.end_unrun(Outcome::Denied, text);
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
