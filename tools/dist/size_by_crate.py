#!/usr/bin/env python3
"""Where a library's bytes go: its code and data symbols' sizes (llvm-nm -S
on the unstripped library, which the release profile keeps a symbol table
in), summed by the crate each demangled name starts with, largest first.

    size_by_crate.py LIB [TOP]

A generic function instantiated in capstan for a dependency's type counts
for the crate whose path its name starts with (`<T as serde::Serialize>`
counts for that T's crate); std, core and alloc are Rust's standard
library. What no symbol covers (headers, relocations, unwind tables,
string constants merged by the linker) is the difference to the file size:
the last line gives it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

NM = "llvm-nm"


LEGACY = {"$LT$": "<", "$GT$": ">", "$RF$": "&", "$BP$": "*", "$C$": ",", "$u20$": " ", "$u7b$": "{",
          "$u7d$": "}", "$u5b$": "[", "$u5d$": "]", "$u27$": "'", "..": "::"}


def crate_of(name: str) -> str:
    if name.startswith("_$LT$"):
        # A legacy-mangled path segment llvm-nm left as it is (local symbols).
        name = name[1:]
        for code, text in LEGACY.items():
            name = name.replace(code, text)
    name = name.lstrip("<&*( ")
    name = re.sub(r"^(?:dyn |mut |const |impl )+", "", name)
    found = re.match(r"([A-Za-z_][A-Za-z0-9_]*)::", name)
    if found:
        return found.group(1)
    return "(C or unnamed)" if not name.startswith("_") else "(other)"


def main(argv: list[str]) -> None:
    lib = Path(argv[0])
    top = int(argv[1]) if len(argv) > 1 else 25
    out = subprocess.run([NM, "-S", "--size-sort", "-C", "--defined-only", str(lib)], check=True,
                         capture_output=True, text=True).stdout
    sizes: Counter[str] = Counter()
    for line in out.splitlines():
        parts = line.split(" ", 3)
        if len(parts) < 4 or parts[2] not in "tTdDrRbBvVwW":
            continue
        if parts[2] in "bB":  # zero-initialized: no bytes in the file
            continue
        sizes[crate_of(parts[3])] += int(parts[1], 16)
    total = sum(sizes.values())
    print(f"{lib} ({lib.stat().st_size:,} B on disk): symbols {total:,} B")
    for crate, size in sizes.most_common(top):
        print(f"  {size:>12,} B  {100 * size / total:5.1f}%  {crate}")
    rest = sum(size for _, size in sizes.most_common()[top:])
    print(f"  {rest:>12,} B  {100 * rest / total:5.1f}%  ({len(sizes) - top} other crates)")


if __name__ == "__main__":
    main(sys.argv[1:])
