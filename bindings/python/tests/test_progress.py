"""Context.progress (capstan_call_progress): a tool's reports reach the event
hook as "progress" events between its call's "started" and "finished", bad
reports are refused naming the problem, a call that has its result reports
nothing, and a served tool's reports reach the hook of a registry that
mounted it over MCP."""

import asyncio
import math
import threading

import pytest

import capstan
from capstan import Context, ProgressError, ToolCall, ToolEvent, ToolRegistry, tool


@tool
def crawl(pages: int, ctx: Context) -> str:
    """Crawl some pages."""
    for n in range(1, pages + 1):
        assert ctx.progress(n, pages, f"page {n}") is True
    return "done"


@tool
async def acrawl(pages: int, ctx: Context) -> str:
    """Crawl some pages, asynchronously."""
    for n in range(1, pages + 1):
        await asyncio.sleep(0)
        assert ctx.progress(n / 2) is True  # no total, no message
    return "done"


def progress_of(events: list[ToolEvent], call_id: str) -> list[tuple[float | None, float | None, str | None]]:
    return [(e.progress, e.total, e.message) for e in events if e.call_id == call_id and e.kind == "progress"]


def kinds_of(events: list[ToolEvent], call_id: str) -> list[str]:
    return [e.kind for e in events if e.call_id == call_id]


def test_progress_reaches_the_event_hook_between_started_and_finished():
    events: list[ToolEvent] = []
    lock = threading.Lock()

    def hook(event: ToolEvent) -> None:
        with lock:
            events.append(event)

    with ToolRegistry([crawl, acrawl]) as r:
        r.on_event(hook)
        assert r.execute(ToolCall("crawl", {"pages": 3}, "lone")).content == "done"
        results = r.execute_many([ToolCall("crawl", {"pages": 2}, "a"), ToolCall("acrawl", {"pages": 2}, "b")])
        assert [x.content for x in results] == ["done", "done"]
        assert asyncio.run(r.aexecute(ToolCall("acrawl", {"pages": 1}, "c"))).content == "done"
    assert progress_of(events, "lone") == [(1.0, 3.0, "page 1"), (2.0, 3.0, "page 2"), (3.0, 3.0, "page 3")]
    assert kinds_of(events, "lone") == ["started", "progress", "progress", "progress", "finished"]
    assert progress_of(events, "a") == [(1.0, 2.0, "page 1"), (2.0, 2.0, "page 2")]
    assert progress_of(events, "b") == [(0.5, None, None), (1.0, None, None)]
    assert kinds_of(events, "c") == ["started", "progress", "finished"]
    report = next(e for e in events if e.call_id == "a" and e.kind == "progress")
    assert report.tool == "crawl" and report.index == 0 and report.outcome is None


def test_bad_reports_are_refused_naming_the_problem_and_nothing_is_reported():
    refused: list[str] = []

    @tool
    def stubborn(ctx: Context) -> str:
        """Report badly."""
        ctx.progress(5)
        for bad in (
            lambda: ctx.progress(5),  # not above the previous report
            lambda: ctx.progress(4),
            lambda: ctx.progress(math.nan),
            lambda: ctx.progress(6, -1),
            lambda: ctx.progress(6, None, "x" * 5000),
        ):
            with pytest.raises(ProgressError) as err:
                bad()
            assert err.value.status == "CAPSTAN_ERR_INVALID_ARGUMENT"
            refused.append(str(err.value))
        return "ok"

    events: list[ToolEvent] = []
    with ToolRegistry([stubborn]) as r:
        r.on_event(events.append)
        assert r.execute(ToolCall("stubborn", {}, "s")).content == "ok"
    assert progress_of(events, "s") == [(5.0, None, None)]
    assert len(refused) == 5
    assert "4096" in refused[-1]
    assert isinstance(ProgressError("x"), ValueError)


def test_a_call_that_has_its_result_reports_nothing():
    after: list[bool] = []
    returned, finished = threading.Event(), threading.Event()

    @tool(timeout=0.05)
    def slow(ctx: Context) -> str:
        """Outlive the timeout."""
        returned.wait(10)  # the caller has the timeout result
        after.append(ctx.progress(1))
        finished.set()
        return "late"

    with ToolRegistry([slow]) as r:
        assert r.execute(ToolCall("slow", {})).outcome == "timeout"
        returned.set()
        assert finished.wait(10)
    assert after == [False]


def test_a_lone_call_on_the_fast_path_has_nobody_to_report_to():
    seen: list[bool] = []

    @tool
    def quiet(ctx: Context) -> int:
        """Report to nobody."""
        seen.append(ctx.progress(1))
        return 1

    with ToolRegistry([quiet]) as r:  # no event hook: the binding runs it itself
        assert r.execute(ToolCall("quiet", {})).data == 1
    assert seen == [False]


def test_a_served_tools_progress_reaches_the_hook_of_the_registry_that_mounted_it():
    pytest.importorskip("mcp")
    events: list[ToolEvent] = []
    with ToolRegistry([crawl]) as served, served.start_mcp_server() as server, ToolRegistry() as local:
        with local.mount_mcp(url=server.url, prefix="remote_", connect_timeout=60):
            local.on_event(events.append)
            assert local.execute(ToolCall("remote_crawl", {"pages": 2}, "m")).content == "done"
    assert progress_of(events, "m") == [(1.0, 2.0, "page 1"), (2.0, 2.0, "page 2")]
    assert kinds_of(events, "m")[-1] == "finished"


def test_progress_is_public():
    assert "ProgressError" in capstan.__all__ and "progress" in capstan.EventKind.__args__
