"""Calls in, results out: the normalized shapes of capstan, as Python objects."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

__all__ = ["ToolCall", "ToolResult"]

_call_counter = itertools.count(1)


@dataclasses.dataclass(slots=True)
class ToolCall:
    """One tool call requested by a model. ``arguments`` is a dict, or a JSON
    string holding one (as OpenAI sends them)."""

    name: str
    arguments: dict[str, Any] | str = dataclasses.field(default_factory=dict)
    id: str = dataclasses.field(default_factory=lambda: f"call_{next(_call_counter)}")


@dataclasses.dataclass(slots=True)
class ToolResult:
    """The result of one call: ``content`` is the text for the model.

    ``data`` is the tool's Python return value when it ran ok; ``outcome`` is
    capstan's: ok, tool_error, invalid_arguments, unknown_tool, timeout,
    cancelled or denied; ``error`` the exception a tool raised, if any.
    """

    call_id: str
    name: str
    content: str
    is_error: bool = False
    data: Any = None
    outcome: str = "ok"
    duration_us: int = 0
    error: BaseException | None = dataclasses.field(default=None, repr=False, compare=False)
