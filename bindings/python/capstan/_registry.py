"""ToolRegistry: tools held by a native capstan registry, and their execution
(see _callbacks for how capstan's calls reach Python, _lifecycle for how
registries are freed when dropped and closed at exit).

ToolRegistry is the sum of its parts, one file each: _registry_core (state
and lifetime), _registry_tools, _registry_exports (the model's view: formats,
turns, search), _registry_hooks (approval, events, wake-ups, stats),
_registry_mcp and _registry_exec (running calls, streams)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from . import _registry_exec, _tools
from ._calls import ToolCall, ToolResult
from ._registry_exec import _Executions
from ._registry_exports import ToolExport, _Exports
from ._registry_hooks import ToolStats, _Hooks
from ._registry_mcp import _Mcp
from ._registry_tools import _Tools
from ._tools import Tool

__all__ = ["ToolCall", "ToolExport", "ToolRegistry", "ToolResult", "ToolStats", "default_registry"]


class ToolRegistry(_Tools, _Exports, _Hooks, _Mcp, _Executions):
    """Tools by name, backed by a native capstan registry.

    Executes calls with capstan: arguments validated against the full JSON
    Schema, calls run in parallel on capstan's pool, timeouts (sync tools
    included), output caps. An unknown tool, invalid arguments, a timeout or a
    tool's exception give an error :class:`ToolResult`, never an exception.

    Close it with :meth:`close` or a ``with`` block; garbage collection is
    only a backstop.

    Example:
        >>> @tool
        ... def double(x: int) -> int:
        ...     '''Double a number.'''
        ...     return x * 2
        >>> registry = ToolRegistry([double])
        >>> registry.execute(ToolCall(name="double", arguments={"x": 4})).data
        8
    """

    def __init__(
        self,
        tools: Iterable[Tool | Callable[..., Any]] | None = None,
        *,
        coerce: bool = False,
        max_result_bytes: int = 0,
        strict: bool = False,
    ) -> None:
        """``coerce``: accept strings for number/integer/boolean arguments.
        ``max_result_bytes``: bound on the decoded bytes of the images and
        files one result holds (0 = 10 MiB); past it the call is a tool error.
        ``strict``: the model is given OpenAI strict-mode schemas
        (:meth:`schemas` exports them so by default), where an optional
        argument comes as ``null``: such nulls are dropped before validation
        (``CAPSTAN_EXEC_STRICT_NULLS``) on every path."""
        _registry_exec._library()
        super().__init__(coerce=coerce, max_result_bytes=max_result_bytes, strict=strict)
        for item in tools or ():
            self.add(item)

    def extend(self, items: Iterable[Tool | Callable[..., Any]]) -> ToolRegistry:
        """Register several tools; returns ``self``."""
        for item in items:
            self.add(item)
        return self

    def __enter__(self) -> ToolRegistry:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closing else f"{len(self._tools)} tools"
        return f"<ToolRegistry {state}>"


_default: ToolRegistry | None = None
_default_lock = threading.Lock()


def default_registry() -> ToolRegistry:
    """The global registry that ``@tool(register=True)`` adds to."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = ToolRegistry()
    return _default


# Tool.run and @tool(register=True) reach a registry through these: _tools
# sits below this module and does not import it.
_tools._use_registries(ToolRegistry, default_registry)
