//! The flag families of the C ABI outside `capstan_exec_options` (which
//! `exec::check_flags` checks per function), and their one check: a bit a
//! field does not take is INVALID_ARGUMENT; when the bit is a flag of another
//! family (a tool flag given to an export, say), the message names that flag,
//! else it gives the bits in hex (header: "Flags").

use super::boundary::Fail;
use super::types::*;

// The flags of the area files' functions are defined here, beside the tables
// that check them, so that this file names no area file and every area file
// may name it (the files of `ffi` depend one way: tests/circles.rs).

/// Tool flag (streams): never start this tool's calls before the whole
/// response arrived, even with `CAPSTAN_EXEC_EARLY_DISPATCH`. For tools with
/// side effects: a response can still fail after one of its calls is
/// complete (a provider error, a dropped connection, the host cancelling),
/// and a host that then asks again would run the side effect twice.
pub const CAPSTAN_TOOL_WAIT_FOR_RESPONSE: u32 = 1u32 << 3;

/// Tool flag: a deferred tool, left out of `capstan_registry_tools_json` in
/// the provider formats (not in `CAPSTAN_FORMAT_DESCRIBE`) until the search
/// tool (`capstan_registry_add_search_tool`) has found it; it is exported
/// from then on, so the model sees it on its next request. It can be called
/// at any time.
pub const CAPSTAN_TOOL_DEFERRED: u32 = 1u32 << 4;

/// The tool is quick and its host runs it on its own thread: in a host batch
/// (`capstan_host_batch_begin`) its checked calls are handed to the host
/// instead of running its callback; everywhere else (execute, submit, turns,
/// streams, MCP) its callback runs as usual. For a managed binding's tools
/// that need no thread of their own (Node, Python asyncio, Java, C#).
pub const CAPSTAN_TOOL_HOST_RUN: u32 = 1u32 << 5;

/// Exec flag (streams, and `capstan_registry_needs_approval`'s preview of
/// them; the other functions refuse it, INVALID_ARGUMENT): start each call the
/// moment its arguments are complete, before the response ends, unless its
/// tool is flagged `CAPSTAN_TOOL_WAIT_FOR_RESPONSE`. Off by default: a
/// response can still fail after a call is complete (see that flag), so only
/// the host knows when running early is safe. `limit` also caps the calls
/// started early and still running (the others start when one ends, or at
/// the finish); with `CAPSTAN_EXEC_SEQUENTIAL` a call starts early only once
/// every earlier call has finished.
pub const CAPSTAN_EXEC_EARLY_DISPATCH: u32 = 1u32 << 4;

/// Exec flag (`capstan_registry_run_turn` only): return the whole turn,
/// the model's own turn first, then the results, as one JSON array of the
/// entries to append: an OpenAI Chat `assistant` message (from
/// `choices[0].message`; `audio` reduced to its `id`) then the `tool`
/// messages; every OpenAI Responses `output` item (`reasoning` items with
/// their `encrypted_content` before the `function_call`s) then the
/// `function_call_output` items; an Anthropic `assistant` message with the
/// response's `content` blocks (`thinking` with its `signature`,
/// `redacted_thinking`, text, `tool_use`) then the `user` message of
/// results; Gemini's `candidates[0].content` (each part's
/// `thoughtSignature` in its position) then the `user` content of results.
/// A response without calls gives the model's turn alone.
///
/// The model's turn is the response's text, byte for byte (numbers as
/// written), except the ids of calls answered under a new id (a repeated, empty or illegal id, see
/// `capstan_registry_run_turn`):
/// those are renamed in it the same way, so the history passes
/// `capstan_format_check_history`. Strings (signatures, encrypted reasoning)
/// come back as they were sent. Without the flag only the results are
/// returned, as before. INVALID_ARGUMENT (nothing runs) for describe and
/// MCP, and for a response given only as a fragment (a bare block, part or
/// `tool_calls` array).
pub const CAPSTAN_EXEC_WHOLE_TURN: u32 = 1u32 << 5;

