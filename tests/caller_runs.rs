//! Caller-runs: the thread that executes a batch runs its calls itself, so
//! pool threads must still join when calls are left waiting behind one of
//! its calls that blocks.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use capstan::exec::live_timers;
use capstan::{execute, CallRequest, ExecOptions, Outcome, Registry, ToolDef, ToolFlags};
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
    /// The first call was taken (by the batch's own thread: calls start in order).
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

type Current = Arc<Mutex<Option<(Arc<Round>, Duration)>>>;

/// A tool answering at once, except during a round (`current` set): the
/// round's first call runs until a sibling starts beside it, at most for
/// the round's duration; the others wait (at most 5 s) until three run at once.
fn flip_registry(current: Current) -> Registry {
    let reg = Registry::default();
    reg.register(ToolDef {
        name: "flip".into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(move |c: capstan::Call| {
            let now = current.lock().unwrap().clone();
            if let Some((round, first_for)) = now {
                if !round.first_taken.swap(true, Ordering::SeqCst) {
                    round.first_running.store(true, Ordering::SeqCst);
                    round.timers_at_first.store(live_timers(), Ordering::SeqCst);
                    let until = Instant::now() + first_for;
                    while round.started_beside_first.load(Ordering::SeqCst) == 0
                        && Instant::now() < until
                    {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    round.first_running.store(false, Ordering::SeqCst);
                } else {
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

/// An executed batch of a tool known to be quick arms no join timer: its
/// thread checks the clock between calls instead (a timer would wake the
/// timer thread twice a batch). If one of its calls turns slow, the
/// siblings wait for it to return, then fan out at once to the limit; and
/// the tool is no longer known quick, so in its next batch a blocked call
/// has its siblings started beside it again, by the timer.
#[test]
fn a_quick_tool_that_turns_slow_fans_out_its_siblings_once_it_returns_and_is_watched_again() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let current: Current = Arc::new(Mutex::new(None));
    let reg = flip_registry(current.clone());
    let calls = |n: usize| -> Vec<CallRequest> {
        (0..n)
            .map(|k| CallRequest::new(k.to_string(), "flip", json!({})))
            .collect()
    };
    let options = ExecOptions {
        limit: 4,
        ..ExecOptions::default()
    };
    let run_round = |first_for: Duration| -> Arc<Round> {
        let round = Arc::new(Round::default());
        *current.lock().unwrap() = Some((round.clone(), first_for));
        let results = execute(&reg, calls(4), &options);
        *current.lock().unwrap() = None;
        assert!(
            results.iter().all(|r| r.outcome == Outcome::Ok),
            "{results:?}"
        );
        round
    };

    // Quick calls make the tool known quick (a loaded machine may stretch
    // one past the mark: then the round's first call finds the join timer
    // armed, and the test warms the tool up again).
    let mut quick_round = None;
    for _ in 0..20 {
        for _ in 0..8 {
            assert_eq!(execute(&reg, calls(1), &options)[0].outcome, Outcome::Ok);
        }
        let round = run_round(Duration::from_millis(30));
        if round.timers_at_first.load(Ordering::SeqCst) == 0 {
            quick_round = Some(round);
            break;
        }
    }
    let round = quick_round.expect("the tool never became known quick in 20 tries");
    assert_eq!(
        round.started_beside_first.load(Ordering::SeqCst),
        0,
        "no timer and the batch's thread held: no sibling started beside the slow call"
    );
    assert_eq!(
        round.most.load(Ordering::SeqCst),
        3,
        "once it returned, its thread called helpers in: the other three ran at once"
    );

    // The slow call ended the tool's quick streak: the next batch arms the
    // join timer before its first call, and a sibling starts beside it.
    let round = run_round(Duration::from_secs(5));
    assert!(
        round.timers_at_first.load(Ordering::SeqCst) >= 1,
        "no join timer was armed"
    );
    assert!(
        round.started_beside_first.load(Ordering::SeqCst) >= 1,
        "no sibling started beside the blocked call"
    );
    assert_eq!(round.most.load(Ordering::SeqCst), 3);
}
