//! The MCP bridge (the `capstan` package's feature `mcp`, issue #14): serve
//! a registry over MCP (`server`) and mount MCP servers' tools into a
//! registry (`client`). Above `capstan-core` and `capstan-formats`; the C
//! ABI (`capstan`'s `ffi`) is above it.

mod bounds;
pub mod client;
mod era;
#[doc(hidden)]
pub mod fuzz;
mod input;
mod log;
mod meta;
pub mod oauth;
mod owed;
mod progress;
mod result;
pub mod server;
mod sessions;
mod tasks;
mod wire;
