//! What the journal's test files share: a fresh file path per process, and a
//! batch run under a run id.
#![allow(dead_code)] // each test file uses what it needs

use std::path::PathBuf;

use capstan::{execute, CallRequest, ExecOptions, Registry, ToolResult};
use serde_json::Value;

/// `name` in a folder of this process's, removed if a run before left it.
pub fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("capstan-journal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// Runs `calls` (id, tool, arguments) as one batch under `run_id`.
pub fn run(reg: &Registry, run_id: &str, calls: &[(&str, &str, Value)]) -> Vec<ToolResult> {
    let calls = calls
        .iter()
        .map(|(id, name, args)| CallRequest::new(*id, *name, args.clone()))
        .collect();
    let opts = ExecOptions {
        run_id: Some(run_id.into()),
        ..ExecOptions::default()
    };
    execute(reg, calls, &opts)
}
