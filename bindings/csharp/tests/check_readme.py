#!/usr/bin/env python3
"""Every C# code block of bindings/csharp/README.md is code an example runs:
each run of its lines (blank ones aside, spacing ignored) appears, in
order, in one of bindings/csharp/examples/*.cs (which may hold more lines
between them). Run by make csharp-test."""
import glob
import os
import re
import sys

here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
readme = open(os.path.join(here, "README.md"), encoding="utf-8").read()
def norm(line):
    return re.sub(r"\s+", " ", line.strip())


examples = {p: [norm(l) for l in open(p, encoding="utf-8") if l.strip()]
            for p in glob.glob(os.path.join(here, "examples", "*.cs"))}


def contains(lines, block):
    it = iter(lines)
    return all(any(l == b for l in it) for b in block)


blocks = re.findall(r"```csharp\n(.*?)```", readme, re.S)
bad = 0
for b in blocks:
    # A block may show parts of a file: each run of lines between blank lines must be found.
    parts, cur = [], []
    for l in b.splitlines() + [""]:
        if l.strip():
            cur.append(norm(l))
        elif cur:
            parts.append(cur)
            cur = []
    for part in parts:
        if not any(contains(ex, part) for ex in examples.values()):
            bad += 1
            print("check_readme: README block lines not in any example:\n  " + "\n  ".join(part))
if not blocks:
    print("check_readme: no csharp blocks in the README")
    bad += 1
if bad:
    sys.exit(1)
print("check_readme: %d C# blocks of the README are in the examples" % len(blocks))
