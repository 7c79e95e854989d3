"""ToolRegistry's execution: execute, aexecute, their *_many forms and streams,
and the general path, through capstan (its fast paths: _registry_lone)."""

from __future__ import annotations

import asyncio
import ctypes
import inspect
import itertools
import threading
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any

from . import _batches, _callbacks, _json
from ._batches import _await_submission, _ready
from ._callbacks import _ABSENT, _Execution, _executions, _get_ident, _inline
from ._calls import ToolCall, ToolResult
from ._exec import _collect, _keys, _options, _payload
from ._lone import _failed, _now, _ok, _tool_function
from . import _registry_core
from . import _registry_lone
from ._registry_lone import _LoneExecutions, _sendable
from ._stream import Stream
from ._tick import Pending

_running_loop = asyncio._get_running_loop


_execution_tokens = itertools.count(1)
_c_uint32, _c_char_p = ctypes.c_uint32, ctypes.c_char_p

# The library's functions on the hot path, bound once it is loaded.
_L: Any = None
_execute: Any = None
_free: Any = None


def _library() -> Any:
    global _L, _execute, _free
    if _L is None:
        library = _registry_core._library()
        _execute, _free = library.registry_execute, library.string_free
        _registry_lone._library()
        _L = library
    return _L


class _Executions(_LoneExecutions):
    """ToolRegistry's execution of calls."""

    @staticmethod
    def _approves(call: ToolCall, approved: Any) -> bool:
        return approved is True or (not isinstance(approved, bool) and call.id in approved)

    def execute(
        self,
        call: ToolCall,
        *,
        approved: bool = False,
        timeout: float | None = None,
        deadline: float | None = None,
        run_id: str | None = None,
    ) -> ToolResult:
        """Run one call and return its result (blocking; async tools run on a
        private event loop thread). ``approved``: the call was approved, for
        tools that require approval. ``timeout`` overrides the tool's;
        ``deadline``: see :meth:`execute_many`; ``run_id``: the journal's
        run (see :meth:`set_journal`)."""
        if timeout is None and deadline is None and run_id is None and not self._hooked:
            lean = self._lean.get(call.name)
            if lean is not None and lean[0].plain:
                result = self._execute_lone(call, lean)
                if result is not None:
                    return result
        if run_id is not None:
            return self._journaled([call], approved, True, 8, timeout, deadline, run_id, None)[0]  # type: ignore[no-any-return]
        if timeout is None and deadline is None and not self._hooked:
            checked = self._check(call)
            if checked is not None:
                if type(checked) is ToolResult:  # counted by the core
                    return checked
                entry, args = checked
                if not entry.is_async:
                    return self._run_lone(call, entry, args)
        built = self._tools.get(call.name)
        if (
            built is not None
            and threading.current_thread() is threading.main_thread()
            and (built.requires_approval or (built.main_thread and threading.get_ident() not in self._pumped))
        ):
            # A call that waits for someone else (a pump on another thread,
            # an approver) waits where Ctrl-C reaches it; the call is then
            # cancelled. A thread that pumped runs its own main-thread calls
            # inside capstan_registry_execute instead.
            return self._run_submitted((call,), approved, True, 8, timeout, None, deadline)[0]  # type: ignore[no-any-return]
        return self._run((call,), approved, True, 8, timeout, None, deadline)[0]

    def _execute(
        self, key: bytes | list[bytes], execution: _Execution, payload: bytes, options: Any, by_id: bool = True
    ) -> str:
        """capstan_registry_execute: the results JSON text. Re-raises what a tool raised
        that is not an Exception (KeyboardInterrupt, SystemExit). ``by_id``
        False: a lone call that capstan runs on this thread (no timeout), whose
        execution the trampoline finds in ``_inline``."""
        out = ctypes.c_char_p()
        ptr = self._enter()
        thread = _get_ident()
        outer = _inline.get(thread, _ABSENT)
        _inline[thread] = execution if execution.single else None
        keys = key if isinstance(key, list) else [key]
        if by_id:
            for k in keys:
                _executions[k] = execution
        try:
            status = _execute(ptr, payload, len(payload), options, ctypes.byref(out), None)
            if status != 0:
                raise _L.error(status, "capstan_registry_execute failed")
            text = out.value.decode()  # type: ignore[union-attr]
            _free(out)
        finally:
            if by_id:
                for k in keys:
                    _executions.pop(k, None)
            if outer is _ABSENT:
                del _inline[thread]
            else:
                _inline[thread] = outer  # type: ignore[assignment]
            self._leave()
        if execution.raised is not None:
            raise execution.raised
        return text

    def execute_many(
        self,
        calls: Sequence[ToolCall],
        *,
        parallel: bool = True,
        limit: int = 8,
        timeout: float | None = None,
        approved: bool | Collection[str] = False,
        deadline: float | None = None,
        run_id: str | None = None,
    ) -> list[ToolResult]:
        """Run calls (in parallel on capstan's pool, at most ``limit`` at once,
        or one by one with ``parallel=False``); results in call order.
        ``approved``: True, or the ids of the approved calls. ``deadline``
        (seconds) bounds every call from now, waits included (for a free
        worker, the approver, a :meth:`pump`): a call without a result by
        then ends ``timeout``, saying what it waited for. ``run_id``: the
        journal's run (see :meth:`set_journal`); the calls' ids must differ.

        Calls of ``async def`` tools (without a timeout or a Context
        parameter) run all at once on one private event loop, handed out by
        a host batch (one thread hop for the batch), while the batch's sync
        tools run on capstan's pool.

        Calls of sync tools seen to run in under 100 us, with no
        approval gate, timeout, output cap or output schema, run one after
        the other on this thread instead (validated by capstan first, as a
        lone call of :meth:`execute` is), while no event hook, ``timeout``
        or ``deadline`` is set: the GIL would run them one at a time on the
        pool too, after a thread hop each. Once the tool is slow twice in a
        row, the rest of the batch goes to the pool."""
        calls = list(calls)
        if not calls:
            return []
        if limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        if run_id is not None:
            return self._journaled(calls, approved, parallel, limit, timeout, deadline, run_id, None)  # type: ignore[no-any-return]
        if timeout is None and deadline is None and not self._hooked and self._all_quick(calls):
            return self._run_inline(calls, approved, parallel, limit)
        if self._host_ok(calls, timeout, deadline):
            return self._run_host(calls, approved, parallel, limit, None, None)  # type: ignore[no-any-return]
        return self._run_general(calls, approved, parallel, limit, timeout, deadline)

    def _run_general(
        self,
        calls: list[ToolCall],
        approved: Any,
        parallel: bool,
        limit: int,
        timeout: float | None,
        deadline: float | None,
    ) -> list[ToolResult]:
        if len(calls) > 1 and threading.current_thread() is threading.main_thread():
            # Waits where Ctrl-C reaches it; the batch is then cancelled.
            return self._run_submitted(calls, approved, parallel, limit, timeout, None, deadline)  # type: ignore[no-any-return]
        return self._run(calls, approved, parallel, limit, timeout, None, deadline)

    def aexecute(
        self,
        call: ToolCall,
        *,
        approved: bool = False,
        timeout: float | None = None,
        deadline: float | None = None,
        run_id: str | None = None,
    ) -> Awaitable[ToolResult]:
        """:meth:`execute` for event loops: the loop stays free while sync
        tools run; ``async def`` tools run on this loop.

        Awaited at once, a call runs in the awaiting task. Called on a
        running loop for an ``async def`` tool, it returns a future (also
        a coroutine to ``asyncio.create_task``) whose call starts on the
        loop's next turn unless awaited before: the calls of one turn that
        are gathered (``asyncio.gather``, ``wait``, ``wait_for``) are
        checked by capstan together and run without a task each (see
        ``docs/python.md``, "Gathered calls")."""
        if run_id is None and timeout is None and deadline is None and not self._hooked:
            lean = self._lean.get(call.name)
            if lean is not None:
                entry = lean[0]
                if entry.is_async and not entry.suspends:
                    loop = _running_loop()
                    if loop is not None:
                        return Pending(self, call, loop)
        return self._aexecute(call, approved=approved, timeout=timeout, deadline=deadline, run_id=run_id)

    async def _aexecute(
        self,
        call: ToolCall,
        *,
        approved: bool = False,
        timeout: float | None = None,
        deadline: float | None = None,
        run_id: str | None = None,
    ) -> ToolResult:
        """:meth:`aexecute` as a coroutine: the lone call checked alone, an
        ``async def`` tool's coroutine awaited in the awaiting task."""
        if run_id is None and timeout is None and deadline is None and not self._hooked:
            checked = self._check(call)
            if checked is not None:
                if type(checked) is ToolResult:  # counted by the core
                    return checked
                entry, args = checked
                if entry.is_async:
                    # Awaited here: no coroutine of the binding's around the tool's.
                    started = _now()
                    try:
                        value = await _tool_function(call, entry, args)(**args)
                        result = _ok(call, value, started, self._max_result_bytes)
                    except Exception as exc:
                        result = _failed(call, exc, started)
                    return self._counted(result)
        return (await self.aexecute_many([call], approved=approved, timeout=timeout, deadline=deadline, run_id=run_id))[0]

    async def aexecute_many(
        self,
        calls: Sequence[ToolCall],
        *,
        parallel: bool = True,
        limit: int = 8,
        timeout: float | None = None,
        approved: bool | Collection[str] = False,
        deadline: float | None = None,
        run_id: str | None = None,
    ) -> list[ToolResult]:
        """:meth:`execute_many` for event loops. Sync tools run on capstan's
        pool (the loop stays free), ``async def`` tools on this loop (handed
        out by a host batch: checked in one crossing, answered in one, no
        thread hop). Cancelling the awaiting task cancels the calls not yet
        started and the coroutines of the async tools still running.
        ``run_id``: the journal's run (see :meth:`set_journal`).

        Example:
            >>> import asyncio
            >>> @tool
            ... def echo(text: str) -> str:
            ...     '''Echo text.'''
            ...     return text
            >>> registry = ToolRegistry([echo])
            >>> calls = [ToolCall(name="echo", arguments={"text": t}) for t in "ab"]
            >>> [r.content for r in asyncio.run(registry.aexecute_many(calls))]
            ['a', 'b']
        """
        calls = list(calls)
        if not calls:
            return []
        if limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        loop = asyncio.get_running_loop()
        if run_id is not None:
            return await self._journaled(calls, approved, parallel, limit, timeout, deadline, run_id, loop)  # type: ignore[no-any-return]
        if self._host_ok(calls, timeout, deadline):
            return await self._run_host(calls, approved, parallel, limit, None, loop)  # type: ignore[no-any-return]
        return await self._run_submitted(calls, approved, parallel, limit, timeout, loop, deadline)  # type: ignore[no-any-return]

    def _prepare(
        self, calls: Sequence[ToolCall], approved: Any, run: bytes | None = None
    ) -> tuple[str, list[Any], list[str], list[bytes], bool]:
        """(id prefix, results known without running, call JSON texts,
        approved call ids, whether every call to run names an inline-safe
        tool or none: see ``_run_submitted``). With a journal's ``run`` the
        calls go with their own ids (the journal's key), not ``<prefix>.<i>``."""
        prefix = f"py{next(_execution_tokens)}"
        tools = self._tools
        inline_safe = self._inline_safe
        results: list[Any] = [None] * len(calls)
        parts = []
        approved_ids = []
        all_inline = True
        for i, call in enumerate(calls):
            name = call.name
            found = tools.get(name)
            sent = f"{prefix}.{i}" if run is None else call.id
            if found is not None:
                if found.requires_approval and self._approves(call, approved):
                    approved_ids.append(sent.encode("utf-8", "backslashreplace"))
                if name not in inline_safe:
                    all_inline = False
            try:
                arguments = call.arguments
                if type(arguments) is str and not arguments.isascii():
                    arguments = _sendable(arguments)
                arguments = "{}" if arguments is None or arguments == {} else _json.dumps(arguments)
            except (TypeError, ValueError, RecursionError) as exc:
                results[i] = ToolResult(
                    call.id,
                    name,
                    f'Invalid arguments for tool "{name}": they cannot be sent as JSON ({exc}).',
                    True,
                    outcome="invalid_arguments",
                )
                continue
            quoted = f'"{name}"' if found is not None else _json.dumps(name)
            ident = f'"{sent}"' if run is None else _json.dumps(sent)
            parts.append(f'{{"id":{ident},"name":{quoted},"arguments":{arguments}}}')
        return prefix, results, parts, approved_ids, all_inline

    def _run(
        self,
        calls: Sequence[ToolCall],
        approved: Any,
        parallel: bool,
        limit: int,
        timeout: float | None,
        loop: asyncio.AbstractEventLoop | None,
        deadline: float | None = None,
        run: bytes | None = None,
    ) -> list[ToolResult]:
        """Runs the calls with capstan_registry_execute, waiting on this thread."""
        prefix, results, parts, approved_ids, _ = self._prepare(calls, approved, run)
        if not parts:
            return results
        payload = _payload(parts)
        options, keep = _options(parallel, limit, timeout, approved_ids, False, deadline, self._strict, 0, run)
        execution = _Execution(loop, timeout, len(parts) == 1 and run is None)
        execution.calls = calls if run is None else None
        if deadline is not None:
            execution.deadline = time.monotonic() + deadline
        keys = _keys(prefix, calls, run)
        text = self._execute(keys[0], execution, payload, options)
        del keep
        items = ((i["content"], i["outcome"], i["duration_us"]) for i in _json.loads(text))
        return _collect(calls, prefix, results, execution, items, keys[1])

    def _run_submitted(
        self,
        calls: Sequence[ToolCall],
        approved: Any,
        parallel: bool,
        limit: int,
        timeout: float | None,
        loop: asyncio.AbstractEventLoop | None,
        deadline: float | None = None,
        run: bytes | None = None,
    ) -> Any:
        """Runs the calls with capstan_batch_submit. With a loop: returns an
        awaitable of the results; without: waits on this thread, where
        Ctrl-C interrupts it (and cancels the batch), and returns them.

        Where the calls start, with a loop (aexecute*):

        - Inline (CAPSTAN_EXEC_START_INLINE) when every call to run names a
          parallel-safe tool (or no registered tool: capstan answers those
          itself), ``parallel`` is true and there are at most ``limit``
          calls. capstan_batch_submit then looks up and validates every call on
          this thread, the loop's, before it returns: an unknown tool or
          invalid arguments are answered there, with no thread hop. A valid
          call of an ``async def`` tool gets its coroutine's task on the
          running loop directly (the result callback runs there too); one of
          a sync tool runs on a worker thread (_callbacks._offload), so that
          it cannot block the loop.
        - Otherwise on capstan's pool, as without a loop (``async def``
          tools' coroutines still run on this loop, reached with
          call_soon_threadsafe): ``parallel=False`` and more calls than
          ``limit``, as an inline start runs every call at once; and tools
          that are not parallel-safe: capstan serializes a tool by making
          the starting thread wait, which inline would be the loop's.
        """
        prefix, results, parts, approved_ids, all_inline = self._prepare(calls, approved, run)
        if not parts:
            return results if loop is None else _ready(results)
        inline = loop is not None and all_inline and parallel and len(parts) <= (limit or 8)
        payload = _payload(parts)
        options, keep = _options(parallel, limit, timeout, approved_ids, inline, deadline, self._strict, 0, run)
        execution = _Execution(loop, timeout, False)  # found by call id
        execution.calls = calls if run is None else None
        registered, keys = _keys(prefix, calls, run)
        if deadline is not None:
            execution.deadline = time.monotonic() + deadline
        if inline:
            execution.direct = []
        submission = _batches.Submission(len(parts), loop)
        ptr = self._enter()
        for key in registered:
            _executions[key] = execution
        thread = _get_ident()
        outer = _inline.get(thread, _ABSENT)
        _inline[thread] = None  # not the lone call of an enclosing execute: by call id
        try:
            batch = _batches.submit(_L, ptr, payload, options, submission, inline)
        except BaseException:
            for key in registered:
                _executions.pop(key, None)
            self._leave()
            for coro in execution.direct or ():
                coro.close()
            raise
        finally:
            direct, execution.direct = execution.direct, None
            if outer is _ABSENT:
                del _inline[thread]
            else:
                _inline[thread] = outer  # type: ignore[assignment]
        # Coroutines started inline: the awaiting task runs the last one
        # itself (no task, no loop iteration for a lone call), the others
        # as tasks of their own, so that they run concurrently.
        here = None
        if direct:
            here = direct.pop()
            for coro in direct:
                _callbacks._spawn(loop, coro, execution)  # type: ignore[arg-type]

        def settle(cancel: bool) -> list[ToolResult]:
            nonlocal keep
            try:
                _batches.release(_L, batch, submission, cancel)
                if cancel:
                    execution.cancel_tasks()
            finally:
                for key in registered:
                    _executions.pop(key, None)
                self._leave()
                keep = None
            if execution.raised is not None:
                raise execution.raised
            lost = ("Cancelled: the result was lost.", "cancelled", 0)
            return _collect(calls, prefix, results, execution, (item or lost for item in submission.items), keys)

        if loop is not None:
            return _await_submission(submission, settle, here)
        try:
            submission.event.wait()  # type: ignore[union-attr]
        except BaseException:
            settle(True)
            raise
        return settle(False)

    def stream(
        self,
        style: str,
        *,
        early_dispatch: bool = False,
        on_text: Callable[[str], Any] | None = None,
        timeout: float | None = None,
        limit: int = 0,
    ) -> Stream:
        """A :class:`Stream` reading a streamed response in ``style``
        (``"openai_chat"``, ``"openai_responses"``, ``"anthropic"``,
        ``"gemini"``): ``feed`` it the bytes as they arrive, ``finish`` it
        for a :class:`StreamTurn`. ``early_dispatch``: start each call as
        soon as its arguments are complete; ``on_text``: gets the text
        deltas; ``timeout`` overrides every tool's; ``limit``: calls at once
        (0: 8)."""
        return Stream(self, style, early_dispatch=early_dispatch, on_text=on_text, timeout=timeout, limit=limit)


# aexecute returns an awaitable (a coroutine or a Pending): to asyncio and
# inspect it is a coroutine function still, as when it was one.
_aexecute_fn: Any = _Executions.aexecute
if hasattr(inspect, "markcoroutinefunction"):  # Python 3.12+
    inspect.markcoroutinefunction(_aexecute_fn)
if hasattr(asyncio.coroutines, "_is_coroutine"):  # asyncio.iscoroutinefunction, before 3.14
    _aexecute_fn._is_coroutine = asyncio.coroutines._is_coroutine
