// size: one test per header rule, each short, sharing one parse of the
// header; split, each file would re-parse it.
//! include/capstan.h as a host's compiler sees it: only capstan names at file
//! scope, unsigned flags, an initializer for every versioned struct, and
//! version macros equal to Cargo.toml's version and `capstan_version_string()`.
//! (`make header-cxx` compiles it as C++11 and C++17.)

use std::collections::BTreeSet;
use std::ffi::CStr;
use std::path::PathBuf;

fn read(path: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn header() -> String {
    read("include/capstan.h")
}

/// Words C and <stdbool.h>/<stddef.h>/<stdint.h> own, which the header may use.
const C_WORDS: &[&str] = &[
    "typedef",
    "struct",
    "enum",
    "union",
    "const",
    "volatile",
    "extern",
    "static",
    "inline",
    "void",
    "char",
    "short",
    "int",
    "long",
    "float",
    "double",
    "signed",
    "unsigned",
    "bool",
    "_Bool",
    "size_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uintptr_t",
    "intptr_t",
];

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |i| &after[i + 2..]);
            out.push(' ');
        } else if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |i| &after[i..]);
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Names the header declares at file scope that are not capstan's: macro
/// names, and every identifier outside braces and parentheses (typedef
/// names, struct tags, function names) or right after `(*` (function
/// pointer typedefs) that is not a C word.
fn foreign_names(text: &str) -> BTreeSet<String> {
    let text = strip_comments(text);
    let mut bad = BTreeSet::new();
    let mut check = |name: &str| {
        let ours = name.starts_with("capstan_") || name.starts_with("CAPSTAN_");
        if !(ours || C_WORDS.contains(&name)) {
            bad.insert(name.to_owned());
        }
    };
    let mut code = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(directive) = trimmed.strip_prefix('#') {
            let mut words = directive.split(|c: char| !(c.is_alphanumeric() || c == '_'));
            let words: Vec<&str> = words.by_ref().filter(|w| !w.is_empty()).collect();
            if words.first() == Some(&"define") {
                if let Some(name) = words.get(1) {
                    check(name);
                }
            }
            continue;
        }
        code.push_str(line);
        code.push('\n');
    }
    // Tokens: identifiers, string literals, single punctuation characters.
    let mut tokens: Vec<String> = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(chars[start..i].iter().collect());
        } else if c == '"' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            tokens.push(chars[start..i.min(chars.len())].iter().collect());
        } else {
            if !c.is_whitespace() {
                tokens.push(c.to_string());
            }
            i += 1;
        }
    }
    let (mut braces, mut parens) = (0usize, 0usize);
    let mut extern_blocks = 0usize;
    for (k, token) in tokens.iter().enumerate() {
        match token.as_str() {
            "{" if k >= 1 && tokens[k - 1] == "\"C\"" && braces == 0 => extern_blocks += 1,
            "{" => braces += 1,
            "}" if braces == 0 && extern_blocks > 0 => extern_blocks -= 1,
            "}" => braces = braces.saturating_sub(1),
            "(" => parens += 1,
            ")" => parens = parens.saturating_sub(1),
            t if t.starts_with(|c: char| c.is_alphabetic() || c == '_') && braces == 0 => {
                let pointer_typedef =
                    parens == 1 && k >= 2 && tokens[k - 1] == "*" && tokens[k - 2] == "(";
                if parens == 0 || pointer_typedef {
                    check(t);
                }
            }
            _ => {}
        }
    }
    bad
}

