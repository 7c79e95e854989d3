import asyncio
import gc
import subprocess
import threading
import time
import weakref

import pytest

from capstan import FunctionTool, Tool, ToolCall, ToolRegistry, ValidationError, tool
from conftest import Gauge, live_entries


def test_results_come_back_in_call_order():
    @tool
    def nap(ms: int) -> int:
        time.sleep(ms / 1000)
        return ms

    delays = [40, 5, 30, 0, 20, 10, 35, 1]
    with ToolRegistry([nap]) as registry:
        results = registry.execute_many([ToolCall("nap", {"ms": d}, id=f"c{i}") for i, d in enumerate(delays)])
    assert [r.data for r in results] == delays
    assert [r.call_id for r in results] == [f"c{i}" for i in range(len(delays))]


def test_parallel_calls_run_at_once_within_the_limit():
    gauge = Gauge()
    barrier = threading.Barrier(4, timeout=60)  # only reached when the test fails

    @tool
    def meet() -> bool:
        with gauge:
            barrier.wait()  # only passes if 4 calls run at the same time
            return True

    with ToolRegistry([meet]) as registry:
        results = registry.execute_many([ToolCall("meet") for _ in range(8)], limit=4)
    assert all(r.data is True for r in results), results
    assert gauge.peak == 4


def test_parallel_false_runs_one_at_a_time():
    gauge = Gauge()
    order = []

    @tool
    def step(i: int) -> int:
        with gauge:
            time.sleep(0.002)
            order.append(i)
            return i

    with ToolRegistry([step]) as registry:
        registry.execute_many([ToolCall("step", {"i": i}) for i in range(6)], parallel=False)
    assert gauge.peak == 1
    assert order == list(range(6))


def test_not_parallel_safe_tool_never_overlaps_itself():
    gauge = Gauge()

    @tool(parallel_safe=False)
    def exclusive() -> None:
        with gauge:
            time.sleep(0.005)

    with ToolRegistry([exclusive]) as registry:
        results = registry.execute_many([ToolCall("exclusive") for _ in range(6)], limit=6)
    assert not any(r.is_error for r in results)
    assert gauge.peak == 1


def test_sync_tool_timeout_is_reported_and_the_caller_is_free():
    release = threading.Event()

    @tool(timeout=0.05)
    def stuck() -> str:
        release.wait(10)
        return "late"

    with ToolRegistry([stuck]) as registry:
        result = registry.execute(ToolCall("stuck"))
        release.set()
    assert result.is_error and result.outcome == "timeout"
    assert "timed out" in result.content
    assert result.data is None


def test_execute_timeout_overrides_the_tools():
    release = threading.Event()

    @tool
    def slow() -> str:
        release.wait(10)
        return "late"

    with ToolRegistry([slow]) as registry:
        results = registry.execute_many([ToolCall("slow"), ToolCall("slow")], timeout=0.05)
        release.set()
    assert [r.outcome for r in results] == ["timeout", "timeout"]


def test_max_output_chars_caps_the_text_not_the_data():
    @tool(max_output_chars=10)
    def long() -> str:
        return "x" * 100

    with ToolRegistry([long]) as registry:
        result = registry.execute(ToolCall("long"))
    assert result.content.startswith("x" * 10) and "truncated" in result.content
    assert "x" * 11 not in result.content
    assert result.data == "x" * 100


def test_exception_becomes_an_error_result_with_its_message():
    @tool
    def boom(msg: str) -> None:
        raise ValueError(msg)

    with ToolRegistry([boom]) as registry:
        result = registry.execute(ToolCall("boom", {"msg": "no such city"}))
        many = registry.execute_many([ToolCall("boom", {"msg": str(i)}) for i in range(3)])
    assert result.is_error and result.outcome == "tool_error"
    assert result.content == "ValueError: no such city"
    assert isinstance(result.error, ValueError)
    assert [r.content for r in many] == ["ValueError: 0", "ValueError: 1", "ValueError: 2"]


