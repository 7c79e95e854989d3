//! Caller-runs: the thread that executes a batch runs its calls itself, so
//! pool threads must still join when calls are left waiting behind one of
//! its calls that blocks.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use capstan::exec::live_timers;
use capstan::{
    execute, submit, CallRequest, ExecOptions, Outcome, Registry, Sink, ToolDef, ToolFlags,
};
use serde_json::json;

/// The tests of this binary one at a time: `live_timers` is process-wide.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn calls_waiting_behind_a_blocked_call_still_fan_out_to_the_limit() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let reg = Registry::default();
    let inside = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (i, m) = (inside.clone(), most.clone());
    reg.register(ToolDef {
        name: "gather".into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        // Each call blocks until all four run at once (or 5 s pass): only a
        // batch whose pool threads join behind a blocked caller gets there.
        handler: Box::new(move |c: capstan::Call| {
            let now = i.fetch_add(1, Ordering::SeqCst) + 1;
            m.fetch_max(now, Ordering::SeqCst);
            let until = Instant::now() + Duration::from_secs(5);
            while m.load(Ordering::SeqCst) < 4 && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(1));
            }
            i.fetch_sub(1, Ordering::SeqCst);
            c.complete_text("ok").unwrap();
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    })
    .unwrap();
    let calls: Vec<_> = (0..4)
        .map(|n| CallRequest::new(n.to_string(), "gather", json!({})))
        .collect();
    let options = ExecOptions {
        limit: 4,
        ..ExecOptions::default()
    };
    let results = execute(&reg, calls, &options);
    assert!(
        results.iter().all(|r| r.outcome == Outcome::Ok),
        "{results:?}"
    );
    assert_eq!(most.load(Ordering::SeqCst), 4, "all four ran at once");
}

/// What one batch of `flip` saw.
#[derive(Default)]
struct Round {
    /// The first call was taken (calls start in order, the first by the
    /// batch's watching thread).
    first_taken: AtomicBool,
    first_running: AtomicBool,
    /// Timers armed when the first call began: the join timer, if any.
    timers_at_first: AtomicUsize,
    /// Siblings that started while the first call still ran.
    started_beside_first: AtomicUsize,
    /// Siblings running right now, and the most at once.
    inside: AtomicUsize,
    most: AtomicUsize,
}

/// The round in progress and how long its first call runs (`None`: a
/// probe, every call answers at once).
type Current = Arc<Mutex<Option<(Arc<Round>, Option<Duration>)>>>;

