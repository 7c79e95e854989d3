//! Execution rules a host relies on, through the safe Rust API.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use capstan::{
    execute, CallRequest, ContentKind, ExecOptions, Outcome, Registry, ToolDef, ToolFlags,
};
use serde_json::{json, Value};

fn def(name: &str, schema: Value, f: impl Fn(capstan::Call) + Send + Sync + 'static) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: format!("{name} tool"),
        parameters: schema,
        handler: Box::new(f),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    }
}

fn obj() -> Value {
    json!({"type": "object"})
}

fn weather_registry() -> Registry {
    let reg = Registry::default();
    reg.register(def(
        "get_weather",
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "units": {"enum": ["celsius", "fahrenheit"], "default": "celsius"}
            },
            "required": ["city"],
            "additionalProperties": false
        }),
        |call| {
            let args = call.arguments().clone();
            call.complete_value(&json!({"city": args["city"], "units": args["units"], "t": 21}))
                .unwrap();
        },
    ))
    .unwrap();
    reg
}

fn call(id: &str, name: &str, args: Value) -> CallRequest {
    CallRequest::new(id, name, args)
}

#[test]
fn results_come_back_in_call_order_with_defaults_filled() {
    let reg = weather_registry();
    let calls: Vec<_> = (0..20)
        .map(|i| {
            call(
                &format!("c{i}"),
                "get_weather",
                json!({"city": format!("city{i}")}),
            )
        })
        .collect();
    let results = execute(&reg, calls, &ExecOptions::default());
    assert_eq!(results.len(), 20);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r.id, format!("c{i}"));
        assert_eq!(r.outcome, Outcome::Ok);
        let v: Value = serde_json::from_str(&r.content).unwrap();
        assert_eq!(v["city"], format!("city{i}"));
        assert_eq!(v["units"], "celsius");
    }
}

#[test]
fn unknown_tool_names_the_closest_match_and_the_available_tools() {
    let reg = weather_registry();
    let r = &execute(
        &reg,
        vec![call("1", "get_wether", json!({}))],
        &ExecOptions::default(),
    )[0];
    assert_eq!(r.outcome, Outcome::UnknownTool);
    assert!(r.is_error());
    assert!(
        r.content.contains("Did you mean \"get_weather\""),
        "{}",
        r.content
    );
    assert!(
        r.content.contains("Available tools: get_weather"),
        "{}",
        r.content
    );
}

#[test]
fn invalid_arguments_are_a_result_the_model_can_read() {
    let reg = weather_registry();
    let r = &execute(
        &reg,
        vec![call("1", "get_weather", json!({"units": "kelvin", "x": 1}))],
        &ExecOptions::default(),
    )[0];
    assert_eq!(r.outcome, Outcome::InvalidArguments);
    assert!(r.content.contains("city"), "{}", r.content);
    assert!(r.content.contains("kelvin"), "{}", r.content);
}

#[test]
fn malformed_argument_text_is_invalid_arguments_not_empty_object() {
    let reg = weather_registry();
    let calls =
        CallRequest::list_from_str(r#"{"id":"1","name":"get_weather","arguments":"{\"city\": "}"#)
            .unwrap();
    let r = &execute(&reg, calls, &ExecOptions::default())[0];
    assert_eq!(r.outcome, Outcome::InvalidArguments);
    assert!(r.content.contains("not valid JSON"), "{}", r.content);
}

#[test]
fn arguments_as_a_json_string_are_accepted() {
    let reg = weather_registry();
    let calls = CallRequest::list_from_str(
        r#"[{"id":"1","name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}]"#,
    )
    .unwrap();
    let r = &execute(&reg, calls, &ExecOptions::default())[0];
    assert_eq!(r.outcome, Outcome::Ok, "{}", r.content);
    assert!(r.content.contains("Oslo"));
}

#[test]
fn tool_failure_is_a_tool_error_with_its_message() {
    let reg = Registry::default();
    reg.register(def("boom", obj(), |c| c.fail("disk on fire").unwrap()))
        .unwrap();
    let r = &execute(
        &reg,
        vec![call("1", "boom", json!({}))],
        &ExecOptions::default(),
    )[0];
    assert_eq!(r.outcome, Outcome::ToolError);
    assert_eq!(r.content, "disk on fire");
}

#[test]
fn a_panicking_tool_is_a_tool_error_not_a_crash() {
    let reg = Registry::default();
    reg.register(def("panics", obj(), |_| panic!("oops")))
        .unwrap();
    let r = &execute(
        &reg,
        vec![call("1", "panics", json!({}))],
        &ExecOptions::default(),
    )[0];
    assert_eq!(r.outcome, Outcome::ToolError);
    assert!(r.content.contains("panicked"));
}

#[test]
fn parallel_limit_caps_concurrency() {
    let reg = Registry::default();
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (r2, p2) = (running.clone(), peak.clone());
    reg.register(def("slow", obj(), move |c| {
        let now = r2.fetch_add(1, Ordering::SeqCst) + 1;
        p2.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(20));
        r2.fetch_sub(1, Ordering::SeqCst);
        c.complete_text("ok").unwrap();
    }))
    .unwrap();
    let calls: Vec<_> = (0..12)
        .map(|i| call(&i.to_string(), "slow", json!({})))
        .collect();
    let opts = ExecOptions {
        limit: 3,
        ..Default::default()
    };
    let results = execute(&reg, calls, &opts);
    assert!(results.iter().all(|r| r.outcome == Outcome::Ok));
    assert_eq!(peak.load(Ordering::SeqCst), 3);
}

