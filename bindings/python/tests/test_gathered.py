"""aexecute calls gathered in one turn of the loop (capstan/_tick.py): checked
together, run without a task each, and answering, failing and cancelling
each as a lone awaited call does."""

import asyncio
import contextvars
import inspect
import sys

import pytest

from capstan import ToolCall, ToolRegistry, tool
from capstan._errors import RegistryClosedError

request = contextvars.ContextVar("request", default="none")


def test_gathered_calls_answer_as_awaited_ones_do_in_call_order():
    @tool
    async def echo(text: str, times: int = 1) -> str:
        """Repeat text."""
        return text * times

    @tool
    async def refuse(text: str) -> str:
        """Fail."""
        raise ValueError(f"no {text}")

    @tool
    def upper(text: str) -> str:
        """Upper-case text (a sync tool: the coroutine path)."""
        return text.upper()

    calls = [
        ToolCall("echo", {"text": "ab"}),
        ToolCall("echo", '{"text": "Zürich", "times": 2}'),
        ToolCall("refuse", {"text": "way"}),
        ToolCall("echo", {"text": 3}),
        ToolCall("echo", "{not json"),
        ToolCall("ecko", {"text": "a"}),
        ToolCall("upper", {"text": "x"}),
        ToolCall("echo", {"times": 1}),
    ]

    def key(r):
        return (r.call_id, r.name, r.content, r.is_error, r.data, r.outcome, type(r.error))

    async def main():
        with ToolRegistry([echo, refuse, upper]) as registry:
            awaited = [await registry.aexecute(c) for c in calls]
            gathered = await asyncio.gather(*(registry.aexecute(c) for c in calls))
            stats = registry.stats()
        return awaited, gathered, stats

    awaited, gathered, stats = asyncio.run(main())
    assert [key(r) for r in gathered] == [key(r) for r in awaited]
    assert [r.outcome for r in gathered] == ["ok", "ok", "tool_error", "invalid_arguments", "invalid_arguments",
                                             "unknown_tool", "ok", "invalid_arguments"]
    assert gathered[2].content == "ValueError: no way" and isinstance(gathered[2].error, ValueError)
    # Counted once each, whichever path ran them.
    counted = {k: v for k, v in stats["echo"]["outcomes"].items() if v}
    assert counted == {"ok": 4, "invalid_arguments": 6}


def test_the_quick_calls_of_one_turn_are_checked_in_one_crossing_and_share_one_task():
    tasks = []

    @tool
    async def mark(i: int) -> int:
        """Note the task."""
        tasks.append(asyncio.current_task())
        return i

    async def main():
        with ToolRegistry([mark]) as registry:
            crossings = []
            check_all, check = registry._check_all_text, registry._check
            registry._check_all_text = lambda calls: crossings.append(len(calls)) or check_all(calls)
            registry._check = lambda call: crossings.append(1) or check(call)
            results = await asyncio.gather(*(registry.aexecute(ToolCall("mark", {"i": i})) for i in range(300)))
            return results, crossings

    results, crossings = asyncio.run(main())
    assert [r.data for r in results] == list(range(300))
    assert crossings == [300]
    assert len(tasks) == 300 and len(set(tasks)) == 1 and tasks[0] is not None


def test_one_failing_call_among_many_fails_alone():
    @tool
    async def pick(i: int) -> int:
        """Fail on 7."""
        if i == 7:
            raise KeyError("seven")
        return i

    async def main():
        with ToolRegistry([pick]) as registry:
            return await asyncio.gather(*(registry.aexecute(ToolCall("pick", {"i": i})) for i in range(20)))

    results = asyncio.run(main())
    assert [r.outcome for r in results] == ["ok"] * 7 + ["tool_error"] + ["ok"] * 12
    assert results[7].content == "KeyError: 'seven'" and [r.data for r in results[8:]] == list(range(8, 20))


def _hanging(stopped):
    """A tool that waits until cancelled, noting each call that was."""

    @tool
    async def hang(i: int) -> int:
        """Wait until cancelled."""
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            stopped.append(i)
            raise
        return i

    return hang


