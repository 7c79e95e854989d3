//! Approval: calls of tools that require it wait for the host's yes or no.

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, LazyLock, Mutex};

use super::run::PendingRun;
use crate::call::Outcome;
use crate::error::Error;
use crate::handles::HandleTable;

/// Decides calls of tools flagged `REQUIRES_APPROVAL`. Receives each such call
/// and must approve or deny it exactly once, now or later, from any thread.
pub type Approver = Arc<dyn Fn(Approval) + Send + Sync>;

static HANDLES: LazyLock<HandleTable<ApprovalCell>> = LazyLock::new(HandleTable::new);

pub(crate) struct ApprovalCell {
    run: Mutex<Option<PendingRun>>,
    /// Id, tool name and arguments text, each followed by a NUL for C hosts.
    id_z: String,
    name_z: String,
    arguments_z: String,
    handle: AtomicUsize,
}

impl ApprovalCell {
    pub(crate) fn new(run: PendingRun) -> Arc<ApprovalCell> {
        let id_z = format!("{}\0", run.id);
        let name_z = format!("{}\0", run.name);
        let arguments_z = format!("{}\0", run.arguments);
        Arc::new(ApprovalCell {
            run: Mutex::new(Some(run)),
            id_z,
            name_z,
            arguments_z,
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

/// A call waiting for approval, as the approver sees it.
#[derive(Clone)]
pub struct Approval {
    pub(crate) cell: Arc<ApprovalCell>,
}

fn without_nul(s: &str) -> &str {
    &s[..s.len() - 1]
}

impl Approval {
    pub fn id(&self) -> &str {
        without_nul(&self.cell.id_z)
    }
    pub fn tool(&self) -> &str {
        without_nul(&self.cell.name_z)
    }
    /// The validated arguments (defaults filled) as compact JSON.
    pub fn arguments_text(&self) -> &str {
        without_nul(&self.cell.arguments_z)
    }
    pub fn id_with_nul(&self) -> &str {
        &self.cell.id_z
    }
    pub fn tool_with_nul(&self) -> &str {
        &self.cell.name_z
    }
    pub fn arguments_with_nul(&self) -> &str {
        &self.cell.arguments_z
    }

    fn decided() -> Error {
        Error::AlreadyCompleted("this call was already approved, denied or cancelled".into())
    }

    /// Lets the call run.
    pub fn approve(&self) -> Result<(), Error> {
        let run = self.cell.take().ok_or_else(Self::decided)?;
        run.dispatch();
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