#[test]
fn sequential_option_runs_one_at_a_time_in_order() {
    let reg = Registry::default();
    let order = Arc::new(Mutex::new(Vec::new()));
    let o2 = order.clone();
    reg.register(def("rec", obj(), move |c| {
        o2.lock().unwrap().push(c.id().to_string());
        c.complete_text("").unwrap();
    }))
    .unwrap();
    let calls: Vec<_> = (0..10)
        .map(|i| call(&i.to_string(), "rec", json!({})))
        .collect();
    execute(
        &reg,
        calls,
        &ExecOptions {
            parallel: false,
            ..Default::default()
        },
    );
    let expected: Vec<String> = (0..10).map(|i| i.to_string()).collect();
    assert_eq!(*order.lock().unwrap(), expected);
}

#[test]
fn serial_tool_never_runs_concurrently_with_itself() {
    let reg = Registry::default();
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (r2, p2) = (running.clone(), peak.clone());
    let mut d = def("serial", obj(), move |c| {
        let now = r2.fetch_add(1, Ordering::SeqCst) + 1;
        p2.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(5));
        r2.fetch_sub(1, Ordering::SeqCst);
        c.complete_text("ok").unwrap();
    });
    d.flags = ToolFlags(ToolFlags::SERIAL);
    reg.register(d).unwrap();
    let calls: Vec<_> = (0..10)
        .map(|i| call(&i.to_string(), "serial", json!({})))
        .collect();
    let results = execute(
        &reg,
        calls,
        &ExecOptions {
            limit: 8,
            ..Default::default()
        },
    );
    assert!(results.iter().all(|r| r.outcome == Outcome::Ok));
    assert_eq!(peak.load(Ordering::SeqCst), 1);
}

#[test]
fn timeout_abandons_the_wait_and_refuses_the_late_completion() {
    let reg = Registry::default();
    let late: Arc<Mutex<Option<capstan::Call>>> = Arc::new(Mutex::new(None));
    let l2 = late.clone();
    let mut d = def("hang", obj(), move |c| {
        *l2.lock().unwrap() = Some(c); // never completes in time
    });
    d.timeout_ms = 50;
    reg.register(d).unwrap();
    let start = Instant::now();
    let r = &execute(
        &reg,
        vec![call("1", "hang", json!({}))],
        &ExecOptions::default(),
    )[0];
    assert_eq!(r.outcome, Outcome::Timeout);
    assert!(start.elapsed() < Duration::from_secs(5));
    let c = late.lock().unwrap().take().unwrap();
    assert!(c.is_cancelled());
    assert!(matches!(
        c.complete_text("late"),
        Err(capstan::Error::AlreadyCompleted(_))
    ));
}

#[test]
fn a_blocking_tool_past_its_timeout_does_not_block_the_caller() {
    // The tool blocks for up to 30 s; the caller must be back long before,
    // however loaded the machine (the bound is loose on purpose).
    let reg = Registry::default();
    let (release, blocked) = std::sync::mpsc::channel::<()>();
    let blocked = Mutex::new(blocked);
    let mut d = def("sleepy", obj(), move |c| {
        let _ = blocked
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(30));
        let _ = c.complete_text("late");
    });
    d.timeout_ms = 30;
    reg.register(d).unwrap();
    let start = Instant::now();
    let r = &execute(
        &reg,
        vec![call("1", "sleepy", json!({}))],
        &ExecOptions::default(),
    )[0];
    let waited = start.elapsed();
    let _ = release.send(());
    assert_eq!(r.outcome, Outcome::Timeout);
    assert!(waited < Duration::from_secs(15), "{waited:?}");
}

#[test]
fn exec_timeout_overrides_the_tools_own() {
    let reg = Registry::default();
    reg.register(def("hang2", obj(), |_c| {})).unwrap();
    let r = &execute(
        &reg,
        vec![call("1", "hang2", json!({}))],
        &ExecOptions {
            timeout_ms: 20,
            ..Default::default()
        },
    )[0];
    assert_eq!(r.outcome, Outcome::Timeout);
}

