"""ToolRegistry's execution: execute, aexecute, their *_many forms and streams;
the lone call's fast path, inline runs and submitted batches."""

from __future__ import annotations

import asyncio
import ctypes
import itertools
import threading
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any

from . import _batches, _callbacks, _json, _lib
from ._batches import _await_submission, _ready
from ._callbacks import _ABSENT, _Execution, _executions, _get_ident, _inline
from ._calls import ToolCall, ToolResult
from ._errors import RegistryClosedError
from ._exec import _collect, _keys, _options, _payload
from ._json import _scan
from ._lone import _failed, _now, _ok, _run_here, _tool_function
from . import _registry_core
from ._registry_core import _advance
from ._registry_host import _HostExecutions
from ._stream import Stream


_execution_tokens = itertools.count(1)
_c_uint32, _c_char_p = ctypes.c_uint32, ctypes.c_char_p

# The library's functions on the hot path, bound once it is loaded.
_L: Any = None
_execute: Any = None
_free: Any = None
_check_call: Any = None
_check_calls: Any = None


def _library() -> Any:
    global _L, _execute, _free, _check_call, _check_calls
    if _L is None:
        library = _registry_core._library()
        _execute, _free, _check_call = library.registry_execute, library.string_free, library.registry_check_call
        _check_calls = library.registry_check_calls
        _L = library
    return _L


