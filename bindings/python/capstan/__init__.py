"""capstan: a native tool runtime for LLM agents, from Python.

Write tools as plain functions; capstan (a Rust core, reached through its C
ABI with ctypes) validates every call against the full JSON Schema, runs calls
in parallel on its own pool, enforces timeouts (sync functions included) and
output caps, and renders results for the model::

    from capstan import ToolCall, ToolRegistry, tool

    @tool
    def get_weather(city: str, units: str = "celsius") -> dict:
        '''Get the current weather for a city.

        Args:
            city: The city name.
            units: "celsius" or "fahrenheit".
        '''
        return {"city": city, "temp": 18, "units": units}

    with ToolRegistry([get_weather]) as registry:
        tools = registry.schemas("openai")          # for the model
        result = registry.execute(ToolCall("get_weather", {"city": "Oslo"}))
        result.content, result.data

The library is found through $CAPSTAN_LIB, then a copy inside this package,
then a source checkout's target/release, then the system's library path.
"""

from ._errors import (
    CapstanError,
    LibraryNotFoundError,
    InputRequired,
    LogError,
    ProgressError,
    ProviderErrorInfo,
    RegistryClosedError,
    SchemaWarning,
    SearchError,
    ToolNotFoundError,
    ValidationError,
)
from ._history import HistoryCheck, check_history
from ._hooks import ApprovalRequest, Approver, EventKind, ToolEvent
from ._provider import Messages, format_results, parse_calls
from ._lib import version
from ._calls import ToolCall, ToolResult
from ._content import File, Image
from ._context import Context, LogLevel
from ._journal import Journal
from ._journal_store import JournalStore
from ._lifecycle import set_exit_timeout
from ._mcp_client import IdentityProvider, McpMount, OAuth
from ._mcp_server import McpServer
from ._stream import Stream, StreamTurn
from ._registry import ToolExport, ToolRegistry, ToolStats, default_registry
from ._schema import function_schema, parse_docstring, python_type_to_schema
from ._tools import FunctionTool, Tool, render_result, tool
from . import runtime

__all__ = [
    "ApprovalRequest",
    "Approver",
    "CapstanError",
    "Context",
    "EventKind",
    "File",
    "FunctionTool",
    "HistoryCheck",
    "IdentityProvider",
    "Image",
    "InputRequired",
    "Journal",
    "JournalStore",
    "LibraryNotFoundError",
    "LogError",
    "LogLevel",
    "McpMount",
    "McpServer",
    "Messages",
    "OAuth",
    "ProgressError",
    "ProviderErrorInfo",
    "RegistryClosedError",
    "SchemaWarning",
    "SearchError",
    "Stream",
    "StreamTurn",
    "Tool",
    "ToolCall",
    "ToolEvent",
    "ToolExport",
    "ToolNotFoundError",
    "ToolRegistry",
    "ToolResult",
    "ToolStats",
    "ValidationError",
    "check_history",
    "default_registry",
    "format_results",
    "function_schema",
    "parse_calls",
    "parse_docstring",
    "python_type_to_schema",
    "render_result",
    "runtime",
    "set_exit_timeout",
    "tool",
    "version",
]

__version__ = "0.4.0"
