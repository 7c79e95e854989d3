"""Host batches (capstan_host_batch_*): the path of calls to ``async def``
tools (their entries' ``host_run``, CAPSTAN_TOOL_HOST_RUN).

One crossing (begin) checks every call on this thread and hands out the
host-run ones, checked, as one JSON array; the binding runs their coroutines
on the loop that awaits the batch (aexecute*), or, for the blocking API, all
of them at once on the private loop (one hop per batch, not per call); one
crossing (finish) hands every answer back and lends the results of the whole
batch, rendered by capstan. The batch's other calls (sync tools, which may
block) run on capstan's pool meanwhile, under the batch's limit: only when
there are some does finish have to wait, on a thread of the loop's executor
(async) or here (blocking), where Ctrl-C still reaches the main thread.
"""

from __future__ import annotations

import asyncio
import ctypes
import threading
from typing import Any

from . import _json, _lib
from ._callbacks import _Entry, _Execution, _encode, _loop_for_sync_callers
from ._lone import _tool_function

_c_char_p, _c_void_p, _c_size_t = ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t
_WAIT_SLICE_MS = 100  # the main thread's wait, in slices Ctrl-C can end


def begin(library: Any, ptr: int, payload: bytes, options: Any, journaled: bool) -> tuple[int, list[Any]]:
    """capstan_host_batch_begin: (the batch, the calls handed out). With a
    journal the GIL is let go (its writes are file or database I/O)."""
    out, handed, size = _c_void_p(), _c_char_p(), _c_size_t()
    start = library.host_batch_begin if journaled else library.quick_host_batch_begin
    status = start(ptr, payload, len(payload), options, ctypes.byref(out), ctypes.byref(handed), ctypes.byref(size))
    if status != _lib.OK:
        raise library.error(status, "capstan_host_batch_begin failed")
    text = ctypes.string_at(handed.value, size.value).decode() if size.value > 2 else "[]"  # type: ignore[arg-type]
    return out.value, (_json.loads(text) if text != "[]" else [])  # type: ignore[return-value]


class Answers:
    """The answers to the calls handed out, and what the results need of
    them: the Python values and exceptions, kept on ``execution`` by call
    id as the trampoline keeps them."""

    __slots__ = ("parts", "execution", "entries")

    def __init__(self, execution: _Execution, entries: dict[str, _Entry]) -> None:
        self.parts: list[str] = []
        self.execution = execution
        self.entries = entries

    def start(self, item: dict[str, Any]) -> Any:
        """Runs a handed-out call of a sync tool and answers it; for an
        async tool, returns its coroutine (answered by :meth:`settle`)."""
        index, name = item["index"], item["name"]
        entry = self.entries.get(name)
        if entry is None:  # replaced or removed since begin
            self.error(index, item["id"], RuntimeError(f'tool "{name}" was replaced while its call ran'))
            return None
        args = item["arguments"]
        try:
            fn = _tool_function(None, entry, args)  # type: ignore[arg-type]
            if entry.is_async:
                return fn(**args)
            value = fn(**args)
        except Exception as exc:
            self.error(index, item["id"], exc)
            return None
        self.value(index, item["id"], value)
        return None

    async def settle(self, item: dict[str, Any], coro: Any) -> None:
        try:
            value = await coro
        except Exception as exc:
            self.error(item["index"], item["id"], exc)
            return
        except BaseException as exc:  # KeyboardInterrupt, SystemExit: raised once the batch is done
            if not isinstance(exc, asyncio.CancelledError) and self.execution.raised is None:
                self.execution.raised = exc
            self.answer(item["index"], "error", f"Interrupted: {type(exc).__name__}")
            raise
        self.value(item["index"], item["id"], value)

    def value(self, index: int, call_id: str, value: Any) -> None:
        try:
            kind, text = _encode(value)
        except Exception as exc:
            self.error(index, call_id, exc)
            return
        self.execution.data[call_id.encode("utf-8", "backslashreplace")] = value  # type: ignore[index]
        self.parts.append(
            f'{{"index":{index},"{"parts" if kind == _lib.CONTENT_PARTS else "text"}":'
            + (text.decode() if kind == _lib.CONTENT_PARTS else _json.dumps(text.decode()))
            + "}"
        )

    def error(self, index: int, call_id: str, exc: BaseException) -> None:
        self.execution.errors[call_id.encode("utf-8", "backslashreplace")] = exc  # type: ignore[index]
        message = str(exc)
        self.answer(index, "error", f"{type(exc).__name__}: {message}" if message else type(exc).__name__)

    def answer(self, index: int, field: str, text: str) -> None:
        self.parts.append(f'{{"index":{index},"{field}":{_json.dumps(text)}}}')

    def payload(self) -> bytes:
        return ("[" + ",".join(self.parts) + "]").encode("utf-8", "backslashreplace")


def _finish(library: Any, batch: int, answers: bytes | None, timeout_ms: int, quick: bool) -> tuple[int, str]:
    out, size = _c_char_p(), _c_size_t()
    finish = library.quick_host_batch_finish if quick else library.host_batch_finish
    status = finish(batch, answers, len(answers or b""), timeout_ms, ctypes.byref(out), ctypes.byref(size))
    if status != _lib.OK:
        if status == _lib.ERR_TIMEOUT:
            return status, ""
        raise library.error(status, "capstan_host_batch_finish failed")
    return status, ctypes.string_at(out.value, size.value).decode()  # type: ignore[arg-type]


