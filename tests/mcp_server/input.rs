//! A served tool asks its MCP client for input (MCP 2026-07-28 multi
//! round-trip requests, SEP-2322; `Call::require_input`), seen by a raw
//! 2026-07-28 client over HTTP: the InputRequiredResult, the sealed state,
//! what a tampered state or a malformed answer gets, and the callers that
//! cannot be asked.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use capstan::Error;

use crate::helpers::*;

const ALL: &[&str] = &["elicitation", "sampling", "roots"];

/// One stateless 2026-07-28 `tools/call` declaring `capabilities` (of
/// elicitation, sampling, roots), with `extra` params merged in.
fn call_modern(url: &str, name: &str, capabilities: &[&str], extra: Value) -> Value {
    let declared: serde_json::Map<String, Value> = capabilities
        .iter()
        .map(|c| ((*c).to_owned(), json!({})))
        .collect();
    tools_call_modern(url, name, Value::Object(declared), extra)
}

/// What `greet` saw in its rounds.
#[derive(Default)]
struct Rounds {
    runs: AtomicUsize,
    /// The input of its last run, and what `require_input` returned then.
    input: Mutex<Option<Value>>,
    refused: Mutex<Option<String>>,
}

/// `greet` asks for a name (elicitation) with state "round-1", then greets
/// with the name and the state it got back; `other` asks for the same with
/// state "other". A refused `require_input` is noted, and the call failed.
fn input_registry(rounds: Arc<Rounds>) -> Registry {
    let reg = Registry::default();
    for (name, state) in [("greet", "round-1"), ("other", "other")] {
        let rounds = rounds.clone();
        reg.register(def(name, json!({"type": "object"}), move |call| {
            rounds.runs.fetch_add(1, Ordering::SeqCst);
            let input = call.input().map(|i| i.to_json());
            *rounds.input.lock().unwrap() = input.clone();
            let input = input.unwrap_or(Value::Null);
            let answer = &input["inputResponses"]["name"];
            if answer["action"] == "accept" {
                let who = answer["content"]["name"].as_str().unwrap_or("?");
                let state = input["requestState"].as_str().unwrap_or("none");
                call.complete_text(format!("Hello, {who}! (state {state})"))
                    .unwrap();
                return;
            }
            let ask = json!({"name": {"method": "elicitation/create", "params": {
                "message": "What is your name?",
                "requestedSchema": {"type": "object",
                    "properties": {"name": {"type": "string"}}, "required": ["name"]}}}});
            if let Err(e) = call.require_input(ask, Some(state.into())) {
                assert!(
                    !call.is_done(),
                    "a refused require_input left the call open"
                );
                *rounds.refused.lock().unwrap() = Some(e.to_string());
                call.fail(format!("could not ask: {e}")).unwrap();
            }
        }))
        .unwrap();
    }
    reg
}

fn serve(rounds: &Arc<Rounds>) -> (Registry, HttpServer) {
    let reg = input_registry(rounds.clone());
    let server = HttpServer::start(&reg, &ServerOptions::default()).unwrap();
    (reg, server)
}

#[test]
fn a_tool_asks_its_client_for_input_and_gets_the_answer_and_its_state_back() {
    let rounds = Arc::new(Rounds::default());
    let (_reg, server) = serve(&rounds);
    let url = server.url();

    let first = call_modern(url, "greet", ALL, json!({}));
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["name"]["method"],
        "elicitation/create"
    );
    assert_eq!(
        result["inputRequests"]["name"]["params"]["message"],
        "What is your name?"
    );
    assert!(result.get("content").is_none(), "{first}");
    let sealed = result["requestState"].as_str().expect("a requestState");
    assert!(
        !sealed.contains("round-1"),
        "the state travels sealed, not as the tool gave it: {sealed}"
    );
    assert_eq!(
        rounds.input.lock().unwrap().clone().unwrap(),
        json!({"canAsk": ["elicitation/create", "sampling/createMessage", "roots/list"]}),
        "the first round has no answers and no state"
    );

    let answers = json!({"name": {"action": "accept", "content": {"name": "Ada"}},
                         "extra": {"action": "accept", "content": {}}});
    let second = call_modern(
        url,
        "greet",
        ALL,
        json!({"inputResponses": answers, "requestState": sealed}),
    );
    assert_eq!(
        second["result"]["content"][0]["text"], "Hello, Ada! (state round-1)",
        "{second}"
    );
    assert_ne!(second["result"]["isError"], true, "{second}");
    let seen = rounds.input.lock().unwrap().clone().unwrap();
    assert_eq!(
        seen["inputResponses"], answers,
        "answers reach the tool as sent"
    );
    assert_eq!(seen["requestState"], "round-1");
}

