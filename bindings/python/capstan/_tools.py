"""Tools: @tool, Tool (subclass it for stateful tools) and FunctionTool."""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import re
import sys
import threading
import typing
from typing import Any, Awaitable, Callable, TypeVar, overload

from ._context import Context
from ._errors import CapstanError, LibraryNotFoundError, ValidationError
from ._schema import _hints, function_schema, is_optional, parse_docstring, resolved_hints

from ._calls import ToolCall, ToolResult

__all__ = ["FunctionTool", "Tool", "render_result", "tool"]


class _Runner(typing.Protocol):
    """What Tool.run and friends use of the registry of a tool alone."""

    def _add(self, built: Tool, weak: bool) -> None: ...
    def execute(
        self, call: ToolCall, *, approved: bool = False, timeout: float | None = None, deadline: float | None = None
    ) -> ToolResult: ...
    def aexecute(
        self, call: ToolCall, *, approved: bool = False, timeout: float | None = None, deadline: float | None = None
    ) -> Awaitable[ToolResult]: ...
    def schemas(
        self, style: str = "openai", *, strict: bool | None = None, gemini_lower: bool = False, deferred: str = "hide"
    ) -> list[dict[str, Any]]: ...
    def describe(self) -> list[dict[str, Any]]: ...
    def add(self, item: Tool | Callable[..., Any]) -> Tool: ...
    def close(self) -> None: ...


# The registry layer (_registry) sits above this module: when it is imported
# (capstan/__init__ imports it) it hands over how to make a registry and the
# global one, for Tool.run and @tool(register=True), so that this module
# does not import it back.
_new_registry: Callable[[], _Runner] | None = None
_default_registry: Callable[[], _Runner] | None = None


def _use_registries(new: Callable[[], _Runner], default: Callable[[], _Runner]) -> None:
    global _new_registry, _default_registry
    _new_registry, _default_registry = new, default

_F = TypeVar("_F", bound=Callable[..., Any])

def render_result(value: Any) -> str:
    """Render a tool's return value as the text the model reads, byte for
    byte as capstan's core renders JSON content (``CAPSTAN_CONTENT_JSON``):
    compact (no spaces), non-ASCII kept, keys in insertion order, floats
    as Rust's serde_json writes them (as Python does, but ``0.00001`` for
    ``1e-05`` and ``1e-7`` for ``1e-07``), integers past 64 bits as floats.

    Strings pass through; ``None`` is ``"null"``; anything else is JSON
    (dataclasses, pydantic models, enums and sets converted), or its
    ``repr`` when it cannot be JSON (a cycle; NaN and infinities, which
    JSON cannot hold, are written ``NaN`` / ``Infinity``).

    Example:
        >>> render_result({"a": 1, "b": [1.5, None]})
        '{"a":1,"b":[1.5,null]}'
        >>> render_result("plain")
        'plain'
    """
    kind = type(value)
    if kind is str:
        return value
    if value is None:
        return "null"
    if kind is int:
        return int.__repr__(value)
    if kind is bool:
        return "true" if value else "false"
    if isinstance(value, str):
        return str(value)
    try:
        text = "".join(_compact(value, 0))
        if _SERDE_DIFFERS.search(text) is not None:  # rare: see _serde_float
            text = "".join(_serde(value, 0))
        return text
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)  # pydantic, duck-typed
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json")
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "replace")
    return str(value)


# The core's rendering of JSON content (src/render.rs): compact, non-ASCII
# kept. The C encoder, made once (json.dumps with arguments builds a new
# encoder per call), writes what serde_json writes but for the numbers that
# _SERDE_DIFFERS finds; the pure-Python encoder then writes those as it does.
try:
    from json.encoder import c_make_encoder as _c_make_encoder  # type: ignore[attr-defined]

    _compact = _c_make_encoder(
        None, _jsonable, json.encoder.encode_basestring, None, ":", ",", False, False, True  # type: ignore[attr-defined]
    )
except (ImportError, TypeError):  # pragma: no cover - no C accelerator
    _compact = json.encoder._make_iterencode(  # type: ignore[attr-defined]
        None, _jsonable, json.encoder.encode_basestring, None, float.__repr__, ":", ",", False, False, True  # type: ignore[attr-defined]
    )
