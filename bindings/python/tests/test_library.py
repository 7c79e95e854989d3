import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import capstan

PACKAGE_PARENT = str(Path(capstan.__file__).resolve().parent.parent)


def run_python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k != "CAPSTAN_LIB"}
    full_env["PYTHONPATH"] = PACKAGE_PARENT
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_version_is_the_librarys():
    assert capstan.version().count(".") == 2


def test_a_bad_capstan_lib_is_a_clear_error():
    proc = run_python(
        """
        import capstan
        try:
            capstan.ToolRegistry()
        except capstan.LibraryNotFoundError as exc:
            print("ERROR:", exc)
        """,
        {"CAPSTAN_LIB": "/nonexistent/libcapstan.so"},
    )
    assert "ERROR: cannot load libcapstan from $CAPSTAN_LIB='/nonexistent/libcapstan.so'" in proc.stdout, proc


def test_schema_helpers_work_without_the_library():
    proc = run_python(
        """
        import capstan
        print(capstan.python_type_to_schema(list[int]))

        @capstan.tool
        def f(x: int) -> int:
            return x

        print(f.parameters["required"], f(2))
        """,
        {"CAPSTAN_LIB": "/nonexistent/libcapstan.so"},
    )
    assert proc.stdout.splitlines() == ["{'type': 'array', 'items': {'type': 'integer'}}", "['x'] 2"], proc