#[test]
fn the_name_check_finds_an_unprefixed_declaration() {
    let found = foreign_names(
        "#define LIMIT 3\ntypedef struct Format Format;\nint helper(int capstan_x);\n\
         typedef void (*callback_fn)(void *user_data);\n\
         typedef struct capstan_ok { uint32_t field; } capstan_ok;\n",
    );
    let expected: BTreeSet<String> = ["LIMIT", "Format", "helper", "callback_fn"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn header_declares_only_capstan_names_at_file_scope() {
    let found = foreign_names(&header());
    assert!(
        found.is_empty(),
        "include/capstan.h declares names without the capstan_/CAPSTAN_ prefix: {found:?}"
    );
}

/// The values of `uint32_t` option fields that are not flags (issue 48):
/// unsigned too, so that comparing them with the field never warns.
#[test]
fn option_value_macros_are_unsigned() {
    let header = header();
    let values: Vec<&str> = header
        .lines()
        .filter(|l| l.starts_with("#define CAPSTAN_EXPORT_DEFERRED_"))
        .collect();
    assert_eq!(values.len(), 2, "{values:?}");
    for line in values {
        assert!(line.ends_with('u'), "a value that is not unsigned: {line}");
    }
}

#[test]
fn flag_macros_are_unsigned() {
    let header = header();
    let shifts: Vec<&str> = header
        .lines()
        .filter(|l| l.starts_with("#define") && l.contains("<<"))
        .collect();
    assert!(shifts.len() >= 8, "{shifts:?}");
    for line in shifts {
        assert!(
            line.contains("(1u << "),
            "a flag that is not unsigned: {line}"
        );
    }
}

/// `(name, field count)` of every struct whose first field is `struct_size`.
fn versioned_structs(header: &str) -> Vec<(String, usize)> {
    let text = strip_comments(header);
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("typedef struct capstan_") {
        rest = &rest[i + "typedef struct ".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let after = rest[name.len()..].trim_start();
        let Some(body) = after.strip_prefix('{') else {
            continue; // opaque
        };
        let body = &body[..body.find('}').unwrap()];
        let fields: Vec<&str> = body
            .split(';')
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .collect();
        if fields.first().is_some_and(|f| f.ends_with("struct_size")) {
            out.push((name, fields.len()));
        }
    }
    out
}

#[test]
fn every_versioned_struct_has_an_init_macro_that_sets_its_size_and_zeroes_the_rest() {
    let header = header();
    let structs = versioned_structs(&header);
    let names: Vec<&str> = structs.iter().map(|(n, _)| n.as_str()).collect();
    for expected in [
        "capstan_tool_def",
        "capstan_registry_options",
        "capstan_exec_options",
        "capstan_export_options",
        "capstan_mcp_mount_options",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} not found in {names:?}"
        );
    }
    for (name, fields) in structs {
        let macro_name = format!("#define {}_INIT ", name.to_uppercase());
        let line = header
            .lines()
            .find(|l| l.starts_with(&macro_name))
            .unwrap_or_else(|| panic!("no {macro_name}for {name}"));
        let init = line[macro_name.len()..].trim();
        let expected_start = format!("{{(uint32_t)sizeof({name}), ");
        assert!(init.starts_with(&expected_start), "{line}");
        let values: Vec<&str> = init
            .trim_start_matches('{')
            .trim_end_matches('}')
            .split(',')
            .map(str::trim)
            .collect();
        assert_eq!(
            values.len(),
            fields,
            "{macro_name}must give each of the {fields} fields of {name} a value"
        );
        assert!(
            values[1..].iter().all(|v| *v == "0" || *v == "NULL"),
            "{line}"
        );
    }
}

fn header_number(header: &str, name: &str) -> u32 {
    let prefix = format!("#define {name} ");
    let line = header
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no {name} in include/capstan.h"));
    line[prefix.len()..].trim().parse().unwrap()
}

#[test]
fn version_macros_equal_cargo_toml_and_capstan_version() {
    let manifest = read("Cargo.toml");
    let mut section = "";
    let mut version = None;
    let mut workspace_version = None;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line;
        } else if line.starts_with("version =") {
            let v = line.split('"').nth(1).map(str::to_owned);
            match section {
                "[package]" => version = v,
                "[workspace.package]" => workspace_version = v,
                _ => {}
            }
        }
    }
    let version = version.expect("Cargo.toml has [package] version");
    assert_eq!(
        workspace_version.as_deref(),
        Some(version.as_str()),
        "[workspace.package] version (the crates') vs [package] version"
    );
    let header = header();
    let numbers = [
        header_number(&header, "CAPSTAN_VERSION_MAJOR"),
        header_number(&header, "CAPSTAN_VERSION_MINOR"),
        header_number(&header, "CAPSTAN_VERSION_PATCH"),
    ];
    let from_header = format!("{}.{}.{}", numbers[0], numbers[1], numbers[2]);
    assert_eq!(from_header, version, "header version vs Cargo.toml");
    let library = unsafe { CStr::from_ptr(capstan::ffi::capstan_version_string()) };
    assert_eq!(
        library.to_str().unwrap(),
        version,
        "capstan_version_string() vs Cargo.toml"
    );
    assert!(
        header.contains(&format!("#define CAPSTAN_VERSION_STRING \"{version}\"")),
        "CAPSTAN_VERSION_STRING in cbindgen.toml vs Cargo.toml"
    );
}

