//! Early dispatch: which calls start before the response ends, and when;
//! cancel and detach.

use super::*;

/// The body of `fixture` in pieces: each ends where the next call starts,
/// so a paced feeder can wait between calls.
fn pieces_by_call(fmt: Format, body: &[u8]) -> Vec<Vec<u8>> {
    let marker: &[u8] = match fmt {
        Format::OpenAiChat => b"\"id\": \"call_",
        Format::OpenAiResponses => b"event: response.output_item.added",
        Format::Anthropic => b"event: content_block_start",
        Format::Gemini => b"data: ",
        _ => unreachable!(),
    };
    let mut starts: Vec<usize> = body
        .windows(marker.len())
        .enumerate()
        .filter(|(_, w)| *w == marker)
        .map(|(i, _)| {
            body[..i]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
        })
        .collect();
    starts.dedup();
    starts.push(body.len());
    let mut out = vec![body[..starts[0]].to_vec()];
    for w in starts.windows(2) {
        out.push(body[w[0]..w[1]].to_vec());
    }
    out
}

#[test]
fn with_early_dispatch_the_first_result_comes_before_the_stream_ends() {
    for (fmt, dir) in FORMATS {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let reg = counting_registry(ran.clone(), 0);
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut stream = recording_stream(fmt, true, log.clone());
        let pieces = pieces_by_call(fmt, &fixture(dir, "parallel.sse"));
        for (i, piece) in pieces.iter().enumerate() {
            if i > 0 {
                std::thread::sleep(Duration::from_millis(200));
            }
            if i == pieces.len() - 1 {
                // Before the last piece: the first call's result arrives
                // without the stream having ended.
                assert!(
                    wait_for(&log, |l| l.iter().any(|e| matches!(e, Ev::Result(0, _)))),
                    "{dir}: no early result"
                );
            }
            stream.feed(&reg, piece).unwrap();
        }
        log.lock().unwrap().push(Ev::StreamEnd);
        let done = stream.finish(&reg).unwrap();
        let log = log.lock().unwrap().clone();
        let end = log.iter().position(|e| *e == Ev::StreamEnd).unwrap();
        let first = log
            .iter()
            .position(|e| matches!(e, Ev::Result(0, _)))
            .unwrap();
        assert!(first < end, "{dir}: {log:?}");
        // Every call has exactly one result, and the final results are in call order.
        assert_eq!(log.len(), 4, "{dir}: {log:?}");
        let ids: Vec<&str> = done.results.iter().map(|r| r.id.as_str()).collect();
        let want: Vec<&str> = done.calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, want, "{dir}");
        assert_eq!(ids.len(), 3);
        assert_eq!(ran.lock().unwrap().len(), 3);
    }
}

#[test]
fn without_early_dispatch_no_call_starts_before_finish() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut stream = recording_stream(Format::OpenAiChat, false, log.clone());
    stream
        .feed(&reg, &fixture("openai_chat", "parallel.sse"))
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(ran.lock().unwrap().is_empty());
    assert!(log.lock().unwrap().is_empty());
    let done = stream.finish(&reg).unwrap();
    assert_eq!(done.results.len(), 3);
    assert_eq!(log.lock().unwrap().len(), 3);
}

#[test]
fn a_tool_flagged_wait_for_response_starts_only_at_finish_even_with_early_dispatch() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), ToolFlags::WAIT_FOR_RESPONSE);
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut stream = recording_stream(Format::Anthropic, true, log.clone());
    stream
        .feed(&reg, &fixture("anthropic", "parallel.sse"))
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(ran.lock().unwrap().is_empty());
    let done = stream.finish(&reg).unwrap();
    assert!(done.results.iter().all(|r| r.outcome == Outcome::Ok));
    assert_eq!(ran.lock().unwrap().len(), 3);
}

#[test]
fn after_cancel_feeds_fail_and_calls_not_started_end_cancelled() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let body = fixture("openai_chat", "parallel.sse");
    let mut stream = Stream::new(Format::OpenAiChat, StreamOptions::default(), None, None).unwrap();
    stream.feed(&reg, &body[..body.len() / 2]).unwrap();
    stream.control().cancel();
    assert!(matches!(
        stream.feed(&reg, &body[body.len() / 2..]),
        Err(capstan::Error::WrongContext(_))
    ));
    let done = stream.finish(&reg).unwrap();
    assert!(done.cancelled);
    // The first call was complete and never started; the second was cut.
    assert_eq!(
        done.results[0].outcome,
        Outcome::Cancelled,
        "{:?}",
        done.results
    );
    assert!(
        done.results[0]
            .content
            .contains("the stream was cancelled before this call started"),
        "{}",
        done.results[0].content
    );
    assert!(done.results.iter().all(|r| r.is_error()));
    assert!(ran.lock().unwrap().is_empty());
}

