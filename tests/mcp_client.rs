// size: one suite against two real servers (the Python SDK's and the
// reference server) sharing their start-up and fixtures; cut by transport
// it would repeat both.
//! The MCP client (issue #14): capstan mounts real MCP servers, the official
//! Python SDK's MCPServer (tests/mcp/fastmcp_server.py) and the reference
//! server `@modelcontextprotocol/server-everything`, over stdio and over
//! streamable HTTP, and calls their tools through the executor.
//!
//! Needs a Python with `mcp` (tests/mcp/requirements.txt; `make setup` puts
//! it in build/venv, which these tests use, see `python`) and node with
//! tests/mcp/node_modules (also `make setup`). Every wait is bounded.

#[cfg(not(feature = "mcp"))]
#[test]
fn mount_is_unsupported_without_feature_mcp() {
    use capstan::ffi::*;
    let mut reg = std::ptr::null_mut();
    unsafe {
        assert_eq!(capstan_registry_new(std::ptr::null(), &mut reg), CAPSTAN_OK);
        let opts = std::mem::zeroed::<capstan_mcp_mount_options>();
        let mut mount = std::ptr::null_mut();
        assert_eq!(
            capstan_mcp_mount_new(reg, &opts, &mut mount),
            CAPSTAN_ERR_UNSUPPORTED
        );
        capstan_registry_free(reg);
    }
}

#[cfg(feature = "mcp")]
#[path = "common/wait.rs"]
mod wait;

#[cfg(feature = "mcp")]
mod with_mcp {
    use super::wait::eventually;
    use std::path::PathBuf;
    use std::time::{Duration, Instant};

    use capstan::mcp::client::{Endpoint, Mount, MountOptions};
    use capstan::mcp::oauth::{Authorize, OAuthOptions, TokenStore};
    use capstan::providers::Format;
    use capstan::{execute, CallRequest, ExecOptions, Outcome, Registry, ToolResult};
    use serde_json::{json, Value};
    use std::sync::Arc;

