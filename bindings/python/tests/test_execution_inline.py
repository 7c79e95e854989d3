"""aexecute and aexecute_many start async tools inline on the caller's loop
(CAPSTAN_EXEC_START_INLINE) and send what inline cannot honour to the pool."""

import asyncio
import threading
import time

import pytest

from capstan import Context, ToolCall, ToolRegistry, tool
from conftest import Gauge


@pytest.fixture
def trampoline_threads(monkeypatch):
    """The threads on which capstan called the trampoline for async tools."""
    from capstan import _callbacks

    seen = []
    start = _callbacks._start_coroutine

    def recording(*args):
        seen.append(threading.get_ident())
        return start(*args)

    monkeypatch.setattr(_callbacks, "_start_coroutine", recording)
    return seen


def test_async_tools_run_on_the_loops_thread_without_a_trampoline(trampoline_threads):
    ran_on = []

    @tool
    async def fetch(i: int) -> int:
        ran_on.append(threading.get_ident())
        await asyncio.sleep(0.001)
        return i * 2

    async def main():
        with ToolRegistry([fetch]) as registry:
            one = await registry.aexecute(ToolCall("fetch", {"i": 1}))
            many = await registry.aexecute_many([ToolCall("fetch", {"i": i}) for i in range(5)])
        return one, many, threading.get_ident()

    one, many, loop_thread = asyncio.run(main())
    assert one.data == 2 and [r.data for r in many] == [0, 2, 4, 6, 8]
    # A host batch handed the checked calls to the binding, which ran every
    # coroutine on this loop: no trampoline, no pool thread. The lone call
    # needs none either (capstan_registry_check_call, then awaited here).
    assert trampoline_threads == []
    assert ran_on == [loop_thread] * 6


def test_async_tools_with_a_context_start_inline_on_the_loops_thread(trampoline_threads):
    ran_on = []

    @tool
    async def fetch(i: int, ctx: Context) -> int:
        ran_on.append(threading.get_ident())
        await asyncio.sleep(0.001)
        return i * 2

    async def main():
        with ToolRegistry([fetch]) as registry:
            many = await registry.aexecute_many([ToolCall("fetch", {"i": i}) for i in range(5)])
        return many, threading.get_ident()

    many, loop_thread = asyncio.run(main())
    assert [r.data for r in many] == [0, 2, 4, 6, 8]
    # A Context needs its capstan call: capstan called the trampoline on the
    # loop's thread (inside capstan_batch_submit), and every coroutine ran there.
    assert trampoline_threads == [loop_thread] * 5
    assert ran_on == [loop_thread] * 5


def test_inline_async_tools_still_run_concurrently():
    barrier = asyncio.Barrier(4) if hasattr(asyncio, "Barrier") else None
    gauge = Gauge()

    @tool
    async def meet() -> bool:
        with gauge:
            if barrier is not None:
                await asyncio.wait_for(barrier.wait(), 60)  # passes only if 4 run at once
            else:
                await asyncio.sleep(0.02)
        return True

    async def main():
        with ToolRegistry([meet]) as registry:
            return await registry.aexecute_many([ToolCall("meet") for _ in range(4)], limit=4)

    assert all(r.data is True for r in asyncio.run(main()))
    assert gauge.peak == 4


def test_a_sync_tool_under_aexecute_runs_off_the_loops_thread(trampoline_threads):
    where = {}

    @tool
    def blocking(x: int) -> int:
        where["sync"] = threading.get_ident()
        return x

    @tool
    async def fetch(x: int) -> int:
        where["async"] = threading.get_ident()
        return x

    async def main():
        with ToolRegistry([blocking, fetch]) as registry:
            results = await registry.aexecute_many([ToolCall("blocking", {"x": 1}), ToolCall("fetch", {"x": 2})])
        return results, threading.get_ident()

    results, loop_thread = asyncio.run(main())
    assert [r.data for r in results] == [1, 2]
    assert where["sync"] != loop_thread  # on a worker thread: the loop was not blocked
    assert where["async"] == loop_thread  # the coroutine still runs on the loop


@pytest.mark.parametrize("case", ["invalid arguments", "unknown tool"])
def test_aexecute_answers_calls_that_need_no_run_on_the_loops_thread(case, monkeypatch):
    # Validation happens on the loop's thread, before any hop: the batch ends
    # there (before: a sync tool sent the whole batch to capstan's pool).
    from capstan import _batches

    finished_on = []
    finish = _batches.Submission.finish

    def spy(self):
        finished_on.append(threading.get_ident())
        finish(self)

    monkeypatch.setattr(_batches.Submission, "finish", spy)

    @tool
    def blocking(x: int) -> int:
        return x

    call = ToolCall("blocking", {"x": "not a number"}) if case == "invalid arguments" else ToolCall("blockng", {"x": 1})
    expected = "invalid_arguments" if case == "invalid arguments" else "unknown_tool"

    async def main():
        with ToolRegistry([blocking]) as registry:
            lone = await registry.aexecute(call)
            assert finished_on == []  # a lone call: capstan_registry_check_call, no batch at all
            batch = await registry.aexecute_many([call, call])
            return lone, batch, threading.get_ident()

    lone, batch, loop_thread = asyncio.run(main())
    assert lone.outcome == expected and [r.outcome for r in batch] == [expected] * 2
    assert finished_on == [loop_thread]  # the batch ended on the loop's thread


