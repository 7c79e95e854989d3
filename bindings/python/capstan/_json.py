"""JSON for the hot path: the stdlib's C scanner and encoder, called directly.

``json.loads``/``json.dumps`` spend most of their time on small inputs in
Python-level wrappers; capstan's output is compact JSON from serde, so the C
scanner can read it as is. Falls back to the json module where ``_json`` is
missing.
"""

from __future__ import annotations

import json
from typing import Any


def _refuse(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined] # (text, index after the opening quote) -> (str, end)

try:
    from json.encoder import c_encode_basestring_ascii, c_make_encoder  # type: ignore[attr-defined]

    # (markers, default, encoder, indent, key_separator, item_separator,
    #  sort_keys, skipkeys, allow_nan). No circular check: a cycle ends in
    # RecursionError, which callers treat like any other unencodable value.
    _encode = c_make_encoder(None, _refuse, c_encode_basestring_ascii, None, ":", ",", False, False, False)
    _encode_str = c_encode_basestring_ascii
except (ImportError, TypeError):  # pragma: no cover - no C accelerator
    _encode = None
    _encode_str = json.dumps


def loads(text: str) -> Any:
    """Reads compact JSON text that capstan produced."""
    try:
        return _scan(text, 0)[0]
    except StopIteration as exc:  # pragma: no cover - capstan wrote bad JSON
        raise ValueError(f"not JSON: {text[:80]!r}") from exc


def dumps(value: Any) -> str:
    """Compact, ASCII-only JSON; NaN and infinities are refused (ValueError)."""
    if _encode is None:  # pragma: no cover
        return json.dumps(value, separators=(",", ":"), allow_nan=False)
    if isinstance(value, str):
        return c_encode_basestring_ascii(value)
    return "".join(_encode(value, 0))