#[test]
fn deferred_completion_from_another_thread_is_delivered() {
    let reg = Registry::default();
    reg.register(def("later", obj(), |c| {
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(10));
            c.complete(ContentKind::Json, r#"{"done": true}"#).unwrap();
        });
    }))
    .unwrap();
    let calls: Vec<_> = (0..4)
        .map(|i| call(&i.to_string(), "later", json!({})))
        .collect();
    let results = execute(&reg, calls, &ExecOptions::default());
    assert!(results
        .iter()
        .all(|r| r.outcome == Outcome::Ok && r.content == r#"{"done":true}"#));
}

#[test]
fn double_completion_is_rejected() {
    let reg = Registry::default();
    let second = Arc::new(Mutex::new(None));
    let s2 = second.clone();
    reg.register(def("twice", obj(), move |c| {
        c.complete_text("first").unwrap();
        *s2.lock().unwrap() = Some(c.complete_text("second"));
    }))
    .unwrap();
    let r = &execute(
        &reg,
        vec![call("1", "twice", json!({}))],
        &ExecOptions::default(),
    )[0];
    assert_eq!(r.content, "first");
    assert!(matches!(
        second.lock().unwrap().take(),
        Some(Err(capstan::Error::AlreadyCompleted(_)))
    ));
}

#[test]
fn output_cap_truncates_with_a_marker() {
    let reg = Registry::default();
    let mut d = def("big", obj(), |c| c.complete_text("é".repeat(100)).unwrap());
    d.max_output_chars = 10;
    reg.register(d).unwrap();
    let r = &execute(
        &reg,
        vec![call("1", "big", json!({}))],
        &ExecOptions::default(),
    )[0];
    assert!(r.content.starts_with(&"é".repeat(10)));
    assert!(r.content.contains("90 more characters"), "{}", r.content);
}

fn nest(reg: &Registry, depth: usize) -> String {
    let calls: Vec<_> = (0..4)
        .map(|i| call(&format!("d{depth}_{i}"), "nest", json!({"depth": depth})))
        .collect();
    let results = execute(reg, calls, &ExecOptions::default());
    results
        .iter()
        .map(|r| r.content.clone())
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn nested_execute_three_levels_deep_does_not_deadlock() {
    let reg = Registry::default();
    let inner = reg.clone();
    reg.register(def(
        "nest",
        json!({"type":"object","properties":{"depth":{"type":"integer"}}}),
        move |c| {
            let depth = c.arguments()["depth"].as_u64().unwrap() as usize;
            if depth >= 3 {
                c.complete_text("leaf").unwrap();
            } else {
                let out = nest(&inner, depth + 1);
                c.complete_text(format!("[{out}]")).unwrap();
            }
        },
    ))
    .unwrap();
    let out = nest(&reg, 0);
    assert_eq!(out.matches("leaf").count(), 4 * 4 * 4 * 4);
}

#[test]
fn replacing_a_tool_destroys_the_old_one_once_after_its_calls() {
    struct Probe(Arc<AtomicUsize>);
    impl Drop for Probe {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let reg = Registry::default();
    let probe = Probe(drops.clone());
    reg.register(def("t", obj(), move |c| {
        let _keep = &probe;
        c.complete_text("v1").unwrap();
    }))
    .unwrap();
    let probe2 = Probe(drops.clone());
    let mut replacement = def("t", obj(), move |c| {
        let _keep = &probe2;
        c.complete_text("v2").unwrap();
    });
    replacement.flags = ToolFlags(ToolFlags::REPLACE);
    reg.register(replacement).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    let r = &execute(
        &reg,
        vec![call("1", "t", json!({}))],
        &ExecOptions::default(),
    )[0];
    assert_eq!(r.content, "v2");
    reg.unregister("t").unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 2);
    assert!(matches!(
        reg.unregister("t"),
        Err(capstan::Error::NotFound(_))
    ));
}

#[test]
fn invalid_names_are_refused() {
    let reg = Registry::default();
    for bad in ["", "has space", "dots.no", &"x".repeat(65), "ünï"] {
        let err = reg.register(def(bad, obj(), |_| {})).unwrap_err();
        assert!(
            matches!(err, capstan::Error::InvalidName(_)),
            "{bad}: {err:?}"
        );
    }
    reg.register(def(&"x".repeat(64), obj(), |_| {})).unwrap();
}

#[test]
fn empty_batch_gives_empty_results() {
    let reg = Registry::default();
    assert!(execute(&reg, vec![], &ExecOptions::default()).is_empty());
}

#[test]
fn close_cancels_calls_in_flight() {
    let reg = Registry::default();
    let held = Arc::new(Mutex::new(None));
    let h2 = held.clone();
    reg.register(def("held", obj(), move |c| *h2.lock().unwrap() = Some(c)))
        .unwrap();
    let reg2 = reg.clone();
    let t = std::thread::spawn(move || {
        execute(
            &reg2,
            vec![call("1", "held", json!({}))],
            &ExecOptions::default(),
        )
    });
    while held.lock().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(1));
    }
    let c = held.lock().unwrap().take().unwrap();
    assert!(
        reg.close(Duration::from_secs(5)),
        "close must finish: nothing is running"
    );
    let results = t.join().unwrap();
    assert_eq!(results[0].outcome, Outcome::Cancelled);
    assert!(c.is_cancelled());
    assert!(c.complete_text("late").is_err());
}

