"""What a registry tells its host and asks of it: the approver
(capstan_registry_set_approver), the event hook
(capstan_registry_set_event_hook) and the wake-up notifier
(capstan_registry_set_notify).

Each Python callable is kept in ``_held`` under an integer key passed as
``user_data`` (never an object address); the destroy callback capstan runs
once after the last invocation removes it. Call ids: the calls of
``execute*`` carry internal ids (``py<token>.<index>``, see _callbacks); the
approver and the hook see the caller's own :attr:`ToolCall.id` instead.
"""

from __future__ import annotations

import asyncio
import ctypes
import dataclasses
import inspect
import itertools
import json
import threading
from collections.abc import Awaitable, Callable
from ctypes import CFUNCTYPE, POINTER, Structure, c_double, c_size_t, c_uint32, c_uint64, c_void_p
from typing import Any, Literal, Union

from . import _lib
from ._callbacks import _loop_for_sync_callers, public_id
from ._context import LogLevel

__all__ = ["ApprovalRequest", "Approver", "EventKind", "ToolEvent"]


class _Event(Structure):
    """capstan_event: borrowed for the hook's call; strings not NUL-terminated."""

    _fields_ = [
        ("kind", c_uint32),
        ("tool", c_void_p),
        ("tool_len", c_size_t),
        ("id", c_void_p),
        ("id_len", c_size_t),
        ("index", c_size_t),
        ("outcome", c_uint32),
        ("duration_us", c_uint64),
        # Appended (CAPSTAN_EVENT_PROGRESS): set for "progress" events only.
        ("progress", c_double),
        ("total", c_double),
        ("message", c_void_p),
        ("message_len", c_size_t),
        # Appended (CAPSTAN_EVENT_LOG): set for "log" events only.
        ("level", c_uint32),
    ]


EVENT_FN = CFUNCTYPE(None, c_void_p, POINTER(_Event))
APPROVER_FN = CFUNCTYPE(None, c_void_p, c_void_p)
NOTIFY_FN = CFUNCTYPE(None, c_void_p)

EventKind = Literal["started", "finished", "timed_out", "cancelled", "progress", "log", "replayed"]
_KINDS: tuple[EventKind, ...] = ("started", "finished", "timed_out", "cancelled", "progress", "log", "replayed")
_PROGRESS = 4
_LOG = 5


@dataclasses.dataclass(frozen=True, slots=True)
class ToolEvent:
    """One call's event, as the registry's hook (:meth:`ToolRegistry.on_event`)
    sees it: ``kind`` ``"started"`` (its function is about to run),
    ``"finished"`` (it has its result: ``outcome`` and ``duration_us`` set),
    ``"timed_out"`` or ``"cancelled"`` (each followed by its ``"finished"``),
    ``"progress"`` (the tool reported progress, :meth:`Context.progress`, or
    a mounted MCP server's ``notifications/progress`` for the call:
    ``progress``, ``total`` (None when unknown) and ``message`` (None when
    none) set, ``duration_us`` the time since the call started), ``"log"``
    (the tool sent a log message, :meth:`Context.log`: ``level``, one of
    MCP's names ``"debug"`` to ``"emergency"``, and ``message`` set,
    ``duration_us`` as for progress), ``"replayed"`` (answered from the
    registry's journal without running: :meth:`ToolRegistry.set_journal`;
    its ``"finished"`` follows). ``call_id`` is the :class:`ToolCall`'s id (the provider's, under
    ``run_turn``); ``index`` the call's position in its batch."""

    kind: EventKind
    tool: str
    call_id: str
    index: int
    outcome: str | None = None
    duration_us: int = 0
    progress: float | None = None
    total: float | None = None
    message: str | None = None
    level: LogLevel | None = None


class ApprovalRequest:
    """A call of a ``requires_approval`` tool waiting for the approver's
    decision: :attr:`tool`, :attr:`call_id` (the :class:`ToolCall`'s id),
    :attr:`arguments` (validated, defaults filled). Decide it exactly once,
    from any thread, now or later: :meth:`approve` runs the call,
    :meth:`deny` ends it ``denied`` with ``reason`` for the model."""

    __slots__ = ("_handle", "tool", "call_id", "arguments", "_lock", "_decided")

    def __init__(self, handle: int, tool: str, call_id: str, arguments: dict[str, Any]) -> None:
        self._handle = handle
        self.tool = tool
        self.call_id = call_id
        self.arguments = arguments
        self._lock = threading.Lock()
        self._decided = False

    @property
    def decided(self) -> bool:
        return self._decided

    def approve(self) -> bool:
        """Lets the call run. False if it was already decided or ended
        otherwise (its batch cancelled, its deadline passed, the registry
        closed)."""
        return self._decide(True, None)

    def deny(self, reason: str | None = None) -> bool:
        """Ends the call ``denied``; ``reason`` is what the model reads. False
        as for :meth:`approve`."""
        return self._decide(False, reason)

    def _decide(self, approve: bool, reason: str | None) -> bool:
        with self._lock:
            if self._decided:
                return False
            self._decided = True
        text = None if reason is None else reason.encode("utf-8", "backslashreplace")
        library: Any = _lib.lib()
        status = library.approval_decide(self._handle, approve, text, 0 if text is None else len(text))
        return bool(status == _lib.OK)

    def __repr__(self) -> str:
        return f"<ApprovalRequest {self.tool}({self.arguments!r}) id={self.call_id!r}>"


