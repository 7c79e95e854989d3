import asyncio
import gc
import threading
import time
import weakref

import pytest

from capstan import FunctionTool, Tool, ToolCall, ToolRegistry, tool
from conftest import live_entries


class Gauge:
    """Counts how many calls run at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0

    def __enter__(self):
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def __exit__(self, *exc):
        with self.lock:
            self.now -= 1


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
    registry.add(FunctionTool(lambda: 3, name="a"))  # replaced: the old entry goes
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


def test_ctrl_c_interrupts_execute_many_on_the_main_thread():
    import os
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    import capstan

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

        main = threading.main_thread().ident

        def interrupt_when_waiting():
            started.wait(60)
            while True:
                frame = sys._current_frames().get(main)
                if frame is not None and frame.f_code.co_name == "wait" and "threading" in frame.f_code.co_filename:
                    break
                time.sleep(0.001)
            signal.pthread_kill(main, signal.SIGINT)

        threading.Thread(target=interrupt_when_waiting, daemon=True).start()
        registry = ToolRegistry([slow])
        try:
            registry.execute_many([ToolCall("slow", {"i": i}) for i in range(200)], limit=1)
            print("not interrupted", len(ran))
        except KeyboardInterrupt:
            print("interrupted", len(ran) < 200)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "CAPSTAN_LIB": capstan._lib.lib().path,
            "PYTHONPATH": str(Path(capstan.__file__).parent.parent),
        },
    )
    assert proc.stdout.strip() == "interrupted True", proc


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


# --- aexecute*: async tools started inline (CAPSTAN_EXEC_START_INLINE) ---------


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


def test_async_tools_start_inline_on_the_loops_thread(trampoline_threads):
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
    # capstan called the trampoline on the loop's thread (inside capstan_batch_submit),
    # and every coroutine ran there: no pool thread was involved. The lone
    # call needs no trampoline at all (capstan_registry_check_call, then awaited here).
    assert trampoline_threads == [loop_thread] * 5
    assert ran_on == [loop_thread] * 6


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


def test_inline_batches_keep_the_approval_gate(trampoline_threads):
    @tool(requires_approval=True)
    async def pay(amount: int) -> str:
        return f"paid {amount}"

    async def main():
        with ToolRegistry([pay]) as registry:
            calls = [ToolCall("pay", {"amount": i}, id=f"p{i}") for i in range(2)]
            return await registry.aexecute_many(calls, approved={"p1"}), threading.get_ident()

    (denied, paid), loop_thread = asyncio.run(main())
    assert denied.outcome == "denied" and paid.data == "paid 1"
    assert trampoline_threads == [loop_thread]  # only the approved call ran, inline


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


def test_a_lone_call_gives_the_same_result_as_a_batch_would():
    # execute()/aexecute() of a lone call validate with capstan_registry_check_call and
    # run the tool in the binding; a timeout sends the call through a capstan
    # batch instead. Both must read alike to the model and the caller.
    class Refused(Exception):
        pass

    @tool
    def echo(text: str, times: int = 1) -> str:
        """Repeat text."""
        return text * times

    @tool
    def record(text: str) -> dict:
        """Wrap text."""
        return {"text": text, "n": [1, 2.5, None]}

    @tool
    def refuse(text: str) -> str:
        """Fail."""
        raise Refused(f"no {text}")

    @tool
    def silent() -> str:
        """Fail without a message."""
        raise Refused()

    @tool
    def odd() -> str:
        """Return text that is not valid UTF-8."""
        return "a\ud800b"

    @tool
    async def aecho(text: str, times: int = 2) -> str:
        """Repeat text later."""
        return text * times

    calls = [
        ToolCall("echo", {"text": "ab"}),
        ToolCall("echo", '{"text": "Zürich", "times": 2}'),
        ToolCall("odd"),
        ToolCall("record", {"text": "x"}),
        ToolCall("refuse", {"text": "way"}),
        ToolCall("silent"),
        ToolCall("echo", {"text": 3}),
        ToolCall("echo", "{not json"),
        ToolCall("ecko", {"text": "a"}),
        ToolCall("aecho", {"text": "c"}),
        ToolCall("aecho", {"times": 1}),
    ]

    def key(r):
        return (r.call_id, r.name, r.content, r.is_error, r.data, r.outcome, type(r.error))

    async def main():
        with ToolRegistry([echo, record, refuse, silent, odd, aecho]) as registry:
            lone = [await registry.aexecute(c) for c in calls]
            batched = [await registry.aexecute(c, timeout=60) for c in calls]
            blocking = [registry.execute(c) for c in calls if c.name != "aecho"]
        return lone, batched, blocking

    lone, batched, blocking = asyncio.run(main())
    assert [key(r) for r in lone] == [key(r) for r in batched]
    assert [key(r) for r in blocking] == [key(r) for r in batched if r.name != "aecho"]
    assert [r.outcome for r in lone] == ["ok"] * 4 + ["tool_error"] * 2 + ["invalid_arguments"] * 2 + [
        "unknown_tool",
        "ok",
        "invalid_arguments",
    ]


def _until_seen_quick(registry: ToolRegistry, call: ToolCall) -> None:
    """Lone calls until one ran in under 100 us (on a busy machine one may not)."""
    for _ in range(200):
        registry.execute(call)
        if registry._lean[call.name][0].quick:
            return
    raise AssertionError("the tool was never seen quick")


def test_a_batch_of_quick_sync_calls_runs_on_the_calling_thread_in_order():
    threads: list[int] = []

    @tool
    def mark(i: int) -> int:
        """Note the thread."""
        threads.append(threading.get_ident())
        return i

    with ToolRegistry([mark]) as registry:
        calls = [ToolCall("mark", {"i": i}, id=f"c{i}") for i in range(50)]
        calls[7] = ToolCall("mark", {"i": "seven"}, id="c7")  # answered by capstan's check
        calls[9] = ToolCall("nope", {}, id="c9")
        first = registry.execute_many(calls[:3])  # never seen before: capstan's pool
        assert [r.data for r in first] == [0, 1, 2] and threading.get_ident() not in threads
        _until_seen_quick(registry, calls[0])
        threads.clear()
        results = registry.execute_many(calls)
        stats = registry.stats()["mark"]
    assert [r.call_id for r in results] == [c.id for c in calls]
    assert results[7].outcome == "invalid_arguments" and "/i" in results[7].content
    assert results[9].outcome == "unknown_tool"
    assert [r.data for r in results if r.outcome == "ok"] == [i for i in range(50) if i not in (7, 9)]
    assert set(threads) == {threading.get_ident()}
    assert stats["outcomes"]["invalid_arguments"] == 1  # counted as on any path


def test_a_tool_that_turns_slow_sends_the_rest_of_the_batch_to_the_pool():
    ran_on: dict[int, int] = {}

    @tool
    def sometimes(i: int, slow: bool = False) -> int:
        """Quick, unless told otherwise."""
        if slow:
            time.sleep(0.002)  # past 100 us whatever the load
        ran_on[i] = threading.get_ident()
        return i

    with ToolRegistry([sometimes]) as registry:
        _until_seen_quick(registry, ToolCall("sometimes", {"i": -1}))
        calls = [ToolCall("sometimes", {"i": i, "slow": i >= 2}) for i in range(12)]
        results = registry.execute_many(calls)
    assert [r.data for r in results] == list(range(12))
    here = threading.get_ident()
    assert ran_on[0] == here  # started here (seen quick)
    # Slow twice in a row (calls 2 and 3 at the latest): the rest ran on capstan's pool.
    assert all(ran_on[i] != here for i in range(4, 12))


def test_a_batch_with_a_timeout_or_an_event_hook_runs_on_the_pool():
    threads: list[int] = []

    @tool
    def mark(i: int) -> int:
        """Note the thread."""
        threads.append(threading.get_ident())
        return i

    with ToolRegistry([mark]) as registry:
        _until_seen_quick(registry, ToolCall("mark", {"i": 0}))
        threads.clear()
        registry.execute_many([ToolCall("mark", {"i": i}) for i in range(4)], timeout=30)
        registry.on_event(lambda event: None)
        registry.execute_many([ToolCall("mark", {"i": i}) for i in range(4)])
    assert threading.get_ident() not in threads


def test_calls_the_batch_check_answered_keep_their_answer_after_the_tool_turns_slow():
    @tool
    def sometimes(i: int, slow: bool = False) -> int:
        """Quick, unless told otherwise."""
        if slow:
            time.sleep(0.002)  # past 100 us whatever the load
        return i

    with ToolRegistry([sometimes]) as registry:
        _until_seen_quick(registry, ToolCall("sometimes", {"i": -1}))
        before = registry.stats()["sometimes"]["outcomes"]
        calls = [ToolCall("sometimes", {"i": i, "slow": i >= 2}, id=f"c{i}") for i in range(9)]
        calls[1] = ToolCall("sometimes", {"i": "one"}, id="bad1")  # before the tool turns slow
        calls[6] = ToolCall("sometimes", '{"i": "six"}', id="bad6")  # after: the pool's part
        calls[7] = ToolCall("nope", {}, id="gone")
        results = registry.execute_many(calls)
        after = registry.stats()["sometimes"]["outcomes"]
    assert [r.call_id for r in results] == [c.id for c in calls]
    assert [r.outcome for r in results] == ["ok", "invalid_arguments"] + ["ok"] * 4 + [
        "invalid_arguments",
        "unknown_tool",
        "ok",
    ]
    assert [r.data for r in results if r.outcome == "ok"] == [0, 2, 3, 4, 5, 8]
    assert "/i" in results[1].content and "/i" in results[6].content
    assert "sometimes" in results[7].content  # the closest name
    # Each call counted once, whichever path ran or answered it.
    assert after["ok"] - before.get("ok", 0) == 6
    assert after["invalid_arguments"] - before.get("invalid_arguments", 0) == 2


def test_a_batch_of_quick_calls_gives_each_call_what_a_lone_execute_gives_it():
    @tool
    def echo(text: str, times: int = 1) -> str:
        """Repeat the text."""
        return text * times

    calls = [
        ToolCall("echo", {"text": "a"}),
        ToolCall("echo", '{"text": "b", "times": 2}'),
        ToolCall("echo", {"text": "ünï", "times": 1}),
        ToolCall("echo", {"text": object()}),  # cannot be sent as JSON
        ToolCall("echo", '{"text": "\ud800"}'),  # a lone surrogate
        ToolCall("echo", "{not json"),
        ToolCall("echo", 42),  # type: ignore[arg-type]
        ToolCall("ech\u00f6", {}),
        ToolCall("echo", {"text": "z"}),
    ]
    with ToolRegistry([echo]) as registry:
        _until_seen_quick(registry, ToolCall("echo", {"text": ""}))
        batch = registry.execute_many(calls)
        lone = [registry.execute(call) for call in calls]
    assert [(r.call_id, r.content, r.outcome, r.data) for r in batch] == [
        (r.call_id, r.content, r.outcome, r.data) for r in lone
    ]
    assert batch[0].data == "a" and batch[1].data == "bb" and batch[-1].data == "z"


def test_a_lone_surrogate_in_one_calls_arguments_is_that_calls_invalid_arguments_on_the_pool_too():
    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    calls = [ToolCall("echo", {"text": "a"}), ToolCall("echo", '{"text": "\ud800"}'), ToolCall("echo", '{"text": "é"}')]
    with ToolRegistry([echo]) as registry:
        pooled = registry.execute_many(calls, timeout=30)  # a timeout: capstan's pool
        lone = registry.execute(calls[1])
    assert [r.outcome for r in pooled] == ["ok", "invalid_arguments", "ok"]
    assert pooled[1].content == lone.content and "not valid JSON" in lone.content
    assert pooled[2].data == "é"
