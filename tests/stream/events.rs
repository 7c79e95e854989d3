//! Provider events: cut, dropped and failing streams, and the event
//! shapes each format may send.

use super::*;

#[test]
fn a_call_cut_by_the_token_limit_is_never_run_and_gets_an_error_result() {
    for (fmt, dir) in &FORMATS[..3] {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let reg = counting_registry(ran.clone(), 0);
        let body = fixture(dir, "truncated.sse");
        for early in [false, true] {
            ran.lock().unwrap().clear();
            let options = StreamOptions {
                early_dispatch: early,
                ..Default::default()
            };
            let (got, _) = run(&reg, *fmt, options, &[&body]);
            let got = got.unwrap_or_else(|e| panic!("{dir}: {e}"));
            assert_eq!(got.cut, vec![1], "{dir}");
            assert_eq!(got.results.len(), 2);
            assert_eq!(got.results[0].outcome, Outcome::Ok, "{dir}");
            assert_eq!(got.results[1].outcome, Outcome::InvalidArguments, "{dir}");
            assert!(
                got.results[1].content.starts_with("Not run"),
                "{dir}: {}",
                got.results[1].content
            );
            assert_eq!(got.results[1].id, "call_t2");
            assert_eq!(*ran.lock().unwrap(), vec!["call_w1".to_owned()], "{dir}");
        }
    }
}

#[test]
fn a_stream_that_ends_before_its_closing_event_is_stream_truncated_and_runs_no_cut_call() {
    for (fmt, dir) in FORMATS {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let reg = counting_registry(ran.clone(), 0);
        let body = fixture(dir, "dropped.sse");
        // Cut also inside the last line: the half line is dropped.
        for end in [body.len(), body.len() - 5] {
            ran.lock().unwrap().clear();
            let (got, _) = run(&reg, fmt, StreamOptions::default(), &[&body[..end]]);
            match got {
                Err(capstan::Error::StreamTruncated(m)) => assert!(m.contains("last event"), "{m}"),
                other => panic!("{dir}: {other:?}"),
            }
            assert!(
                ran.lock().unwrap().is_empty(),
                "{dir}: a call ran without early dispatch"
            );
        }
    }
}

#[test]
fn a_provider_error_event_gives_the_non_streamed_parsers_error_and_sticks() {
    let reg = Registry::default();
    for (fmt, dir) in FORMATS {
        let body = fixture(dir, "error.sse");
        let text = String::from_utf8(body.clone()).unwrap();
        let last = text.trim_end().rsplit("data: ").next().unwrap().trim();
        let (mut out, mut len) = (std::ptr::null_mut(), 0);
        let st = unsafe {
            capstan_format_parse_calls(
                fmt as u32,
                last.as_ptr().cast(),
                last.len(),
                &mut out,
                &mut len,
            )
        };
        assert_eq!(st, CAPSTAN_ERR_PROVIDER_ERROR, "{dir}");
        let want = last_error();
        let mut stream = Stream::new(fmt, StreamOptions::default(), None, None).unwrap();
        let err = stream.feed(&reg, &body).unwrap_err();
        assert_eq!(err.to_string(), want, "{dir}");
        assert_eq!(
            stream.feed(&reg, b"\n").unwrap_err(),
            err,
            "{dir}: not sticky"
        );
        assert_eq!(stream.finish(&reg).unwrap_err(), err, "{dir}: not sticky");
    }
}

#[test]
fn an_anthropic_block_event_without_a_numeric_index_is_an_invalid_response() {
    let reg = Registry::default();
    for event in [
        json!({"type": "content_block_start", "content_block": {"type": "tool_use", "id": "a", "name": "b", "input": {}}}),
        json!({"type": "content_block_delta", "index": "0", "delta": {"type": "text_delta", "text": "hi"}}),
        json!({"type": "content_block_stop"}),
    ] {
        let mut stream =
            Stream::new(Format::Anthropic, StreamOptions::default(), None, None).unwrap();
        let kind = event["type"].as_str().unwrap().to_owned();
        let err = stream
            .feed(&reg, anthropic_event(event).as_bytes())
            .unwrap_err();
        match err {
            capstan::Error::InvalidResponse(m) => {
                assert_eq!(m, format!("{kind} event has no numeric \"index\""))
            }
            other => panic!("{kind}: {other:?}"),
        }
    }
}