_SERDE_DIFFERS = re.compile(r"[0-9]e-0[5-9]|[0-9]{20}")
_U64 = 2**64
_I64 = -(2**63)


def _serde_float(value: float) -> str:
    """A float as serde_json writes it (zmij): Python's repr (the same
    shortest digits, fixed notation from 1e-4 to below 1e16, else
    ``d.ddde±X``) but fixed for 1e-5 <= |v| < 1e-4 and with no zero
    padding in the exponent (``1e-7``, not ``1e-07``)."""
    text = float.__repr__(value)
    cut = text.find("e-0")
    if cut < 0:
        return text
    exponent = int(text[cut + 1 :])
    if exponent != -5:
        return f"{text[:cut]}e-{-exponent}"
    sign = "-" if text[0] == "-" else ""
    return f"{sign}0.0000{text[len(sign) : cut].replace('.', '')}"


def _serde_int(value: int) -> str:
    """An integer as serde_json reads and writes it: exact within i64 and
    u64, else as the nearest double."""
    if _I64 <= value < _U64:
        return int.__repr__(value)
    return _serde_float(float(value))


_serde = json.encoder._make_iterencode(  # type: ignore[attr-defined]
    None, _jsonable, json.encoder.encode_basestring, None, _serde_float, ":", ",", False, False, True,  # type: ignore[attr-defined]
    _intstr=_serde_int,
)


_NAME_RULE = (
    "a tool name must be 1 to 64 characters of A-Z, a-z, 0-9, '_' or '-' "
    "(the names every model provider accepts)"
)


def check_name(name: Any) -> str:
    """The name, if every provider accepts it: capstan's rule
    (capstan_name_check, the one capstan_registry_add_tool applies).

    Without a loadable libcapstan the check waits for registration, which
    needs the library and applies the same rule (so schema helpers and
    ``@tool`` still work for code that only builds schemas).
    """
    if not isinstance(name, str):
        raise ValidationError(f"{name!r}: {_NAME_RULE}", "CAPSTAN_ERR_INVALID_NAME")
    from . import _lib

    try:
        library: Any = _lib.lib()  # its functions are attributes set at load time
    except LibraryNotFoundError:
        return name
    encoded = name.encode("utf-8", "surrogatepass")
    status = library.name_check(encoded, len(encoded))
    if status != _lib.OK:
        raise ValidationError(
            f"{name!r}: {_NAME_RULE}; {library.last_error_text()}", library.status_text(status)
        )
    return name


