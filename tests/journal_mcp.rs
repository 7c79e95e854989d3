//! Durable calls through the MCP server (issue #47, item 1): a served
//! `tools/call` whose `_meta` names a run (`dev.capstan/runId`, and the
//! call's id in it, `dev.capstan/callId`) is journaled like any other call:
//! the same call again, in the same server or in a new server process on
//! the same journal, is answered from the journal without running the tool.
//! Over the real stdio server: this test runs its own binary as the server.

#![cfg(feature = "mcp")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

const NAME: &str = "a_served_call_with_a_run_id_is_answered_from_the_journal";

/// The server half: `add` appends a line to `$RUNS` each time it runs.
fn serve(journal: &str, runs: &str) {
    use std::sync::Arc;
    let reg = capstan::Registry::default();
    let runs = runs.to_string();
    reg.register(capstan::ToolDef {
        name: "add".into(),
        description: "adds a and b".into(),
        parameters: json!({"type": "object", "properties": {
            "a": {"type": "integer"}, "b": {"type": "integer"}}}),
        handler: Box::new(move |call: capstan::Call| {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(&runs)
                .unwrap();
            writeln!(f, "ran").unwrap();
            let a = call.arguments()["a"].as_i64().unwrap_or(0);
            let b = call.arguments()["b"].as_i64().unwrap_or(0);
            call.complete_text((a + b).to_string()).unwrap();
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: capstan::ToolFlags::default(),
    })
    .unwrap();
    let journal = capstan_journal::JsonlJournal::open(journal).unwrap();
    capstan::exec::set_journal(
        &reg,
        Some(capstan::exec::journal::Attached {
            journal: Arc::new(journal),
            mode: capstan::exec::journal::Mode::Record,
        }),
    );
    let options = capstan::mcp::server::ServerOptions {
        name: "journal-child".into(),
        ..Default::default()
    };
    capstan::mcp::server::serve_stdio(&reg, &options).unwrap();
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    next_id: u64,
}

impl Server {
    fn start(journal: &str, runs: &str) -> Server {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", NAME, "--nocapture", "-q"])
            .env("CAPSTAN_JOURNAL_MCP_SERVE", journal)
            .env("CAPSTAN_JOURNAL_MCP_RUNS", runs)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            // The test harness's own lines ("running 1 test") are not JSON.
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    if tx.send(v).is_err() {
                        break;
                    }
                }
            }
        });
        let mut server = Server {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        let init = server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "journal-test", "version": "1"}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("no answer to {method}"));
            if message["id"] == id {
                return message;
            }
        }
    }

    fn call(&mut self, args: Value, meta: Value) -> Value {
        self.request(
            "tools/call",
            json!({"name": "add", "arguments": args, "_meta": meta}),
        )
    }

    fn stop(mut self) {
        drop(self.stdin);
        assert!(self.child.wait().unwrap().success());
    }
}

fn text(answer: &Value) -> (bool, String) {
    let result = &answer["result"];
    assert!(result.is_object(), "{answer}");
    (
        result["isError"].as_bool().unwrap_or(false),
        result["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    )
}

#[test]
fn a_served_call_with_a_run_id_is_answered_from_the_journal() {
    if let (Ok(journal), Ok(runs)) = (
        std::env::var("CAPSTAN_JOURNAL_MCP_SERVE"),
        std::env::var("CAPSTAN_JOURNAL_MCP_RUNS"),
    ) {
        return serve(&journal, &runs);
    }
    let dir = std::env::temp_dir().join(format!("capstan-journal-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let journal = dir.join("calls.jsonl").display().to_string();
    let runs_path = dir.join("runs").display().to_string();
    let _ = std::fs::remove_file(&journal);
    let _ = std::fs::remove_file(&runs_path);
    let runs = || {
        std::fs::read_to_string(&runs_path)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let key = json!({"dev.capstan/runId": "conv-1", "dev.capstan/callId": "call_a"});

    let mut server = Server::start(&journal, &runs_path);
    assert_eq!(
        text(&server.call(json!({"a": 2, "b": 3}), key.clone())),
        (false, "5".into())
    );
    assert_eq!(runs(), 1);
    // The same call again (a new request id): from the journal.
    assert_eq!(
        text(&server.call(json!({"a": 2, "b": 3}), key.clone())),
        (false, "5".into())
    );
    assert_eq!(runs(), 1, "the second call with the same key ran the tool");
    // Other arguments under the same key: refused, naming the change.
    let (is_error, changed) = text(&server.call(json!({"a": 2, "b": 4}), key.clone()));
    assert!(is_error && changed.contains("arguments"), "{changed}");
    assert_eq!(runs(), 1);
    // No run id: not journaled, so it runs each time.
    assert_eq!(
        text(&server.call(json!({"a": 1, "b": 1}), json!({}))),
        (false, "2".into())
    );
    assert_eq!(
        text(&server.call(json!({"a": 1, "b": 1}), json!({}))),
        (false, "2".into())
    );
    assert_eq!(runs(), 3);
    // A bad key is a protocol error naming it; nothing runs.
    let bad = server.call(json!({"a": 1, "b": 1}), json!({"dev.capstan/runId": 7}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("dev.capstan/runId"),
        "{bad}"
    );
    assert_eq!(runs(), 3);
    server.stop();

    // A new server process on the same journal: the call is still answered
    // from it without running.
    let mut server = Server::start(&journal, &runs_path);
    assert_eq!(
        text(&server.call(json!({"a": 2, "b": 3}), key)),
        (false, "5".into())
    );
    assert_eq!(runs(), 3, "the restarted server ran a journaled call again");
    server.stop();
    let _ = std::fs::remove_dir_all(&dir);
}