def test_sync_tools_under_aexecute_keep_their_thread_states():
    # Sync tools started from an event loop run on Python worker threads,
    # which keep their thread state (and thread-locals) from call to call.
    import threading as _threading

    local = _threading.local()
    fresh = []

    @tool
    def count(i: int) -> int:
        if not hasattr(local, "seen"):
            local.seen = True
            fresh.append(_threading.get_ident())
        return i

    async def main():
        with ToolRegistry([count]) as registry:
            for i in range(50):
                await registry.aexecute(ToolCall("count", {"i": i}))

    asyncio.run(main())
    assert 1 <= len(fresh) <= 2  # a thread state per thread, not per call


@pytest.mark.parametrize("case", ["sequential", "over the limit", "not parallel-safe"])
def test_what_inline_cannot_honour_goes_to_the_pool(case, trampoline_threads):
    gauge = Gauge()

    @tool(parallel_safe=case != "not parallel-safe")
    async def step(i: int) -> int:
        with gauge:
            await asyncio.sleep(0.005)
        return i

    kwargs = {"sequential": {"parallel": False}, "over the limit": {"limit": 2}}.get(case, {"limit": 6})

    async def main():
        with ToolRegistry([step]) as registry:
            results = await registry.aexecute_many([ToolCall("step", {"i": i}) for i in range(6)], **kwargs)
        return results, threading.get_ident()

    results, loop_thread = asyncio.run(main())
    assert [r.data for r in results] == list(range(6))
    assert loop_thread not in trampoline_threads
    assert gauge.peak <= (2 if case == "over the limit" else 1)


def test_inline_batches_answer_unknown_tools_and_bad_arguments():
    @tool
    async def fetch(x: int) -> int:
        return x

    async def main():
        with ToolRegistry([fetch]) as registry:
            return await registry.aexecute_many(
                [ToolCall("fetch", {"x": 1}), ToolCall("nope"), ToolCall("fetch", {"x": "a"})]
            )

    ok, unknown, bad = asyncio.run(main())
    assert ok.data == 1
    assert unknown.outcome == "unknown_tool" and "fetch" in unknown.content
    assert bad.outcome == "invalid_arguments"


def test_inline_async_tool_timeout_cancels_the_coroutine():
    cancelled = asyncio.Event()

    @tool(timeout=0.05)
    async def hang() -> str:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    async def main():
        with ToolRegistry([hang]) as registry:
            result = await registry.aexecute(ToolCall("hang"))
            await asyncio.wait_for(cancelled.wait(), 60)
        return result

    assert asyncio.run(main()).outcome == "timeout"


def test_cancelling_the_awaiting_task_cancels_inline_coroutines():
    started = []
    cancelled = []

    @tool
    async def wait(i: int) -> int:
        started.append(i)
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(i)
            raise
        return i

    async def main():
        with ToolRegistry([wait]) as registry:
            task = asyncio.ensure_future(registry.aexecute_many([ToolCall("wait", {"i": i}) for i in range(3)]))
            while len(started) < 3:
                await asyncio.sleep(0.001)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            for _ in range(10):  # the tasks of the other coroutines see it next
                await asyncio.sleep(0)

    asyncio.run(main())
    assert sorted(cancelled) == [0, 1, 2]


def test_inline_async_tools_see_the_callers_context():
    import contextvars

    request = contextvars.ContextVar("request", default=None)

    @tool
    async def who() -> str:
        return str(request.get())

    async def main():
        request.set("r-42")
        with ToolRegistry([who]) as registry:
            return await registry.aexecute_many([ToolCall("who"), ToolCall("who")])

    assert [r.data for r in asyncio.run(main())] == ["r-42", "r-42"]


def test_inline_batches_keep_the_approval_gate():
    ran_on = []

    @tool(requires_approval=True)
    async def pay(amount: int) -> str:
        ran_on.append(threading.get_ident())
        return f"paid {amount}"

    async def main():
        with ToolRegistry([pay]) as registry:
            calls = [ToolCall("pay", {"amount": i}, id=f"p{i}") for i in range(2)]
            return await registry.aexecute_many(calls, approved={"p1"}), threading.get_ident()

    (denied, paid), loop_thread = asyncio.run(main())
    assert denied.outcome == "denied" and paid.data == "paid 1"
    assert ran_on == [loop_thread]  # only the approved call ran, on the loop


def test_parallel_python_tools_on_the_pool_keep_their_thread_state():
    # capstan_runtime_set_thread_hooks keeps one Python thread state per pool thread:
    # thread-locals survive from call to call (before: a fresh thread state,
    # so empty thread-locals, for every callback on a pool thread).
    local = threading.local()
    fresh = []
    threads = set()

    @tool
    def note(i: int) -> int:
        threads.add(threading.get_ident())
        if not hasattr(local, "seen"):
            local.seen = True
            fresh.append(threading.get_ident())
        time.sleep(0.002)
        return i

    with ToolRegistry([note]) as registry:
        for _ in range(3):
            results = registry.execute_many([ToolCall("note", {"i": i}) for i in range(8)], limit=4)
            assert [r.data for r in results] == list(range(8))
    assert sorted(fresh) == sorted(threads)  # once per thread, not once per call


