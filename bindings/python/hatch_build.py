"""Wheel build hook: compiles libcapstan with cargo and ships it in the wheel.

`pip install ./bindings/python` (or `pip wheel`) runs this before the wheel is
written. It builds the library of the checkout two levels up with `cargo rustc
--release --lib --crate-type cdylib,staticlib`, the same command as `make lib`
(only without rlib in its crate types does cargo apply the release profile's
LTO), so an up-to-date build is reused; cargo honours CARGO_TARGET_DIR (and
`build.target-dir`), and the library's path is read from cargo's own report of what it built. The library
goes into the package as capstan/libcapstan.so (.dylib, .dll), where
capstan._lib looks first, and the wheel is tagged for this platform
(py3-none-<platform>: the package calls the library through ctypes, so it works
with any Python 3 but only on the platform the library was built for). On
Linux the copy is stripped (`$STRIP`, default `strip`, when found), as `make
install` strips it (docs/performance.md, Sizes).

An editable install (`pip install -e`) builds the library too but does not copy
it: the package then finds it in the checkout's target/release.

Two environment variables build a wheel from a library built elsewhere:
CAPSTAN_WHEEL_LIBRARY, the library to ship instead of running cargo, and
CAPSTAN_WHEEL_PLATFORM, the wheel's platform tag when it is not this machine's
(`win_amd64` for the capstan.dll that `make windows-lib` cross-builds with
mingw-w64: `make python-wheel-windows`). The file name inside the package
follows the tag (capstan.dll for win_*, libcapstan.dylib for macosx_*,
libcapstan.so otherwise), and the library must be of that platform's format
(PE, Mach-O, ELF), or the build stops. A Linux wheel is tagged linux_x86_64
here; `auditwheel repair` (`make python-wheel`) retags it manylinux, the tag a
package index accepts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# The file name cargo gives the cdylib on each platform, which is also the name
# capstan._lib looks for inside the package, keyed by the start of the wheel's
# platform tag, with the first bytes of that platform's library format.
_LIBRARIES = (
    ("win", "capstan.dll", b"MZ", "a PE DLL"),
    ("macosx", "libcapstan.dylib", (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe"), "a Mach-O dylib"),
)
_ELF = ("", "libcapstan.so", b"\x7fELF", "an ELF shared object")


def _library_for(platform: str) -> tuple[str, bytes | tuple[bytes, ...], str]:
    """(file name in the package, magic bytes, format) for a platform tag."""
    for prefix, name, magic, kind in _LIBRARIES:
        if platform.startswith(prefix):
            return name, magic, kind
    return _ELF[1:]


def _host_platform_tag() -> str:
    # What bdist_wheel writes for a platform wheel: linux_x86_64,
    # macosx_11_0_arm64, win_amd64.
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


class CargoBuildHook(BuildHookInterface):
    PLUGIN_NAME = "cargo"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        # The sdist (tools/dist/sdist.py) carries the Rust workspace under
        # rust/; a checkout has it two levels up.
        checkout = Path(self.root).resolve() / "rust"
        if not (checkout / "Cargo.toml").is_file():
            checkout = Path(self.root).resolve().parent.parent
        manifest = checkout / "Cargo.toml"
        if not manifest.is_file():
            raise RuntimeError(
                f"capstan's wheel is built from a source checkout: {manifest} is missing. "
                "Run `pip install ./bindings/python` (or `pip wheel`) in the capstan repository."
            )
        platform = os.environ.get("CAPSTAN_WHEEL_PLATFORM") or _host_platform_tag()
        name, magic, kind = _library_for(platform)
        prebuilt = os.environ.get("CAPSTAN_WHEEL_LIBRARY")
        if prebuilt:
            library = Path(prebuilt).resolve()
            self._check_format(library, platform, magic, kind)
        elif platform != _host_platform_tag():
            raise RuntimeError(
                f"CAPSTAN_WHEEL_PLATFORM={platform} is not this machine's platform "
                f"({_host_platform_tag()}): cargo would build the wrong library. "
                "Set CAPSTAN_WHEEL_LIBRARY to a library built for it (`make python-wheel-windows`)."
            )
        else:
            library = self._cargo_build(manifest, name)
        if version == "editable":
            return
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{platform}"
        build_data["force_include"][str(self._stripped(library, platform))] = f"capstan/{name}"
        build_data["force_include"][str(checkout / "LICENSE")] = "capstan/LICENSE"

    @staticmethod
    def _check_format(library: Path, platform: str, magic: bytes | tuple[bytes, ...], kind: str) -> None:
        try:
            with library.open("rb") as file:
                head = file.read(4)
        except OSError as exc:
            raise RuntimeError(f"CAPSTAN_WHEEL_LIBRARY={library}: cannot read it: {exc}") from exc
        if not head.startswith(magic):
            raise RuntimeError(
                f"CAPSTAN_WHEEL_LIBRARY={library} is not {kind}, which a {platform} wheel must carry "
                f"(it starts with {head!r}); set CAPSTAN_WHEEL_PLATFORM to the library's platform"
            )

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    def _stripped(self, library: Path, platform: str) -> Path:
        # The host's strip for a Linux wheel built on Linux; for another
        # platform's library only an explicit $STRIP (x86_64-w64-mingw32-strip).
        explicit = os.environ.get("STRIP")
        if explicit is None and not (platform.startswith("linux") and sys.platform.startswith("linux")):
            return library
        strip = shutil.which(explicit or "strip")
        if strip is None:
            return library
        self._scratch = tempfile.mkdtemp(prefix="capstan-wheel-")
        copy = Path(self._scratch) / library.name
        shutil.copy2(library, copy)
        run = subprocess.run([strip, "--strip-unneeded", str(copy)], check=False)
        if run.returncode != 0:
            self.app.display_warning(f"{strip} failed on {copy}: the wheel carries the library unstripped")
            return library
        return copy

    def _cargo_build(self, manifest: Path, wanted: str) -> Path:
        cargo = os.environ.get("CARGO", "cargo")
        command = [
            cargo,
            "rustc",
            "--release",
            "--lib",
            "--crate-type",
            "cdylib,staticlib",
            "--manifest-path",
            str(manifest),
            "--message-format=json-render-diagnostics",
        ]
        self.app.display_info(f"building libcapstan: {' '.join(command)}")
        try:
            # stdout carries cargo's JSON messages; its progress and errors go
            # to stderr, straight to the user.
            run = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
        except FileNotFoundError as exc:
            raise RuntimeError(
                f"building capstan needs Rust's cargo on PATH (or $CARGO), and {cargo!r} was not found. "
                "Install a Rust toolchain (rustup) and a C compiler, then retry."
            ) from exc
        if run.returncode != 0:
            raise RuntimeError(f"`{' '.join(command)}` failed with exit status {run.returncode}")
        for line in run.stdout.splitlines():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("reason") != "compiler-artifact":
                continue
            if message.get("target", {}).get("name") != "capstan":
                continue
            for filename in message.get("filenames", []):
                if Path(filename).name == wanted:
                    return Path(filename)
        raise RuntimeError(f"cargo built capstan but reported no {wanted}; its crate types must include cdylib")