/// The objects of the naming rule (issue #25): the opaque types, then the
/// module nouns for functions without an object. Longest first, so that
/// `mcp_server` is found before a shorter prefix would be.
const OBJECTS: &[&str] = &[
    "journal_answer",
    "mcp_server",
    "host_batch",
    "mcp_mount",
    "registry",
    "approval",
    "journal",
    "stream",
    "batch",
    "call",
    "runtime",
    "features",
    "version",
    "format",
    "status",
    "string",
    "error",
    "name",
];

/// Functions the rule does not cover yet, each with why (none since 0.4:
/// `capstan_pool_configure` became `capstan_runtime_configure`).
const NOT_YET: &[&str] = &[];

/// Every function the header declares: a `capstan_` identifier followed by
/// `(`, at file scope, that is not a function pointer typedef (`(*name)(`).
fn declared_functions(header: &str) -> Vec<String> {
    let text = strip_comments(header);
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let bytes = code.as_bytes();
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'(' {
            depth += 1;
        } else if c == b')' {
            depth = depth.saturating_sub(1);
        }
        if depth == 0 && code[i..].starts_with("capstan_") {
            let boundary =
                i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
            let end = i + code[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(code.len() - i);
            if boundary && code[end..].trim_start().starts_with('(') {
                names.push(code[i..end].to_owned());
            }
            i = end;
            continue;
        }
        i += 1;
    }
    names
}

/// Why `name` breaks the rule `capstan_<object>_<verb>`, or None. A
/// versioned struct's initializer `capstan_<struct>_init` also passes.
fn naming_problem(name: &str, structs: &[String]) -> Option<String> {
    if structs.iter().any(|s| name == format!("{s}_init")) {
        return None;
    }
    let Some(rest) = name.strip_prefix("capstan_") else {
        return Some("does not start with capstan_".into());
    };
    let Some(object) = OBJECTS.iter().find(|o| {
        rest.strip_prefix(*o)
            .and_then(|r| r.strip_prefix('_'))
            .is_some_and(|verb| !verb.is_empty())
    }) else {
        return Some(format!(
            "is not capstan_<object>_<verb> with an object of {OBJECTS:?}"
        ));
    };
    let verb = &rest[object.len() + 1..];
    if !verb.split('_').all(|w| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    }) {
        return Some(format!("verb {verb:?} is not lower_snake_case"));
    }
    // One suffix for JSON outputs: `_json`, never `_export`, `_report`, `_info`.
    for old in ["export", "report", "info"] {
        if verb == old || verb.ends_with(&format!("_{old}")) {
            return Some(format!("a JSON output ends in _json, not _{old}"));
        }
    }
    None
}

