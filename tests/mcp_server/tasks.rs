// size: one scenario per task rule over one raw HTTP client; the
// client's helpers are at the top.
//! Tools run as MCP tasks (the Tasks extension `io.modelcontextprotocol/tasks`,
//! issue #33), seen by a raw 2026-07-28 client over HTTP: which calls become
//! tasks (and when), what `tasks/get` reports, that `tasks/cancel` reaches
//! the tool, a task that asks for input (`tasks/update`), and the bounds
//! (tasks kept, time kept).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use capstan::progress::Progress;
use capstan::McpMeta;

use crate::helpers::*;

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn support(level: &str) -> McpMeta {
    McpMeta::from_value(&json!({"execution": {"taskSupport": level}}), "meta").expect("meta")
}

/// What `maybe` saw: that it started, that it was cancelled.
#[derive(Default)]
struct Seen {
    started: AtomicBool,
    cancelled: AtomicBool,
}

/// Runs `body` with the call on a thread of its own: the callback returns
/// with the call open, as a long-running tool's does, and the server makes
/// the call a task at once.
fn deferred(body: impl Fn(Call) + Send + Sync + 'static) -> impl Fn(Call) + Send + Sync + 'static {
    let body = Arc::new(body);
    move |call: Call| {
        let body = body.clone();
        std::thread::spawn(move || body(call));
    }
}

/// Adds `name`, with task support `level`: from a thread of its own, it
/// notes in `seen` that it started, answers `text` once `gate` opens (or
/// "stuck" after the test's patience), or notes and answers its
/// cancellation.
fn add_gated(
    reg: &Registry,
    name: &str,
    parameters: Value,
    level: &str,
    text: &'static str,
    gate: Arc<AtomicBool>,
    seen: Arc<Seen>,
) {
    let tool = def(
        name,
        parameters,
        deferred(move |call| {
            seen.started.store(true, Ordering::SeqCst);
            let done = eventually(PATIENCE, || {
                gate.load(Ordering::SeqCst) || call.is_cancelled()
            });
            if call.is_cancelled() {
                seen.cancelled.store(true, Ordering::SeqCst);
            }
            let _ = call.complete_text(if done { text } else { "stuck" });
        }),
    );
    reg.register_with_mcp(tool, support(level)).unwrap();
}

/// Adds `must`: task support required, and it fails (from a thread of its
/// own).
fn add_must(reg: &Registry) {
    let tool = def(
        "must",
        json!({"type": "object"}),
        deferred(|call| {
            call.fail("must failed").unwrap();
        }),
    );
    reg.register_with_mcp(tool, support("required")).unwrap();
}

/// A registry with `sum` (plain), `maybe` (task optional: returns "done" once
/// `gate` opens or it is cancelled), `must` (task required: fails),
/// `quick` (task required, answers inside its callback) and `steps` (task
/// optional, reports progress then waits for `gate` inside its callback).
fn task_registry(gate: Arc<AtomicBool>, seen: Arc<Seen>) -> Registry {
    let reg = Registry::default();
    let ints =
        json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]});
    reg.register(def("sum", ints.clone(), |call| {
        let a = call.arguments()["a"].as_i64().unwrap_or(0);
        call.complete_text((a + 1).to_string()).unwrap();
    }))
    .unwrap();
    add_gated(&reg, "maybe", ints, "optional", "done", gate.clone(), seen);
    add_must(&reg);
    reg.register_with_mcp(
        def("quick", json!({"type": "object"}), |call| {
            call.complete_text("quick").unwrap();
        }),
        support("required"),
    )
    .unwrap();
    reg.register_with_mcp(
        def("steps", json!({"type": "object"}), move |call| {
            let first = Progress {
                progress: 1.0,
                total: Some(4.0),
                message: Some("first of four".into()),
            };
            call.report_progress(&first).unwrap();
            eventually(PATIENCE, || gate.load(Ordering::SeqCst));
            let _ = call.complete_text("stepped");
        }),
        support("optional"),
    )
    .unwrap();
    reg
}

