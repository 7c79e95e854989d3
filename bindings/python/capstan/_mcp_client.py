"""Mounting an MCP server's tools into a registry (``ToolRegistry.mount_mcp``),
over ``capstan_mcp_mount_new`` (include/capstan.h)."""

from __future__ import annotations

import ctypes
import json
from collections.abc import Mapping, Sequence
from ctypes import POINTER, Structure, c_char_p, c_int32, c_size_t, c_uint32, c_void_p
from typing import Any

from ._errors import CapstanError
from ._lib import lib

_STALE_HANDLE = 12


class _MountOptions(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("argv", POINTER(c_char_p)),
        ("argc", c_size_t),
        ("env", POINTER(c_char_p)),
        ("env_count", c_size_t),
        ("cwd", c_char_p),
        ("url", c_char_p),
        ("headers", POINTER(c_char_p)),
        ("header_count", c_size_t),
        ("prefix", c_char_p),
        ("connect_timeout_ms", c_uint32),
        ("call_timeout_ms", c_uint32),
        ("max_reconnects", c_uint32),
        ("reconnect_backoff_ms", c_uint32),
        ("protocol_version", c_char_p),
    ]


_declared: dict[str, Any] | None = None


def _fns() -> dict[str, Any]:
    """The MCP client functions, GIL released (mount and unmount wait)."""
    global _declared
    if _declared is None:
        handle = lib().blocking
        fns = {}
        for name, restype, argtypes in (
            ("capstan_mcp_mount_new", c_int32, [c_void_p, POINTER(_MountOptions), POINTER(c_void_p)]),
            ("capstan_mcp_mount_free", c_int32, [c_void_p]),
            ("capstan_mcp_mount_info_json", c_int32, [c_void_p, POINTER(c_void_p), POINTER(c_size_t)]),
        ):
            fn = getattr(handle, name)
            fn.restype, fn.argtypes = restype, argtypes
            fns[name] = fn
        _declared = fns
    return _declared


def _strings(items: Sequence[str]) -> tuple[Any, int]:
    array = (c_char_p * max(len(items), 1))(*[s.encode() for s in items])
    return array, len(items)


def _ms(seconds: float | None, what: str) -> int:
    if seconds is None:
        return 0
    if seconds < 0:
        raise ValueError(f"{what} must not be negative")
    return max(1, min(int(seconds * 1000), 2**32 - 2))


class McpMount:
    """A mounted MCP server. Its tools are tools of the registry until
    ``unmount()`` (also at the end of a ``with`` block)."""

    def __init__(self, handle: int) -> None:
        self._handle: int | None = handle

    @property
    def info(self) -> dict[str, Any]:
        """``connected``, ``tools`` (local name -> remote name), ``problems``
        (remote tools not mounted, with why), ``reconnects``, ``gave_up``,
        ``last_error``."""
        out, size = c_void_p(), c_size_t()
        st = _fns()["capstan_mcp_mount_info_json"](self._handle, ctypes.byref(out), ctypes.byref(size))
        if st != 0:
            raise lib().error(st, "mount info")
        return json.loads(lib().take_text(out, size))

    @property
    def connected(self) -> bool:
        """True while the mount is connected to its server (the "connected"
        field of capstan_mcp_mount_info_json); False once unmounted."""
        if self._handle is None:
            return False
        try:
            return bool(self.info["connected"])
        except CapstanError:
            return False

    @property
    def tools(self) -> dict[str, str]:
        return self.info["tools"]

    @property
    def problems(self) -> list[dict[str, str]]:
        return self.info["problems"]

    def unmount(self) -> None:
        """Disconnects, stops the server process, unregisters the tools.
        Calls still in flight end as tool errors. Idempotent."""
        handle, self._handle = self._handle, None
        if handle is None:
            return
        st = _fns()["capstan_mcp_mount_free"](handle)
        if st not in (0, _STALE_HANDLE):
            raise lib().error(st, "unmount")

    def __enter__(self) -> McpMount:
        return self

    def __exit__(self, *exc: object) -> None:
        self.unmount()

    def __del__(self) -> None:
        try:
            self.unmount()
        except Exception:
            pass


def mount_mcp(
    registry: Any,
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
) -> McpMount:
    """Mounts the tools of an MCP server: ``command`` (argv of a stdio
    server) or ``url`` (streamable HTTP, with ``headers``). Each remote tool
    becomes ``prefix + name``. Raises CapstanError (status
    CAPSTAN_ERR_MCP_CONNECT when the server cannot be reached). When the
    connection dies the mount reconnects up to ``max_reconnects`` times in
    a row (5 by default, as in Rust; 0: never), ``reconnect_backoff``
    seconds apart, doubled after each failure."""
    if (command is None) == (url is None):
        raise ValueError("give either command (a list of strings) or url")
    if isinstance(command, str):
        raise TypeError("command is a list of strings (argv), not one string")
    opts = _MountOptions()
    opts.struct_size = ctypes.sizeof(_MountOptions)
    keep: list[Any] = []
    if command is not None:
        argv, opts.argc = _strings(list(command))
        opts.argv = ctypes.cast(argv, POINTER(c_char_p))
        envs, opts.env_count = _strings([f"{k}={v}" for k, v in (env or {}).items()])
        opts.env = ctypes.cast(envs, POINTER(c_char_p))
        keep += [argv, envs]
        opts.cwd = cwd.encode() if cwd else None
    else:
        assert url is not None
        opts.url = url.encode()
        hs, opts.header_count = _strings([f"{k}: {v}" for k, v in (headers or {}).items()])
        opts.headers = ctypes.cast(hs, POINTER(c_char_p))
        keep.append(hs)
    opts.prefix = prefix.encode()
    opts.connect_timeout_ms = _ms(connect_timeout, "connect_timeout")
    opts.call_timeout_ms = _ms(call_timeout, "call_timeout")
    if max_reconnects < 0:
        raise ValueError("max_reconnects must not be negative")
    # The C field: 0 is its default (5), UINT32_MAX (CAPSTAN_MCP_RECONNECT_NEVER) never.
    opts.max_reconnects = 2**32 - 1 if max_reconnects == 0 else min(max_reconnects, 2**32 - 2)
    opts.reconnect_backoff_ms = _ms(reconnect_backoff, "reconnect_backoff")
    opts.protocol_version = protocol_version.encode() if protocol_version else None
    out = c_void_p()
    ptr = registry._enter()
    try:
        st = _fns()["capstan_mcp_mount_new"](ptr, ctypes.byref(opts), ctypes.byref(out))
    finally:
        registry._leave()
    if st != 0:
        raise lib().error(st, "mount_mcp")
    if not out.value:
        raise CapstanError("mount_mcp returned no mount")
    return McpMount(out.value)


__all__ = ["McpMount", "mount_mcp", "CapstanError"]
