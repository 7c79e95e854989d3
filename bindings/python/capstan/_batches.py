"""Batches started with capstan_batch_submit.

Their results come back through a callback, so no thread has to wait inside
capstan_registry_execute: an event loop awaits a future, and a main thread waits in a
way that Ctrl-C interrupts, after which the batch is cancelled. The result
callback runs on the thread that finished the call: a pool thread, or for an
async tool the loop's thread (its task completed the call), where the
future is resolved without a hop. Batches of parallel-safe tools start inline
(CAPSTAN_EXEC_START_INLINE, see ToolRegistry._run_submitted).
"""

from __future__ import annotations

import asyncio
import ctypes
import itertools
import threading
from collections.abc import Callable
from typing import Any

from . import _lib
from ._calls import ToolResult


class Submission:
    """What one submitted batch delivers to: results by index, then done."""

    __slots__ = ("items", "loop", "loop_thread", "future", "event", "key")

    def __init__(self, count: int, loop: asyncio.AbstractEventLoop | None) -> None:
        self.items: list[tuple[str, str, int] | None] = [None] * count
        self.loop = loop
        self.loop_thread = threading.get_ident() if loop is not None else None
        self.future = loop.create_future() if loop is not None else None
        self.event = threading.Event() if loop is None else None
        self.key = 0

    def finish(self) -> None:
        if self.loop is None:
            self.event.set()  # type: ignore[union-attr]
        elif threading.get_ident() == self.loop_thread:
            self._resolve()  # e.g. the last result came from an async tool on this loop
        else:
            self.loop.call_soon_threadsafe(self._resolve)

    def _resolve(self) -> None:
        if not self.future.done():  # type: ignore[union-attr]
            self.future.set_result(None)  # type: ignore[union-attr]


_submissions: dict[int, Submission] = {}
_keys = itertools.count(1)


def _on_result(key: int, result: Any) -> None:
    """capstan's result callback: on pool threads, or the thread completing a
    deferred call; a NULL result means the batch is done."""
    try:
        submission = _submissions.get(key)
        if submission is None:
            return
        if result:
            r = result.contents
            content = ctypes.string_at(r.content, r.content_len).decode("utf-8", "replace") if r.content_len else ""
            outcome = _lib.OUTCOMES[r.outcome] if r.outcome < len(_lib.OUTCOMES) else "tool_error"
            submission.items[r.index] = (content, outcome, r.duration_us)
            return
        _submissions.pop(key, None)
        submission.finish()
    except BaseException:  # nothing may leave a ctypes callback; a lost result reads as cancelled
        pass


_RESULT = _lib.RESULT_FN(_on_result)


def submit(library: Any, ptr: int, payload: bytes, options: Any, submission: Submission, inline: bool) -> int:
    """Starts the batch; returns the capstan_batch pointer. ``inline``: the
    options carry CAPSTAN_EXEC_START_INLINE, so the trampoline only schedules
    (a task, a worker thread's job): the GIL is kept."""
    submission.key = key = next(_keys)
    _submissions[key] = submission
    out = ctypes.c_void_p()
    start = library.submit_inline if inline else library.batch_submit
    status = start(ptr, payload, len(payload), options, _RESULT, key, ctypes.byref(out))
    if status != _lib.OK:
        _submissions.pop(key, None)
        raise library.error(status, "capstan_batch_submit failed")
    return out.value  # type: ignore[return-value]


def release(library: Any, batch: int, submission: Submission, cancel: bool) -> None:
    """Frees the batch (cancelling it first if asked): after this no result
    callback of it runs."""
    if cancel:
        library.batch_cancel(batch)
    library.batch_free(batch)
    _submissions.pop(submission.key, None)


async def _ready(value: Any) -> Any:
    return value


async def _await_submission(
    submission: Submission, settle: Callable[[bool], list[ToolResult]], here: Any = None
) -> list[ToolResult]:
    try:
        if here is not None:
            await here  # an async tool's coroutine, run by this task
        await submission.future  # type: ignore[misc]
    except BaseException:  # cancelled: so are the calls not yet started
        settle(True)
        raise
    return settle(False)
