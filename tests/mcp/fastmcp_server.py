"""A small MCP server (the official Python SDK's MCPServer, formerly FastMCP)
that capstan's MCP client tests mount.

    python3 fastmcp_server.py                 # stdio
    python3 fastmcp_server.py --http PORT     # streamable HTTP on 127.0.0.1

Tools: echo, add, slow (sleeps; writes "cancelled" to $MARKER when the client
cancels it), grow (adds the tool `late` and says the tool list changed),
shrink (removes `late`), die (the process exits at once: a server killed
mid-session), client (the name and version the client gave at initialize),
bad.name (a name no LLM provider accepts). With $LINGER set, the process
stays on after its stdin closes (a server that will not exit on its own).
With $LEGACY_ONLY set, `server/discover` is "method not found", as from a
server of the 2025-11-25 era (which has no such method): a 2026-07-28
client must fall back to `initialize`.
"""

import asyncio
import os
import sys

from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("capstan-test")


@server.tool()
def echo(message: str) -> str:
    """Returns its message."""
    return message


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@server.tool()
async def slow(seconds: float) -> str:
    """Sleeps, then says so. A cancellation is recorded in $MARKER."""
    try:
        await asyncio.sleep(seconds)
    except BaseException:
        marker = os.environ.get("MARKER")
        if marker:
            with open(marker, "w") as f:
                f.write("cancelled")
        raise
    return "slept"


def late(x: int) -> int:
    """Added at run time by grow."""
    return x * 2


async def tell_tools_changed(ctx: Context) -> None:
    # 2026-07-28 clients hear it on their subscriptions/listen stream;
    # older ones as an unscoped notification.
    try:
        await ctx.notify_tools_changed()
    except Exception:
        pass
    try:
        await ctx.session.send_tool_list_changed()
    except Exception:
        pass


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `late`."""
    server.add_tool(late, name="late")
    await tell_tools_changed(ctx)
    return "grown"


@server.tool()
async def shrink(ctx: Context) -> str:
    """Removes the tool `late`."""
    try:
        server.remove_tool("late")
    except Exception:
        pass
    await tell_tools_changed(ctx)
    return "shrunk"


@server.tool()
def die() -> str:
    """Ends the server process at once."""
    sys.stdout.flush()
    os._exit(3)


@server.tool()
def client(ctx: Context) -> str:
    """The client's name and version, from its initialize request."""
    params = ctx.session.client_params
    if params is None:
        return "unknown"
    return f"{params.client_info.name} {params.client_info.version}"


def dotted() -> str:
    return "dotted"


server.add_tool(dotted, name="bad.name", description="A name with a dot.")


async def no_discover(ctx, params):
    raise MCPError(-32601, "Method not found: server/discover")


if os.environ.get("LEGACY_ONLY"):
    import mcp_types

    server._lowlevel_server.add_request_handler("server/discover", mcp_types.RequestParams, no_discover)

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
    if os.environ.get("LINGER"):
        import time

        time.sleep(600)