class Tool:
    """A tool the model can call: a name, a description, a parameters schema,
    and :meth:`call`.

    Subclass it for tools that hold state (a client, a connection pool):
    override :meth:`call` (plain or ``async def``); its signature gives the
    schema unless ``parameters`` is set. Class attributes are the defaults of
    the keyword arguments::

        class Counter(Tool):
            name = "counter"
            description = "Count calls."

            def __init__(self) -> None:
                super().__init__()
                self.count = 0

            def call(self, step: int = 1) -> int:
                self.count += step
                return self.count

    Options: ``timeout`` (seconds, the call is abandoned and reported as a
    timeout; works for sync functions too), ``requires_approval``,
    ``parallel_safe`` (False: never runs concurrently with itself),
    ``max_output_chars`` (cap on the text the model reads),
    ``wait_for_response`` (a streamed response's call of this tool starts
    only once the whole response arrived, never early: for tools with side
    effects the rest of the response might make unwanted), ``main_thread``
    (its calls run only on a thread calling :meth:`ToolRegistry.pump`: for
    tools that touch UI or game state owned by one thread), ``deferred``
    (left out of the provider schemas until the registry's search tool
    found it: :meth:`ToolRegistry.add_search_tool`; callable at any time),
    ``idempotent`` (safe to run twice with the same arguments: with a
    journal, a call of it that started before a crash and never completed
    runs again instead of failing "Outcome unknown"; see
    :meth:`ToolRegistry.set_journal`).

    MCP metadata (``capstan_tool_def.mcp_meta``), served in ``tools/list``
    by :meth:`ToolRegistry.start_mcp_server` and exported in the ``"mcp"``
    schemas: ``title``; ``annotations`` (MCP ``ToolAnnotations``: a dict of
    ``title``, ``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
    ``openWorldHint``, or the ``mcp`` SDK's object; hints for clients and
    approvers, enforced by nobody); ``output_schema`` (a JSON Schema of
    ``"type": "object"``, or a type such as a dataclass to derive it from:
    a result that is a JSON object failing it ends the call as a tool
    error naming the failing JSON Pointers); ``icons`` (up to 16 dicts of
    ``src``, ``mimeType``, ``sizes``, ``theme``). capstan's core checks them
    at registration (:class:`ValidationError` naming the bad field).
    """

    name: str = ""
    description: str = ""
    parameters: dict[str, Any] | None = None
    timeout: float | None = None
    requires_approval: bool = False
    parallel_safe: bool = True
    max_output_chars: int | None = None
    wait_for_response: bool = False
    main_thread: bool = False
    deferred: bool = False
    idempotent: bool = False
    title: str | None = None
    annotations: Any = None
    output_schema: Any = None
    icons: Any = None

    def __init__(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: dict[str, Any] | None = None,
        timeout: float | None = None,
        requires_approval: bool | None = None,
        parallel_safe: bool | None = None,
        max_output_chars: int | None = None,
        wait_for_response: bool | None = None,
        main_thread: bool | None = None,
        deferred: bool | None = None,
        idempotent: bool | None = None,
        title: str | None = None,
        annotations: Any = None,
        output_schema: Any = None,
        icons: Any = None,
        **config: Any,
    ) -> None:
        cls = type(self)
        self.name = check_name(name or cls.name or _snake(cls.__name__))
        doc_summary = parse_docstring(inspect.getdoc(cls.call))[0] if cls.call is not Tool.call else ""
        self.description = description or cls.description or doc_summary or f"Call {self.name}."
        explicit = parameters if parameters is not None else cls.parameters
        # A tool is called with one JSON object of named arguments; **kwargs
        # can take them only when an explicit schema says what they are.
        _check_signature(self._target(), self.name, allow_kwargs=explicit is not None)
        self.parameters = explicit if explicit is not None else self._derive_parameters()
        self.timeout = _seconds(timeout if timeout is not None else cls.timeout, "timeout")
        self.requires_approval = bool(
            requires_approval if requires_approval is not None else cls.requires_approval
        )
        self.parallel_safe = bool(parallel_safe if parallel_safe is not None else cls.parallel_safe)
        self.wait_for_response = bool(
            wait_for_response if wait_for_response is not None else cls.wait_for_response
        )
        self.main_thread = bool(main_thread if main_thread is not None else cls.main_thread)
        self.deferred = bool(deferred if deferred is not None else cls.deferred)
        self.idempotent = bool(idempotent if idempotent is not None else cls.idempotent)
        self.title = title if title is not None else cls.title
        self.annotations = annotations if annotations is not None else cls.annotations
        self.output_schema = output_schema if output_schema is not None else cls.output_schema
        self.icons = icons if icons is not None else cls.icons
        self.mcp_meta = _mcp_meta(self.title, self.annotations, self.output_schema, self.icons)
        chars = max_output_chars if max_output_chars is not None else cls.max_output_chars
        if chars is not None and (not isinstance(chars, int) or chars < 0 or chars >= 2**32):
            raise ValidationError(f"max_output_chars must be an int in [0, 2**32), got {chars!r}")
        self.max_output_chars = chars or None
        self.config = config
        self._solo: _Runner | None = None
        self._solo_lock = threading.Lock()

    # -- what runs ---------------------------------------------------------------

    def call(self, **kwargs: Any) -> Any:
        """Run the tool. Override this (plain or ``async def``)."""
        raise NotImplementedError(f"{type(self).__name__} must override call()")

    def _target(self) -> Callable[..., Any]:
        return self.call

    @property
    def is_async(self) -> bool:
        """Whether the tool runs as a coroutine (``async def``)."""
        return _is_async(self._target())

    def _derive_parameters(self) -> dict[str, Any]:
        return function_schema(self._target())

    def _call_plan(
        self,
    ) -> tuple[tuple[tuple[str, Any], ...], tuple[tuple[str, Callable[[Any], Any]], ...], str | None]:
        """(names to pass as None when omitted, converters of object
        arguments, the parameter that gets the :class:`Context`)."""
        target = self._target()
        try:
            signature = inspect.signature(target)
        except (TypeError, ValueError):
            return (), (), None
        hints = resolved_hints(target, getattr(self, "_localns", None))
        fill: list[tuple[str, Any]] = []
        convert: list[tuple[str, Callable[[Any], Any]]] = []
        context = None
        for p in signature.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            hint = hints.get(p.name, p.annotation)
            if hint is Context:
                context = p.name
                continue
            if p.default is inspect.Parameter.empty and is_optional(hint):
                fill.append((p.name, None))
            converter = _converter(hint)
            if converter is not None:
                convert.append((p.name, converter))
        return tuple(fill), tuple(convert), context

    # -- running it through capstan --------------------------------------------------

    def _registry(self) -> _Runner:
        """A registry of this tool alone, for :meth:`run` and :meth:`schema`."""
        if self._solo is None:
            with self._solo_lock:
                if self._solo is None:
                    assert _new_registry is not None  # set when capstan is imported
                    solo = _new_registry()
                    solo._add(self, weak=True)
                    self._solo = solo
        return self._solo

    def run(self, **kwargs: Any) -> ToolResult:
        """Run one call through capstan (validation, timeout, output cap).

        Returns a :class:`ToolResult`; ``.data`` holds the return value.
        Errors are results too (``is_error``), never exceptions.

        Example:
            >>> def add(a: int, b: int) -> int:
            ...     '''Add two integers.'''
            ...     return a + b
            >>> t = FunctionTool(add)
            >>> t.run(a=2, b=3).data
            5
        """
        return self._registry().execute(ToolCall(self.name, kwargs), approved=True)

    async def arun(self, **kwargs: Any) -> ToolResult:
        """:meth:`run` for event loops: async tools run on the running loop."""
        return await self._registry().aexecute(ToolCall(self.name, kwargs), approved=True)

    async def acall(self, **kwargs: Any) -> Any:
        """Call the tool with keyword arguments and return what it returns.

        The arguments are validated by capstan first; a sync function runs on
        a worker thread, so a blocking tool cannot stall the event loop; an
        ``async def`` one runs on the running loop.

        Raises:
            ValidationError: When the arguments do not match the schema (a
                required one missing, a wrong type); the message is capstan's.
            TimeoutError: When the tool's timeout passed.
            Exception: Anything the function raises, as raised.

        Example:
            >>> import asyncio
            >>> async def add(a: int, b: int) -> int:
            ...     '''Add two integers.'''
            ...     return a + b
            >>> asyncio.run(FunctionTool(add).acall(a=2, b=3))
            5
        """
        result = await self._registry().aexecute(ToolCall(self.name, kwargs), approved=True)
        if not result.is_error:
            return result.data
        if result.error is not None:
            raise result.error
        if result.outcome == "invalid_arguments":
            raise ValidationError(result.content, "CAPSTAN_OUTCOME_INVALID_ARGUMENTS")
        if result.outcome == "timeout":
            raise TimeoutError(result.content)
        raise CapstanError(result.content, f"CAPSTAN_OUTCOME_{result.outcome.upper()}")

    def schema(self, style: str = "openai") -> dict[str, Any]:
        """This tool's definition in a provider's format (see :meth:`ToolRegistry.schemas`)."""
        return self._registry().schemas(style)[0]

    def describe(self) -> dict[str, Any]:
        """A JSON-safe summary of the tool."""
        return self._registry().describe()[0]

    def close(self) -> None:
        """Frees the native registry behind :meth:`run` (done at garbage collection too)."""
        solo, self._solo = self._solo, None
        if solo is not None:
            solo.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class FunctionTool(Tool):
    """A :class:`Tool` backed by a Python function, plain or ``async def``.

    Usually made by :func:`tool`. ``fn`` stays callable directly (calling the
    tool calls it); the schema comes from its signature unless ``parameters``
    is given, the description from its docstring summary.

    Example:
        >>> def add(a: int, b: int) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> t = FunctionTool(add)
        >>> t.run(a=2, b=3).data
        5
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: dict[str, Any] | None = None,
        timeout: float | None = None,
        requires_approval: bool = False,
        parallel_safe: bool = True,
        max_output_chars: int | None = None,
        wait_for_response: bool = False,
        main_thread: bool = False,
        deferred: bool = False,
        idempotent: bool = False,
        title: str | None = None,
        annotations: Any = None,
        output_schema: Any = None,
        icons: Any = None,
        _localns: dict[str, Any] | None = None,
        **config: Any,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"Expected a callable, got {type(fn).__name__}.")
        self.fn = fn
        self._localns = _localns
        summary = parse_docstring(inspect.getdoc(fn))[0]
        fn_name = getattr(fn, "__name__", None) or type(fn).__name__
        super().__init__(
            name=name or fn_name,
            description=description or summary or f"Call {fn_name}.",
            parameters=parameters,
            timeout=timeout,
            requires_approval=requires_approval,
            parallel_safe=parallel_safe,
            max_output_chars=max_output_chars,
            wait_for_response=wait_for_response,
            main_thread=main_thread,
            deferred=deferred,
            idempotent=idempotent,
            title=title,
            annotations=annotations,
            output_schema=output_schema,
            icons=icons,
            **config,
        )
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__name__ = fn_name
        self.__wrapped__ = fn

    def _target(self) -> Callable[..., Any]:
        return self.fn

    def _derive_parameters(self) -> dict[str, Any]:
        return function_schema(self.fn, localns=self._localns)

    @property
    def is_async(self) -> bool:
        return _is_async(self.fn)

    def native(self) -> Callable[..., Any]:
        """The wrapped function."""
        return self.fn

    @property
    def function(self) -> Callable[..., Any]:
        """The wrapped function (agentsilex's name for it)."""
        return self.fn

    @property
    def parameters_specification(self) -> dict[str, Any]:
        """The parameters' JSON Schema (agentsilex's name for ``parameters``)."""
        return self.parameters if self.parameters is not None else {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)
    )


