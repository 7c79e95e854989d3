//! The memory cap: what a stream holds counts against `max_buffered`.

use super::*;

#[test]
fn past_the_buffer_cap_feed_fails_with_stream_too_large() {
    let reg = Registry::default();
    let options = StreamOptions {
        max_buffered: 1000,
        ..Default::default()
    };
    // One line that never ends.
    let mut stream = Stream::new(Format::OpenAiChat, options.clone(), None, None).unwrap();
    let line = vec![b'a'; 600];
    stream.feed(&reg, b"data: ").unwrap();
    stream.feed(&reg, &line).unwrap();
    let err = stream.feed(&reg, &line).unwrap_err();
    assert!(matches!(err, capstan::Error::StreamTooLarge(_)), "{err}");
    // Arguments that never end, in small events.
    let mut stream = Stream::new(Format::Anthropic, options.clone(), None, None).unwrap();
    stream
        .feed(&reg, br#"data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"b","input":{}}}

"#)
        .unwrap();
    let delta = b"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1\"}}\n\n";
    feed_until_too_large(&mut stream, &reg, (0..40).map(|_| delta));
    // One whole event over the cap, in one feed, even one the stream ignores.
    let mut stream = Stream::new(Format::Anthropic, options, None, None).unwrap();
    let ping = format!(
        "event: ping\ndata: {{\"type\":\"ping\",\"pad\":\"{}\"}}\n\n",
        "x".repeat(1500)
    );
    let err = stream.feed(&reg, ping.as_bytes()).unwrap_err();
    assert!(matches!(err, capstan::Error::StreamTooLarge(_)), "{err}");
}

#[test]
fn text_and_arguments_kept_for_the_end_count_against_the_cap_and_nothing_else_does() {
    let reg = Registry::default();
    // Text deltas, each small, together over the cap.
    let start = anthropic_event(json!({"type": "content_block_start", "index": 0,
        "content_block": {"type": "text", "text": ""}}));
    let delta = anthropic_event(json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "text_delta", "text": "x".repeat(100)}}));
    let mut stream = Stream::new(Format::Anthropic, capped(2000), None, None).unwrap();
    stream.feed(&reg, start.as_bytes()).unwrap();
    feed_until_too_large(&mut stream, &reg, (0..40).map(|_| delta.as_bytes()));

    // Ten calls: ids and names of 30 bytes, 34 bytes of arguments: about
    // 940 bytes kept, under a cap of 4000 (as long as each is counted once,
    // as the sum of its parts); eighty of them are over it.
    let call = |i: usize| {
        let id = format!("toolu_{i:024}");
        let name = format!("tool_{:025}", 0);
        [
            anthropic_event(json!({"type": "content_block_start", "index": i,
                "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})),
            anthropic_event(json!({"type": "content_block_delta", "index": i,
                "delta": {"type": "input_json_delta", "partial_json": format!("{{\"pad\":\"{}\"}}", "x".repeat(24))}})),
            anthropic_event(json!({"type": "content_block_stop", "index": i})),
        ]
        .concat()
    };
    let mut stream = Stream::new(Format::Anthropic, capped(4000), None, None).unwrap();
    for i in 0..10 {
        stream.feed(&reg, call(i).as_bytes()).unwrap();
    }
    let mut stream = Stream::new(Format::Anthropic, capped(4000), None, None).unwrap();
    feed_until_too_large(&mut stream, &reg, (0..80).map(call));
}

#[test]
fn an_open_chat_call_counts_its_id_name_and_arguments_against_the_cap() {
    let reg = Registry::default();
    let id = format!("call_{}", "i".repeat(25));
    let name = format!("tool_{}", "n".repeat(25));
    let opening = chat_start(0, &id, &name, "{\"pad\":\"");
    let piece = chat_chunk(0, &"x".repeat(10));
    // About 60 + 8 + 580 bytes held for the open call: under a cap of 1000.
    let mut body = opening.clone();
    for _ in 0..58 {
        body.push_str(&piece);
    }
    body.push_str(&chat_chunk(0, "\"}"));
    body.push_str(&chat_end());
    let (got, _) = run(&reg, Format::OpenAiChat, capped(1000), &[body.as_bytes()]);
    let got = got.unwrap();
    assert_eq!(got.calls[0].id, id);
    // Arguments that never end pass the cap.
    let mut stream = Stream::new(Format::OpenAiChat, capped(1000), None, None).unwrap();
    stream.feed(&reg, opening.as_bytes()).unwrap();
    feed_until_too_large(&mut stream, &reg, (0..200).map(|_| piece.as_bytes()));
}

#[test]
fn an_event_still_being_built_counts_against_the_cap_and_so_do_open_responses_arguments() {
    let reg = Registry::default();
    // Data lines with no blank line to end the event, and no event name.
    let mut stream = Stream::new(Format::OpenAiChat, capped(1000), None, None).unwrap();
    let line = format!("data: {}\n", "x".repeat(100));
    feed_until_too_large(&mut stream, &reg, (0..40).map(|_| line.as_bytes()));
    // Responses arguments that never end.
    let mut stream = Stream::new(Format::OpenAiResponses, capped(1000), None, None).unwrap();
    stream
        .feed(
            &reg,
            responses_item("response.output_item.added", 0, "c0", "f", "").as_bytes(),
        )
        .unwrap();
    let delta = responses_event(json!({"type": "response.function_call_arguments.delta",
        "output_index": 0, "delta": "x".repeat(50)}));
    feed_until_too_large(&mut stream, &reg, (0..60).map(|_| delta.as_bytes()));
}
