//! Content parts across MCP (issue #30): capstan's server returns a tool's
//! parts as MCP content blocks, and capstan's client passes a mounted tool's
//! blocks through untouched, so a served image reaches the model as an image.

use crate::helpers::*;
use capstan::providers::{format_results, Format};

const PNG: &str = "iVBORw0KGgo=";

#[test]
fn a_mounted_servers_image_reaches_an_anthropic_tool_result_as_an_image_block() {
    let served = Registry::default();
    served
        .register(def("shot", json!({"type": "object"}), |call| {
            let parts = json!({
                "content": [
                    {"type": "text", "text": "the screen"},
                    {"type": "image", "data": PNG, "mimeType": "image/png"},
                    {"type": "resource_link", "uri": "file:///s.png", "name": "s.png"}
                ],
                "structuredContent": {"w": 640}
            });
            call.complete_parts(parts).unwrap();
        }))
        .unwrap();
    served
        .register(def("words", json!({"type": "object"}), |call| {
            call.complete_text("just text").unwrap();
        }))
        .unwrap();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let client = Registry::default();
    let mount = mount(&client, server.url(), vec![]).expect("mount");

    let shot = call(&client, "s_shot", json!({}));
    assert_eq!(shot.outcome, Outcome::Ok, "{shot:?}");
    let parts = shot.parts.as_ref().expect("the blocks stayed parts");
    assert_eq!(
        parts.blocks_json(),
        json!([
            {"type": "text", "text": "the screen"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///s.png", "name": "s.png"}
        ])
    );
    assert_eq!(parts.structured(), Some(&json!({"w": 640})));
    let message = format_results(Format::Anthropic, std::slice::from_ref(&shot));
    assert_eq!(
        message["content"][0]["content"][1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}})
    );
    // A text-only result stays text, as before.
    let words = call(&client, "s_words", json!({}));
    assert_eq!(
        (words.content.as_str(), words.parts.is_none()),
        ("just text", true)
    );
    mount.unmount();
    assert!(server.stop());
}
