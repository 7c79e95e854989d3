//! Content parts (images, audio, files, links) in every format's results.

use super::*;
use capstan::{ContentKind, ExecOptions, Registry, RegistryOptions, ToolDef};

/// The 8-byte PNG signature, base64.
const PNG: &str = "iVBORw0KGgo=";
const PDF: &str = "JVBERi0xLjQK"; // "%PDF-1.4\n"
const WAV: &str = "UklGRg=="; // "RIFF"

fn with_parts(id: &str, name: &str, parts: Value) -> ToolResult {
    let mut v = json!({"id": id, "name": name, "content": "", "outcome": "ok"});
    v["parts"] = parts;
    ToolResult::from_json(&v, 0).unwrap()
}

fn every_kind() -> ToolResult {
    with_parts(
        "call_1",
        "shot",
        json!([
            {"type": "text", "text": "the screen"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "image", "data": PNG, "mimeType": "image/bmp"},
            {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///log.txt", "name": "log", "mimeType": "text/plain"},
            {"type": "resource", "resource": {"uri": "mem://notes", "mimeType": "text/plain", "text": "a note"}},
            {"type": "resource", "resource": {"uri": "file:///r/report.pdf", "mimeType": "application/pdf", "blob": PDF}}
        ]),
    )
}

#[test]
fn content_text_describes_the_parts() {
    assert_eq!(
        every_kind().content,
        "the screen\n[image: image/png, 8 bytes]\n[image: image/bmp, 8 bytes]\n\
         [audio: audio/wav, 4 bytes]\n[resource_link: log file:///log.txt (text/plain)]\n\
         [resource: mem://notes (text/plain)]\na note\n\
         [resource: file:///r/report.pdf (application/pdf), 9 bytes]"
    );
}

#[test]
fn openai_responses_output_is_an_array_of_input_parts() {
    let out = format_results(Format::OpenAiResponses, &[every_kind()]);
    let url = format!("data:image/png;base64,{PNG}");
    assert_exact(
        &out,
        &json!([{"type": "function_call_output", "call_id": "call_1", "output": [
            {"type": "input_text", "text": "the screen"},
            {"type": "input_image", "image_url": url, "detail": "auto"},
            {"type": "input_text", "text": "[left out: image (image/bmp, 8 bytes): OpenAI takes PNG, JPEG, GIF and WebP images only]"},
            {"type": "input_text", "text": "[left out: audio (audio/wav, 4 bytes): OpenAI Responses takes no audio in a function call output]"},
            {"type": "input_text", "text": "[resource_link: log file:///log.txt (text/plain)]"},
            {"type": "input_text", "text": "[resource: mem://notes (text/plain)]\na note"},
            {"type": "input_file", "filename": "report.pdf", "file_data": format!("data:application/pdf;base64,{PDF}")}
        ]}]),
    );
}

#[test]
fn openai_chat_sends_media_in_one_user_message_after_the_tool_messages() {
    let plain = ok("call_0", "t", "plain");
    let out = format_results(Format::OpenAiChat, &[plain, every_kind()]);
    let url = format!("data:image/png;base64,{PNG}");
    assert_exact(
        &out,
        &json!([
            {"role": "tool", "tool_call_id": "call_0", "content": "plain"},
            {"role": "tool", "tool_call_id": "call_1", "content":
                "the screen\n[image_url sent in the next user message]\n\
                 [left out: image (image/bmp, 8 bytes): OpenAI takes PNG, JPEG, GIF and WebP images only]\n\
                 [input_audio sent in the next user message]\n\
                 [resource_link: log file:///log.txt (text/plain)]\n\
                 [resource: mem://notes (text/plain)]\na note\n\
                 [file sent in the next user message]"},
            {"role": "user", "content": [
                {"type": "text", "text": "Content returned by tool call call_1 (shot):"},
                {"type": "image_url", "image_url": {"url": url}},
                {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}},
                {"type": "file", "file": {"filename": "report.pdf", "file_data": format!("data:application/pdf;base64,{PDF}")}}
            ]}
        ]),
    );
    // Without parts: tool messages only, as before.
    let out = format_results(Format::OpenAiChat, &[ok("a", "t", "x")]);
    assert_eq!(out.as_array().unwrap().len(), 1);
}