#[test]
fn the_naming_check_refuses_names_that_break_the_rule() {
    let structs = vec!["capstan_exec_options".to_owned()];
    for bad in [
        "capstan_execute",
        "capstan_tools_json",
        "capstan_registry",
        "capstan_registry_",
        "capstan_mcp_mount_info",
        "capstan_registry_tools_export",
        "capstan_registry_name_report",
        "capstan_pool_configure",
        "capstan_registry_Add",
        "capstan_exec_init",
    ] {
        assert!(
            naming_problem(bad, &structs).is_some(),
            "{bad} passed the naming check"
        );
    }
    for good in [
        "capstan_registry_execute",
        "capstan_mcp_mount_info_json",
        "capstan_call_id",
        "capstan_exec_options_init",
        "capstan_features_mask",
    ] {
        assert_eq!(naming_problem(good, &structs), None, "{good}");
    }
    let found = declared_functions(
        "typedef void (*capstan_result_fn)(void *user_data);\n\
         #define CAPSTAN_X(a) (a)\n\
         capstan_status capstan_registry_new(const capstan_registry_options *opts,\n\
                                             capstan_registry **out);\n\
         const char *capstan_version_string(void);\n",
    );
    assert_eq!(found, ["capstan_registry_new", "capstan_version_string"]);
}

#[test]
fn every_function_is_capstan_object_verb() {
    let header = header();
    let structs: Vec<String> = versioned_structs(&header)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let functions = declared_functions(&header);
    assert!(functions.len() >= 50, "{functions:?}");
    let problems: Vec<String> = functions
        .iter()
        .filter(|f| !NOT_YET.contains(&f.as_str()))
        .filter_map(|f| naming_problem(f, &structs).map(|p| format!("{f} {p}")))
        .collect();
    assert!(
        problems.is_empty(),
        "functions of include/capstan.h break the naming rule (CHANGELOG.md, 0.4; \
         header: \"Naming\"):\n{}",
        problems.join("\n")
    );
    // Every versioned struct has its init function, for hosts without macros.
    for s in &structs {
        let init = format!("{s}_init");
        assert!(functions.contains(&init), "no {init}() for {s}");
    }
    // No function is declared twice, and the exceptions still exist.
    let unique: BTreeSet<&String> = functions.iter().collect();
    assert_eq!(unique.len(), functions.len(), "a function declared twice");
    for n in NOT_YET {
        assert!(
            functions.iter().any(|f| f == n),
            "{n} is gone: remove it from NOT_YET"
        );
    }
}

#[test]
fn version_number_is_major_minor_patch_in_one_number() {
    let header = header();
    let [major, minor, patch] = [
        "CAPSTAN_VERSION_MAJOR",
        "CAPSTAN_VERSION_MINOR",
        "CAPSTAN_VERSION_PATCH",
    ]
    .map(|n| header_number(&header, n));
    let expected = major * 1_000_000 + minor * 1_000 + patch;
    assert_eq!(header_number(&header, "CAPSTAN_VERSION_NUMBER"), expected);
    assert_eq!(capstan::ffi::capstan_version_number(), expected);
}

#[test]
fn the_feature_mask_matches_the_build() {
    use capstan::ffi::*;
    let mask = capstan_features_mask();
    let mcp = CAPSTAN_FEATURE_MCP_SERVER | CAPSTAN_FEATURE_MCP_MOUNT | CAPSTAN_FEATURE_MCP_HTTP;
    if cfg!(feature = "mcp") {
        assert_eq!(mask & mcp, mcp, "{mask:#x}");
    } else {
        assert_eq!(mask & mcp, 0, "{mask:#x}");
    }
    assert_ne!(mask & CAPSTAN_FEATURE_STREAM, 0, "{mask:#x}");
}

