//! capstan: an embeddable tool runtime for LLM agents.
//!
//! The safe core lives in the modules below; `ffi` is the C ABI over it.

pub mod call;
pub mod error;
pub mod providers;
pub mod schema;
pub mod tool;

pub use call::{Arguments, CallRequest, Outcome, ToolResult};
pub use error::{Error, Result};
pub use tool::{ToolFlags, ToolSpec};
