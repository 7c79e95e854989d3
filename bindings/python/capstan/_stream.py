"""Streamed responses: ``ToolRegistry.stream(style)`` reads a provider's
streamed body as it arrives (capstan_stream_* of the C ABI).

Feed the raw bytes of the HTTP body, split anywhere; text deltas go to
``on_text`` as they come; with ``early_dispatch=True`` each tool call starts
the moment its arguments are complete, before the response ends, and its
result can be awaited at once (``async for result in stream``). ``finish()``
(or ``await stream.afinish()``) waits for every result and returns a
:class:`StreamTurn`: the calls, their results in call order, and the
provider's tool-result messages for the next request.

A call the response cut (token limit) is never run: its result is an
``invalid_arguments`` error saying so, and ``StreamTurn.cut_calls`` lists it.
A body that ends before the response's closing event (a dropped connection)
raises :class:`CapstanError` with status ``CAPSTAN_ERR_STREAM_TRUNCATED``.
"""

from __future__ import annotations

import asyncio
import ctypes
import dataclasses
import json
import threading
from ctypes import CFUNCTYPE, POINTER, Structure, c_char_p, c_int32, c_size_t, c_uint32, c_void_p
from typing import Any, Callable

from . import _lib
from ._calls import ToolCall, ToolResult
from ._errors import CapstanError
from ._registry_core import _RegistryCore

__all__ = ["Stream", "StreamTurn"]

EXEC_EARLY_DISPATCH = 1 << 4  # CAPSTAN_EXEC_EARLY_DISPATCH
TOOL_WAIT_FOR_RESPONSE = _lib.TOOL_WAIT_FOR_RESPONSE  # CAPSTAN_TOOL_WAIT_FOR_RESPONSE

STREAM_FORMATS = {
    "openai": _lib.FORMAT_OPENAI_CHAT,
    "openai_chat": _lib.FORMAT_OPENAI_CHAT,
    "openai_responses": _lib.FORMAT_OPENAI_RESPONSES,
    "anthropic": _lib.FORMAT_ANTHROPIC,
    "gemini": _lib.FORMAT_GEMINI,
}

TEXT_FN = CFUNCTYPE(None, c_void_p, c_void_p, c_size_t)


