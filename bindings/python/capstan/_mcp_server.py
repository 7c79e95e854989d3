"""Serving a ToolRegistry over MCP: ``registry.serve_mcp_stdio()`` and
``registry.start_mcp_server()`` (C: capstan_mcp_server_serve_stdio,
capstan_mcp_server_start). Tools run as for ``execute``: validated, timed
out, approved, cancelled when the client cancels."""

from __future__ import annotations

import ctypes
import json
from ctypes import POINTER, Structure, c_char_p, c_int32, c_size_t, c_uint32, c_void_p
from typing import Any, Iterable

from . import _lib
from ._errors import CapstanError


class _ServerOptions(Structure):
    """capstan_mcp_server_options."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("flags", c_uint32),
        ("address", c_char_p),
        ("bearer_token", c_char_p),
        ("allowed_origins", c_char_p),
        ("allowed_hosts", c_char_p),
        ("tools_meta", c_char_p),
        ("name", c_char_p),
        ("max_body_bytes", c_uint32),
        ("call_timeout_ms", c_uint32),
        ("stop_timeout_ms", c_uint32),
    ]


_fns: Any = None


def _c() -> Any:
    """The MCP server functions, declared on first use (GIL released: they block)."""
    global _fns
    if _fns is None:
        handle = _lib.lib().blocking
        status, out = c_int32, POINTER(c_void_p)
        for name, restype, argtypes in (
            ("capstan_mcp_server_serve_stdio", status, [c_void_p, POINTER(_ServerOptions)]),
            ("capstan_mcp_server_start", status, [c_void_p, POINTER(_ServerOptions), out]),
            ("capstan_mcp_server_url", status, [c_void_p, out, POINTER(c_size_t)]),
            ("capstan_mcp_server_stop", status, [c_void_p]),
            ("capstan_mcp_server_free", None, [c_void_p]),
        ):
            fn = getattr(handle, name)
            fn.restype, fn.argtypes = restype, argtypes
        _fns = handle
    return _fns


def _text(value: str | None) -> bytes | None:
    return None if value is None else value.encode()


def _list(values: str | Iterable[str] | None) -> bytes | None:
    if values is None:
        return None
    if isinstance(values, str):
        return values.encode()
    return ",".join(values).encode()


def _options(
    address: str | None = None,
    *,
    token: str | None = None,
    allowed_origins: str | Iterable[str] | None = None,
    allowed_hosts: str | Iterable[str] | None = None,
    tools_meta: dict[str, Any] | None = None,
    name: str | None = None,
    max_body_bytes: int = 0,
    call_timeout: float | None = None,
    stop_timeout: float | None = None,
) -> _ServerOptions:
    opts = _ServerOptions()
    opts.struct_size = ctypes.sizeof(_ServerOptions)
    opts.address = _text(address)
    opts.bearer_token = _text(token)
    opts.allowed_origins = _list(allowed_origins)
    opts.allowed_hosts = _list(allowed_hosts)
    opts.tools_meta = None if tools_meta is None else json.dumps(tools_meta).encode()
    opts.name = _text(name)
    opts.max_body_bytes = max_body_bytes
    opts.call_timeout_ms = 0 if call_timeout is None else max(1, int(call_timeout * 1000))
    opts.stop_timeout_ms = 0 if stop_timeout is None else max(1, int(stop_timeout * 1000))
    return opts


class McpServer:
    """A running streamable-HTTP MCP server (``ToolRegistry.start_mcp_server``).
    ``url`` is its endpoint; ``stop()`` (or leaving a ``with`` block) cancels
    calls in flight, waits for them up to the stop timeout and frees it."""

    def __init__(self, ptr: int) -> None:
        self._ptr: int | None = ptr
        out, size = c_void_p(), c_size_t()
        c = _c()
        status = c.capstan_mcp_server_url(ptr, ctypes.byref(out), ctypes.byref(size))
        if status != _lib.OK:
            c.capstan_mcp_server_free(ptr)
            self._ptr = None
            raise _lib.lib().error(status, "capstan_mcp_server_url")
        self.url: str = _lib.lib().take_text(out, size).decode()

    def stop(self) -> bool:
        """Stops and frees the server. True if no call was left running at the
        bound (False: some still ran; their results are dropped). Idempotent."""
        ptr, self._ptr = self._ptr, None
        if ptr is None:
            return True
        c = _c()
        status = c.capstan_mcp_server_stop(ptr)
        c.capstan_mcp_server_free(ptr)
        return status == _lib.OK

    close = stop

    def __enter__(self) -> McpServer:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def __del__(self) -> None:
        if getattr(self, "_ptr", None) is not None:
            self.stop()


def start_mcp_server(registry: Any, address: str | None = None, **options: Any) -> McpServer:
    """Serves ``registry`` over streamable HTTP on ``address`` (default
    ``127.0.0.1:0``: loopback, a free port) and returns at once. Options:
    ``token`` (bearer token clients must send), ``allowed_origins``,
    ``allowed_hosts``, ``tools_meta`` ({name: {"title", "annotations",
    "outputSchema"}}), ``name``, ``max_body_bytes``, ``call_timeout`` and
    ``stop_timeout`` (seconds). Raises CapstanError (status
    CAPSTAN_ERR_TRANSPORT when the address cannot be bound)."""
    opts = _options(address, **options)
    out = c_void_p()
    ptr = registry._enter()
    try:
        status = _c().capstan_mcp_server_start(ptr, ctypes.byref(opts), ctypes.byref(out))
    finally:
        registry._leave()
    if status != _lib.OK:
        raise _lib.lib().error(status, "start_mcp_server")
    if out.value is None:
        raise CapstanError("start_mcp_server returned no server")
    return McpServer(out.value)


def serve_mcp_stdio(registry: Any, **options: Any) -> None:
    """Serves ``registry`` over MCP on this process's stdin/stdout until stdin
    closes (or the registry is closed from another thread). Blocks. Nothing
    else may write to stdout meanwhile (print to stderr)."""
    opts = _options(None, **options)
    ptr = registry._enter()
    try:
        status = _c().capstan_mcp_server_serve_stdio(ptr, ctypes.byref(opts))
    finally:
        registry._leave()
    if status != _lib.OK:
        raise _lib.lib().error(status, "serve_mcp_stdio")