def test_a_cancelled_caller_is_cancelled_alone():
    ran = []
    stopped = []

    @tool
    async def step(i: int) -> int:
        """Note the call."""
        ran.append(i)
        return i

    hang = _hanging(stopped)

    async def caller(registry, name, i):
        (result,) = await asyncio.gather(registry.aexecute(ToolCall(name, {"i": i})))
        return result.data

    async def main():
        with ToolRegistry([step, hang]) as registry:
            # Cancelled before its call started: the call never runs; the others do.
            callers = [asyncio.create_task(caller(registry, "step", i)) for i in range(3)]
            await asyncio.sleep(0)  # each caller has gathered its call
            callers[1].cancel()
            first = await asyncio.gather(*callers, return_exceptions=True)
            # Cancelled while its call runs (the first and a later turn's):
            # the tool's coroutine gets CancelledError; the others end.
            later = []
            for turn in range(2):
                callers = [
                    asyncio.create_task(caller(registry, "hang", turn)),
                    asyncio.create_task(caller(registry, "step", 10 + turn)),
                ]
                await asyncio.sleep(0.05)
                callers[0].cancel()
                later.append(await asyncio.gather(*callers, return_exceptions=True))
                assert stopped == list(range(turn + 1))  # stopped by then, not when the loop closes
            # A whole gather cancelled: every call of it.
            pending = [registry.aexecute(ToolCall("hang", {"i": 5 + i})) for i in range(2)]
            outer = asyncio.gather(*pending)
            await asyncio.sleep(0.05)
            outer.cancel()
            with pytest.raises(asyncio.CancelledError):
                await outer
            assert sorted(stopped) == [0, 1, 5, 6]
            return first, later

    first, later = asyncio.run(main())
    assert first[0] == 0 and isinstance(first[1], asyncio.CancelledError) and first[2] == 2
    for turn, (cancelled, done) in enumerate(later):
        assert isinstance(cancelled, asyncio.CancelledError) and done == 10 + turn
    assert ran == [0, 2, 10, 11] and sorted(stopped) == [0, 1, 5, 6]


def test_calls_of_two_registries_or_with_options_in_one_turn_are_not_merged():
    @tool(name="size")
    async def size_int(n: int) -> str:
        """An integer."""
        return f"int {n}"

    @tool(name="size")
    async def size_str(n: str) -> str:
        """A string."""
        return f"str {n}"

    @tool
    async def slow() -> str:
        """Too slow."""
        await asyncio.sleep(5)
        return "late"

    async def main():
        with ToolRegistry([size_int, slow]) as a, ToolRegistry([size_str]) as b:
            return await asyncio.gather(
                a.aexecute(ToolCall("size", {"n": 1})),
                b.aexecute(ToolCall("size", {"n": 1})),
                b.aexecute(ToolCall("size", {"n": "x"})),
                a.aexecute(ToolCall("slow"), timeout=0.05),
                a.aexecute(ToolCall("size", {"n": 2})),
            )

    results = asyncio.run(main())
    assert [r.outcome for r in results] == ["ok", "invalid_arguments", "ok", "timeout", "ok"]
    assert [results[0].data, results[2].data, results[4].data] == ["int 1", "str x", "int 2"]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.timeout is 3.11's")
def test_a_tool_that_suspends_runs_in_a_task_of_its_own_with_its_timeout():
    seen = []

    @tool
    async def wait(i: int, seconds: float) -> int:
        """Wait, at most 50 ms."""
        async with asyncio.timeout(0.05):
            await asyncio.sleep(seconds)
        seen.append((i, id(asyncio.current_task())))
        return i

    async def main():
        with ToolRegistry([wait]) as registry:
            calls = [ToolCall("wait", {"i": i, "seconds": 5 if i == 1 else 0.001}) for i in range(4)]
            return await asyncio.gather(*(registry.aexecute(c) for c in calls))

    results = asyncio.run(main())
    assert [r.outcome for r in results] == ["ok", "tool_error", "ok", "ok"]
    assert results[1].content.startswith("TimeoutError")
    assert sorted(i for i, _ in seen) == [0, 2, 3] and len({task for _, task in seen}) == 3


def test_each_call_runs_in_the_context_of_the_task_that_gathered_it():
    @tool
    async def who() -> str:
        """The request var, then set it."""
        found = request.get()
        request.set("changed by a tool")
        return found

    async def one(registry, name):
        request.set(name)
        (result,) = await asyncio.gather(registry.aexecute(ToolCall("who")))
        return result.data, request.get()

    async def main():
        with ToolRegistry([who]) as registry:
            request.set("main")
            found = await asyncio.gather(*(one(registry, f"r{i}") for i in range(3)))
            return found, request.get()

    async def one_task():
        with ToolRegistry([who]) as registry:
            request.set("a")
            first = asyncio.gather(registry.aexecute(ToolCall("who")), registry.aexecute(ToolCall("who")))
            request.set("b")
            second = asyncio.gather(registry.aexecute(ToolCall("who")))
            return [r.data for r in await first + await second]

    found, after = asyncio.run(main())
    # Each tool saw its caller's value, and its own change stayed its own.
    assert found == [("r0", "r0"), ("r1", "r1"), ("r2", "r2")] and after == "main"
    # In one task: the value when each was gathered.
    assert asyncio.run(one_task()) == ["a", "a", "b"]