def test_not_found_error_lists_every_place_tried(tmp_path):
    # A copy of the package away from any source checkout, without CAPSTAN_LIB.
    import shutil

    target = tmp_path / "capstan"
    shutil.copytree(Path(capstan.__file__).parent, target, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    proc = subprocess.run(
        [sys.executable, "-c", "import capstan\ntry:\n    capstan.ToolRegistry()\nexcept capstan.LibraryNotFoundError as e:\n    print(e)"],
        env={**{k: v for k, v in os.environ.items() if k != "CAPSTAN_LIB"}, "PYTHONPATH": str(tmp_path),
             "LD_LIBRARY_PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    out = proc.stdout
    if "cannot find libcapstan" not in out:
        # The system library path has a libcapstan: the search ends there.
        assert "capstan" in out or proc.returncode == 0
        return
    assert "CAPSTAN_LIB" in out
    assert str(target / "libcapstan.so") in out
    assert "target/release/libcapstan.so" in out
    assert "find_library" in out


def test_finds_a_source_checkout_build_without_capstan_lib():
    checkout_lib = Path(PACKAGE_PARENT).parent.parent / "target" / "release" / "libcapstan.so"
    if not checkout_lib.is_file():
        import pytest

        pytest.skip("not running from a source checkout with a release build")
    proc = run_python("import capstan; print(capstan._lib.lib().path)")
    assert proc.stdout.strip() == str(checkout_lib), proc


def _fake_checkout_with_bundled_library(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A copy of the package inside a fake source checkout that has a release
    build, with a library bundled in the package too (as a wheel ships it).
    Both are links to the real library, so either loads."""
    import shutil

    real = Path(capstan._lib.lib().path).resolve()
    package_parent = tmp_path / "repo" / "bindings" / "python"
    package = package_parent / "capstan"
    shutil.copytree(Path(capstan.__file__).parent, package, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    bundled = package / "libcapstan.so"
    bundled.symlink_to(real)
    checkout_build = tmp_path / "repo" / "target" / "release" / "libcapstan.so"
    checkout_build.parent.mkdir(parents=True)
    checkout_build.symlink_to(real)
    return package_parent, bundled, checkout_build


def test_the_bundled_library_is_found_before_a_checkout_build(tmp_path):
    if not sys.platform.startswith("linux"):
        import pytest

        pytest.skip("the bundled file name here is the Linux one")
    package_parent, bundled, _ = _fake_checkout_with_bundled_library(tmp_path)
    proc = run_python("import capstan; print(capstan._lib.lib().path)", {"PYTHONPATH": str(package_parent)})
    assert proc.stdout.strip() == str(bundled), proc


def test_capstan_lib_overrides_the_bundled_library(tmp_path):
    if not sys.platform.startswith("linux"):
        import pytest

        pytest.skip("the bundled file name here is the Linux one")
    package_parent, _, _ = _fake_checkout_with_bundled_library(tmp_path)
    chosen = tmp_path / "elsewhere" / "libcapstan.so"
    chosen.parent.mkdir()
    chosen.symlink_to(Path(capstan._lib.lib().path).resolve())
    proc = run_python(
        "import capstan; print(capstan._lib.lib().path)",
        {"PYTHONPATH": str(package_parent), "CAPSTAN_LIB": str(chosen)},
    )
    assert proc.stdout.strip() == str(chosen), proc


@pytest.mark.parametrize(
    ("platform", "name"),
    [("win32", "capstan.dll"), ("darwin", "libcapstan.dylib"), ("linux", "libcapstan.so")],
)
def test_the_bundled_library_name_is_the_platforms(tmp_path, platform, name):
    # A wheel ships the library under the name of its platform (hatch_build.py:
    # capstan.dll in a win_amd64 wheel). The package holds all three names here,
    # each a link to the real library (dlopen ignores the name), and must load
    # the one of the platform sys.platform names, faked after the import (the
    # loader reads it on first use).
    if os.name == "nt":
        pytest.skip("links the real library under each name")
    package_parent, _, _ = _fake_checkout_with_bundled_library(tmp_path)
    package = package_parent / "capstan"
    real = Path(capstan._lib.lib().path).resolve()
    for other in ("capstan.dll", "libcapstan.dylib"):
        (package / other).symlink_to(real)
    proc = run_python(
        f"""
        import sys
        import capstan
        sys.platform = {platform!r}
        print(capstan._lib.lib().path)
        """,
        {"PYTHONPATH": str(package_parent)},
    )
    assert proc.stdout.strip() == str(package / name), proc


def test_tools_still_running_at_exit_finish_before_the_interpreter_ends():
    proc = run_python(
        """
        import time
        from capstan import ToolCall, ToolRegistry, set_exit_timeout, tool

        # The tool outlives its 0.05 s timeout by a second (a loaded machine
        # may fire the timer late), and the exit waits for it however long.
        @tool(timeout=0.05)
        def slow() -> str:
            time.sleep(1.0)
            print("tool finished", flush=True)
            return "late"

        set_exit_timeout(None)
        registry = ToolRegistry([slow])
        print(registry.execute(ToolCall("slow")).outcome, flush=True)
        """,
        {"CAPSTAN_LIB": capstan._lib.lib().path},
    )
    assert proc.returncode == 0, proc
    assert proc.stdout.split() == ["timeout", "tool", "finished"], proc


STUCK_AT_EXIT = """
import time
from capstan import ToolCall, ToolRegistry, set_exit_timeout, tool

@tool(timeout=0.05)
def stuck() -> str:
    time.sleep(60)
    print("tool finished", flush=True)
    return "late"

{setup}
registry = ToolRegistry([stuck])
print(registry.execute(ToolCall("stuck")).outcome, flush=True)
started = time.monotonic()
import atexit
atexit.register(lambda: print("exit began", flush=True))  # LIFO: runs before capstan's handler
"""


def test_a_stuck_tool_does_not_hang_the_exit():
    import time

    started = time.monotonic()
    proc = run_python(
        STUCK_AT_EXIT.format(setup="set_exit_timeout(0.3)"), {"CAPSTAN_LIB": capstan._lib.lib().path}
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc
    assert proc.stdout.split() == ["timeout", "exit", "began"], proc  # the tool never finished
    assert "still running after 0.3 s" in proc.stderr, proc
    assert elapsed < 30, elapsed  # the tool sleeps 60 s; the exit waited 0.3 s for it


def test_the_default_exit_timeout_is_short():
    import time

    started = time.monotonic()
    proc = run_python(STUCK_AT_EXIT.format(setup=""), {"CAPSTAN_LIB": capstan._lib.lib().path})
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc
    assert "tool finished" not in proc.stdout, proc
    assert elapsed < 30, elapsed


def test_dropped_registries_do_not_hang_the_exit_either():
    proc = run_python(
        """
        import gc, time
        from capstan import ToolCall, ToolRegistry, set_exit_timeout, tool

        @tool(timeout=0.05)
        def stuck() -> str:
            time.sleep(60)
            return "late"

        set_exit_timeout(0.3)
        registry = ToolRegistry([stuck])
        print(registry.execute(ToolCall("stuck")).outcome, flush=True)
        del registry  # left to the reaper, which waits for the stuck tool
        gc.collect()
        """,
        {"CAPSTAN_LIB": capstan._lib.lib().path},
    )
    assert proc.returncode == 0, proc
    assert proc.stdout.split() == ["timeout"], proc


def test_close_keeps_the_full_wait():
    import threading
    import time

    finished = threading.Event()

    @capstan.tool(timeout=0.02)
    def slow() -> str:
        time.sleep(1.0)  # a second past the timeout: late timers on a loaded machine still fire first
        finished.set()
        return "late"

    registry = capstan.ToolRegistry([slow])
    assert registry.execute(capstan.ToolCall("slow")).outcome == "timeout"
    assert not finished.is_set()
    registry.close()  # waits for the tool still running, however long
    assert finished.is_set()


def test_set_exit_timeout_checks_its_argument():
    import pytest

    from capstan import _lifecycle as _registry

    before = _registry._exit_timeout
    try:
        for bad in (-1, "2", True):
            with pytest.raises(ValueError):
                capstan.set_exit_timeout(bad)
        capstan.set_exit_timeout(None)
        assert _registry._exit_timeout is None
        capstan.set_exit_timeout(1)
        assert _registry._exit_timeout == 1.0
    finally:
        _registry._exit_timeout = before


def test_exec_options_are_the_whole_current_struct():
    import ctypes

    fields = [name for name, _ in capstan._lib.ExecOptions._fields_]
    assert fields == [
        "struct_size", "flags", "limit", "timeout_ms", "approved_ids", "approved_count", "deadline_ms",
        "run_id", "run_id_len",
    ]
    # deadline_ms is padded to the struct's pointer alignment.
    assert ctypes.sizeof(capstan._lib.ExecOptions) == 16 + 5 * ctypes.sizeof(ctypes.c_void_p)
