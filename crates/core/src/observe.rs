//! What happened: an event hook for each step of a call, and per-tool stats.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use serde_json::{json, Map, Value};

use crate::call::Outcome;

/// The step of a call an event reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// The tool's callback is about to run.
    Started,
    /// The call has its result (any outcome).
    Finished,
    /// The call ran past its deadline (a `Finished` with `timeout` follows).
    TimedOut,
    /// The call was cancelled, before or while running.
    Cancelled,
    /// The running call reported progress (`Event::progress`).
    Progress,
    /// The running call sent a log message (`Event::log`).
    Log,
    /// The call was answered from the journal without running its tool
    /// (a `Finished` follows).
    Replayed,
}

/// One event. Borrowed: valid during the hook only.
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    pub kind: EventKind,
    pub tool: &'a str,
    pub id: &'a str,
    /// Position of the call in its batch.
    pub index: usize,
    /// For `Finished`.
    pub outcome: Option<Outcome>,
    /// For `Finished`: how long the call ran.
    pub duration_us: u64,
    /// For `Progress`: the report.
    pub progress: Option<&'a crate::progress::Progress>,
    /// For `Log`: the level and the message.
    pub log: Option<(crate::log::LogLevel, &'a str)>,
}

pub type EventHook = Arc<dyn Fn(&Event) + Send + Sync>;

/// Latency buckets: four per power of two, from 1 us to about 2^32 us.
const BUCKETS: usize = 132;

fn bucket_of(us: u64) -> usize {
    if us < 4 {
        return us as usize;
    }
    let log = 63 - us.leading_zeros() as usize; // floor(log2), >= 2
    let frac = ((us >> (log - 2)) & 0b11) as usize; // the two bits after the leading one
    (log * 4 + frac).min(BUCKETS - 1)
}

/// The largest value a bucket holds, in microseconds.
fn bucket_limit(b: usize) -> u64 {
    if b < 8 {
        return (b as u64).min(3);
    }
    let log = b / 4;
    let frac = (b % 4) as u64;
    ((4 + frac + 1) << (log - 2)) - 1
}

/// Counters of one tool, striped across threads so that workers do not
/// fight over one cache line; allocated on the tool's first call.
#[derive(Default)]
pub struct ToolStats {
    stripes: OnceLock<Box<[Stripe; STRIPES]>>,
    /// How many of the tool's latest results came within `QUICK_US` of the
    /// call's start, in a row (at most `QUICK_AFTER`; a slower one resets
    /// it). Written only when it changes: a steadily quick tool's calls
    /// only read it.
    quick: AtomicU8,
    /// Calls answered from a journal without running (issue #47).
    replayed: AtomicU64,
}

/// A call is quick when its result comes within this many microseconds.
const QUICK_US: u64 = 20;
/// A tool is quick once this many of its calls in a row were.
const QUICK_AFTER: u8 = 4;

pub(crate) const STRIPES: usize = 4;

#[repr(align(128))]
struct Stripe {
    started: AtomicU64,
    settled: AtomicU64,
    outcomes: [AtomicU64; 7],
    latency: [AtomicU64; BUCKETS],
}

