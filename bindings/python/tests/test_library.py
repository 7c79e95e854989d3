import os
import subprocess
import sys
import textwrap
from pathlib import Path

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


def test_tools_still_running_at_exit_finish_before_the_interpreter_ends():
    proc = run_python(
        """
        import time
        from capstan import ToolCall, ToolRegistry, tool

        @tool(timeout=0.05)
        def slow() -> str:
            time.sleep(0.3)
            print("tool finished", flush=True)
            return "late"

        registry = ToolRegistry([slow])
        print(registry.execute(ToolCall("slow")).outcome, flush=True)
        """,
        {"CAPSTAN_LIB": capstan._lib.lib().path},
    )
    assert proc.returncode == 0, proc
    assert proc.stdout.split() == ["timeout", "tool", "finished"], proc
