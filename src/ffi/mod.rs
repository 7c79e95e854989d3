//! The C ABI. Converts, checks and forwards; no logic lives here.
//!
//! Every exported function runs inside `guard` (no panic crosses the
//! boundary), checks every pointer, and writes outputs only on success.
#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)]

mod boundary;
mod call;
mod check;
mod exec;
mod flags;
mod host_batch;
mod init;
mod journal;
mod lent;
mod mcp_client;
#[cfg(feature = "mcp")]
mod mcp_host;
mod mcp_server;
mod misc;
mod observe;
mod providers;
mod registry;
mod runtime;
mod search;
mod stream;
mod threads;
mod types;

pub use call::*;
pub use check::*;
pub use exec::*;
pub use flags::{
    CAPSTAN_EXEC_EARLY_DISPATCH, CAPSTAN_EXEC_WHOLE_TURN, CAPSTAN_HISTORY_GEMINI_SIGNATURES,
    CAPSTAN_HISTORY_REPAIR, CAPSTAN_MCP_INPUT_ELICITATION, CAPSTAN_MCP_INPUT_ROOTS,
    CAPSTAN_MCP_INPUT_SAMPLING, CAPSTAN_SEARCH_REGEX, CAPSTAN_TOOL_DEFERRED, CAPSTAN_TOOL_HOST_RUN,
    CAPSTAN_TOOL_WAIT_FOR_RESPONSE,
};
pub use host_batch::*;
pub use init::*;
pub use journal::*;
pub use mcp_client::*;
pub use mcp_server::*;
pub use misc::*;
pub use observe::*;
pub use providers::*;
pub use registry::*;
pub use runtime::*;
pub use search::*;
pub use stream::*;
pub use threads::*;
pub use types::*;
