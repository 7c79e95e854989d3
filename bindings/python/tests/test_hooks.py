"""The approver, events, stats and main-thread tools from Python (issue #34):
set_approver, on_event, stats, pump / on_wake / wake_fd."""

from __future__ import annotations

import asyncio
import os
import select
import threading
import time

import pytest

from capstan import ApprovalRequest, ToolCall, ToolEvent, ToolRegistry, tool


@tool(requires_approval=True)
def remove(path: str, force: bool = False) -> str:
    """Remove a file."""
    return f"removed {path}"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_the_approver_decides_with_the_callers_ids_and_validated_arguments():
    seen: list[tuple[str, str, dict]] = []

    def approver(request: ApprovalRequest) -> bool | str:
        seen.append((request.tool, request.call_id, request.arguments))
        return True if request.arguments["path"] == "a" else "not that one"

    with ToolRegistry([remove]) as r:
        r.set_approver(approver)
        results = r.execute_many([ToolCall("remove", {"path": "a"}, "mine-1"), ToolCall("remove", {"path": "b"}, "mine-2")])
        assert [x.outcome for x in results] == ["ok", "denied"]
        assert results[0].content == "removed a"
        assert "not that one" in results[1].content
        assert sorted(seen) == [
            ("remove", "mine-1", {"path": "a", "force": False}),
            ("remove", "mine-2", {"path": "b", "force": False}),
        ]
        # The caller's own approval skips the approver.
        seen.clear()
        assert r.execute(ToolCall("remove", {"path": "z"}), approved=True).content == "removed z"
        assert seen == []
        # Removed: such calls end denied again.
        r.set_approver(None)
        assert r.execute(ToolCall("remove", {"path": "a"})).outcome == "denied"


def test_an_approver_may_decide_later_from_another_thread_and_only_once():
    held: list[ApprovalRequest] = []
    arrived = threading.Event()

    def approver(request: ApprovalRequest) -> None:
        held.append(request)
        arrived.set()
        return None  # decided below

    with ToolRegistry([remove]) as r:
        r.set_approver(approver)
        out: list = []
        worker = threading.Thread(target=lambda: out.append(r.execute(ToolCall("remove", {"path": "p"}))))
        worker.start()
        assert arrived.wait(10)
        assert not held[0].decided
        assert held[0].approve() is True
        assert held[0].deny("too late") is False  # once
        worker.join(10)
        assert out[0].outcome == "ok" and out[0].content == "removed p"


def test_an_async_approver_and_a_failing_one():
    async def slow_yes(request: ApprovalRequest) -> bool:
        await asyncio.sleep(0.01)
        return request.tool == "remove"

    def broken(request: ApprovalRequest) -> bool:
        raise RuntimeError("policy store down")

    with ToolRegistry([remove]) as r:
        r.set_approver(slow_yes)
        assert r.execute(ToolCall("remove", {"path": "a"})).outcome == "ok"
        r.set_approver(broken)
        result = r.execute(ToolCall("remove", {"path": "a"}))
        assert result.outcome == "denied"
        assert "RuntimeError: policy store down" in result.content
        with pytest.raises(TypeError):
            r.set_approver(42)  # type: ignore[arg-type]


def test_events_name_the_callers_calls_also_for_a_lone_call():
    events: list[ToolEvent] = []
    with ToolRegistry([add]) as r:
        r.on_event(events.append)
        assert r.execute(ToolCall("add", {"a": 1, "b": 2}, "lone")).data == 3
        r.execute_many([ToolCall("add", {"a": 1, "b": 2}, "x"), ToolCall("add", {"a": 1, "b": "two"}, "y")])
        by_call = {}
        for e in events:
            by_call.setdefault(e.call_id, []).append(e.kind)
        assert by_call["lone"] == ["started", "finished"]
        assert by_call["x"] == ["started", "finished"]
        finished = {e.call_id: e for e in events if e.kind == "finished"}
        assert finished["x"].outcome == "ok" and finished["x"].tool == "add" and finished["x"].index == 0
        # Invalid arguments never start the function.
        assert "y" not in by_call or by_call["y"] == ["finished"]
        # Removed: nothing more arrives (and lone calls take the fast path again).
        r.on_event(None)
        count = len(events)
        r.execute(ToolCall("add", {"a": 1, "b": 2}))
        assert len(events) == count


