"""The interpreter's exit while Python tools are mid-call (issue 16).

CPython before 3.14 ends a thread that takes the GIL during finalization
with pthread_exit, a forced unwind; through capstan's frames it aborted the
process ("FATAL: exception not rethrown", SIGABRT). The binding parks such
threads at exit instead (capstan._callbacks.ParkAtExit)."""

import subprocess
import sys
import textwrap
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent(
    '''
    import sys, threading, time
    sys.path.insert(0, sys.argv[1])
    import capstan
    from capstan import ToolCall, ToolRegistry, tool

    started = threading.Semaphore(0)

    @tool
    def spin(i: int) -> int:
        """Run Python code until the process ends."""
        started.release()
        n = 0
        while True:
            n += 1
            if i % 2 and n % 1000 == 0:
                time.sleep(0.0005)  # half of them also block, and retake the GIL often

    registry = ToolRegistry([spin])
    capstan.set_exit_timeout(0.05)
    calls = [ToolCall("spin", {"i": i}) for i in range(8)]
    # execute_many on a daemon thread: 7 calls on capstan's pool, one on that
    # thread itself, inside capstan_registry_execute.
    threading.Thread(target=registry.execute_many, args=(calls,), kwargs={"limit": 8}, daemon=True).start()
    for _ in range(8):
        if not started.acquire(timeout=120):
            sys.exit(3)
    print("exiting with 8 tools mid-call", flush=True)
    '''
)


def test_exit_while_eight_python_tools_run_ends_with_status_0_twenty_times(tmp_path):
    script = tmp_path / "exit_mid_call.py"
    script.write_text(SCRIPT)
    for run in range(20):
        done = subprocess.run(
            [sys.executable, str(script), str(PACKAGE_DIR)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "exiting with 8 tools mid-call" in done.stdout, (run, done.stderr)
        assert done.returncode == 0, (run, done.returncode, done.stderr)
        assert "FATAL" not in done.stderr and "Abort" not in done.stderr, (run, done.stderr)


RETIRE_SCRIPT = textwrap.dedent(
    '''
    import sys, time
    sys.path.insert(0, sys.argv[1])
    from capstan import ToolCall, ToolRegistry, tool

    @tool
    def nap(i: int) -> int:
        """Sleep a little, so that the batch spreads over pool threads."""
        time.sleep(0.05)
        return i

    registry = ToolRegistry([nap])
    results = registry.execute_many([ToolCall("nap", {"i": i}) for i in range(8)], limit=8)
    assert all(r.outcome == "ok" for r in results), results
    # Pool threads beyond one per core retire after about 1 s idle, running
    # the binding's on_stop hook: exit around then, so that some retire while
    # the interpreter finalizes.
    time.sleep(float(sys.argv[2]))
    print("exiting as pool threads retire", flush=True)
    '''
)


def test_exit_while_idle_pool_threads_retire_ends_with_status_0(tmp_path):
    script = tmp_path / "exit_retiring.py"
    script.write_text(RETIRE_SCRIPT)
    for run in range(24):
        pause = 0.88 + 0.01 * run  # sweeps the retirement at about 1 s
        done = subprocess.run(
            [sys.executable, str(script), str(PACKAGE_DIR), str(pause)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "exiting as pool threads retire" in done.stdout, (run, done.stderr)
        assert done.returncode == 0, (run, pause, done.returncode, done.stderr)
        assert "FATAL" not in done.stderr, (run, done.stderr)