#[test]
fn anthropic_tool_result_holds_image_and_document_blocks() {
    let out = format_results(Format::Anthropic, &[every_kind()]);
    assert_exact(
        &out,
        &json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": [
            {"type": "text", "text": "the screen"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {"type": "text", "text": "[left out: image (image/bmp, 8 bytes): Anthropic takes JPEG, PNG, GIF and WebP images only]"},
            {"type": "text", "text": "[left out: audio (audio/wav, 4 bytes): Anthropic takes no audio in a tool result]"},
            {"type": "text", "text": "[resource_link: log file:///log.txt (text/plain)]"},
            {"type": "text", "text": "[resource: mem://notes (text/plain)]\na note"},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}}
        ]}]}),
    );
}

#[test]
fn gemini_function_response_carries_inline_data_parts() {
    let out = format_results(Format::Gemini, &[every_kind()]);
    assert_exact(
        &out,
        &json!({"role": "user", "parts": [{"functionResponse": {
            "id": "call_1",
            "name": "shot",
            "response": {"output":
                "the screen\n[image/png attached as part 0]\n\
                 [left out: image (image/bmp, 8 bytes): Gemini takes PNG, JPEG and WebP images, PDF and plain text only in a function response]\n\
                 [left out: audio (audio/wav, 4 bytes): Gemini takes PNG, JPEG and WebP images, PDF and plain text only in a function response]\n\
                 [resource_link: log file:///log.txt (text/plain)]\n\
                 [resource: mem://notes (text/plain)]\na note\n\
                 [application/pdf attached as part 1]"},
            "parts": [
                {"inlineData": {"mimeType": "image/png", "data": PNG}},
                {"inlineData": {"mimeType": "application/pdf", "data": PDF}}
            ]
        }}]}),
    );
}

fn mcp_validator(def: &str) -> jsonschema::Validator {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/provider-spec/mcp_schema/mcp_schema_2026-07-28.json");
    let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    schema["$ref"] = json!(format!("#/$defs/{def}"));
    jsonschema::validator_for(&schema).unwrap()
}

#[test]
fn mcp_keeps_blocks_and_structured_content_and_fits_the_mcp_schema() {
    let mut r = every_kind();
    let mut v = r.to_json();
    v["structured_content"] = json!({"w": 640, "h": 480});
    r = ToolResult::from_json(&v, 0).unwrap();
    let out = format_results(Format::Mcp, &[r.clone()]);
    let item = &out[0];
    assert_eq!(item["content"], r.to_json()["parts"]);
    assert_eq!(item["structuredContent"], json!({"w": 640, "h": 480}));
    assert_eq!(item["isError"], json!(false));
    let validator = mcp_validator("CallToolResult");
    let errors: Vec<String> = validator.iter_errors(item).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    // The validator does catch a block of the wrong shape.
    let mut broken = item.clone();
    broken["content"][1] = json!({"type": "image", "data": PNG});
    assert!(!validator.is_valid(&broken));
}

#[test]
fn normalized_results_round_trip_their_parts() {
    let r = every_kind();
    let json = r.to_json();
    assert_eq!(json["parts"].as_array().unwrap().len(), 7);
    assert!(json.get("structured_content").is_none());
    let back = ToolResult::from_json(&json, 0).unwrap();
    assert_eq!(back, r);
    // describe output read back is a fixed point (what the format_results
    // fuzz target asserts).
    let once = format_results(Format::Describe, std::slice::from_ref(&r));
    let twice = format_results(
        Format::Describe,
        &ToolResult::list_from_json(&once).unwrap(),
    );
    assert_eq!(once, twice);
    let text = capstan::call::results_to_string(std::slice::from_ref(&r));
    assert_eq!(text, capstan::call::results_to_json(&[r]).to_string());
    // Bad parts in results JSON are refused, naming the result and part.
    let bad = json!({"id": "a", "name": "t", "content": "", "parts": [{"type": "image", "data": "@@", "mimeType": "image/png"}]});
    match ToolResult::from_json(&bad, 3) {
        Err(Error::InvalidResults(m)) => assert!(m.starts_with("result 3: part 0:"), "{m}"),
        other => panic!("{other:?}"),
    }
}

