"""Shared pieces of the MCP server tests: the C host (tests/mcp/serve_host.c,
built by `make mcp-server-test`) and sessions of the official Python SDK
against it over stdio and streamable HTTP. Every wait is bounded."""

import asyncio
import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Imported here, not inside the timed coroutines: importing the SDK alone takes
# seconds of CPU (tens of seconds on a loaded machine).
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]
SERVE_HOST = os.environ.get("CAPSTAN_SERVE_HOST", str(ROOT / "build" / "mcp" / "serve_host"))
BOUND = 20.0  # seconds any one test step may take, on a loaded machine


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, BOUND * 3))


@contextlib.contextmanager
def http_host(token="", max_body="", mode="http"):
    """Starts serve_host in HTTP mode; yields (url, process). Closing its stdin stops it."""
    args = [a for a in (token, max_body) if a] if not max_body else [token, max_body]
    proc = subprocess.Popen(
        [SERVE_HOST, mode, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=sys.stderr,
        text=True,
    )
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("http://127.0.0.1:"), f"serve_host printed {line!r}"
        yield line, proc
    finally:
        proc.stdin.close()
        try:
            rc = proc.wait(timeout=BOUND)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError("serve_host did not stop after stdin closed")
        assert rc == 0, f"serve_host exited {rc}"


@contextlib.asynccontextmanager
async def session(transport, notifications=None):
    """An initialized ClientSession of the official SDK on `transport` ("stdio" or "http")."""
    async def on_message(message):
        if notifications is not None:
            notifications.append(message)

    if transport == "stdio":
        params = StdioServerParameters(command=SERVE_HOST, args=["stdio"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as s:
                await asyncio.wait_for(s.initialize(), BOUND)
                yield s
    else:
        with http_host() as (url, _):
            async with streamable_http_client(url) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write, message_handler=on_message) as s:
                    await asyncio.wait_for(s.initialize(), BOUND)
                    yield s


@pytest.fixture(params=["stdio", "http"])
def transport(request):
    if not Path(SERVE_HOST).exists():
        pytest.fail(f"{SERVE_HOST} is missing: run `make mcp-server-test`")
    return request.param