/// Each `capstan_<struct>_init` writes what its `_INIT` macro gives: the
/// size, then zero bytes, over whatever the struct held before.
#[test]
fn init_functions_fill_struct_size_and_zero_everything_else() {
    use capstan::ffi::*;
    unsafe fn check<T>(init: unsafe extern "C" fn(*mut T) -> capstan_status) {
        let size = std::mem::size_of::<T>();
        // u64 words: aligned for every field of these structs.
        let mut words = vec![0xA5A5_A5A5_A5A5_A5A5u64; size.div_ceil(8)];
        assert_eq!(init(words.as_mut_ptr().cast::<T>()), CAPSTAN_OK);
        let buf: Vec<u8> = words
            .iter()
            .flat_map(|w| w.to_ne_bytes())
            .take(size)
            .collect();
        assert_eq!(
            u32::from_ne_bytes(buf[..4].try_into().unwrap()) as usize,
            size
        );
        assert!(
            buf[4..].iter().all(|&b| b == 0),
            "{}",
            std::any::type_name::<T>()
        );
        assert_eq!(init(std::ptr::null_mut()), CAPSTAN_ERR_NULL_PARAMETER);
    }
    unsafe {
        check(capstan_tool_def_init);
        check(capstan_registry_options_init);
        check(capstan_exec_options_init);
        check(capstan_export_options_init);
        check(capstan_stream_sink_init);
        check(capstan_mcp_server_options_init);
        check(capstan_mcp_mount_options_init);
        check(capstan_search_options_init);
        check(capstan_search_tool_options_init);
    }
}

/// The `Contents` block's section titles, in order.
fn contents(header: &str) -> Vec<String> {
    let start = header.find(" * Contents\n").expect("a Contents block");
    header[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with("*/"))
        .map(|l| l.trim_start_matches(" *").trim().to_owned())
        .collect()
}

/// The sections as they open in the header (`N. Title` after a banner), in order.
fn section_banners(header: &str) -> Vec<String> {
    let lines: Vec<&str> = header.lines().collect();
    lines
        .windows(2)
        .filter(|w| w[0].starts_with("/* ====="))
        .map(|w| w[1].trim_start_matches(" *").trim().to_owned())
        .collect()
}

#[test]
fn the_header_reads_as_the_sections_its_contents_list() {
    // Issue #25: cbindgen alone emits items in source order; the header is
    // ordered by tools/header_sections.py into sections, each listed.
    let header = header();
    let listed = contents(&header);
    let banners = section_banners(&header);
    assert!(listed.len() >= 10, "{listed:?}");
    assert_eq!(listed, banners, "Contents and the section banners differ");
    for (i, title) in listed.iter().enumerate() {
        assert!(
            title.starts_with(&format!("{}. ", i + 1)),
            "section {} is numbered {title:?}",
            i + 1
        );
    }
    // Every function is declared after the first section opened.
    let first = header.find("/* =====").unwrap();
    for f in declared_functions(&header) {
        assert!(
            declared_at(&header, &f) > first,
            "{f} is declared before the first section"
        );
    }
    // A registry's constructor is in the registry's section, before its tools.
    let registry = header.find("\n * 6. Registry").unwrap();
    let tools = header.find("\n * 7. Tools").unwrap();
    let new = declared_at(&header, "capstan_registry_new");
    assert!(
        registry < new && new < tools,
        "capstan_registry_new is outside 6. Registry"
    );
}

/// Where function `f` is declared: the offset of the first line, outside
/// comments, holding `f(`.
fn declared_at(header: &str, f: &str) -> usize {
    let mut at = 0;
    for line in header.split_inclusive('\n') {
        let code = line.trim_start();
        let comment = code.starts_with('*') || code.starts_with("/*") || code.starts_with("//");
        if !comment && line.contains(&format!("{f}(")) {
            return at;
        }
        at += line.len();
    }
    panic!("{f} is not declared")
}

