#!/usr/bin/env python3
"""Packs the artifacts of `make dist` (mk/dist.mk, issue 51) from libraries
already built: it builds no Rust.

    dist.py native   DIST PLATFORM FLAVOUR SHARED STATIC [IMPLIB]
                                                           the library into DIST/native/<rid>/ (FLAVOUR
                                                           full) or DIST/native-core/<rid>/ (core);
                                                           SHARED is - for a static-only platform
    dist.py sdk      DIST PLATFORM VERSION [STAGE]         the C SDK archive, DIST/c/ (both flavours)
    dist.py wheel    DIST PLATFORM VERSION PYTHON          the Python wheel, DIST/python/
    dist.py npm      DIST VERSION PLATFORM...              the npm packages, DIST/npm/
    dist.py jar      DIST VERSION JAR PLATFORM...          the jar with the natives, DIST/java/
    dist.py manifest DIST VERSION                          DIST/manifest.json and DIST/SHA256SUMS
    dist.py sizes    DIST                                  the libraries' sizes, per platform and flavour

PLATFORM is one of PLATFORMS' keys. DIST/native/<rid>/ is the layout .NET's
NuGet takes (runtimes/<rid>/native/): the C# package copies it as it is.

Two flavours of every library, one header: full (the default features) and
core (`--no-default-features`: no MCP bridge, its MCP functions answer
UNSUPPORTED). The C SDK archives carry both (lib/ and lib/core/, capstan.pc
and capstan-core.pc, CMake targets capstan::capstan and capstan::core); the
language packages carry the full one.

Names (docs/platforms-and-packaging.md, "Package names"): PyPI capstan-rt,
npm capstan with @capstan-rt/<os>-<cpu>, Maven io.github.capstan-rt:capstan.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# name in dist: .NET runtime id, npm os/cpu/libc, shared library file name,
# import library (Windows), wheel architecture; npm/jar: whether the npm
# package and the jar carry it (no Node.js or JDK 22 is published for 32-bit
# Linux); shared None: a static library only (iOS, Android: no SDK or NDK
# here to link one).
PLATFORMS = {
    "linux-x86_64": dict(rid="linux-x64", os="linux", cpu="x64", libc="glibc", shared="libcapstan.so", arch="x86_64"),
    "linux-aarch64": dict(rid="linux-arm64", os="linux", cpu="arm64", libc="glibc", shared="libcapstan.so", arch="aarch64"),
    "macos-aarch64": dict(rid="osx-arm64", os="darwin", cpu="arm64", libc=None, shared="libcapstan.dylib", arch="arm64"),
    "macos-x86_64": dict(rid="osx-x64", os="darwin", cpu="x64", libc=None, shared="libcapstan.dylib", arch="x86_64"),
    "windows-x86_64": dict(rid="win-x64", os="win32", cpu="x64", libc=None, shared="capstan.dll", arch="amd64"),
    "linux-i686": dict(rid="linux-x86", os="linux", cpu="ia32", libc="glibc", shared="libcapstan.so", arch="i686",
                       npm=False, jar=False, bits=32),
    "ios-aarch64": dict(rid="ios-arm64", os="ios", cpu="arm64", libc=None, shared=None, arch="arm64", npm=False,
                        jar=False, wheel=False),
    "android-aarch64": dict(rid="android-arm64", os="android", cpu="arm64", libc=None, shared=None, arch="aarch64",
                            npm=False, jar=False, wheel=False),
}
FLAVOURS = ("full", "core")
NPM_SCOPE = "@capstan-rt"
# The distribution name on PyPI (`capstan` there is another project), as a
# wheel's file name spells it; the import name stays `capstan`.
WHEEL_NAME = "capstan_rt"
MAVEN = ("io.github.capstan-rt", "capstan")


def die(message: str) -> None:
    print(f"dist: {message}", file=sys.stderr)
    sys.exit(1)


def platform(name: str) -> dict:
    if name not in PLATFORMS:
        die(f"unknown platform {name!r}: one of {', '.join(PLATFORMS)}")
    return PLATFORMS[name]


def npm_name(name: str) -> str:
    p = platform(name)
    return f"{NPM_SCOPE}/{p['os']}-{p['cpu']}"


def native_dir(dist: Path, name: str, flavour: str = "full") -> Path:
    if flavour not in FLAVOURS:
        die(f"unknown flavour {flavour!r}: one of {', '.join(FLAVOURS)}")
    return dist / ("native" if flavour == "full" else "native-core") / platform(name)["rid"]


def carries(name: str, what: str) -> bool:
    """Whether the npm packages, the jar or the wheels carry this platform."""
    return platform(name).get(what, True)


def shared_library(dist: Path, name: str) -> Path:
    lib = native_dir(dist, name) / platform(name)["shared"]
    if not lib.is_file():
        die(f"{lib} is missing: `make dist` builds it ({name})")
    return lib


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- what a library says of itself -------------------------------------------

def glibc_floor(lib: Path) -> tuple[int, int]:
    """The newest GLIBC_2.x symbol version the ELF library needs."""
    out = subprocess.run(["readelf", "-V", "--wide", str(lib)], check=True, capture_output=True, text=True).stdout
    versions = [(int(a), int(b)) for a, b in re.findall(r"Name: GLIBC_(\d+)\.(\d+)", out)]
    if not versions:
        die(f"{lib}: no GLIBC_ symbol versions (readelf -V): not a glibc library?")
    return max(versions)


def macho_minimum(lib: Path) -> tuple[int, int]:
    """The minimum macOS version of a thin 64-bit Mach-O (LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX)."""
    data = lib.read_bytes()
    magic, _cpu, _sub, _type, ncmds, _size, _flags = struct.unpack_from("<IiiIIII", data, 0)
    if magic != 0xFEEDFACF:
        die(f"{lib}: not a thin 64-bit little-endian Mach-O")
    offset = 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, offset)
        if cmd == 0x32:  # LC_BUILD_VERSION: platform, minos, sdk
            (minos,) = struct.unpack_from("<I", data, offset + 12)
            return minos >> 16, (minos >> 8) & 0xFF
        if cmd == 0x24:  # LC_VERSION_MIN_MACOSX: version, sdk
            (version,) = struct.unpack_from("<I", data, offset + 8)
            return version >> 16, (version >> 8) & 0xFF
        offset += size
    die(f"{lib}: no LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX: its minimum macOS is unknown")
    raise AssertionError


def wheel_tag(dist: Path, name: str) -> str:
    """The wheel's platform tag, true for the library it carries."""
    p = platform(name)
    lib = shared_library(dist, name)
    if p["os"] == "linux":
        major, minor = glibc_floor(lib)
        return f"manylinux_{major}_{minor}_{p['arch']}"
    if p["os"] == "darwin":
        major, minor = macho_minimum(lib)
        # Wheel tags name macOS 11 and later by major version only.
        return f"macosx_{major}_{0 if major >= 11 else minor}_{p['arch']}"
    return "win_amd64"


