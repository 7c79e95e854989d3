#!/usr/bin/env python3
"""The Python sdist of `make dist-sdist` (issue 51): capstan-rt's source
distribution, which builds the library from source with cargo when pip
installs it (pip builds a wheel from it, as from the checkout).

    sdist.py OUT VERSION    writes OUT/capstan_rt-VERSION.tar.gz

The archive holds bindings/python (the package, hatch_build.py, the README)
at its top, as pip expects, and the Rust workspace the library is built from
under rust/: Cargo.toml and Cargo.lock, build.rs, src/, crates/, include/,
LICENSE. hatch_build.py builds rust/Cargo.toml when it is there (the checkout's
Cargo.toml two levels up otherwise); pyproject.toml reads the version from
it. The workspace manifest loses its [[bench]] and [[test]] targets, whose
files (benches/, tests/) the sdist does not carry; the library is the same.
PKG-INFO is written here (metadata 2.1), so no build front-end is needed.
The archive depends only on the files: sorted, no owners, fixed times.
"""

from __future__ import annotations

import gzip
import io
import re
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / "bindings" / "python"
NAME = "capstan-rt"
RUST = ["Cargo.lock", "build.rs", "LICENSE", "src", "crates", "include"]
# SOURCE_DATE_EPOCH's role: the archive's times, 2000-01-01 (zip-safe, not 0).
MTIME = 946684800


def die(message: str) -> None:
    print(f"sdist: {message}", file=sys.stderr)
    sys.exit(1)


def workspace_manifest() -> str:
    """Cargo.toml without the [[bench]]/[[test]] tables (their files stay out)."""
    text = (ROOT / "Cargo.toml").read_text()
    kept, skip = [], False
    for line in text.splitlines(keepends=True):
        header = re.match(r"^\s*\[\[?([^\]]+)\]\]?", line)
        if header:
            skip = line.lstrip().startswith(("[[bench]]", "[[test]]"))
        if not skip:
            kept.append(line)
    return "".join(kept)


def pyproject(version: str) -> str:
    text = (PYTHON / "pyproject.toml").read_text()
    text, n = re.subn(r'(?m)^path = "\.\./\.\./Cargo\.toml"$', 'path = "rust/Cargo.toml"', text)
    if n != 1:
        die('bindings/python/pyproject.toml: no `path = "../../Cargo.toml"` version source to point at rust/')
    if not re.search(r'(?m)^name = "capstan-rt"$', text):
        die(f"bindings/python/pyproject.toml: the project's name is not {NAME}")
    return text


def pkg_info(version: str) -> str:
    text = (PYTHON / "pyproject.toml").read_text()
    description = re.search(r'(?m)^description = "([^"]+)"$', text).group(1)
    requires = re.search(r'(?m)^requires-python = "([^"]+)"$', text).group(1)
    classifiers = re.findall(r'^\s+"([^"]+ :: [^"]+)",$', text, flags=re.M)
    head = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {version}",
        f"Summary: {description}",
        "License: MIT",
        f"Requires-Python: {requires}",
        *[f"Classifier: {c}" for c in classifiers],
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(head) + "\n\n" + (PYTHON / "README.md").read_text()


def files() -> list[tuple[str, Path | bytes]]:
    """(path in the archive, source file or bytes), python package first."""
    out: list[tuple[str, Path | bytes]] = []
    for rel in ["README.md", "hatch_build.py"]:
        out.append((rel, PYTHON / rel))
    for path in sorted((PYTHON / "capstan").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            out.append((path.relative_to(PYTHON).as_posix(), path))
    out.append(("rust/Cargo.toml", workspace_manifest().encode()))
    for rel in RUST:
        src = ROOT / rel
        if src.is_file():
            out.append((f"rust/{rel}", src))
            continue
        for path in sorted(src.rglob("*")):
            if path.is_file() and "target" not in path.relative_to(ROOT).parts:
                out.append((f"rust/{path.relative_to(ROOT).as_posix()}", path))
    return out


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        die(__doc__.strip())
    out_dir, version = Path(argv[0]), argv[1]
    cargo_version = re.search(r'(?m)^version = "([^"]+)"$', (ROOT / "Cargo.toml").read_text()).group(1)
    if cargo_version != version:
        die(f"Cargo.toml says {cargo_version}, not {version}")
    top = f"{NAME.replace('-', '_')}-{version}"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{top}.tar.gz"
    entries = files() + [("pyproject.toml", pyproject(version).encode()), ("PKG-INFO", pkg_info(version).encode())]
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel, source in sorted(entries, key=lambda e: e[0]):
            data = source if isinstance(source, bytes) else source.read_bytes()
            info = tarfile.TarInfo(f"{top}/{rel}")
            info.size, info.mtime, info.mode = len(data), MTIME, 0o644
            tar.addfile(info, io.BytesIO(data))
    with gzip.GzipFile(out, "wb", mtime=MTIME) as gz:
        gz.write(raw.getvalue())
    print(f"sdist: {out} ({len(entries)} files)")


if __name__ == "__main__":
    main(sys.argv[1:])