/// One stateless 2026-07-28 request (with its routing headers); `tasks`:
/// whether it declares the Tasks extension. Returns the JSON-RPC answer.
fn modern(url: &str, method: &str, mut params: Value, tasks: bool) -> Value {
    let mut capabilities = json!({});
    if tasks {
        capabilities = json!({"extensions": {TASKS: {}}});
    }
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string();
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if let Some(name) = &name {
        headers.push(("Mcp-Name", name));
    }
    let (_, _, answer) = raw_exchange(url, &headers, &body);
    message(&answer)
}

fn call_tool(url: &str, name: &str, arguments: Value, tasks: bool) -> Value {
    modern(
        url,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
        tasks,
    )
}

fn get(url: &str, task_id: &str) -> Value {
    modern(url, "tasks/get", json!({"taskId": task_id}), true)
}

/// Polls `tasks/get` until the task is no longer working.
fn settled(url: &str, task_id: &str) -> Value {
    let mut last = Value::Null;
    let done = eventually(PATIENCE, || {
        last = get(url, task_id);
        last["result"]["status"] != "working"
    });
    assert!(done, "task {task_id} still working: {last}");
    last["result"].clone()
}

fn task_id(answer: &Value) -> String {
    assert_eq!(answer["result"]["resultType"], "task", "{answer}");
    answer["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no taskId: {answer}"))
        .to_owned()
}

#[test]
fn a_tool_runs_as_a_task_only_if_it_allows_it_and_the_request_declares_the_extension() {
    let gate = Arc::new(AtomicBool::new(true));
    let served = task_registry(gate, Arc::default());
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url();
    let discover = modern(url, "server/discover", json!({}), false);
    assert!(
        discover["result"]["capabilities"]["extensions"]
            .get(TASKS)
            .is_some(),
        "{discover}"
    );
    // A tool that says nothing about tasks stays a plain call.
    let plain = call_tool(url, "sum", json!({"a": 1}), true);
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
    assert_eq!(plain["result"]["content"][0]["text"], "2", "{plain}");
    // An optional one: a task only for a request that declares the extension.
    let plain = call_tool(url, "maybe", json!({"a": 1}), false);
    assert_eq!(plain["result"]["content"][0]["text"], "done", "{plain}");
    let created = call_tool(url, "maybe", json!({"a": 1}), true);
    let id = task_id(&created);
    assert!(created["result"]["ttlMs"].as_u64().is_some(), "{created}");
    assert!(created["result"].get("result").is_none(), "{created}");
    let done = settled(url, &id);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "done", "{done}");
    // A required one: refused without the extension (-32021, naming it);
    // with it, a tool error is a completed task whose result is an error.
    let refused = call_tool(url, "must", json!({}), false);
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]
            .get(TASKS)
            .is_some(),
        "{refused}"
    );
    let id = task_id(&call_tool(url, "must", json!({}), true));
    let done = settled(url, &id);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert!(
        done["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("must failed")),
        "{done}"
    );
    // A call answered at once is answered directly, task or not: invalid
    // arguments (the tool never runs), a tool that completes inside its
    // callback.
    let invalid = call_tool(url, "maybe", json!({"a": "x"}), true);
    assert_eq!(invalid["result"]["resultType"], "complete", "{invalid}");
    assert_eq!(invalid["result"]["isError"], true, "{invalid}");
    let quick = call_tool(url, "quick", json!({}), true);
    assert_eq!(quick["result"]["resultType"], "complete", "{quick}");
    assert_eq!(quick["result"]["content"][0]["text"], "quick", "{quick}");
    assert!(quick["result"].get("taskId").is_none(), "{quick}");
    assert!(server.stop());
}

