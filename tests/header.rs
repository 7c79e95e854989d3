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
    let mut in_package = false;
    let mut version = None;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package && line.starts_with("version") {
            version = line.split('"').nth(1).map(str::to_owned);
        }
    }
    let version = version.expect("Cargo.toml has [package] version");
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
