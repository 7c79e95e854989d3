"""A journal kept by the host (capstan_journal_new): the :class:`JournalStore`
protocol and the ctypes callbacks capstan calls it through.

Each store is kept in ``_stores`` under an integer key passed as
``user_data`` (never an object address); capstan's destroy callback, which
runs exactly once when the journal and every registry using it are gone,
removes it. The three trampolines are module-level, so they live as long as
the library can call them.

capstan calls ``record`` and ``lookup`` on the thread running the call: one
of its pool threads, the thread of an ``execute`` running a lone call, or
the event loop's (an ``async def`` tool's result is recorded where it
completes). A ctypes callback takes the GIL for its duration. Nothing may
leave a callback: an exception would cross into native code (ctypes would
print it and hand capstan 0, "recorded"), so every one fails the call
instead (a non-zero return) and is logged to the ``capstan`` logger with its
traceback; a KeyboardInterrupt or SystemExit is then raised again by the
``execute`` of the call once capstan has returned, as a tool's is.
"""

from __future__ import annotations

import _thread
import ctypes
import inspect
import itertools
import json
import logging
import threading
from ctypes import CFUNCTYPE, Structure, c_int32, c_size_t, c_uint32, c_void_p
from typing import Any, Protocol

from . import _callbacks, _lib

__all__ = ["JournalStore"]

_log = logging.getLogger("capstan")


class JournalStore(Protocol):
    """A journal kept in the host's own database or durable engine, for
    :meth:`Journal.custom`. Each record is one JSON object, the same text a
    JSON Lines journal holds per line (docs/durable-calls.md): ``kind``
    ``"started"`` (written before a call's tool runs), ``"completed"`` (its
    result) or ``"tools"`` (the registry's tool list), with ``run`` and
    ``call`` (a ``tools`` record carries its batch's first call id).

    Both methods run on the thread running the call, several at once (keep
    the store thread-safe), and must not call into a registry using the
    journal. Keep them plain functions: an ``async def`` method is refused.
    An exception from ``lookup``, or from ``record`` of a ``started``
    record, fails the call without running its tool (see
    :meth:`Journal.custom` for the others)."""

    def record(self, record_json: str) -> None:
        """Stores one record durably before returning. A later
        ``completed`` record of a (run, call) key replaces its
        ``started``."""
        ...

    def lookup(self, run_id: str, call_id: str) -> str | bytes | None:
        """The record of the key (``completed`` if there is one, else
        ``started``) as :meth:`record` got it; None if there is none."""
        ...


RECORD_FN = CFUNCTYPE(c_int32, c_void_p, c_void_p, c_size_t)
LOOKUP_FN = CFUNCTYPE(c_int32, c_void_p, c_void_p, c_size_t, c_void_p, c_size_t, c_void_p)