# --- subcommands ---------------------------------------------------------------

def cmd_native(dist: Path, name: str, flavour: str, shared: str, static: str, implib: str | None = None) -> None:
    out = native_dir(dist, name, flavour)
    out.mkdir(parents=True, exist_ok=True)
    if shared != "-":
        shutil.copyfile(shared, out / platform(name)["shared"])
    shutil.copyfile(static, out / "libcapstan.a")
    if implib:
        shutil.copyfile(implib, out / "libcapstan.dll.a")
    print(f"dist: {out}/ ({', '.join(sorted(f.name for f in out.iterdir()))})")


def _fill(template: Path, values: dict[str, str]) -> str:
    text = template.read_text()
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    return text


def _apple_or_windows_sdk(dist: Path, name: str, version: str, top: Path) -> None:
    """The SDK tree of a macOS or Windows library (Linux's comes from `make install`)."""
    p = platform(name)
    src = native_dir(dist, name)
    windows = p["os"] == "win32"
    (top / "include").mkdir(parents=True)
    (top / "lib" / "pkgconfig").mkdir(parents=True)
    (top / "lib" / "cmake" / "capstan").mkdir(parents=True)
    (top / "share" / "licenses" / "capstan").mkdir(parents=True)
    shutil.copyfile(ROOT / "include" / "capstan.h", top / "include" / "capstan.h")
    for h in ("capstan.hpp", "capstan_json.hpp"):
        shutil.copyfile(ROOT / "bindings" / "cpp" / h, top / "include" / h)
    shutil.copyfile(ROOT / "LICENSE", top / "share" / "licenses" / "capstan" / "LICENSE")
    shutil.copyfile(src / "libcapstan.a", top / "lib" / "libcapstan.a")
    if windows:
        (top / "bin").mkdir()
        shutil.copyfile(src / "capstan.dll", top / "bin" / "capstan.dll")
        shutil.copyfile(src / "libcapstan.dll.a", top / "lib" / "libcapstan.dll.a")
        shared_rel, implib_rel = "bin/capstan.dll", "lib/libcapstan.dll.a"
        # What rustc names for a static link of the mingw library (Makefile, static_quickstart.exe).
        private = ["-lkernel32", "-ladvapi32", "-lntdll", "-luserenv", "-lws2_32", "-lbcrypt", "-ldbghelp"]
    else:
        shutil.copyfile(src / "libcapstan.dylib", top / "lib" / "libcapstan.dylib")
        shared_rel, implib_rel = "lib/libcapstan.dylib", None
        private = ["-framework", "CoreFoundation", "-liconv", "-lSystem", "-lc", "-lm"]
    major, minor = version.split(".")[:2]
    (top / "lib" / "pkgconfig" / "capstan.pc").write_text(
        "# capstan's SDK archive for " + name + " (make dist): relocatable, the prefix is where it was unpacked.\n"
        "prefix=${pcfiledir}/../..\nlibdir=${prefix}/lib\nincludedir=${prefix}/include\n\n"
        f"Name: capstan\nDescription: Embeddable native tool runtime for LLM agents, with a C ABI\nVersion: {version}\n"
        "Libs: -L${libdir} -lcapstan\n"
        f"Libs.private: {' '.join(private)}\nCflags: -I${{includedir}}\n"
    )
    imported = [f'IMPORTED_LOCATION "${{_capstan_prefix}}/{shared_rel}"']
    if implib_rel:
        imported.append(f'IMPORTED_IMPLIB "${{_capstan_prefix}}/{implib_rel}"')
    else:
        imported.append('IMPORTED_SONAME "@rpath/libcapstan.dylib"')
    # Framework flags are one item each for CMake ("-framework CoreFoundation").
    cmake_private = ";".join(
        f"-framework {private[i + 1]}" if x == "-framework" else x
        for i, x in enumerate(private) if not (i > 0 and private[i - 1] == "-framework"))
    (top / "lib" / "cmake" / "capstan" / "capstanConfig.cmake").write_text(
        f"# capstan {version} for {name}, from its SDK archive (make dist): relocatable.\n"
        'get_filename_component(_capstan_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)\n'
        f'set(capstan_VERSION "{version}")\n'
        "if(NOT TARGET capstan::capstan)\n"
        "  add_library(capstan::capstan SHARED IMPORTED)\n"
        "  set_target_properties(capstan::capstan PROPERTIES\n    "
        + "\n    ".join(imported)
        + '\n    INTERFACE_INCLUDE_DIRECTORIES "${_capstan_prefix}/include")\nendif()\n'
        "if(NOT TARGET capstan::capstan_static)\n"
        "  add_library(capstan::capstan_static STATIC IMPORTED)\n"
        "  set_target_properties(capstan::capstan_static PROPERTIES\n"
        '    IMPORTED_LOCATION "${_capstan_prefix}/lib/libcapstan.a"\n'
        '    IMPORTED_LINK_INTERFACE_LANGUAGES "C"\n'
        '    INTERFACE_INCLUDE_DIRECTORIES "${_capstan_prefix}/include"\n'
        f'    INTERFACE_LINK_LIBRARIES "{cmake_private}")\nendif()\n'
        "if(NOT TARGET capstan::cpp)\n"
        "  add_library(capstan::cpp INTERFACE IMPORTED)\n"
        "  set_target_properties(capstan::cpp PROPERTIES INTERFACE_LINK_LIBRARIES capstan::capstan\n"
        "    INTERFACE_COMPILE_FEATURES cxx_std_17)\nendif()\n"
    )
    (top / "lib" / "cmake" / "capstan" / "capstanConfigVersion.cmake").write_text(
        _fill(ROOT / "packaging" / "cmake" / "capstanConfigVersion.cmake.in",
              {"VERSION": version, "VERSION_MAJOR": major, "VERSION_MINOR": minor, "SIZEOF_VOID_P": "8"}))


