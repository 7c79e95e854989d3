//! The MCP bridge (feature `mcp`): serve a registry over MCP.

pub mod server;
