"""A lone call that the binding runs itself once capstan_registry_check_call has
validated it (ToolRegistry._check): the function called as the trampoline
would call it, and its result written as capstan would write a batch's."""

from __future__ import annotations

import time
from typing import Any

from ._callbacks import _Entry, tool_function
from ._calls import ToolCall, ToolResult
from ._tools import render_result

_now = time.perf_counter_ns


def _tool_function(entry: _Entry, args: dict[str, Any]) -> Any:
    """The function to call, with ``args`` completed as the trampoline does."""
    return entry.fn if entry.plain else tool_function(entry, args)


def _ok(call: ToolCall, value: Any, started: int) -> ToolResult:
    content = value if type(value) is str else render_result(value)
    if not content.isascii():  # as capstan hands back what the trampoline sends
        content = content.encode("utf-8", "backslashreplace").decode()
    return ToolResult(call.id, call.name, content, False, value, "ok", (_now() - started) // 1000)


def _failed(call: ToolCall, exc: Exception, started: int) -> ToolResult:
    message = str(exc)
    content = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    if not content.isascii():
        content = content.encode("utf-8", "backslashreplace").decode()
    duration = (_now() - started) // 1000
    return ToolResult(call.id, call.name, content, True, None, "tool_error", duration, exc)


def _run_here(call: ToolCall, entry: _Entry, args: dict[str, Any]) -> ToolResult:
    """Runs a checked sync call on this thread (the fast path)."""
    started = _now()
    try:
        value = _tool_function(entry, args)(**args)
        return _ok(call, value, started)
    except Exception as exc:
        return _failed(call, exc, started)


async def _await_here(call: ToolCall, entry: _Entry, args: dict[str, Any]) -> ToolResult:
    """Runs a checked async call in the awaiting task (the fast path)."""
    started = _now()
    try:
        value = await _tool_function(entry, args)(**args)
        return _ok(call, value, started)
    except Exception as exc:
        return _failed(call, exc, started)
