//! No circles of imports between the modules of one directory, in any crate
//! of the workspace (issue #48: "files depend in one direction"). The
//! pictures of docs/architecture.md order the top-level modules; this test
//! covers every directory below them too (`src/ffi`, the MCP crate's
//! `client/`, `server/`, ...), where no picture is drawn: two sibling modules
//! that reach each other, directly or round a longer circle, fail it with
//! the circle and the paths that close it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The source roots: the `capstan` package and each crate of the workspace.
const ROOTS: &[&str] = &[
    "src",
    "crates/core/src",
    "crates/formats/src",
    "crates/mcp/src",
    "crates/journal/src",
];

type Module = Vec<String>;

/// One file's module path below its crate root (`ffi/mod.rs` -> `[ffi]`).
fn module_of(root: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(root).unwrap().with_extension("");
    let mut parts: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The text without `//` comments: a path in prose is no dependency.
fn code(text: &str) -> String {
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// Every path starting with `crate::`, `super::` or `self::` in `text`, as
/// written: the leading segments, then each name it ends in (one, or each
/// first name of a `{a, b::c}` group).
fn paths(text: &str) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for (start, _) in text.match_indices("::") {
        // The word before this `::` begins a path only if nothing path-like precedes it.
        let head_start = text[..start]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let head = &text[head_start..start];
        if !matches!(head, "crate" | "super" | "self")
            || (head_start >= 2 && &bytes[head_start - 2..head_start] == b"::")
        {
            continue;
        }
        let mut segs = vec![head.to_string()];
        let mut rest = &text[start + 2..];
        loop {
            let word = ident_at(rest);
            if word.is_empty() {
                break;
            }
            rest = &rest[word.len()..];
            match rest.strip_prefix("::") {
                Some(r) => {
                    segs.push(word.to_string());
                    rest = r;
                }
                None => {
                    out.push((segs.clone(), word.to_string()));
                    break;
                }
            }
        }
        if rest.starts_with('*') && segs.len() > 1 {
            // `use super::types::*`: the path names the module itself.
            let module = segs.pop().unwrap();
            out.push((segs, module));
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                let name = ident_at(item.trim_start().trim_start_matches('{'));
                if !name.is_empty() {
                    out.push((segs.clone(), name.to_string()));
                }
            }
        }
    }
    out
}

/// The sibling edges of one crate: (parent, from, to), where `from` and `to`
/// are children of `parent` and something in `from` names something in `to`.
fn edges(root: &Path) -> BTreeSet<(Module, String, String)> {
    let mut files = Vec::new();
    walk(root, &mut files);
    let modules: BTreeSet<Module> = files.iter().map(|f| module_of(root, f)).collect();
    let mut out = BTreeSet::new();
    for file in &files {
        let me = module_of(root, file);
        let text = code(&std::fs::read_to_string(file).unwrap());
        for (segs, name) in paths(&text) {
            let mut at: Module = match segs[0].as_str() {
                "crate" => vec![],
                "self" => me.clone(),
                // `super` of `ffi/a.rs` ([ffi, a]) and of `ffi/mod.rs` ([ffi]) alike.
                _ => me[..me.len().saturating_sub(1)].to_vec(),
            };
            for seg in &segs[1..] {
                if seg == "super" {
                    at.pop();
                } else {
                    at.push(seg.clone());
                }
            }
            at.push(name);
            let Some(target) = (1..=at.len())
                .rev()
                .map(|k| at[..k].to_vec())
                .find(|m| modules.contains(m))
            else {
                continue;
            };
            let common = me.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common < me.len() && common < target.len() {
                out.insert((
                    me[..common].to_vec(),
                    me[common].clone(),
                    target[common].clone(),
                ));
            }
        }
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The circles among the children of each parent: every strongly connected
/// set of two or more siblings, each with the edges that close it.
fn circles(edges: &BTreeSet<(Module, String, String)>) -> Vec<String> {
    let mut by_parent: BTreeMap<&Module, BTreeMap<&str, BTreeSet<&str>>> = BTreeMap::new();
    for (parent, from, to) in edges {
        by_parent
            .entry(parent)
            .or_default()
            .entry(from)
            .or_default()
            .insert(to);
    }
    let mut found = Vec::new();
    for (parent, graph) in by_parent {
        let reach = |start: &str| {
            let mut seen = BTreeSet::new();
            let mut todo = vec![start];
            while let Some(n) = todo.pop() {
                for &next in graph.get(n).into_iter().flatten() {
                    if seen.insert(next) {
                        todo.push(next);
                    }
                }
            }
            seen
        };
        let reaches: BTreeMap<&str, BTreeSet<&str>> =
            graph.keys().map(|&n| (n, reach(n))).collect();
        let mut done = BTreeSet::new();
        for (&n, from_n) in &reaches {
            if done.contains(n) || !from_n.contains(n) {
                continue;
            }
            let circle: BTreeSet<&str> = from_n
                .iter()
                .copied()
                .filter(|m| reaches.get(m).is_some_and(|r| r.contains(n)))
                .collect();
            let closing: Vec<String> = circle
                .iter()
                .flat_map(|&a| {
                    let circle = &circle;
                    graph[a]
                        .iter()
                        .filter(move |b| circle.contains(*b))
                        .map(move |b| format!("{a} -> {b}"))
                })
                .collect();
            done.extend(circle.iter().copied());
            found.push(format!(
                "in {}: {:?} ({})",
                if parent.is_empty() {
                    "the crate root".to_string()
                } else {
                    parent.join("::")
                },
                circle,
                closing.join(", ")
            ));
        }
    }
    found
}

#[test]
fn no_two_modules_of_one_directory_import_each_other_round_a_circle() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for root in ROOTS {
        let dir = repo.join(root);
        assert!(dir.is_dir(), "{root} is gone: update ROOTS");
        found.extend(
            circles(&edges(&dir))
                .into_iter()
                .map(|c| format!("{root} {c}")),
        );
    }
    assert!(
        found.is_empty(),
        "circles of imports (move the shared item to a module both may name):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_circle_check_finds_a_circle_through_groups_and_super_paths() {
    let dir = std::env::temp_dir().join(format!("capstan-circles-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("ffi")).unwrap();
    let write = |p: &str, t: &str| std::fs::write(dir.join(p), t).unwrap();
    write("lib.rs", "mod ffi;\nmod core;\n");
    write("core.rs", "pub fn f() {}\n");
    write("ffi/mod.rs", "mod a;\nmod b;\nmod c;\nmod d;\n");
    // a -> b through a group, b -> c through super::, c -> d through a glob
    // of crate::, d -> a,
    // and a comment naming c from a that must not count.
    write("ffi/a.rs", "use super::{b::X, b};\n// super::c::Y\n");
    write("ffi/b.rs", "fn g() { super::c::h() }\n");
    write("ffi/c.rs", "use crate::ffi::d::*;\nuse crate::core::f;\n");
    write("ffi/d.rs", "use super::a::Z;\n");
    let found = circles(&edges(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("in ffi: {\"a\", \"b\", \"c\", \"d\"}")
            && found[0].contains("a -> b")
            && found[0].contains("b -> c")
            && found[0].contains("c -> d")
            && found[0].contains("d -> a")
            && !found[0].contains("core"),
        "{found:?}"
    );
}
