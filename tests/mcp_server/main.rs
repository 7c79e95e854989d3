//! capstan's MCP server seen from capstan's MCP client: a registry served
//! over streamable HTTP (`HttpServer`) is mounted by another registry, in
//! this process. The official SDKs and the conformance suite check the
//! server from outside (`make mcp-server-test`); these tests pin its rules
//! where `cargo test` (and so mutation testing) reaches them.

#[cfg(feature = "mcp")]
#[path = "../common/wait.rs"]
mod wait;

#[cfg(feature = "mcp")]
mod bounds;
#[cfg(feature = "mcp")]
mod eras;
#[cfg(feature = "mcp")]
mod helpers;
#[cfg(feature = "mcp")]
mod hostile;
#[cfg(feature = "mcp")]
mod http;
#[cfg(feature = "mcp")]
mod input;
#[cfg(feature = "mcp")]
mod lifecycle;
#[cfg(feature = "mcp")]
mod log;
#[cfg(feature = "mcp")]
mod meta;
#[cfg(feature = "mcp")]
mod mount;
#[cfg(feature = "mcp")]
mod parts;
#[cfg(feature = "mcp")]
mod progress;
#[cfg(feature = "mcp")]
mod sse_flood;
#[cfg(feature = "mcp")]
mod tasks;
