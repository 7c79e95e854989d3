"""ToolRegistry: tools held by a native capstan registry, and their execution
(see _callbacks for how capstan's calls reach Python, _lifecycle for how
registries are freed when dropped and closed at exit)."""

from __future__ import annotations

import asyncio
import collections
import ctypes
import itertools
import json
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, TypedDict

from . import _batches, _callbacks, _formats, _hooks, _json, _lib, _lifecycle, _mcp_client, _mcp_server, _provider
from ._batches import _await_submission, _ready
from ._callbacks import (
    _ABSENT,
    _DESTROY,
    _TRAMPOLINE,
    _Entry,
    _entries,
    _entry_keys,
    _Execution,
    _executions,
    _get_ident,
    _inline,
    _utf8,
)
from ._calls import ToolCall, ToolResult
from ._errors import CapstanError, RegistryClosedError, SearchError, ToolNotFoundError, ValidationError
from ._exec import _collect, _milliseconds, _options, _payload
from ._json import _scan
from ._lifecycle import _open_registries, _reap_later
from ._lone import _failed, _now, _ok, _run_here, _tool_function
from ._hooks import Approver, ToolEvent
from ._mcp_client import McpMount, OAuth
from ._provider import Messages
from ._stream import Stream
from ._tools import FunctionTool, Tool

__all__ = ["ToolCall", "ToolExport", "ToolRegistry", "ToolResult", "ToolStats", "default_registry"]

_execution_tokens = itertools.count(1)
_drain = collections.deque
_c_uint32, _c_char_p = ctypes.c_uint32, ctypes.c_char_p


class ToolExport(NamedTuple):
    """:meth:`ToolRegistry.export`: ``tools`` as the API takes them, and the
    core's ``report`` (``{"tool", "pointer", "message"}`` each)."""

    tools: Any
    report: list[dict[str, Any]]


class ToolStats(TypedDict):
    """One tool's counters in :meth:`ToolRegistry.stats`."""

    calls: int
    outcomes: dict[str, int]
    in_flight: int
    p50_us: int | None
    p99_us: int | None

# The library's functions on the hot path, bound once it is loaded.
_L: Any = None
_execute: Any = None
_free: Any = None
_check_call: Any = None
_check_calls: Any = None


def _library() -> Any:
    global _L, _execute, _free, _check_call, _check_calls
    if _L is None:
        library = _lifecycle._library()
        _execute, _free, _check_call = library.registry_execute, library.string_free, library.registry_check_call
        _check_calls = library.registry_check_calls
        _L = library
    return _L


# --- the registry ----------------------------------------------------------------


