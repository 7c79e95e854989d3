"""The context a tool can ask for: a parameter annotated :class:`Context`
receives the call's; it is not part of the tool's schema."""

from __future__ import annotations

import json
import time
from typing import Any

from . import _lib
from ._errors import LogError, ProgressError
from ._lib import LogLevel

__all__ = ["Context", "LogLevel"]


class Context:
    """The call a tool is running for. Declare a parameter of this type (any
    name) and capstan passes it; the model never sees it::

        @tool(timeout=30)
        def crawl(url: str, ctx: Context) -> list[str]:
            '''Crawl a site.'''
            pages = []
            for link in links(url):
                if ctx.cancelled:          # timed out, batch cancelled, registry closed
                    break
                pages.append(fetch(link, timeout=ctx.remaining()))
            return pages

    ``call_id``: the :class:`ToolCall`'s id (the provider's, under
    ``run_turn``); ``tool``: the tool's name; ``deadline``: the
    ``time.monotonic()`` by which the call times out, its timeout's or its
    batch's ``deadline``, whichever comes first (None: neither);
    ``cancelled``: whether the call should stop (capstan_call_cancelled:
    it timed out, its batch was cancelled or its registry closed; also true
    once the call has its result). A lone call that the binding runs itself
    (the fast path of ``execute``) cannot be cancelled: False there.

    :attr:`input` is what the caller gave besides the arguments: the answers
    to what the tool asked in the round before (raise :class:`InputRequired`
    to ask an MCP client). :meth:`progress` reports how far the call got: the registry's event hook
    (:meth:`ToolRegistry.on_event`) sees a ``"progress"`` :class:`ToolEvent`,
    and an MCP client that asked for progress (a ``progressToken``) gets
    ``notifications/progress``. :meth:`log` sends a log message: the hook
    sees a ``"log"`` event, and an MCP client that asked for logs at that
    level gets ``notifications/message``.
    """

    __slots__ = ("call_id", "tool", "deadline", "_handle", "_cancelled")

    def __init__(self, call_id: str, tool: str, deadline: float | None, handle: int | None = None, cancelled: Any = None) -> None:
        self.call_id = call_id
        self.tool = tool
        self.deadline = deadline
        self._handle = handle
        self._cancelled = cancelled

    @property
    def cancelled(self) -> bool:
        if self._handle is None:
            return False
        return bool(self._cancelled(self._handle))

    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> bool:
        """Reports the call's progress (``capstan_call_progress``): ``progress``
        so far (finite, >= 0, above this call's previous report: MCP's rule),
        out of ``total`` (None: unknown), with an optional ``message`` (at most
        4096 bytes). It reaches the event hook on this thread before this
        returns. Any thread, as often as needed while the call runs.

        Returns True once reported; False when the call already has its
        result (it timed out or was cancelled), or for a lone call that the
        binding runs itself (the fast path of ``execute``, taken only while
        no event hook is set: nobody would see the report).

        Raises:
            ProgressError: (a ``ValueError``) for a value capstan refuses,
                naming it.
        """
        if self._handle is None:
            return False
        text = None if message is None else message.encode("utf-8", "backslashreplace")
        library: Any = _lib.lib()
        status = library.call_progress(
            self._handle, float(progress), 0.0 if total is None else float(total), text, 0 if text is None else len(text)
        )
        if status == _lib.OK:
            return True
        if status in (_lib.ERR_ALREADY_COMPLETED, _lib.ERR_STALE_HANDLE):
            return False
        raise library.error(status, f"progress {progress!r} of {self.tool!r} refused", ProgressError)

    def log(self, level: LogLevel, message: str) -> bool:
        """Sends a log message of the running call (``capstan_call_log``) at
        ``level``, one of MCP's names ``"debug"``, ``"info"``, ``"notice"``,
        ``"warning"``, ``"error"``, ``"critical"``, ``"alert"``,
        ``"emergency"``; ``message`` at most 64 KiB as UTF-8. It reaches the
        event hook as a ``"log"`` event on this thread before this returns,
        and an MCP client that asked for logs at or below ``level`` as
        ``notifications/message``. Any thread, as often as needed while the
        call runs.

        Returns True once sent; False when the call already has its result
        (it timed out or was cancelled), or for a lone call that the binding
        runs itself (the fast path of ``execute``, taken only while no event
        hook is set: nobody would see the message).

        Raises:
            LogError: (a ``ValueError``) for a level that is not one of
                these names (before anything is sent, also on the fast
                path) or a message capstan refuses.
        """
        try:
            code = _lib.LOG_LEVELS.index(level)
        except ValueError:
            names = ", ".join(_lib.LOG_LEVELS)
            raise LogError(
                f"log level {level!r} of {self.tool!r} is not one of {names}",
                "CAPSTAN_ERR_INVALID_ARGUMENT",
                status_code=_lib.ERR_INVALID_ARGUMENT,
            ) from None
        if not isinstance(message, str):
            raise TypeError(f"log message must be a str, not {type(message).__name__}")
        if self._handle is None:
            return False
        text = message.encode("utf-8", "backslashreplace")
        library: Any = _lib.lib()
        status = library.call_log(self._handle, code, text, len(text))
        if status == _lib.OK:
            return True
        if status in (_lib.ERR_ALREADY_COMPLETED, _lib.ERR_STALE_HANDLE):
            return False
        raise library.error(status, f"log message of {self.tool!r} refused", LogError)

    @property
    def input(self) -> dict[str, Any]:
        """What the caller gave besides the arguments (``capstan_call_input``):
        ``"canAsk"``, the methods a tool may ask it for by raising
        :class:`InputRequired` (empty unless an MCP client calls a served
        tool), and in a later round ``"inputResponses"`` (the client's
        answers by the keys the tool asked with) and ``"requestState"`` (the
        tool's own state from the round before, checked intact)."""
        if self._handle is None:
            return {"canAsk": []}
        library: Any = _lib.lib()
        text = library.call_input(self._handle, None)
        if not text:
            return {"canAsk": []}
        value = json.loads(text)
        return value if isinstance(value, dict) else {"canAsk": []}

    def remaining(self) -> float | None:
        """Seconds left before the deadline (0.0 once past; None: no timeout)."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    def __repr__(self) -> str:
        return f"<Context {self.tool} call_id={self.call_id!r} deadline={self.deadline!r}>"
