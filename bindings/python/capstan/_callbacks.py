"""How capstan calls into Python.

Every tool is registered with the one module-level ctypes trampoline and, as
``user_data``, an integer key into ``_entries`` (never an object address, the
wasmtime-py habit); capstan's destroy callback removes the entry. The calls of
one execution carry internal ids ``py<token>.<index>``, by which the
trampoline finds that execution's ``_Execution`` in ``_executions`` (a lone
call that capstan runs on the executing thread is found by that thread, in
``_inline``): where the Python return value is kept (``ToolResult.data``), the
event loop to run ``async def`` tools on, and a KeyboardInterrupt or
SystemExit raised by a tool, re-raised once the C call has returned.

Sync tools run where capstan calls them: its pool threads (ctypes drops the GIL
for capstan_registry_execute; a ctypes callback takes it back), or the calling thread
for a lone call without timeout. ``async def`` tools complete their capstan
call later (deferred completion), from the event loop running their coroutine:
the trampoline creates the coroutine's task directly when it runs on that
loop's thread (aexecute* batches started inline), else hands it to the loop
with call_soon_threadsafe.
"""

from __future__ import annotations

import asyncio
import ctypes
import itertools
import json
import queue
import threading
import time
import weakref
from typing import Any

from . import _lib
from ._json import _scan
from ._content import content_parts
from ._context import Context
from ._errors import InputRequired
from ._tools import Tool, render_result

# --- the trampoline's tables ---------------------------------------------------


class _Entry:
    """What the trampoline needs of one registered tool."""

    __slots__ = (
        "fn", "weak", "is_async", "fill", "convert", "context", "timeout", "plain", "quick", "strikes", "host_run",
        "ok_count", "suspends", "direct",
    )

    def __init__(self, built: Tool, weak: bool) -> None:
        target = built._target()
        self.weak = weak and getattr(target, "__self__", None) is built
        # A tool's own registry for run() must not keep the tool alive.
        self.fn: Any = weakref.WeakMethod(target) if self.weak else target
        self.is_async = built.is_async
        self.fill, self.convert, self.context = built._call_plan()
        self.timeout = built.timeout
        # Called as is with the arguments: the trampoline's short path.
        self.plain = not (self.weak or self.is_async or self.fill or self.convert or self.context)
        # Called as is with the arguments, sync or async.
        self.direct = not (self.weak or self.fill or self.convert or self.context)
        # A sync tool whose calls run in under QUICK_NS: execute_many runs a
        # batch of them on the calling thread (see ToolRegistry._run_inline).
        # Set by its last call that quick; cleared after two slow calls in a
        # row (one call preempted on a busy machine is not a slow tool).
        self.quick = False
        self.strikes = 0
        # CAPSTAN_TOOL_HOST_RUN: a host batch (_host) hands its checked calls
        # to the binding, which runs them on the awaiting loop: an async
        # tool needs no thread, so a pool thread's hop to the loop and back
        # buys nothing. Not with a Context (a handed-out call has no
        # capstan_call: no progress, log, input or cancellation), a timeout
        # (the callback path stops the coroutine when capstan times it
        # out) or main_thread (runs only where pump() is called).
        self.host_run = self.is_async and not (self.context or self.timeout or built.main_thread)
        # The registry's count of this tool's ok lone calls (its stats()),
        # once the fast path ran one.
        self.ok_count: Any = None
        # An async tool whose coroutine suspended on its first step in a
        # carrier (_tick): its lone calls take a task each from then on.
        self.suspends = False


# Values that hold no image or file: no content_parts() to ask.
_TEXT_ONLY = frozenset({int, float, bool, type(None), dict})

# A sync call that ran in less than this is quick (_Entry.quick).
QUICK_NS = 100_000


def observe(entry: _Entry, started: int) -> None:
    """Records how long a sync call of ``entry`` that started at ``started``
    (perf_counter_ns) ran."""
    if _now() - started < QUICK_NS:
        entry.quick = True
        entry.strikes = 0
    else:
        entry.strikes += 1
        if entry.strikes >= 2:
            entry.quick = False