#[test]
fn a_changed_or_foreign_state_and_a_malformed_answer_are_refused_before_the_tool_runs() {
    let rounds = Arc::new(Rounds::default());
    let (_reg, server) = serve(&rounds);
    let url = server.url();
    let first = call_modern(url, "greet", ALL, json!({}));
    let sealed = first["result"]["requestState"].as_str().unwrap().to_owned();
    let runs = rounds.runs.load(Ordering::SeqCst);

    let answers = json!({"name": {"action": "accept", "content": {"name": "Eve"}}});
    let mut tampered = sealed.clone().into_bytes();
    let last = tampered.len() - 1;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    for (tool, state) in [
        ("greet", tampered.as_str()),
        ("greet", "round-1"),
        ("other", sealed.as_str()),
    ] {
        let answer = call_modern(
            url,
            tool,
            ALL,
            json!({"inputResponses": answers, "requestState": state}),
        );
        assert_eq!(answer["error"]["code"], -32602, "{tool} {state}: {answer}");
        let text = answer["error"]["message"].as_str().unwrap();
        assert!(
            text.contains("requestState failed its integrity check"),
            "{text}"
        );
    }
    let answer = call_modern(
        url,
        "greet",
        ALL,
        json!({"inputResponses": {"name": 12345}}),
    );
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("inputResponses[\"name\"] is not an object"),
        "{answer}"
    );
    assert_eq!(
        rounds.runs.load(Ordering::SeqCst),
        runs,
        "the tool never ran on a refused round"
    );
}