    fn mcp_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp")
    }

    /// The interpreter that has the MCP SDK: $CAPSTAN_TEST_PYTHON (the
    /// Makefile sets it to build/venv's), else build/venv's when `make setup`
    /// made it (a plain `cargo test` after a `make setup`), else python3.
    fn python() -> String {
        if let Some(python) = std::env::var_os("CAPSTAN_TEST_PYTHON").filter(|p| !p.is_empty()) {
            return python.to_string_lossy().into_owned();
        }
        let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("build/venv/bin/python");
        if venv.exists() {
            return venv.display().to_string();
        }
        "python3".into()
    }

    fn python_options(env: Vec<(String, String)>) -> MountOptions {
        let script = mcp_dir().join("fastmcp_server.py");
        let mut options = MountOptions::new(Endpoint::Command {
            argv: vec![python(), script.display().to_string()],
            env,
            cwd: None,
        });
        options.prefix = "py_".into();
        // Generous: importing the SDK takes 20 s and more on a loaded 2-core
        // machine running these tests in parallel.
        options.connect_timeout = Duration::from_secs(120);
        options
    }

    fn everything_bin() -> String {
        mcp_dir()
            .join("node_modules/.bin/mcp-server-everything")
            .display()
            .to_string()
    }

    fn call(reg: &Registry, name: &str, arguments: Value) -> ToolResult {
        let mut results = execute(
            reg,
            vec![CallRequest::new("c1", name, arguments)],
            &ExecOptions::default(),
        );
        results.remove(0)
    }

    /// A port the OS just gave out (bound, then released for the server).
    fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port")
    }

    /// A server process the test starts itself (HTTP servers); killed and
    /// waited for on drop.
    struct Server(std::process::Child);

    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// Mounts `url`, retrying while the freshly started server is not yet
    /// listening (bounded).
    fn mount_http(reg: &Registry, url: &str, prefix: &str) -> Mount {
        let end = Instant::now() + Duration::from_secs(180);
        loop {
            let mut options = MountOptions::new(Endpoint::Http {
                url: url.into(),
                headers: vec![("X-Capstan-Test".into(), "1".into())],
            });
            options.prefix = prefix.into();
            options.connect_timeout = Duration::from_secs(10);
            match Mount::connect(reg, options) {
                Ok(mount) => return mount,
                Err(e) if Instant::now() < end => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(e) => panic!("could not mount {url}: {e}"),
            }
        }
    }

    /// Children of this process still alive or not yet waited for whose
    /// command line contains `needle`.
    fn children_running(needle: &str) -> Vec<String> {
        let me = std::process::id().to_string();
        let mut found = Vec::new();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return found;
        };
        for entry in dir.flatten() {
            let path = entry.path();
            let Ok(stat) = std::fs::read_to_string(path.join("stat")) else {
                continue;
            };
            // pid (comm) state ppid ...
            let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r.to_string()) else {
                continue;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            if fields.get(1) != Some(&me.as_str()) {
                continue;
            }
            let cmdline = std::fs::read(path.join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(needle) || fields.first() == Some(&"Z") {
                found.push(format!("{} [{}] {cmdline}", path.display(), fields[0]));
            }
        }
        found
    }

    #[test]
    fn mounted_python_server_tools_are_registry_tools_and_bad_names_are_reported() {
        let reg = Registry::default();
        let mount = Mount::connect(&reg, python_options(vec![])).expect("mount");
        for name in ["py_echo", "py_add", "py_slow", "py_grow", "py_die"] {
            assert!(reg.get(name).is_some(), "{name} missing: {:?}", reg.names());
        }
        let info = mount.info();
        assert_eq!(info["connected"], true);
        assert_eq!(info["tools"]["py_add"], "add");
        // By default a mount asks server/discover, and the SDK answers it:
        // the stateless era (issue #33).
        assert_eq!(info["protocol_version"], "2026-07-28", "{info}");
        assert_eq!(info["era"], "modern", "{info}");
        assert_eq!(info["server"]["name"], "capstan-test", "{info}");
        let problems = info["problems"].as_array().expect("problems");
        assert!(
            problems
                .iter()
                .any(|p| p["remote"] == "bad.name" && p["local"] == "py_bad.name"),
            "{problems:?}"
        );
        assert!(reg.get("py_bad.name").is_none());

        let sum = call(&reg, "py_add", json!({"a": 2, "b": 3}));
        assert_eq!(sum.outcome, Outcome::Ok, "{sum:?}");
        assert_eq!(sum.content.trim(), "5");
        let echo = call(&reg, "py_echo", json!({"message": "hello"}));
        assert_eq!(echo.content, "hello");
        mount.unmount();
    }

    #[test]
    fn invalid_arguments_are_rejected_locally_before_the_server() {
        let reg = Registry::default();
        let _mount = Mount::connect(&reg, python_options(vec![])).expect("mount");
        let result = call(&reg, "py_add", json!({"a": "two", "b": 3}));
        // The server could only answer a tool error; invalid_arguments is
        // the local validator's verdict against the remote inputSchema.
        assert_eq!(result.outcome, Outcome::InvalidArguments, "{result:?}");
        let missing = call(&reg, "py_add", json!({"a": 1}));
        assert_eq!(missing.outcome, Outcome::InvalidArguments, "{missing:?}");
    }

    #[test]
    fn a_name_already_registered_is_reported_not_replaced() {
        let reg = Registry::default();
        reg.register(capstan::ToolDef {
            name: "py_echo".into(),
            description: "the host's own".into(),
            parameters: json!({"type": "object"}),
            handler: Box::new(|c: capstan::Call| {
                let _ = c.complete_text("local");
            }),
            timeout_ms: 0,
            max_output_chars: 0,
            flags: capstan::ToolFlags(0),
        })
        .expect("register");
        let mount = Mount::connect(&reg, python_options(vec![])).expect("mount");
        assert_eq!(call(&reg, "py_echo", json!({})).content, "local");
        let problems = mount.info()["problems"].clone();
        assert!(
            problems
                .as_array()
                .expect("problems")
                .iter()
                .any(|p| p["local"] == "py_echo"
                    && p["problem"].as_str().unwrap_or("").contains("already")),
            "{problems}"
        );
        mount.unmount();
        // Unmount removes only what the mount registered.
        assert_eq!(call(&reg, "py_echo", json!({})).content, "local");
    }

    #[test]
    fn local_timeout_sends_notifications_cancelled_to_the_server() {
        let marker =
            std::env::temp_dir().join(format!("capstan-mcp-cancel-{}", std::process::id()));
        let _ = std::fs::remove_file(&marker);
        let reg = Registry::default();
        let mut options = python_options(vec![("MARKER".into(), marker.display().to_string())]);
        options.call_timeout_ms = 300;
        let mount = Mount::connect(&reg, options).expect("mount");
        let result = call(&reg, "py_slow", json!({"seconds": 60}));
        assert_eq!(result.outcome, Outcome::Timeout, "{result:?}");
        // The server heard notifications/cancelled and stopped the tool.
        assert!(
            eventually(Duration::from_secs(20), || marker.exists()),
            "the server's tool was never cancelled"
        );
        let _ = std::fs::remove_file(&marker);
        // The connection is still good afterwards.
        assert_eq!(call(&reg, "py_echo", json!({"message": "x"})).content, "x");
        mount.unmount();
    }

    #[test]
    fn list_changed_registers_new_tools_and_unregisters_gone_ones() {
        let reg = Registry::default();
        let mount = Mount::connect(&reg, python_options(vec![])).expect("mount");
        assert!(reg.get("py_late").is_none());
        assert_eq!(call(&reg, "py_grow", json!({})).content, "grown");
        assert!(
            eventually(Duration::from_secs(20), || reg.get("py_late").is_some()),
            "py_late never appeared: {:?}",
            reg.names()
        );
        assert_eq!(call(&reg, "py_late", json!({"x": 4})).content.trim(), "8");
        assert_eq!(call(&reg, "py_shrink", json!({})).content, "shrunk");
        assert!(
            eventually(Duration::from_secs(20), || reg.get("py_late").is_none()),
            "py_late never went away"
        );
        mount.unmount();
    }

    #[test]
    fn list_changed_resyncs_on_a_2025_11_25_connection_too() {
        // Before 2026-07-28 the server sends list_changed unasked, outside
        // any subscriptions/listen stream.
        let reg = Registry::default();
        let mut options = python_options(vec![]);
        options.protocol_version = Some("2025-11-25".into());
        let mount = Mount::connect(&reg, options).expect("mount");
        let info = mount.info();
        assert_eq!(info["protocol_version"], "2025-11-25", "{info}");
        assert_eq!(info["era"], "legacy", "{info}");
        assert_eq!(info["server"]["name"], "capstan-test", "{info}");
        assert_eq!(call(&reg, "py_grow", json!({})).content, "grown");
        assert!(
            eventually(Duration::from_secs(20), || reg.get("py_late").is_some()),
            "py_late never appeared: {:?}",
            reg.names()
        );
        mount.unmount();
    }

    #[test]
    fn an_unknown_protocol_version_is_an_invalid_argument() {
        let reg = Registry::default();
        let mut options = python_options(vec![]);
        options.protocol_version = Some("2099-01-01".into());
        let err = Mount::connect(&reg, options).err().expect("an error");
        assert!(matches!(err, capstan::Error::InvalidArgument(_)), "{err:?}");
        assert!(err.to_string().contains("2025-11-25"), "{err}");
    }

    #[test]
    fn dead_server_gives_tool_errors_then_reconnects_per_policy() {
        let reg = Registry::default();
        let mut options = python_options(vec![]);
        options.max_reconnects = 3;
        options.reconnect_backoff = Duration::from_millis(50);
        let mount = Mount::connect(&reg, options).expect("mount");
        let died = call(&reg, "py_die", json!({}));
        assert_eq!(died.outcome, Outcome::ToolError, "{died:?}");
        assert!(died.content.contains("MCP server"), "{died:?}");
        assert!(
            eventually(Duration::from_secs(180), || mount.info()["reconnects"] == 1
                && mount.is_connected()),
            "never reconnected: {}",
            mount.info()
        );
        let echo = call(&reg, "py_echo", json!({"message": "back"}));
        assert_eq!(echo.content, "back", "{echo:?}");
        mount.unmount();
    }

    #[test]
    fn dead_server_without_reconnect_policy_stays_down_and_says_so() {
        let reg = Registry::default();
        let mut options = python_options(vec![]);
        options.max_reconnects = 0;
        let mount = Mount::connect(&reg, options).expect("mount");
        let died = call(&reg, "py_die", json!({}));
        assert_eq!(died.outcome, Outcome::ToolError, "{died:?}");
        assert!(
            eventually(Duration::from_secs(20), || !mount.is_connected()),
            "still connected"
        );
        let after = call(&reg, "py_echo", json!({"message": "x"}));
        assert_eq!(after.outcome, Outcome::ToolError, "{after:?}");
        assert!(
            after.content.contains("is not connected")
                && after.content.contains("no reconnect will be tried"),
            "{after:?}"
        );
        mount.unmount();
    }

    #[test]
    fn unmount_unregisters_its_tools_and_reaps_the_child() {
        let reg = Registry::default();
        let mount = Mount::connect(&reg, python_options(vec![])).expect("mount");
        assert!(!children_running("fastmcp_server.py").is_empty());
        // A call in flight when unmounting ends, and says why.
        let in_flight = {
            let reg = reg.clone();
            std::thread::spawn(move || call(&reg, "py_slow", json!({"seconds": 60})))
        };
        std::thread::sleep(Duration::from_millis(200));
        mount.unmount();
        mount.unmount(); // twice is fine
        assert!(
            reg.names().iter().all(|n| !n.starts_with("py_")),
            "{:?}",
            reg.names()
        );
        let result = in_flight.join().expect("the call in flight ended");
        assert_eq!(result.outcome, Outcome::ToolError, "{result:?}");
        assert!(result.content.contains("unmounted"), "{result:?}");
        assert!(
            eventually(Duration::from_secs(10), || children_running(
                "fastmcp_server.py"
            )
            .is_empty()),
            "{:?}",
            children_running("fastmcp_server.py")
        );
    }

    #[test]
    fn the_client_introduces_itself_and_a_server_that_lingers_is_killed_at_unmount() {
        let reg = Registry::default();
        let mut options = python_options(vec![("LINGER".into(), "1".into())]);
        // A word on the command line to find this test's child by.
        if let Endpoint::Command { argv, .. } = &mut options.endpoint {
            argv.push("lingering".into());
        }
        let mount = Mount::connect(&reg, options).expect("mount");
        let me = call(&reg, "py_client", json!({}));
        assert_eq!(
            me.content,
            format!("capstan {}", env!("CARGO_PKG_VERSION")),
            "{me:?}"
        );
        // (children_running also lists every zombie child: other tests'.)
        let running: Vec<String> = children_running("lingering")
            .into_iter()
            .filter(|c| c.contains("lingering"))
            .collect();
        assert_eq!(running.len(), 1, "{running:?}");
        // "/proc/PID [state] cmdline": the process, zombie or not, is /proc/PID.
        let proc_dir = running[0].split(' ').next().unwrap().to_string();
        // Its stdin closes, it stays: unmount kills it and waits for it, so
        // not even a zombie is left once unmount returns.
        mount.unmount();
        assert!(
            !std::path::Path::new(&proc_dir).exists(),
            "{proc_dir} is still there after unmount"
        );
    }

    #[test]
    fn mount_of_a_missing_program_fails_with_a_clear_error() {
        let reg = Registry::default();
        let options = MountOptions::new(Endpoint::Command {
            argv: vec!["/nonexistent/capstan-mcp-server".into()],
            env: vec![],
            cwd: None,
        });
        let err = Mount::connect(&reg, options).err().expect("an error");
        assert!(matches!(err, capstan::Error::McpConnect(_)), "{err:?}");
        assert!(err.to_string().contains("could not start"), "{err}");
        assert!(reg.is_empty());
    }

    #[test]
    fn python_server_over_streamable_http() {
        let port = free_port();
        let script = mcp_dir().join("fastmcp_server.py");
        let _server = Server(
            std::process::Command::new(python())
                .arg(&script)
                .args(["--http", &port.to_string()])
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("python"),
        );
        let reg = Registry::default();
        let mount = mount_http(&reg, &format!("http://127.0.0.1:{port}/mcp"), "h_");
        assert_eq!(
            call(&reg, "h_add", json!({"a": 40, "b": 2})).content.trim(),
            "42"
        );
        let info = mount.info();
        assert_eq!(info["era"], "modern", "{info}");
        assert_eq!(info["protocol_version"], "2026-07-28", "{info}");
        mount.unmount();
    }

    #[test]
    fn a_server_without_server_discover_is_mounted_over_initialize() {
        // A server of the 2025-11-25 era answers server/discover "method not
        // found": the mount falls back to initialize on the same endpoint,
        // and says so.
        let port = free_port();
        let script = mcp_dir().join("fastmcp_server.py");
        let _server = Server(
            std::process::Command::new(python())
                .arg(&script)
                .args(["--http", &port.to_string()])
                .env("LEGACY_ONLY", "1")
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("python"),
        );
        let reg = Registry::default();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let mount = mount_http(&reg, &url, "l_");
        let info = mount.info();
        assert_eq!(info["era"], "legacy", "{info}");
        assert_eq!(info["protocol_version"], "2025-11-25", "{info}");
        assert_eq!(
            call(&reg, "l_add", json!({"a": 40, "b": 2})).content.trim(),
            "42"
        );
        mount.unmount();
        // Asked for 2026-07-28 only, the mount does not fall back: an error
        // that says what the server answered.
        let mut options = MountOptions::new(Endpoint::Http {
            url,
            headers: vec![],
        });
        options.protocol_version = Some("2026-07-28".into());
        let err = Mount::connect(&reg, options).err().expect("an error");
        assert!(matches!(err, capstan::Error::McpConnect(_)), "{err:?}");
        assert!(err.to_string().contains("server/discover"), "{err}");
    }

    /// Every tool server-everything lists is mounted (none reported as a
    /// problem), and echo / get-sum answer through execute and run_turn.
    fn check_everything(reg: &Registry, mount: &Mount, prefix: &str) {
        let info = mount.info();
        let tools = info["tools"].as_object().expect("tools");
        assert!(tools.len() >= 10, "{info}");
        assert_eq!(info["problems"], json!([]), "{info}");
        for (local, remote) in tools {
            assert_eq!(local, &format!("{prefix}{}", remote.as_str().unwrap_or("")));
            assert!(reg.get(local).is_some(), "{local}");
        }
        let echo = call(reg, &format!("{prefix}echo"), json!({"message": "hi"}));
        assert_eq!(echo.outcome, Outcome::Ok, "{echo:?}");
        assert!(echo.content.contains("hi"), "{echo:?}");
        let sum = call(reg, &format!("{prefix}get-sum"), json!({"a": 2, "b": 3}));
        assert_eq!(sum.outcome, Outcome::Ok, "{sum:?}");
        assert!(sum.content.contains('5'), "{sum:?}");
        let bad = call(reg, &format!("{prefix}get-sum"), json!({"a": "x"}));
        assert_eq!(bad.outcome, Outcome::InvalidArguments, "{bad:?}");

        // One provider format end to end: an OpenAI chat response in, tool
        // messages out.
        let response = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": format!("{prefix}get-sum"), "arguments": "{\"a\": 20, \"b\": 22}"}},
            {"id": "call_2", "type": "function", "function": {"name": format!("{prefix}echo"), "arguments": "{\"message\": \"turn\"}"}}
        ]}}]});
        let messages =
            capstan::run_turn(reg, Format::OpenAiChat, &response, &ExecOptions::default())
                .expect("run_turn");
        let text = messages.to_string();
        assert!(text.contains("call_1") && text.contains("42"), "{text}");
        assert!(text.contains("call_2") && text.contains("turn"), "{text}");

        // The reference server's long-running tool: its title and annotations
        // are kept on the mounted tool, and its progress notifications reach
        // this registry's event hook, all before the result (#33).
        let long = format!("{prefix}trigger-long-running-operation");
        let meta = reg.get(&long).expect("long-running tool").spec().mcp;
        assert_eq!(
            meta.title.as_deref(),
            Some("Trigger Long Running Operation Tool")
        );
        assert_eq!(meta.annotations.as_ref().unwrap()["readOnlyHint"], true);
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let s = seen.clone();
        reg.set_event_hook(Some(std::sync::Arc::new(move |e: &capstan::Event| {
            if let Some(p) = e.progress {
                s.lock().unwrap().push((p.progress, p.total));
            }
        })))
        .unwrap();
        let done = call(reg, &long, json!({"duration": 0.3, "steps": 3}));
        assert_eq!(done.outcome, Outcome::Ok, "{done:?}");
        assert_eq!(
            *seen.lock().unwrap(),
            [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
        );
        reg.set_event_hook(None).unwrap();
    }

    #[test]
    fn server_everything_over_stdio() {
        let reg = Registry::default();
        let mut options = MountOptions::new(Endpoint::Command {
            argv: vec![everything_bin(), "stdio".into()],
            env: vec![],
            cwd: None,
        });
        options.prefix = "ev_".into();
        // Generous: importing the SDK takes 20 s and more on a loaded 2-core
        // machine running these tests in parallel.
        options.connect_timeout = Duration::from_secs(120);
        let mount = Mount::connect(&reg, options).expect("mount server-everything");
        check_everything(&reg, &mount, "ev_");
        mount.unmount();
    }

    #[test]
    fn result_callbacks_on_mcp_connection_threads_run_after_the_thread_hooks() {
        use capstan::runtime::pool::{set_thread_hooks, ThreadHooks};
        use capstan::{submit, Sink};
        use std::cell::Cell;
        use std::sync::{Arc, Mutex};
        thread_local! {
            static HOOKED: Cell<bool> = const { Cell::new(false) };
        }
        // Set before the mount: its connection threads start with them. (The
        // hooks stay set for the other tests of this binary: they only mark
        // threads.)
        set_thread_hooks(Some(ThreadHooks {
            on_start: Box::new(|| HOOKED.with(|h| h.set(true))),
            on_stop: Box::new(|| HOOKED.with(|h| h.set(false))),
        }));
        let reg = Registry::default();
        let mut options = MountOptions::new(Endpoint::Command {
            argv: vec![everything_bin(), "stdio".into()],
            env: vec![],
            cwd: None,
        });
        options.prefix = "hk_".into();
        options.connect_timeout = Duration::from_secs(120);
        let mount = Mount::connect(&reg, options).expect("mount server-everything");
        let seen: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
        let record = seen.clone();
        let batch = submit(
            &reg,
            vec![CallRequest::new(
                "h1",
                "hk_echo",
                json!({"message": "hooks"}),
            )],
            &ExecOptions::default(),
            Sink::Callback(Box::new(move |_, result| {
                assert_eq!(result.outcome, Outcome::Ok, "{result:?}");
                let thread = std::thread::current().name().unwrap_or("").to_string();
                record
                    .lock()
                    .unwrap()
                    .push((thread, HOOKED.with(|h| h.get())));
            })),
            None,
        );
        assert!(batch.wait(Some(Duration::from_secs(60))), "the call ends");
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "{seen:?}");
        let (thread, hooked) = &seen[0];
        // The server's answer completes the call on the connection's thread.
        assert_eq!(thread, "capstan-mcp", "{seen:?}");
        assert!(
            hooked,
            "the result callback ran before on_start on {thread}"
        );
        mount.unmount();
    }

    #[test]
    fn server_everything_over_streamable_http() {
        let port = free_port();
        let _server = Server(
            std::process::Command::new(everything_bin())
                .arg("streamableHttp")
                .env("PORT", port.to_string())
                .stderr(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("server-everything"),
        );
        let reg = Registry::default();
        let mount = mount_http(&reg, &format!("http://127.0.0.1:{port}/mcp"), "evh_");
        check_everything(&reg, &mount, "evh_");
        mount.unmount();
    }

    /// tests/mcp/oauth_server.py on a fresh port, its access tokens living
    /// `expires_in` seconds; its MCP url once it answers.
    fn oauth_server(expires_in: u32) -> (Server, String) {
        oauth_server_in(expires_in, "")
    }

    /// The same in `mode` ("dpop", "dpop-nonce", "legacy-issuer",
    /// "foreign-issuer": see the script).
    fn oauth_server_in(expires_in: u32, mode: &str) -> (Server, String) {
        let port = free_port();
        let server = Server(
            std::process::Command::new(python())
                .arg(mcp_dir().join("oauth_server.py"))
                .args([port.to_string(), expires_in.to_string(), mode.to_owned()])
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("python"),
        );
        let base = format!("http://127.0.0.1:{port}");
        assert!(eventually(Duration::from_secs(60), || stats(&base).is_some()));
        (server, format!("{base}/mcp"))
    }

    /// The test server's counts (GET /stats), with a plain HTTP/1.0 GET.
    fn stats(base: &str) -> Option<Value> {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(base.trim_start_matches("http://")).ok()?;
        s.write_all(b"GET /stats HTTP/1.0\r\n\r\n").ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        serde_json::from_str(text.split("\r\n\r\n").nth(1)?).ok()
    }

    /// The authorize callback of a host whose user agrees: it follows the
    /// authorization URL once (the test server redirects at once) and hands
    /// back the redirect, as a browser would.
    fn agreeing_user() -> Arc<Authorize> {
        Arc::new(|url: &str| {
            use std::io::{Read, Write};
            let rest = url.strip_prefix("http://").ok_or("not http")?;
            let (host, path) = rest.split_at(rest.find('/').ok_or("no path")?);
            let mut s = std::net::TcpStream::connect(host).map_err(|e| e.to_string())?;
            write!(s, "GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").map_err(|e| e.to_string())?;
            let mut text = String::new();
            s.read_to_string(&mut text).map_err(|e| e.to_string())?;
            text.lines()
                .find_map(|l| l.strip_prefix("Location: "))
                .map(|l| l.trim().to_owned())
                .ok_or_else(|| format!("no redirect: {text}"))
        })
    }

    fn oauth_mount(url: &str, authorize: Arc<Authorize>) -> MountOptions {
        let mut options = MountOptions::new(Endpoint::Http {
            url: url.into(),
            headers: vec![],
        });
        options.prefix = "o_".into();
        options.protocol_version = Some("2025-11-25".into());
        options.connect_timeout = Duration::from_secs(60);
        let mut oauth = OAuthOptions::new("http://127.0.0.1:9/callback");
        oauth.authorize = Some(authorize);
        options.oauth = Some(oauth);
        options
    }

    /// `oauth_mount` with an agreeing user, its tokens kept in `store`.
    fn stored_mount(url: &str, store: Arc<dyn TokenStore>) -> MountOptions {
        let mut options = oauth_mount(url, agreeing_user());
        if let Some(oauth) = options.oauth.as_mut() {
            oauth.store = Some(store);
        }
        options
    }

    /// A host's token store in memory: the JSON saved last.
    #[derive(Default)]
    struct Kept(std::sync::Mutex<Option<String>>);

    impl TokenStore for Kept {
        fn load(&self) -> Option<String> {
            self.0.lock().unwrap().clone()
        }
        fn save(&self, json: Option<&str>) {
            *self.0.lock().unwrap() = json.map(str::to_owned);
        }
    }

    #[test]
    fn an_oauth_server_is_mounted_through_the_hosts_authorize_callback() {
        // Also a 2025-03-26 server: no protected resource metadata, and root
        // metadata whose issuer is BASE/oauth (RFC 8414 would want BASE):
        // taken, as it is the MCP server's own origin, and the
        // authorization response's `iss` is held to it.
        for mode in ["", "legacy-issuer"] {
            let (_server, url) = oauth_server_in(3600, mode);
            let base = url.trim_end_matches("/mcp").to_owned();
            let reg = Registry::default();
            let mount = Mount::connect(&reg, oauth_mount(&url, agreeing_user())).expect(mode);
            let token = call(&reg, "o_whoami", json!({}));
            assert_eq!(token.outcome, Outcome::Ok, "{mode}: {}", token.content);
            assert!(token.content.starts_with("at-"), "{}", token.content);
            let stats = stats(&base).expect("stats");
            // Discovery from the 401, dynamic registration, one
            // authorization, PKCE checked by the server, the resource
            // indicator sent.
            assert_eq!(stats["registrations"], 1, "{mode}: {stats}");
            assert_eq!(stats["authorizations"], 1, "{mode}: {stats}");
            assert_eq!(stats["code_grants"], 1, "{mode}: {stats}");
            assert_eq!(stats["resources"], json!([url]), "{mode}: {stats}");
            mount.unmount();
        }
    }

    #[test]
    fn root_metadata_naming_an_issuer_of_another_origin_fails_the_mount() {
        let (_server, url) = oauth_server_in(3600, "foreign-issuer");
        let base = url.trim_end_matches("/mcp").to_owned();
        let reg = Registry::default();
        let Err(err) = Mount::connect(&reg, oauth_mount(&url, agreeing_user())) else {
            panic!("mounted with another origin's authorization server metadata");
        };
        let text = err.to_string();
        assert!(text.contains("OAuth discovery"), "{text}");
        assert!(text.contains("issuer mismatch"), "{text}");
        assert!(text.contains("http://localhost:"), "{text}");
        let stats = stats(&base).expect("stats");
        assert_eq!(stats["authorizations"], 0, "{stats}");
        assert!(reg.names().is_empty());
    }

    #[test]
    fn an_expired_oauth_token_is_refreshed_without_asking_the_user_again() {
        // Tokens live 2 s: after 3 s the next call's token is refused or
        // seen to be expired, and the refresh token gets a new one.
        let (_server, url) = oauth_server(2);
        let base = url.trim_end_matches("/mcp").to_owned();
        let reg = Registry::default();
        let mount = Mount::connect(&reg, oauth_mount(&url, agreeing_user())).expect("mount");
        let first = call(&reg, "o_whoami", json!({}));
        assert_eq!(first.outcome, Outcome::Ok, "{}", first.content);
        std::thread::sleep(Duration::from_secs(3));
        let second = call(&reg, "o_whoami", json!({}));
        assert_eq!(second.outcome, Outcome::Ok, "{}", second.content);
        assert_ne!(first.content, second.content);
        let stats = stats(&base).expect("stats");
        assert!(stats["refresh_grants"].as_u64() >= Some(1), "{stats}");
        assert_eq!(stats["authorizations"], 1, "{stats}");
        mount.unmount();
    }

    #[test]
    fn a_refused_oauth_authorization_fails_the_mount_saying_so() {
        let (_server, url) = oauth_server(3600);
        let reg = Registry::default();
        let refuse: Arc<Authorize> = Arc::new(|_: &str| Err("the user said no".into()));
        let Err(err) = Mount::connect(&reg, oauth_mount(&url, refuse)) else {
            panic!("a refused authorization mounted");
        };
        assert!(matches!(err, capstan::Error::McpConnect(_)), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("OAuth authorization was refused"), "{text}");
        assert!(text.contains("the user said no"), "{text}");
        assert!(reg.names().is_empty());
    }

    #[test]
    fn without_an_authorize_callback_an_oauth_server_fails_the_mount_naming_the_401() {
        let (_server, url) = oauth_server(3600);
        let reg = Registry::default();
        let mut options = oauth_mount(&url, agreeing_user());
        options.oauth = None;
        let Err(err) = Mount::connect(&reg, options) else {
            panic!("mounted without authorization");
        };
        let text = err.to_string();
        assert!(
            text.contains("401") || text.contains("Auth required"),
            "{text}"
        );
    }

    #[test]
    fn stored_oauth_tokens_are_used_by_the_next_mount() {
        // Also for a 2025-03-26 server whose metadata names a path issuer,
        // its tokens expired by the next mount: the refresh needs that
        // metadata, found again by the next mount's discovery.
        for (mode, expires_in) in [("", 3600), ("legacy-issuer", 2)] {
            let (_server, url) = oauth_server_in(expires_in, mode);
            let base = url.trim_end_matches("/mcp").to_owned();
            let kept = Arc::new(Kept::default());
            for round in 0..2 {
                if round == 1 && expires_in < 3 {
                    std::thread::sleep(Duration::from_secs(3));
                }
                let reg = Registry::default();
                let options = stored_mount(&url, kept.clone());
                let mount = Mount::connect(&reg, options).expect("mount");
                let whoami = call(&reg, "o_whoami", json!({}));
                assert_eq!(whoami.outcome, Outcome::Ok, "{mode}: {}", whoami.content);
                mount.unmount();
            }
            assert!(kept
                .0
                .lock()
                .unwrap()
                .as_deref()
                .unwrap_or("")
                .contains("access_token"));
            let stats = stats(&base).expect("stats");
            assert_eq!(stats["authorizations"], 1, "{mode}: {stats}");
            if expires_in < 3 {
                assert!(
                    stats["refresh_grants"].as_u64() >= Some(1),
                    "{mode}: {stats}"
                );
            }
        }
    }

    /// A DPoP-bound token kept in the host's store comes with its key: the
    /// next mount presents it (no new authorization), and once it expired
    /// refreshes it with a proof of that key (the test server binds a
    /// refresh token to the key, as RFC 9449 has it for public clients).
    #[test]
    fn a_stored_dpop_bound_token_is_used_and_refreshed_by_the_next_mount_with_its_key() {
        let (_server, url) = oauth_server_in(3, "dpop");
        let base = url.trim_end_matches("/mcp").to_owned();
        let kept = Arc::new(Kept::default());
        let mount_and_call = || {
            let reg = Registry::default();
            let options = stored_mount(&url, kept.clone());
            let mount = Mount::connect(&reg, options).expect("mount");
            let r = call(&reg, "o_whoami", json!({}));
            assert_eq!(r.outcome, Outcome::Ok, "{r:?}");
            mount.unmount();
        };
        mount_and_call();
        let stored = kept.0.lock().unwrap().clone().unwrap_or_default();
        assert!(
            stored.contains("capstan_dpop_key")
                && stored.to_lowercase().contains("\"token_type\":\"dpop\""),
            "{stored}"
        );
        mount_and_call(); // the token is still live
        std::thread::sleep(Duration::from_secs(4));
        mount_and_call(); // expired: refreshed with the kept key
        let stats = stats(&base).expect("stats");
        assert_eq!(stats["authorizations"], 1, "{stats}");
        assert_eq!(stats["refresh_grants"], 1, "{stats}");
        assert_eq!(stats["dpop_tokens"], 2, "{stats}");
        assert_eq!(stats["bad_proofs"], json!([]), "{stats}");
    }

    /// A store that only saves (its load always finds nothing), as a host
    /// that writes tokens for later but reads none back: the mount still
    /// uses the tokens it got (kept in memory too), and asks the user once.
    #[test]
    fn a_store_that_only_saves_still_has_the_mount_use_its_tokens() {
        #[derive(Default)]
        struct SaveOnly(std::sync::Mutex<Vec<Option<String>>>);
        impl TokenStore for SaveOnly {
            fn load(&self) -> Option<String> {
                None
            }
            fn save(&self, json: Option<&str>) {
                self.0.lock().unwrap().push(json.map(str::to_owned));
            }
        }
        let (_server, url) = oauth_server(3600);
        let base = url.trim_end_matches("/mcp").to_owned();
        let saved = Arc::new(SaveOnly::default());
        let reg = Registry::default();
        let options = stored_mount(&url, saved.clone());
        let mount = Mount::connect(&reg, options).expect("mount");
        for _ in 0..3 {
            let r = call(&reg, "o_whoami", json!({}));
            assert_eq!(r.outcome, Outcome::Ok, "{r:?}");
        }
        mount.unmount();
        assert!(saved
            .0
            .lock()
            .unwrap()
            .iter()
            .flatten()
            .any(|t| t.contains("access_token")));
        let stats = stats(&base).expect("stats");
        assert_eq!(stats["authorizations"], 1, "{stats}");
    }

    /// No user to ask: a mount with a pre-registered client's id and secret
    /// and no authorize callback gets its token with the client-credentials
    /// grant (SEP-1046), for the server's URL as the resource; a wrong
    /// secret fails the mount saying which grant failed.
    #[test]
    fn a_client_id_and_secret_without_a_user_get_tokens_with_the_client_credentials_grant() {
        let (_server, url) = oauth_server(3600);
        let base = url.trim_end_matches("/mcp").to_owned();
        let machine = |secret: &str| {
            let mut options = oauth_mount(&url, agreeing_user());
            if let Some(oauth) = options.oauth.as_mut() {
                oauth.authorize = None;
                oauth.client_id = Some("machine-1".into());
                oauth.client_secret = Some(secret.into());
            }
            options
        };
        let reg = Registry::default();
        let mount = Mount::connect(&reg, machine("s3cret")).expect("mount");
        let r = call(&reg, "o_whoami", json!({}));
        assert_eq!(r.outcome, Outcome::Ok, "{r:?}");
        mount.unmount();
        let stats = stats(&base).expect("stats");
        assert_eq!(stats["client_credentials_grants"], 1, "{stats}");
        assert_eq!(stats["authorizations"], 0, "{stats}");
        assert_eq!(stats["registrations"], 0, "{stats}");
        assert_eq!(stats["resources"], json!([url]), "{stats}");
        let reg = Registry::default();
        let Err(err) = Mount::connect(&reg, machine("wrong")) else {
            panic!("a wrong secret mounted");
        };
        let text = err.to_string();
        assert!(text.contains("client-credentials grant"), "{text}");
    }

    /// The key of the test server's client `keyed-1` (tests/fixtures/oauth).
    fn keyed_client(url: &str, pem: &str) -> MountOptions {
        let mut options = oauth_mount(url, agreeing_user());
        if let Some(oauth) = options.oauth.as_mut() {
            oauth.authorize = None;
            oauth.client_id = Some("keyed-1".into());
            oauth.client_key = Some(pem.into());
        }
        options
    }

    fn fixture_key() -> String {
        let path = mcp_dir().join("../fixtures/oauth/client_key.pem");
        std::fs::read_to_string(path).expect("tests/fixtures/oauth/client_key.pem")
    }

    /// A key this test made, which the server does not know.
    const OTHER_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg+uBqcy5Hhr0eWm7w
wglahD6+bE6hCM1mmkktNnT/2yahRANCAATxblLhN7NYS7lgdK8Tv961828n7ARu
tI1+TdurNOnXf7cxvH9Pis+4Lo16jPCwnXtDT5+pO+UZy5RBeLgyd4YP
-----END PRIVATE KEY-----
";

    /// A client id and key without a user: the client-credentials grant
    /// authenticated with private_key_jwt (the server checks the ES256
    /// signature with the client's public key, `iss`/`sub`, `aud` = its
    /// issuer, `exp` and a fresh `jti`); another key is refused with the
    /// server's error; text that is no key fails before any request.
    #[test]
    fn a_client_key_gets_tokens_with_a_signed_assertion_and_another_key_is_refused() {
        let (_server, url) = oauth_server(3600);
        let base = url.trim_end_matches("/mcp").to_owned();
        let reg = Registry::default();
        let mount = Mount::connect(&reg, keyed_client(&url, &fixture_key())).expect("mount");
        let r = call(&reg, "o_whoami", json!({}));
        assert_eq!(r.outcome, Outcome::Ok, "{r:?}");
        mount.unmount();
        let stats = stats(&base).expect("stats");
        assert_eq!(stats["key_grants"], 1, "{stats}");
        assert_eq!(stats["client_credentials_grants"], 0, "{stats}");
        assert_eq!(stats["resources"], json!([url]), "{stats}");
        let reg = Registry::default();
        let Err(err) = Mount::connect(&reg, keyed_client(&url, OTHER_KEY)) else {
            panic!("another key mounted");
        };
        let text = err.to_string();
        assert!(
            text.contains("client-credentials grant") && text.contains("invalid_client"),
            "{text}"
        );
        let Err(err) = Mount::connect(&reg, keyed_client(&url, "not a key")) else {
            panic!("a key that is no key mounted");
        };
        assert!(err.to_string().contains("PKCS#8 EC P-256"), "{err}");
        assert_eq!(self::stats(&base).expect("stats")["key_grants"], 1);
    }

    /// A workload identity token from the host (SEP-1933): the JWT-bearer
    /// grant with the assertion the host gave for the authorization
    /// server's issuer; a refusal fails the mount with the server's error,
    /// and is not retried nor followed by another grant.
    #[test]
    fn a_workload_assertion_gets_tokens_with_the_jwt_bearer_grant_and_a_refusal_is_final() {
        let (_server, url) = oauth_server(3600);
        let base = url.trim_end_matches("/mcp").to_owned();
        let asked = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let workload = |scopes: Vec<String>| {
            let mut options = oauth_mount(&url, agreeing_user());
            let asked = asked.clone();
            if let Some(oauth) = options.oauth.as_mut() {
                oauth.authorize = None;
                oauth.scopes = scopes;
                oauth.assertion = Some(Arc::new(move |audience: &str| {
                    asked.lock().unwrap().push(audience.to_owned());
                    Ok(format!("workload:{audience}"))
                }));
            }
            options
        };
        let reg = Registry::default();
        let mount = Mount::connect(&reg, workload(vec![])).expect("mount");
        let r = call(&reg, "o_whoami", json!({}));
        assert_eq!(r.outcome, Outcome::Ok, "{r:?}");
        mount.unmount();
        assert_eq!(
            *asked.lock().unwrap(),
            vec![base.clone()],
            "the audience is the issuer"
        );
        let Err(err) = Mount::connect(&Registry::default(), workload(vec!["rejected".into()]))
        else {
            panic!("a refused grant mounted");
        };
        let text = err.to_string();
        assert!(
            text.contains("JWT-bearer grant") && text.contains("invalid_scope"),
            "{text}"
        );
        let stats = stats(&base).expect("stats");
        assert_eq!(stats["jwt_bearer_grants"], 1, "{stats}");
        assert_eq!(
            asked.lock().unwrap().len(),
            2,
            "asked once per mount, not again"
        );
        for other in [
            "authorizations",
            "registrations",
            "client_credentials_grants",
            "key_grants",
        ] {
            assert_eq!(stats[other], 0, "no other grant was tried: {stats}");
        }
        // A refusal 100,000 characters long is quoted, cut.
        let mut options = workload(vec![]);
        if let Some(oauth) = options.oauth.as_mut() {
            oauth.assertion = Some(Arc::new(|_: &str| Ok("long".to_owned())));
        }
        let Err(err) = Mount::connect(&Registry::default(), options) else {
            panic!("a refused grant mounted");
        };
        let text = err.to_string();
        assert!(
            text.contains("invalid_grant: xxx") && text.contains("xxx..."),
            "{text}"
        );
        assert!(text.len() < 2000, "{} bytes", text.len());
    }

    /// An authorization server that offers DPoP: the token request carries
    /// a proof, the token is bound to the mount's key, and every request to
    /// the MCP server presents it with the DPoP scheme and a fresh proof
    /// (the server refuses a Bearer use of a bound token, a replayed proof
    /// and one for another request or key).
    #[test]
    fn dpop_binds_the_token_to_the_mounts_key_and_every_request_proves_it() {
        let (_server, url) = oauth_server_in(3600, "dpop");
        let base = url.trim_end_matches("/mcp").to_owned();
        let reg = Registry::default();
        let mount = Mount::connect(&reg, oauth_mount(&url, agreeing_user())).expect("mount");
        for _ in 0..3 {
            let r = call(&reg, "o_whoami", json!({}));
            assert_eq!(r.outcome, Outcome::Ok, "{r:?}");
        }
        mount.unmount();
        let stats = stats(&base).expect("stats");
        assert_eq!(stats["dpop_tokens"], 1, "{stats}");
        assert!(
            stats["dpop_requests"].as_u64().unwrap() >= 5,
            "list, calls: {stats}"
        );
        assert_eq!(stats["bad_proofs"], json!([]), "{stats}");
        // A machine client gets a bound token the same way.
        let reg = Registry::default();
        let mount = Mount::connect(&reg, keyed_client(&url, &fixture_key())).expect("mount");
        assert_eq!(call(&reg, "o_whoami", json!({})).outcome, Outcome::Ok);
        mount.unmount();
        let stats = self::stats(&base).expect("stats");
        assert_eq!(
            (stats["dpop_tokens"].as_u64(), stats["key_grants"].as_u64()),
            (Some(2), Some(1)),
            "{stats}"
        );
        assert_eq!(stats["bad_proofs"], json!([]), "{stats}");
    }

    /// The JSON record a token store holds.
    fn record(kept: &Kept) -> Value {
        let text = kept.0.lock().unwrap().clone().expect("a saved record");
        serde_json::from_str(&text).expect("JSON")
    }

    /// The access and refresh tokens of a stored record.
    fn tokens_of(record: &Value) -> (String, String) {
        let t = &record["token_response"];
        let s = |k: &str| t[k].as_str().expect(k).to_owned();
        (s("access_token"), s("refresh_token"))
    }

    /// Whether a test server ever saw `token`, presented to its MCP
    /// endpoint or sent to its token endpoint.
    fn saw(stats: &Value, token: &str) -> bool {
        ["presented", "refreshes"].iter().any(|k| {
            stats[*k]
                .as_array()
                .is_some_and(|seen| seen.iter().any(|t| t == token))
        })
    }

    /// Issue 45, finding 1: a token goes only to the server and the
    /// authorization server it was issued for. One store, two servers: A
    /// (with metadata) and B (none: a 2025-03-26 server whose endpoints are
    /// guessed at its origin). A's tokens never reach B, neither the access
    /// token at its MCP endpoint nor the refresh token at its /token; the
    /// tokens B issued are kept with their resource and issuer, and never
    /// reach A. A record that does not say whom it is for is not used: a
    /// mount without a user to ask fails, saying why.
    #[test]
    fn stored_tokens_never_reach_another_issuer() {
        let (_a, url_a) = oauth_server(3600);
        let (_b, url_b) = oauth_server_in(3600, "no-metadata");
        let base = |url: &str| url.trim_end_matches("/mcp").to_owned();
        let kept = Arc::new(Kept::default());
        let mount_and_call = |url: &str| {
            let reg = Registry::default();
            let mount = Mount::connect(&reg, stored_mount(url, kept.clone())).expect(url);
            let r = call(&reg, "o_whoami", json!({}));
            assert_eq!(r.outcome, Outcome::Ok, "{url}: {r:?}");
            mount.unmount();
        };
        mount_and_call(&url_a);
        let from_a = record(&kept);
        assert_eq!(from_a["resource"], json!(url_a), "{from_a}");
        let (access_a, refresh_a) = tokens_of(&from_a);

        mount_and_call(&url_b);
        let stats_b = stats(&base(&url_b)).expect("stats");
        assert!(
            !saw(&stats_b, &access_a),
            "A's access token reached B: {stats_b}"
        );
        assert!(
            !saw(&stats_b, &refresh_a),
            "A's refresh token reached B: {stats_b}"
        );
        assert_eq!(stats_b["authorizations"], 1, "B asked its user: {stats_b}");
        let from_b = record(&kept);
        assert_eq!(from_b["resource"], json!(url_b), "{from_b}");
        assert_eq!(
            from_b["issuer"],
            json!(format!("{}/token", base(&url_b))),
            "a server without metadata: its token endpoint stands for the issuer"
        );
        let (access_b, refresh_b) = tokens_of(&from_b);

        mount_and_call(&url_a);
        let stats_a = stats(&base(&url_a)).expect("stats");
        assert!(
            !saw(&stats_a, &access_b),
            "B's access token reached A: {stats_a}"
        );
        assert!(
            !saw(&stats_a, &refresh_b),
            "B's refresh token reached A: {stats_a}"
        );
        assert_eq!(stats_a["authorizations"], 2, "A asked again: {stats_a}");

        // A's own record, less what says whom it is for: not used.
        let mut anonymous = record(&kept);
        let (access, _) = tokens_of(&anonymous);
        if let Some(r) = anonymous.as_object_mut() {
            r.remove("resource");
        }
        *kept.0.lock().unwrap() = Some(anonymous.to_string());
        let mut options = stored_mount(&url_a, kept.clone());
        if let Some(oauth) = options.oauth.as_mut() {
            oauth.authorize = None;
        }
        let presented_before = stats(&base(&url_a)).expect("stats")["presented"].clone();
        let Err(err) = Mount::connect(&Registry::default(), options) else {
            panic!("mounted with a record that does not say whom it is for");
        };
        let text = err.to_string();
        assert!(
            text.contains("stored tokens were not used") && text.contains("do not say"),
            "{text}"
        );
        assert!(!text.contains(&access), "{text}");
        let presented_after = stats(&base(&url_a)).expect("stats")["presented"].clone();
        assert_eq!(presented_before, presented_after, "the token was presented");
    }

    /// Issue 45, finding 2: a client secret or key goes only to the
    /// authorization server the host named for it. A server whose metadata
    /// names an authorization server of another origin does not get the
    /// host's client credentials sent there (the mount fails saying why and
    /// how to pin); pinned (`client_issuer`), they go to that issuer.
    #[test]
    fn client_credentials_go_only_to_the_authorization_server_the_host_named() {
        let (_as, as_url) = oauth_server(3600);
        let as_base = as_url.trim_end_matches("/mcp").to_owned();
        let (_mcp, url) = oauth_server_in(3600, &format!("as={as_base}"));
        let machine = |pinned: Option<&str>| {
            let mut options = oauth_mount(&url, agreeing_user());
            if let Some(oauth) = options.oauth.as_mut() {
                oauth.authorize = None;
                oauth.client_id = Some("machine-1".into());
                oauth.client_secret = Some("s3cret".into());
                oauth.client_issuer = pinned.map(str::to_owned);
            }
            options
        };
        let Err(err) = Mount::connect(&Registry::default(), machine(None)) else {
            panic!("mounted through another origin's authorization server");
        };
        let text = err.to_string();
        assert!(
            text.contains("client_issuer") && text.contains(&as_base),
            "{text}"
        );
        let mut keyed = keyed_client(&url, &fixture_key());
        let Err(err) = Mount::connect(&Registry::default(), keyed.clone()) else {
            panic!("mounted through another origin's authorization server");
        };
        assert!(err.to_string().contains("client_issuer"), "{err}");
        let stats = stats(&as_base).expect("stats");
        assert_eq!(stats["client_credentials"], 0, "credentials sent: {stats}");
        // A pin to another issuer: not sent either.
        if let Some(oauth) = keyed.oauth.as_mut() {
            oauth.client_issuer = Some("https://as.example.com".into());
        }
        assert!(Mount::connect(&Registry::default(), keyed).is_err());
        let Err(err) = Mount::connect(&Registry::default(), machine(Some(&url))) else {
            panic!("mounted through another issuer than the one pinned");
        };
        assert!(err.to_string().contains("pinned"), "{err}");
        assert_eq!(
            self::stats(&as_base).expect("stats")["client_credentials"],
            0
        );
        // Pinned to the issuer it names: sent there. (The MCP server, another
        // process, does not know that server's tokens: the mount may fail
        // after.)
        let _ = Mount::connect(&Registry::default(), machine(Some(&as_base)));
        let stats = self::stats(&as_base).expect("stats");
        assert!(
            stats["client_credentials_grants"].as_u64() >= Some(1),
            "{stats}"
        );
    }

    /// Issue 45, finding 3: OAuth errors never carry codes, tokens, secrets
    /// or keys, whatever the failure and whatever the server quotes back.
    #[test]
    fn oauth_errors_never_carry_codes_tokens_or_secrets() {
        let (_server, url) = oauth_server(3600);
        let base = url.trim_end_matches("/mcp").to_owned();
        let mount_error =
            |options: MountOptions| match Mount::connect(&Registry::default(), options) {
                Ok(_) => panic!("mounted"),
                Err(e) => e.to_string(),
            };
        let clean = |path: &str, text: &str, secrets: &[&str]| {
            for secret in secrets {
                assert!(!text.contains(secret), "{path}: {secret} in {text}");
            }
            assert!(!text.contains("eyJ"), "{path}: a JWT in {text}");
        };
        // A redirect that is refused (its state is not the one sent).
        let redirect: Arc<Authorize> = Arc::new(|_: &str| {
            Ok("http://127.0.0.1:9/callback?code=CODE-SECRET-1&state=not-sent".into())
        });
        let text = mount_error(oauth_mount(&url, redirect));
        assert!(text.contains("redirect"), "{text}");
        clean("refused redirect", &text, &["CODE-SECRET-1"]);
        // A code the token endpoint refuses (and quotes back).
        let iss = base.clone();
        let wrong_code: Arc<Authorize> = Arc::new(move |auth_url: &str| {
            let state = auth_url
                .split(['?', '&'])
                .find_map(|p| p.strip_prefix("state="))
                .unwrap_or_default();
            Ok(format!(
                "http://127.0.0.1:9/callback?code=CODE-SECRET-2&state={state}&iss={iss}"
            ))
        });
        let text = mount_error(oauth_mount(&url, wrong_code));
        clean("refused code", &text, &["CODE-SECRET-2"]);
        // A wrong client secret, quoted back by the server.
        let mut options = oauth_mount(&url, agreeing_user());
        if let Some(oauth) = options.oauth.as_mut() {
            oauth.authorize = None;
            oauth.client_id = Some("machine-1".into());
            oauth.client_secret = Some("SECRET-3-wrong".into());
        }
        let text = mount_error(options);
        assert!(text.contains("client-credentials grant"), "{text}");
        clean("wrong secret", &text, &["SECRET-3-wrong"]);
        // A key the server does not know: its signed assertion quoted back.
        let text = mount_error(keyed_client(&url, OTHER_KEY));
        assert!(text.contains("invalid_client"), "{text}");
        clean("unknown key", &text, &["PRIVATE KEY"]);
        // A workload assertion refused, quoted back.
        let mut options = oauth_mount(&url, agreeing_user());
        if let Some(oauth) = options.oauth.as_mut() {
            oauth.authorize = None;
            oauth.assertion = Some(Arc::new(|_: &str| Ok("ASSERTION-SECRET-5".to_owned())));
        }
        let text = mount_error(options);
        assert!(text.contains("JWT-bearer grant"), "{text}");
        clean("refused assertion", &text, &["ASSERTION-SECRET-5"]);
        // A refresh token refused, quoted back: the stored tokens expired,
        // and no user to ask.
        let kept = Arc::new(Kept::default());
        let mut options = stored_mount(&url, kept.clone());
        Mount::connect(&Registry::default(), options.clone())
            .expect("mount")
            .unmount();
        let mut stale = record(&kept);
        stale["token_response"]["refresh_token"] = "REFRESH-SECRET-6".into();
        stale["token_response"]["access_token"] = "ACCESS-SECRET-6".into();
        stale["token_received_at"] = 1.into();
        *kept.0.lock().unwrap() = Some(stale.to_string());
        if let Some(oauth) = options.oauth.as_mut() {
            oauth.authorize = None;
        }
        let text = mount_error(options);
        clean(
            "refused refresh",
            &text,
            &["REFRESH-SECRET-6", "ACCESS-SECRET-6"],
        );
        assert!(stats(&base).is_some());
    }

    /// Servers that want DPoP nonces: the token request and the MCP request
    /// are sent again, once each, with the nonce the server gave.
    #[test]
    fn dpop_requests_are_sent_again_with_the_nonce_a_server_asks_for() {
        let (_server, url) = oauth_server_in(3600, "dpop-nonce");
        let base = url.trim_end_matches("/mcp").to_owned();
        let reg = Registry::default();
        let mount = Mount::connect(&reg, oauth_mount(&url, agreeing_user())).expect("mount");
        let r = call(&reg, "o_whoami", json!({}));
        assert_eq!(r.outcome, Outcome::Ok, "{r:?}");
        mount.unmount();
        let stats = stats(&base).expect("stats");
        assert_eq!(stats["as_nonce_challenges"], 1, "{stats}");
        assert!(
            stats["rs_nonce_challenges"].as_u64().unwrap() >= 1,
            "{stats}"
        );
        assert!(stats["dpop_requests"].as_u64().unwrap() >= 2, "{stats}");
        assert_eq!(stats["dpop_tokens"], 1, "{stats}");
    }

    /// A store that only loads (tokens an earlier mount kept): once the
    /// mount refreshed them it uses the refreshed ones, not the expired
    /// ones the host would still hand back, and never asks the user again.
    #[test]
    fn a_store_that_only_loads_gives_the_first_tokens_and_the_mount_keeps_the_refreshed_ones() {
        struct LoadOnly(Option<String>);
        impl TokenStore for LoadOnly {
            fn load(&self) -> Option<String> {
                self.0.clone()
            }
            fn save(&self, _: Option<&str>) {}
        }
        let (_server, url) = oauth_server(2);
        let base = url.trim_end_matches("/mcp").to_owned();
        let kept = Arc::new(Kept::default());
        let reg = Registry::default();
        let options = stored_mount(&url, kept.clone());
        let mount = Mount::connect(&reg, options).expect("mount");
        mount.unmount();
        let first = kept.0.lock().unwrap().clone();
        assert!(first.is_some());
        let reg = Registry::default();
        let options = stored_mount(&url, Arc::new(LoadOnly(first)));
        let mount = Mount::connect(&reg, options).expect("mount");
        for _ in 0..2 {
            std::thread::sleep(Duration::from_millis(2500));
            let r = call(&reg, "o_whoami", json!({}));
            assert_eq!(r.outcome, Outcome::Ok, "{r:?}");
        }
        mount.unmount();
        let stats = stats(&base).expect("stats");
        assert_eq!(stats["authorizations"], 1, "{stats}");
        assert!(
            stats["refresh_grants"].as_u64().is_some_and(|n| n >= 2),
            "{stats}"
        );
    }
}
