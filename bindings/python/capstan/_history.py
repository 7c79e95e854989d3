"""Conversation integrity: a history checked against a provider's rules for
tool calls and results, and repaired (capstan_format_check_history)."""

from __future__ import annotations

import ctypes
import json
from typing import Any, NamedTuple

from . import _formats, _lib

HISTORY_REPAIR = 1 << 0
HISTORY_GEMINI_SIGNATURES = 1 << 1


class HistoryCheck(NamedTuple):
    """What :func:`check_history` found: ``ok`` (no damage), ``findings``
    (``{"kind", "entry", "call_id", "message", "repair"?}`` each) and, when
    asked for, the ``repaired`` history (same shape as the input)."""

    ok: bool
    findings: list[dict[str, Any]]
    repaired: Any


def check_history(
    style: str,
    history: Any,
    *,
    repair: bool = False,
    gemini_signatures: bool = False,
) -> HistoryCheck:
    """Checks ``history`` (a list of messages, input items or contents, or a
    request body holding one) against the rules of ``style``
    (``"openai"``/``"openai_chat"``, ``"openai_responses"``, ``"anthropic"``,
    ``"gemini"``): calls without results, orphan and second results, repeated
    or illegal ids, results out of order and, with ``gemini_signatures``
    (Gemini 3), missing thought signatures. With ``repair`` it also returns a
    history the provider will take, every repair listed in ``findings``.
    Raises ``ValueError`` for an unknown style and ``CapstanError`` for a
    style without conversations (``"mcp"``, ``"describe"``) or a history of
    the wrong shape."""
    fmt = _formats.format_of(style)
    text = history if isinstance(history, (str, bytes)) else json.dumps(history)
    data = text.encode() if isinstance(text, str) else text
    flags = (HISTORY_REPAIR if repair else 0) | (HISTORY_GEMINI_SIGNATURES if gemini_signatures else 0)
    library: Any = _lib.lib()  # its functions are attributes set at load time
    report, report_len = ctypes.c_void_p(), ctypes.c_size_t()
    repaired, repaired_len = ctypes.c_void_p(), ctypes.c_size_t()
    status = library.format_check_history(
        fmt,
        data,
        len(data),
        flags,
        ctypes.byref(report),
        ctypes.byref(report_len),
        ctypes.byref(repaired),
        ctypes.byref(repaired_len),
    )
    if status != _lib.OK:
        raise library.error(status, "capstan_format_check_history failed")
    found = json.loads(library.take_text(report, report_len))
    fixed = json.loads(library.take_text(repaired, repaired_len)) if repair else None
    return HistoryCheck(found["ok"], found["findings"], fixed)