class StreamSink(Structure):
    """capstan_stream_sink."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("on_text", TEXT_FN),
        ("on_result", _lib.RESULT_FN),
        ("user_data", c_void_p),
    ]


_declared: Any = None
_declare_lock = threading.Lock()


def _functions() -> Any:
    """The stream functions, declared once (GIL released: they may wait and
    run Python tools and sinks on other threads)."""
    global _declared
    with _declare_lock:
        if _declared is None:
            handle = _lib.lib().blocking
            out = POINTER(c_void_p)
            signatures = {
                "capstan_stream_new": (c_int32, [c_void_p, c_uint32, c_void_p, POINTER(StreamSink), out]),
                "capstan_stream_feed": (c_int32, [c_void_p, c_char_p, c_size_t]),
                "capstan_stream_finish": (c_int32, [c_void_p, out, POINTER(c_size_t)]),
                "capstan_stream_cancel": (None, [c_void_p]),
                "capstan_stream_free": (None, [c_void_p]),
            }
            missing = [name for name in signatures if not hasattr(handle, name)]
            if missing:
                raise CapstanError(
                    f"the loaded libcapstan lacks {', '.join(missing)}: rebuild it from this checkout",
                    "CAPSTAN_ERR_NOT_FOUND",
                )
            functions = {}
            for name, (restype, argtypes) in signatures.items():
                fn = getattr(handle, name)
                fn.restype, fn.argtypes = restype, argtypes
                functions[name[len("capstan_stream_"):]] = fn
            _declared = functions
        return _declared


@dataclasses.dataclass
class StreamTurn:
    """What a finished stream gives: ``calls`` in response order, ``results``
    one per call in the same order, ``messages`` the provider's tool-result
    messages for the next request (what capstan_registry_run_turn returns), ``text``
    the response's text, ``stop_reason`` the provider's, ``cut_calls`` the
    positions of calls the response cut (never run)."""

    calls: list[ToolCall]
    results: list[ToolResult]
    messages: Any
    text: str
    stop_reason: str | None
    cut_calls: list[int]
    cancelled: bool


_END = object()


class Stream:
    """One streamed response being read; from ``ToolRegistry.stream``.

    Feed and finish from one thread at a time; ``cancel`` from anywhere.
    Iterate with ``async for`` (on one event loop) to get each
    :class:`ToolResult` as its call ends, in the order they end; the
    iteration stops once ``finish`` has returned.
    """

    def __init__(
        self,
        registry: _RegistryCore,
        style: str,
        *,
        early_dispatch: bool = False,
        on_text: Callable[[str], Any] | None = None,
        timeout: float | None = None,
        limit: int = 0,
    ) -> None:
        try:
            self._format = STREAM_FORMATS[style]
        except KeyError:
            raise ValueError(f"unknown stream style {style!r}; expected one of: {', '.join(STREAM_FORMATS)}") from None
        self._fns = _functions()
        self._registry = registry
        self._on_text = on_text
        self._lock = threading.Lock()
        self._pending: list[Any] = []  # results not yet taken by the iterator
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[Any] | None = None
        self._text_error: BaseException | None = None
        # The ctypes callbacks live as long as the stream.
        self._text_cb = TEXT_FN(self._text)
        self._result_cb = _lib.RESULT_FN(self._result)
        sink = StreamSink(ctypes.sizeof(StreamSink), self._text_cb, self._result_cb, None)
        options = _lib.ExecOptions(
            ctypes.sizeof(_lib.ExecOptions),
            (EXEC_EARLY_DISPATCH if early_dispatch else 0) | (_lib.EXEC_STRICT_NULLS if registry._strict else 0),
            limit,
            0 if timeout is None else max(1, int(timeout * 1000)),
            None,
            0,
            0,
        )
        ptr = registry._enter()
        out = c_void_p()
        status = self._fns["new"](ptr, self._format, ctypes.byref(options), ctypes.byref(sink), ctypes.byref(out))
        if status != _lib.OK:
            registry._leave()
            raise _lib.lib().error(status, "cannot start a stream")
        self._ptr: int | None = out.value
        self._finished = False

    # -- callbacks (capstan's threads) -------------------------------------------------

    def _text(self, _user: Any, text: int, size: int) -> None:
        if self._on_text is None:
            return
        try:
            self._on_text(ctypes.string_at(text, size).decode("utf-8"))
        except BaseException as exc:  # raised again by feed, on the host's thread
            self._text_error = exc

    def _result(self, _user: Any, result: Any) -> None:
        if not result:
            self._put(_END)
            return
        r = result.contents
        item = ToolResult(
            ctypes.string_at(r.id, r.id_len).decode("utf-8", "replace"),
            ctypes.string_at(r.name, r.name_len).decode("utf-8", "replace"),
            ctypes.string_at(r.content, r.content_len).decode("utf-8", "replace"),
            bool(r.is_error),
            outcome=_lib.OUTCOMES[r.outcome] if r.outcome < len(_lib.OUTCOMES) else "tool_error",
            duration_us=r.duration_us,
        )
        self._put(item)

    def _put(self, item: Any) -> None:
        with self._lock:
            loop, queue = self._loop, self._queue
            if loop is None or queue is None:
                self._pending.append(item)
                return
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody is iterating any more
            pass

    # -- the host's side ---------------------------------------------------------------

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Reads the next bytes of the body (any split). Raises CapstanError
        for a provider error event (CAPSTAN_ERR_PROVIDER_ERROR), a body that
        is not the format's stream, or one past the stream's memory cap; the
        error sticks (finish raises it again)."""
        if self._ptr is None:
            raise CapstanError("the stream is closed", "CAPSTAN_ERR_WRONG_CONTEXT")
        data = bytes(data)
        status = self._fns["feed"](self._ptr, data, len(data))
        if self._text_error is not None:
            error, self._text_error = self._text_error, None
            raise error
        if status != _lib.OK:
            raise _lib.lib().error(status, "stream feed failed")

    def finish(self) -> StreamTurn:
        """The body ended: starts the calls not started yet, waits for every
        result (blocking this thread) and returns the turn. Once only."""
        if self._ptr is None or self._finished:
            raise CapstanError("the stream is already finished or closed", "CAPSTAN_ERR_WRONG_CONTEXT")
        self._finished = True
        out = c_void_p()
        size = c_size_t()
        try:
            status = self._fns["finish"](self._ptr, ctypes.byref(out), ctypes.byref(size))
            if status != _lib.OK:
                raise _lib.lib().error(status, "stream finish failed")
            value = json.loads(_lib.lib().take_text(out, size))
        finally:
            self.close()
        calls = [ToolCall(c["name"], c["arguments"], c["id"]) for c in value["calls"]]
        results = [
            ToolResult(r["id"], r["name"], r["content"], r["is_error"], outcome=r["outcome"], duration_us=r["duration_us"])
            for r in value["results"]
        ]
        return StreamTurn(
            calls,
            results,
            value["messages"],
            value["text"],
            value["stop_reason"],
            value["cut_calls"],
            value["cancelled"],
        )

    async def afinish(self) -> StreamTurn:
        """``finish`` without blocking the event loop (it waits on a thread)."""
        return await asyncio.get_running_loop().run_in_executor(None, self.finish)

    def cancel(self) -> None:
        """No call starts any more; running ones see cancellation. Any thread."""
        ptr = self._ptr
        if ptr is not None:
            self._fns["cancel"](ptr)

    def close(self) -> None:
        """Frees the stream (finish does it too); no result arrives after."""
        with self._lock:
            ptr, self._ptr = self._ptr, None
        if ptr is not None:
            self._fns["free"](ptr)
            self._registry._leave()
            self._put(_END)

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __aiter__(self) -> Stream:
        with self._lock:
            if self._queue is None:
                self._loop = asyncio.get_running_loop()
                self._queue = asyncio.Queue()
                for item in self._pending:
                    self._queue.put_nowait(item)
                self._pending.clear()
        return self

    async def __anext__(self) -> ToolResult:
        """The next call's result, in the order calls end."""
        if self._queue is None:
            self.__aiter__()
        assert self._queue is not None
        item = await self._queue.get()
        if item is _END:
            self._queue.put_nowait(_END)  # later iterations end too
            raise StopAsyncIteration
        return item
