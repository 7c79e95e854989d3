//! What a hostile mounted server can make capstan hold (issue 29, row 10):
//! tools/list pages, tools and their fields, tool result blocks and bytes.
//! The server is tests/mcp_server/big.py over stdio.

use crate::helpers::*;

use capstan::RegistryOptions;
use std::time::Instant;

fn mount_big(client: &Registry, args: &[&str]) -> Result<Mount, capstan::Error> {
    Mount::connect(client, script_options("big.py", args))
}

fn refused(args: &[&str]) -> String {
    let client = Registry::default();
    let began = Instant::now();
    let err = match heavy(|| mount_big(&client, args)) {
        Ok(_) => panic!("{args:?} was mounted"),
        Err(e) => e.to_string(),
    };
    eprintln!("{args:?}: refused in {:?}: {err}", began.elapsed());
    assert!(client.names().is_empty(), "{:?}", client.names());
    err
}

#[test]
fn a_tools_list_whose_cursor_repeats_fails_the_mount_naming_the_loop() {
    // Before, rmcp followed the cursor until connect_timeout ran out.
    let err = refused(&["pages-loop"]);
    assert!(
        err.contains("tools/list") && err.contains("repeats an earlier one"),
        "{err}"
    );
}

#[test]
fn endless_tools_list_pages_fail_the_mount_at_the_page_cap() {
    let err = refused(&["pages-endless"]);
    assert!(err.contains("more than 1000 pages"), "{err}");
}

#[test]
fn more_tools_than_the_cap_fail_the_mount_naming_it() {
    let err = refused(&["many-tools", "10001"]);
    assert!(err.contains("more than 10000 tools"), "{err}");
}

#[test]
fn tools_past_the_listing_byte_cap_fail_the_mount_naming_it() {
    // 20 tools of 900 KB schemas (each under the 1 MiB schema bound), 18 MB.
    let err = refused(&["fat-tools"]);
    assert!(err.contains("more than 16777216 bytes"), "{err}");
}

#[test]
fn over_long_names_and_schemas_are_refused_and_descriptions_cut_each_named() {
    let client = Registry::default();
    let mount = mount_big(&client, &["long-fields"]).expect("mount");
    assert_eq!(client.names(), ["s_blocks", "s_wordy"]);
    let info = mount.info();
    let problems = info["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 2, "{problems:?}");
    let name = &problems[0];
    assert!(
        name["problem"]
            .as_str()
            .unwrap()
            .contains("10000 bytes long"),
        "{name}"
    );
    // The name is shown cut, not kept whole.
    assert!(name["remote"].as_str().unwrap().len() < 200, "{name}");
    let schema = &problems[1];
    assert_eq!(schema["remote"], "schema");
    assert!(
        schema["problem"]
            .as_str()
            .unwrap()
            .contains("inputSchema is 2097"),
        "{schema}"
    );
    let warnings = info["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0]["local"], "s_wordy");
    assert!(warnings[0]["warning"]
        .as_str()
        .unwrap()
        .contains("cut to 16384 characters"));
    let wordy = client.get("s_wordy").unwrap();
    assert!(
        wordy
            .meta
            .description
            .ends_with("[truncated: 3616 more characters]"),
        "{}",
        &wordy.meta.description[16_000..]
    );
    mount.unmount();
}

#[test]
fn a_result_past_the_block_cap_keeps_the_first_blocks_and_says_how_many_were_cut() {
    let client = Registry::default();
    let mount = mount_big(&client, &[]).expect("mount");
    let result = call(&client, "s_blocks", json!({"n": 5000}));
    assert_eq!(result.outcome, Outcome::Ok, "{result:?}");
    let lines: Vec<&str> = result.content.lines().collect();
    assert_eq!(lines.len(), 1000);
    assert!(lines[..999].iter().all(|l| *l == "b"));
    assert!(
        lines[999].contains("999 of 5000 content blocks kept"),
        "{}",
        lines[999]
    );
    mount.unmount();
}

#[test]
fn a_result_past_max_result_bytes_is_cut_and_says_so() {
    let client = Registry::new(RegistryOptions {
        max_result_bytes: 1 << 20,
        ..RegistryOptions::default()
    });
    let mount = mount_big(&client, &[]).expect("mount");
    let result = call(&client, "s_blocks", json!({"n": 3, "size": 1 << 20}));
    assert_eq!(result.outcome, Outcome::Ok, "{result:?}");
    let (text, note) = result.content.rsplit_once('\n').unwrap();
    assert_eq!(text.len(), 1 << 20);
    assert!(
        note.contains("1 of 3 content blocks kept") && note.contains("1048576 bytes of text"),
        "{note}"
    );
    mount.unmount();
}

#[test]
fn four_results_of_500_000_blocks_cost_bounded_memory() {
    let client = Registry::default();
    let mount = mount_big(&client, &[]).expect("mount");
    let began = Instant::now();
    let calls = (0..4)
        .map(|n| CallRequest::new(format!("c{n}"), "s_blocks", json!({"n": 500_000})))
        .collect();
    let (results, grew) = peak_growth(|| execute(&client, calls, &ExecOptions::default()));
    let took = began.elapsed();
    eprintln!("4 results of 500,000 blocks (13 MB each): {took:?}, peak RSS grew {grew:?} bytes");
    for result in &results {
        assert_eq!(result.outcome, Outcome::Ok, "{result:?}");
        assert_eq!(result.content.lines().count(), 1000);
    }
    // Before: 1.4 GB. The figure now is tens of MB; 400 MB leaves room for
    // the tests running beside this one.
    if let Some(grew) = grew {
        assert!(grew < 400 << 20, "{grew}");
    }
    mount.unmount();
}

#[test]
fn a_result_in_a_plain_json_http_body_is_bounded_too() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    // rmcp reads a JSON body itself; the call bounds what it keeps.
    let blocks = vec![r#"{"type":"text","text":"h"}"#; 3000].join(",");
    let body: &'static str =
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{{id}},\"result\":{{\"content\":[{blocks}]}}}}")
            .leak();
    let stop = Arc::new(AtomicBool::new(false));
    let url = crate::hostile::bad_once_server((200, body), Arc::clone(&stop));
    let client = Registry::default();
    let mount = mount(&client, &url, vec![]).expect("mount");
    let result = call(&client, "s_echo", json!({}));
    let lines: Vec<&str> = result.content.lines().collect();
    assert_eq!(lines.len(), 1000, "{result:?}");
    assert!(lines[999].contains("999 of 3000 content blocks kept"));
    mount.unmount();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
}
