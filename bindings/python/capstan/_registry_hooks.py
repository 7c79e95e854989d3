"""ToolRegistry's hooks and main thread: approval, the event hook, wake-ups,
pump, and the statistics the hooks see."""

from __future__ import annotations

import ctypes
import json
import threading
from collections.abc import Callable, Iterable
from typing import Any, TypedDict

from . import _hooks, _json, _lib
from ._calls import ToolCall
from ._exec import _milliseconds
from ._hooks import Approver, ToolEvent
from . import _registry_core as _core
from ._registry_core import _RegistryCore, _count


class ToolStats(TypedDict):
    """One tool's counters in :meth:`ToolRegistry.stats`."""

    calls: int
    outcomes: dict[str, int]
    in_flight: int
    p50_us: int | None
    p99_us: int | None


class _Hooks(_RegistryCore):
    """ToolRegistry's approver, event hook, wake-ups and statistics."""

    def needs_approval(self, calls: Iterable[ToolCall]) -> list[ToolCall]:
        """The calls whose tools require human approval before they run
        (unknown tools need none: they fail anyway). Run the approved ones
        with ``execute(call, approved=True)`` or
        ``execute_many(calls, approved={ids})``; the others end ``denied``."""
        calls = list(calls)
        if not calls:
            return []
        payload = "[" + ",".join(
            f'{{"id":"{i}","name":{_json.dumps(c.name)},"arguments":{{}}}}' for i, c in enumerate(calls)
        ) + "]"
        encoded = payload.encode("utf-8", "backslashreplace")
        ptr = self._enter()
        try:
            out, size = ctypes.c_void_p(), ctypes.c_size_t()
            status = _core._L.registry_needs_approval(ptr, encoded, len(encoded), None, ctypes.byref(out), ctypes.byref(size))
            if status != _lib.OK:
                raise _core._L.error(status, "capstan_registry_needs_approval failed")
            waiting = json.loads(_core._L.take_text(out, size))
        finally:
            self._leave()
        return [calls[item["index"]] for item in waiting]

    def set_approver(self, approver: Approver | None) -> None:
        """Sets (None: removes) the approver of this registry's
        ``requires_approval`` tools (``capstan_registry_set_approver``): it gets
        an :class:`ApprovalRequest` for every such call not approved by the
        caller (``approved=``), on a capstan thread, and returns True
        (approve), False (deny), a string (deny, with that reason for the
        model) or None (it decides later with ``request.approve()`` /
        ``request.deny(reason)``, from any thread). An ``async def``
        approver runs on the binding's own event loop thread. An exception
        denies the call, naming it. Without an approver such calls end
        ``denied``.

        Example:
            >>> registry.set_approver(lambda request: request.tool != "delete_file")  # doctest: +SKIP
        """
        self._set_hook(
            _core._L.registry_set_approver, approver, _hooks.APPROVER_TRAMPOLINE, "capstan_registry_set_approver"
        )

    def on_event(self, hook: Callable[[ToolEvent], Any] | None) -> None:
        """Sets (None: removes) the event hook (``capstan_registry_set_event_hook``):
        called with a :class:`ToolEvent` as each call starts, times out, is
        cancelled and finishes, on the thread where it happens (several at
        once). Keep it quick. While a hook is set, lone calls
        (``execute``/``aexecute``) run through capstan instead of the fast
        path, so that every call has its events."""
        self._set_hook(_core._L.registry_set_event_hook, hook, _hooks.EVENT_TRAMPOLINE, "capstan_registry_set_event_hook")
        self._hooked = hook is not None

    def on_wake(self, notify: Callable[[], Any] | None) -> None:
        """Sets (None: removes) the wake-up callback
        (``capstan_registry_set_notify``): called on any thread when a call of
        a ``main_thread`` tool waits for :meth:`pump`. It must be quick and
        must not call capstan: post to your loop (``loop.call_soon_threadsafe``)."""
        self._set_hook(_core._L.registry_set_notify, notify, _hooks.NOTIFY_TRAMPOLINE, "capstan_registry_set_notify")

    def _set_hook(self, setter: Any, fn: Any, trampoline: Any, what: str) -> None:
        if fn is not None and not callable(fn):
            raise TypeError(f"expected a callable or None, got {type(fn).__name__}")
        ptr = self._enter()
        try:
            if fn is None:
                status = setter(ptr, None, None, None)
            else:
                status = setter(ptr, trampoline, _hooks.hold(fn), _hooks.RELEASE)  # on failure RELEASE ran
            if status != _lib.OK:
                raise _core._L.error(status, f"{what} failed")
        finally:
            self._leave()

    def pump(self, budget: float = 0.0) -> int:
        """Runs the calls of ``main_thread`` tools waiting for this thread
        (``capstan_registry_pump``), for about ``budget`` seconds (at least
        one call if any waits); returns how many ran. Call it from the
        thread that owns your UI or game state; from then on that thread
        also runs the main-thread calls of the batches it executes itself."""
        self._pumped.add(threading.get_ident())
        ptr = self._enter()
        try:
            return int(_core._L.registry_pump(ptr, _milliseconds(budget)))
        finally:
            self._leave()

    def wake_fd(self) -> int:
        """A file descriptor that becomes readable when a ``main_thread``
        call waits for :meth:`pump` (``capstan_registry_wake_fd``): e.g.
        ``loop.add_reader(fd, ...)``; read it (8 bytes on Linux) to reset
        it. Owned by the registry: do not close it."""
        ptr = self._enter()
        try:
            fd = ctypes.c_int32()
            status = _core._L.registry_wake_fd(ptr, ctypes.byref(fd))
            if status != _lib.OK:
                raise _core._L.error(status, "capstan_registry_wake_fd failed")
            return fd.value
        finally:
            self._leave()

    def stats(self) -> dict[str, ToolStats]:
        """Per-tool counters, by tool name (``capstan_registry_stats_json``):
        ``calls``, ``outcomes`` (``{"ok": n, "tool_error": n, ...}``),
        ``in_flight``, and latency percentiles ``p50_us``/``p99_us`` (bucket
        bounds within 25%; None before any call ran). Lone calls of the fast
        path (see ``execute``) count in ``calls`` and ``outcomes``; the
        percentiles and ``in_flight`` are of the calls capstan ran."""
        ptr = self._enter()
        try:
            out, size = ctypes.c_void_p(), ctypes.c_size_t()
            status = _core._L.registry_stats_json(ptr, ctypes.byref(out), ctypes.byref(size))
            if status != _lib.OK:
                raise _core._L.error(status, "capstan_registry_stats_json failed")
            tools: dict[str, ToolStats] = json.loads(_core._L.take_text(out, size))["tools"]
        finally:
            self._leave()
        for (name, outcome), counter in list(self._lone.items()):
            entry = tools.get(name)
            n = _count(counter)
            if entry is not None and n:
                entry["calls"] += n
                entry["outcomes"][outcome] = entry["outcomes"].get(outcome, 0) + n
        return tools
