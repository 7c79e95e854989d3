//! History repair on generated conversations whose every result is known
//! (issue 45): a program of bytes writes calls, results (successes and
//! errors, misplaced, repeated, joined), text and numbers a JSON round trip
//! would rewrite, in each format, bare or in a request body.
//!
//! The properties are `capstan::history::fuzz::repair_results`'s (its doc):
//! every real result survives repair (a success over an error, never a
//! made-up "never finished" in its place), numbers and untouched entries
//! come back byte for byte, and the repair checks clean and is a fixed
//! point. tests/history_rules.rs checks them on the seeds in `cargo test`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = capstan::history::fuzz::repair_results(data) {
        panic!("{broken}");
    }
});
