//! Waiting for a batch: for one call or the whole batch, running the
//! batch's main-thread calls meanwhile on a main thread.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::BatchInner;
use crate::exec::main_queue::MainRun;

impl BatchInner {
    /// Blocks until the whole batch is done or `deadline` passes.
    pub(crate) fn wait_done(&self, deadline: Option<Instant>) -> bool {
        self.wait_on(&self.waiters.all, deadline, || self.is_finished())
    }

    /// Blocks until `cond` holds or `deadline` passes; returns `cond()`.
    pub(crate) fn wait_until(&self, deadline: Option<Instant>, cond: impl Fn() -> bool) -> bool {
        self.wait_on(&self.waiters.one, deadline, cond)
    }

    /// Waits for `cond`. On a main thread of the registry (one that ever
    /// pumped) it runs this batch's main-thread calls itself meanwhile: no
    /// one else would, since the thread that pumps is the one waiting here.
    fn wait_on(
        &self,
        waiters: &AtomicUsize,
        deadline: Option<Instant>,
        cond: impl Fn() -> bool,
    ) -> bool {
        let main = self.exec.main.is_pump_thread();
        loop {
            if cond() {
                return true;
            }
            if main {
                if let Some(run) = self.take_main() {
                    run.run_here();
                    continue;
                }
            }
            match self.sleep(waiters, deadline, &cond, main) {
                Woke::Met => return true,
                Woke::Expired => return cond(),
                Woke::MainCall => continue,
            }
        }
    }

    /// Sleeps until `cond` holds, `deadline` passes, or (with `main`) a
    /// main-thread call of this batch is queued.
    fn sleep(
        &self,
        waiters: &AtomicUsize,
        deadline: Option<Instant>,
        cond: &impl Fn() -> bool,
        main: bool,
    ) -> Woke {
        waiters.fetch_add(1, Ordering::SeqCst);
        let mut guard = match self.waiters.lock.lock() {
            Ok(g) => g,
            Err(_) => {
                waiters.fetch_sub(1, Ordering::SeqCst);
                return Woke::Expired;
            }
        };
        let woke = loop {
            if cond() {
                break Woke::Met;
            }
            if main && self.has_main() {
                break Woke::MainCall;
            }
            let wait = match deadline {
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        break Woke::Expired;
                    }
                    d - now
                }
                None => Duration::from_secs(3600),
            };
            guard = match self.waiters.progress.wait_timeout(guard, wait) {
                Ok((g, _)) => g,
                Err(_) => {
                    waiters.fetch_sub(1, Ordering::SeqCst);
                    return Woke::Expired;
                }
            };
        };
        drop(guard);
        waiters.fetch_sub(1, Ordering::SeqCst);
        woke
    }

    /// Takes this batch's oldest main-thread call waiting for a pump.
    fn take_main(&self) -> Option<MainRun> {
        self.exec.main.pop_of(self.key())
    }

    fn has_main(&self) -> bool {
        self.exec.main.has_of(self.key())
    }
}

/// Why a waiting thread woke up.
enum Woke {
    Met,
    Expired,
    MainCall,
}
