"""Durable calls: a journal (capstan_journal_*) that records every call a
registry runs under a run id and answers a completed one again without
running its tool (docs/durable-calls.md)."""

from __future__ import annotations

import ctypes
import os
from typing import Any

from . import _lib


class Journal:
    """Where a registry records its calls and finds them again: a JSON Lines
    file (:meth:`jsonl`, record/replay fixtures a test checks in; one
    process at a time) or an SQLite database (:meth:`sqlite`: WAL mode, one
    transaction per record, safe for several processes on one file).

    Give it to :meth:`ToolRegistry.set_journal`, then pass ``run_id`` (a
    conversation, a workflow) to ``execute``, ``aexecute``, their
    ``*_many`` forms or ``run_turn``. A context manager; :meth:`close` frees
    it (a registry using it keeps what it needs, so the two may be closed in
    any order)."""

    def __init__(self, ptr: int, path: str) -> None:
        self._ptr: int | None = ptr
        self.path = path

    @classmethod
    def jsonl(cls, path: str | os.PathLike[str]) -> Journal:
        """Opens (creating it if absent) a JSON Lines journal at ``path``.

        Raises:
            CapstanError: ``CAPSTAN_ERR_INVALID_ARGUMENT`` if the file cannot
                be opened or holds a line that is not a record (the message
                names the line; the file is left as it was).
        """
        text = os.fspath(path)
        data = text.encode()
        library: Any = _lib.lib()
        out = ctypes.c_void_p()
        status = library.journal_open_jsonl(data, len(data), ctypes.byref(out))
        if status != _lib.OK:
            raise library.error(status, f"cannot open the journal {text!r}")
        return cls(out.value, text)  # type: ignore[arg-type]

    @classmethod
    def sqlite(cls, path: str | os.PathLike[str], *, full_sync: bool = False) -> Journal:
        """Opens (creating it if absent) an SQLite journal at ``path``.
        ``full_sync``: fsync every commit; without it a record survives the
        process ending at any point, but the last ones may be lost if the
        machine stops.

        Raises:
            CapstanError: ``CAPSTAN_ERR_UNSUPPORTED`` from a library built
                without SQLite; ``CAPSTAN_ERR_INVALID_ARGUMENT`` if the
                database cannot be opened.
        """
        text = os.fspath(path)
        data = text.encode()
        library: Any = _lib.lib()
        out = ctypes.c_void_p()
        flags = _lib.JOURNAL_FULL_SYNC if full_sync else 0
        status = library.journal_open_sqlite(data, len(data), flags, ctypes.byref(out))
        if status != _lib.OK:
            raise library.error(status, f"cannot open the journal {text!r}")
        return cls(out.value, text)  # type: ignore[arg-type]

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def _handle(self) -> int:
        if self._ptr is None:
            raise ValueError(f"the journal {self.path!r} is closed")
        return self._ptr

    def close(self) -> None:
        """Frees the journal (registries using it keep it until they stop
        using it). Idempotent."""
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            library: Any = _lib.lib()
            library.journal_free(ptr)

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_ptr", None) is not None:
            self.close()

    def __repr__(self) -> str:
        return f"Journal({self.path!r}{', closed' if self._ptr is None else ''})"