def _headers_and_licence(top: Path) -> None:
    (top / "include").mkdir(parents=True, exist_ok=True)
    (top / "share" / "licenses" / "capstan").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / "include" / "capstan.h", top / "include" / "capstan.h")
    shutil.copyfile(ROOT / "LICENSE", top / "share" / "licenses" / "capstan" / "LICENSE")


def _static_sdk(dist: Path, name: str, top: Path) -> None:
    """iOS and Android: the header and the static library, for the app's own toolchain to link."""
    _headers_and_licence(top)
    (top / "lib").mkdir(parents=True)
    shutil.copyfile(native_dir(dist, name) / "libcapstan.a", top / "lib" / "libcapstan.a")


def _soname(lib: Path) -> str:
    out = subprocess.run(["readelf", "-d", "--wide", str(lib)], check=True, capture_output=True, text=True).stdout
    found = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", out)
    if not found:
        die(f"{lib} has no SONAME")
    return found.group(1)


def _add_core(top: Path, core: Path, name: str, version: str) -> None:
    """The core flavour beside the full one: lib/core/ (bin/core/ for the DLL),
    capstan-core.pc, and the CMake targets capstan::core and capstan::core_static."""
    p = platform(name)
    lib = top / "lib" / "core"
    lib.mkdir(parents=True)
    shutil.copyfile(core / "libcapstan.a", lib / "libcapstan.a")
    if p["shared"] is None:
        return
    imported = []
    if p["os"] == "linux":
        # The names `make install` gives: the file, its SONAME link, the link for -lcapstan.
        soname = _soname(core / "libcapstan.so")
        shutil.copyfile(core / "libcapstan.so", lib / f"libcapstan.so.{version}")
        os.symlink(f"libcapstan.so.{version}", lib / soname)
        os.symlink(soname, lib / "libcapstan.so")
        imported = [f'IMPORTED_LOCATION "${{_capstan_core_prefix}}/lib/core/libcapstan.so.{version}"',
                    f'IMPORTED_SONAME "{soname}"']
    elif p["os"] == "darwin":
        shutil.copyfile(core / "libcapstan.dylib", lib / "libcapstan.dylib")
        imported = ['IMPORTED_LOCATION "${_capstan_core_prefix}/lib/core/libcapstan.dylib"',
                    'IMPORTED_SONAME "@rpath/libcapstan.dylib"']
    else:
        (top / "bin" / "core").mkdir(parents=True)
        shutil.copyfile(core / "capstan.dll", top / "bin" / "core" / "capstan.dll")
        shutil.copyfile(core / "libcapstan.dll.a", lib / "libcapstan.dll.a")
        imported = ['IMPORTED_LOCATION "${_capstan_core_prefix}/bin/core/capstan.dll"',
                    'IMPORTED_IMPLIB "${_capstan_core_prefix}/lib/core/libcapstan.dll.a"']
    pc = (top / "lib" / "pkgconfig" / "capstan.pc").read_text()
    pc, n = re.subn(r"(?m)^libdir=\$\{prefix\}/lib$", "libdir=${prefix}/lib/core", pc)
    if n != 1:
        die(f"{name}: capstan.pc has no 'libdir=${{prefix}}/lib' line to point at lib/core")
    pc = re.sub(r"(?m)^Name: capstan$", "Name: capstan-core", pc)
    pc = re.sub(r"(?m)^(Description: .*)$", r"\1 (core: no MCP bridge, its functions answer UNSUPPORTED)", pc)
    (top / "lib" / "pkgconfig" / "capstan-core.pc").write_text(pc)
    cmake = top / "lib" / "cmake" / "capstan"
    (cmake / "capstanCoreTargets.cmake").write_text(
        "# capstan's core flavour (no MCP bridge: its MCP functions answer UNSUPPORTED), same header;\n"
        "# included by capstanConfig.cmake. Link capstan::core or capstan::core_static instead of\n"
        "# capstan::capstan or capstan::capstan_static.\n"
        'get_filename_component(_capstan_core_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)\n'
        "if(NOT TARGET capstan::core)\n"
        "  add_library(capstan::core SHARED IMPORTED)\n"
        "  set_target_properties(capstan::core PROPERTIES\n    " + "\n    ".join(imported) + "\n"
        '    INTERFACE_INCLUDE_DIRECTORIES "${_capstan_core_prefix}/include")\nendif()\n'
        "if(NOT TARGET capstan::core_static)\n"
        "  add_library(capstan::core_static STATIC IMPORTED)\n"
        "  get_target_property(_capstan_core_libs capstan::capstan_static INTERFACE_LINK_LIBRARIES)\n"
        "  set_target_properties(capstan::core_static PROPERTIES\n"
        '    IMPORTED_LOCATION "${_capstan_core_prefix}/lib/core/libcapstan.a"\n'
        '    IMPORTED_LINK_INTERFACE_LANGUAGES "C"\n'
        '    INTERFACE_INCLUDE_DIRECTORIES "${_capstan_core_prefix}/include"\n'
        '    INTERFACE_LINK_LIBRARIES "${_capstan_core_libs}")\nendif()\n')
    config = cmake / "capstanConfig.cmake"
    config.write_text(config.read_text() + '\n# The core flavour of the SDK archive (make dist).\n'
                      'include("${CMAKE_CURRENT_LIST_DIR}/capstanCoreTargets.cmake")\n')


