"""ToolRegistry's tools for the model: definitions in each provider's format,
run_turn, search and deferred tools, describe."""

from __future__ import annotations

import ctypes
import json
from collections.abc import Collection
from typing import Any, NamedTuple

from . import _formats, _lib, _provider
from ._callbacks import _utf8
from ._errors import CapstanError, SearchError, ValidationError
from ._exec import _options, run_bytes
from ._provider import Messages
from . import _registry_core as _core
from ._registry_core import _RegistryCore


class ToolExport(NamedTuple):
    """:meth:`ToolRegistry.export`: ``tools`` as the API takes them, and the
    core's ``report`` (``{"tool", "pointer", "message"}`` each)."""

    tools: Any
    report: list[dict[str, Any]]


_DEFERRED = {"hide": _lib.EXPORT_DEFERRED_HIDE, "native": _lib.EXPORT_DEFERRED_NATIVE}


class _Exports(_RegistryCore):
    """ToolRegistry's tools as the model sees them."""

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
            status = _core._L.registry_tools_json(
                ptr, fmt, ctypes.byref(options), ctypes.byref(out), ctypes.byref(size),
                ctypes.byref(report), ctypes.byref(report_size),
            )
            if status != _lib.OK:
                raise _core._L.error(status, "capstan_registry_tools_json failed")
            exported = json.loads(_core._L.take_text(out, size))
            found = json.loads(_core._L.take_text(report, report_size)) if report.value else []
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
        run_id: str | None = None,
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

        ``run_id``: the journal's run (see :meth:`set_journal`): each call
        is recorded, and answered again, by this id and the response's own
        call id.

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
        options, keep = _options(parallel, limit, timeout, ids, False, deadline, self._strict, extra, run_bytes(run_id))
        ptr = self._enter()
        try:
            out, size = ctypes.c_void_p(), ctypes.c_size_t()
            status = _core._L.registry_run_turn(ptr, fmt, data, len(data), options, ctypes.byref(out), ctypes.byref(size))
            if status != _lib.OK:
                raise _core._L.error(status, "capstan_registry_run_turn failed")
            written: Messages = json.loads(_core._L.take_text(out, size))
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
            status = _core._L.registry_search_json(ptr, data, len(data), ctypes.byref(opts), ctypes.byref(out), ctypes.byref(size))
            if status != _lib.OK:
                raise _core._L.error(status, "capstan_registry_search_json failed", SearchError)
            return json.loads(_core._L.take_text(out, size))["results"]
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
                status = _core._L.registry_add_search_tool(ptr, ctypes.byref(options))
                if status != _lib.OK:
                    cls = ValidationError if status == _lib.ERR_INVALID_NAME else SearchError
                    raise _core._L.error(status, "capstan_registry_add_search_tool failed", cls)
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
            status = _core._L.registry_unload_tools(ptr)
            if status != _lib.OK:
                raise _core._L.error(status, "capstan_registry_unload_tools failed")
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
