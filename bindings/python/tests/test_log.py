"""Context.log (capstan_call_log): a tool's log messages reach the event hook
as "log" events, with their level and message, between its call's "started"
and "finished"; a level that is not MCP's is refused before anything is sent;
a call that has its result sends nothing."""

import threading

import pytest

import capstan
from capstan import Context, LogError, ToolCall, ToolEvent, ToolRegistry, tool


@tool
def chatty(ctx: Context) -> str:
    """Say what happens."""
    assert ctx.log("info", "started") is True
    assert ctx.log("warning", "half way") is True
    return "done"


def logs_of(events: list[ToolEvent], call_id: str) -> list[tuple[str | None, str | None]]:
    return [(e.level, e.message) for e in events if e.call_id == call_id and e.kind == "log"]


def test_log_messages_reach_the_event_hook_in_order_between_started_and_finished():
    events: list[ToolEvent] = []
    with ToolRegistry([chatty]) as r:
        r.on_event(events.append)
        assert r.execute(ToolCall("chatty", {}, "c")).content == "done"
    assert [e.kind for e in events if e.call_id == "c"] == ["started", "log", "log", "finished"]
    assert logs_of(events, "c") == [("info", "started"), ("warning", "half way")]
    first = next(e for e in events if e.kind == "log")
    assert first.tool == "chatty" and first.outcome is None and first.progress is None
    assert all(e.level is None for e in events if e.kind != "log")


def test_every_mcp_level_is_accepted_by_name():
    levels = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

    @tool
    def loud(ctx: Context) -> str:
        """Log at every level."""
        for level in levels:
            ctx.log(level, level.upper())
        return "ok"

    events: list[ToolEvent] = []
    with ToolRegistry([loud]) as r:
        r.on_event(events.append)
        assert r.execute(ToolCall("loud", {}, "l")).content == "ok"
    assert logs_of(events, "l") == [(level, level.upper()) for level in levels]


def test_a_bad_level_or_message_is_refused_and_nothing_reaches_the_hook():
    refused: list[LogError] = []

    @tool
    def sloppy(ctx: Context) -> str:
        """Log badly."""
        for bad in (
            lambda: ctx.log("verbose", "x"),  # not an MCP level
            lambda: ctx.log("INFO", "x"),  # the names are lower case
            lambda: ctx.log(1, "x"),  # type: ignore[arg-type]
            lambda: ctx.log("info", "x" * (64 * 1024 + 1)),  # past 64 KiB: capstan refuses it
        ):
            with pytest.raises(LogError) as err:
                bad()
            assert err.value.status == "CAPSTAN_ERR_INVALID_ARGUMENT"
            refused.append(err.value)
        with pytest.raises(TypeError):
            ctx.log("info", None)  # type: ignore[arg-type]
        return "ok"

    events: list[ToolEvent] = []
    with ToolRegistry([sloppy]) as r:
        r.on_event(events.append)
        assert r.execute(ToolCall("sloppy", {}, "s")).content == "ok"
    assert [e.kind for e in events if e.call_id == "s"] == ["started", "finished"]
    assert "'verbose'" in str(refused[0]) and "emergency" in str(refused[0])
    assert refused[0].status_code == 2
    assert isinstance(LogError("x"), ValueError)


def test_a_call_that_has_its_result_logs_nothing():
    after: list[bool] = []
    returned, finished = threading.Event(), threading.Event()

    @tool(timeout=0.05)
    def slow(ctx: Context) -> str:
        """Outlive the timeout."""
        returned.wait(10)  # the caller has the timeout result
        after.append(ctx.log("error", "too late"))
        finished.set()
        return "late"

    events: list[ToolEvent] = []
    with ToolRegistry([slow]) as r:
        r.on_event(events.append)
        assert r.execute(ToolCall("slow", {}, "t")).outcome == "timeout"
        returned.set()
        assert finished.wait(10)
    assert after == [False]
    assert logs_of(events, "t") == []


def test_a_lone_call_on_the_fast_path_has_nobody_to_log_to_but_still_checks_the_level():
    seen: list[bool] = []

    @tool
    def quiet(ctx: Context) -> int:
        """Log to nobody."""
        seen.append(ctx.log("info", "hello"))
        with pytest.raises(LogError):
            ctx.log("loud", "hello")  # type: ignore[arg-type]
        return 1

    with ToolRegistry([quiet]) as r:  # no event hook: the binding runs it itself
        assert r.execute(ToolCall("quiet", {})).data == 1
    assert seen == [False]


def test_log_is_public():
    assert {"LogError", "LogLevel"} <= set(capstan.__all__) and "log" in capstan.EventKind.__args__
    assert capstan.LogLevel.__args__ == ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