/// Check flag for `capstan_format_check_history`: also write the repaired
/// history.
pub const CAPSTAN_HISTORY_REPAIR: u32 = 1u32 << 0;

/// Check flag for `capstan_format_check_history` (Gemini): require a
/// `thoughtSignature` on the first `functionCall` part of each model content,
/// as Gemini 3 models do.
pub const CAPSTAN_HISTORY_GEMINI_SIGNATURES: u32 = 1u32 << 1;

/// Search flag: the query is a regular expression (Rust `regex` syntax,
/// linear time; `(?i)` for case-insensitive) matched against each tool's
/// name, description and parameter names and descriptions. A match in the
/// name ranks first. Without it the query is words, ranked by BM25.
pub const CAPSTAN_SEARCH_REGEX: u32 = 1u32 << 0;

/// `capstan_mcp_mount_options.input_methods`: `elicitation/create`.
pub const CAPSTAN_MCP_INPUT_ELICITATION: u32 = 1u32 << 0;

/// `capstan_mcp_mount_options.input_methods`: `sampling/createMessage`.
pub const CAPSTAN_MCP_INPUT_SAMPLING: u32 = 1u32 << 1;

/// `capstan_mcp_mount_options.input_methods`: `roots/list`.
pub const CAPSTAN_MCP_INPUT_ROOTS: u32 = 1u32 << 2;

/// The `CAPSTAN_EXEC_*` flags each function taking `capstan_exec_options`
/// uses; any other flag is INVALID_ARGUMENT naming it (header: "Flags").
pub(crate) mod exec_flags {
    use super::*;

    /// Every flag that shapes how calls run.
    const RUN: u32 = CAPSTAN_EXEC_SEQUENTIAL | CAPSTAN_EXEC_STRICT_NULLS;
    pub(crate) const EXECUTE: u32 = RUN;
    pub(crate) const RUN_TURN: u32 = RUN | CAPSTAN_EXEC_WHOLE_TURN;
    pub(crate) const SUBMIT: u32 =
        RUN | CAPSTAN_EXEC_DELIVER_POLL | CAPSTAN_EXEC_START_INLINE | CAPSTAN_EXEC_START_ON_WAIT;
    pub(crate) const STREAM: u32 = RUN | CAPSTAN_EXEC_EARLY_DISPATCH;
    /// A preview of an execution: it takes the options the host will run
    /// the calls with, whichever function runs them.
    pub(crate) const NEEDS_APPROVAL: u32 = SUBMIT | STREAM | RUN_TURN;

    /// Every flag with its name and the functions that use it.
    pub(crate) const NAMES: &[(u32, &str, &str)] = &[
        (
            CAPSTAN_EXEC_SEQUENTIAL,
            "CAPSTAN_EXEC_SEQUENTIAL",
            "every function running calls",
        ),
        (
            CAPSTAN_EXEC_DELIVER_POLL,
            "CAPSTAN_EXEC_DELIVER_POLL",
            "capstan_batch_submit",
        ),
        (
            CAPSTAN_EXEC_STRICT_NULLS,
            "CAPSTAN_EXEC_STRICT_NULLS",
            "every function running calls",
        ),
        (
            CAPSTAN_EXEC_START_INLINE,
            "CAPSTAN_EXEC_START_INLINE",
            "capstan_batch_submit",
        ),
        (
            CAPSTAN_EXEC_START_ON_WAIT,
            "CAPSTAN_EXEC_START_ON_WAIT",
            "capstan_batch_submit",
        ),
        (
            CAPSTAN_EXEC_EARLY_DISPATCH,
            "CAPSTAN_EXEC_EARLY_DISPATCH",
            "capstan_stream_new",
        ),
        (
            CAPSTAN_EXEC_WHOLE_TURN,
            "CAPSTAN_EXEC_WHOLE_TURN",
            "capstan_registry_run_turn",
        ),
    ];
}