def cmd_sdk(dist: Path, name: str, version: str, stage: str | None = None) -> None:
    base = f"capstan-{version}-{name}"
    out = dist / "c" / f"{base}.tar.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp) / base
        if stage:
            # `make install` into STAGE (Linux): made relocatable here.
            shutil.copytree(stage, top, symlinks=True)
            pc = top / "lib" / "pkgconfig" / "capstan.pc"
            text = re.sub(r"(?m)^prefix=.*$", "prefix=${pcfiledir}/../..", pc.read_text())
            pc.write_text(text)
            if platform(name).get("bits") == 32:
                # `make install` wrote the host's pointer size into the version file.
                major, minor = version.split(".")[:2]
                (top / "lib" / "cmake" / "capstan" / "capstanConfigVersion.cmake").write_text(
                    _fill(ROOT / "packaging" / "cmake" / "capstanConfigVersion.cmake.in",
                          {"VERSION": version, "VERSION_MAJOR": major, "VERSION_MINOR": minor, "SIZEOF_VOID_P": "4"}))
        elif platform(name)["shared"] is None:
            _static_sdk(dist, name, top)
        else:
            _apple_or_windows_sdk(dist, name, version, top)
        core = native_dir(dist, name, "core")
        if core.is_dir():
            _add_core(top, core, name, version)
        else:
            print(f"dist: {out.name} has no core flavour: {core} is missing (`make dist` builds it)")
        with tarfile.open(out, "w:gz") as tar:
            # Sorted, owned by no one: the archive depends only on the files.
            def clean(info: tarfile.TarInfo) -> tarfile.TarInfo:
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                return info
            for path in sorted(top.rglob("*")):
                tar.add(path, arcname=str(path.relative_to(tmp)), recursive=False, filter=clean)
    print(f"dist: {out}")


