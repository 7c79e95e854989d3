#!/usr/bin/env python3
"""dist-cross-test (issue 51): the cross-built artifacts of `make dist`, checked
here where they cannot all run.

    tests/install/dist_cross_test.py DIST VERSION GLIBC_FLOOR

- linux-aarch64: the SDK archive's library needs no glibc newer than the floor;
  a C program built through the SDK's pkg-config file (zig cc for
  aarch64-linux-gnu.FLOOR) runs a tool call under qemu-aarch64 (Debian's
  qemu-user, with the aarch64 glibc of libc6-arm64-cross); so does one linked
  against the library inside the manylinux aarch64 wheel. No aarch64 Python
  can be had from a registry here, so the wheel's Python package is not run.
- macOS (arm64, x86_64): each dylib (native/, the wheel's, the SDK's, the npm
  package's and the jar's are the same bytes) is a thin Mach-O of its
  architecture with install name @rpath/libcapstan.dylib, exports exactly the
  capstan_* functions of include/capstan.h, links only system libraries and
  frameworks, and is signed (arm64 macOS loads only signed code); the wheel's
  tag names the minimum macOS its header states.
- windows-x86_64: capstan.dll exports exactly the header's functions and
  imports only system DLLs.
Needs zig (ziglang, build/dist-venv), qemu-aarch64, llvm-objdump, llvm-nm.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QEMU_PREFIX = "/usr/aarch64-linux-gnu"
passed = 0


def ok(message: str) -> None:
    global passed
    passed += 1
    print(f"ok: {message}")


def fail(message: str) -> None:
    print(f"FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def run(*cmd: str, env: dict | None = None, cwd: Path | None = None) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p.stdout


def header_functions() -> set[str]:
    """The functions include/capstan.h declares (not its function-pointer types)."""
    text = (ROOT / "include" / "capstan.h").read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    names = set(re.findall(r"[\w\*]\s+\**(capstan_\w+)\s*\(", text))
    if len(names) < 50:
        fail(f"include/capstan.h: only {len(names)} functions found, the parse is broken")
    return names


def compare(what: str, exported: set[str], wanted: set[str]) -> None:
    missing, extra = sorted(wanted - exported), sorted(exported - wanted)
    if missing or extra:
        fail(f"{what}: exports differ from include/capstan.h: missing {missing}, not in the header {extra}")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def only(paths: list[Path], what: str) -> Path:
    if len(paths) != 1:
        fail(f"expected one {what}, found {[str(p) for p in paths]}")
    return paths[0]


def zig_cc() -> list[str]:
    zig = shutil.which("python-zig")
    if zig:
        return [zig, "cc"]
    return [sys.executable, "-m", "ziglang", "cc"]


def glibc_needed(lib: Path) -> tuple[int, int]:
    out = run("readelf", "-V", "--wide", str(lib))
    return max((int(a), int(b)) for a, b in re.findall(r"Name: GLIBC_(\d+)\.(\d+)", out))


def qemu_run(program: Path, version: str) -> str:
    env = dict(os.environ, QEMU_LD_PREFIX=QEMU_PREFIX)
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("CAPSTAN_LIB", None)
    return run("qemu-aarch64", str(program), version, env=env)


def check_aarch64(dist: Path, version: str, floor: str, work: Path, wanted: set[str]) -> None:
    archive = dist / "c" / f"capstan-{version}-linux-aarch64.tar.gz"
    with tarfile.open(archive) as tar:
        tar.extractall(work / "sdk", filter="tar")
    sdk = work / "sdk" / f"capstan-{version}-linux-aarch64"
    lib = sdk / "lib" / f"libcapstan.so.{version}"
    if "ARM aarch64" not in run("file", "-L", str(lib)):
        fail(f"{lib} is not an aarch64 library")
    need = glibc_needed(lib)
    if need > tuple(int(x) for x in floor.split(".")):
        fail(f"{lib} needs GLIBC_{need[0]}.{need[1]}, newer than the floor {floor}")
    dynamic = set(run("llvm-nm", "-D", "--defined-only", "-j", str(lib)).split())
    compare(str(lib), {s for s in dynamic if s.startswith("capstan_")}, wanted)
    ok(f"linux-aarch64: the SDK's library needs GLIBC_{need[0]}.{need[1]} (floor {floor}) and exports the header's functions")

    env = dict(os.environ, PKG_CONFIG_PATH=str(sdk / "lib" / "pkgconfig"))
    flags = run("pkg-config", "--cflags", "--libs", "capstan", env=env).split()
    shutil.copy(ROOT / "tests" / "install" / "consumer.c", work / "consumer.c")
    target = ["-target", f"aarch64-linux-gnu.{floor}"]
    cflags = ["-std=c11", "-Wall", "-Wextra", "-Werror"]
    program = work / "consumer-sdk"
    run(*zig_cc(), *target, *cflags, str(work / "consumer.c"), "-o", str(program), *flags)
    out = qemu_run(program, version)
    if '"content":"5"' not in out:
        fail(f"the aarch64 SDK program's tool call: {out}")
    ok("linux-aarch64: a C program built through the SDK's pkg-config file runs a tool call under qemu-aarch64")

    wheel = only(sorted((dist / "python").glob(f"capstan-{version}-py3-none-manylinux_*_aarch64.whl")), "aarch64 wheel")
    tag = wheel.stem.split("-py3-none-")[1]
    if tag != f"manylinux_{need[0]}_{need[1]}_aarch64":
        fail(f"{wheel.name}: tag {tag}, but its library needs GLIBC_{need[0]}.{need[1]}")
    unpacked = work / "wheel"
    with zipfile.ZipFile(wheel) as z:
        z.extract("capstan/libcapstan.so", unpacked)
    libdir = unpacked / "capstan"
    # The wheel's copy keeps the SONAME; Python loads it by path, a C program by that name.
    soname = re.search(r"SONAME\s+(\S+)", run("llvm-objdump", "-p", str(libdir / "libcapstan.so"))).group(1)
    os.symlink("libcapstan.so", libdir / soname)
    program = work / "consumer-wheel"
    run(*zig_cc(), *target, *cflags, "-I", str(ROOT / "include"), str(work / "consumer.c"), "-o", str(program),
        "-L", str(libdir), f"-Wl,-rpath,{libdir}", "-lcapstan")
    out = qemu_run(program, version)
    if '"content":"5"' not in out:
        fail(f"the aarch64 wheel's library: {out}")
    ok(f"linux-aarch64: the library of {wheel.name} runs a tool call under qemu-aarch64 (its Python is not run: no aarch64 Python here)")


SYSTEM_DYLIB = re.compile(r"^(/usr/lib/lib[\w.+-]+\.dylib|/System/Library/Frameworks/\w+\.framework/.*)$")


def check_macos(dist: Path, version: str, name: str, arch: str, rid: str, work: Path, wanted: set[str]) -> None:
    lib = dist / "native" / rid / "libcapstan.dylib"
    headers = run("llvm-objdump", "--macho", "--private-headers", str(lib))
    cpu = re.search(r"MH_MAGIC_64\s+(\S+)", headers)
    if not cpu or cpu.group(1) != {"arm64": "ARM64", "x86_64": "X86_64"}[arch]:
        fail(f"{lib}: CPU type {cpu.group(1) if cpu else '?'}, not {arch}")
    ident = re.search(r"cmd LC_ID_DYLIB\n\s+cmdsize \d+\n\s+name (\S+)", headers)
    if not ident or ident.group(1) != "@rpath/libcapstan.dylib":
        fail(f"{lib}: install name {ident.group(1) if ident else 'none'}, not @rpath/libcapstan.dylib")
    loads = re.findall(r"cmd LC_(?:LOAD|REEXPORT|LOAD_WEAK)_DYLIB\n\s+cmdsize \d+\n\s+name (\S+)", headers)
    foreign = [d for d in loads if not SYSTEM_DYLIB.match(d)]
    if foreign or not loads:
        fail(f"{lib}: links {loads}; not system libraries: {foreign}")
    if arch == "arm64" and "LC_CODE_SIGNATURE" not in headers:
        fail(f"{lib}: not signed, and arm64 macOS loads only signed code")
    exported = {s[1:] for s in run("llvm-nm", "-g", "--defined-only", "-j", str(lib)).split() if s.startswith("_capstan_")}
    compare(str(lib), exported, wanted)
    minos = (re.search(r"cmd LC_BUILD_VERSION\n(?:.*\n)*?\s+minos (\d+)\.(\d+)", headers)
             or re.search(r"cmd LC_VERSION_MIN_MACOSX\n\s+cmdsize \d+\n\s+version (\d+)\.(\d+)", headers))
    if not minos:
        fail(f"{lib}: states no minimum macOS (LC_BUILD_VERSION, LC_VERSION_MIN_MACOSX)")
    major, minor = int(minos.group(1)), int(minos.group(2))
    tag = f"macosx_{major}_{0 if major >= 11 else minor}_{arch}"
    wheel = dist / "python" / f"capstan-{version}-py3-none-{tag}.whl"
    if (major, minor) != {"arm64": (11, 0), "x86_64": (10, 12)}[arch]:
        fail(f"{lib}: minimum macOS {major}.{minor}, not rustc's for {arch} (MACOSX_DEPLOYMENT_TARGET lost?)")
    if not wheel.is_file():
        fail(f"no {wheel.name}: the wheel's tag must name the library's minimum macOS {major}.{minor}")
    with zipfile.ZipFile(wheel) as z:
        if z.read("capstan/libcapstan.dylib") != lib.read_bytes():
            fail(f"{wheel.name} carries another library than {lib}")
    same_in_archives(dist, version, name, rid, lib, "libcapstan.dylib", "lib/libcapstan.dylib")
    ok(f"{name}: {arch} Mach-O, install name @rpath/libcapstan.dylib, links only {sorted(set(loads))}, "
       f"exports the header's {len(wanted)} functions{', signed' if arch == 'arm64' else ''}, macOS >= {major}.{minor}; wheel {tag}")


def same_in_archives(dist: Path, version: str, name: str, rid: str, lib: Path, file: str, sdk_path: str) -> None:
    """The SDK archive, the npm package and the jar carry the same library as native/."""
    want = lib.read_bytes()
    with tarfile.open(dist / "c" / f"capstan-{version}-{name}.tar.gz") as tar:
        member = tar.extractfile(f"capstan-{version}-{name}/{sdk_path}")
        if member is None or member.read() != want:
            fail(f"the {name} SDK archive's {sdk_path} differs from {lib}")
    npm_os, npm_cpu = {"osx-arm64": ("darwin", "arm64"), "osx-x64": ("darwin", "x64"), "win-x64": ("win32", "x64"),
                       "linux-arm64": ("linux", "arm64"), "linux-x64": ("linux", "x64")}[rid]
    with tarfile.open(dist / "npm" / f"capstan-{npm_os}-{npm_cpu}-{version}.tgz") as tar:
        member = tar.extractfile(f"package/{file}")
        if member is None or member.read() != want:
            fail(f"@capstan/{npm_os}-{npm_cpu} carries another {file} than {lib}")
        pkg = tar.extractfile("package/package.json").read().decode()
        if f'"{npm_os}"' not in pkg or f'"{npm_cpu}"' not in pkg:
            fail(f"@capstan/{npm_os}-{npm_cpu}'s package.json lacks its os/cpu fields: {pkg}")
    with zipfile.ZipFile(dist / "java" / f"capstan-{version}.jar") as z:
        if z.read(f"dev/capstan/native/{name}/{file}") != want:
            fail(f"the jar's dev/capstan/native/{name}/{file} differs from {lib}")
        if z.read(f"dev/capstan/native/{name}/{file}.sha256").decode().strip() != sha(lib):
            fail(f"the jar's dev/capstan/native/{name}/{file}.sha256 is not its SHA-256")


def check_windows(dist: Path, version: str, wanted: set[str]) -> None:
    lib = dist / "native" / "win-x64" / "capstan.dll"
    head = run("llvm-objdump", "-f", str(lib))
    if "coff-x86-64" not in head and "pe-x86-64" not in head.lower():
        fail(f"{lib}: not an x86-64 PE file: {head}")
    table = run("llvm-objdump", "-p", str(lib))
    exports = set(re.findall(r"^\s+\d+\s+(?:0x)?[0-9a-f]+\s+(capstan_\w+)$", table, flags=re.M))
    compare(str(lib), exports, wanted)
    dlls = sorted(set(re.findall(r"DLL Name: (\S+)", table)))
    foreign = [d for d in dlls if d.lower().startswith(("libgcc", "libstdc", "libwinpthread"))]
    if foreign:
        fail(f"{lib} imports mingw runtime DLLs a user would not have: {foreign}")
    wheel = dist / "python" / f"capstan-{version}-py3-none-win_amd64.whl"
    with zipfile.ZipFile(wheel) as z:
        if z.read("capstan/capstan.dll") != lib.read_bytes():
            fail(f"{wheel.name} carries another DLL than {lib}")
    same_in_archives(dist, version, "windows-x86_64", "win-x64", lib, "capstan.dll", "bin/capstan.dll")
    ok(f"windows-x86_64: capstan.dll exports the header's {len(wanted)} functions, imports {dlls}")


def main() -> None:
    if len(sys.argv) != 4:
        fail("usage: dist_cross_test.py DIST VERSION GLIBC_FLOOR")
    dist, version, floor = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    wanted = header_functions()
    host = dist / "native" / "linux-x64" / "libcapstan.so"
    compare(str(host), {s for s in run("llvm-nm", "-D", "--defined-only", "-j", str(host)).split() if s.startswith("capstan_")},
            wanted)
    ok(f"the header declares {len(wanted)} functions, and the linux-x86_64 library exports exactly those")
    with tempfile.TemporaryDirectory(prefix="capstan-dist-cross-") as tmp:
        check_aarch64(dist, version, floor, Path(tmp), wanted)
        check_macos(dist, version, "macos-aarch64", "arm64", "osx-arm64", Path(tmp), wanted)
        check_macos(dist, version, "macos-x86_64", "x86_64", "osx-x64", Path(tmp), wanted)
        check_windows(dist, version, wanted)
    print(f"dist-cross-test: {passed} passed, 0 failed")


if __name__ == "__main__":
    main()