def test_keyboard_interrupt_in_a_tool_is_re_raised():
    @tool
    def interrupt() -> None:
        raise KeyboardInterrupt

    @tool
    def fine() -> int:
        return 1

    with ToolRegistry([interrupt, fine]) as registry:
        with pytest.raises(KeyboardInterrupt):
            registry.execute(ToolCall("interrupt"))
        # Also from a pool thread of a parallel batch.
        with pytest.raises(KeyboardInterrupt):
            registry.execute_many([ToolCall("fine"), ToolCall("interrupt"), ToolCall("fine")])
        # The registry still works afterwards.
        assert registry.execute(ToolCall("fine")).data == 1


def test_system_exit_in_a_tool_is_re_raised():
    @tool
    def leave() -> None:
        raise SystemExit(3)

    with ToolRegistry([leave]) as registry:
        with pytest.raises(SystemExit) as info:
            registry.execute(ToolCall("leave"))
    assert info.value.code == 3


def test_keyboard_interrupt_in_an_async_tool_is_re_raised():
    @tool
    async def interrupt() -> None:
        await asyncio.sleep(0)
        raise KeyboardInterrupt

    with ToolRegistry([interrupt]) as registry:
        with pytest.raises(KeyboardInterrupt):
            registry.execute(ToolCall("interrupt"))

        async def main():
            with pytest.raises(KeyboardInterrupt):
                await registry.aexecute(ToolCall("interrupt"))

        asyncio.run(main())


def test_async_tool_from_blocking_execute():
    @tool
    async def fetch(url: str) -> dict:
        await asyncio.sleep(0.01)
        return {"url": url}

    with ToolRegistry([fetch]) as registry:
        result = registry.execute(ToolCall("fetch", {"url": "a"}))
        many = registry.execute_many([ToolCall("fetch", {"url": str(i)}) for i in range(5)])
    assert result.data == {"url": "a"} and result.content == '{"url":"a"}'
    assert [r.data["url"] for r in many] == ["0", "1", "2", "3", "4"]


def test_async_tools_run_on_the_callers_loop_concurrently():
    gauge = Gauge()

    @tool
    async def wait(i: int) -> int:
        with gauge:
            await asyncio.sleep(0.02)
        return id(asyncio.get_running_loop())

    async def main():
        with ToolRegistry([wait]) as registry:
            results = await registry.aexecute_many([ToolCall("wait", {"i": i}) for i in range(20)], limit=20)
        return results, id(asyncio.get_running_loop())

    results, loop_id = asyncio.run(main())
    assert all(r.data == loop_id for r in results)
    assert gauge.peak > 1


def test_the_loop_stays_free_while_sync_tools_run():
    ticked = threading.Event()

    @tool
    def block() -> bool:
        return ticked.wait(10)  # set only if the loop runs the ticker meanwhile

    async def ticker():
        for _ in range(3):
            await asyncio.sleep(0.001)
        ticked.set()

    async def main():
        with ToolRegistry([block]) as registry:
            result, _ = await asyncio.gather(registry.aexecute(ToolCall("block")), ticker())
        return result

    assert asyncio.run(main()).data is True


def test_async_tool_timeout_cancels_the_coroutine():
    cancelled = threading.Event()

    @tool(timeout=0.05)
    async def hang() -> str:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    with ToolRegistry([hang]) as registry:
        result = registry.execute(ToolCall("hang"))
    assert result.outcome == "timeout"
    assert cancelled.wait(5)


def test_async_tool_exception_is_an_error_result():
    @tool
    async def bad() -> None:
        raise RuntimeError("nope")

    async def main():
        with ToolRegistry([bad]) as registry:
            return await registry.aexecute(ToolCall("bad"))

    result = asyncio.run(main())
    assert result.outcome == "tool_error" and result.content == "RuntimeError: nope"


def test_async_stateful_tool():
    class Fetcher(Tool):
        name = "fetcher"

        async def call(self, n: int) -> int:
            await asyncio.sleep(0)
            return n + 1

    fetcher = Fetcher()
    assert fetcher.is_async
    assert fetcher.run(n=1).data == 2


