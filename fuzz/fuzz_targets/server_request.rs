//! The MCP HTTP server's request path (issue 29): one HTTP request built
//! from the input (method, session, token, headers, body) through capstan's
//! server on loopback: the Host/Origin and token checks, the body cap,
//! rmcp's session and JSON-RPC handling and capstan's rewrites of its
//! refusals into JSON-RPC errors.
//!
//! The input's layout and the properties are
//! `capstan::mcp::fuzz::server_request`'s (its doc), which
//! tests/fuzz_seeds.rs checks on the seeds in `cargo test` too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = capstan::mcp::fuzz::server_request(data) {
        panic!("{broken}");
    }
});