class ToolRegistry:
    """Tools by name, backed by a native capstan registry.

    Executes calls with capstan: arguments validated against the full JSON
    Schema, calls run in parallel on capstan's pool, timeouts (sync tools
    included), output caps. An unknown tool, invalid arguments, a timeout or a
    tool's exception give an error :class:`ToolResult`, never an exception.

    Close it with :meth:`close` or a ``with`` block; garbage collection is
    only a backstop.

    Example:
        >>> @tool
        ... def double(x: int) -> int:
        ...     '''Double a number.'''
        ...     return x * 2
        >>> registry = ToolRegistry([double])
        >>> registry.execute(ToolCall(name="double", arguments={"x": 4})).data
        8
    """

    def __init__(
        self,
        tools: Iterable[Tool | Callable[..., Any]] | None = None,
        *,
        coerce: bool = False,
        max_result_bytes: int = 0,
        strict: bool = False,
    ) -> None:
        """``coerce``: accept strings for number/integer/boolean arguments.
        ``max_result_bytes``: bound on the decoded bytes of the images and
        files one result holds (0 = 10 MiB); past it the call is a tool error.
        ``strict``: the model is given OpenAI strict-mode schemas
        (:meth:`schemas` exports them so by default), where an optional
        argument comes as ``null``: such nulls are dropped before validation
        (``CAPSTAN_EXEC_STRICT_NULLS``) on every path."""
        library = _library()
        options = _lib.RegistryOptions(
            ctypes.sizeof(_lib.RegistryOptions), _lib.REGISTRY_COERCE if coerce else 0, max_result_bytes
        )
        out = ctypes.c_void_p()
        status = library.registry_new(ctypes.byref(options), ctypes.byref(out))
        if status != _lib.OK:
            raise library.error(status, "cannot create a capstan registry")
        self._ptr: int | None = out.value
        self._max_result_bytes = max_result_bytes
        self._strict = bool(strict)
        self._check_flags = _lib.EXEC_STRICT_NULLS if strict else 0
        self._tools: dict[str, Tool] = {}
        # Tools a lone call may run on the fast path (_check): no approval
        # gate, timeout or output cap; by name, their trampoline entries and
        # encoded names.
        self._lean: dict[str, tuple[_Entry, bytes]] = {}
        # Tools aexecute* may start inline on the loop's thread (the
        # parallel-safe ones): see _run_submitted.
        self._inline_safe: set[str] = set()
        self._lock = threading.RLock()
        # Uses in flight (entered - left); the registry is freed after the last.
        # itertools.count: next() is atomic, where `+= 1` is not.
        self._entered = itertools.count()
        self._left = itertools.count()
        self._closing = False
        # While an event hook is set, lone calls go through the core (which
        # emits the events) instead of the fast path.
        self._hooked = False
        # Lone calls of the fast path, by (tool, outcome): added to stats().
        self._lone: dict[tuple[str, str], itertools.count[int]] = {}
        _open_registries.add(self)
        for item in tools or ():
            self.add(item)

    # -- lifetime ----------------------------------------------------------------------

    def _enter(self) -> int:
        next(self._entered)
        ptr = self._ptr
        if ptr is None or self._closing:
            self._leave()
            raise RegistryClosedError("the tool registry is closed", "CAPSTAN_ERR_SHUTTING_DOWN")
        return ptr

    def _leave(self) -> None:
        next(self._left)
        if self._closing:
            self._free_when_idle()

    def _free_when_idle(self) -> None:
        with self._lock:
            ptr = self._ptr
            if ptr is None or _count(self._entered) != _count(self._left):
                return
            self._ptr = None
        _L.registry_free(ptr)

    def close(self) -> None:
        """Frees the native registry: unregisters every tool. Executions in
        flight finish first (the last one frees it), and freeing waits for
        every tool call still running, without limit. Idempotent."""
        with self._lock:
            if self._closing:
                return
            self._closing = True  # before counting the uses in flight: see _enter
        self._free_when_idle()

    def _shutdown(self, timeout_ms: int) -> bool:
        """At exit: capstan_registry_close, waiting at most ``timeout_ms`` for
        the tool callbacks still running, then the registry is freed (by the
        last use in flight, if any: close reported their calls cancelled).
        True if callbacks were still running when the wait ended."""
        next(self._entered)  # a use: nothing frees it meanwhile
        try:
            with self._lock:
                self._closing = True
                ptr = self._ptr  # None: already freed
            return ptr is not None and _L.registry_close(ptr, timeout_ms) == _lib.ERR_TIMEOUT
        finally:
            self._leave()  # frees it when idle; free does not wait again

    @property
    def closed(self) -> bool:
        return self._closing

    def __enter__(self) -> ToolRegistry:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __del__(self) -> None:
        ptr = getattr(self, "_ptr", None)
        if ptr is not None and not self._closing:
            self._ptr = None
            _reap_later(ptr)

    # -- tools ---------------------------------------------------------------------------

    @property
    def tools(self) -> dict[str, Tool]:
        """Registered tools by name (a copy)."""
        with self._lock:
            return dict(self._tools)

    def add(self, item: Tool | Callable[..., Any]) -> Tool:
        """Register a tool, or a plain function (wrapped as a FunctionTool).
        Replaces a tool of the same name. Returns the tool.

        Raises:
            TypeError: If ``item`` is neither a Tool nor callable.
            ValidationError: If capstan refuses its name or schema.
        """
        if isinstance(item, Tool):
            built = item
        elif callable(item):
            built = FunctionTool(item)
        else:
            raise TypeError(f"Expected a Tool or a callable, got {type(item).__name__}.")
        self._add(built, weak=False)
        return built

    def _add(self, built: Tool, weak: bool) -> None:
        entry = _Entry(built, weak)
        flags = 0
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
                status = _L.registry_add_tool(ptr, ctypes.byref(definition))  # on failure destroy ran
                if status != _lib.OK:
                    refused = (_lib.ERR_INVALID_NAME, _lib.ERR_INVALID_SCHEMA, _lib.ERR_INVALID_ARGUMENT)
                    cls = ValidationError if status in refused else CapstanError
                    raise _L.error(status, f"cannot register tool {built.name!r}", cls)
                self._tools[built.name] = built
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

    def extend(self, items: Iterable[Tool | Callable[..., Any]]) -> ToolRegistry:
        """Register several tools; returns ``self``."""
        for item in items:
            self.add(item)
        return self

    def remove(self, name: str) -> None:
        """Unregister a tool; no-op when there is none of that name. Its calls
        in flight finish."""
        with self._lock:
            if name not in self._tools:
                return
            ptr = self._enter()
            try:
                encoded = name.encode()
                status = _L.registry_remove_tool(ptr, encoded, len(encoded))
                if status not in (_lib.OK, _lib.ERR_NOT_FOUND):
                    raise _L.error(status, f"cannot remove tool {name!r}")
                del self._tools[name]
                self._lean.pop(name, None)
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

    # -- definitions for the model ---------------------------------------------------------

    serve_mcp_stdio = _mcp_server.serve_mcp_stdio  # MCP server: see _mcp_server.py
    start_mcp_server = _mcp_server.start_mcp_server

    def _export(self, fmt: int, flags: int = 0, deferred: str = "hide") -> tuple[Any, list[dict[str, Any]]]:
        """capstan_registry_tools_json in format ``fmt``, parsed, and its report."""
        mode = _DEFERRED.get(deferred)
        if mode is None:
            raise ValueError(f'deferred must be "hide" or "native", not {deferred!r}')
        options = _lib.ExportOptions(ctypes.sizeof(_lib.ExportOptions), flags, mode)
        ptr = self._enter()
        try:
            out, size = ctypes.c_void_p(), ctypes.c_size_t()
            report, report_size = ctypes.c_void_p(), ctypes.c_size_t()
            status = _L.registry_tools_json(
                ptr, fmt, ctypes.byref(options), ctypes.byref(out), ctypes.byref(size),
                ctypes.byref(report), ctypes.byref(report_size),
            )
            if status != _lib.OK:
                raise _L.error(status, "capstan_registry_tools_json failed")
            exported = json.loads(_L.take_text(out, size))
            found = json.loads(_L.take_text(report, report_size)) if report.value else []
            return exported, found
        finally:
            self._leave()

    def _export_flags(self, fmt: int, strict: bool | None, gemini_lower: bool) -> int:
        strict = self._strict if strict is None else strict
        return (_lib.EXPORT_STRICT if strict else 0) | (_lib.EXPORT_GEMINI_LOWER if gemini_lower else 0)

    def schemas(
        self,
        style: str = "openai",
        *,
        strict: bool | None = None,
        gemini_lower: bool = False,
        deferred: str = "hide",
    ) -> list[dict[str, Any]]:
        """Every tool's definition in a provider's format, one per tool,
        sorted by name: ``"openai"`` (Chat Completions), ``"openai_responses"``,
        ``"anthropic"``, ``"gemini"`` (function declarations: put them in a
        ``{"functionDeclarations": [...]}`` tool) or ``"mcp"``; all exported
        by capstan's core. ``[]`` when no tool is registered. ``strict``
        (default: the registry's): OpenAI strict mode (every property
        required, optional ones nullable; run such calls with a
        ``ToolRegistry(strict=True)``); ``gemini_lower``: Gemini's
        OpenAPI-subset ``parameters`` instead of ``parametersJsonSchema``.
        ``deferred``: how ``deferred`` tools are exported: ``"hide"`` (left
        out until the search tool found them, :meth:`add_search_tool`) or
        ``"native"`` (``"openai_responses"`` and ``"anthropic"``: every tool,
        deferred ones with ``"defer_loading": true``, the provider's own
        tool search; :meth:`run_turn` answers its search calls).
        :meth:`export` also says what could not be made strict or lowered."""
        fmt = _formats.format_of(style)
        flags = self._export_flags(fmt, strict, gemini_lower)
        return _formats.per_tool(fmt, self._export(fmt, flags, deferred)[0])

    def export(
        self,
        style: str = "openai",
        *,
        strict: bool | None = None,
        gemini_lower: bool = False,
        deferred: str = "hide",
    ) -> ToolExport:
        """The tools as the provider's API takes them, as one value (for
        ``"gemini"`` the ``tools`` array of one ``functionDeclarations``
        tool) with the core's report: ``{"tool", "pointer", "message"}`` for
        each schema part dropped or not made strict, and each name the
        format would refuse. Options as for :meth:`schemas`."""
        fmt = _formats.format_of(style)
        tools, report = self._export(fmt, self._export_flags(fmt, strict, gemini_lower), deferred)
        return ToolExport(tools, report)

    def run_turn(
        self,
        style: str,
        response: Any,
        *,
        approved: bool | Collection[str] = False,
        parallel: bool = True,
        limit: int = 8,
        timeout: float | None = None,
        deadline: float | None = None,
        whole_turn: bool = False,
    ) -> Messages:
        """One agent turn (``capstan_registry_run_turn``): runs every tool call
        of a model response and returns the results as that provider's next
        request takes them, images and files included. ``response`` is the
        body (a dict, its JSON text, or the provider SDK's object, e.g. the
        ``ChatCompletion`` that ``openai`` returns) or its message; ``style``
        as for :func:`capstan.parse_calls`. Returns, for ``"openai"``, a
        list of ``tool`` messages (and one ``user`` message with the images,
        if any), for ``"openai_responses"`` a list of
        ``function_call_output`` items, for ``"anthropic"`` one ``user``
        message, for ``"gemini"`` one ``user`` Content; ``[]`` when the
        response asks for no tool. ``approved``: True, or the ids of the
        approved calls (of tools made with ``requires_approval``; the
        registry's approver decides the others); ``parallel``, ``limit``,
        ``timeout``, ``deadline`` as for :meth:`execute_many`.

        ``whole_turn=True`` (``CAPSTAN_EXEC_WHOLE_TURN``) returns the whole
        turn as the next request needs it, in one list: the model's own
        turn first (thinking blocks and their signatures, reasoning items
        with ``encrypted_content``, Gemini thought signatures, unchanged),
        then the results; append it to the history as is.

        Raises:
            CapstanError: ``CAPSTAN_ERR_PROVIDER_ERROR`` for a provider's
                error body (``.provider``), ``CAPSTAN_ERR_INVALID_RESPONSE``
                for a body of the wrong shape; no call runs then.

        Example:
            >>> registry.run_turn("anthropic", response)  # doctest: +SKIP
            {'role': 'user', 'content': [{'type': 'tool_result', ...}]}
        """
        fmt = _formats.format_of(style)
        data = _provider.body(response)
        if approved is True:  # every call: by the response's own ids
            approved = [c.id for c in _provider.parse_calls(style, data)]
        ids = [] if approved is False else [str(i).encode("utf-8", "backslashreplace") for i in approved]
        extra = _lib.EXEC_WHOLE_TURN if whole_turn else 0
        options, keep = _options(parallel, limit, timeout, ids, False, deadline, self._strict, extra)
        ptr = self._enter()
        try:
            out, size = ctypes.c_void_p(), ctypes.c_size_t()
            status = _L.registry_run_turn(ptr, fmt, data, len(data), options, ctypes.byref(out), ctypes.byref(size))
            if status != _lib.OK:
                raise _L.error(status, "capstan_registry_run_turn failed")
            written: Messages = json.loads(_L.take_text(out, size))
            return written
        finally:
            del keep
            self._leave()

    def search(self, query: str, limit: int = 5, *, regex: bool = False) -> list[dict[str, Any]]:
        """The registered tools that best match ``query``, best first, as
        ``{"name", "description", "score"}`` dicts (at most ``limit``, 1 to
        100). Words are ranked by BM25 over names, descriptions and parameter
        names and descriptions; with ``regex=True`` the query is a regular
        expression (Rust syntax) over the same text, name matches first.
        Raises ``ValueError`` (a ``CapstanError``) for an empty or too long
        query (past 1024 bytes), a limit out of range or a bad pattern."""
        if not 1 <= limit <= 100:
            raise SearchError(f"limit must be 1 to 100, not {limit}", "CAPSTAN_ERR_INVALID_ARGUMENT")
        data = query.encode()
        opts = _lib.SearchOptions(ctypes.sizeof(_lib.SearchOptions), _lib.SEARCH_REGEX if regex else 0, limit)
        ptr = self._enter()
        try:
            out, size = ctypes.c_void_p(), ctypes.c_size_t()
            status = _L.registry_search_json(ptr, data, len(data), ctypes.byref(opts), ctypes.byref(out), ctypes.byref(size))
            if status != _lib.OK:
                raise _L.error(status, "capstan_registry_search_json failed", SearchError)
            return json.loads(_L.take_text(out, size))["results"]
        finally:
            self._leave()

    def add_search_tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        limit: int = 5,
        regex: bool = False,
    ) -> None:
        """Registers capstan's built-in search tool
        (``capstan_registry_add_search_tool``; default name ``"tool_search"``,
        replacing a tool of that name): the model calls it with
        ``{"query": "..."}`` and gets ``{"tools": [{"name", "description"}]}``,
        the ``limit`` best matches (1 to 100) by words, or by a regular
        expression with ``regex=True``. Every ``deferred`` tool it lists is
        loaded: :meth:`schemas` exports it from then on, so the model sees
        it on its next request. :meth:`unload_tools` forgets them (a new
        conversation). The search tool runs in capstan's core: it is not
        in :attr:`tools`.

        Raises:
            ValidationError: for a bad name; SearchError for a limit out of range.
        """
        if not 1 <= limit <= 100:
            raise SearchError(f"limit must be 1 to 100, not {limit}", "CAPSTAN_ERR_INVALID_ARGUMENT")
        options = _lib.SearchToolOptions(
            ctypes.sizeof(_lib.SearchToolOptions),
            _lib.SEARCH_REGEX if regex else 0,
            limit,
            None if name is None else _utf8(name),
            None if description is None else _utf8(description.replace("\0", " ")),
        )
        with self._lock:
            ptr = self._enter()
            try:
                status = _L.registry_add_search_tool(ptr, ctypes.byref(options))
                if status != _lib.OK:
                    cls = ValidationError if status == _lib.ERR_INVALID_NAME else SearchError
                    raise _L.error(status, "capstan_registry_add_search_tool failed", cls)
                replaced = name or "tool_search"
                # A Python tool of that name is gone: the core answers its calls.
                self._tools.pop(replaced, None)
                self._lean.pop(replaced, None)
                self._inline_safe.discard(replaced)
            finally:
                self._leave()

    def unload_tools(self) -> None:
        """Forgets the deferred tools the search tool has loaded
        (``capstan_registry_unload_tools``): they are left out of
        :meth:`schemas` again until found (a new conversation)."""
        ptr = self._enter()
        try:
            status = _L.registry_unload_tools(ptr)
            if status != _lib.OK:
                raise _L.error(status, "capstan_registry_unload_tools failed")
        finally:
            self._leave()

    def describe(self) -> list[dict[str, Any]]:
        """A JSON-safe summary of every tool, sorted by name: capstan's
        describe output, with this binding's options filled in."""
        described = self._export(_lib.FORMAT_DESCRIBE)[0]
        with self._lock:
            tools = dict(self._tools)
        for item in described:
            t = tools.get(item.get("name"))
            if t is None:
                continue
            item.setdefault("requires_approval", t.requires_approval)
            item.setdefault("parallel_safe", t.parallel_safe)
            item.setdefault("timeout", t.timeout)
            item.setdefault("max_output_chars", t.max_output_chars)
            item.setdefault("wait_for_response", t.wait_for_response)
            item.setdefault("main_thread", t.main_thread)
            item.setdefault("is_async", t.is_async)
        return described

    # -- approval ------------------------------------------------------------------------------

    def needs_approval(self, calls: Iterable[ToolCall]) -> list[ToolCall]:
        """The calls whose tools require human approval before they run
        (unknown tools need none: they fail anyway). Run the approved ones
        with ``execute(call, approved=True)`` or
        ``execute_many(calls, approved={ids})``; the others end ``denied``."""
        calls = list(calls)
        if not calls:
            return []
        payload = "[" + ",".join(
            f'{{"id":"{i}","name":{_json.dumps(c.name)},"arguments":{{}}}}' for i, c in enumerate(calls)
        ) + "]"
        encoded = payload.encode("utf-8", "backslashreplace")
        ptr = self._enter()
        try:
            out, size = ctypes.c_void_p(), ctypes.c_size_t()
            status = _L.registry_needs_approval(ptr, encoded, len(encoded), None, ctypes.byref(out), ctypes.byref(size))
            if status != _lib.OK:
                raise _L.error(status, "capstan_registry_needs_approval failed")
            waiting = json.loads(_L.take_text(out, size))
        finally:
            self._leave()
        return [calls[item["index"]] for item in waiting]

    def set_approver(self, approver: Approver | None) -> None:
        """Sets (None: removes) the approver of this registry's
        ``requires_approval`` tools (``capstan_registry_set_approver``): it gets
        an :class:`ApprovalRequest` for every such call not approved by the
        caller (``approved=``), on a capstan thread, and returns True
        (approve), False (deny), a string (deny, with that reason for the
        model) or None (it decides later with ``request.approve()`` /
        ``request.deny(reason)``, from any thread). An ``async def``
        approver runs on the binding's own event loop thread. An exception
        denies the call, naming it. Without an approver such calls end
        ``denied``.

        Example:
            >>> registry.set_approver(lambda request: request.tool != "delete_file")  # doctest: +SKIP
        """
        self._set_hook(
            _L.registry_set_approver, approver, _hooks.APPROVER_TRAMPOLINE, "capstan_registry_set_approver"
        )

    def on_event(self, hook: Callable[[ToolEvent], Any] | None) -> None:
        """Sets (None: removes) the event hook (``capstan_registry_set_event_hook``):
        called with a :class:`ToolEvent` as each call starts, times out, is
        cancelled and finishes, on the thread where it happens (several at
        once). Keep it quick. While a hook is set, lone calls
        (``execute``/``aexecute``) run through capstan instead of the fast
        path, so that every call has its events."""
        self._set_hook(_L.registry_set_event_hook, hook, _hooks.EVENT_TRAMPOLINE, "capstan_registry_set_event_hook")
        self._hooked = hook is not None

    def on_wake(self, notify: Callable[[], Any] | None) -> None:
        """Sets (None: removes) the wake-up callback
        (``capstan_registry_set_notify``): called on any thread when a call of
        a ``main_thread`` tool waits for :meth:`pump`. It must be quick and
        must not call capstan: post to your loop (``loop.call_soon_threadsafe``)."""
        self._set_hook(_L.registry_set_notify, notify, _hooks.NOTIFY_TRAMPOLINE, "capstan_registry_set_notify")

    def _set_hook(self, setter: Any, fn: Any, trampoline: Any, what: str) -> None:
        if fn is not None and not callable(fn):
            raise TypeError(f"expected a callable or None, got {type(fn).__name__}")
        ptr = self._enter()
        try:
            if fn is None:
                status = setter(ptr, None, None, None)
            else:
                status = setter(ptr, trampoline, _hooks.hold(fn), _hooks.RELEASE)  # on failure RELEASE ran
            if status != _lib.OK:
                raise _L.error(status, f"{what} failed")
        finally:
            self._leave()

    def pump(self, budget: float = 0.0) -> int:
        """Runs the calls of ``main_thread`` tools waiting for this thread
        (``capstan_registry_pump``), for about ``budget`` seconds (at least
        one call if any waits); returns how many ran. Call it from the
        thread that owns your UI or game state; from then on that thread
        also runs the main-thread calls of the batches it executes itself."""
        ptr = self._enter()
        try:
            return int(_L.registry_pump(ptr, _milliseconds(budget)))
        finally:
            self._leave()

    def wake_fd(self) -> int:
        """A file descriptor that becomes readable when a ``main_thread``
        call waits for :meth:`pump` (``capstan_registry_wake_fd``): e.g.
        ``loop.add_reader(fd, ...)``; read it (8 bytes on Linux) to reset
        it. Owned by the registry: do not close it."""
        ptr = self._enter()
        try:
            fd = ctypes.c_int32()
            status = _L.registry_wake_fd(ptr, ctypes.byref(fd))
            if status != _lib.OK:
                raise _L.error(status, "capstan_registry_wake_fd failed")
            return fd.value
        finally:
            self._leave()

    def stats(self) -> dict[str, ToolStats]:
        """Per-tool counters, by tool name (``capstan_registry_stats_json``):
        ``calls``, ``outcomes`` (``{"ok": n, "tool_error": n, ...}``),
        ``in_flight``, and latency percentiles ``p50_us``/``p99_us`` (bucket
        bounds within 25%; None before any call ran). Lone calls of the fast
        path (see ``execute``) count in ``calls`` and ``outcomes``; the
        percentiles and ``in_flight`` are of the calls capstan ran."""
        ptr = self._enter()
        try:
            out, size = ctypes.c_void_p(), ctypes.c_size_t()
            status = _L.registry_stats_json(ptr, ctypes.byref(out), ctypes.byref(size))
            if status != _lib.OK:
                raise _L.error(status, "capstan_registry_stats_json failed")
            tools: dict[str, ToolStats] = json.loads(_L.take_text(out, size))["tools"]
        finally:
            self._leave()
        for (name, outcome), counter in list(self._lone.items()):
            entry = tools.get(name)
            n = _count(counter)
            if entry is not None and n:
                entry["calls"] += n
                entry["outcomes"][outcome] = entry["outcomes"].get(outcome, 0) + n
        return tools


    @staticmethod
    def _approves(call: ToolCall, approved: Any) -> bool:
        return approved is True or (not isinstance(approved, bool) and call.id in approved)

    # -- execution ----------------------------------------------------------------------------

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

    def execute(
        self, call: ToolCall, *, approved: bool = False, timeout: float | None = None, deadline: float | None = None
    ) -> ToolResult:
        """Run one call and return its result (blocking; async tools run on a
        private event loop thread). ``approved``: the call was approved, for
        tools that require approval. ``timeout`` overrides the tool's;
        ``deadline``: see :meth:`execute_many`."""
        if timeout is None and deadline is None and not self._hooked:
            checked = self._check(call)
            if checked is not None:
                if type(checked) is ToolResult:  # counted by the core
                    return checked
                entry, args = checked
                if not entry.is_async:
                    return self._counted(_run_here(call, entry, args, self._max_result_bytes))
        return self._run((call,), approved, True, 8, timeout, None, deadline)[0]

    def _counted(self, result: ToolResult) -> ToolResult:
        """Counts a lone call the fast path ran for :meth:`stats` (the core
        counted those it answered without running)."""
        key = (result.name, result.outcome)
        counter = self._lone.get(key)
        if counter is None:
            counter = self._lone.setdefault(key, itertools.count())
        next(counter)
        return result

    def _check(self, call: ToolCall) -> Any:
        """The lone-call fast path: capstan_registry_check_call validates the call on
        this thread (no callback, thread or timer), and the binding runs the
        tool itself. For tools without approval, timeout or output cap (and
        unknown names): returns the result of a call that cannot run, or
        (entry, validated arguments); None when the general path must run it."""
        name = call.name
        lean = self._lean.get(name)
        if lean is None:
            if name in self._tools:
                return None
            entry, name_bytes = None, name.encode("utf-8", "backslashreplace")
        else:
            entry, name_bytes = lean
        arguments = call.arguments
        kind = type(arguments)
        if kind is str:
            encoded = arguments.encode("utf-8", "backslashreplace")  # type: ignore[union-attr]
        elif kind is dict:
            try:
                encoded = (_json.dumps(arguments) if arguments else "{}").encode()
            except (TypeError, ValueError, RecursionError):
                return None
        else:
            return None
        outcome = _c_uint32()
        out = _c_char_p()
        next(self._entered)
        try:
            ptr = self._ptr
            if ptr is None or self._closing:
                raise RegistryClosedError("the tool registry is closed", "CAPSTAN_ERR_SHUTTING_DOWN")
            status = _check_call(
                ptr, name_bytes, len(name_bytes), encoded, len(encoded), self._check_flags, outcome, out, None
            )
            if status != 0:
                raise _L.error(status, "capstan_registry_check_call failed")
        finally:
            next(self._left)  # self._leave(), inline
            if self._closing:
                self._free_when_idle()
        text = out.value.decode()  # type: ignore[union-attr]
        _free(out)
        if outcome.value:
            return ToolResult(call.id, name, text, True, None, _lib.OUTCOMES[outcome.value], 0)
        if entry is None:  # registered meanwhile: the general path
            return None
        return entry, (_scan(text, 0)[0] if text != "{}" else {})

    def _execute(
        self, key: bytes, execution: _Execution, payload: bytes, options: Any, by_id: bool = True
    ) -> str:
        """capstan_registry_execute: the results JSON text. Re-raises what a tool raised
        that is not an Exception (KeyboardInterrupt, SystemExit). ``by_id``
        False: a lone call that capstan runs on this thread (no timeout), whose
        execution the trampoline finds in ``_inline``."""
        out = ctypes.c_char_p()
        ptr = self._enter()
        thread = _get_ident()
        outer = _inline.get(thread, _ABSENT)
        _inline[thread] = execution if execution.single else None
        if by_id:
            _executions[key] = execution
        try:
            status = _execute(ptr, payload, len(payload), options, ctypes.byref(out), None)
            if status != 0:
                raise _L.error(status, "capstan_registry_execute failed")
            text = out.value.decode()  # type: ignore[union-attr]
            _free(out)
        finally:
            if by_id:
                del _executions[key]
            if outer is _ABSENT:
                del _inline[thread]
            else:
                _inline[thread] = outer  # type: ignore[assignment]
            self._leave()
        if execution.raised is not None:
            raise execution.raised
        return text

    def execute_many(
        self,
        calls: Sequence[ToolCall],
        *,
        parallel: bool = True,
        limit: int = 8,
        timeout: float | None = None,
        approved: bool | Collection[str] = False,
        deadline: float | None = None,
    ) -> list[ToolResult]:
        """Run calls (in parallel on capstan's pool, at most ``limit`` at once,
        or one by one with ``parallel=False``); results in call order.
        ``approved``: True, or the ids of the approved calls. ``deadline``
        (seconds) bounds every call from now, waits included (for a free
        worker, the approver, a :meth:`pump`): a call without a result by
        then ends ``timeout``, saying what it waited for.

        Calls of sync tools seen to run in under 100 us, with no
        approval gate, timeout, output cap or output schema, run one after
        the other on this thread instead (validated by capstan first, as a
        lone call of :meth:`execute` is), while no event hook, ``timeout``
        or ``deadline`` is set: the GIL would run them one at a time on the
        pool too, after a thread hop each. Once the tool is slow twice in a
        row, the rest of the batch goes to the pool."""
        calls = list(calls)
        if not calls:
            return []
        if limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        if timeout is None and deadline is None and not self._hooked and self._all_quick(calls):
            return self._run_inline(calls, approved, parallel, limit)
        return self._run_general(calls, approved, parallel, limit, timeout, deadline)

    def _all_quick(self, calls: list[ToolCall]) -> bool:
        """Whether every call names a quick lean tool, or a name capstan
        answers itself (an unknown tool; a core tool such as the search
        tool or a mounted one goes to the general path from that call on)."""
        lean, tools = self._lean, self._tools
        for call in calls:
            found = lean.get(call.name)
            if found is None:
                if call.name in tools:
                    return False
            elif not found[0].quick:
                return False
        return True

    def _run_inline(self, calls: list[ToolCall], approved: Any, parallel: bool, limit: int) -> list[ToolResult]:
        """Runs quick calls here, each as the lone-call fast path does, all
        checked by capstan in one crossing (capstan_registry_check_calls);
        from a call that cannot take that path or ran slow, the rest goes to
        the general path."""
        checked = self._check_all(calls)
        if checked is None:
            return self._run_each(calls, approved, parallel, limit)
        results: list[ToolResult] = []
        append, lean, bound = results.append, self._lean, self._max_result_bytes
        now, observe, quick_ns = _now, _callbacks.observe, _callbacks.QUICK_NS
        tally: dict[tuple[str, str], int] = {}
        for call, (outcome, found) in zip(calls, checked):
            if outcome != "ok":  # found is the text; counted by the core
                append(ToolResult(call.id, call.name, found, True, None, outcome, 0))
                continue
            lean_entry = lean.get(call.name)
            if lean_entry is None:  # registered or replaced meanwhile
                break
            entry = lean_entry[0]
            if entry.plain:  # _run_here, inlined for the commonest results
                started = now()
                try:
                    value = entry.fn(**found)
                except Exception as exc:
                    observe(entry, started)
                    result = _failed(call, exc, started)
                else:
                    ended = now()
                    if ended - started < quick_ns:  # observe(), inlined
                        entry.quick, entry.strikes = True, 0
                    else:
                        observe(entry, started)
                    kind = type(value)
                    if kind is int or kind is str:  # _ok() renders these so
                        content = value if kind is str else int.__repr__(value)
                        if not content.isascii():
                            content = content.encode("utf-8", "backslashreplace").decode()
                        result = ToolResult(call.id, call.name, content, False, value, "ok", (ended - started) // 1000)
                    else:
                        try:
                            result = _ok(call, value, started, bound)
                        except Exception as exc:
                            result = _failed(call, exc, started)
            else:
                result = _run_here(call, entry, found, bound)
            append(result)
            key = (call.name, result.outcome)
            tally[key] = tally.get(key, 0) + 1
            if not entry.quick:  # slow twice in a row: the pool from here
                break
        self._count_lone(tally)
        done = len(results)
        if done == len(calls):
            return results
        # The rest: those capstan answered keep their answer (counted once);
        # the others run on the general path.
        rest = [i for i in range(done, len(calls)) if checked[i][0] == "ok"]
        ran = self._run_general([calls[i] for i in rest], approved, parallel, limit, None, None) if rest else []
        tail: list[Any] = [None] * (len(calls) - done)
        for i, result in zip(rest, ran):
            tail[i - done] = result
        for i in range(done, len(calls)):
            if tail[i - done] is None:
                (outcome, text), call = checked[i], calls[i]
                tail[i - done] = ToolResult(call.id, call.name, text, True, None, outcome, 0)
        return results + tail

    def _check_all(self, calls: list[ToolCall]) -> list[list[Any]] | None:
        """capstan_registry_check_calls over ``calls``: per call
        ``["ok", arguments]`` or ``[outcome, text]``; None when a call's
        arguments cannot be sent as they are (the per-call path says
        which)."""
        lean = self._lean
        parts: list[str] = []
        append = parts.append
        encode_str, dumps = _json._encode_str, _json.dumps
        try:
            for call in calls:
                name = call.name
                # A registered name is [A-Za-z0-9_-]: nothing to escape.
                quoted = f'"{name}"' if name in lean else dumps(name)
                arguments = call.arguments
                if type(arguments) is str:
                    encoded = encode_str(arguments if arguments.isascii() else _sendable(arguments))
                elif type(arguments) is dict:
                    encoded = dumps(arguments) if arguments else "{}"
                else:
                    return None
                append(f'{{"name":{quoted},"arguments":{encoded}}}')
        except (TypeError, ValueError, RecursionError):
            return None
        payload = ("[" + ",".join(parts) + "]").encode()
        out = _c_char_p()
        ptr = self._enter()
        try:
            status = _check_calls(ptr, payload, len(payload), self._check_flags, out, None)
        finally:
            self._leave()
        if status != 0:  # e.g. a lone surrogate in a name: the per-call path
            return None
        text = out.value.decode()  # type: ignore[union-attr]
        _free(out)
        checked: list[list[Any]] = _scan(text, 0)[0]
        return checked

    def _count_lone(self, tally: dict[tuple[str, str], int]) -> None:
        """Adds the lone calls of a batch, by (tool, outcome), for :meth:`stats`."""
        for key, n in tally.items():
            counter = self._lone.get(key)
            if counter is None:
                counter = self._lone.setdefault(key, itertools.count())
            _advance(counter, n)

    def _run_each(self, calls: list[ToolCall], approved: Any, parallel: bool, limit: int) -> list[ToolResult]:
        """:meth:`_run_inline` one call at a time (capstan_registry_check_call
        each), for a batch whose payload cannot be sent whole."""
        results: list[ToolResult] = []
        append, check, counted = results.append, self._check, self._counted
        bound = self._max_result_bytes
        for call in calls:
            checked = check(call)
            if checked is None:
                break
            if type(checked) is ToolResult:  # invalid arguments: counted by the core
                append(checked)
                continue
            entry, args = checked
            append(counted(_run_here(call, entry, args, bound)))
            if not entry.quick:  # slow twice in a row: the pool from here
                break
        else:
            return results
        rest = calls[len(results):]
        if rest:
            results += self._run_general(rest, approved, parallel, limit, None, None)
        return results

    def _run_general(
        self,
        calls: list[ToolCall],
        approved: Any,
        parallel: bool,
        limit: int,
        timeout: float | None,
        deadline: float | None,
    ) -> list[ToolResult]:
        if len(calls) > 1 and threading.current_thread() is threading.main_thread():
            # Waits where Ctrl-C reaches it; the batch is then cancelled.
            return self._run_submitted(calls, approved, parallel, limit, timeout, None, deadline)  # type: ignore[no-any-return]
        return self._run(calls, approved, parallel, limit, timeout, None, deadline)

    async def aexecute(
        self, call: ToolCall, *, approved: bool = False, timeout: float | None = None, deadline: float | None = None
    ) -> ToolResult:
        """:meth:`execute` for event loops: the loop stays free while sync
        tools run; ``async def`` tools run on this loop."""
        if timeout is None and deadline is None and not self._hooked:
            checked = self._check(call)
            if checked is not None:
                if type(checked) is ToolResult:  # counted by the core
                    return checked
                entry, args = checked
                if entry.is_async:
                    # Awaited here: no coroutine of the binding's around the tool's.
                    started = _now()
                    try:
                        value = await _tool_function(call, entry, args)(**args)
                        result = _ok(call, value, started, self._max_result_bytes)
                    except Exception as exc:
                        result = _failed(call, exc, started)
                    return self._counted(result)
        return (await self.aexecute_many([call], approved=approved, timeout=timeout, deadline=deadline))[0]

    async def aexecute_many(
        self,
        calls: Sequence[ToolCall],
        *,
        parallel: bool = True,
        limit: int = 8,
        timeout: float | None = None,
        approved: bool | Collection[str] = False,
        deadline: float | None = None,
    ) -> list[ToolResult]:
        """:meth:`execute_many` for event loops. Sync tools run on capstan's
        pool (the loop stays free), ``async def`` tools on this loop.
        Cancelling the awaiting task cancels the calls not yet started and
        the coroutines of the async tools still running.

        Example:
            >>> import asyncio
            >>> @tool
            ... def echo(text: str) -> str:
            ...     '''Echo text.'''
            ...     return text
            >>> registry = ToolRegistry([echo])
            >>> calls = [ToolCall(name="echo", arguments={"text": t}) for t in "ab"]
            >>> [r.content for r in asyncio.run(registry.aexecute_many(calls))]
            ['a', 'b']
        """
        calls = list(calls)
        if not calls:
            return []
        loop = asyncio.get_running_loop()
        return await self._run_submitted(calls, approved, parallel, limit, timeout, loop, deadline)  # type: ignore[no-any-return]

    def _prepare(
        self, calls: Sequence[ToolCall], approved: Any
    ) -> tuple[str, list[Any], list[str], list[bytes], bool]:
        """(id prefix, results known without running, call JSON texts,
        approved call ids, whether every call to run names an inline-safe
        tool or none: see ``_run_submitted``)."""
        prefix = f"py{next(_execution_tokens)}"
        tools = self._tools
        inline_safe = self._inline_safe
        results: list[Any] = [None] * len(calls)
        parts = []
        approved_ids = []
        all_inline = True
        for i, call in enumerate(calls):
            name = call.name
            found = tools.get(name)
            if found is not None:
                if found.requires_approval and self._approves(call, approved):
                    approved_ids.append(f"{prefix}.{i}".encode())
                if name not in inline_safe:
                    all_inline = False
            try:
                arguments = call.arguments
                if type(arguments) is str and not arguments.isascii():
                    arguments = _sendable(arguments)
                arguments = "{}" if arguments is None or arguments == {} else _json.dumps(arguments)
            except (TypeError, ValueError, RecursionError) as exc:
                results[i] = ToolResult(
                    call.id,
                    name,
                    f'Invalid arguments for tool "{name}": they cannot be sent as JSON ({exc}).',
                    True,
                    outcome="invalid_arguments",
                )
                continue
            quoted = f'"{name}"' if found is not None else _json.dumps(name)
            parts.append(f'{{"id":"{prefix}.{i}","name":{quoted},"arguments":{arguments}}}')
        return prefix, results, parts, approved_ids, all_inline

    def _run(
        self,
        calls: Sequence[ToolCall],
        approved: Any,
        parallel: bool,
        limit: int,
        timeout: float | None,
        loop: asyncio.AbstractEventLoop | None,
        deadline: float | None = None,
    ) -> list[ToolResult]:
        """Runs the calls with capstan_registry_execute, waiting on this thread."""
        prefix, results, parts, approved_ids, _ = self._prepare(calls, approved)
        if not parts:
            return results
        payload = _payload(parts)
        options, keep = _options(parallel, limit, timeout, approved_ids, False, deadline, self._strict)
        execution = _Execution(loop, timeout, len(parts) == 1)
        execution.calls = calls
        if deadline is not None:
            execution.deadline = time.monotonic() + deadline
        text = self._execute(prefix.encode(), execution, payload, options)
        del keep
        items = ((i["content"], i["outcome"], i["duration_us"]) for i in _json.loads(text))
        return _collect(calls, prefix, results, execution, items)

    def _run_submitted(
        self,
        calls: Sequence[ToolCall],
        approved: Any,
        parallel: bool,
        limit: int,
        timeout: float | None,
        loop: asyncio.AbstractEventLoop | None,
        deadline: float | None = None,
    ) -> Any:
        """Runs the calls with capstan_batch_submit. With a loop: returns an
        awaitable of the results; without: waits on this thread, where
        Ctrl-C interrupts it (and cancels the batch), and returns them.

        Where the calls start, with a loop (aexecute*):

        - Inline (CAPSTAN_EXEC_START_INLINE) when every call to run names a
          parallel-safe tool (or no registered tool: capstan answers those
          itself), ``parallel`` is true and there are at most ``limit``
          calls. capstan_batch_submit then looks up and validates every call on
          this thread, the loop's, before it returns: an unknown tool or
          invalid arguments are answered there, with no thread hop. A valid
          call of an ``async def`` tool gets its coroutine's task on the
          running loop directly (the result callback runs there too); one of
          a sync tool runs on a worker thread (_callbacks._offload), so that
          it cannot block the loop.
        - Otherwise on capstan's pool, as without a loop (``async def``
          tools' coroutines still run on this loop, reached with
          call_soon_threadsafe): ``parallel=False`` and more calls than
          ``limit``, as an inline start runs every call at once; and tools
          that are not parallel-safe: capstan serializes a tool by making
          the starting thread wait, which inline would be the loop's.
        """
        prefix, results, parts, approved_ids, all_inline = self._prepare(calls, approved)
        if not parts:
            return results if loop is None else _ready(results)
        inline = loop is not None and all_inline and parallel and len(parts) <= (limit or 8)
        payload = _payload(parts)
        options, keep = _options(parallel, limit, timeout, approved_ids, inline, deadline, self._strict)
        execution = _Execution(loop, timeout, False)  # found by call id
        execution.calls = calls
        if deadline is not None:
            execution.deadline = time.monotonic() + deadline
        if inline:
            execution.direct = []
        submission = _batches.Submission(len(parts), loop)
        key = prefix.encode()
        ptr = self._enter()
        _executions[key] = execution
        thread = _get_ident()
        outer = _inline.get(thread, _ABSENT)
        _inline[thread] = None  # not the lone call of an enclosing execute: by call id
        try:
            batch = _batches.submit(_L, ptr, payload, options, submission, inline)
        except BaseException:
            del _executions[key]
            self._leave()
            for coro in execution.direct or ():
                coro.close()
            raise
        finally:
            direct, execution.direct = execution.direct, None
            if outer is _ABSENT:
                del _inline[thread]
            else:
                _inline[thread] = outer  # type: ignore[assignment]
        # Coroutines started inline: the awaiting task runs the last one
        # itself (no task, no loop iteration for a lone call), the others
        # as tasks of their own, so that they run concurrently.
        here = None
        if direct:
            here = direct.pop()
            for coro in direct:
                _callbacks._spawn(loop, coro, execution)  # type: ignore[arg-type]

        def settle(cancel: bool) -> list[ToolResult]:
            nonlocal keep
            try:
                _batches.release(_L, batch, submission, cancel)
                if cancel:
                    execution.cancel_tasks()
            finally:
                _executions.pop(key, None)
                self._leave()
                keep = None
            if execution.raised is not None:
                raise execution.raised
            lost = ("Cancelled: the result was lost.", "cancelled", 0)
            return _collect(calls, prefix, results, execution, (item or lost for item in submission.items))

        if loop is not None:
            return _await_submission(submission, settle, here)
        try:
            submission.event.wait()  # type: ignore[union-attr]
        except BaseException:
            settle(True)
            raise
        return settle(False)

    def stream(
        self,
        style: str,
        *,
        early_dispatch: bool = False,
        on_text: Callable[[str], Any] | None = None,
        timeout: float | None = None,
        limit: int = 0,
    ) -> Stream:
        """A :class:`Stream` reading a streamed response in ``style``
        (``"openai_chat"``, ``"openai_responses"``, ``"anthropic"``,
        ``"gemini"``): ``feed`` it the bytes as they arrive, ``finish`` it
        for a :class:`StreamTurn`. ``early_dispatch``: start each call as
        soon as its arguments are complete; ``on_text``: gets the text
        deltas; ``timeout`` overrides every tool's; ``limit``: calls at once
        (0: 8)."""
        return Stream(self, style, early_dispatch=early_dispatch, on_text=on_text, timeout=timeout, limit=limit)

    def __repr__(self) -> str:
        state = "closed" if self._closing else f"{len(self._tools)} tools"
        return f"<ToolRegistry {state}>"


_DEFERRED = {"hide": _lib.EXPORT_DEFERRED_HIDE, "native": _lib.EXPORT_DEFERRED_NATIVE}


def _sendable(arguments: str) -> str:
    """Arguments text as the lone call sends it (``_check``): a lone surrogate,
    which UTF-8 cannot hold, as its backslash escape, for capstan's parser to
    refuse in this call alone (as JSON-string text it would make the whole
    batch's JSON invalid)."""
    return arguments.encode("utf-8", "backslashreplace").decode()


def _advance(counter: itertools.count[int], n: int) -> None:
    """Takes ``n`` values of ``counter`` (in C: no Python step per value)."""
    _drain(itertools.islice(counter, n), maxlen=0)


def _count(counter: itertools.count[int]) -> int:
    """The next value of an itertools.count, without taking it."""
    return int(repr(counter)[6:-1])


_default: ToolRegistry | None = None
_default_lock = threading.Lock()


def default_registry() -> ToolRegistry:
    """The global registry that ``@tool(register=True)`` adds to."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = ToolRegistry()
    return _default
