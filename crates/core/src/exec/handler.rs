//! What runs a tool (`Handler`), and the per-worker tool cache that keeps
//! the registry's lock off the path of a call.

use std::sync::Arc;

use super::cell::Call;
use crate::registry::{Runnable, Shared, Tool};

/// What runs a tool. A C host's callback, a Rust closure, a binding's trampoline.
///
/// `invoke` must complete the call exactly once, now or later, from any thread
/// (`Call::complete`, `Call::fail`). Dropping the handler is the tool's
/// "destroy": it happens once, after the tool is gone and its calls are done.
pub trait Handler: Send + Sync + 'static {
    fn invoke(&self, call: Call);
}

impl<F> Handler for F
where
    F: Fn(Call) + Send + Sync + 'static,
{
    fn invoke(&self, call: Call) {
        self(call)
    }
}

/// The registry keeps a tool's handler for the executor without knowing it.
impl Runnable for Box<dyn Handler> {}

/// Everything needed to register a tool (`Registry::register`).
pub type ToolDef = crate::registry::ToolDef<Box<dyn Handler>>;

/// A worker's last tool, reused while the registry has not changed: most
/// batches call few tools, and the registry's lock is shared by all workers.
#[derive(Default)]
pub(crate) struct ToolCache {
    generation: u64,
    tool: Option<Arc<Tool>>,
}

impl ToolCache {
    pub(crate) fn get(&mut self, registry: &Shared, name: &str) -> Option<&Arc<Tool>> {
        let generation = registry.generation();
        let hit = self.generation == generation
            && self.tool.as_ref().is_some_and(|t| t.meta.name == name);
        if !hit {
            self.tool = Some(registry.get(name)?);
            self.generation = generation;
        }
        self.tool.as_ref()
    }
}