#[test]
fn tasks_methods_need_the_extension_and_a_known_task_id() {
    let served = task_registry(Arc::new(AtomicBool::new(true)), Arc::default());
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url();
    let id = task_id(&call_tool(url, "maybe", json!({"a": 1}), true));
    for method in ["tasks/get", "tasks/cancel"] {
        let answer = modern(url, method, json!({"taskId": id}), false);
        assert_eq!(answer["error"]["code"], -32021, "{method}: {answer}");
        let answer = modern(url, method, json!({"taskId": "no-such-task"}), true);
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("no-such-task")),
            "{answer}"
        );
    }
    let answer = modern(
        url,
        "tasks/update",
        json!({"taskId": "no-such-task", "inputResponses": {}}),
        true,
    );
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    // A known task: responses to no outstanding request are ignored.
    let answer = modern(
        url,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"k": {"action": "accept"}}}),
        true,
    );
    assert_eq!(
        answer["result"],
        json!({"resultType": "complete"}),
        "{answer}"
    );
    assert!(server.stop());
}

#[test]
fn tasks_cancel_cancels_the_call_and_the_tool_sees_it() {
    let gate = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Seen::default());
    let served = task_registry(gate, seen.clone());
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url();
    let id = task_id(&call_tool(url, "maybe", json!({"a": 1}), true));
    let working = get(url, &id);
    assert_eq!(working["result"]["status"], "working", "{working}");
    assert!(eventually(PATIENCE, || seen.started.load(Ordering::SeqCst)));
    let ack = modern(url, "tasks/cancel", json!({"taskId": id}), true);
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = settled(url, &id);
    assert_eq!(done["status"], "cancelled", "{done}");
    assert!(done.get("result").is_none(), "{done}");
    // The tool saw it, and what it returned then is dropped.
    assert!(seen.cancelled.load(Ordering::SeqCst));
    // Cancelling an ended task again is acknowledged and changes nothing.
    let ack = modern(url, "tasks/cancel", json!({"taskId": id}), true);
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    assert_eq!(get(url, &id)["result"]["status"], "cancelled");
    assert!(server.stop());
}

/// `steps` works inside its callback: its call becomes a task once it has
/// run `TASK_AFTER` (1 s), and the task starts with the progress reported
/// before that.
#[test]
fn a_running_task_reports_its_latest_progress_as_its_status_message() {
    let gate = Arc::new(AtomicBool::new(false));
    let served = task_registry(gate.clone(), Arc::default());
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url();
    let id = task_id(&call_tool(url, "steps", json!({}), true));
    let mut last = Value::Null;
    let reported = eventually(PATIENCE, || {
        last = get(url, &id);
        last["result"]["statusMessage"] == "1/4: first of four"
    });
    assert!(reported, "{last}");
    assert_eq!(last["result"]["status"], "working", "{last}");
    gate.store(true, Ordering::SeqCst);
    let done = settled(url, &id);
    assert_eq!(done["result"]["content"][0]["text"], "stepped", "{done}");
    assert!(server.stop());
}

