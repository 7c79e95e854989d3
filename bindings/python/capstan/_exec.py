"""What one execution sends to capstan and reads back: the calls' payload,
the exec options (timeouts in milliseconds), and the results collected in
call order."""

from __future__ import annotations

import ctypes
import math
from collections.abc import Iterable, Sequence
from typing import Any, overload

from . import _lib
from ._callbacks import _Execution
from ._calls import ToolCall, ToolResult


def _payload(parts: list[str]) -> bytes:
    return (parts[0] if len(parts) == 1 else "[" + ",".join(parts) + "]").encode("utf-8", "backslashreplace")


def _collect(
    calls: Sequence[ToolCall],
    prefix: str,
    results: list[Any],
    execution: _Execution,
    items: Iterable[tuple[str, str, int]],
    keys: list[bytes] | None = None,
) -> list[ToolResult]:
    """Fills ``results`` from capstan's (content, outcome, duration_us), in
    call order, with the Python values the trampoline kept (by the ids sent:
    ``keys``, else ``<prefix>.<index>``)."""
    single = execution.single
    data, errors = execution.data or {}, execution.errors or {}
    items = iter(items)
    for i, call in enumerate(calls):
        if results[i] is not None:
            continue
        content, outcome, duration_us = next(items)
        key = keys[i] if keys is not None else f"{prefix}.{i}".encode()
        if outcome == "ok":
            value = execution.value if single else data.get(key)
            results[i] = ToolResult(call.id, call.name, content, False, value, "ok", duration_us)
        else:
            error = execution.error if single else errors.get(key)
            results[i] = ToolResult(call.id, call.name, content, True, None, outcome, duration_us, error)
    return results


def _milliseconds(seconds: float | None) -> int:
    if not seconds:
        return 0
    return min(max(1, math.ceil(seconds * 1000)), 2**32 - 1)


_options_cache: dict[tuple[int, int, int, int], Any] = {}


def _options(
    parallel: bool,
    limit: int,
    timeout: float | None,
    approved_ids: list[bytes],
    inline: bool = False,
    deadline: float | None = None,
    strict_nulls: bool = False,
    extra_flags: int = 0,
    run_id: bytes | None = None,
) -> tuple[Any, Any]:
    """Exec options for capstan_registry_execute / capstan_batch_submit, and what must stay
    alive during the call. None (capstan's defaults: parallel, limit 8) when
    they match. ``deadline``: seconds from now that bound every call, waits
    included (deadline_ms). ``run_id``: the journal's run (see
    ToolRegistry.set_journal), as :func:`run_bytes` made it."""
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    if deadline is not None and (isinstance(deadline, bool) or not deadline > 0):
        raise ValueError(f"deadline must be a number of seconds > 0, got {deadline!r}")
    timeout_ms = _milliseconds(timeout)
    deadline_ms = _milliseconds(deadline)
    flags = (
        (0 if parallel else _lib.EXEC_SEQUENTIAL)
        | (_lib.EXEC_START_INLINE if inline else 0)
        | (_lib.EXEC_STRICT_NULLS if strict_nulls else 0)
        | extra_flags
    )
    key = (flags, min(limit, 2**32 - 1), timeout_ms, deadline_ms)
    size = ctypes.sizeof(_lib.ExecOptions)
    if approved_ids or run_id is not None:
        ids = (ctypes.c_char_p * len(approved_ids))(*approved_ids) if approved_ids else None
        options = _lib.ExecOptions(
            size, flags, key[1], timeout_ms, ids, len(approved_ids), deadline_ms, run_id, len(run_id or b"")
        )
        return ctypes.byref(options), (ids, options, run_id)
    if not flags and limit in (0, 8) and not timeout_ms and not deadline_ms:
        return None, None
    found = _options_cache.get(key)
    if found is None:
        found = ctypes.byref(_lib.ExecOptions(size, flags, key[1], timeout_ms, None, 0, deadline_ms))
        if len(_options_cache) < 64:
            _options_cache[key] = found
    return found, None



@overload
def run_bytes(run_id: str) -> bytes: ...
@overload
def run_bytes(run_id: None) -> None: ...
def run_bytes(run_id: str | None) -> bytes | None:
    """A run id as capstan takes it (UTF-8); None: no journal. Refuses an
    empty or non-string id, naming it."""
    if run_id is None:
        return None
    if not isinstance(run_id, str) or not run_id:
        raise ValueError(f"run_id must be a non-empty string, got {run_id!r}")
    return run_id.encode()


def _keys(prefix: str, calls: Sequence[ToolCall], run: bytes | None) -> tuple[list[bytes], list[bytes] | None]:
    """(the keys an execution is found by in ``_executions``, the keys of its
    calls' values): ``<prefix>`` and ``<prefix>.<i>``; with a journal's run,
    whose calls go with their own ids, the part of each id before a dot (as
    the trampoline looks it up) and the ids."""
    if run is None:
        return [prefix.encode()], None
    ids = [call.id.encode("utf-8", "backslashreplace") for call in calls]
    return sorted({i.partition(b".")[0] for i in ids}), ids
