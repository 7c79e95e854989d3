"""Loading libcapstan and declaring its C ABI (include/capstan.h) for ctypes.

Two handles on the same library: ``blocking`` (ctypes.CDLL) releases the GIL
during the call, for every function that may wait or run tool callbacks on
other threads (execute, register, free); ``quick`` (ctypes.PyDLL) keeps it,
for the short calls a tool callback makes on its call (arguments, return),
where dropping and re-taking the GIL would cost more than the call itself.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import sys
import threading
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_bool,
    c_char_p,
    c_int32,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)
from pathlib import Path
from typing import Any, Literal

from ._errors import CapstanError, LibraryNotFoundError, ProviderErrorInfo

NTS = ctypes.c_size_t(-1).value  # CAPSTAN_NTS

OK = 0
ERR_INVALID_ARGUMENT = 2
ERR_INVALID_UTF8 = 3
ERR_INVALID_NAME = 4
ERR_INVALID_SCHEMA = 5
ERR_NOT_FOUND = 10
ERR_TIMEOUT = 13
ERR_ALREADY_COMPLETED = 11
ERR_STALE_HANDLE = 12

TOOL_REQUIRES_APPROVAL = 1 << 0
TOOL_SERIAL = 1 << 1
TOOL_WAIT_FOR_RESPONSE = 1 << 3
TOOL_MAIN_THREAD = 1 << 2
TOOL_DEFERRED = 1 << 4
TOOL_HOST_RUN = 1 << 5
TOOL_IDEMPOTENT = 1 << 7
TOOL_REPLACE = 1 << 8

JOURNAL_REPLAY = 1  # capstan_registry_set_journal: replay only
JOURNAL_FULL_SYNC = 1  # capstan_journal_open_sqlite: fsync every commit

REGISTRY_COERCE = 1 << 0
EXEC_SEQUENTIAL = 1 << 0
EXEC_STRICT_NULLS = 1 << 2
EXEC_START_INLINE = 1 << 3
EXEC_WHOLE_TURN = 1 << 5
EXPORT_STRICT = 1 << 0
EXPORT_GEMINI_LOWER = 1 << 1
EXPORT_DEFERRED_HIDE = 0
EXPORT_DEFERRED_NATIVE = 1

WAIT_FOREVER = 2**32 - 1  # UINT32_MAX: a timeout_ms without limit

CONTENT_TEXT = 0
CONTENT_JSON = 1
CONTENT_PARTS = 2

FORMAT_DESCRIBE = 0
FORMAT_OPENAI_CHAT = 1
FORMAT_OPENAI_RESPONSES = 2
FORMAT_ANTHROPIC = 3
FORMAT_GEMINI = 4
FORMAT_MCP = 5

TOOL_FN = CFUNCTYPE(None, c_void_p, c_void_p)
DESTROY_FN = CFUNCTYPE(None, c_void_p)
THREAD_HOOK_FN = CFUNCTYPE(None, c_void_p)

OUTCOMES = ("ok", "tool_error", "invalid_arguments", "unknown_tool", "timeout", "cancelled", "denied")
#: A log message's severity (``capstan_log_level``): MCP's level names, least
#: severe first.
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
# capstan_log_level by value: CAPSTAN_LOG_DEBUG (0) to CAPSTAN_LOG_EMERGENCY (7).
LOG_LEVELS: tuple[LogLevel, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class Result(Structure):
    """capstan_result: one call's result as capstan_batch_submit hands it over.
    Borrowed for the callback only; strings are not NUL-terminated."""

    _fields_ = [
        ("index", c_size_t),
        ("id", c_void_p),
        ("id_len", c_size_t),
        ("name", c_void_p),
        ("name_len", c_size_t),
        ("content", c_void_p),
        ("content_len", c_size_t),
        ("outcome", c_uint32),
        ("is_error", c_bool),
        ("duration_us", ctypes.c_uint64),
    ]


RESULT_FN = CFUNCTYPE(None, c_void_p, POINTER(Result))


class ToolDef(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("name", c_char_p),
        ("description", c_char_p),
        ("parameters", c_char_p),
        ("callback", TOOL_FN),
        ("user_data", c_void_p),
        ("destroy", DESTROY_FN),
        ("timeout_ms", c_uint32),
        ("max_output_chars", c_uint32),
        ("flags", c_uint32),
        ("mcp_meta", c_char_p),  # appended in 0.4: NULL = none
    ]


class RegistryOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("flags", c_uint32), ("max_result_bytes", c_uint64)]


class ExportOptions(Structure):
    """capstan_export_options."""

    _fields_ = [("struct_size", c_uint32), ("flags", c_uint32), ("deferred", c_uint32)]


class SearchOptions(Structure):
    """capstan_search_options."""

    _fields_ = [("struct_size", c_uint32), ("flags", c_uint32), ("limit", c_uint32)]


SEARCH_REGEX = 1 << 0


class SearchToolOptions(Structure):
    """capstan_search_tool_options."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("flags", c_uint32),
        ("limit", c_uint32),
        ("name", c_char_p),
        ("description", c_char_p),
    ]


