//! The HTTP endpoint: request ids, tools/list extras, serverInfo, body cap,
//! JSON-RPC errors for bad input, bearer token, Origin/Host, options.

use crate::helpers::*;

#[test]
fn a_tool_sees_the_json_rpc_request_id_as_its_call_id() {
    let served = Registry::default();
    served
        .register(def("whoami", json!({"type": "object"}), |call| {
            let id = call.id().to_string();
            call.complete_text(id).unwrap();
        }))
        .unwrap();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    // A numeric id (capstan's client numbers its requests) as its digits.
    let client = Registry::default();
    let mount = mount(&client, server.url(), vec![]).expect("mount");
    let seen = call(&client, "s_whoami", json!({}));
    assert_eq!(seen.outcome, Outcome::Ok, "{seen:?}");
    assert!(
        !seen.content.is_empty() && seen.content.parse::<u64>().is_ok(),
        "{seen:?}"
    );
    mount.unmount();
    // A string id as the string itself.
    let session = raw_session(server.url());
    let request = r#"{"jsonrpc":"2.0","id":"req-7","method":"tools/call","params":{"name":"whoami","arguments":{}}}"#;
    let (status, _, body) = raw_exchange(server.url(), &[("Mcp-Session-Id", &session)], request);
    assert_eq!(status, 200, "{body}");
    let answer = message(&body);
    assert_eq!(answer["id"], "req-7", "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "req-7", "{answer}");
    assert!(server.stop());
}

#[test]
fn initialize_names_the_server_and_offers_tools_with_list_changed() {
    let served = served_registry();
    let options = ServerOptions {
        name: "weather-tools".into(),
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).expect("start");
    let (status, _, body) = raw_exchange(server.url(), &[], INITIALIZE);
    assert_eq!(status, 200, "{body}");
    let result = &message(&body)["result"];
    assert_eq!(result["serverInfo"]["name"], "weather-tools", "{result}");
    assert_eq!(
        result["serverInfo"]["version"],
        env!("CARGO_PKG_VERSION"),
        "{result}"
    );
    assert_eq!(
        result["capabilities"]["tools"]["listChanged"], true,
        "{result}"
    );
    assert!(server.stop());
}

#[test]
fn bad_http_input_gets_a_json_rpc_error_and_keeps_its_status() {
    let served = served_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url();
    let error = |head: &str, body: &str| {
        assert!(head.contains("content-type: application/json"), "{head}");
        let answer: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
        assert_eq!(answer["id"], Value::Null, "{answer}");
        assert!(
            !answer["error"]["message"].as_str().unwrap_or("").is_empty(),
            "{answer}"
        );
        answer["error"]["code"].as_i64().expect("a code")
    };
    // Not JSON: a parse error, HTTP 400 (the MCP transport spec; rmcp
    // says 415).
    for garbage in ["{not json", "", "[1,"] {
        let (status, head, body) = raw_exchange(url, &[], garbage);
        assert_eq!((status, error(&head, &body)), (400, -32700), "{body}");
    }
    // JSON, but no JSON-RPC message: an invalid request.
    for not_a_message in [r#"{"foo":1}"#, "12", "[]"] {
        let (status, head, body) = raw_exchange(url, &[], not_a_message);
        assert_eq!((status, error(&head, &body)), (400, -32600), "{body}");
    }
    // JSON, but no session: an invalid request.
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, head, body) = raw_exchange(url, &[], list);
    assert_eq!((status, error(&head, &body)), (400, -32600), "{body}");
    // Refused for its origin: the same, with its own status.
    let (status, head, body) = raw_exchange(url, &[("Origin", "https://evil.example")], list);
    assert_eq!((status, error(&head, &body)), (403, -32600), "{body}");
    // A method the endpoint does not serve keeps its plain answer.
    let (status, head, body) = raw_request("PUT", url, &[], "");
    assert_eq!(status, 405, "{head}");
    assert!(!head.contains("application/json"), "{head}");
    assert_eq!(body, "Method Not Allowed");
    assert!(server.stop());
}

#[test]
fn option_lists_split_on_commas_without_blanks() {
    use capstan::mcp::server::split_list;
    assert_eq!(
        split_list(" https://a.example, ,http://b.example:8080 ,"),
        vec!["https://a.example", "http://b.example:8080"]
    );
    assert!(split_list("").is_empty());
    assert!(split_list(" , ").is_empty());
}

