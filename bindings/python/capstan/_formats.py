"""Provider styles of tool definitions, as ToolRegistry.schemas(style) names them.

Every style is the core's export (capstan_registry_tools_json in the style's format).
One reshaping, for the seeds' contract that ``schemas(style)`` is one
definition per tool: capstan exports Gemini as the API's ``tools`` value, a
single Tool ``[{"functionDeclarations": [...]}]`` holding every function;
``schemas("gemini")`` returns those function declarations, one per tool
(put them in ``{"functionDeclarations": ...}`` for a request).
"""

from __future__ import annotations

from typing import Any

from . import _lib
from ._errors import ValidationError

STYLES: dict[str, int] = {
    "openai": _lib.FORMAT_OPENAI_CHAT,
    "openai_chat": _lib.FORMAT_OPENAI_CHAT,
    "openai_responses": _lib.FORMAT_OPENAI_RESPONSES,
    "anthropic": _lib.FORMAT_ANTHROPIC,
    "gemini": _lib.FORMAT_GEMINI,
    "mcp": _lib.FORMAT_MCP,
    "describe": _lib.FORMAT_DESCRIBE,
}


def format_of(style: str) -> int:
    try:
        return STYLES[style]
    except KeyError:
        # A ValueError, with the status and words every binding gives (tests/fixtures/binding_behaviour.json).
        raise ValidationError(
            f"unknown format (schema style) {style!r}; expected one of: {', '.join(STYLES)}",
            "CAPSTAN_ERR_INVALID_ARGUMENT",
        ) from None


def per_tool(fmt: int, exported: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The core's export of format ``fmt`` as one definition per tool."""
    if fmt == _lib.FORMAT_GEMINI:
        return [d for t in exported for d in t.get("functionDeclarations", ())]
    return exported