class RuntimeOptions(Structure):
    """capstan_runtime_options."""

    _fields_ = [("struct_size", c_uint32), ("threads", c_uint32), ("keep_alive_ms", c_uint32)]


class ExecOptions(Structure):
    """capstan_exec_options, the whole current struct (approved ids included)."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("flags", c_uint32),
        ("limit", c_uint32),
        ("timeout_ms", c_uint32),
        ("approved_ids", POINTER(c_char_p)),
        ("approved_count", c_size_t),
        ("deadline_ms", c_uint32),  # 0: no batch deadline
        ("run_id", c_char_p),  # NULL: the journal is not used
        ("run_id_len", c_size_t),
    ]


_NAMES = {
    "linux": ["libcapstan.so"],
    "darwin": ["libcapstan.dylib"],
    "win32": ["capstan.dll", "libcapstan.dll"],
}


def _file_names() -> list[str]:
    return _NAMES.get(sys.platform, ["libcapstan.so"])


def _candidates() -> list[tuple[str, Path | str]]:
    """Where to look, in order: (why, path). $CAPSTAN_LIB overrides; then the
    copy a wheel ships inside the package (bindings/python/hatch_build.py)."""
    found: list[tuple[str, Path | str]] = []
    env = os.environ.get("CAPSTAN_LIB")
    if env:
        found.append(("$CAPSTAN_LIB", env))
    package = Path(__file__).resolve().parent
    for name in _file_names():
        found.append(("bundled in the package", package / name))
    # A source checkout: bindings/python/capstan -> <repo>/target/release.
    for up in package.parents[:4]:
        for name in _file_names():
            found.append(("cargo build output", up / "target" / "release" / name))
    return found


def _load() -> tuple[ctypes.CDLL, ctypes.PyDLL, str]:
    tried: list[str] = []
    env = os.environ.get("CAPSTAN_LIB")
    for why, path in _candidates():
        if why != "$CAPSTAN_LIB" and not Path(path).is_file():
            tried.append(f"{path} ({why}: no such file)")
            continue
        try:
            return ctypes.CDLL(str(path)), ctypes.PyDLL(str(path)), str(path)
        except OSError as exc:
            tried.append(f"{path} ({why}: {exc})")
            if why == "$CAPSTAN_LIB":
                # An explicit choice that fails is an error, not a hint to look elsewhere.
                raise LibraryNotFoundError(
                    f"cannot load libcapstan from $CAPSTAN_LIB={env!r}: {exc}"
                ) from exc
    system = ctypes.util.find_library("capstan")
    if system:
        try:
            return ctypes.CDLL(system), ctypes.PyDLL(system), system
        except OSError as exc:
            tried.append(f"{system} (ctypes.util.find_library: {exc})")
    else:
        tried.append("ctypes.util.find_library('capstan') (not found)")
    raise LibraryNotFoundError(
        "cannot find libcapstan. `pip install ./bindings/python` from a capstan checkout "
        "builds it into the package; or build it with `cargo build --release --lib` and set "
        "CAPSTAN_LIB to the library's path. Tried:\n  " + "\n  ".join(tried)
    )


def _declare(blocking: ctypes.CDLL, quick: ctypes.PyDLL, path: str) -> dict[str, Any]:
    status = c_int32
    out = POINTER(c_void_p)
    size_out = POINTER(c_size_t)
    signatures: dict[Any, dict[str, tuple[Any, list[Any]]]] = {
        # GIL released: may wait, or run Python tool callbacks on other threads.
        blocking: {
            "capstan_registry_new": (status, [POINTER(RegistryOptions), out]),
            "capstan_registry_free": (None, [c_void_p]),
            "capstan_registry_close": (status, [c_void_p, c_uint32]),
            "capstan_registry_add_tool": (status, [c_void_p, POINTER(ToolDef)]),
            "capstan_registry_remove_tool": (status, [c_void_p, c_char_p, c_size_t]),
            # Output text as c_char_p: `.value` reads it without a length (it is
            # NUL-terminated JSON, escaped), and capstan_string_free takes it as is.
            # Options as c_void_p: byref() of an ExecOptions, or None.
            "capstan_registry_execute": (
                status,
                [c_void_p, c_char_p, c_size_t, c_void_p, POINTER(c_char_p), size_out],
            ),
            "capstan_registry_run_turn": (
                status,
                [c_void_p, c_uint32, c_char_p, c_size_t, c_void_p, out, size_out],
            ),
            # Validates a whole batch (linear in it): the GIL is let go meanwhile.
            "capstan_registry_check_calls": (
                status,
                [c_void_p, c_char_p, c_size_t, c_uint32, POINTER(c_char_p), size_out],
            ),
            "capstan_batch_submit": (status, [c_void_p, c_char_p, c_size_t, c_void_p, RESULT_FN, c_void_p, out]),
            "capstan_batch_cancel": (None, [c_void_p]),
            "capstan_batch_free": (None, [c_void_p]),
            "capstan_registry_needs_approval": (status, [c_void_p, c_char_p, c_size_t, c_void_p, out, size_out]),
            # Runs main-thread tools on this thread.
            "capstan_registry_pump": (c_size_t, [c_void_p, c_uint32]),
            # May wait for the last invocation of the callable they replace.
            "capstan_registry_set_approver": (status, [c_void_p, c_void_p, c_void_p, c_void_p]),
            "capstan_registry_set_event_hook": (status, [c_void_p, c_void_p, c_void_p, c_void_p]),
            "capstan_registry_set_notify": (status, [c_void_p, c_void_p, c_void_p, c_void_p]),
            # An approval may start its call.
            "capstan_approval_decide": (status, [c_void_p, c_bool, c_char_p, c_size_t]),
            # Runs the event hook on this thread; may send an MCP notification.
            "capstan_call_progress": (status, [c_void_p, ctypes.c_double, ctypes.c_double, c_char_p, c_size_t]),
            # Runs the event hook on this thread; may send an MCP notification.
            "capstan_call_log": (status, [c_void_p, c_uint32, c_char_p, c_size_t]),
            # Joins capstan's threads, which may be waiting for the GIL.
            "capstan_runtime_shutdown": (status, [c_uint32]),
            # Replaces a tool of its name, whose destroy may run here.
            "capstan_registry_add_search_tool": (status, [c_void_p, c_void_p]),
            # Journals: file and database I/O.
            "capstan_journal_open_jsonl": (status, [c_char_p, c_size_t, out]),
            "capstan_journal_open_sqlite": (status, [c_char_p, c_size_t, c_uint32, out]),
            "capstan_journal_free": (None, [c_void_p]),
            # On failure runs the store's destroy here.
            "capstan_journal_new": (status, [c_void_p, out]),
            "capstan_registry_set_journal": (status, [c_void_p, c_void_p, c_uint32]),
            # Host batches with a run id: journal writes; finish may wait for pool calls.
            "capstan_host_batch_begin": (
                status,
                [c_void_p, c_char_p, c_size_t, c_void_p, out, POINTER(c_char_p), size_out],
            ),
            "capstan_host_batch_finish": (
                status,
                [c_void_p, c_char_p, c_size_t, c_uint32, POINTER(c_char_p), size_out],
            ),
            "capstan_host_batch_cancel": (None, [c_void_p]),
            "capstan_host_batch_free": (None, [c_void_p]),
        },
        # GIL kept: short, never waits for Python code.
        quick: {
            "capstan_call_arguments": (c_char_p, [c_void_p, size_out]),
            "capstan_call_id": (c_char_p, [c_void_p, size_out]),
            "capstan_call_tool": (c_char_p, [c_void_p, size_out]),
            "capstan_call_cancelled": (c_bool, [c_void_p]),
            "capstan_call_return": (status, [c_void_p, c_uint32, c_char_p, c_size_t]),
            "capstan_call_fail": (status, [c_void_p, c_char_p, c_size_t]),
            "capstan_call_input": (c_char_p, [c_void_p, size_out]),
            "capstan_call_require_input": (status, [c_void_p, c_char_p, c_size_t, c_char_p, c_size_t]),
            "capstan_name_check": (status, [c_char_p, c_size_t]),
            "capstan_approval_tool": (c_char_p, [c_void_p, size_out]),
            "capstan_approval_id": (c_char_p, [c_void_p, size_out]),
            "capstan_approval_arguments": (c_char_p, [c_void_p, size_out]),
            # From a journal store's lookup callback: parses the record it found.
            "capstan_journal_answer_set": (status, [c_void_p, c_char_p, c_size_t]),
            "capstan_registry_stats_json": (status, [c_void_p, out, size_out]),
            "capstan_registry_wake_fd": (status, [c_void_p, POINTER(c_int32)]),
            # Bounded validation, no callback: keeps the GIL (the lone-call fast path).
            "capstan_registry_check_call": (
                status,
                [c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, c_uint32, POINTER(c_uint32), POINTER(c_char_p), size_out],
            ),
            "capstan_string_free": (None, [c_void_p]),
            "capstan_error_message": (c_size_t, [c_char_p, c_size_t]),
            "capstan_error_json": (status, [out, size_out]),
            "capstan_status_name": (c_char_p, [status]),
            "capstan_version_string": (c_char_p, []),
            "capstan_registry_tools_json": (status, [c_void_p, c_uint32, c_void_p, out, size_out, out, size_out]),
            # Bounded (README, Limits): a query of at most 1 KiB over the index.
            "capstan_registry_search_json": (status, [c_void_p, c_char_p, c_size_t, c_void_p, out, size_out]),
            "capstan_format_parse_calls": (status, [c_uint32, c_char_p, c_size_t, out, size_out]),
            "capstan_format_write_results": (status, [c_uint32, c_char_p, c_size_t, out, size_out]),
            # Linear in the history, no callback: keeps the GIL.
            "capstan_format_check_history": (
                status,
                [c_uint32, c_char_p, c_size_t, c_uint32, out, size_out, out, size_out],
            ),
            "capstan_runtime_configure": (status, [c_void_p]),
            "capstan_registry_unload_tools": (status, [c_void_p]),
            "capstan_runtime_set_thread_hooks": (status, [THREAD_HOOK_FN, THREAD_HOOK_FN, c_void_p, DESTROY_FN]),
            "capstan_runtime_abandon_thread_hooks": (status, [c_uint32]),
        },
    }
    missing = [name for functions in signatures.values() for name in functions if not hasattr(blocking, name)]
    if missing:
        raise LibraryNotFoundError(
            f"the libcapstan at {path} is older than this binding: it lacks {', '.join(missing)}. "
            "Build it from the same checkout (`cargo build --release --lib`)."
        )
    bound: dict[str, Any] = {}
    for handle, functions in signatures.items():
        for name, (restype, argtypes) in functions.items():
            fn = getattr(handle, name)
            fn.restype = restype
            fn.argtypes = argtypes
            bound[name[len("capstan_"):]] = fn
    # The lone call's check and the free of its text, without argtypes: ctypes
    # then converts no argument through a from_param (a call and an object
    # each, most of the crossing's cost for nine arguments). Their callers
    # pass only what ctypes sends as is: bytes, None, small ints, ctypes
    # objects and the parameters from_param made once (_lone.check).
    for name in ("capstan_registry_check_call", "capstan_string_free"):
        fn = quick[name]  # a function object of its own, apart from the declared one
        fn.restype = signatures[quick][name][0]
        bound["raw_" + name[len("capstan_"):]] = fn
    # capstan_batch_submit with CAPSTAN_EXEC_START_INLINE, keeping the GIL: the
    # trampoline then only validates and schedules (a coroutine, a worker
    # thread's job); nothing waits for another thread that needs the GIL.
    submit_inline = quick.capstan_batch_submit
    submit_inline.restype, submit_inline.argtypes = status, signatures[blocking]["capstan_batch_submit"][1]
    bound["submit_inline"] = submit_inline
    # Host batches without a run id, keeping the GIL: begin checks the calls
    # on this thread and only starts the pool's (see _host); finish with
    # timeout 0 only renders the answers.
    for name in ("capstan_host_batch_begin", "capstan_host_batch_finish"):
        fn = getattr(quick, name)
        fn.restype, fn.argtypes = signatures[blocking][name]
        bound["quick_" + name[len("capstan_"):]] = fn
    return bound


class _Library:
    """The loaded library; attributes are its functions, bound as declared."""

    def __init__(self) -> None:
        blocking, quick, path = _load()
        self.path = path
        self.blocking = blocking
        self.quick = quick
        for name, fn in _declare(blocking, quick, path).items():
            setattr(self, name, fn)

    def last_error_text(self) -> str:
        size = self.quick.capstan_error_message(None, 0)
        buf = ctypes.create_string_buffer(size + 1)
        self.quick.capstan_error_message(buf, size + 1)
        return buf.value.decode("utf-8", "replace")

    def status_text(self, status: int) -> str:
        return self.quick.capstan_status_name(status).decode()

    def last_error_json(self) -> dict[str, Any]:
        """The last failure of this thread as capstan_error_json describes it
        ({} if it cannot be read)."""
        ptr, size = c_void_p(), c_size_t()
        if self.quick.capstan_error_json(ctypes.byref(ptr), ctypes.byref(size)) != 0 or not ptr.value:
            return {}
        try:
            data = json.loads(self.take_text(ptr, size))
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    def error(self, status: int, what: str, cls: type[CapstanError] = CapstanError) -> CapstanError:
        """The exception for a failed call; reads the last error of this thread
        (message and structured fields) right after the failing call."""
        data = self.last_error_json()
        message = data.get("message")
        if not isinstance(message, str):
            message = self.last_error_text()
        provider = data.get("provider")
        pointer = data.get("pointer")
        code = data.get("status_code")
        return cls(
            f"{what}: {message}",
            self.status_text(status),
            status_code=code if isinstance(code, int) and code == status else status,
            provider=ProviderErrorInfo.from_json(provider) if isinstance(provider, dict) else None,
            pointer=pointer if isinstance(pointer, str) else None,
        )

    def take_text(self, ptr: c_void_p, size: c_size_t) -> bytes:
        """Copies capstan-owned output text and frees it."""
        try:
            return ctypes.string_at(ptr.value, size.value)  # type: ignore[arg-type]
        finally:
            self.quick.capstan_string_free(ptr)


_library: _Library | None = None
_lock = threading.Lock()


def lib() -> _Library:
    """The library, loaded on first use (schema helpers work without it)."""
    global _library
    if _library is None:
        with _lock:
            if _library is None:
                _library = _Library()
    return _library


def version() -> str:
    """The version of the loaded libcapstan, e.g. ``"0.2.0"``."""
    return lib().quick.capstan_version_string().decode()
