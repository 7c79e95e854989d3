"""ToolRegistry's host batches (see _host) and journal: which batches take
the host-batch path, and the runs of a journal's run id."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

from . import _host, _json
from ._callbacks import _Execution, _executions
from ._calls import ToolCall, ToolResult
from ._exec import _collect, _keys, _options, _payload, run_bytes
from ._journal import Journal
from . import _lib
from . import _registry_core as _core
from ._registry_core import _RegistryCore


class _HostExecutions(_RegistryCore):
    """Host batches and the journal."""

    def set_journal(self, journal: Journal | None, *, replay: bool = False) -> None:
        """Records every call run with a ``run_id`` in ``journal`` (None:
        no journal), from the next batch on. A call whose (run id, call id)
        has a completed record is answered from it without running its tool
        (content and outcome as recorded, ``data`` None, a ``"replayed"``
        event, ``"replayed"`` in :meth:`stats`); one whose tool, schema or
        arguments changed fails naming what changed; one that started in an
        earlier process and never completed runs again if its tool is
        ``idempotent``, else fails with content beginning "Outcome
        unknown:". ``replay=True``: no tool runs at all, and a call missing
        from the journal fails naming it (record/replay tests).

        The journal's key is the run id plus each call's id: send the calls
        again with the ids the model gave them (:class:`ToolCall` ``id``)."""
        handle = None if journal is None else journal._handle()
        flags = _lib.JOURNAL_REPLAY if replay else 0
        ptr = self._enter()
        try:
            status = _core._L.registry_set_journal(ptr, handle, flags)
            if status != _lib.OK:
                raise _core._L.error(status, "capstan_registry_set_journal failed")
        finally:
            self._leave()

    def _host_ok(self, calls: Sequence[ToolCall], timeout: float | None, deadline: float | None) -> bool:
        """Whether the batch takes the host-batch path: some call names a
        host-run tool, and none a tool that waits for someone else (an
        approver, a pump), nor a timeout or deadline of the batch (the
        callback path stops a coroutine that capstan timed out)."""
        if timeout is not None or deadline is not None:
            return False
        host_run, tools = self._host_run, self._tools
        found = False
        for call in calls:
            name = call.name
            if name in host_run:
                found = True
                continue
            built = tools.get(name)
            if built is not None and (built.requires_approval or built.main_thread):
                return False
        return found

    def _run_host(
        self,
        calls: Sequence[ToolCall],
        approved: Any,
        parallel: bool,
        limit: int,
        run: bytes | None,
        loop: asyncio.AbstractEventLoop | None,
    ) -> Any:
        """Runs the calls as a host batch; with a loop, returns an awaitable
        of the results."""
        prefix, results, parts, approved_ids, _ = self._prepare(calls, approved, run)  # type: ignore[attr-defined]
        if not parts:
            return results if loop is None else _host_ready(results)
        payload = _payload(parts)
        options, keep = _options(parallel, limit, None, approved_ids, False, None, self._strict, 0, run)
        execution = _Execution(loop, None, False)
        execution.calls = calls if run is None else None
        registered, keys = _keys(prefix, calls, run)
        answers = _host.Answers(execution, self._host_run)
        ptr = self._enter()
        for key in registered:
            _executions[key] = execution
        journaled = run is not None

        def done(text: str) -> list[ToolResult]:
            if execution.raised is not None:
                raise execution.raised
            items = ((i["content"], i["outcome"], i["duration_us"]) for i in _json.loads(text))
            return _collect(calls, prefix, results, execution, items, keys)

        def leave() -> None:
            for key in registered:
                _executions.pop(key, None)
            self._leave()

        try:
            batch, handed = _host.begin(_core._L, ptr, payload, options, journaled)
        except BaseException:
            leave()
            raise
        if loop is None:
            try:
                text = _host.run_blocking(_core._L, batch, handed, answers, parallel, limit, journaled)
            finally:
                del keep
                leave()
            return done(text)

        async def awaited() -> list[ToolResult]:
            try:
                text = await _host.run_async(_core._L, batch, handed, answers, parallel, limit, journaled)
            finally:
                leave()
            return done(text)

        return awaited()

    def _journaled(
        self,
        calls: list[ToolCall],
        approved: Any,
        parallel: bool,
        limit: int,
        timeout: float | None,
        deadline: float | None,
        run_id: str,
        loop: asyncio.AbstractEventLoop | None,
    ) -> Any:
        """Runs the calls under a journal's run id, through the core (never
        the fast paths, which the journal does not see)."""
        run = run_bytes(run_id)
        seen: set[str] = set()
        for call in calls:
            if call.id in seen:
                raise ValueError(f"call id {call.id!r} appears twice: a journal keys each call by its id")
            seen.add(call.id)
        if self._host_ok(calls, timeout, deadline):
            return self._run_host(calls, approved, parallel, limit, run, loop)
        if loop is not None or (len(calls) > 1 and threading.current_thread() is threading.main_thread()):
            # Without a loop: waits where Ctrl-C reaches it; the batch is then cancelled.
            return self._run_submitted(calls, approved, parallel, limit, timeout, loop, deadline, run)  # type: ignore[attr-defined]
        return self._run(calls, approved, parallel, limit, timeout, None, deadline, run)  # type: ignore[attr-defined]


async def _host_ready(value: Any) -> Any:
    return value
