"""Strict export and Gemini lowering from Python (issue #34): the core's
export options and report, and strict-mode nulls dropped on every path."""

from __future__ import annotations

import asyncio

from capstan import ToolCall, ToolExport, ToolRegistry, tool


@tool
def search(query: str, limit: int = 3) -> str:
    """Search."""
    return f"{query}:{limit}"


def test_strict_openai_schemas_and_the_calls_a_strict_model_sends():
    with ToolRegistry([search], strict=True) as r:
        function = r.schemas("openai")[0]["function"]
        assert function["strict"] is True
        assert sorted(function["parameters"]["required"]) == ["limit", "query"]
        # A strict model sends the optional argument as null: dropped, the default fills it.
        call = ToolCall("search", {"query": "q", "limit": None})
        assert r.execute(call).content == "q:3"  # the lone-call fast path
        assert [x.content for x in r.execute_many([call, call])] == ["q:3", "q:3"]
        assert asyncio.run(r.aexecute(call)).content == "q:3"
        turn = r.run_turn("openai", {"choices": [{"message": {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"query":"q","limit":null}'}}]}}]})
        assert turn[0]["content"] == "q:3"
        # Not strict on request.
        assert r.schemas("openai", strict=False)[0]["function"].get("strict") is not True
    with ToolRegistry([search]) as r:
        assert r.execute(ToolCall("search", {"query": "q", "limit": None})).outcome == "invalid_arguments"


def test_export_gives_the_api_value_and_the_report():
    @tool(parameters={"type": "object", "properties": {"x": {"type": "string", "pattern": "^a", "format": "email"}},
                      "required": ["x"], "additionalProperties": False})
    def odd(**kwargs: str) -> str:
        """Odd."""
        return "ok"

    with ToolRegistry([odd]) as r:
        exported = r.export("gemini", gemini_lower=True)
        assert isinstance(exported, ToolExport)
        declaration = exported.tools[0]["functionDeclarations"][0]
        assert "parameters" in declaration and "parametersJsonSchema" not in declaration
        assert "parametersJsonSchema" in r.export("gemini").tools[0]["functionDeclarations"][0]
        assert {"tool": "odd", "pointer": "/properties/x/format"}.items() <= exported.report[0].items()
        assert "format dropped" in exported.report[0]["message"]
        assert r.export("gemini").report == []  # parametersJsonSchema keeps it all
