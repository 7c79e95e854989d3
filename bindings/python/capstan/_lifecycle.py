"""The library's loading and the end of registries: one dropped without
close() is freed on a reaper thread, and those still open at exit are closed
while the interpreter is whole (set_exit_timeout)."""

from __future__ import annotations

import atexit
import ctypes
import sys
import threading
import time
import weakref
from typing import Any, Protocol

from . import _callbacks, _lib
from ._exec import _milliseconds

__all__ = ["set_exit_timeout"]

# The loaded library, for the reaper and the exit handler.
_L: Any = None


def _library() -> Any:
    """The library, loaded on first use; registers the exit handler and the
    pool thread hooks then."""
    global _L
    if _L is None:
        library = _callbacks.library()
        _keep_thread_states(library)
        atexit.register(_close_all_at_exit)
        _L = library
    return _L


# --- one thread state per pool thread --------------------------------------------
#
# A ctypes callback on a thread without a Python thread state makes one on
# entry (PyGILState_Ensure) and deletes it on return: a pool thread would get
# a fresh one per tool call. capstan's pool thread hooks keep one per thread:
# on_start takes one more PyGILState hold, which the callback's own release
# leaves in place (the GIL is released all the same); on_stop gives it back,
# and the callback's release then deletes the thread state, on that thread.

_GILSTATE_LOCKED = 0  # PyGILState_LOCKED: returned when this thread held the GIL


def _hold_thread_state(_user_data: Any) -> None:
    ctypes.pythonapi.PyGILState_Ensure()


def _release_thread_state(_user_data: Any) -> None:
    ctypes.pythonapi.PyGILState_Release(_GILSTATE_LOCKED)


_ON_START = _lib.THREAD_HOOK_FN(_hold_thread_state)
_ON_STOP = _lib.THREAD_HOOK_FN(_release_thread_state)


def _keep_thread_states(library: Any) -> None:
    api = ctypes.pythonapi
    api.PyGILState_Ensure.restype = ctypes.c_int
    api.PyGILState_Ensure.argtypes = []
    api.PyGILState_Release.restype = None
    api.PyGILState_Release.argtypes = [ctypes.c_int]
    library.runtime_set_thread_hooks(_ON_START, _ON_STOP, None, _lib.DESTROY_FN())


# --- closing registries --------------------------------------------------------
#
# Python must not be entered from capstan's threads once the interpreter is
# finalizing: a thread that takes the GIL then is ended with pthread_exit,
# whose unwinding through the library's frames aborts the process. So, at
# exit, every registry still open is closed while the interpreter is whole:
# capstan_registry_close cancels its calls and waits for the tool callbacks
# still running, but at most the exit timeout (set_exit_timeout), so that a
# stuck tool cannot hang the exit; capstan_registry_free then does not wait
# again. A tool still running after that is abandoned where it is, like a
# daemon thread. close() itself keeps the full wait.

class _Registry(Protocol):
    """What the exit handler uses of a ToolRegistry (this module sits below it)."""

    def _shutdown(self, timeout_ms: int) -> bool: ...


_open_registries: weakref.WeakSet[_Registry] = weakref.WeakSet()
_exiting = False
_exit_timeout: float | None = 2.0
_reaper_queue: list[int] = []
_reaper_busy = False
_reaper_wake = threading.Condition()
_reaper: threading.Thread | None = None


def set_exit_timeout(seconds: float | None) -> None:
    """How long the interpreter's exit waits for tool calls still running
    (default 2 seconds; ``None``: as long as they run). Registries still open
    at exit are closed then; a tool still running after this time is
    abandoned and its call reported cancelled."""
    global _exit_timeout
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0):
        raise ValueError(f"the exit timeout must be a number of seconds >= 0 or None, got {seconds!r}")
    _exit_timeout = None if seconds is None else float(seconds)