/// One field taking flags, and the flags it takes.
pub(crate) struct Family {
    /// The field as a C host writes it, e.g. `capstan_tool_def.flags`.
    pub(crate) field: &'static str,
    /// The word of the message for bits known nowhere: "unknown tool flags 0x..".
    pub(crate) noun: &'static str,
    /// What the field takes, e.g. `CAPSTAN_TOOL_*`.
    pub(crate) takes: &'static str,
    pub(crate) flags: &'static [(u32, &'static str)],
}

pub(crate) const REGISTRY: Family = Family {
    field: "capstan_registry_options.flags",
    noun: "registry",
    takes: "CAPSTAN_REGISTRY_* flags",
    flags: &[
        (CAPSTAN_REGISTRY_COERCE, "CAPSTAN_REGISTRY_COERCE"),
        (
            CAPSTAN_REGISTRY_STRICT_DEFAULTS,
            "CAPSTAN_REGISTRY_STRICT_DEFAULTS",
        ),
        (
            CAPSTAN_REGISTRY_STRICT_KEYWORDS,
            "CAPSTAN_REGISTRY_STRICT_KEYWORDS",
        ),
    ],
};

pub(crate) const TOOL: Family = Family {
    field: "capstan_tool_def.flags",
    noun: "tool",
    takes: "CAPSTAN_TOOL_* flags",
    flags: &[
        (
            CAPSTAN_TOOL_REQUIRES_APPROVAL,
            "CAPSTAN_TOOL_REQUIRES_APPROVAL",
        ),
        (CAPSTAN_TOOL_SERIAL, "CAPSTAN_TOOL_SERIAL"),
        (CAPSTAN_TOOL_MAIN_THREAD, "CAPSTAN_TOOL_MAIN_THREAD"),
        (
            CAPSTAN_TOOL_WAIT_FOR_RESPONSE,
            "CAPSTAN_TOOL_WAIT_FOR_RESPONSE",
        ),
        (CAPSTAN_TOOL_DEFERRED, "CAPSTAN_TOOL_DEFERRED"),
        (CAPSTAN_TOOL_HOST_RUN, "CAPSTAN_TOOL_HOST_RUN"),
        (CAPSTAN_TOOL_IDEMPOTENT, "CAPSTAN_TOOL_IDEMPOTENT"),
        (CAPSTAN_TOOL_REPLACE, "CAPSTAN_TOOL_REPLACE"),
    ],
};

pub(crate) const EXPORT: Family = Family {
    field: "capstan_export_options.flags",
    noun: "export",
    takes: "CAPSTAN_EXPORT_* flags",
    flags: &[
        (CAPSTAN_EXPORT_STRICT, "CAPSTAN_EXPORT_STRICT"),
        (CAPSTAN_EXPORT_GEMINI_LOWER, "CAPSTAN_EXPORT_GEMINI_LOWER"),
    ],
};

pub(crate) const HISTORY: Family = Family {
    field: "the flags of capstan_format_check_history",
    noun: "history",
    takes: "CAPSTAN_HISTORY_* flags",
    flags: &[
        (CAPSTAN_HISTORY_REPAIR, "CAPSTAN_HISTORY_REPAIR"),
        (
            CAPSTAN_HISTORY_GEMINI_SIGNATURES,
            "CAPSTAN_HISTORY_GEMINI_SIGNATURES",
        ),
    ],
};

pub(crate) const SEARCH: Family = Family {
    field: "capstan_search_options.flags",
    noun: "search",
    takes: "CAPSTAN_SEARCH_* flags",
    flags: &[(CAPSTAN_SEARCH_REGEX, "CAPSTAN_SEARCH_REGEX")],
};

pub(crate) const SEARCH_TOOL: Family = Family {
    field: "capstan_search_tool_options.flags",
    ..SEARCH
};