class Callbacks(Structure):
    """capstan_journal_callbacks."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("record", RECORD_FN),
        ("lookup", LOOKUP_FN),
        ("user_data", c_void_p),
        ("destroy", _lib.DESTROY_FN),
    ]


# The stores capstan may still call, by their user_data key.
_stores: dict[int, Any] = {}
_keys = itertools.count(1)

_FAILED = 1  # what a callback returns to fail the call


def check(store: Any) -> None:
    """Raises TypeError unless ``store`` has plain ``record`` and
    ``lookup`` methods."""
    for name in ("record", "lookup"):
        method = getattr(store, name, None)
        if not callable(method):
            raise TypeError(
                f"Journal.custom: the store {type(store).__qualname__} has no {name}() method "
                "(a JournalStore needs record(record_json) and lookup(run_id, call_id))"
            )
        if inspect.iscoroutinefunction(method):
            raise TypeError(
                f"Journal.custom: {type(store).__qualname__}.{name} is async def; capstan calls the store "
                "on the thread running the call and waits for it: make it a plain method"
            )


def hold(store: Any) -> int:
    key = next(_keys)
    _stores[key] = store
    return key


def _release(key: int) -> None:
    _stores.pop(key, None)


def _text(ptr: int | None, size: int) -> str:
    return ctypes.string_at(ptr, size).decode() if size and ptr is not None else ""


def _failed(exc: BaseException, store: Any, what: str, then: str, call_id: str | None) -> int:
    if type(exc) is _callbacks.ParkAtExit:  # raised at exit into a tool that runs a journaled call
        _callbacks.park()  # never returns
    _log.error(
        "the journal store %s: %s raised %s: %s",
        type(store).__qualname__,
        what,
        type(exc).__name__,
        then,
        exc_info=exc,
    )
    if not isinstance(exc, Exception):
        _interrupted(exc, call_id)
    return _FAILED


def _interrupted(exc: BaseException, call_id: str | None) -> None:
    """A KeyboardInterrupt or SystemExit is not swallowed: the execution of
    the call re-raises it once its C call has returned (as it does a
    tool's); without one, a KeyboardInterrupt off the main thread
    interrupts it."""
    execution = _callbacks._inline.get(threading.get_ident())
    if execution is None and call_id is not None:
        execution = _callbacks._executions.get(call_id.encode("utf-8", "backslashreplace").partition(b".")[0])
    if execution is not None:
        if execution.raised is None:
            execution.raised = exc
    elif isinstance(exc, KeyboardInterrupt) and threading.current_thread() is not threading.main_thread():
        _thread.interrupt_main()


# What a failed record() costs, by the record's kind (capstan's rules).
_THEN = {
    "started": "the call fails and its tool does not run",
    "completed": "the call keeps its result, but a later run of it finds its outcome unknown",
    "tools": "the run's tool list is not recorded (the calls go on)",
}


def _record_failed(exc: BaseException, store: Any, text: str) -> int:
    """Logs a failed record(), naming the record and what its loss costs."""
    try:
        record = json.loads(text)
        kind, call_id = record["kind"], record["call"]
        what = f"record() of the {kind!r} record of run {record['run']!r}, call {call_id!r}"
    except Exception:
        kind, call_id, what = "", None, "record()"
    return _failed(exc, store, what, _THEN.get(kind, "the call fails"), call_id)


def _on_record(key: int, data: int | None, size: int) -> int:
    store = _stores.get(key)
    text = ""
    try:
        text = _text(data, size)
        if store is None:
            raise LookupError("the store was already released")
        returned = store.record(text)
        if inspect.isawaitable(returned):
            getattr(returned, "close", lambda: None)()
            raise TypeError("record() returned an awaitable: nothing was stored; make it a plain method")
        return 0
    except BaseException as exc:  # nothing may cross into native code
        try:
            return _record_failed(exc, store, text)
        except BaseException:  # a Ctrl-C while logging
            return _FAILED


def _on_lookup(key: int, run: int | None, run_len: int, call: int | None, call_len: int, answer: int | None) -> int:
    store = _stores.get(key)
    what, call_id = "lookup()", None
    try:
        run_id, call_id = _text(run, run_len), _text(call, call_len)
        what = f"lookup({run_id!r}, {call_id!r})"
        if store is None:
            raise LookupError("the store was already released")
        found = store.lookup(run_id, call_id)
        if found is None:
            return 0
        if isinstance(found, str):
            found = found.encode()
        elif inspect.isawaitable(found):
            getattr(found, "close", lambda: None)()
            raise TypeError("lookup() returned an awaitable; make it a plain method")
        elif not isinstance(found, bytes):
            raise TypeError(f"lookup() returned {type(found).__name__}, not the record's JSON text (str) or None")
        library: Any = _lib.lib()
        status = library.journal_answer_set(answer, found, len(found))
        # Not a record (INVALID_ARGUMENT): capstan keeps why, and fails the call saying so.
        if status not in (_lib.OK, _lib.ERR_INVALID_ARGUMENT):
            raise library.error(status, "capstan refused what lookup() answered")
        return 0
    except BaseException as exc:
        try:
            return _failed(exc, store, what, "the call fails and its tool does not run", call_id)
        except BaseException:  # a Ctrl-C while logging: still never into native code
            return _FAILED


def _on_destroy(key: int) -> None:
    _release(key)


RECORD = RECORD_FN(_on_record)
LOOKUP = LOOKUP_FN(_on_lookup)
DESTROY = _lib.DESTROY_FN(_on_destroy)


def callbacks(key: int) -> Callbacks:
    """The callbacks of the store held under ``key``."""
    return Callbacks(ctypes.sizeof(Callbacks), RECORD, LOOKUP, key, DESTROY)
