"""Exceptions of the capstan binding."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

__all__ = [
    "CapstanError",
    "ProviderErrorInfo",
    "LibraryNotFoundError",
    "ProgressError",
    "LogError",
    "RegistryClosedError",
    "ToolNotFoundError",
    "ValidationError",
    "SchemaWarning",
]


class SchemaWarning(UserWarning):
    """A tool's schema as derived or registered will not say what the model
    should send: a parameter without a usable type annotation (its schema is
    ``{}``, any JSON value), or a misspelled JSON Schema keyword. Turn it into
    an error with ``warnings.simplefilter("error", capstan.SchemaWarning)``."""


@dataclass(frozen=True)
class ProviderErrorInfo:
    """What a provider's error body said (``CapstanError.provider``), as
    ``capstan_error_json`` reads it: branch on ``kind``/``code``/``http_status``
    instead of parsing the message. Fields the provider did not send are None."""

    kind: str
    message: str
    type: str | None = None
    code: str | None = None
    http_status: int | None = None
    retry_after_ms: int | None = None

    @property
    def retry_after(self) -> float | None:
        """The provider's retry delay in seconds, when it sent one."""
        return None if self.retry_after_ms is None else self.retry_after_ms / 1000.0

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProviderErrorInfo:
        def text(key: str) -> str | None:
            value = data.get(key)
            return None if value is None else str(value)

        def number(key: str) -> int | None:
            value = data.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        return cls(
            kind=str(data.get("kind") or ""),
            message=str(data.get("message") or ""),
            type=text("type"),
            code=text("code"),
            http_status=number("http_status"),
            retry_after_ms=number("retry_after_ms"),
        )


class CapstanError(Exception):
    """A capstan call failed.

    ``status`` is the C status name (e.g. ``"CAPSTAN_ERR_PROVIDER_ERROR"``) and
    ``status_code`` its number, when there is one. For a provider's error
    (``CAPSTAN_ERR_PROVIDER_ERROR``) ``provider`` holds what its body said
    (:class:`ProviderErrorInfo`: kind, code, HTTP status, retry delay); for a
    schema error (``CAPSTAN_ERR_INVALID_SCHEMA``) ``pointer`` is the JSON
    Pointer of the offending place in the schema (``""`` for its root).
    Otherwise both are None.
    """

    def __init__(
        self,
        message: str,
        status: str | None = None,
        *,
        status_code: int | None = None,
        provider: ProviderErrorInfo | None = None,
        pointer: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.status_code = status_code
        self.provider = provider
        self.pointer = pointer


class ValidationError(CapstanError, ValueError):
    """A tool definition is not acceptable: its name, its schema, its signature."""


class ToolNotFoundError(CapstanError, LookupError):
    """No tool of that name is registered. The message lists what is available."""

    def __init__(self, name: str, available: list[str] | tuple[str, ...] = ()) -> None:
        names = sorted(available)
        if names:
            message = f'No tool named "{name}". Available tools: {", ".join(names)}.'
        else:
            message = f'No tool named "{name}": no tools are registered.'
        super().__init__(message, "CAPSTAN_ERR_NOT_FOUND")
        self.name = name
        self.available = names


class SearchError(CapstanError, ValueError):
    """A tool search was refused: an empty or too long query, a limit out of
    range, a regular expression that does not compile."""


class ProgressError(CapstanError, ValueError):
    """A progress report (:meth:`Context.progress`) was refused: a value not
    finite, negative or not above the call's previous report, a negative
    total, a message past 4096 bytes."""


class LogError(CapstanError, ValueError):
    """A log message (:meth:`Context.log`) was refused: a level that is not
    one of MCP's (``"debug"`` to ``"emergency"``, :data:`LogLevel`), a
    message past 64 KiB."""


class InputRequired(Exception):
    """Raised by a tool to ask its caller for input instead of answering
    (MCP 2026-07-28 multi round-trip requests; ``capstan_call_require_input``)::

        @tool
        def greet(ctx: Context) -> str:
            \"\"\"Greets the user by name.\"\"\"
            answer = (ctx.input.get("inputResponses") or {}).get("name") or {}
            if answer.get("action") != "accept":
                raise InputRequired(
                    {"name": {"method": "elicitation/create",
                              "params": {"message": "What is your name?",
                                         "requestedSchema": {"type": "object",
                                             "properties": {"name": {"type": "string"}}}}}},
                    state="asked-name",
                )
            return f"Hello, {answer['content']['name']}!"

    ``requests``: by key, each ``{"method": "elicitation/create" |
    "sampling/createMessage" | "roots/list", "params": {...}}``; ``state``:
    the tool's own text, back in the next round's ``ctx.input["requestState"]``
    (sealed by capstan on the way). Only an MCP client calling a served tool
    can be asked, what it declared (``ctx.input["canAsk"]``); for any other
    caller the call ends as a tool error saying why.
    """

    def __init__(self, requests: dict[str, Any], state: str | None = None) -> None:
        self.requests = requests
        self.state = state
        asked = ", ".join(
            f"{key} ({request.get('method', '?') if isinstance(request, dict) else '?'})"
            for key, request in requests.items()
        )
        super().__init__(f"the tool asked for input ({asked or 'another round'}), which its caller cannot give")


class RegistryClosedError(CapstanError, RuntimeError):
    """The registry was closed; it cannot register or run tools any more."""


class LibraryNotFoundError(CapstanError, OSError):
    """libcapstan could not be loaded. The message lists every place that was tried."""
