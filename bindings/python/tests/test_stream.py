"""ToolRegistry.stream: a streamed OpenAI Chat (and other formats') body fed
in pieces; early dispatch; async iteration over results; cut and dropped
streams. The bodies are the fixtures of tests/fixtures/stream."""

import asyncio
import threading
from pathlib import Path

import pytest

import capstan
from capstan import CapstanError, ToolRegistry, tool

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "stream"
TEXT = "Let me check that for you. Un instant… ☕"


def body(fmt: str, case: str) -> bytes:
    return (FIXTURES / fmt / f"{case}.sse").read_bytes()


def make_tools(ran: list, weather_waits_for_response: bool = False) -> list:
    @tool(wait_for_response=weather_waits_for_response)
    def get_weather(city: str, unit: str = "celsius") -> dict:
        """Weather."""
        ran.append(city)
        return {"city": city, "t": 21}

    @tool
    def get_time(tz: str) -> str:
        """Time."""
        ran.append(tz)
        return "12:00"

    return [get_weather, get_time]


def make_registry(ran: list) -> ToolRegistry:
    return ToolRegistry(make_tools(ran))


@pytest.mark.parametrize("fmt", ["openai_chat", "openai_responses", "anthropic", "gemini"])
def test_a_streamed_turn_gives_calls_results_and_messages_in_call_order(fmt):
    ran = []
    with make_registry(ran) as registry:
        texts = []
        stream = registry.stream(fmt, early_dispatch=True, on_text=texts.append)
        data = body(fmt, "parallel")
        for i in range(0, len(data), 11):
            stream.feed(data[i : i + 11])
        turn = stream.finish()
        assert [c.name for c in turn.calls] == ["get_weather", "get_time", "get_weather"]
        assert [r.call_id for r in turn.results] == [c.id for c in turn.calls]
        assert [r.outcome for r in turn.results] == ["ok", "ok", "ok"]
        assert sorted(ran) == ["Europe/Paris", "Paris", "Tokyo"]
        assert turn.cut_calls == []
        assert turn.messages  # the provider's tool-result messages
        assert texts == []


def test_text_deltas_reach_on_text_as_they_stream():
    with make_registry([]) as registry:
        texts = []
        stream = registry.stream("openai_chat", on_text=texts.append)
        stream.feed(body("openai_chat", "text_then_calls"))
        assert "".join(texts) == TEXT  # before finish
        turn = stream.finish()
        assert turn.text == TEXT
        assert turn.messages[0]["role"] == "tool"


def test_async_for_yields_the_first_result_before_the_stream_ends():
    ran = []

    async def main():
        with make_registry(ran) as registry:
            stream = registry.stream("openai_chat", early_dispatch=True)
            data = body("openai_chat", "parallel")
            second = data.index(b'"id": "call_t2"')
            second = data.rindex(b"\n", 0, second) + 1
            events = []

            async def feeder():
                stream.feed(data[:second])  # the first call's start ... the second's
                await asyncio.sleep(0.2)
                line_end = data.index(b"\n\n", second) + 2  # the whole event
                stream.feed(data[second:line_end])  # the second call starts: the first is complete
                # Wait for the first result (bounded) before the rest of the body.
                for _ in range(3000):
                    if events:
                        break
                    await asyncio.sleep(0.01)
                events.append("stream end")
                stream.feed(data[line_end:])
                return await stream.afinish()

            async def reader():
                async for result in stream:
                    events.append(result.call_id)

            turn, _ = await asyncio.gather(feeder(), reader())
            assert events[0] == "call_w1", events
            assert events.index("stream end") == 1, events
            assert sorted(events[2:]) == ["call_t2", "call_w3"]
            assert [r.call_id for r in turn.results] == ["call_w1", "call_t2", "call_w3"]

    asyncio.run(main())


def test_without_early_dispatch_nothing_runs_before_finish():
    ran = []
    with make_registry(ran) as registry:
        stream = registry.stream("anthropic")
        stream.feed(body("anthropic", "parallel"))
        threading.Event().wait(0.05)
        assert ran == []
        stream.finish()
        assert len(ran) == 3


def test_a_call_cut_by_the_token_limit_is_never_run():
    ran = []
    with make_registry(ran) as registry:
        stream = registry.stream("anthropic", early_dispatch=True)
        stream.feed(body("anthropic", "truncated"))
        turn = stream.finish()
        assert turn.cut_calls == [1]
        assert turn.results[1].outcome == "invalid_arguments"
        assert turn.results[1].content.startswith("Not run")
        assert ran == ["Paris"]


def test_a_dropped_stream_raises_stream_truncated():
    with make_registry([]) as registry:
        stream = registry.stream("gemini")
        stream.feed(body("gemini", "dropped"))
        with pytest.raises(CapstanError) as info:
            stream.finish()
        assert "STREAM_TRUNCATED" in str(info.value.status)


def test_a_provider_error_event_raises_provider_error_and_sticks():
    with make_registry([]) as registry:
        stream = registry.stream("anthropic")
        with pytest.raises(CapstanError, match="overloaded_error"):
            stream.feed(body("anthropic", "error"))
        with pytest.raises(CapstanError, match="overloaded_error"):
            stream.finish()


def test_unknown_stream_styles_are_refused():
    with make_registry([]) as registry:
        with pytest.raises(ValueError, match="stream style"):
            registry.stream("mcp")


def test_a_wait_for_response_tool_starts_only_at_finish_even_with_early_dispatch():
    ran = []
    get_weather, get_time = make_tools(ran, weather_waits_for_response=True)
    assert get_weather.wait_for_response and not get_time.wait_for_response
    whole = body("anthropic", "parallel")
    cut = whole.index(b"event: message_stop")
    with ToolRegistry([get_weather, get_time]) as registry:
        described = {d["name"]: d for d in registry.describe()}
        assert described["get_weather"]["wait_for_response"] is True
        assert described["get_time"]["wait_for_response"] is False
        stream = registry.stream("anthropic", early_dispatch=True)
        # Every call is complete before the last event: get_time starts
        # early, the two get_weather calls wait for the whole response.
        stream.feed(whole[:cut])
        for _ in range(2000):
            if ran:
                break
            threading.Event().wait(0.005)
        threading.Event().wait(0.05)
        assert ran == ["Europe/Paris"]
        stream.feed(whole[cut:])
        turn = stream.finish()
        assert [r.call_id for r in turn.results] == ["call_w1", "call_t2", "call_w3"]
        assert ran[0] == "Europe/Paris" and sorted(ran[1:]) == ["Paris", "Tokyo"]


def test_a_provider_error_carries_its_kind_and_status_as_attributes():
    with make_registry([]) as registry:
        stream = registry.stream("anthropic")
        with pytest.raises(CapstanError) as info:
            stream.feed(body("anthropic", "error"))
    err = info.value
    assert err.status == "CAPSTAN_ERR_PROVIDER_ERROR"
    assert err.status_code == 18
    assert err.provider is not None
    assert err.provider.kind == "overloaded_error"
    assert err.provider.message == "Overloaded"
    assert err.provider.retry_after is None
    assert err.pointer is None