#[test]
fn after_detach_no_result_callback_runs_even_for_a_call_that_completes_later() {
    // What capstan_stream_free relies on: once a stream's batches are
    // detached, a call still running completes without reaching the sink.
    let held: Arc<Mutex<Vec<capstan::Call>>> = Arc::default();
    let reg = Registry::default();
    for name in ["get_weather", "get_time", "search"] {
        let held = held.clone();
        reg.register(ToolDef {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            handler: Box::new(move |call: capstan::Call| held.lock().unwrap().push(call)),
            timeout_ms: 0,
            max_output_chars: 0,
            flags: ToolFlags(0),
        })
        .unwrap();
    }
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut stream = recording_stream(Format::OpenAiChat, true, log.clone());
    let body = fixture("openai_chat", "parallel.sse");
    stream.feed(&reg, &body).unwrap();
    assert!(
        eventually(Duration::from_secs(30), || !held.lock().unwrap().is_empty()),
        "no call started early"
    );
    stream.control().detach();
    let calls: Vec<capstan::Call> = std::mem::take(&mut *held.lock().unwrap());
    for call in calls {
        call.complete_text("late").unwrap();
    }
    assert!(
        log.lock().unwrap().is_empty(),
        "a result reached a detached stream's sink: {:?}",
        log.lock().unwrap()
    );
}

/// Figures, not a test: `cargo test --release --test stream -- --ignored --nocapture`.
/// Time from the first byte to the first tool result, with calls arriving
/// 200 ms apart, streaming with early dispatch vs buffering the whole body
/// and running the turn at its end.
#[test]
#[ignore]
fn paced_time_to_first_result_figures() {
    for (fmt, dir) in FORMATS {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let reg = counting_registry(ran, 0);
        let pieces = pieces_by_call(fmt, &fixture(dir, "parallel.sse"));
        let mut figures = Vec::new();
        for early in [true, false] {
            let first = Arc::new(Mutex::new(None::<Instant>));
            let f = first.clone();
            let on_result: ResultFn = Arc::new(move |_, _| {
                f.lock().unwrap().get_or_insert_with(Instant::now);
            });
            let options = StreamOptions {
                early_dispatch: early,
                ..Default::default()
            };
            let mut stream = Stream::new(fmt, options, None, Some(on_result)).unwrap();
            let start = Instant::now();
            for (i, piece) in pieces.iter().enumerate() {
                if i > 0 {
                    std::thread::sleep(Duration::from_millis(200));
                }
                stream.feed(&reg, piece).unwrap();
            }
            let end = start.elapsed();
            stream.finish(&reg).unwrap();
            let first = first.lock().unwrap().unwrap() - start;
            figures.push((early, first, end));
        }
        for (early, first, end) in figures {
            let mode = if early {
                "streaming (early dispatch)"
            } else {
                "buffering (run at the end)"
            };
            println!(
                "{dir:17} {mode:27} first result after {:7.1} ms; body ended after {:7.1} ms",
                first.as_secs_f64() * 1e3,
                end.as_secs_f64() * 1e3
            );
        }
    }
}

#[test]
fn openai_chat_starts_a_call_as_soon_as_its_arguments_are_a_whole_object() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut stream = recording_stream(Format::OpenAiChat, true, log.clone());
    let body = fixture("openai_chat", "parallel.sse");
    // Up to (not including) the event that starts the second call.
    let second = pieces_by_call(Format::OpenAiChat, &body);
    let first_call: Vec<u8> = second[..2].concat();
    stream.feed(&reg, &first_call).unwrap();
    assert!(
        wait_for(&log, |l| l.iter().any(|e| matches!(e, Ev::Result(0, _)))),
        "the first call did not start before the second began"
    );
    stream.feed(&reg, &body[first_call.len()..]).unwrap();
    assert_eq!(stream.finish(&reg).unwrap().results.len(), 3);
}

#[test]
fn more_than_whitespace_after_whole_arguments_fails_a_started_call_and_revises_one_not_started() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let start = r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"UTC\"}"}}]}}]}"#.to_owned() + "\n\n";
    let space = chat_chunk(0, "  ");
    let junk = chat_chunk(0, "}");
    let end = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    // Whitespace after whole arguments: fine, early or not; the text keeps it.
    for early in [false, true] {
        let options = StreamOptions {
            early_dispatch: early,
            ..Default::default()
        };
        let body = [start.as_bytes(), space.as_bytes(), end.as_bytes()];
        let done = run(&reg, Format::OpenAiChat, options, &body).0.unwrap();
        assert_eq!(
            done.calls[0].to_json()["arguments"],
            json!("{\"tz\":\"UTC\"}  ")
        );
    }
    // More than whitespace: not started yet, the call gets the whole text
    // (and fails as invalid arguments, as the non-streamed body would).
    let body = [start.as_bytes(), junk.as_bytes(), end.as_bytes()];
    let done = run(&reg, Format::OpenAiChat, StreamOptions::default(), &body)
        .0
        .unwrap();
    assert_eq!(done.results[0].outcome, Outcome::InvalidArguments);
    // Already started with the whole object: the stream fails.
    let options = StreamOptions {
        early_dispatch: true,
        ..Default::default()
    };
    let err = run(&reg, Format::OpenAiChat, options, &body).0.unwrap_err();
    assert!(
        matches!(err, capstan::Error::InvalidResponse(ref m) if m.contains("whole JSON object")),
        "{err}"
    );
}

