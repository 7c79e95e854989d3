"""The context a tool can ask for: a parameter annotated :class:`Context`
receives the call's; it is not part of the tool's schema."""

from __future__ import annotations

import time
from typing import Any

__all__ = ["Context"]


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

    def remaining(self) -> float | None:
        """Seconds left before the deadline (0.0 once past; None: no timeout)."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    def __repr__(self) -> str:
        return f"<Context {self.tool} call_id={self.call_id!r} deadline={self.deadline!r}>"
