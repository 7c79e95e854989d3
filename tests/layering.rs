//! The module layers drawn in docs/architecture.md ("Layout") hold in the code: every
//! `crate::` path in `src/` names a module on a lower line of the picture,
//! and every top-level module is in it. So the picture cannot silently rot,
//! and no lower layer (the registry, say) grows a dependency on a higher one
//! (the executor).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The layers of docs/architecture.md's picture, top first: one set of module names per line.
fn layers(readme: &str) -> Vec<BTreeSet<String>> {
    layers_between(readme, "layers")
}

/// The layers of a picture between `<!-- NAME -->` and `<!-- /NAME -->`,
/// top first; lines may start with `//!` (a picture in a module's docs).
fn layers_between(text: &str, name: &str) -> Vec<BTreeSet<String>> {
    let open = format!("<!-- {name} -->");
    let close = format!("<!-- /{name} -->");
    let start = text
        .find(&open)
        .unwrap_or_else(|| panic!("no {open} picture"));
    let end = text[start..]
        .find(&close)
        .unwrap_or_else(|| panic!("{open} is not closed"))
        + start;
    text[start..end]
        .lines()
        .map(|l| l.trim_start().trim_start_matches("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .filter(|l| !l.starts_with("```") && !l.starts_with("<!--") && !l.trim().is_empty())
        .map(|line| {
            let names = line.trim_start().trim_start_matches("└─>").trim_start();
            let names = names.split("  ").next().unwrap_or("");
            names
                .split('·')
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect()
        })
        .collect()
}

/// Drops `//` comments (doc comments too): a path in prose is no dependency.
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn idents(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// The first segment of every `crate::` path in `text`, including each
/// item of a `use crate::{a, b::c}` group.
fn crate_paths(text: &str) -> Vec<String> {
    paths_after(text, "crate::")
}

/// Names `lib.rs` re-exports (`pub use exec::{Call, ..}`), to the module they come from.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let lib = code(lib);
    for stmt in lib.split(';') {
        let Some(path) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = path.split_once("::") else {
            continue;
        };
        for name in idents(names) {
            map.insert(name.to_string(), module.trim().to_string());
        }
    }
    map
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Which top-level module each file of `src/` belongs to: its first path
/// component, or for a file another includes with `#[path]`, the includer's.
fn module_of(src: &Path, file: &Path, included_by: &BTreeMap<String, String>) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    let name = first.trim_end_matches(".rs").to_string();
    included_by.get(&name).cloned().unwrap_or(name)
}

/// Every `from -> to` edge that does not point to a strictly lower layer,
/// and every module in no layer, in words (`m -> m` only checks that `m` is
/// in a layer).
fn violations(layers: &[BTreeSet<String>], edges: &BTreeSet<(String, String)>) -> Vec<String> {
    let level = |m: &str| layers.iter().position(|l| l.contains(m));
    let mut bad = Vec::new();
    for (from, to) in edges {
        match (level(from), level(to)) {
            (None, _) => bad.push(format!(
                "module {from} is missing from docs/architecture.md's layers"
            )),
            (_, None) => bad.push(format!(
                "module {to} is missing from docs/architecture.md's layers"
            )),
            (Some(f), Some(t)) if from == to || t > f => {}
            _ => bad.push(format!(
                "{from} names crate::{to}, which is not below it in docs/architecture.md's layers"
            )),
        }
    }
    bad
}

/// The workspace's crates, lowest first: each one's sources, the name it is
/// used by in the others, and the module its files belong to (`None`: the
/// first folder or file name under its `src/`, as in a one-crate layout).
const CRATES: [(&str, &str, Option<&str>); 4] = [
    ("crates/core/src", "capstan_core", None),
    ("crates/formats/src", "capstan_formats", None),
    ("crates/mcp/src", "capstan_mcp", Some("mcp")),
    ("src", "capstan", None),
];

/// The module of `name` as another crate names it (`capstan_mcp` is the
/// module `mcp`), or `None` for the name of a whole lower crate.
fn crate_module(name: &str) -> Option<&'static str> {
    CRATES
        .iter()
        .find(|(_, n, _)| *n == name)
        .and_then(|(_, _, module)| *module)
}

#[test]
fn no_module_names_one_above_or_beside_it_in_the_readme_layers() {
    let root = root();
    let readme = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let layers = layers(&readme);
    assert!(layers.len() >= 5, "too few layers parsed: {layers:?}");
    // Names a crate root re-exports (`pub use exec::{Call, ..}`), to their module.
    let mut reexported = BTreeMap::new();
    for (src, _, _) in CRATES {
        let lib = std::fs::read_to_string(root.join(src).join("lib.rs")).unwrap();
        for (name, module) in reexports(&lib) {
            if !name.starts_with("capstan") && !module.starts_with("capstan") {
                reexported.insert(name, module);
            }
        }
    }
    let mut modules = BTreeSet::new();
    let mut edges = BTreeSet::new();
    for (src, _, own_module) in CRATES {
        let src = root.join(src);
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        files.sort();
        // `#[path = "x.rs"]` in src/y.rs: x belongs to y's module.
        let mut included_by = BTreeMap::new();
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            for part in text.split("#[path = \"").skip(1) {
                if let Some(target) = part.split('"').next() {
                    let target = target.trim_end_matches(".rs").to_string();
                    let own = module_of(&src, file, &BTreeMap::new());
                    included_by.insert(target, own);
                }
            }
        }
        let module = |file: &Path| match own_module {
            Some(m) => m.to_string(),
            None => module_of(&src, file, &included_by),
        };
        for file in &files {
            let from = module(file);
            if from == "lib" {
                continue; // a crate root re-exports from every layer
            }
            modules.insert(from.clone());
            // Every module is in the picture, even one that names no other.
            edges.insert((from.clone(), from.clone()));
            let text = code(&std::fs::read_to_string(file).unwrap());
            let mut named: Vec<String> = Vec::new();
            if own_module.is_none() {
                named.extend(crate_paths(&text));
            }
            for (_, name, _) in CRATES {
                let prefix = format!("{name}::");
                named.extend(paths_after(&text, &prefix));
                if let Some(m) = crate_module(name) {
                    if text.contains(name) {
                        named.push(m.to_string());
                    }
                }
            }
            for first in named {
                let to = reexported.get(&first).cloned().unwrap_or(first);
                if to != from {
                    edges.insert((from.clone(), to));
                }
            }
        }
    }
    // A name that is no module (an item of a crate root) is no edge.
    let edges: BTreeSet<_> = edges
        .into_iter()
        .filter(|(_, to)| modules.contains(to))
        .collect();
    let bad = violations(&layers, &edges);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The crates depend on each other one way, lowest first (the rule the
/// compiler then enforces): a crate's manifest names no crate of the
/// workspace above it.
#[test]
fn no_crate_depends_on_one_above_it() {
    let root = root();
    // The journal's stores (crates/journal) sit just below the package: no
    // other crate names them, so SQLite never enters the core (issue #47).
    let manifests = [
        "crates/core",
        "crates/formats",
        "crates/mcp",
        "crates/journal",
        ".",
    ];
    let names = [
        "capstan-core",
        "capstan-formats",
        "capstan-mcp",
        "capstan-journal",
        "capstan",
    ];
    for (i, dir) in manifests.iter().enumerate() {
        let text = std::fs::read_to_string(root.join(dir).join("Cargo.toml")).unwrap();
        let deps = text
            .split("\n[dependencies]\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{dir}/Cargo.toml has no [dependencies]"));
        let deps = deps.split("\n[").next().unwrap_or("");
        for above in &names[i + 1..] {
            let named = deps.lines().any(|l| {
                l.trim_start().starts_with(&format!("{above} "))
                    || l.trim_start().starts_with(&format!("{above}."))
            });
            assert!(
                !named,
                "{dir}/Cargo.toml depends on {above}, a crate above it"
            );
        }
    }
}

#[test]
fn the_layer_check_reports_an_upward_or_sideways_path_and_a_missing_module() {
    let readme = "<!-- layers -->\n```text\nffi\n └─> exec · turn   calls\n      └─> registry\n```\n<!-- /layers -->";
    let layers = layers(readme);
    assert_eq!(layers.len(), 3);
    let edge = |a: &str, b: &str| (a.to_string(), b.to_string());
    let ok: BTreeSet<_> = [edge("ffi", "exec"), edge("exec", "registry")].into();
    assert!(violations(&layers, &ok).is_empty());
    let up: BTreeSet<_> = [edge("registry", "exec")].into();
    assert_eq!(violations(&layers, &up).len(), 1);
    let beside: BTreeSet<_> = [edge("turn", "exec")].into();
    assert_eq!(violations(&layers, &beside).len(), 1);
    let missing: BTreeSet<_> = [edge("exec", "schema")].into();
    assert_eq!(violations(&layers, &missing).len(), 1);
    assert_eq!(
        crate_paths("use crate::{a, b::c};\nlet x = crate::d::e(); notcrate::f"),
        ["a", "b", "d"]
    );
}

/// The first segment of every path starting with `prefix` (`super::`,
/// `crate::exec::`) in `text`, including each item of a `{a, b::c}` group;
/// a `prefix` right after `::` (the second `super::` of `super::super::`)
/// does not count.
fn paths_after(text: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let after = &rest[i + prefix.len()..];
        let boundary = rest[..i]
            .chars()
            .last()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
        if boundary {
            if let Some(group) = after.strip_prefix('{') {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                for item in group.split(',') {
                    if let Some(first) = idents(item).next() {
                        out.push(first.to_string());
                    }
                }
            } else if let Some(first) = idents(after).next() {
                out.push(first.to_string());
            }
        }
        rest = after;
    }
    out
}

/// The exec modules `text` (a file `depth` folders below `src/exec`: 0 for
/// `crates/core/src/exec/batch.rs`, 1 for `crates/core/src/exec/batch/wait.rs`) names; `None` for
/// a name of `mod.rs` itself (an item it defines).
fn exec_uses(text: &str, depth: usize, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut names = paths_after(text, "crate::exec::");
    let up = "super::".repeat(depth + 1);
    names.extend(paths_after(text, &up).into_iter().filter(|n| n != "super"));
    names
        .into_iter()
        .map(|n| {
            if modules.contains(&n) {
                n
            } else {
                "mod".to_string()
            }
        })
        .collect()
}

#[test]
fn no_exec_file_names_one_above_or_beside_it_in_the_exec_layers() {
    let exec = root().join("crates/core/src/exec");
    let doc = std::fs::read_to_string(exec.join("mod.rs")).unwrap();
    let layers = layers_between(&doc, "exec layers");
    assert!(layers.len() >= 5, "too few exec layers parsed: {layers:?}");
    let mut files = Vec::new();
    rust_files(&exec, &mut files);
    files.sort();
    let no_includes = BTreeMap::new();
    let exec_module = |file: &Path| module_of(&exec, file, &no_includes);
    let modules: BTreeSet<String> = files.iter().map(|f| exec_module(f)).collect();
    let mut edges = BTreeSet::new();
    for module in &modules {
        edges.insert((module.clone(), module.clone()));
    }
    for file in &files {
        let from = exec_module(file);
        if from == "mod" {
            continue; // the top: it declares and re-exports every file
        }
        let depth = file.strip_prefix(&exec).unwrap().components().count() - 1;
        let text = code(&std::fs::read_to_string(file).unwrap());
        for to in exec_uses(&text, depth, &modules) {
            if to != from {
                edges.insert((from.clone(), to));
            }
        }
    }
    let bad = violations(&layers, &edges);
    assert!(
        bad.is_empty(),
        "{}",
        bad.join("\n").replace(" names crate::", " uses ").replace(
            "docs/architecture.md's layers",
            "crates/core/src/exec/mod.rs's exec layers"
        )
    );
}

#[test]
fn the_exec_layer_check_reports_a_cycle_and_reads_module_docs() {
    let doc = "//! <!-- exec layers -->\n//! ```text\n//! mod   top\n//!  └─> batch  b\n//!       └─> cell · options  c\n//! ```\n//! <!-- /exec layers -->";
    let layers = layers_between(doc, "exec layers");
    assert_eq!(layers.len(), 3, "{layers:?}");
    assert!(layers[2].contains("cell") && layers[2].contains("options"));
    let edge = |a: &str, b: &str| (a.to_string(), b.to_string());
    // A cycle: batch uses cell and cell uses batch. The upward half fails.
    let cycle: BTreeSet<_> = [edge("batch", "cell"), edge("cell", "batch")].into();
    assert_eq!(
        violations(&layers, &cycle),
        ["cell names crate::batch, which is not below it in docs/architecture.md's layers"]
    );
    let beside: BTreeSet<_> = [edge("cell", "options")].into();
    assert_eq!(violations(&layers, &beside).len(), 1);
    let modules: BTreeSet<String> = ["batch", "cell", "options"].map(String::from).into();
    // From crates/core/src/exec/cell.rs: `super::batch` and an item of mod.rs.
    let top = "use super::batch::BatchInner;\nuse super::{options::X, DEFAULT_LIMIT};\nlet _ = crate::exec::cell::f();";
    assert_eq!(
        exec_uses(top, 0, &modules),
        ["batch", "cell", "mod", "options"].map(String::from).into()
    );
    // From crates/core/src/exec/batch/wait.rs: `super::` is batch itself.
    let nested = "use super::BatchInner;\nuse super::super::cell::CallCell;";
    assert_eq!(
        exec_uses(nested, 1, &modules),
        ["cell"].map(String::from).into()
    );
}
