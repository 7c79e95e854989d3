"""capstan's MCP server (stdio and streamable HTTP) as the official Python SDK
(mcp==2.3.0) sees it: list, call, invalid arguments, timeout, cancellation,
approval, structured output, list_changed."""

import asyncio

import mcp.types as types
import pytest
from mcp import MCPError

from conftest import BOUND, run, session


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


def test_tools_list_is_the_registry(transport):
    async def body():
        async with session(transport) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == {
                "add", "cancels", "echo", "grow", "guarded", "patient", "shrink", "slow", "stats",
                "steps",
            }
            assert tools["add"].description == "Adds two numbers."
            assert tools["add"].input_schema["required"] == ["a", "b"]
            # What the tool carries (capstan_tool_def.mcp_meta).
            stats = tools["stats"]
            assert stats.title == "Statistics"
            assert stats.annotations.read_only_hint is True
            assert stats.annotations.destructive_hint is False
            assert stats.annotations.idempotent_hint is True
            assert stats.annotations.open_world_hint is False
            assert stats.output_schema["required"] == ["calls", "ok"]
            assert [(i.src, i.mime_type, i.sizes) for i in stats.icons] == [
                ("https://example.com/stats.png", "image/png", ["48x48"])
            ]
            # What the host added in the server's tools_meta.
            assert tools["add"].title == "Addition"
            assert tools["echo"].title is None and tools["echo"].annotations is None

    run(body())


def test_call_returns_the_tools_text(transport):
    async def body():
        async with session(transport) as s:
            r = await s.call_tool("add", {"a": 2, "b": 40})
            assert not r.is_error and text_of(r) == "42"
            r = await s.call_tool("echo", {"text": "hello"})
            assert not r.is_error and text_of(r) == "hello"

    run(body())


def test_invalid_arguments_are_an_error_result_with_the_validators_text(transport):
    async def body():
        async with session(transport) as s:
            r = await s.call_tool("add", {"a": 1, "b": "x"})
            assert r.is_error
            assert text_of(r) == 'Invalid arguments:\n- /b: expected number, got string "x"'
            r = await s.call_tool("echo", {"text": "hi", "extra": 1})
            assert r.is_error and "extra" in text_of(r)

    run(body())


def test_unknown_tool_is_a_jsonrpc_invalid_params_error(transport):
    async def body():
        async with session(transport) as s:
            with pytest.raises(MCPError) as e:
                await s.call_tool("ad", {})
            assert e.value.code == -32602
            assert "Unknown tool" in str(e.value) and "add" in str(e.value)

    run(body())


def test_timeout_is_an_error_result(transport):
    async def body():
        async with session(transport) as s:
            r = await s.call_tool("slow", {"seconds": 10})
            assert r.is_error
            assert "time" in text_of(r).lower()

    run(body())


def test_client_cancellation_cancels_the_call(transport):
    async def body():
        async with session(transport) as s:
            with pytest.raises(MCPError):
                # The SDK abandons the request after 0.5 s and sends notifications/cancelled.
                await s.call_tool("patient", {"seconds": 60}, read_timeout_seconds=0.5)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + BOUND
            seen = "0"
            while loop.time() < deadline:
                seen = text_of(await s.call_tool("cancels", {}))
                if seen == "1":
                    break
                await asyncio.sleep(0.05)
            assert seen == "1", "the tool never saw capstan_call_cancelled"

    run(body())


def test_approval_required_tools_ask_the_hosts_approver(transport):
    async def body():
        async with session(transport) as s:
            r = await s.call_tool("guarded", {"action": "read"})
            assert not r.is_error and text_of(r) == "done"
            r = await s.call_tool("guarded", {"action": "delete"})
            assert r.is_error and "the user said no to deleting" in text_of(r)

    run(body())


def test_json_object_results_carry_structured_content(transport):
    async def body():
        async with session(transport) as s:
            r = await s.call_tool("stats", {})
            assert not r.is_error
            assert r.structured_content == {"calls": 3, "ok": True}

    run(body())


def test_progress_reaches_a_client_that_asks_for_it(transport):
    async def body():
        seen = []

        async def on_progress(progress, total, message):
            seen.append((progress, total, message))

        async with session(transport) as s:
            r = await s.call_tool("steps", {}, progress_callback=on_progress)
            assert not r.is_error and text_of(r) == "three steps"
            # Sent before the result, in order; the refused report is not sent.
            assert seen == [(1, 3, "one"), (2, 3, "two")]
            seen.clear()
            r = await s.call_tool("steps", {})
            assert text_of(r) == "three steps" and seen == []

    run(body())


def test_register_and_unregister_send_list_changed(transport):
    async def body():
        seen = []

        async def changes():
            return sum(
                1
                for m in seen
                if isinstance(m, types.ToolListChangedNotification)
                or getattr(getattr(m, "root", None), "method", None) == "notifications/tools/list_changed"
            )

        async def wait_for(n):
            loop = asyncio.get_running_loop()
            deadline = loop.time() + BOUND
            while loop.time() < deadline and await changes() < n:
                await asyncio.sleep(0.02)
            assert await changes() >= n, f"got {seen!r}"

        async with session(transport, seen) as s:
            assert text_of(await s.call_tool("grow", {})) == "grown"
            await wait_for(1)
            names = {t.name for t in (await s.list_tools()).tools}
            assert "late" in names
            assert text_of(await s.call_tool("late", {})) == "late here"
            assert text_of(await s.call_tool("shrink", {})) == "shrunk"
            await wait_for(2)
            names = {t.name for t in (await s.list_tools()).tools}
            assert "late" not in names

    run(body())
