"""One agent turn from Python (issue #34): parse_calls, format_results and
run_turn on the provider SDKs' own response objects (openai, anthropic,
google-genai, pinned in tests/python-requirements.txt), and docs/python.md's
agent turn run as written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import capstan
from capstan import CapstanError, ToolCall, ToolRegistry, ToolResult, format_results, parse_calls, tool


@tool
def get_weather(city: str, units: str = "celsius") -> dict:
    """Get the current weather for a city."""
    return {"city": city, "temp": 18, "units": units}


# A Chat Completions response as the API sends it (the openai SDK's
# ChatCompletion fields: id, object, created, model, choices, usage).
CHAT_COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1764633600,
    "model": "gpt-4.1",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "logprobs": None,
            "message": {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}},
                    {"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":7}'}},
                ],
            },
        }
    ],
    "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70},
}


@pytest.fixture
def reg():
    with ToolRegistry([get_weather]) as r:
        yield r


def test_parse_calls_reads_the_openai_sdk_object():
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate(CHAT_COMPLETION)
    calls = parse_calls("openai", completion)
    assert calls == [
        ToolCall("get_weather", {"city": "Oslo"}, "call_a"),
        ToolCall("get_weather", {"city": 7}, "call_b"),
    ]
    # The dict and its JSON text read the same.
    assert parse_calls("openai", CHAT_COMPLETION) == calls
    assert parse_calls("openai", json.dumps(CHAT_COMPLETION)) == calls


def test_parse_calls_reads_anthropic_and_gemini_sdk_objects():
    from anthropic.types import Message
    from google.genai import types as genai

    message = Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {"type": "text", "text": "Looking it up."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Bergen"}},
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
    )
    assert parse_calls("anthropic", message) == [ToolCall("get_weather", {"city": "Bergen"}, "toolu_1")]
    response = genai.GenerateContentResponse(
        candidates=[
            genai.Candidate(
                content=genai.Content(
                    role="model",
                    parts=[genai.Part(function_call=genai.FunctionCall(id="g1", name="get_weather", args={"city": "Rome"}))],
                )
            )
        ]
    )
    assert parse_calls("gemini", response) == [ToolCall("get_weather", {"city": "Rome"}, "g1")]


def test_parse_calls_raises_for_a_provider_error_and_a_wrong_shape():
    with pytest.raises(CapstanError) as caught:
        parse_calls("anthropic", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert caught.value.status == "CAPSTAN_ERR_PROVIDER_ERROR"
    assert caught.value.provider is not None and caught.value.provider.kind == "overloaded_error"
    with pytest.raises(CapstanError) as caught:
        parse_calls("anthropic", {"content": [{"type": "tool_use", "id": "t"}]})
    assert caught.value.status == "CAPSTAN_ERR_INVALID_RESPONSE"
    assert "name" in str(caught.value)
    with pytest.raises(ValueError, match="unknown format"):
        parse_calls("cohere", {})
    with pytest.raises(TypeError, match="provider SDK object"):
        parse_calls("openai", object())


def test_format_results_writes_each_provider_shape():
    results = [
        ToolResult("call_a", "get_weather", '{"city":"Oslo"}'),
        ToolResult("call_b", "get_weather", "boom", True, outcome="tool_error"),
    ]
    assert format_results("openai", results) == [
        {"role": "tool", "tool_call_id": "call_a", "content": '{"city":"Oslo"}'},
        {"role": "tool", "tool_call_id": "call_b", "content": "boom"},
    ]
    message = format_results("anthropic", results)
    assert message["role"] == "user"
    assert [b["tool_use_id"] for b in message["content"]] == ["call_a", "call_b"]
    assert message["content"][1]["is_error"] is True
    # A normalized dict works too, and a malformed one names itself.
    assert format_results("openai", [{"id": "x", "name": "n", "content": "c", "is_error": False}])[0]["tool_call_id"] == "x"
    with pytest.raises(CapstanError) as caught:
        format_results("openai", [{"name": "n"}])
    assert caught.value.status == "CAPSTAN_ERR_INVALID_RESULTS"
    with pytest.raises(TypeError):
        format_results("openai", [42])  # type: ignore[list-item]


def test_execute_many_then_format_results_equals_run_turn(reg):
    calls = parse_calls("openai", CHAT_COMPLETION)
    by_hand = format_results("openai", reg.execute_many(calls))
    assert by_hand == reg.run_turn("openai", CHAT_COMPLETION)
    assert by_hand[0]["content"] == '{"city":"Oslo","temp":18,"units":"celsius"}'
    assert "city" in by_hand[1]["content"] and "7" in by_hand[1]["content"]


def test_run_turn_takes_the_sdk_object_and_the_approved_ids():
    from openai.types.chat import ChatCompletion

    @tool(requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    body = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "delete_file", "arguments": '{"path":"a"}'}},
                        {"id": "c2", "type": "function", "function": {"name": "delete_file", "arguments": '{"path":"b"}'}},
                    ],
                }
            }
        ]
    }
    with ToolRegistry([delete_file]) as r:
        completion = ChatCompletion.model_validate({**CHAT_COMPLETION, "choices": [{**CHAT_COMPLETION["choices"][0], **body["choices"][0]}]})
        out = r.run_turn("openai", completion, approved={"c2"})
        assert out[1]["content"] == "deleted b"
        assert out[0]["content"] == 'Tool "delete_file" requires approval and no approver is set; the call was not run.'

        out = r.run_turn("openai", completion, approved=True)
        assert [m["content"] for m in out] == ["deleted a", "deleted b"]


def test_the_readme_agent_turn_runs_as_written():
    """The Python guide's agent turn (docs/python.md), extracted and executed
    (with the openai client replaced by a recorded ChatCompletion)."""
    guide = (Path(__file__).resolve().parents[3] / "docs" / "python.md").read_text()
    code = next((m for m in re.finditer(r"```python\n(.*?)```", guide, re.S) if "OpenAI()" in m.group(1)), None)
    assert code, "docs/python.md has no python block with the agent turn (client = OpenAI())"
    from openai.types.chat import ChatCompletion

    class Completions:
        def create(self, **request):
            assert request["tools"][0]["function"]["name"] == "get_weather"
            if any(m["role"] == "tool" for m in request["messages"]):
                return ChatCompletion.model_validate(
                    {**CHAT_COMPLETION, "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "18 degrees in Oslo."}}]}
                )
            return ChatCompletion.model_validate(CHAT_COMPLETION)

    class Client:
        class chat:  # noqa: N801 - the openai SDK's attribute
            completions = Completions()

    namespace = {"__name__": "readme", "client": Client()}
    exec(compile(code.group(1).replace("client = OpenAI()", ""), "docs/python.md", "exec"), namespace)
    assert namespace["answer"] == "18 degrees in Oslo."


# An Anthropic response with extended thinking: the signature must reach the
# next request unchanged, which whole_turn=True (CAPSTAN_EXEC_WHOLE_TURN) does.
THINKING_RESPONSE = {
    "id": "msg_think",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [
        {"type": "thinking", "thinking": "Paris: ask the tool.", "signature": "EqQBCkYIBRgCKkD/sig=="},
        {"type": "tool_use", "id": "toolu_w", "name": "get_weather", "input": {"city": "Paris"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 20},
}


def test_run_turn_whole_turn_starts_with_the_assistant_message_and_its_thinking_block() -> None:
    reg = ToolRegistry([get_weather])
    turn = reg.run_turn("anthropic", THINKING_RESPONSE, whole_turn=True)
    assert isinstance(turn, list) and len(turn) == 2, turn
    assert turn[0]["role"] == "assistant"
    assert turn[0]["content"][0] == THINKING_RESPONSE["content"][0]
    assert turn[0]["content"][1]["id"] == "toolu_w"
    assert turn[1]["role"] == "user" and turn[1]["content"][0]["tool_use_id"] == "toolu_w"
    # without the flag: the results only
    assert reg.run_turn("anthropic", THINKING_RESPONSE)["role"] == "user"
