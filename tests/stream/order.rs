//! Order and limits: results in call order, sequential streams, calls
//! held back by the limit or by `wait_for_response`.

use super::*;

#[test]
fn results_are_in_call_order_when_calls_finish_in_another_order() {
    let reg = Registry::default();
    for (name, ms) in [("get_weather", 150u64), ("get_time", 0)] {
        reg.register(ToolDef {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            handler: Box::new(move |call: capstan::Call| {
                std::thread::sleep(Duration::from_millis(ms));
                call.complete_text(call.id().to_owned()).unwrap();
            }),
            timeout_ms: 0,
            max_output_chars: 0,
            flags: ToolFlags::default(),
        })
        .unwrap();
    }
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut stream = recording_stream(Format::OpenAiChat, true, log.clone());
    stream
        .feed(&reg, &fixture("openai_chat", "parallel.sse"))
        .unwrap();
    let done = stream.finish(&reg).unwrap();
    let messages = done.to_json(Format::OpenAiChat)["messages"].clone();
    let ids: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_w1", "call_t2", "call_w3"]);
}

#[test]
fn a_sequential_stream_starts_a_call_early_only_after_the_previous_one_finished() {
    let reg = Registry::default();
    let running = Arc::new(AtomicUsize::new(0));
    let overlap = Arc::new(AtomicUsize::new(0));
    for name in ["get_weather", "get_time"] {
        let (running, overlap) = (running.clone(), overlap.clone());
        reg.register(ToolDef {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            handler: Box::new(move |call: capstan::Call| {
                if running.fetch_add(1, Ordering::SeqCst) > 0 {
                    overlap.fetch_add(1, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(30));
                running.fetch_sub(1, Ordering::SeqCst);
                call.complete_text("ok").unwrap();
            }),
            timeout_ms: 0,
            max_output_chars: 0,
            flags: ToolFlags::default(),
        })
        .unwrap();
    }
    let options = StreamOptions {
        early_dispatch: true,
        exec: ExecOptions {
            parallel: false,
            ..Default::default()
        },
        ..Default::default()
    };
    let body = fixture("openai_chat", "parallel.sse");
    let (got, _) = run(
        &reg,
        Format::OpenAiChat,
        options,
        &[&body[..body.len() / 2], &body[body.len() / 2..]],
    );
    assert!(got
        .unwrap()
        .results
        .iter()
        .all(|r| r.outcome == Outcome::Ok));
    assert_eq!(overlap.load(Ordering::SeqCst), 0);
}

#[test]
fn a_call_complete_before_an_earlier_one_starts_early_only_in_a_parallel_stream() {
    // Responses items may interleave: c1's arguments are whole while c0's
    // are still arriving.
    let c0 = responses_item("response.output_item.added", 0, "c0", "get_time", "");
    let c1 = responses_item("response.output_item.added", 1, "c1", "get_weather", "")
        + &responses_item("response.output_item.done", 1, "c1", "get_weather", "{}");
    let end = responses_item(
        "response.output_item.done",
        0,
        "c0",
        "get_time",
        "{\"tz\":\"UTC\"}",
    ) + &responses_event(json!({"type": "response.completed", "response":
            {"id": "r", "object": "response", "status": "completed", "output": []}}));

    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let mut stream = Stream::new(Format::OpenAiResponses, early(true), None, None).unwrap();
    stream.feed(&reg, c0.as_bytes()).unwrap();
    stream.feed(&reg, c1.as_bytes()).unwrap();
    assert!(started(&ran, "c1"), "a parallel stream starts c1 at once");
    assert!(!ran.lock().unwrap().contains(&"c0".to_owned()));
    stream.feed(&reg, end.as_bytes()).unwrap();
    let done = stream.finish(&reg).unwrap();
    assert!(
        done.results.iter().all(|r| r.outcome == Outcome::Ok),
        "{:?}",
        done.results
    );

    // Sequential: nothing starts past a call whose arguments are incomplete.
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let mut stream = Stream::new(Format::OpenAiResponses, early(false), None, None).unwrap();
    stream.feed(&reg, c0.as_bytes()).unwrap();
    stream.feed(&reg, c1.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(ran.lock().unwrap().is_empty(), "{:?}", ran.lock().unwrap());
    stream.feed(&reg, end.as_bytes()).unwrap();
    stream.finish(&reg).unwrap();
    assert_eq!(*ran.lock().unwrap(), ["c0", "c1"]);
}

#[test]
fn in_a_sequential_stream_a_call_the_response_cut_holds_back_nothing_after_it() {
    // An Anthropic block whose input is not whole JSON at its stop is cut
    // (never run); the next call still starts early.
    let cut = [
        anthropic_event(json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "a", "name": "get_time", "input": {}}})),
        anthropic_event(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{\"tz\":"}})),
        anthropic_event(json!({"type": "content_block_stop", "index": 0})),
        anthropic_event(json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "tool_use", "id": "b", "name": "get_weather", "input": {}}})),
        anthropic_event(json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "{}"}})),
        anthropic_event(json!({"type": "content_block_stop", "index": 1})),
    ]
    .concat();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let mut stream = Stream::new(Format::Anthropic, early(false), None, None).unwrap();
    stream.feed(&reg, cut.as_bytes()).unwrap();
    assert!(
        started(&ran, "b"),
        "the call after the cut one starts early"
    );
    stream
        .feed(
            &reg,
            anthropic_event(json!({"type": "message_stop"})).as_bytes(),
        )
        .unwrap();
    let done = stream.finish(&reg).unwrap();
    assert_eq!(done.cut, [0]);
    assert_eq!(*ran.lock().unwrap(), ["b"]);
}

