"""ToolRegistry.search (issue #32): ranked by words or by a pattern, over
the tools registered now; bad input raises SearchError. The search tool
(capstan_registry_add_search_tool) loads the deferred tools it finds into
the export until unload_tools; the "native" deferred export."""

import asyncio
import json

import pytest

from capstan import SearchError, ToolCall, ToolRegistry, ValidationError, tool


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return city


@tool
def send_email(recipient: str, subject: str) -> str:
    """Send a message to someone."""
    return recipient


@tool
def list_files(path: str) -> list:
    """List the entries of a directory."""
    return []


def names(hits):
    return [h["name"] for h in hits]


def test_search_ranks_by_words_over_names_descriptions_and_parameters():
    reg = ToolRegistry([get_weather, send_email, list_files])
    try:
        assert names(reg.search("emails", limit=1)) == ["send_email"]
        assert names(reg.search("directory entries", limit=1)) == ["list_files"]
        assert names(reg.search("recipient")) == ["send_email"]
        hit = reg.search("weather")[0]
        assert hit["description"] == "Current weather for a city."
        assert hit["score"] > 0
    finally:
        reg.close()


def test_search_sees_tools_added_and_removed_after_it_ran():
    reg = ToolRegistry([get_weather])
    try:
        assert reg.search("directory") == []
        reg.add(list_files)
        assert names(reg.search("directory")) == ["list_files"]
        reg.remove("list_files")
        assert reg.search("directory") == []
    finally:
        reg.close()


def test_regex_search_matches_names_first():
    reg = ToolRegistry([get_weather, send_email, list_files])
    try:
        assert names(reg.search("^send_", regex=True)) == ["send_email"]
        assert names(reg.search("(?i)CITY", regex=True)) == ["get_weather"]
    finally:
        reg.close()


def test_bad_searches_raise_search_error_naming_the_problem():
    reg = ToolRegistry([get_weather])
    try:
        with pytest.raises(SearchError, match="empty"):
            reg.search("   ")
        with pytest.raises(SearchError, match="1024"):
            reg.search("x" * 1025)
        with pytest.raises(SearchError, match="not valid"):
            reg.search("(", regex=True)
        with pytest.raises(SearchError, match="limit"):
            reg.search("weather", limit=0)
        with pytest.raises(ValueError):
            reg.search("weather", limit=101)
    finally:
        reg.close()


@tool(deferred=True)
def get_forecast(city: str) -> str:
    """Weather forecast for a city, by day."""
    return "sunny"


def exported(reg, style="openai"):
    return {s["function"]["name"] if style == "openai" else s["name"] for s in reg.schemas(style)}


def test_the_search_tool_loads_deferred_tools_until_unloaded():
    with ToolRegistry([get_forecast, send_email]) as reg:
        reg.add_search_tool(name="find_tools", limit=3)
        assert exported(reg) == {"send_email", "find_tools"}  # the deferred tool left out
        assert "get_forecast" in {d["name"] for d in reg.describe()}
        # Callable before it was found.
        assert reg.execute(ToolCall("get_forecast", {"city": "Oslo"})).content == "sunny"
        found = reg.execute(ToolCall("find_tools", {"query": "weather in a city"}))
        assert found.outcome == "ok"
        assert [t["name"] for t in json.loads(found.content)["tools"]][0] == "get_forecast"
        assert exported(reg) == {"send_email", "find_tools", "get_forecast"}
        reg.unload_tools()
        assert exported(reg) == {"send_email", "find_tools"}
        # The search tool answers from the event loop too.
        again = asyncio.run(reg.aexecute_many([ToolCall("find_tools", {"query": "forecast"})]))[0]
        assert "get_forecast" in again.content and "get_forecast" in exported(reg)


def test_the_native_deferred_export_marks_deferred_tools_for_the_provider():
    with ToolRegistry([get_forecast, send_email]) as reg:
        reg.add_search_tool()
        anthropic = {t["name"]: t for t in reg.export("anthropic", deferred="native").tools}
        assert anthropic["get_forecast"]["defer_loading"] is True
        assert "defer_loading" not in anthropic["send_email"]
        responses = reg.export("openai_responses", deferred="native").tools
        assert {"type": "tool_search", "execution": "client"}.items() <= next(
            t for t in responses if t.get("type") == "tool_search"
        ).items()
        assert next(t for t in responses if t.get("name") == "get_forecast")["defer_loading"] is True
        assert "get_forecast" not in exported(reg, "anthropic")  # "hide", the default
        with pytest.raises(ValueError, match="deferred"):
            reg.schemas("anthropic", deferred="lazy")


def test_bad_search_tool_options_are_refused():
    with ToolRegistry([get_weather]) as reg:
        with pytest.raises(ValidationError):
            reg.add_search_tool(name="bad name")
        with pytest.raises(SearchError, match="limit"):
            reg.add_search_tool(limit=0)
        with pytest.raises(SearchError, match="limit"):
            reg.add_search_tool(limit=101)
        assert exported(reg) == {"get_weather"}