/// The tool's `require_input` is refused (the call stays open for it to
/// complete another way); when it then fails, a 2026-07-28 client gets
/// MissingRequiredClientCapability (-32021) naming what the tool needed.
#[test]
fn a_tool_cannot_ask_what_the_client_did_not_declare_and_the_call_stays_open() {
    let rounds = Arc::new(Rounds::default());
    let (_reg, server) = serve(&rounds);
    let answer = call_modern(server.url(), "greet", &["sampling"], json!({}));
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
    assert_eq!(
        answer["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}}),
        "{answer}"
    );
    let refused = rounds.refused.lock().unwrap().clone().unwrap();
    assert!(
        refused.contains("did not declare the \"elicitation\" capability"),
        "{refused}"
    );
    assert_eq!(
        rounds.input.lock().unwrap().clone().unwrap()["canAsk"],
        json!(["sampling/createMessage"])
    );
}

#[test]
fn callers_that_cannot_answer_get_unsupported_and_the_tool_completes_another_way() {
    let rounds = Arc::new(Rounds::default());
    let reg = input_registry(rounds.clone());
    // A local call (a provider turn, say): no input, nothing can be asked.
    let result = call(&reg, "greet", json!({}));
    assert_eq!(result.outcome, Outcome::ToolError);
    assert!(result.content.starts_with("could not ask: "), "{result:?}");
    assert!(result.input_required.is_none());
    let refused = rounds.refused.lock().unwrap().take().unwrap();
    assert!(refused.contains("its caller cannot be asked"), "{refused}");
    assert!(rounds.input.lock().unwrap().is_none());

    // A legacy (2025-11-25) client that declared no elicitation (capstan's
    // own mount): capstan would ask it itself, but cannot ask this.
    let server = HttpServer::start(&reg, &ServerOptions::default()).unwrap();
    let host = Registry::default();
    let mut options = mount_options(server.url(), vec![]);
    options.protocol_version = Some("2025-11-25".into());
    let _mount = Mount::connect(&host, options).unwrap();
    let result = call(&host, "s_greet", json!({}));
    assert_eq!(result.outcome, Outcome::ToolError, "{result:?}");
    assert!(result.content.contains("could not ask"), "{result:?}");
    let refused = rounds.refused.lock().unwrap().take().unwrap();
    assert!(
        refused.contains("did not declare the \"elicitation\" capability"),
        "{refused}"
    );
}

#[test]
fn require_input_after_the_call_ended_is_already_completed() {
    let reg = Registry::default();
    let kept: Arc<Mutex<Option<Call>>> = Arc::default();
    let k = kept.clone();
    reg.register(def("twice", json!({"type": "object"}), move |call| {
        call.complete_text("done").unwrap();
        *k.lock().unwrap() = Some(call);
    }))
    .unwrap();
    assert_eq!(call(&reg, "twice", json!({})).content, "done");
    let call = kept.lock().unwrap().take().unwrap();
    let e = call
        .require_input(json!({"k": {"method": "roots/list"}}), None)
        .unwrap_err();
    assert!(matches!(e, Error::AlreadyCompleted(_)), "{e}");
}

/// A gateway: registry B mounts server A (2026-07-28) and serves its tools.
/// What A's tool asks reaches B's client, whose answers and A's state go
/// back to A on the next round. For a caller of B that cannot be asked (a
/// plain execute), the mount declares nothing to A, whose tool is refused
/// when it asks (and here fails saying so).
#[test]
fn a_mounted_servers_input_request_reaches_a_client_of_the_server_that_mounted_it() {
    let rounds = Arc::new(Rounds::default());
    let (_a, server_a) = serve(&rounds);
    let gateway = Registry::default();
    let mount = mount(&gateway, server_a.url(), vec![]).expect("mount");
    assert_eq!(mount.info()["era"], "modern", "{}", mount.info());
    let server_b = HttpServer::start(&gateway, &ServerOptions::default()).unwrap();
    let url = server_b.url();

    let first = call_modern(url, "s_greet", &["elicitation"], json!({}));
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["name"]["method"], "elicitation/create",
        "{first}"
    );
    assert_eq!(
        result["inputRequests"]["name"]["params"]["message"], "What is your name?",
        "{first}"
    );
    // A declared only what B's client declared (and the mount's tasks).
    assert_eq!(
        rounds.input.lock().unwrap().clone().unwrap()["canAsk"],
        json!(["elicitation/create"])
    );
    let sealed = result["requestState"].as_str().expect("a requestState");
    let answers = json!({"name": {"action": "accept", "content": {"name": "Ada"}}});
    let second = call_modern(
        url,
        "s_greet",
        &["elicitation"],
        json!({"inputResponses": answers, "requestState": sealed}),
    );
    assert_eq!(
        second["result"]["content"][0]["text"], "Hello, Ada! (state round-1)",
        "{second}"
    );
    assert_eq!(
        rounds.input.lock().unwrap().clone().unwrap()["inputResponses"],
        answers
    );

    let plain = call(&gateway, "s_greet", json!({}));
    assert_eq!(plain.outcome, Outcome::ToolError, "{plain:?}");
    assert!(
        plain
            .content
            .contains("it needs the client capabilities [elicitation]"),
        "{plain:?}"
    );
    assert!(server_b.stop());
    mount.unmount();
    assert!(server_a.stop());
}

/// What a mount's host answerer was asked: (tool, method, params).
type Asked = Arc<Mutex<Vec<(Option<String>, String, Value)>>>;

/// A mount of `url` whose host answers elicitation with `answer` (or the
/// error), noting what it was asked.
fn mount_answering(
    host: &Registry,
    url: &str,
    protocol_version: Option<&str>,
    answer: Result<Value, String>,
) -> (Mount, Asked) {
    use capstan::mcp::client::HostInput;
    let asked: Asked = Arc::default();
    let seen = asked.clone();
    let answerer = move |tool: Option<&str>, method: &str, params: &Value| {
        seen.lock()
            .unwrap()
            .push((tool.map(str::to_owned), method.to_owned(), params.clone()));
        answer.clone()
    };
    let mut options = mount_options(url, vec![]);
    options.protocol_version = protocol_version.map(str::to_owned);
    options.input = Some(HostInput::new(&["elicitation/create"], Arc::new(answerer)).unwrap());
    (Mount::connect(host, options).expect("mount"), asked)
}