class _Execution:
    """Python-side state of one capstan_registry_execute, found by the calls' id prefix
    (or, for a lone call run on the executing thread, by that thread)."""

    __slots__ = ("loop", "timeout", "single", "value", "error", "data", "errors", "raised", "tasks", "direct", "calls", "deadline")

    def __init__(self, loop: asyncio.AbstractEventLoop | None, timeout: float | None, single: bool) -> None:
        self.loop = loop
        self.timeout = timeout
        self.single = single
        # A lone call's outcome; several calls' by call id (made up front:
        # pool threads write them at once).
        self.value: Any = None
        self.error: BaseException | None = None
        self.data: dict[bytes, Any] | None = None if single else {}
        self.errors: dict[bytes, BaseException] | None = None if single else {}
        self.raised: BaseException | None = None
        # Tasks of its async tools on ``loop`` (made on the loop's thread).
        self.tasks: list[asyncio.Task[Any]] | None = None
        # While an inline capstan_batch_submit runs: coroutines (of async tools
        # without a timeout) for the awaiting task to run itself.
        self.direct: list[Any] | None = None
        # The caller's calls, by index: their ids for the approver and events.
        self.calls: Any = None
        # The batch deadline, as a time.monotonic() value (None: none).
        self.deadline: float | None = None

    def cancel_tasks(self) -> None:
        """Cancels the coroutines of its async tools still running (the
        awaiting task was cancelled). On the loop's thread."""
        for task in self.tasks or ():
            task.cancel()


_entries: dict[int, _Entry] = {}
_entry_keys = itertools.count(1)
_executions: dict[bytes, _Execution] = {}
# Lone-call executions by the thread running capstan_registry_execute: capstan runs a
# lone call without timeout on that thread, so the trampoline finds its
# execution without asking for the call's id.
_inline: dict[int, _Execution | None] = {}
_get_ident = threading.get_ident
_now = time.perf_counter_ns
_ABSENT = object()
_OK_TAIL = ',"is_error":false,"outcome":"ok","duration_us":'


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "backslashreplace")


def tool_function(entry: _Entry, args: dict[str, Any]) -> Any:
    """The function of a tool that is not plain, with ``args`` completed in
    place: declared defaults filled in, converted arguments converted."""
    if entry.fill:
        for name, value in entry.fill:
            args.setdefault(name, value)
    if entry.convert:
        for name, convert in entry.convert:
            if name in args:
                args[name] = convert(args[name])
    fn = entry.fn() if entry.weak else entry.fn
    if fn is None:
        raise RuntimeError("the tool was garbage-collected")
    return fn


def _on_call(key: int, call: int) -> None:
    """The trampoline: capstan calls it, on a pool thread or the calling thread,
    with the GIL taken by ctypes. It must complete `call` exactly once."""
    thread = _get_ident()
    depth = _in_tool.get(thread, 0)
    _in_tool[thread] = depth + 1
    try:
        _call_tool(key, call, thread)
    finally:
        if depth:
            _in_tool[thread] = depth
        else:
            del _in_tool[thread]


def _call_tool(key: int, call: int, thread: int) -> None:
    call_id = None
    execution = _inline.get(thread)
    try:
        if execution is None:
            call_id = _call_id(call, None)
            if call_id is not None:
                execution = _executions.get(call_id.partition(b".")[0])
        entry = _entries[key]
        raw = _call_arguments(call, None)
        args = _scan(raw.decode(), 0)[0] if raw != b"{}" else {}
        if entry.plain:
            if execution is not None and execution.direct is not None:
                _offload(call, call_id, execution, entry.fn, args)
                return
            started = _now()
            value = entry.fn(**args)
            observe(entry, started)
        else:
            fn = tool_function(entry, args)
            if entry.context is not None:
                args[entry.context] = _context(call, call_id, execution, entry)
            if entry.is_async:
                _start_coroutine(call, call_id, execution, entry, fn(**args))
                return
            if execution is not None and execution.direct is not None:
                _offload(call, call_id, execution, fn, args)
                return
            started = _now()
            value = fn(**args)
            observe(entry, started)
        kind, text = _encode(value)
    except Exception as exc:
        _fail(call, call_id, execution, exc)
        return
    except BaseException as exc:  # KeyboardInterrupt, SystemExit: not ours to swallow
        if type(exc) is ParkAtExit:
            park()  # never returns
        _interrupted(call, call_id, execution, exc)
        return
    # Kept before completing: the executing thread reads it as soon as the call is done.
    if execution is not None:
        if execution.single:
            execution.value = value
        elif call_id is not None:
            execution.data[call_id] = value  # type: ignore[index]
    _call_return(call, kind, text, len(text))