Decision = Union[bool, str, None]
#: The approver: gets each waiting call; returns True (approve), False
#: (deny), a string (deny, with that reason for the model) or None (it
#: decides later through the request); may be ``async def`` (it then runs
#: on the binding's own event loop thread).
Approver = Callable[[ApprovalRequest], Union[Decision, Awaitable[Decision]]]

_held: dict[int, Any] = {}
_keys = itertools.count(1)


def hold(value: Any) -> int:
    key = next(_keys)
    _held[key] = value
    return key


def _release(key: int) -> None:
    _held.pop(key, None)


def _text(ptr: int | None, size: int) -> str:
    return ctypes.string_at(ptr, size).decode("utf-8", "replace") if ptr else ""


def _on_event(key: int, event: Any) -> None:
    hook = _held.get(key)
    if hook is None:
        return
    e = event.contents
    if e.kind >= len(_KINDS):
        return  # a kind this binding does not know (the header's rule)
    kind = _KINDS[e.kind]
    outcome = _lib.OUTCOMES[e.outcome] if kind == "finished" and e.outcome < len(_lib.OUTCOMES) else None
    raw = ctypes.string_at(e.id, e.id_len) if e.id else b""
    tool, call_id = _text(e.tool, e.tool_len), public_id(raw)
    if e.kind == _PROGRESS:
        message = _text(e.message, e.message_len) if e.message else None
        total = e.total or None
        hook(ToolEvent(kind, tool, call_id, e.index, None, e.duration_us, e.progress, total, message))
        return
    if e.kind == _LOG:
        level = _lib.LOG_LEVELS[e.level] if e.level < len(_lib.LOG_LEVELS) else None
        hook(ToolEvent(kind, tool, call_id, e.index, None, e.duration_us, message=_text(e.message, e.message_len), level=level))
        return
    hook(ToolEvent(kind, tool, call_id, e.index, outcome, e.duration_us))


def _on_approval(key: int, handle: int) -> None:
    approver = _held.get(key)
    library: Any = _lib.lib()
    size = c_size_t()
    tool = library.approval_tool(handle, ctypes.byref(size))
    tool_name = tool.decode("utf-8", "replace") if tool else ""
    raw = library.approval_id(handle, ctypes.byref(size)) or b""
    arguments = library.approval_arguments(handle, ctypes.byref(size))
    request = ApprovalRequest(handle, tool_name, public_id(raw), json.loads(arguments) if arguments else {})
    if approver is None:  # removed meanwhile
        request.deny("No approver.")
        return
    try:
        decision = approver(request)
    except Exception as exc:
        request.deny(f"The approver failed: {type(exc).__name__}: {exc}")
        return
    if inspect.isawaitable(decision):
        future = asyncio.run_coroutine_threadsafe(_awaited(decision), _loop_for_sync_callers())
        future.add_done_callback(lambda f: _settle(request, f))
        return
    _apply(request, decision)


async def _awaited(decision: Any) -> Any:
    return await decision


def _settle(request: ApprovalRequest, future: Any) -> None:
    if future.cancelled():
        request.deny("The approver was cancelled.")
        return
    exc = future.exception()
    if exc is not None:
        request.deny(f"The approver failed: {type(exc).__name__}: {exc}")
        return
    _apply(request, future.result())


def _apply(request: ApprovalRequest, decision: Any) -> None:
    if decision is None:
        return  # decided later, through the request
    if isinstance(decision, str):
        request.deny(decision)
    elif decision:
        request.approve()
    else:
        request.deny(None)


def _on_notify(key: int) -> None:
    notify = _held.get(key)
    if notify is not None:
        notify()


def _on_release(key: int) -> None:
    _release(key)


# Module-level: ctypes keeps a callback alive only while it is referenced.
EVENT_TRAMPOLINE = EVENT_FN(_on_event)
APPROVER_TRAMPOLINE = APPROVER_FN(_on_approval)
NOTIFY_TRAMPOLINE = NOTIFY_FN(_on_notify)
RELEASE = _lib.DESTROY_FN(_on_release)
