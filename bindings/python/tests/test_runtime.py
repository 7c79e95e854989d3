"""capstan.runtime: configure (capstan_runtime_configure) caps the pool
threads running tools, process-wide; shutdown (capstan_runtime_shutdown)
joins capstan's threads, says what still runs when its wait ends, and
capstan starts threads again afterwards."""

import threading

import pytest

import capstan
from capstan import CapstanError, Context, ToolCall, ToolRegistry, runtime, tool

running = 0
most = 0
lock = threading.Lock()


@tool
def busy(i: int) -> int:
    """Count how many run at once."""
    global running, most
    with lock:
        running += 1
        most = max(most, running)
    threading.Event().wait(0.01)
    with lock:
        running -= 1
    return i


@pytest.fixture
def defaults():
    yield
    runtime.configure()  # the defaults again, for the other tests


def test_the_thread_cap_bounds_how_many_tools_run_at_once_on_the_pool(defaults):
    global most
    runtime.configure(threads=1, keep_alive=0.5)
    most = 0
    with ToolRegistry([busy]) as r:
        # Several calls from the main thread: a batch on the pool, waited on here.
        results = r.execute_many([ToolCall("busy", {"i": i}) for i in range(6)], limit=6)
        assert [x.data for x in results] == list(range(6))
    assert most == 1
    with pytest.raises(ValueError):
        runtime.configure(threads=0)
    with pytest.raises(ValueError):
        runtime.configure(keep_alive=-1)
    with pytest.raises(ValueError):
        runtime.configure(keep_alive=0)


def test_shutdown_joins_the_pool_and_capstan_goes_on_after_it():
    with ToolRegistry([busy]) as r:
        assert [x.data for x in r.execute_many([ToolCall("busy", {"i": i}) for i in range(4)])] == [0, 1, 2, 3]
        runtime.shutdown(timeout=30)
        assert [x.data for x in r.execute_many([ToolCall("busy", {"i": i}) for i in range(3)])] == [0, 1, 2]
    runtime.shutdown()


def test_shutdown_says_what_still_runs_and_is_refused_inside_a_tool():
    started, release = threading.Event(), threading.Event()
    inside: list[str] = []

    @tool
    def stuck(ctx: Context) -> str:
        """Wait to be released."""
        try:
            runtime.shutdown(timeout=1)
        except RuntimeError as exc:
            inside.append(str(exc))
        started.set()
        release.wait(30)
        return "released"

    with ToolRegistry([stuck]) as r:
        done: list[str] = []
        caller = threading.Thread(target=lambda: done.append(r.execute_many([ToolCall("stuck", {})] * 2)[0].content))
        caller.start()
        try:
            assert started.wait(30)
            with pytest.raises(CapstanError) as err:
                runtime.shutdown(timeout=0.05)
            assert err.value.status == "CAPSTAN_ERR_TIMEOUT"
            assert "could not all be stopped" in str(err.value)
        finally:
            release.set()
            caller.join(30)
        assert done == ["released"]
        runtime.shutdown(timeout=30)
    assert inside and "inside a tool" in inside[0]


def test_runtime_is_public():
    assert capstan.runtime is runtime and runtime.__all__ == ["configure", "shutdown"]