#[test]
fn flag_bits_of_a_family_are_together_and_in_bit_order() {
    // (family, bit) of every `#define CAPSTAN_<FAMILY>_<NAME> (1u << N)`, in
    // header order: a family's flags follow each other, bits ascending.
    let header = header();
    let mut flags: Vec<(String, u32, String)> = Vec::new();
    for line in header.lines() {
        let Some(rest) = line.strip_prefix("#define CAPSTAN_") else {
            continue;
        };
        let Some((name, value)) = rest.split_once(" (1u << ") else {
            continue;
        };
        let family = name.split('_').next().unwrap_or_default().to_owned();
        let bit: u32 = value.trim_end_matches(')').parse().expect("a bit number");
        flags.push((family, bit, name.to_owned()));
    }
    assert!(flags.len() >= 20, "{flags:?}");
    let mut done: BTreeSet<String> = BTreeSet::new();
    for pair in flags.windows(2) {
        let ((f0, b0, n0), (f1, b1, n1)) = (&pair[0], &pair[1]);
        if f0 == f1 {
            assert!(
                b1 > b0,
                "CAPSTAN_{n1} (bit {b1}) follows CAPSTAN_{n0} (bit {b0})"
            );
        } else {
            done.insert(f0.clone());
            assert!(
                !done.contains(f1),
                "the CAPSTAN_{f1}_* flags are split: CAPSTAN_{n1} comes after CAPSTAN_{f0}_*"
            );
        }
    }
}

#[test]
fn the_duplicates_removed_in_0_4_stay_removed() {
    // Issue #25, "No duplicates": each of these did a job another function
    // does (CHANGELOG.md, 0.4): capstan_registry_tools_json with no options,
    // capstan_batch_wait(b, 0), the "connected" of capstan_mcp_mount_info_json.
    let functions = declared_functions(&header());
    for gone in [
        "capstan_tools_json",
        "capstan_tools_export",
        "capstan_batch_done",
        "capstan_mcp_mount_connected",
    ] {
        assert!(
            !functions.iter().any(|f| f == gone),
            "{gone} is back: one function per job"
        );
    }
    for kept in [
        "capstan_registry_tools_json",
        "capstan_batch_wait",
        "capstan_mcp_mount_info_json",
    ] {
        assert!(functions.iter().any(|f| f == kept), "{kept} is gone");
    }
}

#[test]
fn the_abi_guard_is_part_of_make_test() {
    // Issue #25, item 9: `make abi-check` compares the library and header
    // with the recorded ABI (abi/); it only guards if `make test` runs it.
    let makefile = read("Makefile");
    let suites = makefile
        .lines()
        .skip_while(|l| !l.starts_with("TEST_SUITES :="))
        .take_while(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        suites.split_whitespace().any(|w| w == "abi-check"),
        "abi-check is not in TEST_SUITES: {suites}"
    );
    // The baseline it compares with is committed.
    for recorded in ["abi/libcapstan.abi", "abi/capstan.h.abi"] {
        assert!(
            read(recorded).contains("capstan_registry_new"),
            "{recorded} does not record the ABI"
        );
    }
}

#[test]
fn every_opaque_type_is_an_object_and_is_made_by_a_function_of_its_name() {
    // Issue #25: the type capstan_mcp_client was made by capstan_mcp_mount.
    let header = header();
    let opaque: Vec<String> = header
        .lines()
        .filter_map(|l| l.strip_prefix("typedef struct capstan_"))
        .filter_map(|l| l.strip_suffix(';'))
        .filter_map(|l| {
            let (tag, name) = l.split_once(' ')?;
            (name == format!("capstan_{tag}")).then(|| tag.to_owned())
        })
        .collect();
    assert!(opaque.len() >= 7, "{opaque:?}");
    for tag in &opaque {
        assert!(
            OBJECTS.contains(&tag.as_str()),
            "opaque type capstan_{tag} is not an object of the naming rule"
        );
    }
    // A function writing a new object through `struct capstan_X **` is capstan_X_*.
    let code = strip_comments(&header);
    let mut makers = 0;
    for f in declared_functions(&header) {
        let start = code.find(&format!("{f}(")).unwrap();
        let end = start + code[start..].find(';').unwrap();
        let decl = &code[start..end];
        for tag in &opaque {
            if decl.contains(&format!("struct capstan_{tag} **")) {
                makers += 1;
                assert!(
                    f.starts_with(&format!("capstan_{tag}_")),
                    "{f} makes a capstan_{tag}: name it capstan_{tag}_<verb>"
                );
            }
        }
    }
    assert!(makers >= 5, "{makers} constructors found");
}