/// A mount whose host answers: a 2026-07-28 server's InputRequiredResult
/// is answered by the host, and the call goes again with the answers and
/// the server's state as it came; an older (2025-11-25) server's
/// elicitation mid-call is answered in place. Either way the tool sees
/// one call that asked once. The mount declares what its host answers.
#[test]
fn a_mounts_host_answers_what_a_server_of_either_era_asks_and_the_call_completes() {
    for era in [None, Some("2025-11-25")] {
        let rounds = Arc::new(Rounds::default());
        let (_a, server) = serve(&rounds);
        let host = Registry::default();
        let accept = json!({"action": "accept", "content": {"name": "Ada"}});
        let (mount, asked) = mount_answering(&host, server.url(), era, Ok(accept));
        let result = call(&host, "s_greet", json!({}));
        assert_eq!(
            (result.outcome, result.content.as_str()),
            (Outcome::Ok, "Hello, Ada! (state round-1)"),
            "{era:?}: {result:?}"
        );
        let asked = asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "{era:?}: {asked:?}");
        let (tool, method, params) = &asked[0];
        // A 2026-07-28 request belongs to the call; an older server's
        // request names no call.
        let expected_tool = era.is_none().then(|| "s_greet".to_owned());
        assert_eq!(tool, &expected_tool, "{era:?}");
        assert_eq!(method, "elicitation/create");
        assert_eq!(params["message"], "What is your name?", "{params}");
        assert_eq!(
            rounds.runs.load(Ordering::SeqCst),
            2,
            "{era:?}: asked, then ran"
        );
        if era.is_none() {
            assert_eq!(
                rounds.input.lock().unwrap().clone().unwrap()["canAsk"],
                json!(["elicitation/create"]),
                "the mount declared what its host answers"
            );
        }
        mount.unmount();
        assert!(server.stop());
    }
}

/// The host's refusal, and an answer that is not an ElicitResult, fail the
/// call naming why; a server that asks again and again is given up on
/// after 10 rounds.
#[test]
fn a_mounts_host_that_cannot_answer_fails_the_call_saying_why_and_endless_asking_ends() {
    let rounds = Arc::new(Rounds::default());
    let (_a, server) = serve(&rounds);
    let host = Registry::default();
    let (refusing, _) = mount_answering(&host, server.url(), None, Err("no user here".into()));
    let result = call(&host, "s_greet", json!({}));
    assert_eq!(result.outcome, Outcome::ToolError, "{result:?}");
    assert!(
        result
            .content
            .contains("the host could not answer: request \"name\": no user here"),
        "{result:?}"
    );
    refusing.unmount();

    let (garbled, _) = mount_answering(&host, server.url(), None, Ok(json!({"action": "maybe"})));
    let result = call(&host, "s_greet", json!({}));
    assert_eq!(result.outcome, Outcome::ToolError, "{result:?}");
    assert!(
        result.content.contains("is not an ElicitResult"),
        "{result:?}"
    );
    garbled.unmount();

    // `greet` asks again whenever its answer is not an acceptance.
    let (declining, asked) =
        mount_answering(&host, server.url(), None, Ok(json!({"action": "decline"})));
    let result = call(&host, "s_greet", json!({}));
    assert_eq!(result.outcome, Outcome::ToolError, "{result:?}");
    assert!(
        result
            .content
            .contains("asked for input more than 10 times"),
        "{result:?}"
    );
    assert_eq!(asked.lock().unwrap().len(), 10);
    declining.unmount();
    assert!(server.stop());
}