#[test]
fn tools_meta_adds_title_annotations_and_output_schema_to_tools_list() {
    let served = served_registry();
    let meta = json!({"add": {
        "title": "Addition",
        "annotations": {"readOnlyHint": true},
        "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}}}
    }});
    let options = ServerOptions {
        tools_meta: meta.as_object().unwrap().clone(),
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).expect("valid tools_meta starts");
    let session = raw_session(server.url());
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, _, body) = raw_exchange(server.url(), &[("Mcp-Session-Id", &session)], list);
    assert_eq!(status, 200, "{body}");
    let answer = message(&body);
    let tools = answer["result"]["tools"].as_array().expect("tools");
    let add = tools.iter().find(|t| t["name"] == "add").expect("add");
    assert_eq!(add["title"], "Addition", "{add}");
    assert_eq!(add["annotations"]["readOnlyHint"], true, "{add}");
    assert_eq!(add["outputSchema"]["properties"]["sum"]["type"], "integer");
    // Only the tool named gets them.
    let boom = tools.iter().find(|t| t["name"] == "boom").expect("boom");
    assert!(boom.get("title").is_none(), "{boom}");
    assert!(server.stop());
}

#[test]
fn the_default_body_cap_is_four_mebibytes() {
    let served = served_registry();
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let padded = |n: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"raw","version":"1"}},"pad":"{}"}}}}"#,
            "x".repeat(n)
        )
    };
    // 2 MiB is served; just over 4 MiB is refused.
    assert_eq!(raw_post(server.url(), &[], &padded(2 << 20)), 200);
    assert_eq!(raw_post(server.url(), &[], &padded(4 << 20)), 413);
    assert!(server.stop());
}

#[test]
fn a_bearer_token_when_set_is_required_of_every_request() {
    let served = served_registry();
    let options = ServerOptions {
        bearer_token: Some("s3cret".into()),
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).expect("start");
    assert_eq!(raw_post(server.url(), &[], INITIALIZE), 401);
    assert_eq!(
        raw_post(
            server.url(),
            &[("Authorization", "Bearer wrong")],
            INITIALIZE
        ),
        401
    );
    assert_eq!(
        raw_post(
            server.url(),
            &[("Authorization", "bearer s3cret")],
            INITIALIZE
        ),
        200,
        "the scheme is case-insensitive"
    );
    // Only the token itself: not a prefix of it, nor more, nor the same
    // bytes in another order, nor one byte off.
    for wrong in ["s3c", "s3cretX", "3scret", "s3creX", ""] {
        let header = format!("Bearer {wrong}");
        assert_eq!(
            raw_post(server.url(), &[("Authorization", &header)], INITIALIZE),
            401,
            "{header:?}"
        );
    }
    let client = Registry::default();
    let auth = vec![("Authorization".to_string(), "Bearer s3cret".to_string())];
    let mount = mount(&client, server.url(), auth).expect("mount with the token");
    assert_eq!(call(&client, "s_add", json!({"a": 1, "b": 1})).content, "2");
    mount.unmount();
    assert!(server.stop());
}

#[test]
fn foreign_origins_and_hosts_and_oversized_bodies_are_refused() {
    let served = served_registry();
    let options = ServerOptions {
        allowed_origins: vec!["https://app.example".into()],
        max_body_bytes: 4096,
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).expect("start");
    let url = server.url();
    assert_eq!(
        raw_post(url, &[], INITIALIZE),
        200,
        "no Origin: not a browser"
    );
    assert_eq!(
        raw_post(url, &[("Origin", "http://localhost:3000")], INITIALIZE),
        200
    );
    assert_eq!(
        raw_post(url, &[("Origin", "https://app.example")], INITIALIZE),
        200
    );
    assert_eq!(
        raw_post(url, &[("Origin", "https://evil.example")], INITIALIZE),
        403
    );
    assert_eq!(raw_post(url, &[("Host", "evil.example")], INITIALIZE), 403);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"pad":"{}"}}}}"#,
        "x".repeat(8192)
    );
    assert_eq!(raw_post(url, &[], &big), 413);
    assert!(server.stop());
}

#[test]
fn bad_server_options_are_refused_with_a_reason() {
    let served = served_registry();
    for (options, says) in [
        (
            ServerOptions {
                address: "localhost:0".into(),
                ..ServerOptions::default()
            },
            "numeric IP",
        ),
        (
            ServerOptions {
                max_body_bytes: 0,
                ..ServerOptions::default()
            },
            "max_body_bytes",
        ),
        (
            ServerOptions {
                tools_meta: json!({"add": {"color": "red"}})
                    .as_object()
                    .unwrap()
                    .clone(),
                ..ServerOptions::default()
            },
            "tools_meta[\"add\"].color",
        ),
        (
            ServerOptions {
                bearer_token: Some(String::new()),
                ..ServerOptions::default()
            },
            "bearer_token is empty",
        ),
    ] {
        match HttpServer::start(&served, &options) {
            Ok(_) => panic!("{options:?} started"),
            Err(e) => assert!(e.to_string().contains(says), "{e}"),
        }
    }
}