def public_id(raw: bytes) -> str:
    """The caller's id of a call capstan knows by ``raw``: the
    :class:`ToolCall`'s, for the internal ids of ``execute*``."""
    prefix, dot, index = raw.partition(b".")
    if dot and index.isdigit():
        execution = _executions.get(prefix)
        calls = execution.calls if execution is not None else None
        if calls is not None and int(index) < len(calls):
            return str(calls[int(index)].id)
    return raw.decode("utf-8", "replace")


def _context(call: int, call_id: bytes | None, execution: _Execution | None, entry: _Entry) -> Context:
    """The Context of a call the trampoline runs."""
    size = ctypes.c_size_t()
    raw = call_id if call_id is not None else (_call_id(call, ctypes.byref(size)) or b"")
    tool = (_L.call_tool(call, ctypes.byref(size)) or b"").decode("utf-8", "replace")
    timeout = execution.timeout if execution is not None and execution.timeout else entry.timeout
    deadline = time.monotonic() + timeout if timeout else None
    batch = execution.deadline if execution is not None else None
    if batch is not None and (deadline is None or batch < deadline):
        deadline = batch
    return Context(public_id(raw), tool, deadline, call, _L.call_cancelled)


def _encode(value: Any) -> tuple[int, bytes]:
    """A tool's return value as capstan content: text (CAPSTAN_CONTENT_TEXT),
    or content parts (CAPSTAN_CONTENT_PARTS) when it holds an Image, a File
    or a PIL image."""
    kind = type(value)
    if kind is str:
        return _lib.CONTENT_TEXT, value.encode("utf-8", "backslashreplace")
    if kind not in _TEXT_ONLY:
        parts = content_parts(value)
        if parts is not None:
            return _lib.CONTENT_PARTS, parts.encode("utf-8", "backslashreplace")
    return _lib.CONTENT_TEXT, render_result(value).encode("utf-8", "backslashreplace")


def _offload(call: int, call_id: bytes | None, execution: _Execution, fn: Any, args: dict[str, Any]) -> None:
    """A sync tool's call started inline (aexecute*): capstan has validated it
    on the loop's thread; the function runs on a worker thread, so that it
    cannot block the loop, and completes its call there."""
    global _workers
    if _workers is None:
        with _private_lock:
            if _workers is None:
                _workers = _Workers(_WORKERS)
    _workers.submit((call, call_id, execution, fn, args))


class _Workers:
    """Python threads for sync tools started inline. A worker takes the next
    job as soon as it has one, so calls made one after the other run on the
    same thread: its thread state (and thread-locals) last from call to call,
    where a capstan pool thread entering Python gets a fresh one per call.
    New threads only while every worker is busy, at most ``most``; daemons,
    like the interpreter's own executor threads."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.count = 0
        self.idle = 0

    def submit(self, job: Any) -> None:
        with self.lock:
            if self.idle:
                self.idle -= 1
                grow = False
            else:
                grow = self.count < self.most
                self.count += grow
        self.jobs.put(job)
        if grow:
            threading.Thread(target=self._work, name="capstan-tool", daemon=True).start()

    def _work(self) -> None:
        while True:
            _run_sync(self, *self.jobs.get())

    def ready(self) -> None:
        """The job of this worker is about to complete its call: the next one
        submitted (maybe because of that completion) waits for this worker."""
        with self.lock:
            self.idle += 1


def _run_sync(
    workers: _Workers, call: int, call_id: bytes | None, execution: _Execution, fn: Any, args: dict[str, Any]
) -> None:
    try:
        value = fn(**args)
        kind, text = _encode(value)
    except Exception as exc:
        workers.ready()
        _fail(call, call_id, execution, exc)
        return
    except BaseException as exc:
        workers.ready()
        _interrupted(call, call_id, execution, exc)
        return
    if call_id is not None:
        execution.data[call_id] = value  # type: ignore[index]
    workers.ready()
    _call_return(call, kind, text, len(text))


def _return(call: int, call_id: bytes | None, execution: _Execution | None, value: Any) -> None:
    """Completes a call with a tool's return value (async tools, later)."""
    try:
        kind, text = _encode(value)
    except Exception as exc:
        _fail(call, call_id, execution, exc)
        return
    if execution is not None:
        if execution.single:
            execution.value = value
        elif call_id is not None:
            execution.data[call_id] = value  # type: ignore[index]
    _call_return(call, kind, text, len(text))