def test_an_awaited_call_runs_in_the_awaiting_task_and_tasks_take_the_call_too():
    @tool
    async def where() -> bool:
        """Whether the tool runs in the caller's task."""
        return asyncio.current_task() is caller[0]

    caller: list = [None]

    async def main():
        with ToolRegistry([where]) as registry:
            caller[0] = asyncio.current_task()
            awaited = await registry.aexecute(ToolCall("where"))
            task = asyncio.create_task(registry.aexecute(ToolCall("where")))
            caller[0] = task
            in_task = await task
            waited = await asyncio.wait_for(registry.aexecute(ToolCall("where")), 5)
            return awaited, in_task, waited

    awaited, in_task, waited = asyncio.run(main())
    assert awaited.data is True and in_task.data is True and waited.outcome == "ok"
    assert asyncio.iscoroutinefunction(ToolRegistry.aexecute)


def test_gathered_calls_of_a_closed_registry_raise_as_awaited_ones_do():
    @tool
    async def echo(text: str) -> str:
        """Echo."""
        return text

    async def main():
        registry = ToolRegistry([echo])
        pending = [registry.aexecute(ToolCall("echo", {"text": "a"})) for _ in range(2)]
        registry.close()
        with pytest.raises(RegistryClosedError):
            await asyncio.gather(*pending)
        with pytest.raises(RegistryClosedError):
            await registry.aexecute(ToolCall("echo", {"text": "a"}))

    asyncio.run(main())


def test_a_pending_call_reads_as_a_future_in_its_repr():
    @tool
    async def echo(text: str) -> str:
        """Echo."""
        return text

    async def main():
        with ToolRegistry([echo]) as registry:
            pending = registry.aexecute(ToolCall("echo", {"text": "a"}))
            text = repr(pending)
            result = await asyncio.gather(pending)
            return text, result, inspect.isawaitable(pending)

    text, result, awaitable = asyncio.run(main())
    assert "pending" in text and result[0].data == "a" and awaitable


def test_a_call_never_awaited_nor_gathered_never_runs():
    ran = []

    @tool
    async def note(i: int) -> int:
        """Note the call."""
        ran.append(i)
        return i

    async def main():
        with ToolRegistry([note]) as registry:
            registry.aexecute(ToolCall("note", {"i": 1}))  # as a coroutine never awaited
            return await asyncio.gather(registry.aexecute(ToolCall("note", {"i": 2})))

    assert [r.data for r in asyncio.run(main())] == [2] and ran == [2]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Task.cancelling is 3.11's")
def test_a_quick_call_that_cancels_its_own_task_ends_cancelled_alone():
    @tool
    async def mark(i: int) -> int:
        """Cancel the task this call runs in, at the tenth."""
        if i == 10:
            asyncio.current_task().cancel()
        return i

    async def main():
        with ToolRegistry([mark]) as registry:
            calls = [registry.aexecute(ToolCall("mark", {"i": i})) for i in range(300)]
            return await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 30)

    results = asyncio.run(main())
    assert isinstance(results[10], asyncio.CancelledError)
    assert [r.data for i, r in enumerate(results) if i != 10] == [i for i in range(300) if i != 10]


def test_calls_left_when_the_task_running_them_is_cancelled_are_cancelled_not_left_pending():
    @tool
    async def mark(i: int) -> int:
        """At the tenth, have the task this call runs in cancelled once the loop turns."""
        if i == 10:
            asyncio.get_running_loop().call_soon(asyncio.current_task().cancel)
        return i

    async def main():
        with ToolRegistry([mark]) as registry:
            calls = [registry.aexecute(ToolCall("mark", {"i": i})) for i in range(300)]
            return await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 30)

    results = asyncio.run(main())
    done = [r.data for r in results if not isinstance(r, BaseException)]
    cancelled = [r for r in results if isinstance(r, asyncio.CancelledError)]
    # The calls run before that task's next turn ended; the others were cancelled with it.
    assert done == list(range(len(done))) and len(done) + len(cancelled) == 300


def test_wait_for_a_call_past_its_time_cancels_its_coroutine():
    stopped = []

    hang = _hanging(stopped)

    async def main():
        with ToolRegistry([hang]) as registry:
            for i in range(2):  # the first call that suspends, then one of a tool seen to
                with pytest.raises(asyncio.TimeoutError):
                    await asyncio.wait_for(registry.aexecute(ToolCall("hang", {"i": i})), 0.05)

    asyncio.run(main())
    assert stopped == [0, 1]