# How long the exit waits for the threads still running a tool to park.
_PARK_WAIT_S = 1.0
# How long the exit waits for pool threads inside a thread hook to leave it.
# The wait ends as soon as none is; a hook only takes and gives back a
# thread state, and the GIL is free during the wait (a ctypes call), so all
# a thread in one needs is the CPU. 1 s was too short on a loaded machine:
# a retiring thread not scheduled by then entered Python once it was
# finalizing, and its forced unwind aborted the process (1 run in 24 of
# test_exit_while_idle_pool_threads_retire_ends_with_status_0, beside two
# builds).
_HOOKS_WAIT_S = 10.0


def _park_running_tools() -> None:
    """Parks the threads still inside a tool callback (see
    _callbacks.ParkAtExit): while the interpreter is whole, so that none is
    ended by a forced unwind through capstan's frames once it finalizes. A
    tool blocked in C for the whole wait sees it only when it returns."""
    me = threading.get_ident()
    targets = [t for t in list(_callbacks._in_tool) if t != me]
    _callbacks.prepare_parking()
    raise_in = ctypes.pythonapi.PyThreadState_SetAsyncExc
    raise_in.argtypes = [ctypes.c_ulong, ctypes.py_object]
    raised = sum(raise_in(t, _callbacks.ParkAtExit) for t in targets)
    deadline = time.monotonic() + _PARK_WAIT_S
    for _ in range(raised):
        if not _callbacks._parked.acquire(timeout=max(0.0, deadline - time.monotonic())):
            break
    libc, mutex, _ = _callbacks._park_with  # type: ignore[misc]
    libc.pthread_mutex_lock(mutex)  # every thread counted is parked; kept locked


def _reap_later(ptr: int) -> None:
    """Frees a registry dropped without close() on a thread of its own: a
    finalizer may run on any thread, inside any lock, and freeing waits for
    the registry's running tools."""
    global _reaper
    if _exiting or sys.is_finalizing():
        return  # too late to call into capstan safely; the OS reclaims it
    with _reaper_wake:
        _reaper_queue.append(ptr)
        if _reaper is None:
            _reaper = threading.Thread(target=_reap, name="capstan-reaper", daemon=True)
            _reaper.start()
        _reaper_wake.notify_all()


def _reap() -> None:
    global _reaper_busy
    while True:
        with _reaper_wake:
            while not _reaper_queue:
                _reaper_busy = False
                _reaper_wake.notify_all()
                _reaper_wake.wait()
            ptr = _reaper_queue.pop()
            _reaper_busy = True
        # Waits in slices, so that at exit it stops waiting for a stuck tool.
        while _L.registry_close(ptr, 100) == _lib.ERR_TIMEOUT and not _exiting:
            pass
        _L.registry_free(ptr)


def _close_all_at_exit() -> None:
    global _exiting
    _exiting = True
    deadline = None if _exit_timeout is None else time.monotonic() + _exit_timeout

    def remaining_ms() -> int:
        if deadline is None:
            return _lib.WAIT_FOREVER
        return _milliseconds(max(0.0, deadline - time.monotonic()))

    with _reaper_wake:
        pending = _reaper_queue[:]
        del _reaper_queue[:]
        while _reaper_busy:  # it stops waiting within 100 ms of _exiting
            if not _reaper_wake.wait(0.2):
                break
    abandoned = False
    for ptr in pending:
        abandoned |= _L.registry_close(ptr, remaining_ms()) == _lib.ERR_TIMEOUT
        _L.registry_free(ptr)
    for registry in list(_open_registries):
        try:
            abandoned |= registry._shutdown(remaining_ms())
        except Exception:  # pragma: no cover - best effort at exit
            pass
    if _callbacks._in_tool:
        _park_running_tools()
    # Last, while the interpreter is whole: from now on no pool thread enters
    # it through the thread hooks (a retiring thread's on_stop would take the
    # GIL during finalization and be ended by a forced unwind). The per-thread
    # states they kept go with the process.
    try:
        _L.runtime_abandon_thread_hooks(_milliseconds(_HOOKS_WAIT_S))
    except Exception:  # pragma: no cover - best effort at exit
        pass
    if abandoned:
        try:
            sys.stderr.write(
                f"capstan: exiting with tool calls still running after {_exit_timeout} s "
                "(capstan.set_exit_timeout); they were abandoned\n"
            )
        except Exception:  # pragma: no cover
            pass
