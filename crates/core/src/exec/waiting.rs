//! A validated call waiting away from the thread that admitted it (for a
//! main thread to pump, for the host's approval), as the queues below the
//! batch hold it: they need not know the batch (`batch::PendingRun` is the
//! one kind there is).

use crate::call::Outcome;

pub(crate) trait Waiting: Send {
    /// Which batch the call belongs to (its address).
    fn batch_key(&self) -> usize;
    fn tool_name(&self) -> &str;
    /// Runs the call on this thread, which does not drive its batch (a main
    /// thread pumping or waiting; a cancellation reporting it).
    fn run_here(self: Box<Self>);
    /// The host approved the call: it goes on from the approving thread.
    fn approved(self: Box<Self>);
    /// Ends the call without running it (denied, cancelled, timed out).
    fn end_unrun(self: Box<Self>, outcome: Outcome, text: String);
}
