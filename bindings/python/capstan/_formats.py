"""Provider styles of tool definitions, as ToolRegistry.schemas(style) names them.

capstan's core exports every format (capstan_tools_json). Until the provider
formats (issue #4) are in the library this binding loads, the core returns its
interim shape for every format; then the definitions are built here from the
core's describe output.

TODO(#4): remove ``_fallback`` and ``_accepts`` once every libcapstan this
binding supports exports the provider formats itself.
"""

from __future__ import annotations

from typing import Any

from . import _lib

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
        raise ValueError(
            f"unknown schema style {style!r}; expected one of: {', '.join(STYLES)}"
        ) from None


def from_core(style: str, exported: Any) -> list[dict[str, Any]] | None:
    """The core's export as a list of per-tool definitions, or None when it is
    not (yet) in this style's shape."""
    if not isinstance(exported, list):
        return None
    if style == "gemini":
        # The core exports one Gemini Tool holding every declaration; the
        # per-tool list is its functionDeclarations.
        if all(isinstance(t, dict) and "functionDeclarations" in t for t in exported):
            return [d for t in exported for d in t["functionDeclarations"]]
        return [] if not exported else None
    if all(isinstance(t, dict) and _accepts(style, t) for t in exported):
        return exported
    return None


def _accepts(style: str, item: dict[str, Any]) -> bool:
    if style in ("openai", "openai_chat"):
        return item.get("type") == "function" and isinstance(item.get("function"), dict)
    if style == "openai_responses":
        return item.get("type") == "function" and "name" in item
    if style == "anthropic":
        return "input_schema" in item
    if style == "mcp":
        return "inputSchema" in item
    return True  # describe


def fallback(style: str, described: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """TODO(#4): interim, built in Python from describe output; remove when the
    core exports every provider format."""
    out = []
    for t in described:
        name, description = t["name"], t.get("description", "")
        parameters = t.get("parameters") or {"type": "object", "properties": {}}
        if style in ("openai", "openai_chat"):
            out.append(
                {
                    "type": "function",
                    "function": {"name": name, "description": description, "parameters": parameters},
                }
            )
        elif style == "openai_responses":
            out.append(
                {"type": "function", "name": name, "description": description, "parameters": parameters}
            )
        elif style == "anthropic":
            out.append({"name": name, "description": description, "input_schema": parameters})
        elif style == "gemini":
            out.append({"name": name, "description": description, "parametersJsonSchema": parameters})
        elif style == "mcp":
            out.append({"name": name, "description": description, "inputSchema": parameters})
        else:
            out.append(t)
    return out