#[test]
fn a_server_keeps_at_most_max_tasks_and_forgets_ended_ones_after_task_keep_ms() {
    let gate = Arc::new(AtomicBool::new(false));
    let served = task_registry(gate.clone(), Arc::default());
    let options = ServerOptions {
        max_tasks: 2,
        task_keep_ms: 300,
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).expect("start");
    let url = server.url();
    let first = task_id(&call_tool(url, "maybe", json!({"a": 1}), true));
    let _second = task_id(&call_tool(url, "maybe", json!({"a": 2}), true));
    let third = call_tool(url, "maybe", json!({"a": 3}), true);
    assert_eq!(third["error"]["code"], -32603, "{third}");
    assert!(
        third["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("too many tasks")),
        "{third}"
    );
    // A plain call is not a task: the cap does not stop it.
    let plain = call_tool(url, "sum", json!({"a": 1}), true);
    assert_eq!(plain["result"]["content"][0]["text"], "2", "{plain}");
    gate.store(true, Ordering::SeqCst);
    let done = settled(url, &first);
    assert_eq!(done["status"], "completed", "{done}");
    // Its time-to-live counts from creation: at least until it is forgotten.
    assert!(done["ttlMs"].as_u64().is_some_and(|t| t >= 300), "{done}");
    // Ended tasks are forgotten after task_keep_ms, and make room.
    let forgotten = eventually(PATIENCE, || get(url, &first)["error"]["code"] == -32602);
    assert!(forgotten, "{}", get(url, &first));
    let id = task_id(&call_tool(url, "maybe", json!({"a": 4}), true));
    assert_eq!(settled(url, &id)["status"], "completed");
    assert!(server.stop());
}

#[test]
fn stopping_the_server_cancels_its_running_tasks() {
    let seen = Arc::new(Seen::default());
    let served = task_registry(Arc::new(AtomicBool::new(false)), seen.clone());
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let _id = task_id(&call_tool(server.url(), "maybe", json!({"a": 1}), true));
    assert!(eventually(PATIENCE, || seen.started.load(Ordering::SeqCst)));
    assert!(server.stop(), "a task was left running");
    assert!(seen.cancelled.load(Ordering::SeqCst));
}

/// A served registry whose `hold` must run as a task: a mount that did not
/// drive tasks could not call it at all.
fn required_registry(seen: Arc<Seen>, gate: Arc<AtomicBool>) -> Registry {
    let reg = Registry::default();
    add_gated(
        &reg,
        "hold",
        json!({"type": "object"}),
        "required",
        "held",
        gate,
        seen,
    );
    add_must(&reg);
    reg
}

#[test]
fn a_mount_drives_a_servers_task_and_the_host_sees_an_ordinary_call() {
    let gate = Arc::new(AtomicBool::new(true));
    let served = required_registry(Arc::default(), gate);
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    for version in [None, Some("2025-11-25")] {
        let client = Registry::default();
        let mut options = mount_options(server.url(), vec![]);
        options.protocol_version = version.map(str::to_owned);
        let mount = Mount::connect(&client, options).expect("mount");
        let r = call(&client, "s_hold", json!({}));
        assert_eq!(
            (r.outcome, r.content.as_str()),
            (Outcome::Ok, "held"),
            "{version:?}: {r:?}"
        );
        // A tool error in the task's result is the call's tool error.
        let r = call(&client, "s_must", json!({}));
        assert_eq!(r.outcome, Outcome::ToolError, "{r:?}");
        assert!(r.content.contains("must failed"), "{r:?}");
        mount.unmount();
    }
    assert!(server.stop());
}

#[test]
fn a_mounted_call_that_times_out_cancels_the_servers_task() {
    let seen = Arc::new(Seen::default());
    let served = required_registry(seen.clone(), Arc::new(AtomicBool::new(false)));
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let client = Registry::default();
    let mount = mount(&client, server.url(), vec![]).expect("mount");
    let options = ExecOptions {
        deadline_ms: 300,
        ..ExecOptions::default()
    };
    let r = execute(
        &client,
        vec![CallRequest::new("c1", "s_hold", json!({}))],
        &options,
    )
    .remove(0);
    assert_eq!(r.outcome, Outcome::Timeout, "{r:?}");
    assert!(
        eventually(PATIENCE, || seen.cancelled.load(Ordering::SeqCst)),
        "the served tool never saw the cancellation (started: {})",
        seen.started.load(Ordering::SeqCst)
    );
    mount.unmount();
    assert!(server.stop());
}

/// What `asker` saw in its rounds.
#[derive(Default)]
struct Asked {
    rounds: AtomicUsize,
    inputs: Mutex<Vec<Value>>,
}

/// A registry with `asker` (task optional): from a thread of its own, its
/// first round asks for a name and a confirmation at once with state "s1";
/// its second says what it got; and `hello` (task required), which asks
/// for a name inside its callback, then, given one, greets from a thread of
/// its own.
fn asking_registry(asked: Arc<Asked>) -> Registry {
    let reg = Registry::default();
    let tool = def(
        "asker",
        json!({"type": "object"}),
        deferred(move |call| {
            asked.rounds.fetch_add(1, Ordering::SeqCst);
            let input = call.input().map(|i| i.to_json()).unwrap_or(Value::Null);
            asked.inputs.lock().unwrap().push(input.clone());
            let answers = &input["inputResponses"];
            if answers.is_object() {
                let who = answers["name"]["content"]["name"].as_str().unwrap_or("?");
                let state = input["requestState"].as_str().unwrap_or("none");
                call.complete_text(format!("{who}, {} ({state})", answers["go"]["action"]))
                    .unwrap();
                return;
            }
            let ask = json!({
                "name": {"method": "elicitation/create", "params": {"message": "Name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}},
                "go": {"method": "elicitation/create", "params": {"message": "Go on?",
                    "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}},
            });
            if let Err(e) = call.require_input(ask, Some("s1".into())) {
                call.fail(format!("could not ask: {e}")).unwrap();
            }
        }),
    );
    reg.register_with_mcp(tool, support("optional")).unwrap();
    let hello = def("hello", json!({"type": "object"}), |call| {
        let input = call.input().map(|i| i.to_json()).unwrap_or(Value::Null);
        let name = input["inputResponses"]["who"]["content"]["name"].clone();
        match name.as_str() {
            None => {
                let ask = json!({"who": {"method": "elicitation/create", "params": {
                    "message": "Who?", "requestedSchema": {"type": "object",
                        "properties": {"name": {"type": "string"}}}}}});
                if let Err(e) = call.require_input(ask, None) {
                    call.fail(format!("could not ask: {e}")).unwrap();
                }
            }
            Some(name) => {
                let name = name.to_owned();
                std::thread::spawn(move || call.complete_text(format!("Hello, {name}!")));
            }
        }
    });
    reg.register_with_mcp(hello, support("required")).unwrap();
    reg
}

/// A 2026-07-28 call declaring elicitation and the Tasks extension.
fn call_asking(url: &str, name: &str, extra: Value) -> Value {
    let capabilities = json!({"elicitation": {}, "extensions": {TASKS: {}}});
    tools_call_modern(url, name, capabilities, extra)
}

/// Polls `tasks/get` until the task is `status`; returns what it said.
fn reached(url: &str, task_id: &str, status: &str) -> Value {
    let mut last = Value::Null;
    let done = eventually(PATIENCE, || {
        last = get(url, task_id);
        last["result"]["status"] == status
    });
    assert!(done, "task {task_id} never {status}: {last}");
    last["result"].clone()
}

fn update(url: &str, task_id: &str, responses: Value) -> Value {
    modern(
        url,
        "tasks/update",
        json!({"taskId": task_id, "inputResponses": responses}),
        true,
    )
}

#[test]
fn a_task_that_asks_waits_input_required_until_every_request_is_answered_then_runs_again() {
    let asked = Arc::new(Asked::default());
    let served = asking_registry(asked.clone());
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url();
    let id = task_id(&call_asking(url, "asker", json!({})));
    let waiting = reached(url, &id, "input_required");
    let requests = waiting["inputRequests"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert_eq!(requests.len(), 2, "{waiting}");
    for request in requests.values() {
        assert_eq!(request["method"], "elicitation/create", "{waiting}");
    }
    assert!(waiting.get("requestState").is_none(), "{waiting}");
    let key_of = |message: &str| {
        requests
            .iter()
            .find(|(_, r)| r["params"]["message"] == message)
            .map(|(k, _)| k.clone())
            .unwrap_or_else(|| panic!("no request {message:?}: {waiting}"))
    };
    let (name_key, go_key) = (key_of("Name?"), key_of("Go on?"));
    // An answer that is not an object is refused, naming it; nothing changes.
    let bad = update(url, &id, json!({ name_key.clone(): 5 }));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&name_key)),
        "{bad}"
    );
    // One answer (and one to a key never asked, ignored): acknowledged, and
    // the task still waits for the other.
    let ack = update(
        url,
        &id,
        json!({ name_key.clone(): {"action": "accept", "content": {"name": "Ada"}},
                "never-asked": {"action": "decline"} }),
    );
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let still = get(url, &id)["result"].clone();
    assert_eq!(still["status"], "input_required", "{still}");
    let left: Vec<&String> = still["inputRequests"]
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    assert_eq!(left, vec![&go_key], "{still}");
    assert_eq!(asked.rounds.load(Ordering::SeqCst), 1);
    // The last answer: the tool runs again with both, by its own keys, and
    // its state.
    let ack = update(
        url,
        &id,
        json!({ go_key: {"action": "accept", "content": {"ok": true}} }),
    );
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = settled(url, &id);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"], "Ada, \"accept\" (s1)",
        "{done}"
    );
    let inputs = asked.inputs.lock().unwrap().clone();
    assert_eq!(inputs.len(), 2, "{inputs:?}");
    assert_eq!(
        inputs[0]["canAsk"],
        json!(["elicitation/create"]),
        "{inputs:?}"
    );
    assert_eq!(inputs[1]["requestState"], "s1", "{inputs:?}");
    assert_eq!(
        inputs[1]["inputResponses"]["go"]["content"]["ok"], true,
        "{inputs:?}"
    );
    assert!(server.stop());
}

#[test]
fn a_task_waiting_for_input_is_cancelled_by_tasks_cancel_and_by_the_server_stopping() {
    let asked = Arc::new(Asked::default());
    let served = asking_registry(asked.clone());
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url();
    let id = task_id(&call_asking(url, "asker", json!({})));
    reached(url, &id, "input_required");
    let ack = modern(url, "tasks/cancel", json!({"taskId": id}), true);
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = settled(url, &id);
    assert_eq!(done["status"], "cancelled", "{done}");
    assert!(done.get("inputRequests").is_none(), "{done}");
    // Answers after that change nothing.
    let ack = update(url, &id, json!({"1-name": {"action": "decline"}}));
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    assert_eq!(get(url, &id)["result"]["status"], "cancelled");
    let other = task_id(&call_asking(url, "asker", json!({})));
    reached(url, &other, "input_required");
    assert!(server.stop(), "a task waiting for input kept the server");
    assert_eq!(asked.rounds.load(Ordering::SeqCst), 2);
}

#[test]
fn a_tool_that_asks_inside_its_callback_is_answered_directly_and_becomes_a_task_on_the_next_round()
{
    let served = asking_registry(Arc::default());
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    let url = server.url();
    let first = call_asking(url, "hello", json!({}));
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert!(first["result"].get("taskId").is_none(), "{first}");
    assert_eq!(
        first["result"]["inputRequests"]["who"]["method"], "elicitation/create",
        "{first}"
    );
    let second = call_asking(
        url,
        "hello",
        json!({"inputResponses": {"who": {"action": "accept", "content": {"name": "Alice"}}}}),
    );
    let id = task_id(&second);
    assert!(second["result"].get("requestState").is_none(), "{second}");
    assert!(second["result"].get("inputRequests").is_none(), "{second}");
    let done = settled(url, &id);
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Alice!",
        "{done}"
    );
    assert!(server.stop());
}

/// A task's tool that asks again every round (here with a state alone, no
/// request for the client) is run at most 10 rounds: then the task
/// completes with a tool error saying capstan gave up.
#[test]
fn a_task_that_asks_round_after_round_ends_with_a_tool_error_after_ten_rounds() {
    let reg = Registry::default();
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let tool = def(
        "again",
        json!({"type": "object"}),
        deferred(move |call| {
            counted.fetch_add(1, Ordering::SeqCst);
            if let Err(e) = call.require_input(json!({}), Some("again".into())) {
                call.fail(format!("could not ask: {e}")).unwrap();
            }
        }),
    );
    reg.register_with_mcp(tool, support("optional")).unwrap();
    let server = HttpServer::start(&reg, &ServerOptions::default()).expect("start");
    let url = server.url();
    let id = task_id(&call_asking(url, "again", json!({})));
    let done = settled(url, &id);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true, "{done}");
    let text = done["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("capstan gave up"), "{done}");
    assert_eq!(runs.load(Ordering::SeqCst), 11);
    assert!(server.stop());
}

/// A mount whose host answers: a server's task that waits `input_required`
/// gets the host's answers through `tasks/update` and runs on to its end
/// (`asker`); a tool that asks before it becomes a task is answered, then
/// runs as a task (`hello`). Without an answerer nothing is declared, and
/// the tool cannot ask.
#[test]
fn a_mounts_host_answers_a_servers_task_that_asks_for_input() {
    use capstan::mcp::client::HostInput;
    let asked = Arc::new(Asked::default());
    let served = asking_registry(asked.clone());
    let server = HttpServer::start(&served, &ServerOptions::default()).expect("start");
    // (tool, message) of each request the host was asked.
    type Seen = Arc<Mutex<Vec<(Option<String>, String)>>>;
    let seen: Seen = Arc::default();
    let noted = seen.clone();
    let answer = move |tool: Option<&str>, _method: &str, params: &Value| {
        let message = params["message"].as_str().unwrap_or("").to_owned();
        noted
            .lock()
            .unwrap()
            .push((tool.map(str::to_owned), message.clone()));
        Ok(match message.as_str() {
            "Go on?" => json!({"action": "accept", "content": {"ok": true}}),
            _ => json!({"action": "accept", "content": {"name": "Ada"}}),
        })
    };
    let client = Registry::default();
    let mut options = mount_options(server.url(), vec![]);
    options.input = Some(HostInput::new(&["elicitation/create"], Arc::new(answer)).unwrap());
    let mount = Mount::connect(&client, options).expect("mount");

    let r = call(&client, "s_asker", json!({}));
    assert_eq!(
        (r.outcome, r.content.as_str()),
        (Outcome::Ok, "Ada, \"accept\" (s1)"),
        "{r:?}"
    );
    assert_eq!(
        asked.rounds.load(Ordering::SeqCst),
        2,
        "asked once, then ran"
    );
    let mut messages: Vec<_> = seen.lock().unwrap().drain(..).collect();
    messages.sort();
    let tool = Some("s_asker".to_owned());
    assert_eq!(
        messages,
        [
            (tool.clone(), "Go on?".to_owned()),
            (tool, "Name?".to_owned())
        ],
        "each of the task's requests was answered once"
    );

    let r = call(&client, "s_hello", json!({}));
    assert_eq!(
        (r.outcome, r.content.as_str()),
        (Outcome::Ok, "Hello, Ada!"),
        "{r:?}"
    );
    mount.unmount();

    // No answerer: the mount declares no elicitation, so the tool cannot ask.
    let plain = Registry::default();
    let mount = Mount::connect(&plain, mount_options(server.url(), vec![])).expect("mount");
    let r = call(&plain, "s_asker", json!({}));
    assert_eq!(r.outcome, Outcome::ToolError, "{r:?}");
    assert!(
        r.content
            .contains("did not declare the \"elicitation\" capability"),
        "{r:?}"
    );
    mount.unmount();
    assert!(server.stop());
}

/// `big` (task required): from a thread of its own, a text of
/// `arguments.n` bytes.
fn big_registry() -> Registry {
    let reg = Registry::default();
    let tool = def(
        "big",
        json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        deferred(|call| {
            let n = call.arguments()["n"].as_u64().unwrap_or(0) as usize;
            let _ = call.complete_text("x".repeat(n));
        }),
    );
    reg.register_with_mcp(tool, support("required")).unwrap();
    reg
}

/// A finished task's result text and whether it is an error.
fn result_of(url: &str, task_id: &str) -> (String, bool) {
    let done = settled(url, task_id);
    assert_eq!(done["status"], "completed", "{done}");
    let text = done["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (text, done["result"]["isError"] == true)
}

#[test]
fn ended_tasks_results_are_bounded_in_bytes_and_the_oldest_dropped_first_saying_so() {
    let served = big_registry();
    let options = ServerOptions {
        max_task_bytes: 100_000,
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).expect("start");
    let url = server.url();
    let run = |n: usize| {
        let id = task_id(&call_tool(url, "big", json!({ "n": n }), true));
        settled(url, &id);
        id
    };
    let (a, b) = (run(40_000), run(40_000));
    assert_eq!(result_of(url, &a), ("x".repeat(40_000), false));
    // A third result would pass 100,000 bytes: the oldest is dropped, and
    // its task says so.
    let c = run(40_000);
    let (text, error) = result_of(url, &a);
    assert!(error, "{}", &text[..text.len().min(200)]);
    assert!(text.contains("was dropped to make room"), "{text}");
    assert!(text.contains("at most 100000 bytes"), "{text}");
    for kept in [&b, &c] {
        assert_eq!(result_of(url, kept), ("x".repeat(40_000), false));
    }
    // A result larger than the bound alone is kept as a tool error saying
    // so, and costs the others nothing.
    let d = run(200_000);
    let (text, error) = result_of(url, &d);
    assert!(error, "{}", &text[..text.len().min(200)]);
    assert!(text.contains("more than this server keeps"), "{text}");
    for kept in [&b, &c] {
        assert_eq!(result_of(url, kept), ("x".repeat(40_000), false));
    }
    assert!(server.stop());
}

#[test]
fn partial_answers_of_tasks_waiting_for_input_are_bounded_in_bytes() {
    let asked = Arc::new(Asked::default());
    let served = asking_registry(asked.clone());
    let options = ServerOptions {
        max_task_bytes: 100_000,
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).expect("start");
    let url = server.url();
    // Four tasks waiting for two answers each get one of 30,000 bytes:
    // three fit in 100,000 bytes, the fourth is refused saying why.
    let name = "y".repeat(30_000);
    let mut answered = Vec::new();
    for n in 0..4 {
        let id = task_id(&call_asking(url, "asker", json!({})));
        let waiting = reached(url, &id, "input_required");
        let key = waiting["inputRequests"]
            .as_object()
            .and_then(|r| r.iter().find(|(_, r)| r["params"]["message"] == "Name?"))
            .map(|(k, _)| k.clone())
            .unwrap_or_else(|| panic!("no Name? request: {waiting}"));
        let answer = json!({ key.clone(): {"action": "accept", "content": {"name": name}} });
        let ack = update(url, &id, answer.clone());
        if n < 3 {
            assert_eq!(
                ack["result"],
                json!({"resultType": "complete"}),
                "{n}: {ack}"
            );
            answered.push(id);
            continue;
        }
        assert_eq!(ack["error"]["code"], -32602, "{ack}");
        let message = ack["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("find no room"), "{message}");
        assert!(message.contains("100000"), "{message}");
        // A task that ends gives its room back.
        let cancelled = modern(url, "tasks/cancel", json!({"taskId": answered[0]}), true);
        assert!(cancelled.get("error").is_none(), "{cancelled}");
        reached(url, &answered[0], "cancelled");
        let ack = update(url, &id, answer);
        assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    }
    assert!(server.stop());
}
