"""Both MCP protocol eras against capstan's server (stdio and streamable HTTP),
as the official Python SDK (mcp==2.3.0) speaks them: "legacy" (the
`initialize` handshake, 2025-11-25, a session over HTTP), "2026-07-28"
(stateless: the version and capabilities in every request's `_meta`, no
handshake) and "auto" (`server/discover` first, as a new client does)."""

import asyncio
import contextlib
import json
import urllib.request

import pytest
from mcp import Client, MCPError, StdioServerParameters

from conftest import BOUND, SERVE_HOST, http_host, run


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


# What each client mode ends up speaking with capstan.
NEGOTIATED = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28", "auto": "2026-07-28"}


@contextlib.asynccontextmanager
async def client(transport, mode, url=None):
    """A connected Client of the SDK in `mode` on `transport` ("stdio" or "http";
    over HTTP on `url` when given, else on a serve_host of its own)."""
    if transport == "stdio":
        target = StdioServerParameters(command=SERVE_HOST, args=["stdio"])
        async with Client(target, mode=mode, read_timeout_seconds=BOUND) as c:
            yield c
    elif url is not None:
        async with Client(url, mode=mode, read_timeout_seconds=BOUND) as c:
            yield c
    else:
        with http_host() as (own, _):
            async with Client(own, mode=mode, read_timeout_seconds=BOUND) as c:
                yield c


@pytest.fixture(params=["legacy", "2026-07-28", "auto"])
def mode(request):
    return request.param


def test_each_era_lists_and_calls_the_tools(transport, mode):
    async def body():
        async with client(transport, mode) as c:
            assert c.protocol_version == NEGOTIATED[mode]
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert {"add", "echo", "stats", "steps"} <= set(tools)
            assert tools["stats"].output_schema["required"] == ["calls", "ok"]
            r = await c.call_tool("add", {"a": 2, "b": 40})
            assert not r.is_error and text_of(r) == "42"
            r = await c.call_tool("stats", {})
            assert r.structured_content == {"calls": 3, "ok": True}
            r = await c.call_tool("add", {"a": 1, "b": "x"})
            assert r.is_error and "/b: expected number" in text_of(r)
            with pytest.raises(MCPError) as e:
                await c.call_tool("ad", {})
            assert e.value.code == -32602

    run(body())


def test_discover_names_both_eras_and_the_tools_capability(transport):
    async def body():
        async with client(transport, "auto") as c:
            discovered = c.session.discover_result
            assert discovered is not None
            assert "2026-07-28" in discovered.supported_versions
            assert "2025-11-25" in discovered.supported_versions
            assert discovered.capabilities.tools is not None
            assert c.server_info is not None and c.server_info.name == "serve_host"

    run(body())


def test_a_modern_client_gets_progress_and_cancels_by_leaving(transport):
    async def body():
        seen = []

        async def on_progress(progress, total, message):
            seen.append((progress, total, message))

        async with client(transport, "2026-07-28") as c:
            r = await c.call_tool("steps", {}, progress_callback=on_progress)
            assert not r.is_error and text_of(r) == "three steps"
            assert seen == [(1, 3, "one"), (2, 3, "two")]
            with pytest.raises(Exception):
                await c.call_tool("patient", {"seconds": 60}, read_timeout_seconds=0.5)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + BOUND
            cancelled = "0"
            while loop.time() < deadline and cancelled != "1":
                cancelled = text_of(await c.call_tool("cancels", {}))
                await asyncio.sleep(0.05)
            assert cancelled == "1", "the tool never saw capstan_call_cancelled"

    run(body())


def test_a_modern_client_hears_list_changed_on_its_listen_stream(transport):
    async def body():
        async with client(transport, "2026-07-28") as c:
            async with c.listen(tools_list_changed=True) as sub:
                assert sub.honored.tools_list_changed
                events = sub.__aiter__()
                assert text_of(await c.call_tool("grow", {})) == "grown"
                event = await asyncio.wait_for(events.__anext__(), BOUND)
                assert type(event).__name__ == "ToolsListChanged"
                assert "late" in {t.name for t in (await c.list_tools(cache_mode="bypass")).tools}
                assert text_of(await c.call_tool("late", {})) == "late here"
                assert text_of(await c.call_tool("shrink", {})) == "shrunk"
                await asyncio.wait_for(events.__anext__(), BOUND)
                assert "late" not in {t.name for t in (await c.list_tools(cache_mode="bypass")).tools}

    run(body())


def post(url, message, headers=None):
    request = urllib.request.Request(
        url,
        data=json.dumps(message).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **(headers or {}),
        },
    )
    with urllib.request.urlopen(request, timeout=BOUND) as response:
        return response.status, dict(response.headers), response.read().decode()


def test_one_http_endpoint_serves_both_eras_at_once():
    """A legacy session and stateless modern clients side by side on one URL; a
    modern request opens no session (no Mcp-Session-Id), an `initialize` does."""

    async def body(url):
        async with client("http", "legacy", url) as old, client("http", "2026-07-28", url) as new:
            assert (old.protocol_version, new.protocol_version) == ("2025-11-25", "2026-07-28")
            results = await asyncio.gather(
                old.call_tool("add", {"a": 1, "b": 2}),
                new.call_tool("add", {"a": 3, "b": 4}),
                old.call_tool("echo", {"text": "old"}),
                new.call_tool("echo", {"text": "new"}),
            )
            assert [text_of(r) for r in results] == ["3", "7", "old", "new"]

    with http_host() as (url, _):
        run(body(url))
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        status, headers, text = post(
            url,
            {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}},
            {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"},
        )
        assert status == 200 and "2026-07-28" in text
        assert "mcp-session-id" not in {k.lower() for k in headers}
        status, headers, _ = post(
            url,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            },
        )
        assert status == 200 and "mcp-session-id" in {k.lower() for k in headers}