impl Default for Stripe {
    fn default() -> Self {
        Stripe {
            started: AtomicU64::new(0),
            settled: AtomicU64::new(0),
            outcomes: std::array::from_fn(|_| AtomicU64::new(0)),
            latency: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

fn outcome_slot(o: Outcome) -> usize {
    Outcome::ALL.iter().position(|x| *x == o).unwrap_or(0)
}

thread_local! {
    static STRIPE: usize = {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES
    };
}

/// This thread's stripe of a striped counter (`STRIPES` of them): threads
/// counting at once mostly touch different cache lines.
pub(crate) fn thread_stripe() -> usize {
    STRIPE.try_with(|s| *s).unwrap_or(0)
}

impl ToolStats {
    fn mine(&self) -> &Stripe {
        let stripes = self
            .stripes
            .get_or_init(|| Box::new(std::array::from_fn(|_| Stripe::default())));
        &stripes[thread_stripe()]
    }

    fn sum(&self, f: impl Fn(&Stripe) -> &AtomicU64) -> u64 {
        match self.stripes.get() {
            Some(stripes) => stripes.iter().map(|s| f(s).load(Ordering::Relaxed)).sum(),
            None => 0,
        }
    }

    pub(crate) fn replayed(&self) {
        self.replayed.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn started(&self) {
        self.mine().started.fetch_add(1, Ordering::Relaxed);
    }

    /// A call of this tool has its result; `ran` if its callback had started.
    pub(crate) fn finished(&self, outcome: Outcome, duration_us: u64, ran: bool) {
        let stripe = self.mine();
        stripe.outcomes[outcome_slot(outcome)].fetch_add(1, Ordering::Relaxed);
        if ran {
            stripe.settled.fetch_add(1, Ordering::Relaxed);
            stripe.latency[bucket_of(duration_us)].fetch_add(1, Ordering::Relaxed);
            self.note_quick(duration_us <= QUICK_US);
        }
    }

    fn note_quick(&self, quick: bool) {
        let streak = self.quick.load(Ordering::Relaxed);
        let next = if quick {
            streak.saturating_add(1).min(QUICK_AFTER)
        } else {
            0
        };
        if next != streak {
            self.quick.store(next, Ordering::Relaxed);
        }
    }

    /// The tool's latest `QUICK_AFTER` calls each had their result within
    /// `QUICK_US` of their start (so a thread running one is not held long).
    pub(crate) fn is_quick(&self) -> bool {
        self.quick.load(Ordering::Relaxed) >= QUICK_AFTER
    }

    fn percentile(&self, p: f64) -> Option<u64> {
        let counts: Vec<u64> = (0..BUCKETS).map(|b| self.sum(|s| &s.latency[b])).collect();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return None;
        }
        let rank = ((total as f64) * p).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (b, c) in counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(bucket_limit(b));
            }
        }
        None
    }

    pub fn to_json(&self) -> Value {
        let mut outcomes = Map::new();
        let mut calls = 0;
        for o in Outcome::ALL {
            let n = self.sum(|s| &s.outcomes[outcome_slot(o)]);
            calls += n;
            outcomes.insert(o.as_str().into(), Value::from(n));
        }
        let started = self.sum(|s| &s.started);
        let settled = self.sum(|s| &s.settled);
        json!({
            "calls": calls,
            "outcomes": outcomes,
            "in_flight": started.saturating_sub(settled),
            "p50_us": self.percentile(0.50),
            "p99_us": self.percentile(0.99),
            "replayed": self.replayed.load(Ordering::Relaxed),
        })
    }
}

/// The registry's observers: the event hook and the stats of every tool name.
#[derive(Default)]
pub(crate) struct Observer {
    /// Whether `hook` is set; written under `hook`'s write lock.
    pub(crate) has_hook: AtomicBool,
    pub(crate) hook: RwLock<Option<EventHook>>,
    stats: RwLock<HashMap<String, Arc<ToolStats>>>,
}

impl Observer {
    /// Calls the hook, if any, outside every lock.
    pub(crate) fn emit(&self, event: Event<'_>) {
        if !self.has_hook.load(Ordering::Acquire) {
            return;
        }
        let hook = self.hook.read().ok().and_then(|h| h.clone());
        if let Some(hook) = hook {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&event)));
        }
    }

    /// The stats of a tool name, created on first registration and kept
    /// across replacement.
    pub(crate) fn stats_for(&self, name: &str) -> Arc<ToolStats> {
        if let Some(s) = self.stats.read().ok().and_then(|m| m.get(name).cloned()) {
            return s;
        }
        match self.stats.write() {
            Ok(mut m) => m.entry(name.to_owned()).or_default().clone(),
            Err(_) => Arc::new(ToolStats::default()),
        }
    }

    pub(crate) fn stats_json(&self) -> Value {
        let mut entries: Vec<(String, Arc<ToolStats>)> = match self.stats.read() {
            Ok(m) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            Err(_) => Vec::new(),
        };
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut tools = Map::new();
        for (name, stats) in entries {
            tools.insert(name, stats.to_json());
        }
        json!({ "tools": tools })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_limits_bound_their_values() {
        for us in [
            0u64, 1, 2, 3, 4, 5, 6, 7, 8, 100, 1_000, 20_000, 123_456, 10_000_000,
        ] {
            let b = bucket_of(us);
            assert!(
                bucket_limit(b) >= us,
                "{us} -> bucket {b} limit {}",
                bucket_limit(b)
            );
            if b > 0 {
                assert!(bucket_limit(b - 1) < us.max(1), "{us}: bucket {b} too high");
            }
        }
    }

    #[test]
    fn percentiles_come_from_settled_calls() {
        let s = ToolStats::default();
        for _ in 0..99 {
            s.started();
            s.finished(Outcome::Ok, 100, true);
        }
        s.started();
        s.finished(Outcome::ToolError, 50_000, true);
        s.started(); // still running
        let v = s.to_json();
        assert_eq!(v["calls"], 100);
        assert_eq!(v["in_flight"], 1);
        assert_eq!(v["outcomes"]["tool_error"], 1);
        let p50 = v["p50_us"].as_u64().unwrap();
        let p99 = v["p99_us"].as_u64().unwrap();
        assert!((100..=128).contains(&p50), "{p50}");
        assert!((100..=128).contains(&p99), "{p99}");
        let s2 = ToolStats::default();
        for i in 0..100 {
            s2.finished(Outcome::Ok, if i < 98 { 10 } else { 1_000_000 }, true);
        }
        assert!(s2.to_json()["p99_us"].as_u64().unwrap() >= 1_000_000);
        // A latency past the last bucket (hours, or a clock gone wrong)
        // counts in the last bucket.
        let s3 = ToolStats::default();
        s3.finished(Outcome::Ok, u64::MAX, true);
        assert_eq!(
            s3.to_json()["p50_us"].as_u64(),
            Some(bucket_limit(BUCKETS - 1))
        );
    }

    #[test]
    fn a_tool_is_quick_after_enough_quick_results_in_a_row_and_not_after_a_slow_one() {
        let s = ToolStats::default();
        assert!(!s.is_quick(), "a tool never called is not known quick");
        for _ in 0..QUICK_AFTER - 1 {
            s.finished(Outcome::Ok, QUICK_US, true);
        }
        assert!(!s.is_quick(), "one quick result short");
        s.finished(Outcome::Ok, QUICK_US, true);
        assert!(s.is_quick());
        // A call that never ran says nothing about the tool's speed.
        s.finished(Outcome::Cancelled, 10_000_000, false);
        assert!(s.is_quick());
        s.finished(Outcome::Ok, QUICK_US + 1, true);
        assert!(!s.is_quick(), "a slow result ends the streak");
        for _ in 0..QUICK_AFTER - 1 {
            s.finished(Outcome::Ok, 0, true);
        }
        assert!(!s.is_quick(), "the streak starts again from zero");
        s.finished(Outcome::ToolError, 0, true);
        assert!(s.is_quick(), "a quick failure is quick too");
    }
}
