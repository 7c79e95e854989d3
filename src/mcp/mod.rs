//! The MCP bridge (feature `mcp`, issue #14).

pub mod client;
