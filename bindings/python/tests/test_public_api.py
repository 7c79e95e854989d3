"""The public surface (issue #34): every name of capstan.__all__ exists, the
annotations of every public function and method resolve, and every capstan
type they name is itself public; stream() and mount_mcp() return their
classes, not Any."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import capstan


def _capstan_types(hint: object) -> set[type]:
    found: set[type] = set()
    if isinstance(hint, type) and hint.__module__.startswith("capstan"):
        found.add(hint)
    for arg in typing.get_args(hint):
        found |= _capstan_types(arg)
    return found


def _public_callables():
    for name in capstan.__all__:
        item = getattr(capstan, name)
        if inspect.isclass(item):
            # The class and the capstan classes it is made of (ToolRegistry's
            # parts live in _registry_*.py), as the class resolves them.
            seen: set[str] = set()
            for klass in item.__mro__:
                if not klass.__module__.startswith("capstan"):
                    continue
                for attr, member in vars(klass).items():
                    if not attr.startswith("_") and callable(member) and attr not in seen:
                        seen.add(attr)
                        yield f"{name}.{attr}", member
        elif inspect.isfunction(item):
            yield name, item


def test_every_name_in_all_exists_and_is_unique():
    assert len(set(capstan.__all__)) == len(capstan.__all__)
    missing = [n for n in capstan.__all__ if not hasattr(capstan, n)]
    assert missing == []
    assert sorted(capstan.__all__) == capstan.__all__


def test_public_annotations_resolve_and_name_only_public_types():
    public = {getattr(capstan, n) for n in capstan.__all__ if inspect.isclass(getattr(capstan, n))}
    leaks: dict[str, set[str]] = {}
    for where, fn in _public_callables():
        hints = typing.get_type_hints(fn)  # raises for a name that does not resolve
        for hint in hints.values():
            hidden = {t.__name__ for t in _capstan_types(hint) if t not in public}
            if hidden:
                leaks.setdefault(where, set()).update(hidden)
    assert leaks == {}


def test_stream_and_mount_mcp_return_their_classes():
    assert typing.get_type_hints(capstan.ToolRegistry.stream)["return"] is capstan.Stream
    assert typing.get_type_hints(capstan.ToolRegistry.mount_mcp)["return"] is capstan.McpMount
    assert typing.get_type_hints(capstan.ToolRegistry.start_mcp_server)["return"] is capstan.McpServer
    assert typing.get_type_hints(capstan.parse_calls)["return"] == list[capstan.ToolCall]
    with capstan.ToolRegistry() as r:
        with r.stream("anthropic") as s:
            assert isinstance(s, capstan.Stream)


def test_the_package_type_checks(tmp_path):
    """mypy (pinned in tests/python-requirements.txt) finds no error in the
    package: its annotations are what the code does."""
    pytest.importorskip("mypy", reason="mypy comes with build/venv (make setup-deps)")
    package = Path(capstan.__file__).resolve().parent
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--python-version", "3.11", "--ignore-missing-imports",
         "--cache-dir", str(tmp_path), "--no-error-summary", str(package)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