fn screenshot_registry(max_result_bytes: u64) -> Registry {
    let reg = Registry::new(RegistryOptions {
        max_result_bytes,
        ..Default::default()
    });
    let def = |name: &str, parts: Value| ToolDef {
        max_output_chars: if name == "shot" { 4 } else { 0 },
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(move |call: capstan::Call| {
            let _ = call.complete(ContentKind::Parts, &parts.to_string());
        }),
        timeout_ms: 0,
        flags: Default::default(),
    };
    reg.register(def(
        "shot",
        json!([{"type": "text", "text": "a screenshot"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]),
    ))
    .unwrap();
    reg.register(def(
        "bad",
        json!([{"type": "image", "data": "not base64!", "mimeType": "image/png"}]),
    ))
    .unwrap();
    reg
}

#[test]
fn run_turn_renders_a_tool_s_image_and_caps_only_its_text() {
    let reg = screenshot_registry(0);
    let body = json!({"content": [
        {"type": "tool_use", "id": "t1", "name": "shot", "input": {}},
        {"type": "tool_use", "id": "t2", "name": "bad", "input": {}}
    ]});
    let out = capstan::run_turn(&reg, Format::Anthropic, &body, &ExecOptions::default()).unwrap();
    let blocks = &out["content"];
    assert_exact(
        &blocks[0]["content"],
        &json!([
            {"type": "text", "text": "a sc\n[truncated: 8 more characters]"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
        ]),
    );
    // The bad one is a tool error of its own; the other call is untouched.
    assert_eq!(blocks[1]["is_error"], json!(true));
    let text = blocks[1]["content"].as_str().unwrap();
    assert!(
        text.contains("Tool \"bad\" returned content parts that cannot be sent: part 0: \"data\" is not valid base64"),
        "{text}"
    );
}

#[test]
fn a_result_past_max_result_bytes_is_a_tool_error_for_that_call_only() {
    let reg = screenshot_registry(4);
    let calls = vec![
        CallRequest::new("a", "shot", json!({})),
        CallRequest::new("b", "nope", json!({})),
    ];
    let results = capstan::execute(&reg, calls, &ExecOptions::default());
    assert_eq!(results[0].outcome, Outcome::ToolError);
    assert!(
        results[0].content.contains("past the size limit"),
        "{}",
        results[0].content
    );
    assert!(results[0].parts.is_none());
    assert_eq!(results[1].outcome, Outcome::UnknownTool);
    // The default (10 MiB) takes it.
    let reg = screenshot_registry(0);
    let results = capstan::execute(
        &reg,
        vec![CallRequest::new("a", "shot", json!({}))],
        &ExecOptions::default(),
    );
    assert_eq!(results[0].outcome, Outcome::Ok);
}

#[test]
fn structured_content_alone_is_sent_as_its_json_text() {
    let v =
        json!({"id": "s", "name": "t", "content": "", "parts": [], "structured_content": {"n": 1}});
    let r = ToolResult::from_json(&v, 0).unwrap();
    assert_eq!(r.content, r#"{"n":1}"#);
    let chat = format_results(Format::OpenAiChat, std::slice::from_ref(&r));
    assert_eq!(
        chat,
        json!([{"role": "tool", "tool_call_id": "s", "content": "{\"n\":1}"}])
    );
    let gemini = format_results(Format::Gemini, std::slice::from_ref(&r));
    assert_eq!(
        gemini["parts"][0]["functionResponse"]["response"],
        json!({"output": "{\"n\":1}"})
    );
    let anthropic = format_results(Format::Anthropic, std::slice::from_ref(&r));
    assert_eq!(
        anthropic["content"][0]["content"],
        json!([{"type": "text", "text": "{\"n\":1}"}])
    );
    let responses = format_results(Format::OpenAiResponses, std::slice::from_ref(&r));
    assert_eq!(
        responses[0]["output"],
        json!([{"type": "input_text", "text": "{\"n\":1}"}])
    );
    let mcp = format_results(Format::Mcp, std::slice::from_ref(&r));
    assert_eq!(
        (&mcp[0]["content"], &mcp[0]["structuredContent"]),
        (&json!([]), &json!({"n": 1}))
    );
}