#[test]
fn anthropic_text_in_a_block_start_a_stray_delta_and_a_block_left_open_at_message_stop() {
    let tool_use = |index: u64, id: &str, name: &str| {
        anthropic_event(json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}))
    };
    let input = |index: u64, json: &str| {
        anthropic_event(json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": json}}))
    };
    let stop = |index: u64| anthropic_event(json!({"type": "content_block_stop", "index": index}));
    let body = [
        // Text may come in the block start itself.
        anthropic_event(json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": "Hello"}})),
        anthropic_event(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": " world"}})),
        stop(0),
        tool_use(1, "a", "get_time"),
        input(1, "{}"),
        stop(1),
        tool_use(2, "b", "get_weather"),
        // A delta for a block already stopped, or never started, is
        // ignored, not given to the block still open.
        input(1, "junk"),
        input(9, "junk"),
        input(2, "{\"city\":\"Oslo\"}"),
        stop(2),
        // Block 3 never stops: the response ends with it open.
        tool_use(3, "c", "search"),
        input(3, "{\"q\":"),
        anthropic_event(json!({"type": "message_delta",
            "delta": {"stop_reason": "max_tokens", "stop_sequence": null}})),
        anthropic_event(json!({"type": "message_stop"})),
    ]
    .concat();
    let (got, mut ran, text) = run_whole(Format::Anthropic, &body);
    assert_eq!(text, "Hello world");
    assert_eq!(got.text, "Hello world");
    assert_eq!(got.stop_reason.as_deref(), Some("max_tokens"));
    assert_eq!(got.cut, [2]);
    assert_eq!(got.results[0].outcome, Outcome::Ok);
    assert_eq!(
        got.results[1].outcome,
        Outcome::Ok,
        "{}",
        got.results[1].content
    );
    assert_eq!(
        got.calls[1].arguments.clone().into_value().unwrap(),
        json!({"city": "Oslo"})
    );
    assert_eq!(got.results[2].outcome, Outcome::InvalidArguments);
    assert!(
        got.results[2]
            .content
            .contains("the response ended (stop_reason \"max_tokens\") before this tool_use block was complete"),
        "{}",
        got.results[2].content
    );
    ran.sort();
    assert_eq!(ran, ["a", "b"]);
}

#[test]
fn a_gemini_prompt_blocked_before_any_candidate_is_a_provider_error_and_usage_alone_is_not() {
    let reg = Registry::default();
    let blocked = gemini_chunk(json!({"promptFeedback": {"blockReason": "SAFETY"},
        "usageMetadata": {"promptTokenCount": 5}}));
    let mut stream = Stream::new(Format::Gemini, StreamOptions::default(), None, None).unwrap();
    match stream.feed(&reg, blocked.as_bytes()) {
        Err(capstan::Error::ProviderError { kind, .. }) => assert_eq!(kind, "SAFETY"),
        other => panic!("{other:?}"),
    }
    // Feedback next to candidates is no block; a usage-only chunk is no error.
    let body = [
        gemini_chunk(
            json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "", "name": "get_time", "args": {}}},
            {"functionCall": {"name": "get_time", "args": {}}}]}}],
            "promptFeedback": {"blockReason": "OTHER"}}),
        ),
        gemini_chunk(json!({"usageMetadata": {"totalTokenCount": 9}})),
        gemini_chunk(
            json!({"candidates": [{"content": {"role": "model", "parts": []},
            "finishReason": "STOP"}]}),
        ),
    ]
    .concat();
    let (got, _, _) = run_whole(Format::Gemini, &body);
    assert_eq!(got.stop_reason.as_deref(), Some("STOP"));
    // An empty id is replaced, as the non-streamed parser does.
    assert!(!got.calls[0].id.is_empty());
    assert_ne!(got.calls[0].id, got.calls[1].id);
    assert!(got.results.iter().all(|r| r.outcome == Outcome::Ok));
}

