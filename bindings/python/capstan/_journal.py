"""Durable calls: a journal (capstan_journal_*) that records every call a
registry runs under a run id and answers a completed one again without
running its tool (docs/durable-calls.md). The host's own store's callbacks
are in _journal_store."""

from __future__ import annotations

import ctypes
import os
from typing import Any

from . import _journal_store, _lib
from ._journal_store import JournalStore


class Journal:
    """Where a registry records its calls and finds them again: a JSON Lines
    file (:meth:`jsonl`, record/replay fixtures a test checks in; one
    process at a time), an SQLite database (:meth:`sqlite`: WAL mode, one
    transaction per record, safe for several processes on one file) or the
    host's own store (:meth:`custom`).

    Give it to :meth:`ToolRegistry.set_journal`, then pass ``run_id`` (a
    conversation, a workflow) to ``execute``, ``aexecute``, their
    ``*_many`` forms or ``run_turn``. A context manager; :meth:`close` frees
    it (a registry using it keeps what it needs, so the two may be closed in
    any order)."""

    def __init__(self, ptr: int, path: str | None, kept_by: str | None = None) -> None:
        self._ptr: int | None = ptr
        #: The file of a :meth:`jsonl` or :meth:`sqlite` journal; None for :meth:`custom`.
        self.path = path
        self._kept_by = kept_by

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

    @classmethod
    def custom(cls, store: JournalStore) -> Journal:
        """A journal kept by ``store``, an object with ``record(record_json)``
        and ``lookup(run_id, call_id)`` (:class:`JournalStore`): the host's
        own database or durable engine. capstan calls them on the thread
        running each call, several at once.

        An exception from ``lookup``, or from ``record`` of a call's
        ``started`` record, fails that call with an error result naming the
        journal's failure, and its tool does not run. One from ``record``
        of a ``completed`` record leaves the call its result, and a later
        run of it finds its outcome unknown; of a ``tools`` record, it loses
        only the tool list. Each is logged to the ``capstan`` logger with its
        traceback; a KeyboardInterrupt or SystemExit is raised again by the
        ``execute`` once the call is done, as a tool's is.

        The journal keeps ``store`` until it is closed and no registry uses
        it any more, whichever comes last.

        Raises:
            TypeError: ``store`` lacks ``record`` or ``lookup``, or either is
                ``async def``.
        """
        _journal_store.check(store)
        key = _journal_store.hold(store)
        cbs = _journal_store.callbacks(key)
        library: Any = _lib.lib()
        out = ctypes.c_void_p()
        status = library.journal_new(ctypes.byref(cbs), ctypes.byref(out))
        if status != _lib.OK:  # the destroy callback has released the store
            raise library.error(status, "capstan_journal_new failed")
        return cls(out.value, None, type(store).__qualname__)  # type: ignore[arg-type]

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def _handle(self) -> int:
        if self._ptr is None:
            raise ValueError(f"the journal {self._name()} is closed")
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

    def _name(self) -> str:
        return repr(self.path) if self._kept_by is None else f"kept by {self._kept_by}"

    def __repr__(self) -> str:
        return f"Journal({self._name()}{', closed' if self._ptr is None else ''})"