/// A tool answering at once, except during a round (`current` set): the
/// round's first call notes the timers armed and then runs until a sibling
/// starts beside it, at most for the round's duration; the others wait (at
/// most 5 s) until three run at once.
fn flip_registry(current: Current) -> Registry {
    let reg = Registry::default();
    reg.register(ToolDef {
        name: "flip".into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(move |c: capstan::Call| {
            let now = current.lock().unwrap().clone();
            if let Some((round, first_for)) = now {
                flip(&round, first_for);
            }
            c.complete_text("ok").unwrap();
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    })
    .unwrap();
    reg
}

fn flip(round: &Round, first_for: Option<Duration>) {
    let first = !round.first_taken.swap(true, Ordering::SeqCst);
    if first {
        round.timers_at_first.store(live_timers(), Ordering::SeqCst);
    }
    let Some(first_for) = first_for else {
        return;
    };
    if first {
        round.first_running.store(true, Ordering::SeqCst);
        let until = Instant::now() + first_for;
        while round.started_beside_first.load(Ordering::SeqCst) == 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        round.first_running.store(false, Ordering::SeqCst);
        return;
    }
    if round.first_running.load(Ordering::SeqCst) {
        round.started_beside_first.fetch_add(1, Ordering::SeqCst);
    }
    let n = round.inside.fetch_add(1, Ordering::SeqCst) + 1;
    round.most.fetch_max(n, Ordering::SeqCst);
    let until = Instant::now() + Duration::from_secs(5);
    while round.most.load(Ordering::SeqCst) < 3 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    round.inside.fetch_sub(1, Ordering::SeqCst);
}

/// How a round's batch of 4 runs: executed, or submitted with no one
/// waiting (the test waits with a time limit, which runs no call).
#[derive(Clone, Copy)]
enum Runner {
    Execute,
    Submit,
}

struct Flip {
    current: Current,
    reg: Registry,
}

impl Flip {
    fn new() -> Flip {
        let current: Current = Arc::new(Mutex::new(None));
        let reg = flip_registry(current.clone());
        Flip { current, reg }
    }

    fn calls(n: usize) -> Vec<CallRequest> {
        (0..n)
            .map(|k| CallRequest::new(k.to_string(), "flip", json!({})))
            .collect()
    }

    fn round(&self, runner: Runner, n: usize, first_for: Option<Duration>) -> Arc<Round> {
        let options = ExecOptions {
            limit: 4,
            ..ExecOptions::default()
        };
        let round = Arc::new(Round::default());
        *self.current.lock().unwrap() = Some((round.clone(), first_for));
        let results = match runner {
            Runner::Execute => execute(&self.reg, Flip::calls(n), &options),
            Runner::Submit => {
                let (tx, rx) = std::sync::mpsc::channel();
                let tx = Mutex::new(tx);
                let sink = Sink::Callback(Box::new(move |_, r| {
                    let _ = tx.lock().unwrap().send(r);
                }));
                let batch = submit(&self.reg, Flip::calls(n), &options, sink, None);
                assert!(
                    batch.wait(Some(Duration::from_secs(30))),
                    "the batch never ended"
                );
                rx.try_iter().collect()
            }
        };
        *self.current.lock().unwrap() = None;
        assert_eq!(results.len(), n);
        assert!(
            results.iter().all(|r| r.outcome == Outcome::Ok),
            "{results:?}"
        );
        round
    }

    /// Quick calls until the tool is known quick: an executed batch of two
    /// then arms no join timer. (A loaded machine may stretch a call past
    /// the mark, so it may take more than one try.)
    fn make_quick(&self) {
        for _ in 0..20 {
            for _ in 0..8 {
                self.round(Runner::Execute, 1, None);
            }
            if self
                .round(Runner::Execute, 2, None)
                .timers_at_first
                .load(Ordering::SeqCst)
                == 0
            {
                return;
            }
        }
        panic!("the tool never became known quick in 20 tries");
    }
}

/// A batch of a tool known to be quick starts on one thread (the caller of
/// `execute`, or one pool thread for a submitted batch), arms no join timer
/// (a timer wakes the timer thread twice a batch) and calls no helpers
/// before the first 50 us are up. If one of its calls turns slow, the
/// siblings wait for it to return, then fan out at once to the limit; and
/// the tool is no longer known quick, so in its next batch a blocked call
/// has its siblings started beside it again.
fn a_quick_tool_that_turns_slow(runner: Runner) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let flip = Flip::new();
    // The batch's thread must reach its first call within `JOIN_AFTER` of
    // the batch's start (or of the lead's) for helpers to stay out; on a
    // loaded machine it may be preempted longer, and then helpers are
    // rightly called in. So a few tries: an implementation that fans out a
    // quick batch at once (or arms a timer for it) fails every one.
    let mut tries = Vec::new();
    for _ in 0..10 {
        flip.make_quick();
        let round = flip.round(runner, 4, Some(Duration::from_millis(30)));
        let timers = round.timers_at_first.load(Ordering::SeqCst);
        let beside = round.started_beside_first.load(Ordering::SeqCst);
        if beside == 0 {
            assert_eq!(
                round.most.load(Ordering::SeqCst),
                3,
                "once it returned, helpers were called in: the other three ran at once"
            );
        }
        tries.push((timers, beside));
        if timers == 0 && beside == 0 {
            break;
        }
    }
    assert!(
        tries.last() == Some(&(0, 0)),
        "every try armed a join timer or started a sibling beside the slow call \
         before 50 us were up (timers, siblings beside it): {tries:?}"
    );

    // The slow call ended the tool's quick streak. The join timer is seen
    // live by the first call unless it already fired (the executing thread
    // preempted for more than its 50 us between arming it and starting the
    // call, on a loaded machine): a few tries, as above; an implementation
    // that arms none fails every one.
    let mut timers_seen = Vec::new();
    for _ in 0..5 {
        let round = flip.round(runner, 4, Some(Duration::from_secs(5)));
        assert!(
            round.started_beside_first.load(Ordering::SeqCst) >= 1,
            "no sibling started beside the blocked call"
        );
        assert_eq!(round.most.load(Ordering::SeqCst), 3);
        timers_seen.push(round.timers_at_first.load(Ordering::SeqCst));
        if !matches!(runner, Runner::Execute) || timers_seen.last() >= Some(&1) {
            break;
        }
    }
    if let Runner::Execute = runner {
        assert!(
            timers_seen.iter().any(|&t| t >= 1),
            "execute armed no join timer before a call not known quick: {timers_seen:?}"
        );
    }
}

#[test]
fn an_executed_quick_tool_that_turns_slow_fans_out_its_siblings_once_it_returns() {
    a_quick_tool_that_turns_slow(Runner::Execute);
}

#[test]
fn a_submitted_quick_tool_that_turns_slow_fans_out_its_siblings_once_it_returns() {
    a_quick_tool_that_turns_slow(Runner::Submit);
}