pub(crate) const MCP_SERVER: Family = Family {
    field: "capstan_mcp_server_options.flags",
    noun: "MCP server",
    takes: "no flag (reserved: must be 0)",
    flags: &[],
};

pub(crate) const MCP_INPUT: Family = Family {
    field: "capstan_mcp_mount_options.input_methods",
    noun: "MCP input method",
    takes: "CAPSTAN_MCP_INPUT_* flags",
    flags: &[
        (
            CAPSTAN_MCP_INPUT_ELICITATION,
            "CAPSTAN_MCP_INPUT_ELICITATION",
        ),
        (CAPSTAN_MCP_INPUT_SAMPLING, "CAPSTAN_MCP_INPUT_SAMPLING"),
        (CAPSTAN_MCP_INPUT_ROOTS, "CAPSTAN_MCP_INPUT_ROOTS"),
    ],
};

/// Every family but the exec options' (read from `exec_flags::NAMES`).
const FAMILIES: &[&Family] = &[
    &REGISTRY,
    &TOOL,
    &EXPORT,
    &HISTORY,
    &SEARCH,
    &SEARCH_TOOL,
    &MCP_SERVER,
    &MCP_INPUT,
];

/// The field of the `CAPSTAN_EXEC_*` flags.
const EXEC_FIELD: &str = "capstan_exec_options.flags";

/// The flags of other fields whose value is `bit`: (name, field).
fn named_elsewhere(bit: u32, family: &Family) -> Vec<(&'static str, &'static str)> {
    let mut found: Vec<(&'static str, &'static str)> = Vec::new();
    for other in FAMILIES {
        // The two search fields take the same flags: one is not "another".
        if other.takes == family.takes {
            continue;
        }
        for (value, name) in other.flags {
            if *value == bit && !found.iter().any(|(n, _)| n == name) {
                found.push((name, other.field));
            }
        }
    }
    for (value, name, _) in exec_flags::NAMES {
        if *value == bit {
            found.push((name, EXEC_FIELD));
        }
    }
    found
}

