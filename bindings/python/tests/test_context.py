"""A tool's Context (issue #34): a parameter annotated capstan.Context gets
the call's id, tool name, deadline and cancellation, and is not in the
schema."""

from __future__ import annotations

import asyncio
import threading
import time

import capstan
from capstan import Context, ToolCall, ToolRegistry, tool


def test_the_context_parameter_is_not_in_the_schema():
    @tool
    def search(query: str, ctx: Context, limit: int = 5) -> str:
        """Search."""
        return query

    assert list(search.parameters["properties"]) == ["query", "limit"]
    assert search.parameters["required"] == ["query"]
    with ToolRegistry([search]) as r:
        assert list(r.schemas("openai")[0]["function"]["parameters"]["properties"]) == ["query", "limit"]
        # A model that sends it anyway is refused, as for any unknown argument.
        assert r.execute(ToolCall("search", {"query": "q", "ctx": 1})).outcome == "invalid_arguments"


def test_every_path_gives_the_callers_id_and_the_tool_name():
    seen: list[tuple[str, str, float | None, bool]] = []

    @tool
    def probe(ctx: Context, n: int) -> int:
        """Probe."""
        seen.append((ctx.call_id, ctx.tool, ctx.deadline, ctx.cancelled))
        return n

    @tool
    async def aprobe(n: int, context: capstan.Context) -> int:
        """Probe, async."""
        seen.append((context.call_id, context.tool, context.deadline, context.cancelled))
        return n

    with ToolRegistry([probe, aprobe]) as r:
        assert r.execute(ToolCall("probe", {"n": 1}, "lone")).data == 1  # the fast path
        assert r.execute_many([ToolCall("probe", {"n": 2}, "b0"), ToolCall("aprobe", {"n": 3}, "b1")])[1].data == 3
        assert asyncio.run(r.aexecute(ToolCall("aprobe", {"n": 4}, "async-lone"))).data == 4
        assert asyncio.run(r.aexecute_many([ToolCall("probe", {"n": 5}, "inline")]))[0].data == 5
        turn = r.run_turn("anthropic", {"content": [{"type": "tool_use", "id": "toolu_1", "name": "probe", "input": {"n": 6}}]})
        assert turn["content"][0]["content"] == "6"
    assert sorted(s[0] for s in seen) == sorted(["lone", "b0", "b1", "async-lone", "inline", "toolu_1"])
    assert {s[1] for s in seen} == {"probe", "aprobe"}
    assert all(deadline is None and not cancelled for _, _, deadline, cancelled in seen)


def test_a_tool_sees_its_deadline_and_its_cancellation():
    observed: dict[str, object] = {}
    stopped = threading.Event()

    @tool(timeout=0.2)
    def crawl(ctx: Context) -> str:
        """Crawl until told to stop."""
        observed["remaining"] = ctx.remaining()
        observed["deadline"] = ctx.deadline
        end = time.monotonic() + 10
        while not ctx.cancelled and time.monotonic() < end:
            time.sleep(0.005)
        observed["cancelled"] = ctx.cancelled
        stopped.set()
        return "stopped"

    with ToolRegistry([crawl]) as r:
        before = time.monotonic()
        result = r.execute(ToolCall("crawl"))
        after = time.monotonic()
        assert result.outcome == "timeout"
        assert stopped.wait(10), "the tool never saw its cancellation"
    assert observed["cancelled"] is True
    # The deadline is the call's start plus its timeout.
    assert 0 <= observed["remaining"] <= 0.2  # type: ignore[operator]
    assert before + 0.2 <= observed["deadline"] <= after + 0.2  # type: ignore[operator]


def test_the_batch_deadline_is_the_contexts_when_it_comes_first():
    deadlines: list[float | None] = []

    @tool(timeout=60)
    def probe(ctx: Context) -> str:
        """Probe."""
        deadlines.append(ctx.deadline)
        return "ok"

    with ToolRegistry([probe]) as r:
        before = time.monotonic()
        assert r.execute(ToolCall("probe"), deadline=5).outcome == "ok"
        after = time.monotonic()
        assert r.execute(ToolCall("probe")).outcome == "ok"
    assert before + 5 <= deadlines[0] <= after + 5  # type: ignore[operator]
    assert deadlines[1] > after + 5  # type: ignore[operator] # the tool's 60 s timeout
