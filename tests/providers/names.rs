//! names.

use super::*;

#[test]
fn name_report_says_which_providers_accept_each_name() {
    let long65 = "a".repeat(65);
    let long129 = "b".repeat(129);
    let names = [
        "get_weather",
        "admin.tools.list",
        "ns:tool",
        "1st-tool",
        long65.as_str(),
        long129.as_str(),
        "wetter für ort",
        "",
    ];
    let report = name_report(&names);
    let verdicts: Vec<(bool, bool, bool, bool)> = report
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["openai"].as_bool().unwrap(),
                r["anthropic"].as_bool().unwrap(),
                r["gemini"].as_bool().unwrap(),
                r["mcp"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            (true, true, true, true),
            (false, false, true, true),
            (false, false, true, false),
            (true, true, false, true),
            (false, false, false, true),
            (false, false, false, false),
            (false, false, false, false),
            (false, false, false, false),
        ]
    );
    assert_exact(
        &report[1],
        &json!({
            "name": "admin.tools.list",
            "openai": false,
            "anthropic": false,
            "gemini": true,
            "mcp": true,
            "problems": [
                "openai: contains '.' (allowed: A-Z a-z 0-9 _ -)",
                "anthropic: contains '.' (allowed: A-Z a-z 0-9 _ -)"
            ]
        }),
    );
    assert_eq!(
        report[3]["problems"],
        json!(["gemini: must start with a letter or an underscore"])
    );
    assert_eq!(
        report[4]["problems"][0],
        "openai: is 65 characters long, more than 64"
    );
    assert_eq!(
        report[6]["problems"][0],
        "openai: contains ' ', 'ü' (allowed: A-Z a-z 0-9 _ -)"
    );
    assert_eq!(report[7]["problems"][0], "openai: is empty");
}

#[test]
fn export_reports_names_the_format_would_refuse() {
    let dotted = tool(
        "admin.tools.list",
        "List",
        json!({"type": "object", "properties": {}}),
    );
    for (fmt, refused) in [
        (Format::OpenAiChat, true),
        (Format::OpenAiResponses, true),
        (Format::Anthropic, true),
        (Format::Gemini, false),
        (Format::Mcp, false),
        (Format::Describe, false),
    ] {
        let export = export_tools(std::slice::from_ref(&dotted), fmt, &no_options());
        assert_eq!(!export.report.is_empty(), refused, "{}", fmt.name());
        if refused {
            assert_eq!(export.report[0].pointer, "");
            assert!(
                export.report[0].message.contains("'.'"),
                "{}",
                export.report[0].message
            );
        }
    }
}

#[test]
fn name_rules_hold_at_the_length_limits_and_name_each_bad_character_once() {
    let long64 = "a".repeat(64);
    let long128 = "a".repeat(128);
    let long129 = "9".repeat(129);
    let report = name_report(&[&long64, &long128, "_private", "a  b:c", &long129]);
    let accepted = |i: usize| -> Vec<bool> {
        ["openai", "anthropic", "gemini", "mcp"]
            .iter()
            .map(|k| report[i][*k].as_bool().unwrap())
            .collect()
    };
    assert_eq!(accepted(0), [true, true, true, true]);
    assert_eq!(accepted(1), [false, false, false, true]);
    assert_eq!(accepted(2), [true, true, true, true]);
    assert_eq!(
        report[3]["problems"],
        json!([
            "openai: contains ' ', ':' (allowed: A-Z a-z 0-9 _ -)",
            "anthropic: contains ' ', ':' (allowed: A-Z a-z 0-9 _ -)",
            "gemini: contains ' ' (allowed: A-Z a-z 0-9 _ . : -)",
            "mcp: contains ' ', ':' (allowed: A-Z a-z 0-9 _ - .)"
        ])
    );
    assert_eq!(
        report[4]["problems"],
        json!([
            "openai: is 129 characters long, more than 64",
            "anthropic: is 129 characters long, more than 64",
            "gemini: is 129 characters long, more than 64",
            "gemini: must start with a letter or an underscore",
            "mcp: is 129 characters long, more than 128"
        ])
    );
}