async def _gather(answers: Answers, started: list[tuple[dict[str, Any], Any]], parallel: bool, limit: int) -> None:
    """Runs the coroutines of the handed-out calls: at once (at most
    ``limit`` at a time), or one by one; the last (or only) one in this
    task, the others as tasks of their own."""
    if not started:
        return
    if not parallel:
        for item, coro in started:
            await answers.settle(item, coro)
        return
    if limit and len(started) > limit:
        gate = asyncio.Semaphore(limit)

        async def gated(item: dict[str, Any], coro: Any) -> None:
            async with gate:
                await answers.settle(item, coro)

        await asyncio.gather(*(gated(i, c) for i, c in started))
        return
    if len(started) == 1:
        await answers.settle(*started[0])
        return
    # Each coroutine's first step runs here, in call order: one that ends
    # without suspending (most quick tools) costs no task; the others go on
    # as tasks of their own, from where they suspended.
    suspended: list[tuple[dict[str, Any], _Resumed]] = []
    for n, (item, coro) in enumerate(started):
        try:
            first = coro.send(None)
        except StopIteration as stop:
            answers.value(item["index"], item["id"], stop.value)
            continue
        except Exception as exc:
            answers.error(item["index"], item["id"], exc)
            continue
        except BaseException as exc:
            if answers.execution.raised is None:
                answers.execution.raised = exc
            for _, rest in started[n + 1:]:
                rest.close()
            for _, rest in suspended:
                rest.close()
            raise
        suspended.append((item, _Resumed(coro, first)))
    if not suspended:
        return
    tasks = [asyncio.ensure_future(answers.settle(i, c)) for i, c in suspended[:-1]]
    try:
        await answers.settle(*suspended[-1])
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        raise


def _call(f: Any, *args: Any) -> Any:
    return f(*args)


class _Resumed:
    """A coroutine that suspended on its first step (it yielded ``first``),
    awaitable from there: the awaiting task gets ``first`` and then drives
    the coroutine as it would have from the start (values sent and
    exceptions thrown in, cancellation included), each step in ``context``
    when one is given (a gathered call's own copy of its caller's)."""

    __slots__ = ("coro", "first", "context")

    def __init__(self, coro: Any, first: Any, context: Any = None) -> None:
        self.coro, self.first, self.context = coro, first, context

    def __await__(self) -> Any:
        coro, yielded = self.coro, self.first
        run = _call if self.context is None else self.context.run
        while True:
            try:
                sent = yield yielded
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:
                try:
                    yielded = run(coro.throw, exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    yielded = run(coro.send, sent)
                except StopIteration as stop:
                    return stop.value

    def close(self) -> None:
        self.coro.close()


def _start_all(answers: Answers, handed: list[Any]) -> list[tuple[dict[str, Any], Any]]:
    started = []
    for item in handed:
        coro = answers.start(item)
        if coro is not None:
            started.append((item, coro))
    return started


async def run_async(
    library: Any, batch: int, handed: list[Any], answers: Answers, parallel: bool, limit: int, journaled: bool
) -> str:
    """Runs the handed-out calls on this loop, answers them and returns the
    batch's results JSON; cancelling the awaiting task cancels the batch.
    Frees the batch."""
    try:
        await _gather(answers, _start_all(answers, handed), parallel, limit)
        status, text = _finish(library, batch, answers.payload(), 0, not journaled)
        if status == _lib.ERR_TIMEOUT:  # pool calls still running: wait off the loop
            loop = asyncio.get_running_loop()
            status, text = await loop.run_in_executor(None, _finish, library, batch, None, _lib.WAIT_FOREVER, False)
        return text
    except BaseException:
        library.host_batch_cancel(batch)
        raise
    finally:
        library.host_batch_free(batch)


def run_blocking(
    library: Any, batch: int, handed: list[Any], answers: Answers, parallel: bool, limit: int, journaled: bool
) -> str:
    """:func:`run_async` for the blocking API: the coroutines run on the
    private loop (one hop for the batch); the wait for the pool's calls
    ends on Ctrl-C on the main thread, cancelling the batch."""
    try:
        started = _start_all(answers, handed)
        if started:
            future = asyncio.run_coroutine_threadsafe(
                _gather(answers, started, parallel, limit), _loop_for_sync_callers()
            )
            try:
                future.result()
            except BaseException:
                future.cancel()
                raise
        status, text = _finish(library, batch, answers.payload(), 0, not journaled)
        if status == _lib.ERR_TIMEOUT:
            slice_ms = _WAIT_SLICE_MS if threading.current_thread() is threading.main_thread() else _lib.WAIT_FOREVER
            while status == _lib.ERR_TIMEOUT:
                status, text = _finish(library, batch, None, slice_ms, False)
        return text
    except BaseException:
        library.host_batch_cancel(batch)
        raise
    finally:
        library.host_batch_free(batch)