/// Checks `flags` against what `family` takes. The lowest bit it does not
/// take that is a flag of another field is named, with that field; bits
/// known nowhere are INVALID_ARGUMENT as "unknown <noun> flags 0x..".
pub(crate) fn check(flags: u32, family: &Family) -> Result<(), Fail> {
    let known = family
        .flags
        .iter()
        .fold(0u32, |all, (value, _)| all | value);
    let extra = flags & !known;
    if extra == 0 {
        return Ok(());
    }
    let mut bits = extra;
    while bits != 0 {
        let bit = bits & bits.wrapping_neg();
        bits &= !bit;
        let names = named_elsewhere(bit, family);
        if names.is_empty() {
            continue;
        }
        let names: Vec<String> = names
            .iter()
            .map(|(name, field)| format!("{name} (for {field})"))
            .collect();
        return Err(Fail::BadArgument(format!(
            "{} 0x{bit:x} is {}, which does not apply here: {} takes {}",
            family.field,
            names.join(" or "),
            family.field,
            family.takes,
        )));
    }
    Err(Fail::BadArgument(format!(
        "unknown {} flags 0x{extra:x} in {} (it takes {})",
        family.noun, family.field, family.takes
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(flags: u32, family: &Family) -> String {
        match check(flags, family) {
            Err(Fail::BadArgument(m)) => m,
            Err(_) => panic!("not BadArgument"),
            Ok(()) => String::new(),
        }
    }

    #[test]
    fn the_flags_of_a_family_pass() {
        for family in FAMILIES {
            let all = family.flags.iter().fold(0, |a, (v, _)| a | v);
            assert!(check(all, family).is_ok(), "{}", family.field);
            assert!(check(0, family).is_ok(), "{}", family.field);
        }
    }

    #[test]
    fn a_flag_of_another_family_is_named_with_its_field() {
        let m = message(CAPSTAN_TOOL_DEFERRED, &EXPORT);
        assert!(
            m.contains("CAPSTAN_TOOL_DEFERRED (for capstan_tool_def.flags)"),
            "{m}"
        );
        // The exec flag of that value too: the bits are the same.
        assert!(
            m.contains("CAPSTAN_EXEC_EARLY_DISPATCH (for capstan_exec_options.flags)"),
            "{m}"
        );
        assert!(m.contains("takes CAPSTAN_EXPORT_* flags"), "{m}");
        let m = message(CAPSTAN_TOOL_WAIT_FOR_RESPONSE, &REGISTRY);
        assert!(m.contains("CAPSTAN_TOOL_WAIT_FOR_RESPONSE"), "{m}");
        assert!(m.contains("CAPSTAN_EXEC_START_INLINE"), "{m}");
        assert!(
            m.starts_with("capstan_registry_options.flags 0x8 is"),
            "{m}"
        );
        let m = message(CAPSTAN_EXEC_ONLY_BIT, &TOOL);
        assert!(
            m.contains("CAPSTAN_EXEC_START_ON_WAIT (for capstan_exec_options.flags)"),
            "{m}"
        );
        assert!(
            !m.contains(" or "),
            "only the exec flag has that value: {m}"
        );
        let m = message(1, &MCP_SERVER);
        assert!(m.contains("CAPSTAN_REGISTRY_COERCE"), "{m}");
        assert!(m.contains("takes no flag"), "{m}");
    }

    /// `CAPSTAN_EXEC_START_ON_WAIT`'s value, which no other family has
    /// (`CAPSTAN_EXEC_WHOLE_TURN`'s is `CAPSTAN_TOOL_HOST_RUN`'s too).
    const CAPSTAN_EXEC_ONLY_BIT: u32 = CAPSTAN_EXEC_START_ON_WAIT;

    #[test]
    fn the_lowest_named_bit_is_reported_before_unknown_ones() {
        let m = message((1 << 9) | CAPSTAN_HISTORY_GEMINI_SIGNATURES, &SEARCH);
        assert!(m.contains("CAPSTAN_HISTORY_GEMINI_SIGNATURES"), "{m}");
        assert!(m.contains("CAPSTAN_REGISTRY_STRICT_DEFAULTS"), "{m}");
        // The other search field takes the same flags: not "another family".
        let m = message(CAPSTAN_SEARCH_REGEX, &SEARCH_TOOL);
        assert!(m.is_empty(), "{m}");
    }

    #[test]
    fn bits_known_nowhere_stay_hex() {
        assert_eq!(
            message(1 << 20, &SEARCH),
            "unknown search flags 0x100000 in capstan_search_options.flags (it takes CAPSTAN_SEARCH_* flags)"
        );
        let m = message((1 << 12) | (1 << 31), &TOOL);
        assert!(m.starts_with("unknown tool flags 0x80001000"), "{m}");
    }

    #[test]
    fn every_flag_of_the_header_is_in_a_family() {
        // A new flag constant must join its family here, or a host passing
        // it to the wrong field gets "unknown" instead of its name.
        let header = include_str!("../../include/capstan.h");
        let mut listed: Vec<&str> = FAMILIES
            .iter()
            .flat_map(|f| f.flags.iter().map(|(_, n)| *n))
            .chain(exec_flags::NAMES.iter().map(|(_, n, _)| *n))
            .collect();
        listed.sort_unstable();
        listed.dedup();
        for line in header.lines() {
            let Some(rest) = line.strip_prefix("#define ") else {
                continue;
            };
            let mut words = rest.split_whitespace();
            let (Some(name), Some(value)) = (words.next(), words.next()) else {
                continue;
            };
            if value != "(1u" || name.starts_with("CAPSTAN_FEATURE_") {
                continue;
            }
            assert!(listed.contains(&name), "{name} is in no flag family");
        }
    }
}
