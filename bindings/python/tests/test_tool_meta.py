"""MCP tool metadata (capstan_tool_def.mcp_meta): @tool's title,
annotations, output_schema and icons are exported in the "mcp" format and
describe, served in tools/list (seen through a mount), refused naming the
bad field; a result failing the output schema is a tool error naming its
JSON Pointer, on every path (the lone fast path included)."""

import asyncio
import dataclasses

import pytest

from capstan import ToolCall, ToolRegistry, ValidationError, tool

FORECAST = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
}
ICON = {"src": "https://example.com/sun.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "light"}


@tool(
    title="Weather forecast",
    annotations={"title": "Forecast", "readOnlyHint": True, "openWorldHint": True},
    output_schema=FORECAST,
    icons=[ICON],
)
def forecast(city: str, broken: bool = False) -> dict:
    """Forecast the weather of a city."""
    return {"city": city, "celsius": "warm" if broken else 21.5}


def test_metadata_is_exported_in_the_mcp_format_and_describe():
    with ToolRegistry([forecast]) as r:
        (exported,) = r.schemas("mcp")
        assert exported["title"] == "Weather forecast"
        assert exported["annotations"] == {"title": "Forecast", "readOnlyHint": True, "openWorldHint": True}
        assert exported["outputSchema"] == FORECAST
        assert exported["icons"] == [ICON]
        (described,) = r.describe()
        assert described["mcp"]["title"] == "Weather forecast"
        # Not a provider's field: the OpenAI schema has none of it.
        assert "title" not in r.schemas("openai")[0]["function"]


def test_a_result_failing_the_output_schema_is_a_tool_error_naming_the_pointer():
    with ToolRegistry([forecast]) as r:
        ok = r.execute(ToolCall("forecast", {"city": "Oslo"}))
        assert ok.outcome == "ok" and ok.data == {"city": "Oslo", "celsius": 21.5}
        bad_calls = [ToolCall("forecast", {"city": "Oslo", "broken": True}, f"b{i}") for i in range(2)]
        lone = r.execute(bad_calls[0])  # the fast path must not skip the check
        many = r.execute_many(bad_calls)
        awaited = asyncio.run(r.aexecute(bad_calls[0]))
        for result in (lone, *many, awaited):
            assert result.outcome == "tool_error" and result.is_error
            assert "outputSchema" in result.content and "/celsius" in result.content


def test_annotations_from_the_mcp_sdk_and_an_output_schema_from_a_dataclass():
    types = pytest.importorskip("mcp.types")

    @dataclasses.dataclass
    class Total:
        sum: int

    @tool(annotations=types.ToolAnnotations(readOnlyHint=True, idempotentHint=True), output_schema=Total)
    def add(a: int, b: int) -> dict:
        """Add two integers."""
        return {"sum": a + b}

    with ToolRegistry([add]) as r:
        (exported,) = r.schemas("mcp")
        assert exported["annotations"] == {"readOnlyHint": True, "idempotentHint": True}
        assert exported["outputSchema"]["type"] == "object"
        assert exported["outputSchema"]["properties"]["sum"]["type"] == "integer"
        assert r.execute(ToolCall("add", {"a": 1, "b": 2})).data == {"sum": 3}


@pytest.mark.parametrize(
    "meta, named",
    [
        ({"annotations": {"readOnlyHint": "yes"}}, "readOnlyHint"),
        ({"icons": [{"mimeType": "image/png"}]}, "src"),
        ({"output_schema": {"type": "array"}}, "outputSchema"),
    ],
)
def test_bad_metadata_is_refused_naming_the_field(meta, named):
    def echo(text: str) -> str:
        """Echo."""
        return text

    with ToolRegistry() as r:
        with pytest.raises(ValidationError) as err:
            r.add(tool(**meta)(echo))
        assert named in str(err.value)
        assert "echo" not in r


def test_metadata_is_served_in_tools_list_and_reaches_a_mount():
    pytest.importorskip("mcp")
    with ToolRegistry([forecast]) as served, served.start_mcp_server() as server, ToolRegistry() as local:
        with local.mount_mcp(url=server.url, prefix="remote_", connect_timeout=60):
            (described,) = [d for d in local.describe() if d["name"] == "remote_forecast"]
            assert described["mcp"]["title"] == "Weather forecast"
            assert described["mcp"]["annotations"]["readOnlyHint"] is True
            assert described["mcp"]["outputSchema"] == FORECAST
            bad = local.execute(ToolCall("remote_forecast", {"city": "Oslo", "broken": True}))
            assert bad.is_error and "/celsius" in bad.content