def cmd_wheel(dist: Path, name: str, version: str, python: str) -> None:
    if not carries(name, "wheel"):
        print(f"dist: no wheel for {name} (a static library only)")
        return
    tag = wheel_tag(dist, name)
    out = dist / "python"
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CAPSTAN_WHEEL_LIBRARY=str(shared_library(dist, name)), CAPSTAN_WHEEL_PLATFORM=tag)
    env.pop("STRIP", None)  # the natives in dist/ are stripped already
    subprocess.run([python, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out),
                    str(ROOT / "bindings" / "python")], check=True, env=env)
    wheel = out / f"{WHEEL_NAME}-{version}-py3-none-{tag}.whl"
    if not wheel.is_file():
        die(f"pip wheel did not write {wheel}")
    print(f"dist: {wheel}")


def _npm_pack(directory: Path, out: Path) -> Path:
    run = subprocess.run(["npm", "pack", "--json", "--update-notifier=false", "--pack-destination", str(out)], cwd=directory,
                         check=True, capture_output=True, text=True)
    return out / json.loads(run.stdout)[0]["filename"]


def cmd_npm(dist: Path, version: str, *names: str) -> None:
    out = dist / "npm"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            p = platform(name)
            if not carries(name, "npm"):
                continue
            lib = shared_library(dist, name)
            pkg = Path(tmp) / p["rid"]
            pkg.mkdir()
            shutil.copyfile(lib, pkg / p["shared"])
            shutil.copyfile(ROOT / "LICENSE", pkg / "LICENSE")
            manifest = {
                "name": npm_name(name),
                "version": version,
                "description": f"libcapstan for {name}: installed by the capstan package on this platform only",
                "license": "MIT",
                "os": [p["os"]],
                "cpu": [p["cpu"]],
                "files": [p["shared"], "LICENSE"],
            }
            if p["libc"]:
                manifest["libc"] = [p["libc"]]
            (pkg / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
            print(f"dist: {_npm_pack(pkg, out)}")
        main = Path(tmp) / "capstan"
        src = ROOT / "bindings" / "node"
        manifest = json.loads((src / "package.json").read_text())
        if manifest["version"] != version:
            die(f"bindings/node/package.json is version {manifest['version']}, Cargo.toml says {version}")
        for entry in manifest["files"]:
            source, target = src / entry.rstrip("/"), main / entry.rstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target)
            else:
                shutil.copyfile(source, target)
        shutil.copyfile(ROOT / "LICENSE", main / "LICENSE")
        # Every platform of a release, also when this dist packs fewer (dist-host):
        # npm skips an optional dependency it cannot fetch or that is for another platform.
        manifest["optionalDependencies"] = {npm_name(n): version for n in PLATFORMS if carries(n, "npm")}
        manifest.pop("devDependencies", None)
        manifest.pop("scripts", None)
        (main / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
        print(f"dist: {_npm_pack(main, out)}")


def cmd_jar(dist: Path, version: str, jar: str, *names: str) -> None:
    out = dist / "java" / f"capstan-{version}.jar"
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(jar, out)
    with zipfile.ZipFile(out, "a", compression=zipfile.ZIP_DEFLATED) as z:
        present = set(z.namelist())
        for name in names:
            if not carries(name, "jar"):
                continue
            lib = shared_library(dist, name)
            entry = f"dev/capstan/native/{name}/{lib.name}"
            if entry in present:
                die(f"{jar} already holds {entry}")
            z.write(lib, entry)
            z.writestr(entry + ".sha256", sha256(lib) + "\n")
    # The pom beside the jar, as a Maven repository holds it (what
    # `mvn install:install-file -DpomFile=` and a deployment take): the
    # binding's own, whose dependencies (Jackson) a consumer's build resolves.
    pom = (ROOT / "bindings" / "java" / "pom.xml").read_text()
    coordinates = re.search(r"<groupId>([^<]+)</groupId>\s*<artifactId>([^<]+)</artifactId>\s*<version>([^<]+)</version>", pom)
    if not coordinates or coordinates.groups() != (*MAVEN, version):
        die(f"bindings/java/pom.xml is not {':'.join(MAVEN)}:{version}: {coordinates and coordinates.groups()}")
    out.with_suffix(".pom").write_text(pom)
    print(f"dist: {out} (natives: {', '.join(n for n in names if carries(n, 'jar'))}) and its pom")


def _platform_of(rel: str) -> str:
    for name, p in PLATFORMS.items():
        if rel.startswith((f"native/{p['rid']}/", f"native-core/{p['rid']}/")) or f"-{name}." in rel:
            return name
    wheel = re.search(r"py3-none-(.+)\.whl$", rel)
    if wheel:
        tag = wheel.group(1)
        kind = "linux" if tag.startswith("manylinux") else "darwin" if tag.startswith("macosx") else "win32"
        if tag.endswith("_i686"):
            return "linux-i686"
        for name, p in PLATFORMS.items():
            if p["os"] == kind and tag.endswith("_" + p["arch"]):
                return name
    npm = re.search(r"capstan-rt-(linux|darwin|win32)-(x64|arm64)-", rel)
    if npm:
        for name, p in PLATFORMS.items():
            if (p["os"], p["cpu"]) == npm.groups():
                return name
    return "any"


def cmd_manifest(dist: Path, version: str) -> None:
    artifacts = []
    for path in sorted(dist.rglob("*")):
        rel = path.relative_to(dist).as_posix()
        if not path.is_file() or rel in ("manifest.json", "SHA256SUMS"):
            continue
        artifacts.append({"name": rel, "platform": _platform_of(rel),
                          "flavour": "core" if rel.startswith("native-core/") else "both" if rel.startswith("c/") else "full",
                          "size": path.stat().st_size, "sha256": sha256(path)})
    (dist / "manifest.json").write_text(json.dumps({"version": version, "artifacts": artifacts}, indent=2) + "\n")
    (dist / "SHA256SUMS").write_text("".join(f"{a['sha256']}  {a['name']}\n" for a in artifacts))
    width = max(len(a["name"]) for a in artifacts)
    for a in artifacts:
        print(f"  {a['name']:<{width}}  {a['platform']:<15} {a['size']:>11,} B  {a['sha256'][:16]}")
    print(f"dist: {dist}/manifest.json: {len(artifacts)} files")


def cmd_sizes(dist: Path) -> None:
    """Each library's size as packed (stripped, but Mach-O: see mk/dist.mk), per
    platform and flavour, as the Markdown table of docs/platforms-and-packaging.md."""
    print("| platform | full: shared | core: shared | full: static | core: static |")
    print("|---|---:|---:|---:|---:|")
    for name, p in PLATFORMS.items():
        cells = []
        for kind in ("shared", "static"):
            for flavour in FLAVOURS:
                d = native_dir(dist, name, flavour)
                f = d / (p["shared"] if kind == "shared" and p["shared"] else "libcapstan.a")
                cells.append("-" if (kind == "shared" and not p["shared"]) or not f.is_file() else f"{f.stat().st_size:,} B")
        if set(cells) != {"-"}:
            print(f"| {name} | " + " | ".join(cells) + " |")


def main(argv: list[str]) -> None:
    commands = {"native": cmd_native, "sdk": cmd_sdk, "wheel": cmd_wheel, "npm": cmd_npm, "jar": cmd_jar,
                "manifest": cmd_manifest, "sizes": cmd_sizes}
    if len(argv) < 2 or argv[0] not in commands:
        die(__doc__.strip())
    commands[argv[0]](Path(argv[1]).resolve(), *argv[2:])


if __name__ == "__main__":
    main(sys.argv[1:])
