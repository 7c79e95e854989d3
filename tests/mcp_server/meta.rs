//! MCP metadata carried by the tool itself (title, annotations,
//! outputSchema, icons): served in `tools/list`, kept by a mount, and the
//! outputSchema checked against structured content on both sides.

use crate::helpers::*;
use capstan::McpMeta;

fn sum_meta() -> McpMeta {
    McpMeta::from_value(
        &json!({
            "title": "Addition",
            "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false},
            "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
            "icons": [{"src": "https://example.com/add.png", "mimeType": "image/png", "sizes": ["48x48"]}],
        }),
        "meta",
    )
    .expect("valid metadata")
}

/// `sum` answers `{"sum": a+b}`; with `"lie": true` it answers `{"sum": "a+b"}`.
fn sum_registry() -> Registry {
    let reg = Registry::default();
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "lie": {"type": "boolean"}}});
    reg.register_with_mcp(
        def("sum", schema, |call| {
            let a = call.arguments()["a"].as_i64().unwrap_or(0);
            let b = call.arguments()["b"].as_i64().unwrap_or(0);
            let sum = if call.arguments()["lie"] == true {
                json!((a + b).to_string())
            } else {
                json!(a + b)
            };
            let _ = call.complete_value(&json!({ "sum": sum }));
        }),
        sum_meta(),
    )
    .expect("register");
    reg
}

#[test]
fn tool_metadata_is_served_in_tools_list_and_kept_by_a_mount() {
    let served = sum_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let session = raw_session(server.url());
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, _, body) = raw_exchange(server.url(), &[("Mcp-Session-Id", &session)], list);
    assert_eq!(status, 200, "{body}");
    let answer = message(&body);
    let sum = &answer["result"]["tools"][0];
    assert_eq!(sum["title"], "Addition", "{sum}");
    assert_eq!(sum["annotations"]["readOnlyHint"], true, "{sum}");
    assert_eq!(sum["outputSchema"]["required"], json!(["sum"]), "{sum}");
    assert_eq!(sum["icons"][0]["sizes"], json!(["48x48"]), "{sum}");

    let client = Registry::default();
    let mount = mount(&client, server.url(), vec![]).expect("mount");
    let kept = client.get("s_sum").expect("s_sum").spec().mcp;
    assert_eq!(kept, sum_meta(), "the mount keeps what the server declared");
    // The host reads it in the describe export.
    let described = capstan::providers::export_tools(
        &client.specs(),
        capstan::providers::Format::Describe,
        &Default::default(),
    );
    assert_eq!(
        described.tools[0]["mcp"]["annotations"]["idempotentHint"],
        true
    );
    let ok = call(&client, "s_sum", json!({"a": 2, "b": 3}));
    assert_eq!(
        (ok.outcome, ok.content.as_str()),
        (Outcome::Ok, r#"{"sum":5}"#)
    );
    mount.unmount();
    assert!(server.stop());
}

#[test]
fn structured_content_failing_the_output_schema_is_a_tool_error_naming_the_pointer() {
    let reg = sum_registry();
    let ok = call(&reg, "sum", json!({"a": 1, "b": 1}));
    assert_eq!(ok.outcome, Outcome::Ok, "{ok:?}");
    let bad = call(&reg, "sum", json!({"a": 1, "b": 1, "lie": true}));
    assert_eq!(bad.outcome, Outcome::ToolError, "{bad:?}");
    assert!(
        bad.content.contains("outputSchema") && bad.content.contains("at /sum"),
        "{bad:?}"
    );
    // Structured content in parts is checked too.
    reg.register_with_mcp(
        def("parts", json!({"type": "object"}), |call| {
            let r = call.complete_parts(json!({"content": [], "structuredContent": {"sum": 1.5}}));
            assert!(matches!(r, Err(capstan::Error::InvalidContent(_))), "{r:?}");
        }),
        sum_meta(),
    )
    .unwrap();
    let parts = call(&reg, "parts", json!({}));
    assert_eq!(parts.outcome, Outcome::ToolError, "{parts:?}");
    assert!(parts.content.contains("at /sum"), "{parts:?}");
}

#[test]
fn a_mounted_server_whose_structured_content_breaks_its_output_schema_gives_an_error_result() {
    // The served tool has no schema of its own: only the served list
    // declares one (tools_meta), so nothing stops the lie on the server.
    let served = Registry::default();
    served
        .register(def("sum", json!({"type": "object"}), |call| {
            // Text alone reaches the mount's model; the check reads structuredContent.
            let _ = call.complete_parts(json!({
                "content": [{"type": "text", "text": "five"}],
                "structuredContent": {"sum": "five"},
            }));
        }))
        .unwrap();
    let options = ServerOptions {
        tools_meta: json!({"sum": {"outputSchema": sum_meta().output_schema}})
            .as_object()
            .unwrap()
            .clone(),
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).expect("start");
    let client = Registry::default();
    let mount = mount(&client, server.url(), vec![]).expect("mount");
    let r = call(&client, "s_sum", json!({}));
    assert_eq!(r.outcome, Outcome::ToolError, "{r:?}");
    assert!(
        r.content.starts_with("MCP server http")
            && r.content.contains("outputSchema")
            && r.content.contains("at /sum"),
        "{r:?}"
    );
    mount.unmount();
    assert!(server.stop());
}

#[test]
fn an_output_schema_that_is_not_an_object_schema_is_refused_at_registration() {
    let reg = Registry::default();
    let meta = McpMeta {
        output_schema: Some(json!({"type": "array"})),
        ..McpMeta::default()
    };
    let e = reg
        .register_with_mcp(def("x", json!({"type": "object"}), |_| {}), meta)
        .unwrap_err();
    assert!(matches!(e, capstan::Error::InvalidSchema(_)), "{e}");
    assert!(reg.get("x").is_none());
}
