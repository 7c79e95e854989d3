//! Normalized calls through `capstan_registry_execute`, `capstan_batch_submit` (callback and
//! poll delivery, cancelled, freed while running) and `capstan_registry_needs_approval`,
//! against tools of every behaviour. Every call must get exactly one result,
//! and every batch its one end. Input: one byte of execution options, one
//! byte choosing the entry point, then the calls JSON.
#![no_main]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use capstan::ffi::*;
use capstan_fuzz::*;
use libfuzzer_sys::fuzz_target;

fn registry() -> Reg {
    static REG: OnceLock<Reg> = OnceLock::new();
    *REG.get_or_init(|| tool_registry(0))
}

/// What one batch delivered: how often each index, and how many ends.
struct Tally {
    seen: Mutex<Vec<u32>>,
    ends: AtomicUsize,
}

unsafe extern "C" fn on_result(user_data: *mut std::ffi::c_void, result: *const capstan_result) {
    let tally = &*(user_data as *const Tally);
    let Some(r) = result.as_ref() else {
        tally.ends.fetch_add(1, Ordering::SeqCst);
        return;
    };
    let content = std::slice::from_raw_parts(r.content.cast::<u8>(), r.content_len);
    assert!(
        std::str::from_utf8(content).is_ok(),
        "result content is not UTF-8"
    );
    assert_eq!(
        r.is_error,
        r.outcome != CAPSTAN_OUTCOME_OK,
        "is_error disagrees with outcome"
    );
    assert!(
        r.outcome <= CAPSTAN_OUTCOME_DENIED,
        "unknown outcome {}",
        r.outcome
    );
    // Content parts reach the callback as a JSON array of blocks (and
    // structured content as JSON), or not at all.
    if !r.parts_json.is_null() {
        let parts = std::slice::from_raw_parts(r.parts_json.cast::<u8>(), r.parts_json_len);
        let parts: serde_json::Value =
            serde_json::from_slice(parts).expect("parts_json is not JSON");
        assert!(parts.is_array(), "parts_json is not an array: {parts}");
    } else {
        assert_eq!(r.parts_json_len, 0, "no parts_json, but a length");
    }
    if !r.structured_json.is_null() {
        let s = std::slice::from_raw_parts(r.structured_json.cast::<u8>(), r.structured_json_len);
        serde_json::from_slice::<serde_json::Value>(s).expect("structured_json is not JSON");
    }
    let mut seen = tally.seen.lock().unwrap_or_else(|e| e.into_inner());
    assert!(
        r.index < seen.len(),
        "result index {} of {} calls",
        r.index,
        seen.len()
    );
    seen[r.index] += 1;
}

fn check_results_once(tally: &Tally, what: &str) {
    let seen = tally.seen.lock().unwrap_or_else(|e| e.into_inner());
    assert!(
        seen.iter().all(|&n| n == 1),
        "{what}: results per call {seen:?}"
    );
}

fuzz_target!(|data: &[u8]| {
    let [options, mode, calls @ ..] = data else {
        return;
    };
    let reg = registry();
    let mut opts = exec_options(*options);
    let n = call_count(calls);
    let (ptr, len) = (calls.as_ptr().cast(), calls.len());
    match mode % 6 {
        0 => {
            let (mut out, mut out_len) = (std::ptr::null_mut(), 0);
            let st = unsafe { capstan_registry_execute(reg.0, ptr, len, &opts, &mut out, &mut out_len) };
            if let Some(results) = take_json(st, out, out_len, "capstan_registry_execute") {
                check_results(
                    &results,
                    n.expect("execute accepted calls that are not JSON"),
                    "capstan_registry_execute",
                );
            }
        }
        1 => {
            let (mut out, mut out_len) = (std::ptr::null_mut(), 0);
            let st =
                unsafe { capstan_registry_needs_approval(reg.0, ptr, len, &opts, &mut out, &mut out_len) };
            if let Some(waiting) = take_json(st, out, out_len, "capstan_registry_needs_approval") {
                let waiting = waiting
                    .as_array()
                    .expect("needs_approval did not return an array");
                assert!(waiting.len() <= n.unwrap_or(0), "more approvals than calls");
            }
        }
        m => {
            if m == 3 {
                opts.flags |= CAPSTAN_EXEC_DELIVER_POLL;
            }
            let tally = Box::new(Tally {
                seen: Mutex::new(vec![0; n.unwrap_or(0)]),
                ends: AtomicUsize::new(0),
            });
            let user_data = &*tally as *const Tally as *mut std::ffi::c_void;
            let mut batch = std::ptr::null_mut();
            let st = unsafe {
                capstan_batch_submit(
                    reg.0,
                    ptr,
                    len,
                    &opts,
                    Some(on_result),
                    user_data,
                    &mut batch,
                )
            };
            check_status(st, "capstan_batch_submit");
            if st != CAPSTAN_OK {
                assert!(batch.is_null(), "submit failed but wrote its batch");
                return;
            }
            unsafe {
                match m {
                    3 => {
                        while tally.ends.load(Ordering::SeqCst) == 0 {
                            capstan_batch_poll(batch, Some(on_result), user_data, 4);
                            std::thread::yield_now();
                        }
                    }
                    4 => capstan_batch_cancel(batch),
                    5 => {
                        // Freed while running: when free returns, no callback runs or will run.
                        capstan_batch_free(batch);
                        let seen = tally.seen.lock().unwrap_or_else(|e| e.into_inner());
                        assert!(
                            seen.iter().all(|&k| k <= 1),
                            "a call got two results: {seen:?}"
                        );
                        assert!(tally.ends.load(Ordering::SeqCst) <= 1, "two batch ends");
                        return;
                    }
                    _ => {}
                }
                assert_eq!(
                    capstan_batch_wait(batch, u32::MAX),
                    CAPSTAN_OK,
                    "batch_wait"
                );
                assert_eq!(
                    capstan_batch_wait(batch, 0),
                    CAPSTAN_OK,
                    "batch not done after wait"
                );
                check_results_once(&tally, "capstan_batch_submit");
                // batch_wait returns only after the end (NULL) callback
                // returned (fuzz/FINDINGS.md, finding 1, fixed).
                assert_eq!(
                    tally.ends.load(Ordering::SeqCst),
                    1,
                    "batch ends after wait"
                );
                capstan_batch_free(batch);
                assert_eq!(
                    tally.ends.load(Ordering::SeqCst),
                    1,
                    "batch ends after free"
                );
            }
        }
    }
});
