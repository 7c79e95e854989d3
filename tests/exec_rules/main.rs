//! Executor rules a host relies on that the larger suites (exec, submit,
//! host) reach only through the C ABI or not at all: found by mutation
//! testing of `src/exec` (issue 18), each test named after its rule. Shared
//! helpers here; the tests by subject: `calls`, `workers`, `main_thread`,
//! `batch_end`, `approval`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use capstan::exec::release_calls;
use capstan::{
    execute, submit, Call, CallRequest, ExecOptions, Outcome, Registry, Sink, ToolDef, ToolFlags,
    ToolResult,
};
use serde_json::json;

#[path = "../common/wait.rs"]
mod wait;
use wait::eventually;

mod approval;
mod batch_end;
mod calls;
mod main_thread;
mod workers;

/// Long enough for a loaded machine; the tests end as soon as it holds.
const PATIENCE: Duration = Duration::from_secs(30);

fn def(
    name: &str,
    timeout_ms: u32,
    flags: u32,
    f: impl Fn(Call) + Send + Sync + 'static,
) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        handler: Box::new(f),
        timeout_ms,
        max_output_chars: 0,
        flags: ToolFlags(flags),
    }
}

/// The registry of `echo` (answers its call id), for batch rules.
fn echo_registry() -> Registry {
    let reg = Registry::default();
    reg.register(def("echo", 0, 0, |call| {
        let id = call.id().to_string();
        call.complete_text(id).unwrap();
    }))
    .unwrap();
    reg
}

fn echo_calls(n: usize) -> Vec<CallRequest> {
    (0..n)
        .map(|i| CallRequest::new(format!("e{i}"), "echo", json!({})))
        .collect()
}

/// Registers `name` (with `flags`): a tool that records the thread each of
/// its calls runs on and completes it with `text`. Returns the record.
fn thread_recording(
    reg: &Registry,
    name: &str,
    flags: u32,
    text: &'static str,
) -> Arc<Mutex<Vec<std::thread::ThreadId>>> {
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    let record = ran_on.clone();
    reg.register(def(name, 0, flags, move |call| {
        record.lock().unwrap().push(std::thread::current().id());
        call.complete_text(text).unwrap();
    }))
    .unwrap();
    ran_on
}
