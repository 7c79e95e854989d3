#!/usr/bin/env python3
"""Checks that no source file passes 800 lines without a reason.

A file longer than LIMIT lines fails unless one of its first 10 lines is a
comment whose text starts with "size:" and gives the reason, e.g.
`// size: one generated table, read as a whole`. The house's sign of two
concepts in one file is ~600 lines (STYLE.md); past 800, cut it or say why.

Files checked: those git tracks or would track (untracked but not ignored),
so node_modules, build products and caches are never read. Left out as
generated or recorded, not written: package-lock.json (npm), go.sum (Go)
and anything under a fixtures/ folder (provider bodies recorded for tests).
`--self-test` runs the checker on files that must pass and fail.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 800
HEAD_LINES = 10
GENERATED = {"package-lock.json", "go.sum", "Cargo.lock"}
# Every folder holding code the project writes (the Rust crates, the header,
# the bindings, the tests, the tools, the examples, the benches).
FOLDERS = ("src", "crates", "include", "bindings", "tests", "tools", "examples", "bench", "benches", "fuzz")
# A comment leader, then "size:" and a reason.
REASON = re.compile(r"^\s*(?://|#|/\*+|\*|<!--|--|;)\s*size:\s*\S")


def excluded(path):
    parts = path.replace(os.sep, "/").split("/")
    return parts[-1] in GENERATED or "fixtures" in parts[:-1]


def files_under(root, folder):
    out = subprocess.run(
        ["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", folder],
        check=True,
        capture_output=True,
    ).stdout.decode()
    return sorted({f for f in out.split("\0") if f and os.path.isfile(os.path.join(root, f))})


def problems_in(root, paths):
    problems = []
    for rel in paths:
        if excluded(rel):
            continue
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                lines = f.read().splitlines()
        except UnicodeDecodeError:
            continue  # not text
        if len(lines) > LIMIT and not any(REASON.match(line) for line in lines[:HEAD_LINES]):
            problems.append(
                f"{rel}: {len(lines)} lines, past {LIMIT}: cut it by concept, or write why at its top "
                f"(a comment line starting with 'size:' in its first {HEAD_LINES} lines)"
            )
    return problems


def self_test():
    long = ["x"] * (LIMIT + 1)
    cases = {
        "ok_at_limit.py": (["x"] * LIMIT, True),
        "long.py": (long, False),
        "long_with_reason.cpp": (["// size: a generated table, read as a whole"] + long, True),
        "long_hash_reason.py": (["#!/usr/bin/env python3", "# size: one parser, its states in one table"] + long, True),
        "long_empty_reason.js": (["// size:"] + long, False),
        "long_reason_too_low.py": (["x"] * HEAD_LINES + ["# size: too far down"] + long, False),
        "long_reason_not_a_comment.txt": (["size: plain text"] + long, False),
        "package-lock.json": (long, True),
        "go.sum": (long, True),
        "fixtures/body.sse": (long, True),
    }
    failures = []
    with tempfile.TemporaryDirectory() as root:
        for name, (lines, _) in cases.items():
            path = os.path.join(root, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
        for name, (_, passes) in cases.items():
            failed = bool(problems_in(root, [name]))
            if failed == passes:
                failures.append(f"{name}: expected to {'pass' if passes else 'fail'}")
    if failures:
        print("check_sizes self-test failed:\n  " + "\n  ".join(failures))
        return 1
    print(f"check_sizes self-test: {len(cases)} cases as expected")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    paths = [p for folder in FOLDERS for p in files_under(ROOT, folder)]
    problems = problems_in(ROOT, paths)
    if problems:
        print("\n".join(problems))
        return 1
    print(f"check_sizes: {len(paths)} files under {', '.join(FOLDERS)}, none past {LIMIT} lines without a reason")
    return 0


if __name__ == "__main__":
    sys.exit(main())
