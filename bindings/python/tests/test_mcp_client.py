"""ToolRegistry.mount_mcp: an MCP server's tools as registry tools (issue #14).
Mounts tests/mcp/fastmcp_server.py (the official Python SDK) over stdio."""

import sys
from pathlib import Path

import pytest

import capstan
from capstan import CapstanError, ToolCall

SERVER = Path(__file__).resolve().parents[3] / "tests" / "mcp" / "fastmcp_server.py"

pytest.importorskip("mcp")


def test_mounted_tools_are_called_like_any_tool(registry):
    with registry.mount_mcp([sys.executable, str(SERVER)], prefix="py_", connect_timeout=120) as mount:
        assert mount.connected
        assert mount.tools["py_add"] == "add"
        assert any(p["remote"] == "bad.name" for p in mount.problems)
        result = registry.execute(ToolCall("py_add", {"a": 2, "b": 3}))
        assert result.content == "5" and not result.is_error
        bad = registry.execute(ToolCall("py_add", {"a": "x", "b": 3}))
        assert bad.is_error and bad.outcome == "invalid_arguments"
    assert not mount.connected
    gone = registry.execute(ToolCall("py_add", {"a": 2, "b": 3}))
    assert gone.outcome == "unknown_tool"
    mount.unmount()  # twice is fine


def test_unreachable_server_raises_a_clear_error(registry):
    with pytest.raises(CapstanError) as err:
        registry.mount_mcp(["/nonexistent/mcp-server"])
    assert "could not start" in str(err.value)


def test_command_and_url_are_exclusive(registry):
    with pytest.raises(ValueError):
        registry.mount_mcp(["x"], url="http://127.0.0.1:1/mcp")
    with pytest.raises(ValueError):
        registry.mount_mcp()