def test_stats_count_every_call_also_on_the_fast_path():
    with ToolRegistry([add]) as r:
        assert r.stats()["add"]["calls"] == 0
        assert r.stats()["add"]["p50_us"] is None
        for _ in range(3):
            assert r.execute(ToolCall("add", {"a": 1, "b": 2})).outcome == "ok"  # fast path
        assert r.execute(ToolCall("add", {"a": "x", "b": 2})).outcome == "invalid_arguments"
        r.execute_many([ToolCall("add", {"a": 1, "b": 2})] * 2, timeout=30)  # on capstan's pool
        stats = r.stats()["add"]
        assert stats["calls"] == 6
        assert stats["outcomes"]["ok"] == 5 and stats["outcomes"]["invalid_arguments"] == 1
        assert stats["in_flight"] == 0
        assert stats["p50_us"] is not None and stats["p99_us"] >= stats["p50_us"]
        assert r.execute(ToolCall("nope")).outcome == "unknown_tool"
        assert "nope" not in r.stats()

    @tool
    def fails() -> None:
        """Fail."""
        raise ValueError("no")

    with ToolRegistry([fails]) as r:
        assert r.execute(ToolCall("fails")).outcome == "tool_error"  # fast path
        assert r.stats()["fails"]["outcomes"]["tool_error"] == 1


def test_main_thread_tools_run_on_the_thread_that_pumps():
    ran_on: list[int] = []

    @tool(main_thread=True)
    def draw(x: int) -> str:
        """Draw on the canvas."""
        ran_on.append(threading.get_ident())
        return f"drew {x}"

    woken = threading.Event()
    with ToolRegistry([draw]) as r:
        r.on_wake(woken.set)
        fd = r.wake_fd()
        out: list = []
        worker = threading.Thread(target=lambda: out.append(r.execute_many([ToolCall("draw", {"x": 1})])))
        worker.start()
        assert woken.wait(10), "on_wake was not called"
        readable, _, _ = select.select([fd], [], [], 10)
        assert readable == [fd]
        os.read(fd, 8)  # reset
        deadline = time.monotonic() + 10
        while not out and time.monotonic() < deadline:
            r.pump(0.01)
        worker.join(10)
        assert out[0][0].content == "drew 1"
        assert ran_on == [threading.get_ident()]
        # The pumping thread runs its own batches' main-thread calls itself.
        assert r.execute(ToolCall("draw", {"x": 2})).content == "drew 2"
        assert ran_on[-1] == threading.get_ident()
        assert r.pump(0) == 0


def test_a_deadline_bounds_a_call_that_waits_for_a_pump_or_an_approver():
    @tool(main_thread=True)
    def draw(x: int) -> str:
        """Draw."""
        return "drew"

    pending: list[ApprovalRequest] = []
    with ToolRegistry([draw, remove]) as r:
        r.set_approver(lambda request: pending.append(request))  # never decided here
        out: list = []
        # Not the pumping thread, and nobody pumps: the deadline ends the wait.
        worker = threading.Thread(
            target=lambda: out.append(
                r.execute_many([ToolCall("draw", {"x": 1}), ToolCall("remove", {"path": "a"})], deadline=0.2)
            )
        )
        worker.start()
        worker.join(30)
        assert not worker.is_alive()
        waited_pump, waited_approval = out[0]
        assert waited_pump.outcome == "timeout" and "capstan_registry_pump" in waited_pump.content
        assert waited_approval.outcome == "timeout" and "approval" in waited_approval.content
        assert pending and pending[0].approve() is False  # too late: the call has its result
        with pytest.raises(ValueError, match="deadline"):
            r.execute(ToolCall("draw", {"x": 1}), deadline=0)
