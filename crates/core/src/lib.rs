//! capstan's core: tools and their JSON Schemas, the registry, the
//! execution of calls (batches, deadlines, approval, the main thread) and
//! the runtime's threads. It knows no provider format (`capstan-formats`),
//! no MCP (`capstan-mcp`) and no C ABI (the `capstan` package): the
//! workspace's dependencies keep it so.
//!
//! `pub` items here are the workspace's own interface between its crates;
//! a host's contract is the C ABI (`include/capstan.h`). Items marked
//! `#[doc(hidden)]` are for capstan's other crates only.

#[doc(hidden)]
pub mod bulk;
pub mod call;
pub mod check;
pub mod error;
pub mod exec;
#[doc(hidden)]
pub mod handles;
pub mod input;
pub mod log;
pub mod observe;
pub mod parts;
pub mod progress;
pub mod registry;
pub mod render;
pub mod runtime;
pub mod schema;
pub mod search;
pub mod search_tool;
#[doc(hidden)]
pub mod suggest;
#[doc(hidden)]
pub mod text;
pub mod tool;
pub mod tool_meta;
#[doc(hidden)]
pub mod wire;

pub use call::{Arguments, CallRequest, Outcome, ToolResult};
pub use error::{Error, Result};
pub use exec::{
    execute, needs_approval, submit, Approval, Approver, Batch, Call, DeferListener, ExecOptions,
    Handler, Sink, ToolDef,
};
pub use observe::{Event, EventKind};
pub use registry::{Registry, RegistryOptions};
pub use render::ContentKind;
pub use tool::{ToolFlags, ToolSpec};
pub use tool_meta::{McpMeta, TaskSupport};
