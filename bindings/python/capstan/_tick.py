"""``aexecute`` of an ``async def`` tool's lone call on a running event loop:
the calls gathered in one turn of the loop checked by capstan together, in
one crossing, and run without a task each.

``aexecute`` then returns a :class:`Pending`, a future of the call's result
that is also awaitable as the coroutine it used to be, and starts nothing:

- awaited (``await registry.aexecute(call)``) or made a task of
  (``asyncio.create_task``, a task group's: a Pending is also a coroutine,
  ``send``/``throw``/``close``), it runs in that task as aexecute's
  coroutine did: checked alone (capstan_registry_check_call), the tool's
  coroutine awaited there;
- given to what takes a future as it is (``asyncio.gather``, ``wait``,
  ``wait_for``, where a coroutine would cost a task each), it joins the
  calls of its registry gathered in this turn, copying the context then
  (as the task gather would have made copied it). One callback of the
  next turn checks them all (capstan_registry_check_calls) and one task,
  the carrier, steps each call's coroutine in turn, in the call's context.
  A coroutine that returns without suspending (a quick tool) needs nothing
  more. The first one that suspends keeps the carrier, which drives it to
  its end (so that ``asyncio.current_task()``, a timeout or a cancellation
  entered in its first step concern the task that runs it); the calls
  after it go on in another carrier, and those of a tool seen to suspend
  each in a task of its own, as later lone calls of that tool do (aexecute
  gives them the coroutine path).

Cancelling a Pending (gather does, when it is cancelled) cancels its call:
one not started never runs; a running one gets CancelledError in its
coroutine, and the Pending ends as the coroutine does, as a task would.
A Pending never awaited nor gathered never runs, as a coroutine never
awaited.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
from typing import Any

from ._calls import ToolCall, ToolResult
from ._host import _Resumed
from ._json import _scan
from ._lone import _failed, _now, _ok, _tool_function

_QUEUED, _WAITING, _TAKEN, _FLUSHED, _RUNNING, _OFF = range(6)
_future_init = asyncio.Future.__init__
_future_add = asyncio.Future.add_done_callback
_future_await = asyncio.Future.__await__
_future_cancel = asyncio.Future.cancel
_copy_context = contextvars.copy_context
try:  # asyncio.current_task is Python code before 3.12, a dict read underneath
    from asyncio.tasks import _current_tasks  # type: ignore[attr-defined]

    _current_task: Any = _current_tasks.get
except ImportError:  # pragma: no cover - a Python without it
    _current_task = asyncio.current_task
_new_result = ToolResult.__new__


class Pending(asyncio.Future):  # type: ignore[type-arg]
    """The result of one ``aexecute`` (see the module's text)."""

    __slots__ = ("_registry", "_call", "_context", "_phase", "_driver", "_steps")

    def __init__(self, registry: Any, call: ToolCall, loop: asyncio.AbstractEventLoop) -> None:
        _future_init(self, loop=loop)
        self._registry, self._call, self._phase = registry, call, _QUEUED
        self._driver: Any = None  # the task that runs the call, while one does
        self._steps: Any = None  # this awaitable's iterator, when a task runs it as a coroutine
        self._context: Any = None  # copied when it joins a turn's calls, as a task copies it

    def add_done_callback(self, fn: Any, *, context: Any = None) -> None:
        """What gather, wait and wait_for call on a future: the call joins
        those its registry checks on the loop's next turn."""
        if self._phase is not _QUEUED:
            _future_add(self, fn, context=context)
            return
        registry, loop, here = self._registry, self._loop, _copy_context()
        waiting = registry._ticks.get(loop)
        if waiting is None:
            waiting = registry._ticks[loop] = [here]
            loop.call_soon(_flush, registry, loop, context=here)
        elif here == waiting[0]:  # unchanged since the last call: one copy kept for all
            here = waiting[0]
        else:
            waiting[0] = here
        self._phase, self._context = _WAITING, here
        waiting.append(self)
        _future_add(self, fn, context=context)

    def __await__(self) -> Any:
        if self._phase is not _QUEUED:
            return (yield from _future_await(self))
        # Awaited before it joined a turn's calls: runs here, as aexecute's
        # coroutine ran (ToolRegistry._aexecute), checked alone.
        self._phase = _TAKEN
        registry, call = self._registry, self._call
        self._driver = _current_task(self._loop)
        try:
            checked = registry._check(call)
            if checked is None:  # replaced meanwhile: the general path
                result = yield from registry._aexecute(call).__await__()
            elif type(checked) is ToolResult:  # counted by the core
                result = checked
            else:
                entry, args = checked
                started = _now()
                try:
                    coro = (entry.fn if entry.direct else _tool_function(call, entry, args))(**args)
                    result = _ok(call, (yield from coro.__await__()), started, registry._max_result_bytes)
                except Exception as exc:
                    result = _failed(call, exc, started)
                registry._counted(result)
        except asyncio.CancelledError:
            _future_cancel(self)
            raise
        except BaseException as exc:
            if not self.done():
                self.set_exception(exc)
                self._log_traceback = False  # raised to the awaiting task; nobody else need read it
            raise
        finally:
            self._driver = None
        if not self.done():
            self.set_result(result)
        return result

    __iter__ = __await__

    # A coroutine's methods, for asyncio.create_task and task groups.
    def send(self, value: Any) -> Any:
        if self._steps is None:
            self._steps = self.__await__()
        return self._steps.send(value)

    def throw(self, *exc: Any) -> Any:
        if self._steps is None:
            self._steps = self.__await__()
        return self._steps.throw(*exc)

    def close(self) -> None:
        if self._steps is not None:
            self._steps.close()

    def cancel(self, msg: Any = None) -> bool:
        """Cancels the call: one not started never runs; a running one's
        coroutine gets CancelledError, and this future ends as it does."""
        if self.done():
            return False
        driver = self._driver
        if driver is not None:
            return driver.cancel(msg) or _future_cancel(self, msg)
        self._phase = _OFF
        return _future_cancel(self, msg)


def _flush(registry: Any, loop: asyncio.AbstractEventLoop) -> None:
    """The loop's next turn: every call queued since the last, checked in
    one crossing, then run by a carrier task."""
    waiting = registry._ticks.pop(loop, ())  # the last context copied, then the calls
    calls = [p for p in waiting[1:] if p._phase is _WAITING]
    if not calls:
        return
    for p in calls:
        p._phase = _FLUSHED
    checked = None
    if not registry._hooked:  # an event hook set since: each call through capstan
        try:
            checked = registry._check_all_text([p._call for p in calls])
        except Exception as exc:  # the registry closed meanwhile
            for p in calls:
                p.set_exception(exc)
            return
    if checked is None:  # arguments the batch cannot send: each call alone, as before
        for p in calls:
            _aside(p)
        return
    loop.create_task(_carry(registry, iter(calls), _pairs(checked)))


def _pairs(text: str) -> Any:
    """The checked calls' pairs, read from capstan's compact JSON array one
    at a time: each pair and its arguments live only while their call
    starts, not all of them until the last starts (fewer objects kept
    across the collector's passes)."""
    if text == "[]":
        return
    end = 0
    while text[end] != "]":
        pair, end = _scan(text, end + 1)
        yield pair


def _aside(p: Pending) -> None:
    """Runs the call as ``aexecute`` did before, in a task of its own."""
    task = p._context.run(p.get_loop().create_task, p._registry._aexecute(p._call))
    p._phase, p._driver = _RUNNING, task
    task.add_done_callback(lambda done: _follow(p, done))


def _follow(p: Pending, task: asyncio.Task) -> None:  # type: ignore[type-arg]
    p._driver = None
    if p.done():
        return
    if task.cancelled():
        _future_cancel(p)
        return
    exc = task.exception()
    if exc is not None:
        p.set_exception(exc)
    else:
        p.set_result(task.result())


async def _carry(registry: Any, calls: Any, checked: Any) -> None:
    """Steps each call's coroutine (``calls`` and their ``checked`` pairs,
    iterators); the first that suspends keeps this task, the rest go on in
    another."""
    lean = registry._lean
    quick = 0
    # A cancellation of this task asked for during a call's step came from
    # that call (asyncio.current_task().cancel(), the task it would have had
    # to itself): that call ends cancelled, as its task would have, and the
    # calls left go on in another carrier (Python 3.11+, Task.cancelling;
    # before, they are cancelled with this task).
    me = asyncio.current_task()
    cancelling = getattr(me, "cancelling", None)
    for p in calls:
        outcome, found = next(checked)
        if p._phase is not _FLUSHED:  # cancelled meanwhile
            continue
        call = p._call
        if outcome != "ok":  # counted by the core
            p.set_result(ToolResult(call.id, call.name, found, True, None, outcome, 0))
            continue
        entry = lean.get(call.name, (None,))[0]
        if entry is None or not entry.is_async:  # replaced meanwhile
            _aside(p)
            continue
        if entry.suspends:  # seen to suspend (in this turn too): a task of its own
            task = p._context.run(p.get_loop().create_task, _own(registry, p, entry, found))
            p._phase, p._driver = _RUNNING, task
            continue
        quick += 1
        if not quick & 127:  # the loop runs the callbacks of the results set so far
            try:
                await asyncio.sleep(0)
            except asyncio.CancelledError:  # this task cancelled (the loop closing): so are the calls left
                for rest in (p, *calls):
                    if not rest.done():
                        _future_cancel(rest)
                raise
            if p._phase is not _FLUSHED:
                continue
        started = _now()
        context = p._context.copy()  # its own: what the tool sets stays its own
        try:
            coro = (entry.fn if entry.direct else _tool_function(call, entry, found))(**found)
            first = context.run(coro.send, None)
        except StopIteration as stop:
            p._context = None  # not kept to the gather's end
            if cancelling is not None and cancelling():
                _future_cancel(p)
                p.get_loop().create_task(_carry(registry, calls, checked))
                return
            value = stop.value
            kind = type(value)
            if kind is int or (kind is str and value.isascii()):  # as _ok() renders them
                result = _new_result(ToolResult)  # ToolResult(...) without its __init__'s frame
                result.call_id, result.name, result.is_error, result.data = call.id, call.name, False, value
                result.content = value if kind is str else int.__repr__(value)
                result.outcome, result.duration_us, result.error = "ok", (_now() - started) // 1000, None
                counter = entry.ok_count
                if counter is None:
                    counter = entry.ok_count = registry._lone.setdefault((call.name, "ok"), itertools.count())
                next(counter)
                p.set_result(result)
            else:
                p.set_result(_ended(registry, call, value, started))
            continue
        except asyncio.CancelledError:  # raised by the tool itself: the caller's, as before
            _future_cancel(p)
            if cancelling is not None and cancelling():
                p.get_loop().create_task(_carry(registry, calls, checked))
                return
            continue
        except Exception as exc:
            if cancelling is not None and cancelling():
                _future_cancel(p)
                p.get_loop().create_task(_carry(registry, calls, checked))
                return
            p.set_result(registry._counted(_failed(call, exc, started)))
            continue
        except BaseException as exc:  # KeyboardInterrupt, SystemExit: out of the loop, as a task's
            p.set_exception(exc)
            p.get_loop().create_task(_carry(registry, calls, checked))
            raise
        # Suspended: this task is the coroutine's from here on.
        entry.suspends = True
        p._phase, p._driver = _RUNNING, asyncio.current_task()
        p.get_loop().create_task(_carry(registry, calls, checked))
        try:
            value = await _Resumed(coro, first, context)
        except asyncio.CancelledError:
            p._driver = None
            _future_cancel(p)
            return
        except Exception as exc:
            p._driver = None
            if not p.done():
                p.set_result(registry._counted(_failed(call, exc, started)))
            return
        except BaseException as exc:
            p._driver = None
            if not p.done():
                p.set_exception(exc)
            raise
        p._driver = None
        if not p.done():
            p.set_result(_ended(registry, call, value, started))
        return


async def _own(registry: Any, p: Pending, entry: Any, args: dict[str, Any]) -> None:
    """Runs a checked call of a tool that suspends, in a task of its own."""
    call = p._call
    started = _now()
    try:
        value = await (entry.fn if entry.direct else _tool_function(call, entry, args))(**args)
    except asyncio.CancelledError:
        p._driver = None
        _future_cancel(p)
        raise
    except Exception as exc:
        result = registry._counted(_failed(call, exc, started))
    except BaseException as exc:  # KeyboardInterrupt, SystemExit: out of the loop, as a task's
        p._driver = None
        if not p.done():
            p.set_exception(exc)
        raise
    else:
        result = _ended(registry, call, value, started)
    p._driver = None
    if not p.done():
        p.set_result(result)


def _ended(registry: Any, call: ToolCall, value: Any, started: int) -> ToolResult:
    try:
        result = _ok(call, value, started, registry._max_result_bytes)
    except Exception as exc:
        result = _failed(call, exc, started)
    return registry._counted(result)  # type: ignore[no-any-return]
