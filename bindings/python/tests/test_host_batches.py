"""Host batches (issue #46): the calls of ``async def`` tools are handed to
the binding, which runs them on the loop awaiting the batch (or, for the
blocking API, all on one private loop), while the batch's sync tools, which
may block, run in parallel on capstan's pool under the batch's limit."""

from __future__ import annotations

import asyncio
import threading

from capstan import ToolCall, ToolRegistry, tool
from conftest import Gauge


def test_a_mixed_batch_runs_async_tools_on_the_loop_and_blocking_sync_tools_in_parallel_on_the_pool():
    ran_on: dict[str, set[int]] = {"sync": set(), "async": set()}
    both = threading.Barrier(3, timeout=30)  # the three sync calls run at once, or this breaks

    @tool
    def slow(i: int) -> int:
        """Block."""
        ran_on["sync"].add(threading.get_ident())
        both.wait()
        return i

    @tool
    async def quick(i: int) -> int:
        """Await."""
        ran_on["async"].add(threading.get_ident())
        await asyncio.sleep(0)
        return -i

    async def main():
        calls = [ToolCall("slow" if i % 2 else "quick", {"i": i}) for i in range(6)]
        with ToolRegistry([slow, quick]) as registry:
            return await registry.aexecute_many(calls, limit=4), threading.get_ident()

    results, loop_thread = asyncio.run(main())
    assert [r.data for r in results] == [0, 1, -2, 3, -4, 5]
    assert ran_on["async"] == {loop_thread}
    assert loop_thread not in ran_on["sync"]


def test_handed_out_async_calls_keep_the_batch_limit_and_sequential_order():
    gauge = Gauge()
    order = []

    @tool
    async def nap(i: int) -> int:
        """Nap."""
        with gauge:
            order.append(i)
            await asyncio.sleep(0.001)
        return i

    async def main():
        with ToolRegistry([nap]) as registry:
            calls = [ToolCall("nap", {"i": i}) for i in range(8)]
            limited = await registry.aexecute_many(calls, limit=2)
            peak_limited = gauge.peak
            gauge.peak = 0
            order.clear()
            one_by_one = await registry.aexecute_many(calls, parallel=False)
            return limited, peak_limited, one_by_one

    limited, peak_limited, one_by_one = asyncio.run(main())
    assert [r.data for r in limited] == list(range(8)) and peak_limited == 2
    assert [r.data for r in one_by_one] == list(range(8)) and gauge.peak == 1 and order == list(range(8))


def test_the_blocking_api_runs_a_batchs_async_tools_together_on_one_loop():
    barrier_loop = {}

    @tool
    async def meet(i: int) -> int:
        """Meet."""
        # All four wait for each other: they must run concurrently.
        barrier_loop.setdefault("loop", asyncio.get_running_loop())
        assert asyncio.get_running_loop() is barrier_loop["loop"]
        barrier_loop[i] = True
        while len(barrier_loop) < 5:
            await asyncio.sleep(0.001)
        return i

    with ToolRegistry([meet]) as registry:
        results = registry.execute_many([ToolCall("meet", {"i": i}) for i in range(4)])
    assert [r.data for r in results] == [0, 1, 2, 3]
    assert barrier_loop["loop"] is not None


def test_an_async_tools_exception_and_result_kinds_come_back_as_from_a_callback():
    @tool
    async def boom(kind: str) -> object:
        """Fail or return."""
        if kind == "raise":
            raise KeyError("missing")
        return {"kind": kind, "n": 1} if kind == "dict" else "plain é"

    async def main():
        with ToolRegistry([boom]) as registry:
            calls = [ToolCall("boom", {"kind": k}) for k in ("raise", "dict", "text")]
            return await registry.aexecute_many(calls)

    failed, as_dict, text = asyncio.run(main())
    assert failed.outcome == "tool_error" and failed.content == "KeyError: 'missing'"
    assert isinstance(failed.error, KeyError)
    assert as_dict.data == {"kind": "dict", "n": 1} and as_dict.content == '{"kind":"dict","n":1}'
    assert text.content == "plain é" and text.data == "plain é"


def test_cancelling_the_awaiting_task_cancels_the_host_run_coroutines():
    cancelled = []
    started = asyncio.Event  # made inside the loop below

    async def main():
        began = started()

        @tool
        async def wait(i: int) -> int:
            """Wait."""
            try:
                began.set()
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.append(i)
                raise
            return i

        with ToolRegistry([wait]) as registry:
            task = asyncio.ensure_future(registry.aexecute_many([ToolCall("wait", {"i": i}) for i in range(3)]))
            await began.wait()
            await asyncio.sleep(0.01)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            for _ in range(10):
                await asyncio.sleep(0)

    asyncio.run(main())
    assert sorted(cancelled) == [0, 1, 2]


def test_ctrl_c_interrupts_a_blocking_batch_of_async_tools_and_cancels_their_coroutines():
    import textwrap

    from test_execution import _run_in_a_child

    # The SIGINT goes once the main thread waits (in threading) for the
    # private loop to run the batch's coroutines, never after a fixed delay.
    code = textwrap.dedent(
        """
        import asyncio, signal, sys, threading, time
        from capstan import ToolCall, ToolRegistry, tool

        signal.signal(signal.SIGINT, signal.default_int_handler)
        started, stopped = threading.Event(), threading.Event()

        @tool
        async def hang(i: int) -> int:
            started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                stopped.set()
                raise
            return i

        interrupt_main_when_it_waits(started)
        registry = ToolRegistry([hang])
        try:
            registry.execute_many([ToolCall("hang", {"i": i}) for i in range(3)])
            print("not interrupted")
        except KeyboardInterrupt:
            print("interrupted", stopped.wait(30))
        """
    )
    proc = _run_in_a_child(code)
    assert proc.stdout.strip() == "interrupted True", proc
