"""Exceptions of the capstan binding."""

from __future__ import annotations

__all__ = [
    "CapstanError",
    "LibraryNotFoundError",
    "RegistryClosedError",
    "ToolNotFoundError",
    "ValidationError",
]


class CapstanError(Exception):
    """A capstan call failed. ``status`` is the C status name, when there is one."""

    def __init__(self, message: str, status: str | None = None) -> None:
        super().__init__(message)
        self.status = status


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


class RegistryClosedError(CapstanError, RuntimeError):
    """The registry was closed; it cannot register or run tools any more."""


class LibraryNotFoundError(CapstanError, OSError):
    """libcapstan could not be loaded. The message lists every place that was tried."""