def _check_signature(fn: Callable[..., Any], name: str, allow_kwargs: bool) -> None:
    """Rejects parameters that a call with one JSON object of named arguments
    cannot fill."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # a builtin without a signature: what it takes is the schema's business
    for p in signature.parameters.values():
        if p.kind is p.POSITIONAL_ONLY:
            raise TypeError(
                f"tool {name!r}: parameter {p.name!r} is positional-only; a tool is called "
                "with named arguments, so make it a regular parameter"
            )
        if p.kind is p.VAR_POSITIONAL:
            raise TypeError(
                f"tool {name!r}: *{p.name} cannot receive named arguments; "
                "take an explicit list parameter instead"
            )
        if p.kind is p.VAR_KEYWORD and not allow_kwargs:
            raise TypeError(
                f"tool {name!r}: **{p.name} cannot be expressed in a JSON Schema; "
                "take an explicit dict parameter, or pass parameters= with the schema"
            )


def _plain(value: Any) -> Any:
    """A dict of MCP fields, from the ``mcp`` SDK's pydantic object too."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(by_alias=True, exclude_none=True, mode="json")
    return value


def _mcp_meta(title: Any, annotations: Any, output_schema: Any, icons: Any) -> str | None:
    """The JSON of ``capstan_tool_def.mcp_meta`` (None: no metadata). The core
    checks each field's shape at registration."""
    meta: dict[str, Any] = {}
    if title is not None:
        meta["title"] = title
    if annotations is not None:
        meta["annotations"] = _plain(annotations)
    if output_schema is not None:
        if isinstance(output_schema, type):
            from ._schema import python_type_to_schema

            output_schema = python_type_to_schema(output_schema)
        meta["outputSchema"] = output_schema
    if icons is not None:
        meta["icons"] = [_plain(icon) for icon in icons]
    if not meta:
        return None
    try:
        return json.dumps(meta, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"the MCP metadata cannot be sent as JSON: {exc}") from exc


