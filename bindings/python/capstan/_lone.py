"""A lone call that the binding runs itself once capstan_registry_check_call has
validated it (ToolRegistry._check): the function called as the trampoline
would call it, and its result written as capstan would write a batch's."""

from __future__ import annotations

import ctypes
import time
from typing import Any

import json

from . import _lib
from ._callbacks import _TEXT_ONLY, _Entry, observe, tool_function
from ._calls import ToolCall, ToolResult
from ._content import content_parts
from ._context import Context
from ._tools import render_result

_now = time.perf_counter_ns


def _tool_function(call: ToolCall, entry: _Entry, args: dict[str, Any]) -> Any:
    """The function to call, with ``args`` completed as the trampoline does."""
    if entry.plain:
        return entry.fn
    fn = tool_function(entry, args)
    if entry.context is not None:  # no timeout on this path, nothing cancels it
        args[entry.context] = Context(call.id, call.name, None)
    return fn


def _ok(call: ToolCall, value: Any, started: int, limit: int = 0) -> ToolResult:
    kind = type(value)
    if kind is str:
        content = value
    else:
        if kind not in _TEXT_ONLY:
            parts = content_parts(value)
            if parts is not None:
                return _with_parts(call, value, parts, started, limit)
        content = render_result(value)
    if not content.isascii():  # as capstan hands back what the trampoline sends
        content = content.encode("utf-8", "backslashreplace").decode()
    return ToolResult(call.id, call.name, content, False, value, "ok", (_now() - started) // 1000)


def _with_parts(call: ToolCall, value: Any, parts: str, started: int, limit: int) -> ToolResult:
    """A lone call whose tool returned images or files: capstan's core checks
    the parts and writes their text (capstan_format_write_results on a
    normalized result), as it does for a call it runs; the size bound is
    checked here, since the core applies it only to calls it completes."""
    blocks = json.loads(parts)
    duration = (_now() - started) // 1000
    library: Any = _lib.lib()  # its functions are attributes set at load time
    total = sum(len(getattr(v, "data", b"")) for v in (value if type(value) in (list, tuple) else [value]))
    bound = limit or 10 * 1024 * 1024
    why = None
    if total > bound:
        why = (
            f"its images and files ({total} bytes decoded) are past the size limit of this result "
            f"({bound} bytes, the registry's max_result_bytes): return a smaller or compressed file, or fewer parts"
        )
    else:
        body = json.dumps([{"id": call.id, "name": call.name, "content": "", "parts": blocks}]).encode()
        out, size = ctypes.c_void_p(), ctypes.c_size_t()
        status = library.format_write_results(
            _lib.FORMAT_DESCRIBE, body, len(body), ctypes.byref(out), ctypes.byref(size)
        )
        if status == _lib.OK:
            content = json.loads(library.take_text(out, size))[0]["content"]
            return ToolResult(call.id, call.name, content, False, value, "ok", duration)
        why = library.last_error_text().split("result 0: ", 1)[-1]
    content = f'Tool "{call.name}" returned content parts that cannot be sent: {why}'
    return ToolResult(call.id, call.name, content, True, None, "tool_error", duration)


def _failed(call: ToolCall, exc: Exception, started: int) -> ToolResult:
    message = str(exc)
    content = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    if not content.isascii():
        content = content.encode("utf-8", "backslashreplace").decode()
    duration = (_now() - started) // 1000
    return ToolResult(call.id, call.name, content, True, None, "tool_error", duration, exc)


def _run_here(call: ToolCall, entry: _Entry, args: dict[str, Any], limit: int = 0) -> ToolResult:
    """Runs a checked sync call on this thread (the fast path)."""
    started = _now()
    try:
        value = _tool_function(call, entry, args)(**args)
        observe(entry, started)
        return _ok(call, value, started, limit)
    except Exception as exc:
        observe(entry, started)
        return _failed(call, exc, started)
