//! capstan's MCP server seen from capstan's MCP client: a registry served
//! over streamable HTTP (`HttpServer`) is mounted by another registry, in
//! this process. The official SDKs and the conformance suite check the
//! server from outside (`make mcp-server-test`); these tests pin its rules
//! where `cargo test` (and so mutation testing) reaches them.

#[cfg(feature = "mcp")]
#[path = "common/wait.rs"]
mod wait;

#[cfg(feature = "mcp")]
mod with_mcp {
    use super::wait::eventually;
    use std::io::{Read, Write};
    use std::time::Duration;

    use capstan::mcp::client::{Endpoint, Mount, MountOptions};
    use capstan::mcp::server::{HttpServer, ServerOptions};
    use capstan::{
        execute, submit, Call, CallRequest, ExecOptions, Outcome, Registry, Sink, ToolDef,
        ToolFlags, ToolResult,
    };
    use serde_json::{json, Value};

    const PATIENCE: Duration = Duration::from_secs(60);

    fn def(name: &str, parameters: Value, f: impl Fn(Call) + Send + Sync + 'static) -> ToolDef {
        ToolDef {
            name: name.into(),
            description: format!("{name} tool"),
            parameters,
            handler: Box::new(f),
            timeout_ms: 0,
            max_output_chars: 0,
            flags: ToolFlags::default(),
        }
    }

