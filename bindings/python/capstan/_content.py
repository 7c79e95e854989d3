"""Non-text tool results: images, audio and files, as MCP content blocks.

A tool returns an :class:`Image` or a :class:`File` (or a list mixing them
with strings and other values) and capstan sends the bytes to the model as
each provider takes them (``CAPSTAN_CONTENT_PARTS`` in the C header). A PIL
image is sent as PNG when PIL is installed; PIL is not a dependency.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
from typing import Any

from ._tools import render_result


@dataclasses.dataclass(frozen=True)
class Image:
    """An image for the model: its bytes and MIME type (``image/png``,
    ``image/jpeg``, ``image/gif``, ``image/webp`` reach every provider).

    Example:
        >>> Image(b"\\x89PNG...", "image/png")  # doctest: +SKIP
    """

    data: bytes
    mime: str = "image/png"

    def part(self) -> dict[str, Any]:
        return {"type": "image", "data": _b64(self.data), "mimeType": self.mime}


@dataclasses.dataclass(frozen=True)
class File:
    """A file for the model: its bytes, MIME type and name. Audio
    (``audio/...``) is sent as an MCP audio part, anything else as an
    embedded resource (``application/pdf`` reaches every provider as a
    document)."""

    data: bytes
    mime: str
    name: str = "file"

    def part(self) -> dict[str, Any]:
        if self.mime.startswith("audio/"):
            return {"type": "audio", "data": _b64(self.data), "mimeType": self.mime}
        return {
            "type": "resource",
            "resource": {"uri": f"file:///{self.name}", "mimeType": self.mime, "blob": _b64(self.data)},
        }


def _b64(data: bytes) -> str:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"content data must be bytes, not {type(data).__name__}")
    return base64.b64encode(bytes(data)).decode("ascii")


def _is_pil(value: Any) -> bool:
    return type(value).__module__.startswith("PIL.") and hasattr(value, "save") and hasattr(value, "mode")


def _pil_part(value: Any) -> dict[str, Any]:
    buf = io.BytesIO()
    value.save(buf, format="PNG")
    return Image(buf.getvalue(), "image/png").part()


def _is_media(value: Any) -> bool:
    return isinstance(value, (Image, File)) or _is_pil(value)


def _part(value: Any) -> dict[str, Any]:
    if isinstance(value, (Image, File)):
        return value.part()
    if _is_pil(value):
        return _pil_part(value)
    return {"type": "text", "text": render_result(value)}


def content_parts(value: Any) -> str | None:
    """The parts JSON for a tool's return value, or None when it holds no
    image or file (then it is rendered as text, as before)."""
    if _is_media(value):
        return json.dumps([_part(value)])
    if type(value) in (list, tuple) and any(_is_media(v) for v in value):
        return json.dumps([_part(v) for v in value], ensure_ascii=False)
    return None
