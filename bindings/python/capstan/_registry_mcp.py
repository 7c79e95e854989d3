"""ToolRegistry and MCP: serving its tools (see _mcp_server.py) and mounting
an MCP server's tools."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import _mcp_client, _mcp_server
from ._mcp_client import McpMount, OAuth
from ._registry_core import _RegistryCore


class _Mcp(_RegistryCore):
    """ToolRegistry's MCP server and mounts."""

    serve_mcp_stdio = _mcp_server.serve_mcp_stdio  # MCP server: see _mcp_server.py
    start_mcp_server = _mcp_server.start_mcp_server

    def mount_mcp(
        self,
        command: Sequence[str] | None = None,
        *,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        prefix: str = "",
        connect_timeout: float = 10.0,
        call_timeout: float | None = None,
        max_reconnects: int = 5,
        reconnect_backoff: float = 0.2,
        protocol_version: str | None = None,
        oauth: OAuth | None = None,
        input: Callable[[str | None, str, Any], Any] | None = None,
        input_methods: Sequence[str] | None = None,
    ) -> McpMount:
        """Mounts the tools of an MCP server into this registry: ``command``
        (argv of a stdio server) or ``url`` (streamable HTTP, with
        ``headers``, and ``oauth`` for a server that asks for OAuth 2.1, see
        :class:`OAuth`); each remote tool becomes ``prefix + name``.
        ``input(tool, method, params)`` answers what the server asks while
        running a tool (``input_methods``: default ``["elicitation/create"]``). Returns
        the :class:`McpMount` (``unmount()`` removes its tools). Raises
        CapstanError (``CAPSTAN_ERR_MCP_CONNECT`` when the server cannot be
        reached or its authorization failed). See
        :func:`capstan._mcp_client.mount_mcp` for reconnects."""
        return _mcp_client.mount_mcp(
            self,
            command,
            url=url,
            headers=headers,
            env=env,
            cwd=cwd,
            prefix=prefix,
            connect_timeout=connect_timeout,
            call_timeout=call_timeout,
            max_reconnects=max_reconnects,
            reconnect_backoff=reconnect_backoff,
            protocol_version=protocol_version,
            oauth=oauth,
            input=input,
            input_methods=input_methods,
        )
