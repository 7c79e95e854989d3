"""The state every part of ToolRegistry shares (the native registry, its tools,
the uses in flight) and its lifetime: closing, freeing when idle, at exit."""

from __future__ import annotations

import collections
import ctypes
import itertools
import threading
from typing import Any

from . import _lib, _lifecycle
from ._callbacks import _Entry
from ._errors import RegistryClosedError
from ._lifecycle import _open_registries, _reap_later
from ._tools import Tool


# The library, bound once it is loaded.
_L: Any = None


def _library() -> Any:
    global _L
    if _L is None:
        _L = _lifecycle._library()
    return _L


class _RegistryCore:
    """What ToolRegistry's parts (_registry_*.py) share; ToolRegistry is their sum."""

    def __init__(self, *, coerce: bool, max_result_bytes: int, strict: bool) -> None:
        library = _library()
        options = _lib.RegistryOptions(
            ctypes.sizeof(_lib.RegistryOptions), _lib.REGISTRY_COERCE if coerce else 0, max_result_bytes
        )
        out = ctypes.c_void_p()
        status = library.registry_new(ctypes.byref(options), ctypes.byref(out))
        if status != _lib.OK:
            raise library.error(status, "cannot create a capstan registry")
        self._ptr: int | None = out.value
        # The pointer as the lone call's check passes it (_registry_lone):
        # made once, sent as is.
        self._ptr_arg = ctypes.c_void_p.from_param(out.value)
        self._max_result_bytes = max_result_bytes
        self._strict = bool(strict)
        self._check_flags = _lib.EXEC_STRICT_NULLS if strict else 0
        self._tools: dict[str, Tool] = {}
        # Tools a lone call may run on the fast path (_check): no approval
        # gate, timeout or output cap; by name, their trampoline entries and
        # encoded names.
        self._lean: dict[str, tuple[_Entry, bytes]] = {}
        # Tools aexecute* may start inline on the loop's thread (the
        # parallel-safe ones): see _run_submitted.
        self._inline_safe: set[str] = set()
        # Tools whose calls a host batch hands to the binding (_host), by
        # name: their trampoline entries.
        self._host_run: dict[str, _Entry] = {}
        self._lock = threading.RLock()
        # Uses in flight (entered - left); the registry is freed after the last.
        # itertools.count: next() is atomic, where `+= 1` is not.
        self._entered = itertools.count()
        self._left = itertools.count()
        self._closing = False
        # While an event hook is set, lone calls go through the core (which
        # emits the events) instead of the fast path.
        self._hooked = False
        # Lone calls of the fast path, by (tool, outcome): added to stats().
        self._lone: dict[tuple[str, str], itertools.count[int]] = {}
        # Threads that called pump: capstan runs the main-thread calls of the
        # batches they execute on them (see ``execute``).
        self._pumped: set[int] = set()
        # aexecute's calls queued in this turn of each running loop (_tick).
        self._ticks: dict[Any, list[Any]] = {}
        _open_registries.add(self)

    # -- lifetime ----------------------------------------------------------------------

    def _enter(self) -> int:
        next(self._entered)
        ptr = self._ptr
        if ptr is None or self._closing:
            self._leave()
            raise RegistryClosedError("the tool registry is closed", "CAPSTAN_ERR_SHUTTING_DOWN")
        return ptr

    def _leave(self) -> None:
        next(self._left)
        if self._closing:
            self._free_when_idle()

    def _free_when_idle(self) -> None:
        with self._lock:
            ptr = self._ptr
            if ptr is None or _count(self._entered) != _count(self._left):
                return
            self._ptr = None
        _L.registry_free(ptr)

    def close(self) -> None:
        """Frees the native registry: unregisters every tool. Executions in
        flight finish first (the last one frees it), and freeing waits for
        every tool call still running, without limit. Idempotent."""
        with self._lock:
            if self._closing:
                return
            self._closing = True  # before counting the uses in flight: see _enter
        self._free_when_idle()

    def _shutdown(self, timeout_ms: int) -> bool:
        """At exit: capstan_registry_close, waiting at most ``timeout_ms`` for
        the tool callbacks still running, then the registry is freed (by the
        last use in flight, if any: close reported their calls cancelled).
        True if callbacks were still running when the wait ended."""
        next(self._entered)  # a use: nothing frees it meanwhile
        try:
            with self._lock:
                self._closing = True
                ptr = self._ptr  # None: already freed
            return ptr is not None and _L.registry_close(ptr, timeout_ms) == _lib.ERR_TIMEOUT
        finally:
            self._leave()  # frees it when idle; free does not wait again

    @property
    def closed(self) -> bool:
        return self._closing

    def __del__(self) -> None:
        ptr = getattr(self, "_ptr", None)
        if ptr is not None and not self._closing:
            self._ptr = None
            _reap_later(ptr)


_drain = collections.deque


def _advance(counter: itertools.count[int], n: int) -> None:
    """Takes ``n`` values of ``counter`` (in C: no Python step per value)."""
    _drain(itertools.islice(counter, n), maxlen=0)


def _count(counter: itertools.count[int]) -> int:
    """The next value of an itertools.count, without taking it."""
    return int(repr(counter)[6:-1])