/// A 2025-11-25 client whose host never answers the tool's
/// `elicitation/create` holds the call no longer than the call's timeout:
/// the call ends timed out, saying what went unanswered (before, it waited
/// for ever, and 12,000 such calls held 260 MB).
#[test]
fn a_legacy_client_that_never_answers_holds_the_call_no_longer_than_its_timeout() {
    use capstan::mcp::client::HostInput;
    use std::sync::atomic::AtomicBool;
    let rounds = Arc::new(Rounds::default());
    let served = input_registry(rounds.clone());
    let options = ServerOptions {
        call_timeout_ms: 500,
        ..ServerOptions::default()
    };
    let server = HttpServer::start(&served, &options).unwrap();
    let host = Registry::default();
    let release = Arc::new(AtomicBool::new(false));
    let released = release.clone();
    let asked = Arc::new(AtomicUsize::new(0));
    let heard = asked.clone();
    let silent = move |_: Option<&str>, _: &str, _: &Value| {
        heard.fetch_add(1, Ordering::SeqCst);
        eventually(PATIENCE * 2, || released.load(Ordering::SeqCst));
        Ok(json!({"action": "decline"}))
    };
    let mut mount_options = mount_options(server.url(), vec![]);
    mount_options.protocol_version = Some("2025-11-25".into());
    mount_options.input = Some(HostInput::new(&["elicitation/create"], Arc::new(silent)).unwrap());
    let mount = Mount::connect(&host, mount_options).expect("mount");
    let (tx, rx) = std::sync::mpsc::channel();
    let caller = host.clone();
    std::thread::spawn(move || {
        let _ = tx.send(call(&caller, "s_greet", json!({})));
    });
    let result = rx.recv_timeout(PATIENCE);
    release.store(true, Ordering::SeqCst);
    let result = result.expect("the call never ended: an unanswered elicitation held it");
    assert_eq!(result.outcome, Outcome::ToolError, "{result:?}");
    assert!(
        result.content.contains(
            "timed out: the client did not answer its elicitation/create request within the \
             call's timeout"
        ),
        "{result:?}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1, "the client was asked");
    assert_eq!(rounds.runs.load(Ordering::SeqCst), 1, "the tool ran once");
    mount.unmount();
    assert!(server.stop());
}

/// Reads `stream` until its text holds `needle`; the text so far.
fn read_until(stream: &mut std::net::TcpStream, needle: &str) -> String {
    let mut text = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&text).contains(needle) {
        let n = stream
            .read(&mut buf)
            .unwrap_or_else(|e| panic!("no {needle:?} ({e}): {}", String::from_utf8_lossy(&text)));
        assert!(
            n > 0,
            "closed before {needle:?}: {}",
            String::from_utf8_lossy(&text)
        );
        text.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// The first SSE event of `text` whose data holds `needle`, as JSON.
fn event_with(text: &str, needle: &str) -> Value {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .find(|d| d.contains(needle))
        .and_then(|d| serde_json::from_str(d).ok())
        .unwrap_or_else(|| panic!("no event with {needle:?}: {text}"))
}

/// A 2025-11-25 client that goes away (closes the connection of its
/// `tools/call`) while the tool's `elicitation/create` waits for its answer
/// ends the call: capstan withdraws the request (`notifications/cancelled`
/// on the session's event stream) and the tool does not run again (before,
/// the call waited for ever).
#[test]
fn a_legacy_client_that_goes_away_ends_the_call_waiting_for_its_answer() {
    let rounds = Arc::new(Rounds::default());
    let (_reg, server) = serve(&rounds);
    let url = server.url();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string();
    let (status, head, _) = raw_exchange(url, &[], &initialize);
    assert_eq!(status, 200, "{head}");
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .expect("a session id")
        .trim()
        .to_string();
    let with_session = [("Mcp-Session-Id", session.as_str())];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(raw_exchange(url, &with_session, initialized).0, 202);
    // The session's own event stream, where a withdrawn request is told.
    let mut events = send_raw("GET", url, &with_session, "");
    read_until(&mut events, "\r\n\r\n");
    let call = json!({"jsonrpc": "2.0", "id": "call-1", "method": "tools/call",
        "params": {"name": "greet", "arguments": {}}})
    .to_string();
    let mut post = send_raw("POST", url, &with_session, &call);
    let asked = read_until(&mut post, "elicitation/create");
    let request = event_with(&asked, "elicitation/create");
    drop(post);
    let told = read_until(&mut events, "notifications/cancelled");
    let withdrawn = event_with(&told, "notifications/cancelled");
    assert_eq!(
        withdrawn["params"]["requestId"], request["id"],
        "{withdrawn} {request}"
    );
    assert_eq!(rounds.runs.load(Ordering::SeqCst), 1, "the tool ran once");
    assert!(server.stop());
}
