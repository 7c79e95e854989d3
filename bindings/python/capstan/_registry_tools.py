"""ToolRegistry's tools: add, replace, remove and look up."""

from __future__ import annotations

import ctypes
import json
from collections.abc import Callable
from typing import Any

from . import _lib
from ._callbacks import _DESTROY, _TRAMPOLINE, _Entry, _entries, _entry_keys, _utf8
from ._errors import CapstanError, ToolNotFoundError, ValidationError
from ._exec import _milliseconds
from . import _registry_core as _core
from ._registry_core import _RegistryCore
from ._tools import FunctionTool, Tool


class _Tools(_RegistryCore):
    """ToolRegistry's tools by name."""

    @property
    def tools(self) -> dict[str, Tool]:
        """Registered tools by name (a copy)."""
        with self._lock:
            return dict(self._tools)

    def add(self, item: Tool | Callable[..., Any], *, replace: bool = False) -> Tool:
        """Register a tool, or a plain function (wrapped as a FunctionTool).
        A tool of the same name already registered is an error unless
        ``replace=True``, which replaces it. Returns the tool.

        Raises:
            TypeError: If ``item`` is neither a Tool nor callable.
            ValidationError: If capstan refuses its name or schema, or the
                name is already registered (without ``replace=True``).
        """
        if isinstance(item, Tool):
            built = item
        elif callable(item):
            built = FunctionTool(item)
        else:
            raise TypeError(f"Expected a Tool or a callable, got {type(item).__name__}.")
        self._add(built, weak=False, replace=replace)
        return built

    def _add(self, built: Tool, weak: bool, replace: bool = False) -> None:
        entry = _Entry(built, weak)
        flags = _lib.TOOL_REPLACE if replace else 0
        if built.requires_approval:
            flags |= _lib.TOOL_REQUIRES_APPROVAL
        if not built.parallel_safe:
            flags |= _lib.TOOL_SERIAL
        if built.wait_for_response:
            flags |= _lib.TOOL_WAIT_FOR_RESPONSE
        if built.main_thread:
            flags |= _lib.TOOL_MAIN_THREAD
        if built.deferred:
            flags |= _lib.TOOL_DEFERRED
        if built.idempotent:
            flags |= _lib.TOOL_IDEMPOTENT
        if entry.host_run:
            flags |= _lib.TOOL_HOST_RUN
        meta = getattr(built, "mcp_meta", None)
        description = built.description.replace("\0", " ")
        definition = _lib.ToolDef(
            struct_size=ctypes.sizeof(_lib.ToolDef),
            name=built.name.encode(),
            description=_utf8(description),
            parameters=_utf8(json.dumps(built.parameters)),
            callback=_TRAMPOLINE,
            destroy=_DESTROY,
            timeout_ms=_milliseconds(built.timeout),
            max_output_chars=built.max_output_chars or 0,
            flags=flags,
            mcp_meta=None if meta is None else meta.encode("utf-8", "backslashreplace"),
        )
        with self._lock:
            ptr = self._enter()
            try:
                key = next(_entry_keys)
                _entries[key] = entry
                definition.user_data = key
                status = _core._L.registry_add_tool(ptr, ctypes.byref(definition))  # on failure destroy ran
                if status != _lib.OK:
                    refused = (_lib.ERR_INVALID_NAME, _lib.ERR_INVALID_SCHEMA, _lib.ERR_INVALID_ARGUMENT)
                    cls = ValidationError if status in refused else CapstanError
                    raise _core._L.error(status, f"cannot register tool {built.name!r}", cls)
                self._tools[built.name] = built
                if entry.host_run:
                    self._host_run[built.name] = entry
                else:
                    self._host_run.pop(built.name, None)
                if built.parallel_safe and not built.main_thread:
                    self._inline_safe.add(built.name)
                else:
                    self._inline_safe.discard(built.name)
                # The core checks an output schema against each result: not on the fast path.
                checked_output = meta is not None and built.output_schema is not None
                if (
                    built.requires_approval
                    or built.timeout is not None
                    or built.max_output_chars
                    or built.main_thread
                    or checked_output
                ):
                    self._lean.pop(built.name, None)
                else:
                    self._lean[built.name] = (entry, built.name.encode())
            finally:
                self._leave()

    def remove(self, name: str) -> None:
        """Unregister a tool; no-op when there is none of that name. Its calls
        in flight finish."""
        with self._lock:
            if name not in self._tools:
                return
            ptr = self._enter()
            try:
                encoded = name.encode()
                status = _core._L.registry_remove_tool(ptr, encoded, len(encoded))
                if status not in (_lib.OK, _lib.ERR_NOT_FOUND):
                    raise _core._L.error(status, f"cannot remove tool {name!r}")
                del self._tools[name]
                self._lean.pop(name, None)
                self._host_run.pop(name, None)
                self._inline_safe.discard(name)
            finally:
                self._leave()

    def get(self, name: str) -> Tool:
        """The tool of that name.

        Raises:
            ToolNotFoundError: Its message lists the available tools.
        """
        with self._lock:
            found = self._tools.get(name)
            if found is None:
                raise ToolNotFoundError(name, list(self._tools))
            return found

    def names(self) -> list[str]:
        """Registered tool names, sorted."""
        with self._lock:
            return sorted(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Any:
        return iter(self.tools.values())
