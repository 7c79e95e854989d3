#!/usr/bin/env python3
"""dist-cross-test (issue 51): the cross-built artifacts of `make dist`, checked
here where they cannot all run.

    tests/install/dist_cross_test.py DIST VERSION GLIBC_FLOOR [PLATFORM...]

PLATFORM...: the platforms to check (default: every one of ALL).

- linux-aarch64: the SDK archive's library needs no glibc newer than the floor;
  a C program built through the SDK's pkg-config file (zig cc for
  aarch64-linux-gnu.FLOOR) runs a tool call under qemu-aarch64 (Debian's
  qemu-user, with the aarch64 glibc of libc6-arm64-cross); so does one linked
  against the library inside the manylinux aarch64 wheel; auditwheel agrees
  with the wheel's tag; pip installs the wheel for its tag and Debian's arm64
  Python 3.11 (tools/dist/aarch64_python.sh, AARCH64_PYTHON_ROOT) imports it
  under qemu-aarch64 and makes a tool call.
- linux-i686: programs built with gcc -m32 through the SDK's capstan.pc and
  capstan-core.pc run here; the wheel is tagged for the glibc it needs.
- ios-aarch64, android-aarch64: the static libraries (full and core) hold
  objects of the target's format defining every function of the header
  (built, not linked: no Apple SDK or Android NDK here).
- every SDK archive carries the core flavour (lib/core/, capstan-core.pc,
  capstan::core) exporting the header's functions; on x86-64 Linux (and under
  qemu on aarch64) a program on capstan-core.pc finds the MCP bridge absent
  (tests/install/flavour_check.c), one on capstan.pc finds it; on x86-64 the
  CMake targets capstan::core and capstan::core_static too.
- macOS (arm64, x86_64): each dylib (native/, the wheel's, the SDK's, the npm
  package's and the jar's are the same bytes) is a thin Mach-O of its
  architecture with install name @rpath/libcapstan.dylib, exports exactly the
  capstan_* functions of include/capstan.h, links only system libraries and
  frameworks, and is signed (arm64 macOS loads only signed code); the wheel's
  tag names the minimum macOS its header states.
- windows-x86_64: capstan.dll exports exactly the header's functions and
  imports only system DLLs.
Needs zig (ziglang, build/dist-venv), qemu-aarch64, llvm-objdump, llvm-nm, gcc -m32, cmake;
AUDITWHEEL_PYTHON (a Python with auditwheel) and AARCH64_PYTHON_ROOT.
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
# Every platform of `make dist` but the host's (checked by dist-test too).
ALL = ["linux-aarch64", "linux-i686", "macos-aarch64", "macos-x86_64", "windows-x86_64", "ios-aarch64", "android-aarch64"]
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

    wheel = only(sorted((dist / "python").glob(f"capstan_rt-{version}-py3-none-manylinux_*_aarch64.whl")), "aarch64 wheel")
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
    ok(f"linux-aarch64: the library of {wheel.name} runs a tool call from C under qemu-aarch64")
    check_auditwheel(wheel)
    check_aarch64_python(wheel, version, work)


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
    wheel = dist / "python" / f"capstan_rt-{version}-py3-none-{tag}.whl"
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
    with tarfile.open(dist / "npm" / f"capstan-rt-{npm_os}-{npm_cpu}-{version}.tgz") as tar:
        member = tar.extractfile(f"package/{file}")
        if member is None or member.read() != want:
            fail(f"@capstan-rt/{npm_os}-{npm_cpu} carries another {file} than {lib}")
        pkg = tar.extractfile("package/package.json").read().decode()
        if f'"{npm_os}"' not in pkg or f'"{npm_cpu}"' not in pkg:
            fail(f"@capstan-rt/{npm_os}-{npm_cpu}'s package.json lacks its os/cpu fields: {pkg}")
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
    wheel = dist / "python" / f"capstan_rt-{version}-py3-none-win_amd64.whl"
    with zipfile.ZipFile(wheel) as z:
        if z.read("capstan/capstan.dll") != lib.read_bytes():
            fail(f"{wheel.name} carries another DLL than {lib}")
    same_in_archives(dist, version, "windows-x86_64", "win-x64", lib, "capstan.dll", "bin/capstan.dll")
    ok(f"windows-x86_64: capstan.dll exports the header's {len(wanted)} functions, imports {dlls}")

# --- the aarch64 wheel under an aarch64 Python ---------------------------------

PY_CALL = """
import platform, sys
from pathlib import Path
import capstan
from capstan import ToolCall, ToolRegistry, tool
from capstan._lib import lib
site = Path(sys.argv[1]).resolve()
loaded = Path(lib().path).resolve()
assert site in loaded.parents, f"loaded {loaded}, not the wheel's copy in {site}"
assert capstan.version() == sys.argv[2], capstan.version()