/// The 0.3 names that 0.4 renamed or removed (CHANGELOG.md, 0.4).
const OLD_NAMES: &[&str] = &[
    "capstan_check_call",
    "capstan_execute",
    "capstan_submit",
    "capstan_batch_done",
    "capstan_needs_approval",
    // Now the mount's type: only the 0.3 function, called, is old.
    "capstan_mcp_mount(",
    "capstan_mcp_unmount",
    "capstan_mcp_mount_info",
    "capstan_mcp_mount_connected",
    "capstan_mcp_serve_stdio",
    "capstan_free",
    "capstan_last_error",
    "capstan_version",
    "capstan_stats_json",
    "capstan_tools_json",
    "capstan_tools_export",
    "capstan_name_report",
    "capstan_parse_calls",
    "capstan_format_results",
    "capstan_run_turn",
    "capstan_check_name",
    "capstan_register",
    "capstan_unregister",
    "capstan_pool_configure",
    "capstan_set_thread_hooks",
    "capstan_abandon_thread_hooks",
    "capstan_mcp_client",
];

/// Where `name` occurs in `text` as a whole identifier (a `name` ending in
/// `(`: as a call).
fn mentions(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        !before.is_some_and(ident) && (name.ends_with('(') || !after.is_some_and(ident))
    })
}

/// The source and documentation files under `dir` (build output and
/// installed dependencies skipped).
fn sources(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    const SKIP: &[&str] = &[
        "target",
        "build",
        "node_modules",
        ".build",
        ".venv",
        "__pycache__",
        ".npm-cache",
    ];
    const KINDS: &[&str] = &[
        "c", "h", "cpp", "hpp", "go", "py", "swift", "md", "rs", "cjs", "mjs", "js", "ts", "java",
    ];
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !SKIP.contains(&name.as_str()) && !name.starts_with('.') {
                sources(&path, out);
            }
        } else if path
            .extension()
            .is_some_and(|e| KINDS.contains(&e.to_string_lossy().as_ref()))
        {
            out.push(path);
        }
    }
}

#[test]
fn no_0_3_name_is_left_in_docs_examples_bindings_or_tests() {
    // Issue #25, item 10: everything was migrated, and old names are not
    // kept (0.x); the CHANGELOG's table and this list are where they live.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    for dir in [
        "docs", "examples", "bindings", "tests", "benches", "bench", "fuzz", "src", "crates",
    ] {
        sources(&root.join(dir), &mut files);
    }
    let this = root.join("tests/header.rs");
    // A record of what happened then keeps the names of then.
    let history = |f: &PathBuf| f.ends_with("fuzz/FINDINGS.md");
    let mut found = Vec::new();
    for file in files.iter().filter(|f| **f != this && !history(f)) {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for old in OLD_NAMES {
            if mentions(&text, old) {
                found.push(format!(
                    "{}: {old}",
                    file.strip_prefix(&root).unwrap_or(file).display()
                ));
            }
        }
    }
    assert!(
        found.len() < 1000 && files.len() > 50,
        "{} files",
        files.len()
    );
    assert!(
        found.is_empty(),
        "0.3 names left (CHANGELOG.md, 0.4 has the new ones):\n{}",
        found.join("\n")
    );
    assert!(mentions("x capstan_free(p)", "capstan_free"));
    assert!(!mentions(
        "capstan_string_free(p) capstan_freed",
        "capstan_free"
    ));
    assert!(mentions(
        "capstan_mcp_mount(reg, &o, &m)",
        "capstan_mcp_mount("
    ));
    assert!(!mentions("capstan_mcp_mount *m", "capstan_mcp_mount("));
}
