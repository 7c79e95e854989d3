//! capstan: an embeddable tool runtime for LLM agents.
//!
//! The safe core lives in the modules below; `ffi` is the C ABI over it.

pub mod call;
pub mod check;
pub mod error;
pub mod exec;
pub mod ffi;
mod handles;
pub mod history;
pub mod input;
pub mod log;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod observe;
pub mod parts;
pub mod progress;
pub mod providers;
pub mod registry;
pub mod render;
pub mod runtime;
pub mod schema;
pub mod search;
pub mod search_tool;
pub mod stream;
mod suggest;
mod text;
pub mod tool;
pub mod tool_meta;
pub mod turn;

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
pub use turn::run_turn;