#[test]
fn event_data_that_is_not_json_is_an_invalid_response_showing_its_start() {
    let reg = Registry::default();
    for (data, shown) in [
        ("x".repeat(200), format!("{}...", "x".repeat(80))),
        ("x".repeat(80), "x".repeat(80)),
        ("[1]".to_owned(), "[1]".to_owned()),
    ] {
        let mut stream =
            Stream::new(Format::OpenAiChat, StreamOptions::default(), None, None).unwrap();
        match stream.feed(&reg, format!("data: {data}\n\n").as_bytes()) {
            Err(capstan::Error::InvalidResponse(m)) => {
                assert!(m.ends_with(&format!(": {shown}")), "{m}")
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn chat_fragments_without_an_index_start_a_call_with_an_id_and_continue_the_last_without() {
    // Some OpenAI-compatible servers leave out "index".
    let fragment = |call: Value| {
        let chunk = json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]});
        format!("data: {chunk}\n\n")
    };
    let body = [
        fragment(json!({"id": "a", "type": "function",
            "function": {"name": "get_time", "arguments": "{\"tz\""}})),
        fragment(json!({"id": null, "function": {"arguments": ":\"UTC\"}"}})),
        fragment(json!({"id": "b", "type": "function",
            "function": {"name": "get_weather", "arguments": "{}"}})),
        chat_end(),
    ]
    .concat();
    let (got, _, _) = run_whole(Format::OpenAiChat, &body);
    let calls: Vec<(String, String, Value)> = got
        .calls
        .iter()
        .map(|c| {
            let args = c.arguments.clone().into_value().unwrap();
            (c.id.clone(), c.name.clone(), args)
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("a".into(), "get_time".into(), json!({"tz": "UTC"})),
            ("b".into(), "get_weather".into(), json!({}))
        ]
    );
}

#[test]
fn responses_events_that_name_their_item_only_by_item_id_reach_that_item() {
    let delta = |item: &str, text: &str| {
        responses_event(json!({"type": "response.function_call_arguments.delta",
            "item_id": item, "delta": text}))
    };
    let done = |item: &str| {
        responses_event(json!({"type": "response.function_call_arguments.done", "item_id": item}))
    };
    let body = [
        responses_item("response.output_item.added", 0, "c0", "get_time", ""),
        responses_item("response.output_item.added", 1, "c1", "get_weather", ""),
        delta("fc_1", "{\"city\":"),
        delta("fc_0", "{\"tz\":"),
        delta("fc_1", "\"Oslo\"}"),
        delta("fc_0", "\"UTC\"}"),
        done("fc_0"),
        done("fc_1"),
        responses_event(json!({"type": "response.completed", "response":
            {"id": "r", "object": "response", "status": "completed", "output": []}})),
    ]
    .concat();
    let (got, _, _) = run_whole(Format::OpenAiResponses, &body);
    let args: Vec<Value> = got
        .calls
        .iter()
        .map(|c| c.arguments.clone().into_value().unwrap())
        .collect();
    assert_eq!(args, [json!({"tz": "UTC"}), json!({"city": "Oslo"})]);
}

#[test]
fn sse_framing_skips_a_leading_bom_and_names_the_line_that_is_not_utf8() {
    let reg = Registry::default();
    // The first line carries the call, so a BOM left in place would lose it.
    let body = format!(
        "\u{feff}{}{}",
        chat_start(0, "c0", "get_time", "{}"),
        chat_end()
    );
    let (bom, _, _) = run_whole(Format::OpenAiChat, &body);
    assert_eq!(bom.calls.len(), 1);
    assert_eq!(bom.calls[0].id, "c0");

    let mut stream = Stream::new(Format::OpenAiChat, StreamOptions::default(), None, None).unwrap();
    let err = stream
        .feed(&reg, b": comment\n\ndata: \xff\xfe\n\n")
        .unwrap_err();
    assert!(
        err.to_string().contains("stream line 3 is not valid UTF-8"),
        "{err}"
    );
}

#[test]
fn a_responses_arguments_done_event_is_authoritative_over_its_deltas() {
    let body = responses_item("response.output_item.added", 0, "c0", "get_weather", "")
        + &responses_event(json!({"type": "response.function_call_arguments.delta",
            "output_index": 0, "delta": "{\"city\":\"Os"}))
        + &responses_event(json!({"type": "response.function_call_arguments.done",
            "output_index": 0, "arguments": "{\"city\":\"Oslo\"}"}))
        + &responses_event(json!({"type": "response.completed", "response":
            {"id": "r", "object": "response", "status": "completed", "output": []}}));
    let (got, _, _) = run_whole(Format::OpenAiResponses, &body);
    assert_eq!(
        got.calls[0].arguments.clone().into_value().unwrap(),
        json!({"city": "Oslo"})
    );
}