def test_nested_execution_from_inside_a_tool():
    registry = ToolRegistry()

    @tool
    def inner(x: int) -> int:
        return x + 1

    @tool
    def outer(x: int) -> int:
        return registry.execute(ToolCall("inner", {"x": x})).data * 10

    registry.extend([inner, outer])
    with registry:
        assert registry.execute(ToolCall("outer", {"x": 1})).data == 20
        results = registry.execute_many([ToolCall("outer", {"x": i}) for i in range(4)])
    assert [r.data for r in results] == [10, 20, 30, 40]


def test_tools_defined_in_a_function_and_dropped_still_work():
    def make_registry() -> ToolRegistry:
        def local(x: int) -> int:
            return x + 100

        registry = ToolRegistry()
        registry.add(local)  # the only reference to the tool is the registry's
        return registry

    registry = make_registry()
    gc.collect()
    assert registry.execute(ToolCall("local", {"x": 1})).data == 101
    registry._tools.clear()  # even without the Python-side dict, the core's entry holds it
    gc.collect()
    assert registry.execute(ToolCall("local", {"x": 2})).data == 102
    registry.close()


def test_entries_are_released_on_remove_close_and_replace():
    before = live_entries()
    registry = ToolRegistry()
    registry.add(FunctionTool(lambda: 1, name="a"))
    registry.add(FunctionTool(lambda: 2, name="b"))
    assert live_entries() == before + 2
    with pytest.raises(ValidationError):
        registry.add(FunctionTool(lambda: 3, name="a"))  # refused: its entry goes at once
    assert live_entries() == before + 2
    registry.add(FunctionTool(lambda: 3, name="a"), replace=True)  # replaced: the old entry goes
    assert live_entries() == before + 2
    registry.remove("b")
    assert live_entries() == before + 1
    registry.close()
    assert live_entries() == before


def test_a_dropped_registry_is_freed_by_the_backstop():
    before = live_entries()
    registry = ToolRegistry([FunctionTool(lambda: 1, name="a")])
    del registry
    gc.collect()
    deadline = time.monotonic() + 5
    while live_entries() != before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert live_entries() == before


def test_run_does_not_keep_a_tool_alive():
    class Big(Tool):
        name = "big"

        def call(self) -> int:
            return 1

    big = Big()
    assert big.run().data == 1
    ref = weakref.ref(big)
    del big
    gc.collect()
    assert ref() is None


def test_close_waits_for_an_execution_in_flight():
    started = threading.Event()
    release = threading.Event()

    @tool
    def hold() -> str:
        started.set()
        release.wait(5)
        return "ok"

    registry = ToolRegistry([hold])
    results = []
    worker = threading.Thread(target=lambda: results.append(registry.execute(ToolCall("hold"))))
    worker.start()
    assert started.wait(5)
    registry.close()  # returns at once; the execution in flight frees the registry
    release.set()
    worker.join(5)
    assert results[0].content == "ok"
    assert registry._ptr is None


def test_close_from_inside_a_tool():
    registry = ToolRegistry()

    @tool
    def shut() -> str:
        registry.close()
        return "closing"

    registry.add(shut)
    assert registry.execute(ToolCall("shut")).content == "closing"
    assert registry.closed and registry._ptr is None