#[test]
fn a_callback_reacting_to_its_timeout_cannot_report_ok() {
    let reg = Registry::default();
    let mut d = def("racer", obj(), |c| {
        while !c.is_cancelled() {
            std::hint::spin_loop();
        }
        let _ = c.complete_text("late");
    });
    d.timeout_ms = 2;
    reg.register(d).unwrap();
    for _ in 0..100 {
        let r = &execute(
            &reg,
            vec![call("1", "racer", json!({}))],
            &ExecOptions::default(),
        )[0];
        assert_eq!(r.outcome, Outcome::Timeout, "{}", r.content);
    }
}

/// Closing (or freeing) a registry reports its running calls cancelled: a
/// tool that sees the cancellation and then completes its call anyway gets
/// `AlreadyCompleted`, and its result stays `cancelled`. The two calls
/// behind it (limit 1) never start. Looped: the completion races the close.
#[test]
fn a_call_running_when_its_registry_is_closed_is_reported_cancelled() {
    for round in 0..200 {
        let reg = Registry::default();
        let entered = Arc::new(AtomicUsize::new(0));
        let late = Arc::new(Mutex::new(Vec::new()));
        let (in_tool, late_in_tool) = (entered.clone(), late.clone());
        reg.register(def("gated", obj(), move |c| {
            in_tool.fetch_add(1, Ordering::SeqCst);
            while !c.is_cancelled() {
                std::hint::spin_loop();
            }
            let completion = c.complete_text("done");
            late_in_tool.lock().unwrap().push(completion.is_err());
        }))
        .unwrap();
        let runner = reg.clone();
        let t = std::thread::spawn(move || {
            let calls = (0..3).map(|i| call(&i.to_string(), "gated", json!({})));
            let opts = ExecOptions {
                limit: 1,
                ..ExecOptions::default()
            };
            execute(&runner, calls.collect(), &opts)
        });
        while entered.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        assert!(reg.close(Duration::from_secs(30)));
        let results = t.join().unwrap();
        for r in &results {
            assert_eq!(r.outcome, Outcome::Cancelled, "round {round}: {r:?}");
        }
        assert_eq!(entered.load(Ordering::SeqCst), 1);
        assert_eq!(
            *late.lock().unwrap(),
            [true],
            "round {round}: the completion after the cancellation is refused"
        );
    }
}

/// `ExecOptions::on_defer` hears the calls a tool defers: its callback
/// returned with the call open, or another thread completed it (even while
/// the callback still ran); not a call completed inside its callback, nor
/// one that never ran (invalid arguments).
#[test]
fn the_defer_listener_hears_the_calls_their_tool_hands_to_another_thread() {
    let reg = Registry::default();
    reg.register(def("inline", obj(), |c| c.complete_text("inline").unwrap()))
        .unwrap();
    reg.register(def("later", obj(), |c| {
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            c.complete_text("later").unwrap();
        });
    }))
    .unwrap();
    reg.register(def("joined", obj(), |c| {
        std::thread::spawn(move || c.complete_text("joined").unwrap())
            .join()
            .unwrap();
    }))
    .unwrap();
    let ints = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
    reg.register(def("typed", ints, |c| c.complete_text("typed").unwrap()))
        .unwrap();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let h = heard.clone();
    let opts = ExecOptions {
        on_defer: Some(capstan::DeferListener(Arc::new(move |i| {
            h.lock().unwrap().push(i)
        }))),
        ..Default::default()
    };
    let calls = vec![
        call("a", "inline", json!({})),
        call("b", "later", json!({})),
        call("c", "joined", json!({})),
        call("d", "typed", json!({"a": "x"})),
    ];
    let results = execute(&reg, calls, &opts);
    assert_eq!(results[1].content, "later");
    assert_eq!(results[2].content, "joined");
    assert_eq!(results[3].outcome, Outcome::InvalidArguments);
    let mut heard = heard.lock().unwrap().clone();
    heard.sort_unstable();
    heard.dedup();
    assert_eq!(heard, vec![1, 2]);
}