def _seconds(value: Any, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValidationError(f"{what} must be a number of seconds >= 0, got {value!r}")
    return float(value) or None


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _converter(hint: Any) -> Callable[[Any], Any] | None:
    """Turns the JSON a model sent into the dataclass / pydantic model a
    parameter is annotated with (also inside Optional, list and dict)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        return _converter(args[0])
    if is_optional(hint):
        members = [a for a in args if a is not type(None)]
        inner = _converter(members[0]) if len(members) == 1 else None
        return (lambda v: None if v is None else inner(v)) if inner else None  # type: ignore[misc]
    if origin in (list, set, frozenset, tuple) and args:
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            parts = [_converter(a) for a in args]
            if not any(parts):
                return None
            return lambda v: tuple(p(x) if p else x for p, x in zip(parts, v))
        inner = _converter(args[0])
        return (lambda v: origin(inner(x) for x in v)) if inner else None  # type: ignore[misc]
    if origin is dict and len(args) == 2:
        inner = _converter(args[1])
        return (lambda v: {k: inner(x) for k, x in v.items()}) if inner else None
    if isinstance(hint, type):
        if issubclass(hint, enum.Enum):
            return hint
        validate = getattr(hint, "model_validate", None)
        if callable(validate) and hasattr(hint, "model_fields"):
            return validate
        if dataclasses.is_dataclass(hint):
            return _dataclass_converter(hint)
    return None


def _dataclass_converter(cls: type) -> Callable[[Any], Any]:
    hints = _hints(cls)
    nested = {}
    for field in dataclasses.fields(cls):
        conv = _converter(hints.get(field.name, field.type))
        if conv is not None:
            nested[field.name] = conv

    def build(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        if nested:
            value = {k: (nested[k](v) if k in nested else v) for k, v in value.items()}
        return cls(**value)

    return build


@overload
def tool(fn: _F) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = ...,
    description: str | None = ...,
    parameters: dict[str, Any] | None = ...,
    timeout: float | None = ...,
    requires_approval: bool = ...,
    parallel_safe: bool = ...,
    max_output_chars: int | None = ...,
    wait_for_response: bool = ...,
    main_thread: bool = ...,
    deferred: bool = ...,
    idempotent: bool = ...,
    title: str | None = ...,
    annotations: Any = ...,
    output_schema: Any = ...,
    icons: Any = ...,
    register: bool = ...,
) -> Callable[[_F], FunctionTool]: ...


def tool(
    fn: Any = None,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    timeout: float | None = None,
    requires_approval: bool = False,
    parallel_safe: bool = True,
    max_output_chars: int | None = None,
    wait_for_response: bool = False,
    main_thread: bool = False,
    deferred: bool = False,
    idempotent: bool = False,
    title: str | None = None,
    annotations: Any = None,
    output_schema: Any = None,
    icons: Any = None,
    register: bool = False,
) -> Any:
    """Turn a Python function into a tool, bare (``@tool``) or configured
    (``@tool(timeout=5, requires_approval=True)``).

    The docstring summary becomes the description the model reads; its
    Google-style ``Args:`` section and ``Annotated`` hints become the
    per-parameter descriptions. The options are :class:`Tool`'s (``title``,
    ``annotations``, ``output_schema`` and ``icons`` are MCP metadata). With ``register=True`` the tool is also added
    to the global registry (:func:`default_registry`).

    Raises:
        ValidationError: If the name is not provider-legal.
        TypeError: For ``*args``, ``**kwargs`` or positional-only parameters.
    """
    # Names visible where the function was defined, so that `from __future__
    # import annotations` resolves classes local to that scope.
    caller = sys._getframe(1).f_locals if fn is not None else None

    def wrap(target: Callable[..., Any], localns: dict[str, Any] | None) -> FunctionTool:
        built = FunctionTool(
            target,
            name=name,
            description=description,
            parameters=parameters,
            timeout=timeout,
            requires_approval=requires_approval,
            parallel_safe=parallel_safe,
            max_output_chars=max_output_chars,
            wait_for_response=wait_for_response,
            main_thread=main_thread,
            deferred=deferred,
            idempotent=idempotent,
            title=title,
            annotations=annotations,
            output_schema=output_schema,
            icons=icons,
            _localns=localns,
        )
        if register:
            assert _default_registry is not None  # set when capstan is imported
            _default_registry().add(built)
        return built

    if fn is not None:
        return wrap(fn, caller)

    def decorator(target: Callable[..., Any]) -> FunctionTool:
        return wrap(target, sys._getframe(1).f_locals)

    return decorator