@tool
def add(a: int, b: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return a + b

with ToolRegistry([add]) as registry:
    result = registry.execute(ToolCall("add", {"a": 2, "b": 3}))
assert result.data == 5, result
print(f"add(2, 3) = {result.data} on {platform.machine()}, Python {platform.python_version()}")
"""


def check_aarch64_python(wheel: Path, version: str, work: Path) -> None:
    """pip (the host's, told the target platform) installs the wheel; Debian's
    arm64 python3.11 (tools/dist/aarch64_python.sh) imports it under qemu-aarch64."""
    root = Path(os.environ.get("AARCH64_PYTHON_ROOT", ""))
    python = root / "usr" / "bin" / "python3.11"
    if not python.is_file():
        fail(f"no aarch64 Python at {python}: AARCH64_PYTHON_ROOT must be tools/dist/aarch64_python.sh's root")
    tag = wheel.stem.split("-py3-none-")[1]
    site = work / "aarch64-site"
    run(sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--no-index",
        "--target", str(site), "--platform", tag, "--only-binary=:all:", "--python-version", "3.11",
        "--implementation", "cp", "--abi", "cp311", str(wheel))
    env = {k: v for k, v in os.environ.items() if k not in ("CAPSTAN_LIB", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME")}
    script = work / "call.py"
    script.write_text(PY_CALL)
    # -I: no user site, no PYTHON* variables; the installed tree first on sys.path.
    out = run("qemu-aarch64", "-L", str(root), str(python), "-I", "-c",
              f"import sys; sys.path.insert(0, sys.argv[1]); exec(open({str(script)!r}).read())",
              str(site), version, env=env)
    if "add(2, 3) = 5 on aarch64" not in out:
        fail(f"the aarch64 Python's tool call: {out}")
    ok(f"linux-aarch64: {wheel.name} installed by pip for {tag}, its package imported by Debian's arm64 Python "
       f"under qemu-aarch64 runs a tool call ({out.strip()})")


def check_auditwheel(wheel: Path) -> None:
    python = os.environ.get("AUDITWHEEL_PYTHON")
    if not python:
        fail("AUDITWHEEL_PYTHON (a Python with auditwheel, build/venv's) is not set")
    tag = wheel.stem.split("-py3-none-")[1]
    out = " ".join(run(python, "-m", "auditwheel", "show", str(wheel)).split())
    if f'consistent with the following platform tag: "{tag}"' not in out:
        fail(f"auditwheel show {wheel.name}: not consistent with its tag {tag}: {out}")
    ok(f"{wheel.name}: auditwheel finds it consistent with its tag {tag}")


# --- linux-i686: run here, natively (gcc -m32) ----------------------------------

def check_i686(dist: Path, version: str, work: Path, wanted: set[str]) -> None:
    archive = dist / "c" / f"capstan-{version}-linux-i686.tar.gz"
    with tarfile.open(archive) as tar:
        tar.extractall(work / "sdk-i686", filter="tar")
    sdk = work / "sdk-i686" / f"capstan-{version}-linux-i686"
    lib = sdk / "lib" / f"libcapstan.so.{version}"
    if "ELF 32-bit LSB shared object, Intel 80386" not in run("file", "-L", str(lib)):
        fail(f"{lib} is not a 32-bit x86 library")
    dynamic = set(run("llvm-nm", "-D", "--defined-only", "-j", str(lib)).split())
    compare(str(lib), {s for s in dynamic if s.startswith("capstan_")}, wanted)
    env = dict(os.environ, PKG_CONFIG_PATH=str(sdk / "lib" / "pkgconfig"))
    env.pop("CAPSTAN_LIB", None)
    env.pop("LD_LIBRARY_PATH", None)
    shutil.copy(ROOT / "tests" / "install" / "consumer.c", work / "consumer.c")
    for flavour, pc in (("full", "capstan"), ("core", "capstan-core")):
        flags = run("pkg-config", "--cflags", "--libs", pc, env=env).split()
        program = work / f"consumer-i686-{flavour}"
        run(os.environ.get("CC", "cc"), "-m32", "-std=c11", "-Wall", "-Wextra", "-Werror", str(work / "consumer.c"),
            "-o", str(program), *flags)
        if '"content":"5"' not in run(str(program), version, env=env):
            fail(f"the i686 SDK's {flavour} program made no tool call")
        check = work / f"flavour-i686-{flavour}"
        run(os.environ.get("CC", "cc"), "-m32", "-std=c11", "-Wall", "-Wextra", "-Werror",
            str(ROOT / "tests" / "install" / "flavour_check.c"), "-o", str(check), *flags)
        run(str(check), flavour, env=env)
    need = glibc_needed(lib)
    wheel = dist / "python" / f"capstan_rt-{version}-py3-none-manylinux_{need[0]}_{need[1]}_i686.whl"
    if not wheel.is_file():
        fail(f"no {wheel.name}: the i686 wheel's tag must name the glibc its library needs")
    ok(f"linux-i686: programs built with gcc -m32 through the SDK's capstan.pc and capstan-core.pc run a tool call "
       f"here, each on its flavour; {wheel.name}")


# --- both flavours in every SDK archive ---------------------------------------

def exported_functions(lib: Path) -> set[str]:
    if lib.suffix == ".dll":
        table = run("llvm-objdump", "-p", str(lib))
        return set(re.findall(r"^\s+\d+\s+(?:0x)?[0-9a-f]+\s+(capstan_\w+)$", table, flags=re.M))
    if lib.suffix == ".a":
        # The archive's own symbol index (what a linker reads), not llvm-nm:
        # an llvm-nm older than the rustc that wrote the objects stops at
        # the first member it cannot read (a Windows archive: none listed).
        return {n.lstrip("_") for n in archive_symbols(lib.read_bytes()) if n.lstrip("_").startswith("capstan_")}
    names = run("llvm-nm", "-g", "--defined-only", "-j", *(["-D"] if ".so" in lib.name else []), str(lib)).split()
    return {n.lstrip("_") for n in names if n.lstrip("_").startswith("capstan_")}


def check_flavours(dist: Path, version: str, work: Path, wanted: set[str], platforms: list[str]) -> None:
    """Each SDK archive carries the core beside the full library, exporting the
    same functions; on x86-64 and (under qemu) aarch64 Linux a program on
    capstan-core.pc finds the MCP bridge absent, and one on capstan.pc finds it."""
    for name in platforms:
        base = f"capstan-{version}-{name}"
        with tarfile.open(dist / "c" / f"{base}.tar.gz") as tar:
            tar.extractall(work / "flavours", filter="tar")
        sdk = work / "flavours" / base
        shared = {"linux": f"lib/core/libcapstan.so.{version}", "macos": "lib/core/libcapstan.dylib",
                  "windows": "bin/core/capstan.dll"}.get(name.split("-")[0])
        core_files = ["lib/core/libcapstan.a"] + ([shared, "lib/pkgconfig/capstan-core.pc",
                                                   "lib/cmake/capstan/capstanCoreTargets.cmake"] if shared else [])
        for rel in core_files:
            if not (sdk / rel).is_file():
                fail(f"{base}.tar.gz has no {rel}: the core flavour is missing")
        if shared:
            compare(f"{base}: {shared}", exported_functions(sdk / shared), wanted)
        static = exported_functions(sdk / "lib" / "core" / "libcapstan.a")
        if not wanted <= static:
            fail(f"{base}: lib/core/libcapstan.a lacks {sorted(wanted - static)[:5]}")
        if name in ("linux-x86_64", "linux-aarch64"):
            env = dict(os.environ, PKG_CONFIG_PATH=str(sdk / "lib" / "pkgconfig"))
            for k in ("CAPSTAN_LIB", "LD_LIBRARY_PATH"):
                env.pop(k, None)
            for flavour, pc in (("full", "capstan"), ("core", "capstan-core")):
                flags = run("pkg-config", "--cflags", "--libs", pc, env=env).split()
                program = work / f"flavour-{name}-{flavour}"
                source = str(ROOT / "tests" / "install" / "flavour_check.c")
                cflags = ["-std=c11", "-Wall", "-Wextra", "-Werror"]
                if name == "linux-x86_64":
                    run(os.environ.get("CC", "cc"), *cflags, source, "-o", str(program), *flags)
                    run(str(program), flavour, env=env)
                else:
                    run(*zig_cc(), "-target", "aarch64-linux-gnu.2.34", *cflags, source, "-o", str(program), *flags)
                    env_q = dict(env, QEMU_LD_PREFIX=QEMU_PREFIX)
                    run("qemu-aarch64", str(program), flavour, env=env_q)
        if name == "linux-x86_64":
            check_core_cmake(sdk, work)
        ok(f"{name}: the SDK archive carries the core flavour ({', '.join(core_files)}), exporting the header's functions"
           + ("; capstan-core.pc's program runs without the MCP bridge, capstan.pc's with it"
              if name in ("linux-x86_64", "linux-aarch64") else ""))


def check_core_cmake(sdk: Path, work: Path) -> None:
    """capstan::core runs on lib/core's library, capstan::core_static needs none."""
    src = work / "cmake-core"
    src.mkdir()
    shutil.copy(ROOT / "tests" / "install" / "flavour_check.c", src)
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(flavours C)\nfind_package(capstan CONFIG REQUIRED)\n"
        "add_executable(core_shared flavour_check.c)\ntarget_link_libraries(core_shared PRIVATE capstan::core)\n"
        "add_executable(core_static flavour_check.c)\ntarget_link_libraries(core_static PRIVATE capstan::core_static)\n")
    run("cmake", "-S", str(src), "-B", str(work / "cmake-core-build"), f"-DCMAKE_PREFIX_PATH={sdk}",
        "-DCMAKE_C_FLAGS=-Wall -Wextra -Werror")
    run("cmake", "--build", str(work / "cmake-core-build"))
    env = {k: v for k, v in os.environ.items() if k not in ("CAPSTAN_LIB", "LD_LIBRARY_PATH")}
    for program in ("core_shared", "core_static"):
        run(str(work / "cmake-core-build" / program), "core", env=env)
    linked = run("ldd", str(work / "cmake-core-build" / "core_shared"))
    if f"{sdk}/lib/core/libcapstan.so" not in linked:
        fail(f"capstan::core's program does not resolve libcapstan to lib/core: {linked}")
    if "libcapstan" in run("ldd", str(work / "cmake-core-build" / "core_static")):
        fail("capstan::core_static's program needs a shared libcapstan")


# --- iOS and Android: static libraries ------------------------------------------

def object_format(data: bytes) -> str:
    """The format of one object file, from its header: "mach-o-arm64",
    "elf64-aarch64", "llvm-bitcode", or what else it is. Read here rather
    than through llvm-objdump, whose names for formats differ between LLVM
    versions and which stops at the first member newer than itself."""
    if data[:4] == b"\xcf\xfa\xed\xfe":  # MH_MAGIC_64, little-endian
        cpu = int.from_bytes(data[4:8], "little")
        return {0x0100000C: "mach-o-arm64", 0x01000007: "mach-o-x86-64"}.get(cpu, f"mach-o-cpu-{cpu:#x}")
    if data[:4] == b"\x7fELF":
        bits = {1: "elf32", 2: "elf64"}.get(data[4], "elf?")
        order = "little" if data[5] == 1 else "big"
        machine = int.from_bytes(data[18:20], order)
        return f"{bits}-" + {183: "aarch64", 62: "x86-64", 3: "i386", 40: "arm"}.get(machine, f"machine-{machine}")
    coff = {0x8664: "coff-x86-64", 0xAA64: "coff-arm64", 0x14C: "coff-i386"}.get(int.from_bytes(data[:2], "little"))
    if coff:
        return coff
    if data[:4] in (b"BC\xc0\xde", b"\xde\xc0\x17\x0b"):  # raw bitcode, bitcode wrapper
        return "llvm-bitcode"
    return f"unknown-{data[:4].hex()}"


def archive_members(archive: bytes):
    """(name, body) of each member of an `ar` archive, GNU or BSD names."""
    if not archive.startswith(b"!<arch>\n"):
        fail("not an ar archive")
    at = 8
    while at + 60 <= len(archive):
        header = archive[at:at + 60]
        name = header[:16].decode().rstrip()
        size = int(header[48:58].decode().strip())
        body = archive[at + 60:at + 60 + size]
        if name.startswith("#1/"):  # BSD: the name heads the body
            n = int(name[3:])
            name, body = body[:n].rstrip(b"\0").decode(), body[n:]
        yield name, body
        at += 60 + size + (size & 1)


def archive_symbols(archive: bytes) -> set[str]:
    """The symbols the archive's index says its members define: the GNU
    index (`/`, `/SYM64/`: big-endian count, offsets, names) or the BSD one
    (`__.SYMDEF`: little-endian (name, member) pairs, then the names)."""
    for name, body in archive_members(archive):
        if name in ("/", "/SYM64/"):
            width = 8 if name == "/SYM64/" else 4
            count = int.from_bytes(body[:width], "big")
            names = body[width * (count + 1):].split(b"\0")[:count]
            return {n.decode() for n in names}
        if name.startswith("__.SYMDEF"):
            width = 8 if "64" in name else 4
            size = int.from_bytes(body[:width], "little")
            pairs = body[width:width + size]
            strings = body[width + size + width:]
            out = set()
            for i in range(0, len(pairs), 2 * width):
                strx = int.from_bytes(pairs[i:i + width], "little")
                out.add(strings[strx:strings.index(b"\0", strx)].decode())
            return out
    fail("the archive has no symbol index")
    return set()


def member_formats(archive: bytes) -> dict[str, str]:
    """Each object of an `ar` archive (GNU or BSD names) and its format;
    the symbol and name tables left out."""
    out: dict[str, str] = {}
    for i, (name, body) in enumerate(archive_members(archive)):
        if name not in ("/", "//", "/SYM64/") and not name.startswith("__.SYMDEF"):
            out[f"{name}#{i}"] = object_format(body)
    return out


def check_mobile(dist: Path, version: str, name: str, work: Path, wanted: set[str]) -> None:
    """Built, not linked (no Apple SDK or Android NDK here): the archive's
    objects are of the target's format and define every function of the header."""
    base = f"capstan-{version}-{name}"
    with tarfile.open(dist / "c" / f"{base}.tar.gz") as tar:
        tar.extractall(work / "mobile", filter="tar")
    sdk = work / "mobile" / base
    fmt = {"ios-aarch64": "mach-o-arm64", "android-aarch64": "elf64-aarch64"}[name]
    for rel in ("lib/libcapstan.a", "lib/core/libcapstan.a"):
        lib = sdk / rel
        formats = set(member_formats(lib.read_bytes()).values()) - {"llvm-bitcode"}
        if formats != {fmt}:
            fail(f"{base}: {rel} holds objects of {sorted(formats)}, not {fmt}")
        defined = exported_functions(lib)
        if not wanted <= defined:
            fail(f"{base}: {rel} does not define {sorted(wanted - defined)[:5]}")
    if not (sdk / "include" / "capstan.h").is_file():
        fail(f"{base}: no include/capstan.h")
    ok(f"{name}: the archive's full and core static libraries are {fmt} objects defining the header's "
       f"{len(wanted)} functions (built, not linked: no Apple SDK or Android NDK here)")


def main() -> None:
    if len(sys.argv) < 4:
        fail("usage: dist_cross_test.py DIST VERSION GLIBC_FLOOR [PLATFORM...]")
    dist, version, floor = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    platforms = sys.argv[4:] or ALL
    unknown = sorted(set(platforms) - set(ALL) - {"linux-x86_64"})
    if unknown:
        fail(f"unknown platforms {unknown}: of {ALL}")
    wanted = header_functions()
    host = dist / "native" / "linux-x64" / "libcapstan.so"
    compare(str(host), {s for s in run("llvm-nm", "-D", "--defined-only", "-j", str(host)).split() if s.startswith("capstan_")},
            wanted)
    ok(f"the header declares {len(wanted)} functions, and the linux-x86_64 library exports exactly those")
    with tempfile.TemporaryDirectory(prefix="capstan-dist-cross-") as tmp:
        if "linux-aarch64" in platforms:
            check_aarch64(dist, version, floor, Path(tmp), wanted)
        if "linux-i686" in platforms:
            check_i686(dist, version, Path(tmp), wanted)
        if "macos-aarch64" in platforms:
            check_macos(dist, version, "macos-aarch64", "arm64", "osx-arm64", Path(tmp), wanted)
        if "macos-x86_64" in platforms:
            check_macos(dist, version, "macos-x86_64", "x86_64", "osx-x64", Path(tmp), wanted)
        if "windows-x86_64" in platforms:
            check_windows(dist, version, wanted)
        for name in ("ios-aarch64", "android-aarch64"):
            if name in platforms:
                check_mobile(dist, version, name, Path(tmp), wanted)
        check_flavours(dist, version, Path(tmp), wanted, ["linux-x86_64", *(p for p in platforms if p != "linux-x86_64")])
    print(f"dist-cross-test: {passed} passed, 0 failed")

if __name__ == "__main__":
    main()
