//! The mount's reader (issue 29): bytes as a mounted server writes them to
//! its stdout, cut in pieces, through the line framer (lines over a small
//! bound, unreadable lines, tool results bounded before they are read, each
//! tools/list page converted and bounded), then the result bound on its own.
//! Input: piece size, line bound and result bound bytes, then the stream.
//!
//! The properties are `capstan::mcp::fuzz::mount_reader`'s (its doc), which
//! tests/fuzz_seeds.rs checks on the seeds in `cargo test` too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = capstan::mcp::fuzz::mount_reader(data) {
        panic!("{broken}");
    }
});
