"""capstan's own threads, process-wide: how many run tools
(``capstan_runtime_configure``) and joining them all
(``capstan_runtime_shutdown``)::

    import capstan

    capstan.runtime.configure(threads=4, keep_alive=1.0)
    ...
    capstan.runtime.shutdown(timeout=5.0)   # e.g. before unloading, or in a test

capstan keeps working after :func:`shutdown`: the next call that needs a
thread starts it again, and :func:`configure`'s settings stay in force.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

from . import _callbacks, _lib, _lifecycle
from ._errors import CapstanError

__all__ = ["configure", "shutdown"]


def _ms(seconds: float | None, what: str, forever: int) -> int:
    """Seconds as capstan's milliseconds (None: ``forever``); at least 1 ms."""
    if seconds is None:
        return forever
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds >= 0 or math.isinf(seconds):
        raise ValueError(f"{what} must be a finite number of seconds >= 0 or None, got {seconds!r}")
    return min(max(1, math.ceil(seconds * 1000)) if seconds else 0, _lib.WAIT_FOREVER - 1)


def configure(threads: int | None = None, keep_alive: float | None = None) -> None:
    """Sets how capstan runs its pool, process-wide, at any time (also once
    threads run): ``threads``, the cap on pool threads running tool calls at
    once (None: 256; a hard cap: lowering it lets the threads over it end
    once their current call returns); ``keep_alive``, the seconds an idle
    pool thread waits for work before it ends (None: 10 s; past one idle
    thread per core, idle threads end after at most 1 s). ``configure()``
    with no argument restores the defaults.

    Raises:
        ValueError: ``threads`` not an int in 1 .. 2**32 - 1, ``keep_alive``
            not a finite number of seconds > 0.
    """
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads < 2**32):
        raise ValueError(f"threads must be an int from 1 to 2**32 - 1 or None, got {threads!r}")
    if keep_alive is not None and (isinstance(keep_alive, (int, float)) and not isinstance(keep_alive, bool) and keep_alive == 0):
        raise ValueError("keep_alive must be > 0 seconds (None: the default, 10 s)")
    keep_ms = _ms(keep_alive, "keep_alive", 0)
    library: Any = _lifecycle._library()
    options = _lib.RuntimeOptions(ctypes.sizeof(_lib.RuntimeOptions), threads or 0, keep_ms)
    status = library.runtime_configure(ctypes.byref(options))
    if status != _lib.OK:
        raise library.error(status, "capstan_runtime_configure failed")


def shutdown(timeout: float | None = None) -> None:
    """Stops and joins every thread capstan started, process-wide
    (``capstan_runtime_shutdown``): its pool threads (they first finish the
    calls queued and running), its timer thread and the MCP client's
    connection threads; waits at most ``timeout`` seconds (None: as long as
    they run) and cancels nothing itself. Call it from your own thread, with
    the registries' calls done, never from inside a tool.

    Raises:
        CapstanError: ``CAPSTAN_ERR_TIMEOUT`` when threads still run after
            ``timeout``, its message naming what (pool threads in a tool,
            armed timers of calls still running, MCP mounts not yet
            unmounted, MCP servers not yet stopped); they go on running.
        RuntimeError: when called from inside a tool (it would wait for
            itself).
    """
    timeout_ms = _ms(timeout, "timeout", _lib.WAIT_FOREVER)
    if _callbacks._in_tool.get(_callbacks._get_ident()):
        raise RuntimeError("capstan.runtime.shutdown() cannot run inside a tool: it would wait for itself")
    library: Any = _lifecycle._library()
    status = library.runtime_shutdown(timeout_ms)
    if status != _lib.OK:
        raise library.error(status, "capstan_runtime_shutdown: threads still run", CapstanError)