#[test]
fn a_wait_for_response_call_holds_back_only_itself_in_parallel_and_all_after_it_in_sequence() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = Registry::default();
    for (name, flags) in [
        ("get_weather", ToolFlags::WAIT_FOR_RESPONSE),
        ("get_time", 0),
    ] {
        let ran = ran.clone();
        reg.register(ToolDef {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            handler: Box::new(move |call: capstan::Call| {
                ran.lock().unwrap().push(call.id().to_owned());
                call.complete_text("ok").unwrap();
            }),
            timeout_ms: 0,
            max_output_chars: 0,
            flags: ToolFlags(flags),
        })
        .unwrap();
    }
    let first = chat_start(0, "w", "get_weather", "{}");
    let second = chat_start(1, "t", "get_time", "{}");
    let mut stream = Stream::new(Format::OpenAiChat, early(true), None, None).unwrap();
    stream.feed(&reg, first.as_bytes()).unwrap();
    stream.feed(&reg, second.as_bytes()).unwrap();
    assert!(started(&ran, "t"), "the tool without the flag starts early");
    assert_eq!(*ran.lock().unwrap(), ["t"]);
    stream.feed(&reg, chat_end().as_bytes()).unwrap();
    stream.finish(&reg).unwrap();
    assert_eq!(*ran.lock().unwrap(), ["t", "w"]);

    ran.lock().unwrap().clear();
    let mut stream = Stream::new(Format::OpenAiChat, early(false), None, None).unwrap();
    stream.feed(&reg, first.as_bytes()).unwrap();
    stream.feed(&reg, second.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(ran.lock().unwrap().is_empty(), "{:?}", ran.lock().unwrap());
    stream.feed(&reg, chat_end().as_bytes()).unwrap();
    stream.finish(&reg).unwrap();
    assert_eq!(*ran.lock().unwrap(), ["w", "t"]);
}

/// `counting_registry` plus `slow`, which runs until the returned counter
/// is set (at most 30 s).
fn gated_registry() -> (Registry, Arc<Mutex<Vec<String>>>, Arc<AtomicUsize>) {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let release = Arc::new(AtomicUsize::new(0));
    let gate = release.clone();
    reg.register(ToolDef {
        name: "slow".into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(move |call: capstan::Call| {
            assert!(eventually(Duration::from_secs(30), || gate
                .load(Ordering::SeqCst)
                > 0));
            call.complete_text("slow done").unwrap();
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    })
    .unwrap();
    (reg, ran, release)
}

#[test]
fn a_call_held_back_by_the_limit_starts_when_a_running_call_finishes_not_at_the_next_event() {
    // `slow` runs until released; with a limit of 1 the second call waits
    // for it, then starts on its own: the host feeds nothing more meanwhile.
    let (reg, ran, release) = gated_registry();
    for parallel in [true, false] {
        ran.lock().unwrap().clear();
        release.store(0, Ordering::SeqCst);
        let mut options = early(parallel);
        options.exec.limit = 1;
        let mut stream = Stream::new(Format::OpenAiChat, options, None, None).unwrap();
        let body = chat_start(0, "s", "slow", "{}")
            + &chat_start(1, "w1", "get_weather", "{}")
            + &chat_start(2, "w2", "get_time", "{}");
        stream.feed(&reg, body.as_bytes()).unwrap();
        // The third call's start completed the second's arguments: both wait.
        std::thread::sleep(Duration::from_millis(50));
        assert!(ran.lock().unwrap().is_empty(), "held by the limit");
        release.store(1, Ordering::SeqCst);
        assert!(
            started(&ran, "w1"),
            "parallel={parallel}: held call started"
        );
        stream.feed(&reg, chat_end().as_bytes()).unwrap();
        let finished = stream.finish(&reg).unwrap();
        let texts: Vec<&str> = finished
            .results
            .iter()
            .map(|r| r.content.as_str())
            .collect();
        assert_eq!(
            texts,
            ["slow done", "ran w1", "ran w2"],
            "parallel={parallel}"
        );
        assert_eq!(
            *ran.lock().unwrap(),
            ["w1", "w2"],
            "each ran once, in order"
        );
    }
}

#[test]
fn a_call_held_back_by_the_limit_never_starts_once_the_stream_is_cancelled() {
    let (reg, ran, release) = gated_registry();
    let mut options = early(true);
    options.exec.limit = 1;
    let mut stream = Stream::new(Format::OpenAiChat, options, None, None).unwrap();
    let body =
        chat_start(0, "s", "slow", "{}") + &chat_start(1, "w1", "get_weather", "{}") + &chat_end();
    stream.feed(&reg, body.as_bytes()).unwrap();
    stream.control().cancel();
    // The running call ends: its slot frees, but the stream was cancelled.
    release.store(1, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        ran.lock().unwrap().is_empty(),
        "a held call started after cancel"
    );
    let finished = stream.finish(&reg).unwrap();
    assert!(finished.cancelled);
    assert_eq!(
        finished.results[1].outcome,
        Outcome::Cancelled,
        "{finished:?}"
    );
    assert!(ran.lock().unwrap().is_empty());
}