def test_many_threads_share_one_registry():
    @tool
    def square(x: int) -> int:
        return x * x

    errors = []
    with ToolRegistry([square]) as registry:

        def worker(base: int) -> None:
            for i in range(200):
                r = registry.execute(ToolCall("square", {"x": base + i}))
                if r.data != (base + i) ** 2:
                    errors.append(r)

        threads = [threading.Thread(target=worker, args=(k * 1000,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []


def test_big_fan_out_gets_every_result():
    @tool
    def ident(i: int) -> int:
        return i

    with ToolRegistry([ident]) as registry:
        results = registry.execute_many([ToolCall("ident", {"i": i}) for i in range(500)], limit=32)
    assert [r.data for r in results] == list(range(500))


def test_cancelling_the_awaiting_task_cancels_calls_not_yet_started():
    started = []

    @tool
    def slow(i: int) -> int:
        started.append(i)
        time.sleep(0.1)
        return i

    # 200 calls of 0.1 s one at a time: 20 s before they could all have
    # started, however slowly a loaded machine runs the loop that cancels.
    async def main():
        with ToolRegistry([slow]) as registry:
            task = asyncio.ensure_future(
                registry.aexecute_many([ToolCall("slow", {"i": i}) for i in range(200)], limit=1)
            )
            while not started:
                await asyncio.sleep(0.005)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())
    assert 1 <= len(started) < 200


# What every SIGINT child has first: the SIGINT goes once the main thread is
# known to wait (its innermost frame is threading's wait) after ``ready`` is
# set, never after a fixed delay (a loaded machine can be slower than one).
_CHILD_PRELUDE = """
import signal as _signal, sys as _sys, threading as _threading, time as _time


def interrupt_main_when_it_waits(ready):
    main = _threading.main_thread().ident

    def run():
        ready.wait(60)
        while True:
            frame = _sys._current_frames().get(main)
            if frame is not None and frame.f_code.co_name == "wait" and "threading" in frame.f_code.co_filename:
                break
            _time.sleep(0.001)
        _signal.pthread_kill(main, _signal.SIGINT)

    _threading.Thread(target=run, daemon=True).start()
"""


def _run_in_a_child(code: str) -> subprocess.CompletedProcess[str]:
    """Runs ``code`` in a fresh Python on this checkout's package and library
    (a SIGINT test must own its process's main thread), after
    ``_CHILD_PRELUDE`` (``interrupt_main_when_it_waits``)."""
    import os
    import sys
    from pathlib import Path

    import capstan

    return subprocess.run(
        [sys.executable, "-c", _CHILD_PRELUDE + code],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "CAPSTAN_LIB": capstan._lib.lib().path,
            "PYTHONPATH": str(Path(capstan.__file__).parent.parent),
        },
    )


def test_ctrl_c_interrupts_execute_many_on_the_main_thread():
    import textwrap

    # The SIGINT is sent once the main thread is known to wait for the batch
    # (its innermost frame is threading's wait, with a call running), never
    # after a fixed delay: on a loaded machine a timer counted from before
    # the registry was built could fire before execute_many was waiting.
    code = textwrap.dedent(
        """
        import signal, sys, threading, time
        from capstan import ToolCall, ToolRegistry, tool

        # A process started in the background by a shell without job control
        # inherits SIGINT ignored, and Python then installs no handler.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        ran = []
        started = threading.Event()

        @tool
        def slow(i: int) -> int:
            ran.append(i)
            started.set()
            time.sleep(0.3)
            return i

        interrupt_main_when_it_waits(started)
        registry = ToolRegistry([slow])
        try:
            registry.execute_many([ToolCall("slow", {"i": i}) for i in range(200)], limit=1)
            print("not interrupted", len(ran))
        except KeyboardInterrupt:
            print("interrupted", len(ran) < 200)
        """
    )
    proc = _run_in_a_child(code)
    assert proc.stdout.strip() == "interrupted True", proc


def test_ctrl_c_interrupts_a_lone_execute_waiting_for_a_pump_or_an_approver():
    import textwrap

    # Issue 49: a lone call to a main-thread tool that nobody pumps (or one
    # waiting for an approver) waits for someone else, not for Python code on
    # this thread, so Ctrl-C must reach the wait and cancel the call. The
    # SIGINT goes once the main thread waits in threading (as above).
    code = textwrap.dedent(
        """
        import signal, sys, threading, time
        from capstan import ToolCall, ToolRegistry, tool

        signal.signal(signal.SIGINT, signal.default_int_handler)

        @tool(main_thread=True)
        def on_main() -> str:
            return "ran"

        executing = threading.Event()
        interrupt_main_when_it_waits(executing)
        registry = ToolRegistry([on_main])
        try:
            executing.set()
            result = registry.execute(ToolCall("on_main", {}))
            print("not interrupted", result.outcome)
        except KeyboardInterrupt:
            print("interrupted")
        """
    )
    proc = _run_in_a_child(code)
    assert proc.stdout.strip() == "interrupted", proc


def test_closing_a_tool_frees_its_own_registry():
    before = live_entries()

    @tool
    def once() -> int:
        return 1

    assert once.run().data == 1
    assert live_entries() == before + 1
    once.close()
    assert live_entries() == before
    assert once.run().data == 1  # a new one is made on demand
    once.close()