def _fail(call: int, call_id: bytes | None, execution: _Execution | None, exc: BaseException) -> None:
    if isinstance(exc, InputRequired) and _ask(call, exc):
        return
    message = str(exc)
    text = _utf8(f"{type(exc).__name__}: {message}" if message else type(exc).__name__)
    if execution is not None:
        if execution.single:
            execution.error = exc
        elif call_id is not None:
            execution.errors[call_id] = exc  # type: ignore[index]
    _call_fail(call, text, len(text))


def _ask(call: int, exc: InputRequired) -> bool:
    """Completes the call asking its caller for input; False (the call still
    open) when capstan refused, ``exc`` then carrying capstan's reason."""
    try:
        requests = json.dumps(exc.requests, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError) as e:
        exc.args = (f"the input requests are not JSON: {e}",)
        return False
    state = None if exc.state is None else str(exc.state).encode("utf-8", "surrogatepass")
    status = _L.call_require_input(call, requests, len(requests), state, 0 if state is None else len(state))
    if status == 0:
        return True
    exc.args = (_L.last_error_text(),)
    return False


def _interrupted(call: int, call_id: bytes | None, execution: _Execution | None, exc: BaseException) -> None:
    if execution is not None:
        if execution.raised is None:
            execution.raised = exc
    elif isinstance(exc, KeyboardInterrupt):
        import _thread

        _thread.interrupt_main()
    text = _utf8(f"Interrupted: {type(exc).__name__}")
    _call_fail(call, text, len(text))


# --- the interpreter's exit ---------------------------------------------------
#
# CPython before 3.14 ends a thread that takes the GIL once the interpreter
# finalizes with pthread_exit: a forced unwind, which must not cross
# capstan's frames (header: a callback must return; Rust makes unwinding
# through frames with destructors undefined). A thread inside a tool callback
# has such frames below its Python ones. So, at exit (see _lifecycle), those
# still running get ParkAtExit raised in them, while the interpreter is
# whole, and the trampoline parks them: blocked in C for good, without the
# GIL, never unwound; the process then ends around them.

# Threads inside the trampoline now, with their depth (a tool may execute).
_in_tool: dict[int, int] = {}
_parked = threading.Semaphore(0)
# (libc, mutex, condition) for parking, made by prepare_parking().
_park_with: tuple[Any, Any, Any] | None = None


class ParkAtExit(BaseException):
    """Raised (PyThreadState_SetAsyncExc) at exit in threads running a tool."""


def prepare_parking() -> None:
    """Makes the mutex and condition that parked threads wait on."""
    global _park_with
    import ctypes

    libc = ctypes.CDLL(None)
    mutex, cond = ctypes.create_string_buffer(256), ctypes.create_string_buffer(256)
    libc.pthread_mutex_init(mutex, None)
    libc.pthread_cond_init(cond, None)
    _park_with = (libc, mutex, cond)


def park() -> None:
    """Blocks this thread for good, in C with the GIL released. The exit
    handler counts it on ``_parked``, then takes the mutex: it gets it only
    once every counted thread is inside pthread_cond_wait (which released
    the mutex), so none still needs the GIL; and keeps it, so that a thread
    parking later blocks on it in C."""
    import signal

    signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())  # this thread's only
    if _park_with is None:
        prepare_parking()
    libc, mutex, cond = _park_with  # type: ignore[misc]
    libc.pthread_mutex_lock(mutex)
    _parked.release()
    while True:
        libc.pthread_cond_wait(cond, mutex)  # never signalled


def _on_destroy(key: int) -> None:
    _entries.pop(key, None)


# ctypes keeps a callback alive only while a Python reference to it exists:
# these module-level objects are that reference, for the life of the process.
_TRAMPOLINE = _lib.TOOL_FN(_on_call)
_DESTROY = _lib.DESTROY_FN(_on_destroy)

# The loaded library and, for the trampoline, its functions as module globals.
_L: Any = None
_call_id: Any = None
_call_arguments: Any = None
_call_return: Any = None
_call_fail: Any = None


