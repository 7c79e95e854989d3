"""Provider-native deferred loading (issue #32): capstan's exports and turn
output under CAPSTAN_EXPORT_DEFERRED_NATIVE, as tests/native_search.rs pins
them in tests/fixtures/providers/native_search_expected.json, checked here
against the providers' own SDK types (openai 3.57.0, anthropic 2.15.0:
tests/python-requirements.txt). The call fixtures they answer are checked
too."""

from __future__ import annotations

import json
from pathlib import Path

from test_content_parts import strict

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "providers"


def load(name: str):
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


EXPECTED = load("native_search_expected.json")


def no_extra(model) -> None:
    """The SDK models accept unknown keys: a misspelled field would pass."""
    assert not model.model_extra, f"{type(model).__name__} got unknown keys {set(model.model_extra)}"


def test_the_tool_search_call_fixture_fits_response_tool_search_call():
    from openai.types.responses import ResponseToolSearchCall

    items = [i for i in load("openai_responses_tool_search.json")["output"] if i["type"] == "tool_search_call"]
    assert [i["execution"] for i in items] == ["client", "server"]
    for item in items:
        no_extra(ResponseToolSearchCall.model_validate(item))


def test_openai_native_export_fits_function_and_tool_search_tool_types():
    from openai.types.responses import FunctionTool, FunctionToolParam, ToolSearchTool, ToolSearchToolParam

    tools = EXPECTED["openai_responses_tools"]
    *functions, search = tools
    for tool in functions:
        strict(tool, FunctionToolParam)
        no_extra(FunctionTool.model_validate(tool))
    assert [t.get("defer_loading", False) for t in functions] == [False, True, True, True]
    strict(search, ToolSearchToolParam)
    parsed = ToolSearchTool.model_validate(search)
    no_extra(parsed)
    assert parsed.execution == "client"


def test_openai_tool_search_output_fits_the_sdk_types():
    from openai.types.responses import ResponseToolSearchOutputItemParam
    from openai.types.responses.response_input_param import FunctionCallOutput
    from openai.types.responses.response_tool_search_output_item_param_param import (
        ResponseToolSearchOutputItemParamParam,
    )

    output, function_output = EXPECTED["openai_responses_turn"]
    strict(output, ResponseToolSearchOutputItemParamParam)
    parsed = ResponseToolSearchOutputItemParam.model_validate(output)
    no_extra(parsed)
    assert parsed.execution == "client" and parsed.call_id == "call_Search1"
    assert [t.name for t in parsed.tools] == ["forecast_weather", "weather_history"]
    for tool in parsed.tools:
        assert tool.type == "function"
        no_extra(tool)
    strict(function_output, FunctionCallOutput)


def test_the_anthropic_call_fixture_fits_message():
    from anthropic.types import Message

    body = {k: v for k, v in load("anthropic_tool_search.json").items() if k != "_source"}
    message = Message.model_validate(body)
    no_extra(message)
    assert [b.type for b in message.content] == ["text", "tool_use", "tool_use"]


def test_anthropic_native_export_fits_tool_param():
    from anthropic.types import ToolParam

    tools = EXPECTED["anthropic_tools"]
    for tool in tools:
        strict(tool, ToolParam)
    deferred = {t["name"] for t in tools if t.get("defer_loading")}
    assert deferred == {"forecast_weather", "send_email", "weather_history"}


def test_anthropic_tool_references_fit_the_sdk_types():
    from anthropic.types import MessageParam, ToolReferenceBlock, ToolReferenceBlockParam, ToolResultBlockParam

    message = EXPECTED["anthropic_turn"]
    strict(message, MessageParam)
    search, other = message["content"]
    strict(search, ToolResultBlockParam)
    strict(other, ToolResultBlockParam)
    for block in search["content"]:
        strict(block, ToolReferenceBlockParam)
        no_extra(ToolReferenceBlock.model_validate(block))
    assert [b["tool_name"] for b in search["content"]] == ["forecast_weather", "weather_history"]
