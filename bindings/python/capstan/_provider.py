"""Provider responses in, provider messages out: the core's parser
(capstan_format_parse_calls) and writer (capstan_format_write_results), and
the body of a response as the core reads it, from a dict, JSON text or a
provider SDK's response object."""

from __future__ import annotations

import ctypes
import json
from collections.abc import Mapping, Sequence
from typing import Any, Union

from . import _formats, _lib
from ._calls import ToolCall, ToolResult

__all__ = ["Messages", "format_results", "parse_calls"]

#: What a provider's next request takes after a turn's tool calls, by style:
#: a list of messages or items (``"openai"``, ``"openai_responses"``,
#: ``"mcp"``, ``"describe"``) or one message or content (``"anthropic"``: a
#: ``user`` message; ``"gemini"``: a ``user`` Content).
Messages = Union[list[dict[str, Any]], dict[str, Any]]


def body(response: Any) -> bytes:
    """The JSON text of a response: bytes and str as they are, a provider
    SDK object (openai, anthropic: ``to_dict()``; google-genai and other
    pydantic models: ``model_dump`` by alias, the wire's camelCase) as the
    API sent it, anything else through ``json.dumps``.

    Raises:
        TypeError: for a value that is none of these.
    """
    if isinstance(response, (bytes, bytearray, memoryview)):
        return bytes(response)
    if isinstance(response, str):
        return response.encode("utf-8")
    if not isinstance(response, (dict, list)):
        to_dict = getattr(response, "to_dict", None)  # openai, anthropic SDK models
        if callable(to_dict) and not isinstance(response, type):
            response = to_dict()
        else:
            dump = getattr(response, "model_dump", None)  # pydantic (google-genai)
            if callable(dump) and not isinstance(response, type):
                response = dump(mode="json", by_alias=True, exclude_none=True)
    try:
        return json.dumps(response, separators=(",", ":")).encode("ascii")
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"a response is a dict, a list, JSON text or a provider SDK object, not {type(response).__name__} ({exc})"
        ) from None


def parse_calls(style: str, response: Any) -> list[ToolCall]:
    """The tool calls of a model response, in order, as the core reads them
    (``capstan_format_parse_calls``): ``response`` is the body (a dict, its
    JSON text, or the provider SDK's object, e.g. an openai
    ``ChatCompletion``) or just its message / content, in ``style``
    (``"openai"``, ``"openai_responses"``, ``"anthropic"``, ``"gemini"``,
    ``"mcp"``). ``[]`` when the response asks for no tool. A call's
    ``arguments`` is a dict (OpenAI's JSON text parsed), or the text the
    model sent when it is not a JSON object capstan can hold (running the
    call then ends ``invalid_arguments``, saying why).

    Raises:
        ValueError: for an unknown style.
        CapstanError: status ``CAPSTAN_ERR_PROVIDER_ERROR`` when the body is
            the provider's error report (``.provider`` says what it said),
            ``CAPSTAN_ERR_INVALID_RESPONSE`` when it is not a response of
            that style (the message names where).

    Example:
        >>> parse_calls("anthropic", {"content": [
        ...     {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1}}]})
        [ToolCall(name='add', arguments={'a': 1}, id='t1')]
    """
    fmt = _formats.format_of(style)
    data = body(response)
    library: Any = _lib.lib()  # its functions are attributes set at load time
    out, size = ctypes.c_void_p(), ctypes.c_size_t()
    status = library.format_parse_calls(fmt, data, len(data), ctypes.byref(out), ctypes.byref(size))
    if status != _lib.OK:
        raise library.error(status, "capstan_format_parse_calls failed")
    calls = json.loads(library.take_text(out, size))
    return [ToolCall(c["name"], _arguments(c.get("arguments")), c["id"]) for c in calls]


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError("number out of range")
    return value


def _arguments(value: Any) -> dict[str, Any] | str:
    """A call's arguments as a dict; the text as sent (OpenAI's are JSON
    text) when it is not a JSON object capstan can hold, so that running
    the call reports why."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            parsed = json.loads(value, parse_float=_finite) if value.strip() else {}
        except (ValueError, RecursionError):
            return value
        return parsed if isinstance(parsed, dict) else value
    return value  # type: ignore[no-any-return]


def format_results(style: str, results: Sequence[ToolResult | Mapping[str, Any]]) -> Messages:
    """``results`` as the next request of ``style`` takes them, written by
    the core (``capstan_format_write_results``): for ``"openai"`` a list of
    ``tool`` messages, for ``"anthropic"`` one ``user`` message of
    ``tool_result`` blocks, for ``"gemini"`` one ``user`` Content of
    ``functionResponse`` parts, for ``"openai_responses"`` a list of
    ``function_call_output`` items. A result is a :class:`ToolResult`
    (its ``call_id``, ``name``, ``content``, ``is_error``, ``outcome``) or a
    normalized result dict (``{"id", "name", "content", "is_error"}``, with
    ``"parts"`` for images and files). A :class:`ToolResult` carries text
    only: for a turn whose tools return images use
    :meth:`ToolRegistry.run_turn`. Ids the style refuses, or repeated, are
    rewritten as ``run_turn`` does.

    Raises:
        ValueError: for an unknown style.
        CapstanError: ``CAPSTAN_ERR_INVALID_RESULTS`` for a malformed result
            (the message names which).
    """
    fmt = _formats.format_of(style)
    items = [_normalized(r) for r in results]
    data = json.dumps(items, separators=(",", ":")).encode("ascii")
    library: Any = _lib.lib()
    out, size = ctypes.c_void_p(), ctypes.c_size_t()
    status = library.format_write_results(fmt, data, len(data), ctypes.byref(out), ctypes.byref(size))
    if status != _lib.OK:
        raise library.error(status, "capstan_format_write_results failed")
    written: Messages = json.loads(library.take_text(out, size))
    return written


def _normalized(result: ToolResult | Mapping[str, Any]) -> Any:
    if isinstance(result, ToolResult):
        return {
            "id": result.call_id,
            "name": result.name,
            "content": result.content,
            "is_error": result.is_error,
            "outcome": result.outcome,
            "duration_us": result.duration_us,
        }
    if isinstance(result, Mapping):
        return dict(result)
    raise TypeError(f"a result is a ToolResult or a dict, not {type(result).__name__}")
