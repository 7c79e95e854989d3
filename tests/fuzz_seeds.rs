//! The seed corpora of the MCP fuzz targets (fuzz/seeds/mount_reader and
//! fuzz/seeds/server_request) through the same entries and properties as
//! the targets (`capstan::mcp::fuzz`), as a plain test: the targets' ASan
//! build is too slow for `make fuzz-smoke`, so `make test` checks their
//! properties here (issue 29).

#![cfg(feature = "mcp")]

use std::path::PathBuf;

fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(target);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).expect("seed"))
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no seeds in {}", dir.display());
    files
}

#[test]
fn the_mount_reader_seeds_keep_the_targets_properties() {
    let seeds = seeds("mount_reader");
    for (name, data) in &seeds {
        capstan::mcp::fuzz::mount_reader(data).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    eprintln!("{} mount_reader seeds checked", seeds.len());
}

#[test]
fn the_server_request_seeds_keep_the_targets_properties() {
    let seeds = seeds("server_request");
    let mut seen = std::collections::BTreeMap::new();
    for (name, data) in &seeds {
        let answer =
            capstan::mcp::fuzz::server_request(data).unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Some(answer) = answer {
            let body = String::from_utf8_lossy(&answer.body).into_owned();
            seen.insert(name.clone(), (answer.status, body));
        }
    }
    eprintln!("{} server_request seeds checked", seeds.len());
    // The seeds reach the paths they are named after (else the fuzzer
    // starts from refusals only).
    let answer = |name: &str| {
        seen.get(name)
            .unwrap_or_else(|| panic!("{name}: no answer"))
    };
    let (status, body) = answer("tools_call");
    assert!(
        *status == 200 && body.contains(r#"{\"x\":"#),
        "{status} {body}"
    );
    assert_eq!(answer("initialize").0, 200);
    assert_eq!(answer("initialize_no_token").0, 401);
    assert_eq!(answer("initialize_wrong_token").0, 401);
    assert_eq!(answer("initialize_lowercase_scheme").0, 200);
    let (status, body) = answer("parse_error");
    assert!(*status == 400 && body.contains("-32700"), "{status} {body}");
    let (status, body) = answer("tools_call_int_name");
    assert!(*status == 200 && body.contains("-32602"), "{status} {body}");
    assert_eq!(answer("duplicate_host").0, 400);
    assert_eq!(answer("evil_origin").0, 403);
    assert_eq!(answer("over_body_cap").0, 413);
}
