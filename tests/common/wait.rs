//! Bounded polling, for tests that wait on other threads or processes.

use std::time::{Duration, Instant};

/// Polls `cond` every 5 ms for at most `limit`; returns whether it held.
pub fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    cond()
}
