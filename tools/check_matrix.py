#!/usr/bin/env python3
"""Checks the bindings matrix of docs/bindings.md ("Bindings: what each one reaches").

Every test a cell names (`file: test`, then `test`, `"test"` ... in the same
file) must exist: the file under that binding's test folder and the test's
name in it. A cell saying "yes" must name at least one test. The Swift
column is never compiled here, so it names no tests and is not checked.
`--self-test` feeds the checker cells that must fail.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Where each column's test files live (first match wins).
DIRS = {
    "C (the ABI)": ["tests/c", "tests/mcp"],
    "Python": ["bindings/python/tests", "tests/mcp"],
    "Go": ["bindings/go"],
    "C++": ["bindings/cpp/tests"],
    "Node": ["bindings/node/test"],
    "Java": ["bindings/java/src/test/java/dev/capstan"],
    "C#": ["bindings/csharp/tests"],
}
UNCHECKED = {"Capability", "Swift"}


def find(column, name):
    if "/" in name:
        path = os.path.join(ROOT, name)
        return path if os.path.isfile(path) else None
    for d in DIRS[column]:
        for candidate in (name, name + ".java"):
            path = os.path.join(ROOT, d, candidate)
            if os.path.isfile(path):
                return path
    return None


def check_cell(column, cell):
    """Problems with one cell, as strings."""
    problems = []
    current = None
    named = 0
    for segment in re.findall(r"`([^`]+)`", cell):
        m = re.match(r"^([\w./+-]+\.\w+|[A-Z]\w*Test): (.+)$", segment)
        if m:
            path = find(column, m.group(1))
            if path is None:
                problems.append(f"{column}: no file {m.group(1)!r}")
                current = None
                continue
            current = open(path, encoding="utf-8").read()
            name = m.group(2)
        elif re.match(r"^[\w./+-]+\.(c|rs|py|go|cpp|cjs|java)$", segment):
            path = find(column, segment) or (os.path.join(ROOT, segment) if os.path.isfile(os.path.join(ROOT, segment)) else None)
            if path is None:
                problems.append(f"{column}: no file {segment!r}")
                current = None
            else:
                current = open(path, encoding="utf-8").read()
            continue
        elif current is not None:
            name = segment
        else:
            continue
        name = name.strip().strip('"')
        if name.startswith("..."):
            name = name[3:]
        if name not in current:
            problems.append(f"{column}: {name!r} is not in its file")
        else:
            named += 1
    if re.match(r"^\W*yes\b", cell) and named == 0:
        problems.append(f"{column}: says yes and names no test: {cell[:60]!r}")
    return problems


def check(text):
    lines = text.split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith("| Capability |")), None)
    if start is None:
        return ["no matrix (a line starting '| Capability |')"]
    header = [c.strip() for c in lines[start].strip()[1:-1].split(" | ")]
    problems = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip()[1:-1].split(" | ")]
        if len(cells) != len(header):
            problems.append(f"row {cells[0][:40]!r}: {len(cells)} cells, {len(header)} columns")
            continue
        for column, cell in zip(header, cells):
            if column not in UNCHECKED:
                problems += [f"{cells[0][:40]}: {p}" for p in check_cell(column, cell)]
    return problems


def self_test():
    head = "| Capability | Go |\n|---|---|\n"
    good = head + "| x | yes: `errors_test.go: TestEveryStatusHasAnErrValue` |\n"
    assert check(good) == [], check(good)
    for bad in (
        "| x | yes: `errors_test.go: TestNoSuchThing` |\n",
        "| x | yes: `no_such_test.go: TestEveryStatusHasAnErrValue` |\n",
        "| x | yes, but names nothing |\n",
        "| x | yes: `errors_test.go: TestEveryStatusHasAnErrValue`, `TestMissing` |\n",
    ):
        assert check(head + bad), bad
    print("check_matrix: self-test passed")


if __name__ == "__main__":
    if "--self-test" in sys.argv:
        self_test()
        sys.exit(0)
    readme = os.path.join(ROOT, "docs", "bindings.md")
    found = check(open(readme, encoding="utf-8").read())
    for p in found:
        print("docs/bindings.md matrix:", p)
    if found:
        sys.exit(1)
    print("check_matrix: every test the matrix of docs/bindings.md names exists")
