//! The flag families of the C ABI outside `capstan_exec_options` (which
//! `exec::check_flags` checks per function), and their one check: a bit a
//! field does not take is INVALID_ARGUMENT; when the bit is a flag of another
//! family (a tool flag given to an export, say), the message names that flag,
//! else it gives the bits in hex (header: "Flags").

use super::boundary::Fail;
use super::exec::exec_flags;
use super::host_batch::CAPSTAN_TOOL_HOST_RUN;
use super::providers::{CAPSTAN_HISTORY_GEMINI_SIGNATURES, CAPSTAN_HISTORY_REPAIR};
use super::search::{CAPSTAN_SEARCH_REGEX, CAPSTAN_TOOL_DEFERRED};
use super::stream::CAPSTAN_TOOL_WAIT_FOR_RESPONSE;
use super::types::*;

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
            super::mcp_client::CAPSTAN_MCP_INPUT_ELICITATION,
            "CAPSTAN_MCP_INPUT_ELICITATION",
        ),
        (
            super::mcp_client::CAPSTAN_MCP_INPUT_SAMPLING,
            "CAPSTAN_MCP_INPUT_SAMPLING",
        ),
        (
            super::mcp_client::CAPSTAN_MCP_INPUT_ROOTS,
            "CAPSTAN_MCP_INPUT_ROOTS",
        ),
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