class _Executions(_HostExecutions):
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
        if run_id is not None:
            return self._journaled([call], approved, True, 8, timeout, deadline, run_id, None)[0]  # type: ignore[no-any-return]
        if timeout is None and deadline is None and not self._hooked:
            checked = self._check(call)
            if checked is not None:
                if type(checked) is ToolResult:  # counted by the core
                    return checked
                entry, args = checked
                if not entry.is_async:
                    return self._counted(_run_here(call, entry, args, self._max_result_bytes))
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

    def _counted(self, result: ToolResult) -> ToolResult:
        """Counts a lone call the fast path ran for :meth:`stats` (the core
        counted those it answered without running)."""
        key = (result.name, result.outcome)
        counter = self._lone.get(key)
        if counter is None:
            counter = self._lone.setdefault(key, itertools.count())
        next(counter)
        return result

    def _check(self, call: ToolCall) -> Any:
        """The lone-call fast path: capstan_registry_check_call validates the call on
        this thread (no callback, thread or timer), and the binding runs the
        tool itself. For tools without approval, timeout or output cap (and
        unknown names): returns the result of a call that cannot run, or
        (entry, validated arguments); None when the general path must run it."""
        name = call.name
        lean = self._lean.get(name)
        if lean is None:
            if name in self._tools:
                return None
            entry, name_bytes = None, name.encode("utf-8", "backslashreplace")
        else:
            entry, name_bytes = lean
        arguments = call.arguments
        kind = type(arguments)
        if kind is str:
            encoded = arguments.encode("utf-8", "backslashreplace")  # type: ignore[union-attr]
        elif kind is dict:
            try:
                encoded = (_json.dumps(arguments) if arguments else "{}").encode()
            except (TypeError, ValueError, RecursionError):
                return None
        else:
            return None
        outcome = _c_uint32()
        out = _c_char_p()
        next(self._entered)
        try:
            ptr = self._ptr
            if ptr is None or self._closing:
                raise RegistryClosedError("the tool registry is closed", "CAPSTAN_ERR_SHUTTING_DOWN")
            status = _check_call(
                ptr, name_bytes, len(name_bytes), encoded, len(encoded), self._check_flags, outcome, out, None
            )
            if status != 0:
                raise _L.error(status, "capstan_registry_check_call failed")
        finally:
            next(self._left)  # self._leave(), inline
            if self._closing:
                self._free_when_idle()
        text = out.value.decode()  # type: ignore[union-attr]
        _free(out)
        if outcome.value:
            return ToolResult(call.id, name, text, True, None, _lib.OUTCOMES[outcome.value], 0)
        if entry is None:  # registered meanwhile: the general path
            return None
        return entry, (_scan(text, 0)[0] if text != "{}" else {})

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

    def _all_quick(self, calls: list[ToolCall]) -> bool:
        """Whether every call names a quick lean tool, or a name capstan
        answers itself (an unknown tool; a core tool such as the search
        tool or a mounted one goes to the general path from that call on)."""
        lean, tools = self._lean, self._tools
        for call in calls:
            found = lean.get(call.name)
            if found is None:
                if call.name in tools:
                    return False
            elif not found[0].quick:
                return False
        return True

    def _run_inline(self, calls: list[ToolCall], approved: Any, parallel: bool, limit: int) -> list[ToolResult]:
        """Runs quick calls here, each as the lone-call fast path does, all
        checked by capstan in one crossing (capstan_registry_check_calls);
        from a call that cannot take that path or ran slow, the rest goes to
        the general path."""
        checked = self._check_all(calls)
        if checked is None:
            return self._run_each(calls, approved, parallel, limit)
        results: list[ToolResult] = []
        append, lean, bound = results.append, self._lean, self._max_result_bytes
        now, observe, quick_ns = _now, _callbacks.observe, _callbacks.QUICK_NS
        tally: dict[tuple[str, str], int] = {}
        for call, (outcome, found) in zip(calls, checked):
            if outcome != "ok":  # found is the text; counted by the core
                append(ToolResult(call.id, call.name, found, True, None, outcome, 0))
                continue
            lean_entry = lean.get(call.name)
            if lean_entry is None:  # registered or replaced meanwhile
                break
            entry = lean_entry[0]
            if entry.plain:  # _run_here, inlined for the commonest results
                started = now()
                try:
                    value = entry.fn(**found)
                except Exception as exc:
                    observe(entry, started)
                    result = _failed(call, exc, started)
                else:
                    ended = now()
                    if ended - started < quick_ns:  # observe(), inlined
                        entry.quick, entry.strikes = True, 0
                    else:
                        observe(entry, started)
                    kind = type(value)
                    if kind is int or kind is str:  # _ok() renders these so
                        content = value if kind is str else int.__repr__(value)
                        if not content.isascii():
                            content = content.encode("utf-8", "backslashreplace").decode()
                        result = ToolResult(call.id, call.name, content, False, value, "ok", (ended - started) // 1000)
                    else:
                        try:
                            result = _ok(call, value, started, bound)
                        except Exception as exc:
                            result = _failed(call, exc, started)
            else:
                result = _run_here(call, entry, found, bound)
            append(result)
            key = (call.name, result.outcome)
            tally[key] = tally.get(key, 0) + 1
            if not entry.quick:  # slow twice in a row: the pool from here
                break
        self._count_lone(tally)
        done = len(results)
        if done == len(calls):
            return results
        # The rest: those capstan answered keep their answer (counted once);
        # the others run on the general path.
        rest = [i for i in range(done, len(calls)) if checked[i][0] == "ok"]
        ran = self._run_general([calls[i] for i in rest], approved, parallel, limit, None, None) if rest else []
        tail: list[Any] = [None] * (len(calls) - done)
        for i, result in zip(rest, ran):
            tail[i - done] = result
        for i in range(done, len(calls)):
            if tail[i - done] is None:
                (outcome, text), call = checked[i], calls[i]
                tail[i - done] = ToolResult(call.id, call.name, text, True, None, outcome, 0)
        return results + tail

    def _check_all(self, calls: list[ToolCall]) -> list[list[Any]] | None:
        """capstan_registry_check_calls over ``calls``: per call
        ``["ok", arguments]`` or ``[outcome, text]``; None when a call's
        arguments cannot be sent as they are (the per-call path says
        which)."""
        lean = self._lean
        parts: list[str] = []
        append = parts.append
        encode_str, dumps = _json._encode_str, _json.dumps
        try:
            for call in calls:
                name = call.name
                # A registered name is [A-Za-z0-9_-]: nothing to escape.
                quoted = f'"{name}"' if name in lean else dumps(name)
                arguments = call.arguments
                if type(arguments) is str:
                    encoded = encode_str(arguments if arguments.isascii() else _sendable(arguments))
                elif type(arguments) is dict:
                    encoded = dumps(arguments) if arguments else "{}"
                else:
                    return None
                append(f'{{"name":{quoted},"arguments":{encoded}}}')
        except (TypeError, ValueError, RecursionError):
            return None
        payload = ("[" + ",".join(parts) + "]").encode()
        out = _c_char_p()
        ptr = self._enter()
        try:
            status = _check_calls(ptr, payload, len(payload), self._check_flags, out, None)
        finally:
            self._leave()
        if status != 0:  # e.g. a lone surrogate in a name: the per-call path
            return None
        text = out.value.decode()  # type: ignore[union-attr]
        _free(out)
        checked: list[list[Any]] = _scan(text, 0)[0]
        return checked

    def _count_lone(self, tally: dict[tuple[str, str], int]) -> None:
        """Adds the lone calls of a batch, by (tool, outcome), for :meth:`stats`."""
        for key, n in tally.items():
            counter = self._lone.get(key)
            if counter is None:
                counter = self._lone.setdefault(key, itertools.count())
            _advance(counter, n)

    def _run_each(self, calls: list[ToolCall], approved: Any, parallel: bool, limit: int) -> list[ToolResult]:
        """:meth:`_run_inline` one call at a time (capstan_registry_check_call
        each), for a batch whose payload cannot be sent whole."""
        results: list[ToolResult] = []
        append, check, counted = results.append, self._check, self._counted
        bound = self._max_result_bytes
        for call in calls:
            checked = check(call)
            if checked is None:
                break
            if type(checked) is ToolResult:  # invalid arguments: counted by the core
                append(checked)
                continue
            entry, args = checked
            append(counted(_run_here(call, entry, args, bound)))
            if not entry.quick:  # slow twice in a row: the pool from here
                break
        else:
            return results
        rest = calls[len(results):]
        if rest:
            results += self._run_general(rest, approved, parallel, limit, None, None)
        return results

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

    async def aexecute(
        self,
        call: ToolCall,
        *,
        approved: bool = False,
        timeout: float | None = None,
        deadline: float | None = None,
        run_id: str | None = None,
    ) -> ToolResult:
        """:meth:`execute` for event loops: the loop stays free while sync
        tools run; ``async def`` tools run on this loop."""
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


def _sendable(arguments: str) -> str:
    """Arguments text as the lone call sends it (``_check``): a lone surrogate,
    which UTF-8 cannot hold, as its backslash escape, for capstan's parser to
    refuse in this call alone (as JSON-string text it would make the whole
    batch's JSON invalid)."""
    return arguments.encode("utf-8", "backslashreplace").decode()

