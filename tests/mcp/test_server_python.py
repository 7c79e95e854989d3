"""The Python binding's MCP server (registry.start_mcp_server /
registry.serve_mcp_stdio) and docs/mcp.md's C example, as the official Python
SDK sees them."""

import asyncio
import os
import sys
import textwrap
from pathlib import Path

import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from conftest import BOUND, ROOT, run

sys.path.insert(0, str(ROOT / "bindings" / "python"))

from capstan import CapstanError, ToolRegistry, tool  # noqa: E402


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


async def http_call(url, name, arguments, token=None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=BOUND) as client:
        async with streamable_http_client(url, http_client=client) as streams:
            async with ClientSession(streams[0], streams[1]) as s:
                await asyncio.wait_for(s.initialize(), BOUND)
                tools = [t.name for t in (await s.list_tools()).tools]
                return tools, await s.call_tool(name, arguments)


async def stdio_call(command, args, name, arguments, env=None):
    params = StdioServerParameters(command=command, args=args, env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await asyncio.wait_for(s.initialize(), BOUND)
            tools = [t.name for t in (await s.list_tools()).tools]
            return tools, await s.call_tool(name, arguments)


def test_python_registry_serves_its_tools_over_http():
    with ToolRegistry([add]) as registry:
        with registry.start_mcp_server(token="t0ken", name="py") as server:
            assert server.url.startswith("http://127.0.0.1:")
            tools, r = run(http_call(server.url, "add", {"a": 2, "b": 3}, token="t0ken"))
            assert tools == ["add"]
            assert not r.is_error and text_of(r) == "5"
            _, r = run(http_call(server.url, "add", {"a": 2, "b": "x"}, token="t0ken"))
            assert r.is_error and "/b" in text_of(r)
        assert server.stop() is True  # stopped already: idempotent


def test_python_start_mcp_server_on_a_busy_port_raises_transport():
    with ToolRegistry([add]) as registry:
        with registry.start_mcp_server() as first:
            address = first.url[len("http://") : -len("/mcp")]
            with pytest.raises(CapstanError) as e:
                registry.start_mcp_server(address)
            assert e.value.status == "CAPSTAN_ERR_TRANSPORT"


def test_python_registry_serves_its_tools_over_stdio(tmp_path):
    script = tmp_path / "serve.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(ROOT / "bindings" / "python")!r})
            from capstan import ToolRegistry, tool

            @tool
            def add(a: int, b: int) -> int:
                '''Add two integers.'''
                return a + b

            with ToolRegistry([add]) as registry:
                registry.serve_mcp_stdio()
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k == "CAPSTAN_LIB"}
    tools, r = run(stdio_call(sys.executable, [str(script)], "add", {"a": 20, "b": 22}, env))
    assert tools == ["add"] and text_of(r) == "42"


def test_readme_mcp_example_serves_add_over_stdio():
    example = os.environ.get("CAPSTAN_MCP_SERVE_EXAMPLE", str(ROOT / "build" / "mcp" / "mcp_serve"))
    assert Path(example).exists(), f"{example} is missing: run `make mcp-server-test`"
    source = (ROOT / "examples" / "c" / "mcp_serve.c").read_text()
    snippet = source.split("/* docs:begin */\n")[1].split("/* docs:end */")[0]
    assert snippet in (ROOT / "docs" / "mcp.md").read_text(), "docs/mcp.md's serve example differs from examples/c/mcp_serve.c"
    assert len(snippet.strip().splitlines()) < 15
    tools, r = run(stdio_call(example, [], "add", {"a": 2, "b": 3}))
    assert tools == ["add"] and text_of(r) == "5"