#[test]
fn chat_arguments_split_across_feeds_start_only_once_whole_and_a_length_stop_cuts_the_open_call() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let mut stream = Stream::new(Format::OpenAiChat, early(true), None, None).unwrap();
    stream
        .feed(
            &reg,
            chat_start(0, "c0", "get_weather", "{\"city\":").as_bytes(),
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert!(
        ran.lock().unwrap().is_empty(),
        "started before its arguments were whole"
    );
    stream
        .feed(&reg, chat_chunk(0, "\"Oslo\"}").as_bytes())
        .unwrap();
    assert!(started(&ran, "c0"));
    stream.feed(&reg, chat_end().as_bytes()).unwrap();
    let done = stream.finish(&reg).unwrap();
    assert_eq!(
        done.calls[0].arguments.clone().into_value().unwrap(),
        json!({"city": "Oslo"})
    );
    assert_eq!(done.results[0].outcome, Outcome::Ok);

    // finish_reason "length" with a call still open: cut, never run.
    let length = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]});
    let body = chat_start(0, "c1", "get_time", "{\"tz\":")
        + &format!("data: {length}\n\ndata: [DONE]\n\n");
    let (got, ran, _) = run_whole(Format::OpenAiChat, &body);
    assert_eq!(got.cut, [0]);
    assert!(
        got.results[0].content.contains("finish_reason \"length\""),
        "{}",
        got.results[0].content
    );
    assert!(ran.is_empty());
}

#[test]
fn a_responses_call_starts_at_its_arguments_done_event() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let mut stream = Stream::new(Format::OpenAiResponses, early(true), None, None).unwrap();
    let body = responses_item("response.output_item.added", 0, "c0", "get_time", "")
        + &responses_event(json!({"type": "response.function_call_arguments.delta",
            "output_index": 0, "item_id": "fc_0", "delta": "{}"}))
        + &responses_event(json!({"type": "response.function_call_arguments.done",
            "output_index": 0, "item_id": "fc_0", "arguments": "{}"}));
    stream.feed(&reg, body.as_bytes()).unwrap();
    assert!(
        started(&ran, "c0"),
        "the call starts before the response ends"
    );
    let end = responses_event(json!({"type": "response.completed", "response":
        {"id": "r", "object": "response", "status": "completed", "output": []}}));
    stream.feed(&reg, end.as_bytes()).unwrap();
    assert_eq!(stream.finish(&reg).unwrap().results[0].outcome, Outcome::Ok);
}

#[test]
fn chat_arguments_that_are_json_but_no_object_wait_for_the_finish_and_empty_ones_run_there() {
    // Only a whole JSON object completes a Chat call early: "5" may still
    // grow ("50"), so it completes when the next call starts; "" (a call
    // without arguments) completes at the finish_reason and runs.
    let log = Arc::new(Mutex::new(Vec::new()));
    let ran = Arc::new(Mutex::new(Vec::new()));
    let reg = counting_registry(ran.clone(), 0);
    let mut stream = recording_stream(Format::OpenAiChat, true, log.clone());
    stream
        .feed(&reg, chat_start(0, "n", "get_time", "5").as_bytes())
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(log.lock().unwrap().is_empty(), "{:?}", log.lock().unwrap());
    stream.feed(&reg, chat_chunk(0, "0").as_bytes()).unwrap();
    stream
        .feed(&reg, chat_start(1, "e", "get_time", "").as_bytes())
        .unwrap();
    stream.feed(&reg, chat_end().as_bytes()).unwrap();
    let done = stream.finish(&reg).unwrap();
    assert_eq!(
        done.calls[0].arguments,
        capstan::Arguments::Text("50".into())
    );
    assert_eq!(done.results[0].outcome, Outcome::InvalidArguments);
    assert!(done.cut.is_empty(), "{:?}", done.cut);
    assert_eq!(
        done.results[1].outcome,
        Outcome::Ok,
        "{}",
        done.results[1].content
    );
    assert_eq!(*ran.lock().unwrap(), ["e"]);
}