def library() -> Any:
    """The library, loaded on first use; binds the trampoline's functions."""
    global _L, _call_id, _call_arguments, _call_return, _call_fail
    if _L is None:
        loaded: Any = _lib.lib()  # its functions are attributes set at load time
        _call_id, _call_arguments = loaded.call_id, loaded.call_arguments
        _call_return, _call_fail = loaded.call_return, loaded.call_fail
        _L = loaded
    return _L


# --- async tools -------------------------------------------------------------

# Threads for sync tools started inline (see _offload): at most this many at once.
_WORKERS = 256
_workers: _Workers | None = None
_private_loop: asyncio.AbstractEventLoop | None = None
_private_lock = threading.Lock()


def _loop_for_sync_callers() -> asyncio.AbstractEventLoop:
    """A loop on a daemon thread, for async tools run by the blocking API."""
    global _private_loop
    if _private_loop is None:
        with _private_lock:
            if _private_loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="capstan-async", daemon=True)
                thread.start()
                _private_loop = loop
    return _private_loop


def _start_coroutine(
    call: int, call_id: bytes | None, execution: _Execution | None, entry: _Entry, coro: Any
) -> None:
    loop = execution.loop if execution is not None and execution.loop is not None else None
    if loop is None:
        loop = _loop_for_sync_callers()
    timeout = execution.timeout if execution is not None and execution.timeout else entry.timeout
    if execution is not None and execution.direct is not None and not timeout:
        # Started inline, inside the awaiting task: it runs the coroutine.
        execution.direct.append(_complete_here(call, call_id, execution, coro))
        return
    wrapped = _complete_later(call, call_id, execution, coro, timeout)
    owner = execution if execution is not None and execution.loop is loop else None
    if _running_loop() is loop:  # on the loop's thread: started inline
        _spawn(loop, wrapped, owner)
        return
    try:
        loop.call_soon_threadsafe(_spawn, loop, wrapped, owner)
    except BaseException:  # the loop is closed
        wrapped.close()
        coro.close()
        raise


_running_loop = asyncio._get_running_loop
# Tasks of running async tools: the loop itself keeps only weak references.
_tasks: set[asyncio.Task[Any]] = set()


def _spawn(loop: asyncio.AbstractEventLoop, coro: Any, owner: _Execution | None) -> None:
    """Runs an async tool's coroutine as a task of ``loop``; on its thread."""
    task = loop.create_task(coro)
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    if owner is not None:
        if owner.tasks is None:
            owner.tasks = [task]
        else:
            owner.tasks.append(task)


async def _complete_later(
    call: int, call_id: bytes | None, execution: _Execution | None, coro: Any, timeout: float | None
) -> None:
    """Runs an async tool's coroutine and completes its capstan call."""
    watch = None
    if timeout:
        # capstan reports the timeout; this stops the coroutine once it has.
        loop = asyncio.get_running_loop()
        watch = loop.call_later(timeout, _stop_when_cancelled, asyncio.current_task(), call, loop)
    try:
        value = await coro
    except asyncio.CancelledError:
        _call_fail(call, b"Cancelled.", 10)  # refused (and ignored) after a timeout
        return
    except Exception as exc:
        _fail(call, call_id, execution, exc)
        return
    except BaseException as exc:
        _interrupted(call, call_id, execution, exc)
        return
    finally:
        if watch is not None:
            watch.cancel()
    _return(call, call_id, execution, value)


async def _complete_here(call: int, call_id: bytes | None, execution: _Execution, coro: Any) -> None:
    """Runs an async tool's coroutine in the awaiting task itself and
    completes its capstan call; a cancellation of that task goes on."""
    try:
        value = await coro
    except (asyncio.CancelledError, GeneratorExit):
        _call_fail(call, b"Cancelled.", 10)
        raise
    except Exception as exc:
        _fail(call, call_id, execution, exc)
        return
    except BaseException as exc:
        _interrupted(call, call_id, execution, exc)
        return
    _return(call, call_id, execution, value)


def _stop_when_cancelled(task: asyncio.Task[Any] | None, call: int, loop: asyncio.AbstractEventLoop) -> None:
    if task is None or task.done():
        return
    if _L.call_cancelled(call):
        task.cancel()
    else:  # capstan's timer fires at the same deadline: look again shortly
        loop.call_later(0.005, _stop_when_cancelled, task, call, loop)
