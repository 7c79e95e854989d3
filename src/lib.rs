//! capstan: an embeddable tool runtime for LLM agents, with a C ABI.
//!
//! This package is the C ABI (`ffi`, the contract is `include/capstan.h`)
//! and the library hosts link. The safe Rust lives in the workspace's
//! crates, re-exported here under the paths they always had:
//! `capstan-core` (tools, schemas, registry, execution, runtime),
//! `capstan-formats` (provider formats, turns, streams, history, tool
//! search) and `capstan-mcp` (the MCP bridge, feature `mcp`).

pub use capstan_core::*;
pub use capstan_formats::{export, history, providers, run_turn, stream, turn};
#[cfg(feature = "mcp")]
pub use capstan_mcp as mcp;

pub mod ffi;