    /// A registry with `add` (two integers), `boom` (fails) and `hold`
    /// (runs until cancelled, at most a minute, then says how it ended).
    fn served_registry() -> Registry {
        let reg = Registry::default();
        let ints = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]});
        reg.register(def("add", ints, |call| {
            let a = &call.arguments()["a"];
            let b = &call.arguments()["b"];
            let sum = a.as_i64().unwrap_or(0) + b.as_i64().unwrap_or(0);
            call.complete_text(sum.to_string()).unwrap();
        }))
        .unwrap();
        reg.register(def("boom", json!({"type": "object"}), |call| {
            call.fail("the boom tool exploded").unwrap();
        }))
        .unwrap();
        reg.register(def("hold", json!({"type": "object"}), |call| {
            let cancelled = eventually(PATIENCE, || call.is_cancelled());
            let _ = call.complete_text(if cancelled {
                "cancelled"
            } else {
                "still running"
            });
        }))
        .unwrap();
        reg
    }

    fn mount(
        client: &Registry,
        url: &str,
        headers: Vec<(String, String)>,
    ) -> Result<Mount, capstan::Error> {
        let mut options = MountOptions::new(Endpoint::Http {
            url: url.into(),
            headers,
        });
        options.prefix = "s_".into();
        options.connect_timeout = PATIENCE;
        Mount::connect(client, options)
    }

    fn call(reg: &Registry, name: &str, arguments: Value) -> ToolResult {
        execute(
            reg,
            vec![CallRequest::new("c1", name, arguments)],
            &ExecOptions::default(),
        )
        .remove(0)
    }

    /// POSTs `body` to the server with `headers` over a plain socket;
    /// returns the status code.
    fn raw_post(url: &str, headers: &[(&str, &str)], body: &str) -> u16 {
        let address = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_string();
        let mut stream = std::net::TcpStream::connect(&address).expect("connect");
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            body.len()
        );
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            request.push_str(&format!("Host: {address}\r\n"));
        }
        for (k, v) in headers {
            request.push_str(&format!("{k}: {v}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).unwrap();
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).expect("status line");
        let line = String::from_utf8_lossy(&head).to_string();
        line[9..12]
            .parse()
            .unwrap_or_else(|_| panic!("status line {line:?}"))
    }

    /// One request over a plain socket, the whole answer read: status,
    /// head (lowercase) and body (de-chunked).
    fn raw_exchange(url: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
        raw_request("POST", url, headers, body)
    }

    /// `raw_exchange` with another method.
    fn raw_request(
        method: &str,
        url: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String, String) {
        let address = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_string();
        let mut stream = std::net::TcpStream::connect(&address).expect("connect");
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let mut request = format!(
            "{method} /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            body.len()
        );
        for (k, v) in headers {
            request.push_str(&format!("{k}: {v}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).expect("answer");
        let answer = String::from_utf8_lossy(&answer).to_string();
        let (head, mut rest) = answer.split_once("\r\n\r\n").expect("head");
        let head = head.to_ascii_lowercase();
        let status = head[9..12].parse().expect("status");
        if !head.contains("transfer-encoding: chunked") {
            return (status, head, rest.to_string());
        }
        let mut body = String::new();
        while let Some((size, after)) = rest.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).expect("chunk size");
            if size == 0 {
                break;
            }
            body.push_str(&after[..size]);
            rest = &after[size + 2..];
        }
        (status, head, body)
    }

    /// The JSON-RPC message of an answer, plain JSON or the first SSE event.
    fn message(body: &str) -> Value {
        let text = body
            .lines()
            .find_map(|l| l.strip_prefix("data: ").filter(|d| d.starts_with('{')))
            .unwrap_or(body);
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {body:?}"))
    }

    /// A session opened by hand: initialize, then `initialized`; returns
    /// the session id header to send with every request.
    fn raw_session(url: &str) -> String {
        let (status, head, _) = raw_exchange(url, &[], INITIALIZE);
        assert_eq!(status, 200, "{head}");
        let session = head
            .lines()
            .find_map(|l| l.strip_prefix("mcp-session-id:"))
            .expect("a session id")
            .trim()
            .to_string();
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let (status, _, body) = raw_exchange(url, &[("Mcp-Session-Id", &session)], initialized);
        // Accepted, with nothing to say: an empty answer stays empty.
        assert_eq!((status, body.as_str()), (202, ""));
        session
    }

    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

    #[test]
    fn a_served_registry_mounts_in_another_with_its_tools_results_and_errors() {
        let served = served_registry();
        let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
        assert!(server.url().starts_with("http://127.0.0.1:") && server.url().ends_with("/mcp"));
        let client = Registry::default();
        let mount = mount(&client, server.url(), vec![]).expect("mount");
        let info = mount.info();
        assert_eq!(
            info["tools"],
            json!({"s_add": "add", "s_boom": "boom", "s_hold": "hold"})
        );
        assert_eq!(info["problems"], json!([]), "{info}");
        assert_eq!(mount.tool_names(), ["s_add", "s_boom", "s_hold"]);
        // The schema travelled: the client checks arguments itself.
        let spec = client.get("s_add").expect("s_add");
        assert_eq!(spec.spec().parameters["required"], json!(["a", "b"]));
        assert_eq!(spec.spec().description, "add tool");

        let sum = call(&client, "s_add", json!({"a": 2, "b": 40}));
        assert_eq!(
            (sum.outcome, sum.content.as_str()),
            (Outcome::Ok, "42"),
            "{sum:?}"
        );
        let failed = call(&client, "s_boom", json!({}));
        assert_eq!(failed.outcome, Outcome::ToolError, "{failed:?}");
        assert!(
            failed.content.contains("the boom tool exploded"),
            "{failed:?}"
        );
        mount.unmount();
        assert!(server.stop(), "no call was left running");
        assert!(server.stop(), "a second stop returns true at once");
    }

    #[test]
    fn tools_registered_on_a_served_registry_reach_a_mounted_client() {
        let served = served_registry();
        let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
        let client = Registry::default();
        let mount = mount(&client, server.url(), vec![]).expect("mount");
        served
            .register(def("late", json!({"type": "object"}), |call| {
                call.complete_text("here").unwrap();
            }))
            .unwrap();
        assert!(
            eventually(PATIENCE, || client.get("s_late").is_some()),
            "list_changed brought the new tool: {:?}",
            client.names()
        );
        assert_eq!(call(&client, "s_late", json!({})).content, "here");
        served.unregister("boom").unwrap();
        assert!(
            eventually(PATIENCE, || client.get("s_boom").is_none()),
            "list_changed took the removed tool away"
        );
        mount.unmount();
        assert!(server.stop());
    }

    #[test]
    fn the_server_call_timeout_ends_a_slow_call_and_its_tool_sees_the_cancellation() {
        let served = served_registry();
        let options = ServerOptions {
            call_timeout_ms: 100,
            ..ServerOptions::default()
        };
        let server = HttpServer::start(&served, &options).expect("start");
        let client = Registry::default();
        let mount = mount(&client, server.url(), vec![]).expect("mount");
        let result = call(&client, "s_hold", json!({}));
        assert!(result.is_error(), "{result:?}");
        assert!(result.content.contains("100 ms"), "{result:?}");
        mount.unmount();
        assert!(server.stop());
    }

    #[test]
    fn stop_cancels_calls_in_flight_and_a_mounted_client_s_call_ends() {
        let served = served_registry();
        let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
        let client = Registry::default();
        let mount = mount(&client, server.url(), vec![]).expect("mount");
        let results = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = results.clone();
        let batch = submit(
            &client,
            vec![CallRequest::new("h", "s_hold", json!({}))],
            &ExecOptions::default(),
            Sink::Callback(Box::new(move |_, r| record.lock().unwrap().push(r))),
            None,
        );
        // The call reached the server's tool: it is in flight there.
        std::thread::sleep(Duration::from_millis(200));
        assert!(!batch.is_done(), "hold runs until cancelled");
        assert!(
            server.stop(),
            "the cancelled tool returned within the stop timeout"
        );
        // The server is gone: the client's call ends (it does not wait for
        // an answer forever) and says why.
        assert!(batch.wait(Some(PATIENCE)), "the client's call ended");
        let results = results.lock().unwrap();
        assert_eq!(results[0].outcome, Outcome::ToolError, "{results:?}");
        assert!(
            results[0]
                .content
                .contains("closed the connection during the call"),
            "{results:?}"
        );
        mount.unmount();
        // Nothing is served any more.
        let again = mount_once(server.url());
        assert!(again.is_err(), "a stopped server accepted a new client");
    }

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
        let (status, _, body) =
            raw_exchange(server.url(), &[("Mcp-Session-Id", &session)], request);
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
            let answer: Value =
                serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
            assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
            assert_eq!(answer["id"], Value::Null, "{answer}");
            assert!(
                !answer["error"]["message"].as_str().unwrap_or("").is_empty(),
                "{answer}"
            );
            answer["error"]["code"].as_i64().expect("a code")
        };
        // Not JSON: a parse error (with rmcp's status, 415).
        for garbage in ["{not json", "", "[1,"] {
            let (status, head, body) = raw_exchange(url, &[], garbage);
            assert_eq!((status, error(&head, &body)), (415, -32700), "{body}");
        }
        // JSON, but no JSON-RPC message: an invalid request.
        for not_a_message in [r#"{"foo":1}"#, "12", "[]"] {
            let (status, head, body) = raw_exchange(url, &[], not_a_message);
            assert_eq!((status, error(&head, &body)), (415, -32600), "{body}");
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
    fn every_connected_client_hears_list_changed() {
        let served = served_registry();
        let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
        let (first, second) = (Registry::default(), Registry::default());
        let one = mount(&first, server.url(), vec![]).expect("mount one");
        let two = mount(&second, server.url(), vec![]).expect("mount two");
        served
            .register(def("late", json!({"type": "object"}), |call| {
                call.complete_text("here").unwrap();
            }))
            .unwrap();
        for (client, which) in [(&first, "first"), (&second, "second")] {
            assert!(
                eventually(PATIENCE, || client.get("s_late").is_some()),
                "the {which} client did not hear of the new tool"
            );
        }
        one.unmount();
        two.unmount();
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
    fn dropping_a_server_stops_it_as_stop_does() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let served = served_registry();
        // Notes that it ended, then completes, once cancelled.
        let ended = Arc::new(AtomicBool::new(false));
        let flag = ended.clone();
        served
            .register(def("note", json!({"type": "object"}), move |call| {
                eventually(PATIENCE, || call.is_cancelled());
                flag.store(true, Ordering::SeqCst);
                let _ = call.complete_text("cancelled");
            }))
            .unwrap();
        let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
        let url = server.url().to_string();
        let client = Registry::default();
        let mount = mount(&client, &url, vec![]).expect("mount");
        let batch = submit(
            &client,
            vec![CallRequest::new("n", "s_note", json!({}))],
            &ExecOptions::default(),
            Sink::Queue,
            None,
        );
        std::thread::sleep(Duration::from_millis(200));
        assert!(!batch.is_done(), "note is in flight");
        drop(server);
        // Like stop: the call in flight was cancelled and waited for.
        assert!(
            ended.load(Ordering::SeqCst),
            "drop returned before the call ended"
        );
        let address = url.trim_start_matches("http://").trim_end_matches("/mcp");
        assert!(
            std::net::TcpStream::connect(address).is_err(),
            "a dropped server still accepts connections"
        );
        assert!(batch.wait(Some(PATIENCE)));
        mount.unmount();
    }

    #[test]
    fn a_call_to_a_mount_whose_server_went_away_says_whether_it_will_reconnect() {
        // A long backoff: the mount is still waiting to reconnect; one
        // attempt that fails at once: it gave up.
        for (max_reconnects, backoff_ms, says) in [
            (3, 60_000, "reconnecting"),
            (1, 20, "no reconnect will be tried"),
        ] {
            let served = served_registry();
            let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
            let client = Registry::default();
            let mut options = MountOptions::new(Endpoint::Http {
                url: server.url().into(),
                headers: vec![],
            });
            options.prefix = "s_".into();
            options.connect_timeout = PATIENCE;
            options.max_reconnects = max_reconnects;
            options.reconnect_backoff = Duration::from_millis(backoff_ms);
            let mount = Mount::connect(&client, options).expect("mount");
            assert_eq!(call(&client, "s_add", json!({"a": 1, "b": 2})).content, "3");
            assert!(server.stop());
            // The first call after the stop finds the connection gone.
            let failed = call(&client, "s_add", json!({"a": 1, "b": 2}));
            assert!(failed.is_error(), "{failed:?}");
            assert!(
                eventually(PATIENCE, || !mount.is_connected()
                    && (max_reconnects > 1 || mount.info()["gave_up"] == true)),
                "{}",
                mount.info()
            );
            let after = call(&client, "s_add", json!({"a": 1, "b": 2}));
            assert!(
                after.is_error() && after.content.contains("is not connected"),
                "{after:?}"
            );
            assert!(after.content.ends_with(says), "{says}: {after:?}");
            mount.unmount();
        }
    }

    #[test]
    fn a_mount_with_a_reconnect_policy_comes_back_when_its_http_server_restarts() {
        let served = served_registry();
        let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
        let url = server.url().to_string();
        let client = Registry::default();
        let mut options = MountOptions::new(Endpoint::Http {
            url: url.clone(),
            headers: vec![],
        });
        options.prefix = "s_".into();
        options.connect_timeout = PATIENCE;
        options.max_reconnects = 8;
        options.reconnect_backoff = Duration::from_millis(100);
        let mount = Mount::connect(&client, options).expect("mount");
        assert!(server.stop());
        let failed = call(&client, "s_add", json!({"a": 1, "b": 2}));
        assert!(failed.is_error(), "{failed:?}");
        // The same address again: the mount reconnects on its own.
        let address = url.trim_start_matches("http://").trim_end_matches("/mcp");
        let options = ServerOptions {
            address: address.into(),
            ..ServerOptions::default()
        };
        let again = HttpServer::start(&served, &options).expect("restart");
        assert!(
            eventually(PATIENCE, || mount.is_connected()
                && mount.info()["reconnects"] == 1),
            "{}",
            mount.info()
        );
        assert_eq!(call(&client, "s_add", json!({"a": 1, "b": 2})).content, "3");
        mount.unmount();
        assert!(again.stop());
    }

    #[test]
    fn reconnect_attempts_back_off_doubling_each_time() {
        let served = served_registry();
        let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
        let client = Registry::default();
        let mut options = MountOptions::new(Endpoint::Http {
            url: server.url().into(),
            headers: vec![],
        });
        options.prefix = "s_".into();
        options.connect_timeout = PATIENCE;
        options.max_reconnects = 3;
        options.reconnect_backoff = Duration::from_millis(200);
        let mount = Mount::connect(&client, options).expect("mount");
        assert!(server.stop());
        let began = std::time::Instant::now();
        let failed = call(&client, "s_add", json!({"a": 1, "b": 2}));
        assert!(failed.is_error(), "{failed:?}");
        assert!(
            eventually(PATIENCE, || mount.info()["gave_up"] == true),
            "{}",
            mount.info()
        );
        // Three attempts, after 200, 400 and 800 ms: no sooner than 1.4 s.
        let took = began.elapsed();
        assert!(
            took >= Duration::from_millis(1400),
            "gave up after {took:?}"
        );
        assert_eq!(mount.info()["reconnects"], 0);
        mount.unmount();
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
    fn stop_returns_as_soon_as_cancelled_calls_end_and_says_when_one_outlives_it() {
        let served = served_registry();
        // Ignores the cancellation: runs 1.5 s whatever happens.
        served
            .register(def("stubborn", json!({"type": "object"}), |call| {
                std::thread::sleep(Duration::from_millis(1500));
                let _ = call.complete_text("done");
            }))
            .unwrap();
        for (tool, stop_timeout_ms, drained) in
            [("s_hold", 20_000, true), ("s_stubborn", 100, false)]
        {
            let options = ServerOptions {
                stop_timeout_ms,
                ..ServerOptions::default()
            };
            let server = HttpServer::start(&served, &options).expect("start");
            let client = Registry::default();
            let mount = mount(&client, server.url(), vec![]).expect("mount");
            let batch = submit(
                &client,
                vec![CallRequest::new("h", tool, json!({}))],
                &ExecOptions::default(),
                Sink::Queue,
                None,
            );
            std::thread::sleep(Duration::from_millis(200));
            assert!(!batch.is_done(), "{tool} is in flight");
            let began = std::time::Instant::now();
            assert_eq!(server.stop(), drained, "{tool}");
            if drained {
                // `hold` ends at its cancellation: stop does not wait out
                // its 20 s.
                assert!(
                    began.elapsed() < Duration::from_secs(10),
                    "stop took {:?}",
                    began.elapsed()
                );
            }
            assert!(batch.wait(Some(PATIENCE)));
            mount.unmount();
        }
    }

    fn mount_once(url: &str) -> Result<Mount, capstan::Error> {
        let client = Registry::default();
        let mut options = MountOptions::new(Endpoint::Http {
            url: url.into(),
            headers: vec![],
        });
        options.connect_timeout = Duration::from_secs(5);
        Mount::connect(&client, options)
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
}
